# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report, 3: jmst against Redis MEMORY MALLOC-STATS.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=3
out "## 3. jmst against Redis \`MEMORY MALLOC-STATS\`"
out ""
if [ $REDIS_OK = 1 ]; then
	out "Both replies are jemalloc's \`malloc_stats_print()\` text from the same Debian libjemalloc (Redis $REDIS_VERSION links the system one)."
	out "jmst is one fresh TCP connection per reply (loadgen); redis-benchmark keeps its connections open (\`-k 1\`, its"
	out "default): the target column compares jmst over fresh connections with Redis over kept connections, as asked."
	out "\`-k 0\` makes redis-benchmark reconnect for every request, the same transport as jmst. The replies differ in size"
	out "because the heaps differ: jm4lwd's own small heap (~$(fmt "$(med s3.c1.j.bytes)") B) against redis-server's"
	out "(~${R[s3.redis.bytes]:-?} B). The agent columns compare the two on one heap: jmst served by the preload agent inside"
	out "redis-server against that same redis-server's \`MEMORY MALLOC-STATS\` (~${R[s3.redisa.bytes]:-?} B)."
	out ""
	out "| concurrency | jm4lwd jmst/s | Redis /s (kept conns) | **jm4lwd ÷ Redis** (rounds) | target | result | Redis /s \`-k 0\` (reconnect) | jm4lwd ÷ Redis \`-k 0\` | agent jmst/s in redis | same redis MALLOC-STATS/s | agent ÷ that redis | p50 / p99 µs jm4lwd | p50 / p99 µs Redis |"
	out "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	for c in $CONCS; do
		M=MEMORY_MALLOC-STATS
		ratio=$(pmed s3.c$c.j.rps s3.c$c.r.$M.rps)
		v=$(verdict "$ratio" ge 1.0)
		out "| $c | $(fmt "$(med s3.c$c.j.rps)") | $(fmt "$(med s3.c$c.r.$M.rps)") | **$(fmt "$ratio" %.3f)** ($(prng s3.c$c.j.rps s3.c$c.r.$M.rps)) | ≥ 1.0 | $v | $(fmt "$(med s3.c$c.rk0.$M.rps)") | $(fmt "$(pmed s3.c$c.j.rps s3.c$c.rk0.$M.rps)" %.2f) | $(fmt "$(med s3.c$c.a.rps)") | $(fmt "$(med s3.c$c.ra.$M.rps)") | $(fmt "$(pmed s3.c$c.a.rps s3.c$c.ra.$M.rps)" %.2f) | $(fmt "$(med s3.c$c.j.p50)") / $(fmt "$(med s3.c$c.j.p99)") | $(fmt "$(med s3.c$c.r.$M.p50)") / $(fmt "$(med s3.c$c.r.$M.p99)") |"
		summary "3. jmst/s ÷ Redis MALLOC-STATS/s, c=$c" "$(fmt "$ratio" %.3f)" "≥ 1.0" "$v"
	done
else
	out "**Not measured**: redis-server could not be started."
	summary "3. jmst ÷ Redis MALLOC-STATS" "—" "≥ 1.0" "not measured"
fi
cmds


# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report, 2: ruok and mntr against ZooKeeper.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=2
out "## 2. ruok and mntr: jm4lwd against ZooKeeper ${ZK_VERSION:-3.8}"
out ""
if [ $ZK_OK = 1 ]; then
	out "ZooKeeper standalone (\`QuorumPeerMain\`, OpenJDK $(java -version 2>&1 | sed -n '1s/.*version "\(.*\)".*/\1/p'), default JVM options), pinned like every server, warmed up with"
	out "${ZK_WARM} s of each word at concurrency 32 first. Its class path is \`/etc/zookeeper/conf:zookeeper.jar\`, so SLF4J finds no"
	out "binding and logs nothing: ZooKeeper pays nothing for its per-command log line (the comparison favours it)."
	out "Its \`mntr\` reply is ~$(fmt "$(med s2.mntr.c1.z.bytes)") bytes (JVM and metrics figures), jm4lwd's ~$(fmt "$(med s2.mntr.c1.j.bytes)")."
	zr=$(awk -v a="$(med s2.ruok.c32.z.resets)" -v b="$(med s2.mntr.c32.z.resets)" 'BEGIN { print a + b }')
	if [ "$zr" != 0 ]; then
		out "Some ZooKeeper connections ended in a reset after a whole reply (it closes with the \`\\n\` unread); loadgen"
		out "counts those as answered (median per run at c=32: ruok $(fmt "$(med s2.ruok.c32.z.resets)"), mntr $(fmt "$(med s2.mntr.c32.z.resets)"))."
	fi
	out ""
	out "| word | concurrency | jm4lwd conn/s | ZooKeeper conn/s | **jm4lwd ÷ ZooKeeper** (rounds) | target | result | p50 / p99 µs jm4lwd | p50 / p99 µs ZooKeeper | server CPU µs/conn jm4lwd / ZooKeeper | capacity ratio (CPU/conn) |"
	out "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	for w in ruok mntr; do
		for c in $CONCS; do
			ratio=$(pmed s2.$w.c$c.j.rps s2.$w.c$c.z.rps)
			if [ $w = mntr ]; then t="≥ 5"; v=$(verdict "$ratio" ge 5); else t="—"; v="(no target)"; fi
			out "| $w | $c | $(fmt "$(med s2.$w.c$c.j.rps)") | $(fmt "$(med s2.$w.c$c.z.rps)") | **$(fmt "$ratio" %.2f)×** ($(prng s2.$w.c$c.j.rps s2.$w.c$c.z.rps)) | $t | $v | $(fmt "$(med s2.$w.c$c.j.p50)") / $(fmt "$(med s2.$w.c$c.j.p99)") | $(fmt "$(med s2.$w.c$c.z.p50)") / $(fmt "$(med s2.$w.c$c.z.p99)") | $(fmt "$(med s2.$w.c$c.j.cpu)" %.1f) / $(fmt "$(med s2.$w.c$c.z.cpu)" %.1f) | $(fmt "$(pmed s2.$w.c$c.j.cpu s2.$w.c$c.z.cpu 1)" %.2f)× |"
			summary "2. $w conn/s, jm4lwd ÷ ZooKeeper, c=$c" "$(fmt "$ratio" %.3f)×" "$t" "$v"
		done
	done
else
	out "**Not measured**: ZooKeeper could not be started (see the run's log)."
	summary "2. ruok/mntr ÷ ZooKeeper" "—" "≥ 5 (mntr)" "not measured"
fi
cmds


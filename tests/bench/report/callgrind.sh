# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report: instructions per request (callgrind).
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=9
if [ "${CG:-0}" = 1 ] && [ "$(med cg.j.jmst)" != nan ]; then
	out "## Instructions per request (callgrind)"
	out ""
	out "Throughput on a shared machine moves by tens of percent from run to run; instruction counts do not. Each server"
	out "ran under \`valgrind --tool=callgrind\` (unpinned, one at a time), its counters zeroed after start-up and dumped after"
	out "a fixed number of requests from one client (\`-c 1\`): the user-space instructions it ran, divided by the requests."
	out "The kernel's share (TCP) is not in these counts; the perf table above has it."
	out ""
	out "| server, request | requests | instructions per request | in jemalloc's \`malloc_stats_print()\` or \`mallctl()\` | everything else |"
	out "| --- | --- | --- | --- | --- |"
	cgrow() { # LABEL KEY N [FN]
		local t; t=$(med "$2")
		if [ -n "${4:-}" ]; then
			local f; f=$(med "$2.$4")
			out "| $1 | $3 | $(fmt "$t") | $(fmt "$f") ($(fmt "$(pct "$f" "$t")" "%.2f %%")) | $(fmt "$(minus "$t" "$f")") |"
		else
			out "| $1 | $3 | $(fmt "$t") | | |"
		fi
	}
	cgrow "jm4lwd, jmst (fresh connection, ~$(fmt "${R[cg.j.jmst.bytes]:-nan}") B)" cg.j.jmst "$CG_J" malloc_stats_print
	cgrow "redis-server, MEMORY MALLOC-STATS (kept connection, ~${R[s3.redis.bytes]:-?} B)" cg.r.ms "$CG_J" malloc_stats_print
	cgrow "jm4lwd, ruok" cg.j.ruok "$CG_R"
	cgrow "floor, ruok" cg.f.ruok "$CG_R"
	cgrow "jm4lwd, mntr (an \`epoch\` every request: under valgrind they are over 1 ms apart)" cg.j.mntr "$CG_R" mallctl
	ip=$(awk -v a="$(med cg.plain.idle)" -v s="$CG_IDLE" 'BEGIN { printf "%.0f", a / s }')
	ia=$(awk -v a="$(med cg.agent.idle)" -v s="$CG_IDLE" 'BEGIN { printf "%.0f", a / s }')
	# redis's own timers (serverCron, 10 Hz) run whatever the load: take
	# the idle rate times the run's length off.
	for k in plain agent; do
		R[cg.$k.kvnet]=$(awk -v t="$(med cg.$k.kv)" -v n="$((CG_KV * 2))" -v s="$(med cg.$k.kv.secs)" \
			-v i="$([ $k = plain ] && echo "$ip" || echo "$ia")" 'BEGIN { printf "%.0f", t - i * s / n }')
	done
	cgrow "redis-server, SET and GET (redis-benchmark -t set,get), less its idle timers" cg.plain.kvnet "$((CG_KV * 2))"
	cgrow "redis-server with the agent preloaded, SET and GET, less its idle timers" cg.agent.kvnet "$((CG_KV * 2))"
	out ""
	out "- jmst ÷ MALLOC-STATS in instructions: jm4lwd runs $(div "$(med cg.j.jmst)" "$(med cg.r.ms)" %.3f)× Redis's per reply (its heap and so its report are smaller);"
	out "  $(fmt "$(pct "$(med cg.j.jmst.malloc_stats_print)" "$(med cg.j.jmst)")" %.2f) % of jm4lwd's are jemalloc's \`malloc_stats_print()\`; what jm4lw, libevent and libc add to a reply"
	out "  is $(fmt "$(minus "$(med cg.j.jmst)" "$(med cg.j.jmst.malloc_stats_print)")") instructions, against $(fmt "$(minus "$(med cg.r.ms)" "$(med cg.r.ms.malloc_stats_print)")") around Redis's."
	t="- ruok: jm4lwd $(fmt "$(med cg.j.ruok)") instructions per connection in user space, the floor $(fmt "$(med cg.f.ruok)"): the price of libevent,"
	t="$t the limits, the allow list and the counters"
	[ $PERF = 1 ] && t="$t, next to ~$(fmt "$(med p.j.ruok.cpu_us)" %.0f) µs of CPU a connection costs in all, mostly the kernel's (perf table)"
	out "$t."
	out "- The agent in redis-server: $(div "$(med cg.agent.kvnet)" "$(med cg.plain.kvnet)" %.4f)× the instructions per SET/GET of plain redis ($(div "$(med cg.agent.kv)" "$(med cg.plain.kv)" %.4f)× before the timers are taken off). Idle, redis ran"
	out "  $ip instructions per second plain and $ia with the agent ($(awk -v a="$ia" -v b="$ip" 'BEGIN { printf "%+.0f", a - b }')/s; its own thread runs none)."
	out ""
fi


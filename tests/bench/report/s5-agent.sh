# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report, 5: the preload agent inside redis-server.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=5
out "## 5. The preload agent inside redis-server"
out ""
if [ $REDIS_OK = 1 ]; then
	out "Three redis-server $REDIS_VERSION instances run side by side, pinned to the same CPU: plain; with"
	out "\`LD_PRELOAD=libjm4lw_agent.so\` (the agent alone); with the agent and \`MALLOC_CONF=prof:true,prof_active:false\`"
	out "(what \`jm4lw-run\` sets up). The agent is idle: nothing connects to its port. redis-benchmark \`-t set,get\`"
	out "runs against each in turn, $AGENT_ROUNDS round(s); ratios are medians of the per-round ratios (range in brackets)."
	out ""
	out "| concurrency | test | plain req/s | agent req/s | **agent ÷ plain** (rounds) | target | result | agent + prof:true req/s | ÷ plain (rounds) |"
	out "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	for c in $CONCS; do
		for t in SET GET; do
			ratio=$(pmed s5.c$c.agent.$t.rps s5.c$c.plain.$t.rps)
			v=$(verdict "$ratio" ge 0.99)
			out "| $c | $t | $(fmt "$(med s5.c$c.plain.$t.rps)") | $(fmt "$(med s5.c$c.agent.$t.rps)") | **$(fmt "$ratio" %.3f)** ($(prng s5.c$c.agent.$t.rps s5.c$c.plain.$t.rps)) | ≥ 0.99 | $v | $(fmt "$(med s5.c$c.agentprof.$t.rps)") | $(fmt "$(pmed s5.c$c.agentprof.$t.rps s5.c$c.plain.$t.rps)" %.3f) ($(prng s5.c$c.agentprof.$t.rps s5.c$c.plain.$t.rps)) |"
			summary "5. redis $t/s with agent ÷ without, c=$c" "$(fmt "$ratio" %.3f)" "≥ 0.99" "$v"
		done
	done
	out ""
	out "Server CPU per request (user+system of the redis-server process over each run, µs; 10 ms ticks), the cost the agent"
	out "could add that throughput at c=1 mostly hides behind the round trip:"
	out ""
	out "| concurrency | plain | agent | **agent ÷ plain** (rounds) | agent + prof:true | ÷ plain |"
	out "| --- | --- | --- | --- | --- | --- |"
	for c in $CONCS; do
		out "| $c | $(fmt "$(med s5.c$c.plain.cpu)" %.2f) | $(fmt "$(med s5.c$c.agent.cpu)" %.2f) | **$(fmt "$(pmed s5.c$c.agent.cpu s5.c$c.plain.cpu)" %.3f)** ($(prng s5.c$c.agent.cpu s5.c$c.plain.cpu)) | $(fmt "$(med s5.c$c.agentprof.cpu)" %.2f) | $(fmt "$(pmed s5.c$c.agentprof.cpu s5.c$c.plain.cpu)" %.3f) |"
	done
	out ""
	out "Latency: redis-benchmark's p99 per request (µs, its histogram's precision), the tail a service's clients see;"
	out "the ratio is the median of the per-round ratios:"
	out ""
	out "| concurrency | test | p99 plain | p99 agent | **agent ÷ plain** (rounds) | p99 agent + prof:true | ÷ plain (rounds) |"
	out "| --- | --- | --- | --- | --- | --- | --- |"
	for c in $CONCS; do
		for t in SET GET; do
			out "| $c | $t | $(fmt "$(med s5.c$c.plain.$t.p99)" %.0f) | $(fmt "$(med s5.c$c.agent.$t.p99)" %.0f) | **$(fmt "$(pmed s5.c$c.agent.$t.p99 s5.c$c.plain.$t.p99)" %.3f)** ($(prng s5.c$c.agent.$t.p99 s5.c$c.plain.$t.p99)) | $(fmt "$(med s5.c$c.agentprof.$t.p99)" %.0f) | $(fmt "$(pmed s5.c$c.agentprof.$t.p99 s5.c$c.plain.$t.p99)" %.3f) ($(prng s5.c$c.agentprof.$t.p99 s5.c$c.plain.$t.p99)) |"
		done
	done
	out ""
	w=${R[s5.wake.agent]:-nan} wp=${R[s5.wake.agentprof]:-nan}
	vw=$(verdict "$(awk -v a="$w" -v b="$wp" 'BEGIN { print (a > b ? a : b) }')" le 0)
	added=$(( ${R[s5.rss.agent.VmRSS]:-0} - ${R[s5.rss.plain.VmRSS]:-0} ))
	addedp=$(( ${R[s5.rss.agentprof.VmRSS]:-0} - ${R[s5.rss.plain.VmRSS]:-0} ))
	vr=$(verdict "$added" le 1024)
	out "| | plain | agent | agent + prof:true | target | result |"
	out "| --- | --- | --- | --- | --- | --- |"
	out "| wake-ups/s of the \`jm4lw\` thread, idle ($IDLE_SECS s) | — | $w | $wp | 0 | $vw |"
	out "| its context switches during all the GET/SET runs | — | ${R[s5.loadsw.agent]:-?} | ${R[s5.loadsw.agentprof]:-?} | 0 | |"
	out "| VmRSS after start-up, kB | ${R[s5.rss.plain.VmRSS]:-?} | ${R[s5.rss.agent.VmRSS]:-?} (+$added) | ${R[s5.rss.agentprof.VmRSS]:-?} (+$addedp) | +1024 | $vr |"
	out "| of which RssAnon, kB | ${R[s5.rss.plain.RssAnon]:-?} | ${R[s5.rss.agent.RssAnon]:-?} | ${R[s5.rss.agentprof.RssAnon]:-?} | | |"
	out "| of which RssFile (shared library pages), kB | ${R[s5.rss.plain.RssFile]:-?} | ${R[s5.rss.agent.RssFile]:-?} | ${R[s5.rss.agentprof.RssFile]:-?} | | |"
	summary "5. agent thread wake-ups/s, idle" "$w" "0" "$vw"
	summary "5. RSS added by the agent" "$added kB" "≤ 1024 kB" "$vr"
else
	out "**Not measured**: redis-server could not be started."
	summary "5. agent in redis" "—" "" "not measured"
fi
cmds


# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report, 8: ruok through a flood.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=11
if want flood; then
	out "## 8. ruok through a flood of $IDLE_CONNS idle connections at the default max_connections"
	out ""
	out "\`jm4lwd\` with no configuration file (\`max_connections\` ${R[flood.max]:-?}, \`read_timeout\` 5 s). One loadgen holds"
	out "$IDLE_CONNS connections (\`-k $IDLE_CONNS -F\`): half of them silent, half trickling one byte of \`ruok\` every"
	out "${FLOOD_TRICKLE_MS} ms (\`-T\`), each reopened as soon as the server closes it (32 connects per 10 ms at most). After 1.5 s"
	out "of that, another loadgen asks \`ruok\` every 10 ms on a connection of its own (\`-i 10\`) for ${FLOOD_SECS} s: an"
	out "answer \`imok\` is a success, \`$REFUSAL\` a refusal (\`-r\`), a connection closed or reset before"
	out "any reply a failure. The same prober ran first without the flood. Descriptors: \`/proc/PID/fd\` of the daemon"
	out "before, half-way through and 1 s after the flood."
	out ""
	out "| | ruok answered | refused | failed | p50 / p99 / max µs |"
	out "| --- | --- | --- | --- | --- |"
	out "| no flood | $(fmt "$(med flood.base.n)") | | | $(fmt "$(med flood.base.p50)") / $(fmt "$(med flood.base.p99)") / $(fmt "$(med flood.base.max)") |"
	out "| **during the flood** | **$(fmt "$(med flood.probe.requests)")** | **$(fmt "$(med flood.probe.refused)")** | **$(fmt "$(med flood.probe.errors)")** | $(fmt "$(med flood.probe.p50_us)") / $(fmt "$(med flood.probe.p99_us)") / $(fmt "$(med flood.probe.max_us)") |"
	out ""
	out "| the daemon's descriptors | before | during | after |"
	out "| --- | --- | --- | --- |"
	out "| \`/proc/PID/fd\` | ${R[flood.fd0]:-?} | ${R[flood.fdmid]:-?} | ${R[flood.fd1]:-?} |"
	out ""
	out "The flood's connections were closed by the server ${R[flood.dropped]:-?} times (each reopened); the tricklers sent ${R[flood.trickled]:-?} bytes."
	summary "8. ruok during a flood of $IDLE_CONNS idle at max_connections ${R[flood.max]:-?}: answered / refused / failed" "$(fmt "$(med flood.probe.requests)") / $(fmt "$(med flood.probe.refused)") / $(fmt "$(med flood.probe.errors)")" "—" "figure only"
	cmds
fi


# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report, 6: ruok latency with idle connections held open.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=6
out "## 6. ruok latency with $IDLE_CONNS idle connections held open"
out ""
out "jm4lwd with \`max_connections = 2000\`, \`max_connections_per_peer = 2000\` and \`read_timeout = 600\` (so the idle peers are not timed out during the run)."
out "loadgen \`-k $IDLE_CONNS\` opens $IDLE_CONNS sockets that never send (32 per 10 ms, then 0.5 s for the daemon to accept"
out "them), keeps them open for the whole run (one the server closed would count as dropped: none may be) and"
out "measures ruok alongside; runs with and without them alternate. Half-way through each run \`jm4lw mntr\` reads"
out "\`jm4lw_open_connections\` from the daemon itself. (The pacing keeps a connect burst within any listen backlog: a"
out "client's connect completes in the kernel before the server accepts, and an overflowed accept queue is only drained"
out "by SYN-ACK retransmission, 1 s and more later.)"
out ""
out "| concurrency | p99 µs, no idle | p99 µs, $IDLE_CONNS idle | target | result | p50 µs no idle / idle | conn/s no idle / idle | jm4lw_open_connections mid-run |"
out "| --- | --- | --- | --- | --- | --- | --- | --- |"
for c in $CONCS; do
	p=$(med s6.c$c.idle.p99)
	v=$(verdict "$p" le 10000)
	out "| $c | $(fmt "$(med s6.c$c.base.p99)") | **$(fmt "$p")** | ≤ 10000 | $v | $(fmt "$(med s6.c$c.base.p50)") / $(fmt "$(med s6.c$c.idle.p50)") | $(fmt "$(med s6.c$c.base.rps)") / $(fmt "$(med s6.c$c.idle.rps)") | $(rng s6.c$c.open) |"
	summary "6. ruok p99 with $IDLE_CONNS idle, c=$c" "$(fmt "$p") µs" "≤ 10 ms" "$v"
done
cmds


# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report, 1: ruok against the floor.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=1
out "## 1. ruok: jm4lwd against the floor"
out ""
out "Connections per second, each a full connect → \`ruok\\n\` → \`imok\` → EOF → close (loadgen, closed loop)."
out "The floor (\`tests/bench/floor.c\`) is one thread, epoll, \`accept4\`, answers any 4 bytes with \`imok\`"
out "and then, like jm4lwd, \`shutdown(SHUT_WR)\` and waits for the peer's EOF before closing (\`-m linger\`):"
out "the same packets on the wire, minus everything that makes jm4lwd a server (timeouts, limits, allow_from,"
out "counters, the word table, libevent). \`-m close\` (reply and close at once) is shown for reference only."
out ""
out "| concurrency | jm4lwd conn/s | floor conn/s | **jm4lwd ÷ floor** (rounds) | target | result | floor -m close conn/s | p50 / p99 µs jm4lwd | p50 / p99 µs floor |"
out "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
S1_MISS=0 S1_MISS1=0
for c in $CONCS; do
	ratio=$(pmed s1.c$c.j.rps s1.c$c.f.rps)
	v=$(verdict "$ratio" ge 0.90)
	[ "$v" = "**missed**" ] && S1_MISS=1
	[ "$v" = "**missed**" ] && [ "$c" = 1 ] && S1_MISS1=1
	out "| $c | $(fmt "$(med s1.c$c.j.rps)") | $(fmt "$(med s1.c$c.f.rps)") | **$(fmt "$ratio" %.3f)** ($(prng s1.c$c.j.rps s1.c$c.f.rps)) | ≥ 0.90 | $v | $(fmt "$(med s1.c$c.fc.rps)") | $(fmt "$(med s1.c$c.j.p50)") / $(fmt "$(med s1.c$c.j.p99)") | $(fmt "$(med s1.c$c.f.p50)") / $(fmt "$(med s1.c$c.f.p99)") |"
	summary "1. ruok conn/s, jm4lwd ÷ floor, c=$c" "$(fmt "$ratio" %.3f)" "≥ 0.90" "$v"
done
out ""
out "With two CPUs, loadgen has one and the server the other, and loadgen's half of a connection costs the kernel about"
out "as much as the server's: unless a server is busy close to 100 %, conn/s measures the client as much as the server."
out "So here is also what each server spends per connection — its user+system time from \`/proc/PID/stat\` over the run"
out "(10 ms ticks, including the kernel's TCP work in its system calls) divided by the connections served — and the"
out "ratio that gives when the server is the bottleneck (capacity: the floor's CPU per connection ÷ jm4lwd's)."
out ""
out "| concurrency | server CPU µs/conn jm4lwd | floor | **capacity jm4lwd ÷ floor** (rounds) | target (same) | result | server CPU busy jm4lwd / floor |"
out "| --- | --- | --- | --- | --- | --- | --- |"
S1_CAP_MISS=0
for c in $CONCS; do
	jc=$(med s1.c$c.j.cpu) fc=$(med s1.c$c.f.cpu)
	cap=$(pmed s1.c$c.j.cpu s1.c$c.f.cpu 1)
	v=$(verdict "$cap" ge 0.90)
	[ "$c" = 32 ] && [ "$v" = "**missed**" ] && S1_CAP_MISS=1
	bj=$(awk -v a="$jc" -v r="$(med s1.c$c.j.rps)" 'BEGIN { if (a == "nan") print "nan"; else printf "%.0f", a * r / 1e4 }')
	bf=$(awk -v a="$fc" -v r="$(med s1.c$c.f.rps)" 'BEGIN { if (a == "nan") print "nan"; else printf "%.0f", a * r / 1e4 }')
	out "| $c | $(fmt "$jc" %.1f) | $(fmt "$fc" %.1f) | **$(fmt "$cap" %.3f)** ($(prng s1.c$c.j.cpu s1.c$c.f.cpu 1)) | ≥ 0.90 | $v | $bj % / $bf % |"
	[ "$c" = 32 ] && summary "1. ruok capacity (CPU per conn), jm4lwd ÷ floor, c=$c" "$(fmt "$cap" %.3f)" "≥ 0.90 (same)" "$v"
done
cmds


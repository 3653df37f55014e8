#!/bin/bash
# A busy machine: profiles are taken during incidents, when
# every core is busy. bench_host embeds the module over a heap of
# thousands of stacks (-S, sampled every 32 KiB) with one host thread
# allocating and freeing sampled blocks (-A 1), and two busy loops at
# normal priority take the 2 cores. Then:
#   - jmfp, jmtp and jmfg are answered (generous bounds: this is no
#     timing test; the figures are in BENCHMARKS.md, section 13);
#   - the host's allocating thread kept making progress while they ran
#     (its operations counted by alst; its longest stall is printed);
#   - the part of a job that holds jemalloc's locks ran on jm4lw-dump at
#     the host's priority, the rest on jm4lw-worker, niced, never
#     SCHED_IDLE (the priority inversion that made jmfp take a minute);
#   - jmfp answered before its leak index existed: jmlk after, with the
#     indexes taken away, makes them and says so.
#
#	bash busy_machine.sh   (BENCH_HOST=path/to/bench_host, else build/)
. "$(dirname "$0")/../lib.sh"
need nc.openbsd timeout
D=$(scratch busy_machine)
start_bench_host "$D" prof:true,lg_prof_sample:15 -S -m 48 -A 1 -P 50 ||
	die "bench_host is listening" "$(tail -5 "$D/err")"

# The busy loops: as many as the machine has cores.
for _ in $(seq "$(nproc)"); do
	bash -c 'while :; do :; done' &
	track $!
done
ask alst >/dev/null # the allocating thread's interval starts here

# A reply is bounded by 5 minutes (a starved worker took minutes).
ask_long() {
	printf '%s\n' "$1" | timeout $((300 * SLOW)) nc.openbsd 127.0.0.1 "$PORT"
}
start=$(date +%s.%N)
ask_long jmfp >"$D/jmfp"
t_fp=$(echo "$(date +%s.%N) - $start" | bc)
dump=$(cat "$D/jmfp")
assert_grep "busy: jmfp answers its path (${t_fp} s)" "^$D/jm4lw\.$PID\.[0-9]+\.[a-z]\.heap\$" "$D/jmfp"
start=$(date +%s.%N)
ask_long jmtp >"$D/jmtp"
t_tp=$(echo "$(date +%s.%N) - $start" | bc)
assert_grep "busy: jmtp answers the top of the heap (${t_tp} s)" '^# live heap' "$D/jmtp"
start=$(date +%s.%N)
ask_long jmfg >"$D/jmfg"
t_fg=$(echo "$(date +%s.%N) - $start" | bc)
assert_grep "busy: jmfg answers a flame graph (${t_fg} s)" '^<\?xml|<svg' "$D/jmfg"

# The host's allocating thread during the three: "threads=1 secs=S ops=O
# ... max_ns=C".
ask alst >"$D/alst"
ops=$(sed -n 's/.* ops=\([0-9]*\) .*/\1/p' "$D/alst")
max=$(sed -n 's/.* max_ns=\([0-9]*\).*/\1/p' "$D/alst")
p99=$(sed -n 's/.* p99_ns=\([0-9]*\) .*/\1/p' "$D/alst")
if [ "${ops:-0}" -gt 1000 ]; then
	pass "busy: the host's allocating thread kept going ($ops operations; p99 $((${p99:-0} / 1000)) us, longest stall $((${max:-0} / 1000)) us)"
else
	fail "busy: the host's allocating thread kept going" "$(cat "$D/alst")"
fi

# The module's threads: name, nice (stat field 19) and policy (field 41).
# comm may hold spaces in general, not here: our names have none.
thread() {
	local t
	for t in /proc/"$PID"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = "$1" ] || continue
		awk '{ print $19, $41 }' "$t/stat"
		return
	done
}
host_nice=$(awk '{ print $19 }' "/proc/$PID/stat")
assert_eq "busy: jm4lw-dump runs at the host's priority (nice, SCHED_OTHER)" \
	"$host_nice 0" "$(thread jm4lw-dump)"
assert_eq "busy: jm4lw-worker runs niced by 5, SCHED_OTHER (not SCHED_IDLE)" \
	"$((host_nice + 5 > 19 ? 19 : host_nice + 5)) 0" "$(thread jm4lw-worker)"

# jmfp answers once its dump is kept; its index comes after, between
# jobs. Two more dumps, then the indexes taken away: jmlk makes them.
ask_long jmfp >/dev/null
ask_long jmfp >"$D/jmfp3"
for _ in $(seq $((600 * SLOW))); do
	[ "$(find "$D" -maxdepth 1 -name '*.heap.trend' | wc -l)" -ge 3 ] && break
	sleep 0.1
done
assert_eq "busy: each dump's leak index follows it, between jobs" 3 \
	"$(find "$D" -maxdepth 1 -name '*.heap.trend' | wc -l)"
rm -f "$D"/*.heap.trend
ask_long jmlk >"$D/jmlk"
assert_grep "busy: jmlk makes the missing indexes and says so" \
	'^# indexed 3 of the 3 dumps now' "$D/jmlk"
[ -s "$dump" ] && pass "busy: the first dump is kept" || fail "busy: the first dump is kept" "$dump"

alive "busy: bench_host still answers ruok"
stop_host "busy: bench_host"
finish

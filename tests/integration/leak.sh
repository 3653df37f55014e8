#!/bin/bash
# Finding a leak, the README's workflow end to end: jmep, a baseline dump
# A, let the process leak, dump B, and `jeprof --text --base=A BINARY B`
# must put the leaking function first; `jeprof --collapsed` gives the
# flame-graph input with it. The host (tests/host/jeprof_host, leak mode)
# leaks ~25 MiB/s through jm4lw_test_leaky_function() while its ring
# allocator churns 64 MiB through jm4lw_test_distinctive_alloc() without
# growing: the diff must tell growth from traffic.
#
# Controls (each shows a check above could fail):
#   - A against itself: the leaky function is in A's own profile, and the
#     diff has nothing in it;
#   - once the leak has stopped (the host caps it at 256 MiB), two dumps C
#     and D: the function holds 256 MiB in both and the diff does not
#     name it at all;
#   - jmrs after that: a dump E right after the reset no longer names it,
#     though its blocks are still live (the reset forgot their samples).
#
#	bash leak.sh       (JEPROF_HOST=path/to/jeprof_host, else build/)
#
# Not run in sanitizer builds: the sanitizer's malloc serves the heap there.
. "$(dirname "$0")/../lib.sh"

FN=jm4lw_test_leaky_function

need jeprof nc.openbsd timeout
[ -x "$JEPROF_HOST" ] || die "$JEPROF_HOST is not executable"

# start_host: jeprof_host in leak mode with profiling on (sampling off).
start_host() {
	start_jeprof_host leak_host JM4LW_TEST_LEAK=1 || return 1
	assert_grep "jeprof_host listening on 127.0.0.1:$PORT, leaking" '^leak: on$' "$D/host.out"
}

# dump NAME: jmfp into $NAME (the path), checked to be a heap_v2 profile.
dump() {
	local p
	p=$(ask jmfp)
	if [ -s "$p" ] && [ "$(head -c 8 "$p")" = heap_v2/ ]; then
		pass "dump $1: jmfp wrote a heap_v2 profile"
	else
		fail "dump $1: jmfp wrote a heap_v2 profile" "reply: $p"
		return 1
	fi
	printf -v "$1" '%s' "$p"
}

# jeprof_to OUT ARGS...: jeprof ARGS > OUT, recording its exit status.
jeprof_to() {
	local out=$1 rc
	shift
	timeout 120 jeprof "$@" >"$out" 2>"$out.err"
	rc=$?
	if [ $rc = 0 ]; then
		pass "jeprof ${*//$D\//}: exits 0"
	else
		fail "jeprof $*: exits 0" "exit status $rc" "$(head -c 400 "$out")" \
			"$(head -c 400 "$out.err")"
		return 1
	fi
}

# top_entry FILE: the first entry line of a jeprof --text report (flat,
# flat%, sum%, cum, cum%, name), i.e. the biggest by flat.
top_entry() {
	grep -E '^ *-?[0-9.]+ +-?[0-9.]+% +-?[0-9.]+% +-?[0-9.]+ +-?[0-9.]+% ' "$1" | head -1
}

# Baseline after the ring has turned over under sampling (it replaces its
# 256 blocks in ~1.3 s), so its sampled live bytes are the same in A and
# B and only the leak differs.
case_diff() {
	local top re
	ask jmep >"$D/jmep.out"
	assert_bytes "jmep: ok" "$D/jmep.out" \
		'ok: profiling active (prof.active=true, was false); profiles hold only allocations made from now on\n'
	sleep 2
	dump A || return 1
	sleep 2
	dump B || return 1
	if grep -q '^leak: cap reached' "$D/host.out"; then
		fail "the leak was still running at dump B" "$(cat "$D/host.out")"
	fi

	jeprof_to "$D/diff.txt" --text --base="$A" "$JEPROF_HOST" "$B" || return 1
	top=$(top_entry "$D/diff.txt")
	if [[ $top =~ [[:space:]]$FN$ ]]; then
		pass "--base=A B: $FN is the top entry ($(echo "$top" | awk '{ print $1 }') MiB grew)"
	else
		fail "--base=A B: $FN is the top entry" "top: $top" "$(head -8 "$D/diff.txt")"
	fi

	# Control: A minus A. The function is in A (so it could show) but the
	# diff must not name it.
	jeprof_to "$D/A.txt" --text "$JEPROF_HOST" "$A"
	assert_grep "control: $FN is in A's own profile (live since jmep)" \
		"[[:space:]]$FN\$" "$D/A.txt"
	jeprof_to "$D/AA.txt" --text --base="$A" "$JEPROF_HOST" "$A"
	top=$(top_entry "$D/AA.txt")
	if [[ $top =~ [[:space:]]$FN$ ]]; then
		fail "control: --base=A A does not name $FN at the top" "top: $top"
	else
		pass "control: --base=A A does not name $FN at the top (top: ${top:-none})"
	fi

	# The flame graph input: "frame;frame;... count" per stack.
	jeprof_to "$D/B.collapsed" --collapsed "$JEPROF_HOST" "$B"
	if [ -s "$D/B.collapsed" ] &&
		! grep -Evq '^[^ ;]+(;[^ ;]+)* [0-9]+$' "$D/B.collapsed"; then
		pass "--collapsed B: $(wc -l <"$D/B.collapsed") lines, each 'frame;frame;... count'"
	else
		fail "--collapsed B: lines of 'frame;frame;... count'" \
			"$(grep -Ev '^[^ ;]+(;[^ ;]+)* [0-9]+$' "$D/B.collapsed" | head -5)"
	fi
	assert_grep "--collapsed B: a stack ends in $FN (below leak_tick, main)" \
		"^([^ ;]+;)*main[^ ;]*;([^ ;]+;)*leak_tick[^ ;]*;${FN}[^ ;]* [1-9][0-9]*\$" \
		"$D/B.collapsed"
	# With --base the biggest stack of the growth is the leak's.
	jeprof_to "$D/AB.collapsed" --collapsed --base="$A" "$JEPROF_HOST" "$B"
	top=$(sort -t ' ' -k2,2nr "$D/AB.collapsed" | head -1)
	re=";${FN}[^ ;]* [0-9]+\$"
	if [[ $top =~ $re ]]; then
		pass "--collapsed --base=A B: the biggest stack ends in $FN"
	else
		fail "--collapsed --base=A B: the biggest stack ends in $FN" "$(head -5 "$D/AB.collapsed")"
	fi
}

# Once the leak stopped: two dumps show no growth of it, and jmrs forgets
# its samples.
case_after_cap() {
	local top
	for _ in $(seq 200); do
		grep -q '^leak: cap reached' "$D/host.out" && break
		_alive "$PID" || break
		sleep 0.1
	done
	if ! grep -q '^leak: cap reached' "$D/host.out"; then
		fail "the host's leak stops at its cap within 20 s" "$(cat "$D/host.out")"
		return 1
	fi
	pass "the host's leak stopped at its cap (256 MiB)"
	dump C || return 1
	sleep 1.2
	dump D2 || return 1
	jeprof_to "$D/C.txt" --text "$JEPROF_HOST" "$C"
	top=$(top_entry "$D/C.txt")
	if [[ $top =~ [[:space:]]$FN$ ]]; then
		pass "control: in C alone $FN is the top entry (256 MiB live)"
	else
		fail "control: in C alone $FN is the top entry" "top: $top" "$(head -6 "$D/C.txt")"
	fi
	jeprof_to "$D/CD.txt" --text --base="$C" "$JEPROF_HOST" "$D2"
	assert_no_grep "control: --base=C D (leak stopped) does not name $FN" \
		"[[:space:]]$FN\$" "$D/CD.txt"

	ask jmrs >"$D/jmrs.out"
	assert_grep "jmrs: ok: profile reset" '^ok: profile reset \(lg_prof_sample=[0-9]+\); every sample so far was dropped: .*$' \
		"$D/jmrs.out"
	sleep 1.1
	dump E || return 1
	jeprof_to "$D/E.txt" --text "$JEPROF_HOST" "$E"
	assert_no_grep "jmrs: a dump after the reset no longer names $FN (its samples are forgotten)" \
		"[[:space:]]$FN\$" "$D/E.txt"
	assert_grep "jmrs: ... while the ring's new allocations are sampled" \
		"[[:space:]]jm4lw_test_distinctive_alloc\$" "$D/E.txt"
}

start_host || finish
case_diff && case_after_cap
alive "ruok still answers imok"
assert_eq "no .jm4lw.* temporary file left" "" "$(leftovers "$D/dumps")"
stop_jeprof_host
finish

#!/bin/bash
# End to end through the embedding API and the real jeprof: jeprof_host
# (tests/host) embeds the module and keeps ~64 MiB live through
# jm4lw_test_distinctive_alloc(). A profile taken after jmep must name that
# function; one taken before jmep must not, which shows the check can fail.
#
#	bash jeprof.sh        (JEPROF_HOST=path/to/jeprof_host, else build/)
. "$(dirname "$0")/../lib.sh"

FN=jm4lw_test_distinctive_alloc

need jeprof nc.openbsd timeout
[ -x "$JEPROF_HOST" ] || die "$JEPROF_HOST is not executable"

# start_host: jeprof_host with profiling on, sampling off.
start_host() {
	start_jeprof_host jeprof_host || return 1
	pass "jeprof_host listening on 127.0.0.1:$PORT"
}

# dump NAME: jmfp, then jeprof --text on the profile into $D/NAME.txt.
# Returns 1 after recording a failure.
dump() {
	local name=$1 rc
	PROFILE=$(ask jmfp)
	if [ -s "$PROFILE" ] && [ "$(head -c 8 "$PROFILE")" = heap_v2/ ]; then
		pass "$name: jmfp wrote a heap_v2 profile, $PROFILE"
	else
		fail "$name: jmfp wrote a heap_v2 profile" "reply: $PROFILE"
		return 1
	fi
	timeout 120 jeprof --text "$JEPROF_HOST" "$PROFILE" >"$D/$name.txt" 2>"$D/$name.err"
	rc=$?
	if [ $rc = 0 ]; then
		pass "$name: jeprof --text exits 0"
	else
		fail "$name: jeprof --text exits 0" "exit status $rc" \
			"$(head -c 400 "$D/$name.txt")" "$(head -c 400 "$D/$name.err")"
		return 1
	fi
}

# Before jmep nothing is sampled: the profile has no sample (jeprof prints
# nothing for it) and the function must be absent. This is the control: if
# sampling were on from the start, or jeprof listed symbols regardless of
# the profile, this fails.
case_before_jmep() {
	dump before-jmep || return
	assert_grep "before jmep: the profile holds no sample" \
		'^  t\*: 0: 0 \[0: 0\]$' "$PROFILE"
	assert_no_grep "before jmep: $FN is not in jeprof's output" "\\<$FN\\>" \
		"$D/before-jmep.txt"
}

# After jmep and a second of allocating (~200 blocks of 256 KiB, each
# sampled with p ~ 0.4 at the default lg_prof_sample 19), the function
# holds most of the sampled live heap.
case_after_jmep() {
	ask jmep >"$D/jmep.out"
	assert_bytes "jmep: ok" "$D/jmep.out" \
		'ok: profiling active (prof.active=true, was false); profiles hold only allocations made from now on\n'
	sleep 1
	dump after-jmep || return
	assert_grep "after jmep: jeprof prints its Total: header" \
		'^Total: [0-9.]+ [kMG]?B$' "$D/after-jmep.txt"
	assert_grep "after jmep: $FN is in jeprof's output" "\\<$FN\\>" \
		"$D/after-jmep.txt"
}

# Nothing the module allocates for itself shows up in the profiles it
# writes, though it runs on the host's own loop thread (embedded mode):
# with every allocation sampled (lg_prof_sample:0) from the start, after
# 50 connections (ruok, mntr, jmst, conf, jmls) and a dump, no function of
# the module holds a byte in the profile, while the host's own function
# does (the control: sampling worked).
case_own_allocations() {
	local i own
	start_jeprof_host own_allocs \
		MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 || return
	for i in $(seq 10); do
		for w in ruok mntr jmst conf jmls; do
			ask "$w" >/dev/null
		done
	done
	ask jmfp >/dev/null # a first dump starts the worker thread
	sleep 1.1           # dump_min_interval
	dump own-allocs || return
	assert_grep "own allocations: the host's $FN holds bytes (sampling works)" \
		"\\<$FN\\>" "$D/own-allocs.txt"
	own='\<((conn|listen|module|worker|core|proto|word|figures|dumps?|timers|config|acl)_[a-z_]+|jm4lw_(new|listen|listen_fd|free|reconfigure|add_word|reply_[a-z]+))\>'
	assert_no_grep "own allocations: no function of the module in the profile" \
		"$own" "$D/own-allocs.txt"
	stop_jeprof_host
}

start_host || finish
case_before_jmep
case_after_jmep
stop_jeprof_host
case_own_allocations
finish

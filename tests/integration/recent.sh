#!/bin/bash
# jmrc and /jemalloc/recent on the real jemalloc (5.3's prof_recent):
#  - a real host (tests/host/jeprof_host, leak mode: a 256-block ring
#    through jm4lw_test_distinctive_alloc, a leak through
#    jm4lw_test_leaky_function) shows its allocations newest first,
#    symbolized, live and freed (with the free's line), no allocator
#    frame left;
#  - a real jm4lwd sampling every allocation (lg_prof_sample:0): the JSON
#    is valid (python3's json), keeps both stacks raw and symbolized, the
#    live=1 and min_size=N filters hold, bad values are 400, /4lw/jmrc is
#    the word; SIGHUP with recent_max = 0 turns it off with one clear line
#    (409 on HTTP) and another value sets alloc_max;
#  - without profiling, jmrc says so in one line;
#  - the allow list refuses the word and its route alike; readonly
#    serves them.
#
#	bash recent.sh   (JEPROF_HOST, JM4LWD; else build/)
. "$(dirname "$0")/../lib.sh"

need nc.openbsd timeout curl python3
[ -x "$JEPROF_HOST" ] || die "$JEPROF_HOST is not executable"

RING=jm4lw_test_distinctive_alloc
LEAK=jm4lw_test_leaky_function

# The allocator's names that must never lead a record's frames.
ALLOCATOR='(  | → )(malloc|calloc|realloc|free|je_[a-z_]*|imalloc[a-z_]*|prof_[a-z_]*)$'

case_host() {
	local conf i
	D=$(scratch host)
	conf=$D/jm4lw.conf
	printf 'recent_max = 200\n' >"$conf"
	start_jeprof_host "$D" JM4LW_TEST_LEAK=1 JM4LW_CONF="$conf" || return 1
	ask jmep >/dev/null
	# The ring turns over: its blocks are freed as they are replaced.
	# Ask until a freed one shows (the machine's speed decides when).
	for i in $(seq $((60 * SLOW))); do
		ask jmrc >"$D/jmrc.out"
		grep -q ' freed ' "$D/jmrc.out" && break
		sleep 0.5
	done
	assert_grep "jmrc: the heading" \
		'^# [0-9]+ of [0-9]+ recent sampled allocations, newest first \(jemalloc keeps 200; one sampled every [0-9.]+ [KM]iB on average\)$' \
		"$D/jmrc.out"
	assert_grep "jmrc: the columns" '^#       size     age  thread       state   allocated in$' "$D/jmrc.out"
	assert_grep "jmrc: the ring's allocations, by name" \
		"^ +256\.0 KiB +[0-9.]+[smhd] +t[0-9]+ .* (live|freed) +(\.\.\. → )?([^ ]+ → )?host_tick → $RING$" "$D/jmrc.out"
	assert_grep "jmrc: the leak's, by name" \
		"^ +256\.0 KiB +[0-9.]+[smhd] +t[0-9]+ .* live +(\.\.\. → )?([^ ]+ → )?leak_tick → $LEAK$" "$D/jmrc.out"
	assert_grep "jmrc: a freed ring block" " freed +.* → $RING$" "$D/jmrc.out"
	assert_grep "jmrc: ... followed by its free's line, symbolized" \
		'^ {12} +[0-9.]+[smhd] +t[0-9]+ .* free +(\.\.\. → )?[A-Za-z_]' "$D/jmrc.out"
	assert_no_grep "jmrc: no allocator frame leads a record" "$ALLOCATOR" "$D/jmrc.out"
	# Newest first: ages never decrease down the list.
	assert_cmd "jmrc: newest first (ages never decrease)" awk '
		function secs(a) { u = substr(a, length(a)); v = substr(a, 1, length(a) - 1) + 0
			return u == "s" ? v : u == "m" ? v * 60 : u == "h" ? v * 3600 : v * 86400 }
		/^#/ || $3 == "" { next }
		$0 ~ / free / { next }
		{ s = secs($3); if (s < last - 0.05) { print "age " $3 " after " last; exit 1 } last = s }' \
		"$D/jmrc.out"
	alive "jmrc: the host still answers"
	stop_jeprof_host "host: "
}

# json_check NAME PYTHON: the body of hreq NAME, parsed by python3's json,
# meets PYTHON (a boolean expression over r, the object).
json_check() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
ok = eval("(" + sys.argv[2] + ")")
sys.exit(0 if ok else 1)' "$T/$1.body" "$2"
}

# reload_max DIR N NAME: recent_max = N in DIR/jm4lwd.conf, SIGHUP to
# $PID, then /jemalloc/recent (the body of hreq NAME) asked until it says
# recent_max N, 5 s at most ($SLOW times more under a wrapper).
reload_max() {
	printf 'recent_max = %s\ndump_min_interval = 0\n' "$2" >"$1/jm4lwd.conf"
	kill -HUP "$PID"
	for _ in $(seq $((50 * SLOW))); do
		hreq "$3" /jemalloc/recent >/dev/null
		json_check "$3" "r[\"recent_max\"] == $2" 2>/dev/null && break
		sleep 0.1
	done
}

case_daemon() {
	local d code
	d=$(scratch daemon)
	printf 'recent_max = 32\ndump_min_interval = 0\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e MALLOC_CONF=prof:true,lg_prof_sample:0 -- \
		-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return 1
	# Its own allocations for peers: connections and replies.
	for _ in 1 2 3 4 5 6; do ask mntr >/dev/null; done

	assert_http "/jemalloc/recent" 200 recent /jemalloc/recent
	assert_eq "/jemalloc/recent: JSON" application/json "$(hheader recent Content-Type)"
	assert_cmd "/jemalloc/recent: valid JSON (python3 -m json.tool)" \
		python3 -m json.tool "$T/recent.body"
	assert_cmd "/jemalloc/recent: recent_max 32, at most 32 records, newest first" \
		json_check recent 'r["recent_max"] == 32 and 0 < r["count"] <= 32 and
			r["shown"] == len(r["records"]) == r["count"] and
			all(a["alloc"]["time_ns"] >= b["alloc"]["time_ns"]
			    for a, b in zip(r["records"], r["records"][1:]))'
	assert_cmd "/jemalloc/recent: every record has its raw stack and its frames, named" \
		json_check recent 'all(x["size"] <= x["usize"] and
			all(p.startswith("0x") for p in x["alloc"]["pcs"]) and
			x["alloc"]["frames"] and
			all(f["pc"] in x["alloc"]["pcs"] and f["func"] for f in x["alloc"]["frames"])
			for x in r["records"])'
	assert_cmd "/jemalloc/recent: freed records carry their free's stack; live ones free null" \
		json_check recent 'any(not x["live"] for x in r["records"]) and
			all((x["free"] is None) == x["live"] or (not x["live"] and x["free"] is None)
			    for x in r["records"]) and
			all(x["free"]["pcs"] and x["free"]["frames"] and x["free"]["time_ns"] >= x["alloc"]["time_ns"]
			    for x in r["records"] if x["free"] is not None)'
	# The request itself allocated on its way to the worker.
	assert_cmd "/jemalloc/recent: the daemon's own functions by name (http_route_recent)" \
		json_check recent 'any(f["func"] == "http_route_recent" for x in r["records"] for f in x["alloc"]["frames"])'

	assert_http "/jemalloc/recent?live=1" 200 live '/jemalloc/recent?live=1'
	assert_cmd "live=1: only live records" \
		json_check live 'r["live_only"] and r["records"] and all(x["live"] and x["free"] is None for x in r["records"])'
	assert_http "/jemalloc/recent?min_size=1000" 200 min '/jemalloc/recent?min_size=1000'
	assert_cmd "min_size=1000: only records of 1000 bytes or more" \
		json_check min 'r["min_size"] == 1000 and all(x["size"] >= 1000 for x in r["records"])'
	assert_http "?live=2 is 400" 400 bad1 '/jemalloc/recent?live=2'
	assert_http "?min_size=-1 is 400" 400 bad2 '/jemalloc/recent?min_size=-1'
	assert_http "?min_size=99999999999999999999 is 400" 400 bad3 \
		'/jemalloc/recent?min_size=99999999999999999999'
	assert_http "?format=xml is 400" 400 bad4 '/jemalloc/recent?format=xml'
	assert_grep "a bad value: one line saying what is wanted" 'min_size=-1: want a size in bytes' "$T/bad2.body"
	# Edge values: each a 200 or a clean 400 with its one line naming the
	# key (a sign, a space, 2^64, a repeated key), never a 500; the
	# daemon serves on.
	local q want
	for q in 'min_size=0 200' 'min_size= 200' 'min_size=9999999999999999999 200' \
		'min_size=%2B5 400' 'min_size=%205 400' 'min_size=5%20 400' \
		'min_size=18446744073709551616 400' 'min_size=-0 400' \
		'min_size=0x10 400' 'min_size=1&min_size=2 400' \
		'live=0 200' 'live= 400' 'live=-1 400' 'live=01 400' 'live=%2B1 400' \
		'live=1&live=1 400'; do
		want=${q##* }
		q=${q% *}
		assert_http "/jemalloc/recent?$q is $want" "$want" edge "/jemalloc/recent?$q"
		[ "$want" = 400 ] && assert_eq "... one error line naming the key" 1:1 \
			"$(wc -l <"$T/edge.body"):$(grep -c '^error: .*\(min_size\|live\)' "$T/edge.body")"
	done
	alive "edge values: the daemon still serves"
	assert_http "?format=text is the word's screen" 200 text '/jemalloc/recent?format=text'
	assert_grep "?format=text: jmrc's heading" '^# [0-9]+ of [0-9]+ recent sampled allocations' "$T/text.body"
	assert_http "/4lw/jmrc" 200 word /4lw/jmrc
	assert_grep "/4lw/jmrc: the word's heading" '^# [0-9]+ of [0-9]+ recent sampled allocations' "$T/word.body"

	# recent_max = 0 on reload: off, said in one line.
	printf 'recent_max = 0\ndump_min_interval = 0\n' >"$d/jm4lwd.conf"
	: >"$DLOG.mark"
	kill -HUP "$PID"
	wait_log '^jm4lwd: configuration reloaded' 10 || fail "SIGHUP: reload logged" "$(show_tail "$DLOG")"
	ask jmrc >"$d/off.out"
	assert_bytes "recent_max = 0: jmrc says it is off, in one line" "$d/off.out" \
		'error: recent allocations are off: recent_max is 0 (set recent_max in the configuration, then reload)\n'
	assert_http "recent_max = 0: /jemalloc/recent is 409" 409 off /jemalloc/recent
	alive "recent_max = 0: the daemon still serves"

	# Another value on reload: jemalloc's alloc_max follows.
	printf 'recent_max = 5\ndump_min_interval = 0\n' >"$d/jm4lwd.conf"
	kill -HUP "$PID"
	code=0
	for _ in $(seq $((50 * SLOW))); do
		code=$(hreq five /jemalloc/recent)
		[ "$code" = 200 ] && break
		sleep 0.1
	done
	assert_eq "recent_max = 5: /jemalloc/recent serves again" 200 "$code"
	for _ in 1 2 3 4 5 6; do ask mntr >/dev/null; done
	hreq five /jemalloc/recent >/dev/null
	assert_cmd "recent_max = 5: jemalloc keeps 5" \
		json_check five 'r["recent_max"] == 5 and r["count"] <= 5'

	# The key's ceiling, then back to the default: each reload is
	# followed, the ring fills past the old size and shrinks again.
	reload_max "$d" 100000 big
	for _ in $(seq 40); do ask mntr >/dev/null; done
	assert_http "recent_max = 100000: /jemalloc/recent" 200 big /jemalloc/recent
	assert_cmd "recent_max = 100000: more than 64 records kept, each shown" \
		json_check big 'r["recent_max"] == 100000 and r["count"] > 64 and
			r["shown"] == len(r["records"])'
	ask jmrc >"$d/big.out"
	assert_grep "recent_max = 100000: jmrc's heading" \
		'^# [0-9]+ of [0-9]+ recent sampled allocations' "$d/big.out"
	reload_max "$d" 64 back
	assert_cmd "back to recent_max = 64: jemalloc keeps 64 at most" \
		json_check back 'r["recent_max"] == 64 and 0 < r["count"] <= 64'
	alive "after recent_max 0, 5, 100000 and 64: the daemon still serves"
	stop_daemon
}

case_no_profiling() {
	local d
	d=$(scratch noprof)
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return 1
	ask jmrc >"$d/jmrc.out"
	assert_grep "no profiling: jmrc says so in one error line" \
		'^error: heap profiling is not enabled in this process' "$d/jmrc.out"
	assert_eq "no profiling: one line" 1 "$(wc -l <"$d/jmrc.out")"
	assert_http "no profiling: /jemalloc/recent is 501" 501 noprof /jemalloc/recent
	stop_daemon
}

# The allow list governs the word and its route alike; readonly serves it.
case_allow() {
	local d
	d=$(scratch allow)
	printf 'allow = ruok, mntr\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return 1
	ask jmrc >"$d/refused.out"
	assert_bytes "allow = ruok, mntr: jmrc refused with ZooKeeper's line" "$d/refused.out" \
		'jmrc is not executed because it is not in the whitelist.\n'
	assert_http "allow = ruok, mntr: /jemalloc/recent is 403" 403 refused /jemalloc/recent
	printf 'allow = readonly\n' >"$d/jm4lwd.conf"
	kill -HUP "$PID"
	wait_log '^jm4lwd: configuration reloaded' 10 || fail "SIGHUP: reload logged" "$(show_tail "$DLOG")"
	ask jmrc >"$d/ro.out"
	assert_grep "allow = readonly: jmrc is served" '^# [0-9]+ of [0-9]+ recent sampled allocations' "$d/ro.out"
	stop_daemon
}

case_host
case_daemon
case_no_profiling
case_allow
finish

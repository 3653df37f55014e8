#!/bin/bash
# jm4lwd as an operator meets it: profiling off, bad input, limits and
# timeouts, listeners, the allow list and its reload, -n, signals, and the
# words not covered per client in clients.sh.
#
#	bash daemon.sh        (JM4LWD=path/to/jm4lwd, else build/jm4lwd)
#
# Each case starts its own daemon on a port the kernel picks; ordinary words
# go through nc.openbsd (lib.sh: ask), bytes no client sends through raw.py.
. "$(dirname "$0")/../lib.sh"

need nc.openbsd python3 timeout
[ -x "$JM4LWD" ] || die "$JM4LWD is not executable"

# --- profiling off ------------------------------------------------------------

# Without MALLOC_CONF, jmfp/jmep must say what to set instead of failing
# silently (Keeper's way), and leave no file; the rest still works.
case_prof_off() {
	local w
	start_daemon -- -l 127.0.0.1:0 -D . || return
	for w in jmfp jmep; do
		ask $w >"$D/$w.out"
		assert_grep "prof off: $w answers an error: line" '^error: ' "$D/$w.out"
		assert_grep_F "prof off: $w says to set MALLOC_CONF=prof:true" \
			'MALLOC_CONF=prof:true' "$D/$w.out"
		assert_eq "prof off: $w reply is one line" 1 "$(wc -l <"$D/$w.out")"
	done
	assert_eq "prof off: no profile written" "" \
		"$(find "$D" -name '*.heap*')"
	assert_grep "prof off: the start-up log says how to turn it on" \
		'^jm4lwd: .*MALLOC_CONF=prof:true' "$DLOG"
	alive "prof off: ruok still answers imok"
	stop_daemon
}

# --- bad input, one prof-on daemon --------------------------------------------
# After each case the daemon must still answer ruok and hold no connection
# but the one asking (a leaked connection shows in mntr).

# Binary garbage: an unknown-word error that shows the bytes escaped.
case_garbage() {
	printf '\000\377\001\200\033[2J%%s%%n\r\n' | timeout 30 nc.openbsd 127.0.0.1 "$PORT" \
		>"$D/garbage.out"
	assert_grep_F "garbage: unknown word with the bytes as \\xNN" \
		'error: unknown word "\x00\xff\x01\x80"; known words: ruok' "$D/garbage.out"
	alive "garbage: still answers imok"
}

# 1 MiB after a word: the server answers, drains at most 64 KiB, and ends
# the connection instead of reading forever (a RST is allowed once it
# stopped reading, so the reply itself is not checked here).
case_flood() {
	raw_case "1 MiB write: server ends the connection" \
		flood "$PORT" $((1024 * 1024))
	alive "1 MiB write: still answers imok"
	wait_quiet "1 MiB write: no connection left open"
}

# 0-3 bytes, then a half-close: no reply at all (PROTOCOL.md), a clean FIN;
# or an abrupt close.
case_short() {
	local n how
	for how in half close; do
		for n in 0 1 2 3; do
			raw_case "$n bytes then $how: nothing sent back" \
				partial "$PORT" $n $how
		done
	done
	alive "short words: still answers imok"
	wait_quiet "short words: no connection left open"
}

# An unknown word and the upper-case RUOK (exact, case-sensitive match).
case_unknown() {
	ask xyzw >"$D/xyzw.out"
	assert_grep "unknown word: error line listing the known words" \
		'^error: unknown word "xyzw"; known words: ruok mntr( [a-z]{4})+$' "$D/xyzw.out"
	ask RUOK >"$D/RUOK.out"
	assert_grep "RUOK is unknown, as in ZooKeeper" \
		'^error: unknown word "RUOK"; ' "$D/RUOK.out"
	alive "unknown words: still answers imok"
}

# jmsj is one JSON object with jemalloc's statistics.
case_jmsj() {
	ask jmsj >"$D/jmsj.out"
	if python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))
assert "jemalloc" in o and "stats" in o["jemalloc"], sorted(o)' "$D/jmsj.out" \
		>"$D/jmsj.err" 2>&1; then
		pass "jmsj: one JSON object with jemalloc.stats ($(wc -c <"$D/jmsj.out") bytes)"
	else
		fail "jmsj parses as JSON" "$(tail -3 "$D/jmsj.err")" "$(show "$D/jmsj.out")"
	fi
}

# conf: every key, with the values in force (the bound port, not :0).
case_conf() {
	ask conf >"$D/conf.out"
	assert_bytes "conf: every key with its effective value" "$D/conf.out" \
		"listen=127.0.0.1:$PORT\nallow=*\ndump_dir=dumps\ndump_prefix=jm4lw\nmax_connections=64\nmax_connections_per_peer=48\nread_timeout=5\nwrite_timeout=30\nallow_from=127.0.0.0/8,::1\ndump_min_interval=0\ndump_min_free=67108864\ndump_interval=0\ndump_on_growth=0\ngrowth_check_interval=10\ndump_keep=0\ndump_max_bytes=0\nprof_reset_lg_sample=keep\ndump_symbolized=off\njemalloc_dumps=adopt\nhttp_listen=127.0.0.1:$HTTP_PORT\nhttp_allowed_hosts=\nhttp_max_header_bytes=8192\nhttp_max_body_bytes=4194304\nhttp_keepalive_requests=100\nscrape_waiters_max=64\ndebug_dirs=\nsymbolize_debuginfod=off\nsymbolize_timeout=10\nfold_wrappers=\nhistory_interval=10\nhistory_points=8640\nsnapshot_interval=60\nsnapshot_count=30\nsnapshot_max_bytes=4194304\nrecent_max=64\ndump_on_memory=0\ndump_on_memory_psi=off\nmemory_check_interval=1\nmemory_cgroup_root=/sys/fs/cgroup\nsymbolizer=${JM4LW_SYMBOLIZER:-libdw}\n"
}

# srvr: ZooKeeper's shape, with the Mode: line tools look for.
case_srvr() {
	ask srvr >"$D/srvr.out"
	assert_grep "srvr: has a Mode: line" '^Mode: [a-z]+$' "$D/srvr.out"
	assert_no_grep "srvr: every line is Key: value" '^[^:]*$' "$D/srvr.out"
}

# jmpg, jmep, jmdp: one ok line each; prof.active really flips.
case_ok_words() {
	ask jmpg >"$D/jmpg.out"
	assert_grep "jmpg: ok line with resident before and after" \
		'^ok: purged all arenas \(resident [0-9.]+ [KMGT]?i?B -> [0-9.]+ [KMGT]?i?B\)$' \
		"$D/jmpg.out"
	ask jmep >"$D/jmep.out"
	assert_bytes "jmep: ok" "$D/jmep.out" \
		'ok: profiling active (prof.active=true, was false); profiles hold only allocations made from now on\n'
	assert_eq "jmep: mntr shows prof.active true" true \
		"$(mntr_value jemalloc_prof_active)"
	ask jmdp >"$D/jmdp.out"
	assert_bytes "jmdp: ok" "$D/jmdp.out" \
		'ok: profiling inactive (prof.active=false, was true)\n'
	assert_eq "jmdp: mntr shows prof.active false" false \
		"$(mntr_value jemalloc_prof_active)"
}

# jmfp with a relative dump_dir: the reply is absolute, seq counts up.
case_jmfp() {
	local a b
	a=$(ask jmfp)
	b=$(ask jmfp)
	assert_eq "jmfp: absolute path under the relative dump_dir, seq 0" \
		"$D/dumps/jm4lw.$PID.0.w.heap" "$a"
	assert_eq "jmfp: the next one is seq 1" "$D/dumps/jm4lw.$PID.1.w.heap" "$b"
	# Each with its leak index, written by the worker after
	# the answer: wait for it, bounded.
	for _ in $(seq 100); do
		[ "$(cd "$D/dumps" && ls | grep -c '\.trend$')" = 2 ] && break
		sleep 0.1
	done
	assert_eq "jmfp: both files exist, and their leak indexes, nothing else" \
		"jm4lw.$PID.0.w.heap jm4lw.$PID.0.w.heap.trend jm4lw.$PID.1.w.heap jm4lw.$PID.1.w.heap.trend" \
		"$(cd "$D/dumps" && ls | tr '\n' ' ' | sed 's/ $//')"
	assert_eq "jmfp: no temporary left" "" "$(leftovers "$D/dumps")"
	assert_eq "jmfp: one staging directory (0700), ours" "1 700" \
		"$(find "$D/dumps" -mindepth 1 -maxdepth 1 -type d -name ".jm4lw.$PID.*" -printf '%m\n' | sort -u | awk '{ n++; m = $1 } END { print n + 0, m }')"
	assert_eq "mntr: jm4lw_last_dump is the last one" "$b" \
		"$(mntr_value jm4lw_last_dump)"
}

# mntr serves exactly the keys docs/PROTOCOL.md lists, in its order (after
# a dump, so jm4lw_last_dump is there too): doc and daemon cannot drift.
case_mntr_keys() {
	awk '/^## mntr keys/ { on = 1; next }
		on && /^```/ { if (fence++) exit; next }
		on && fence { print $1 }' "$ROOT/docs/PROTOCOL.md" >"$D/mntr.doc"
	ask mntr | cut -f 1 >"$D/mntr.keys"
	if [ -s "$D/mntr.doc" ] && cmp -s "$D/mntr.doc" "$D/mntr.keys"; then
		pass "mntr: the keys of docs/PROTOCOL.md, in order ($(wc -l <"$D/mntr.keys"))"
	else
		fail "mntr: the keys of docs/PROTOCOL.md, in order" \
			"$(diff "$D/mntr.doc" "$D/mntr.keys")"
	fi
}

# The counters the cases above moved.
case_counters() {
	local u
	u=$(mntr_value jm4lw_words_unknown)
	# garbage, xyzw, RUOK (the flood's word was ruok).
	assert_eq "mntr: jm4lw_words_unknown counts the 3 unknown words" 3 "$u"
	assert_eq "mntr: jm4lw_dumps_written 2" 2 "$(mntr_value jm4lw_dumps_written)"
}

case_main() {
	local d
	d=$(scratch main)
	mkdir "$d/dumps"
	# Several dumps follow each other here: no rate limit (abuse tests it).
	printf 'dump_min_interval = 0\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 -D dumps || return
	case_garbage
	case_flood
	case_short
	case_unknown
	case_jmsj
	case_conf
	case_srvr
	case_ok_words
	case_jmfp
	case_mntr_keys
	case_counters
	stop_daemon
	assert_eq "jm4lwd's exit removed its staging directory" "" \
		"$(cd "$d/dumps" && ls -A | grep -Ev '^jm4lw\.[0-9]*\.[0-9]*\.([a-z][0-9]*\.)?heap(\.trend)?$')"
}

# --- timeouts and limits -------------------------------------------------------

# A peer that sends nothing is dropped after read_timeout (1 s here); the
# bound is generous, only a server that never times out fails it.
case_read_timeout() {
	local d
	d=$(scratch read_timeout)
	printf 'read_timeout = 1\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	raw_case "read_timeout=1: idle connection closed within 15 s" \
		idle "$PORT" 15
	alive "read_timeout: still answers imok"
	stop_daemon
}

# A peer that trickles its word a byte every 1.2 s with read_timeout=2:
# each gap is within the timeout, the whole word is not, so the deadline
# (from accept) must close it before the 4th byte at 3.6 s.
case_trickle() {
	local d
	d=$(scratch trickle)
	printf 'read_timeout = 2\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	raw_case "read_timeout=2: a word trickled over 3.6 s gets no reply" \
		trickle "$PORT" 1.2
	alive "trickle: still answers imok"
	stop_daemon
}

# max_connections=2: two idle peers hold both slots (read_timeout is long,
# so only the cap can close anyone). A third peer's ruok is answered: it
# takes the slot of the oldest peer that has not sent its word, so a flood
# of idle peers cannot keep the operator out. Only when every slot is
# answering a word is a newcomer refused with the too-many line.
case_max_connections() {
	local d
	d=$(scratch max_connections)
	printf 'max_connections = 2\nread_timeout = 60\nwrite_timeout = 60\n' \
		>"$d/jm4lwd.conf"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	raw_case "max_connections=2: a 3rd peer gets imok in the oldest idle peer's slot" \
		maxconn "$PORT" 2 10
	assert_eq "mntr: jm4lw_connections_evicted counts it" 1 \
		"$(mntr_value jm4lw_connections_evicted)"
	raw_case "max_connections=2, both answering: a 3rd gets the too-many line" \
		maxbusy "$PORT" 2 10
	alive "max_connections: ruok works once the slots are free"
	assert_eq "mntr: jm4lw_connections_rejected counts it" 1 \
		"$(mntr_value jm4lw_connections_rejected)"
	stop_daemon
}

# --- listeners ------------------------------------------------------------------

# [::1]:0: the log shows the address in brackets, nc over IPv6 gets imok.
case_ipv6() {
	if ! have_ipv6; then
		skip "no ::1 on this machine, IPv6 listener not tested"
		return
	fi
	start_daemon -- -l '[::1]:0' || return
	assert_eq "IPv6: logged as [::1]:PORT" "[::1]:$PORT" "${ADDRS[0]}"
	alive "IPv6: ruok over ::1" "$PORT" ::1
	ask conf "$PORT" ::1 >"$D/conf.out"
	assert_grep "IPv6: conf shows listen=[::1]:PORT" "^listen=\\[::1\\]:$PORT\$" \
		"$D/conf.out"
	stop_daemon
}

# Two listeners from one -l: both bound, both answer, conf lists both.
case_two_listeners() {
	start_daemon -L 2 -- -l 127.0.0.1:0,127.0.0.1:0 || return
	if [ "${PORTS[0]}" != "${PORTS[1]}" ]; then
		pass "two listeners: two ports (${PORTS[*]})"
	else
		fail "two listeners: two ports" "${ADDRS[*]}"
	fi
	alive "two listeners: the first answers" "${PORTS[0]}"
	alive "two listeners: the second answers" "${PORTS[1]}"
	assert_eq "two listeners: conf lists both" \
		"listen=127.0.0.1:${PORTS[0]},127.0.0.1:${PORTS[1]}" \
		"$(ask conf "${PORTS[1]}" | grep '^listen=')"
	stop_daemon
}

# --- dump_dir -------------------------------------------------------------------

# A dump_dir that does not exist: an error line naming it, no file anywhere
# (jemalloc would otherwise leave a .tmp), the failure counted.
case_dump_dir_missing() {
	local d
	d=$(scratch no_dump_dir)
	start_daemon -C "$d" -e "$PROF_ON" -- -l 127.0.0.1:0 -D "$d/nope" || return
	ask jmfp >"$d/jmfp.out"
	assert_grep_F "missing dump_dir: error line naming the dir and why" \
		"error: heap profile dump to $d/nope failed: No such file or directory" \
		"$d/jmfp.out"
	assert_eq "missing dump_dir: reply is one line" 1 "$(wc -l <"$d/jmfp.out")"
	assert_eq "missing dump_dir: no file left" "" "$(find "$d" -name '*.heap*')"
	assert_eq "missing dump_dir: mntr jm4lw_dumps_failed 1" 1 \
		"$(mntr_value jm4lw_dumps_failed)"
	alive "missing dump_dir: still answers imok"
	stop_daemon
}

# A name that already exists is skipped, not overwritten.
case_dump_name_taken() {
	local d
	d=$(scratch name_taken)
	start_daemon -C "$d" -e "$PROF_ON" -- -l 127.0.0.1:0 -D "$d" || return
	echo precious >"$d/jm4lw.$PID.0.w.heap"
	assert_eq "jmfp: skips the existing seq 0 name" "$d/jm4lw.$PID.1.w.heap" \
		"$(ask jmfp)"
	assert_eq "jmfp: the existing file is untouched" precious \
		"$(cat "$d/jm4lw.$PID.0.w.heap")"
	stop_daemon
}

# Someone who can write to dump_dir (the default is /tmp) plants a symlink
# at the next temporary name. The dump must not write through it: that
# would let them make jm4lwd overwrite any file its user can write.
case_dump_tmp_symlink() {
	local d
	d=$(scratch tmp_symlink)
	start_daemon -C "$d" -e "$PROF_ON" -- -l 127.0.0.1:0 -D "$d/dumps" || return
	mkdir "$d/dumps"
	echo precious >"$d/victim"
	ln -s "$d/victim" "$d/dumps/.jm4lw.$PID.0.heap.tmp"
	ask jmfp >"$d/jmfp.out"
	assert_eq "jmfp: a planted .tmp symlink's target is not overwritten" \
		precious "$(head -c 100 "$d/victim")"
	if [ -L "$(head -n 1 "$d/jmfp.out")" ]; then
		fail "jmfp: the path replied is not the planted symlink" \
			"$(ls -la "$d/dumps")"
	else
		pass "jmfp: the path replied is not the planted symlink"
	fi
	alive "planted symlink: still answers imok"
	stop_daemon
}

# allow = readonly: words that change nothing are served, the rest refused.
case_readonly() {
	local d w
	d=$(scratch readonly)
	printf 'allow = readonly\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" ||
		return
	for w in jmfp jmep jmdp jmpg; do
		ask $w >"$d/$w.out"
		assert_bytes "allow=readonly: $w refused" "$d/$w.out" \
			"$w is not executed because it is not in the whitelist.\n"
	done
	ask jmst >"$d/jmst.out"
	assert_grep "allow=readonly: jmst served" '^___ Begin jemalloc statistics ___$' \
		"$d/jmst.out"
	alive "allow=readonly: ruok served"
	stop_daemon
}

# --- configuration ----------------------------------------------------------------

# -n: "configuration OK" and 0, or FILE:LINE: reason and 1, nothing bound.
case_check_config() {
	local d out rc
	d=$(scratch check)
	printf '# jm4lwd\n[jm4lw]\nlisten = 127.0.0.1:0\nallow = ruok,mntr\nread_timeout = 3\n' \
		>"$d/good.conf"
	out=$(timeout 30 "$JM4LWD" -n -f "$d/good.conf" 2>&1)
	rc=$?
	assert_eq "-n, good file: exit 0" 0 "$rc"
	assert_eq "-n, good file: configuration OK" "configuration OK" "$out"

	printf 'listen = 127.0.0.1:0\n\nmax_connections = lots\n' >"$d/bad.conf"
	out=$(timeout 30 "$JM4LWD" -n -f "$d/bad.conf" 2>&1)
	rc=$?
	assert_eq "-n, bad value: exit 1" 1 "$rc"
	printf '%s\n' "$out" >"$d/bad.out"
	assert_grep "-n, bad value: $d/bad.conf:3: reason" \
		"^${d//./\\.}/bad\\.conf:3: .+" "$d/bad.out"

	printf 'allow = ruok\nno_such_key = 1\n' >"$d/unknown.conf"
	out=$(timeout 30 "$JM4LWD" -n -f "$d/unknown.conf" 2>&1)
	rc=$?
	assert_eq "-n, unknown key: exit 1" 1 "$rc"
	printf '%s\n' "$out" >"$d/unknown.out"
	assert_grep "-n, unknown key: $d/unknown.conf:2: reason" \
		"^${d//./\\.}/unknown\\.conf:2: .*no_such_key" "$d/unknown.out"
}

# allow list: refused words get ZooKeeper's line; SIGHUP with a new list
# takes effect on the same port; a broken file on SIGHUP changes nothing.
case_allow_reload() {
	local d p0
	d=$(scratch allow)
	printf 'allow = ruok,mntr\ndump_min_interval = 0\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" ||
		return
	p0=$PORT
	ask jmfp >"$d/refused.out"
	assert_bytes "allow list: jmfp refused with ZooKeeper's wording" \
		"$d/refused.out" 'jmfp is not executed because it is not in the whitelist.\n'
	assert_eq "allow list: refused jmfp wrote nothing" "" "$(find "$d" -name '*.heap*')"
	alive "allow list: ruok allowed"

	printf 'allow = ruok,mntr,jmfp,conf\ndump_min_interval = 0\nfold_wrappers = my_alloc  pool_get\n' >"$d/jm4lwd.conf"
	kill -HUP "$PID"
	if wait_log '^jm4lwd: configuration reloaded' 10; then
		pass "SIGHUP: reload logged"
	else
		fail "SIGHUP: reload logged within 10 s" "$(show_tail "$DLOG")"
	fi
	alive "SIGHUP: same port $p0 still answers" "$p0"
	ask jmfp "$p0" >"$d/allowed.out"
	assert_bytes "SIGHUP: jmfp now allowed, writes a profile" \
		"$d/allowed.out" "$d/jm4lw.$PID.0.w.heap\n"
	assert_grep "SIGHUP: fold_wrappers reloaded, in one form" \
		'^fold_wrappers=my_alloc, pool_get$' <(ask conf "$p0")
	ask srvr "$p0" >"$d/srvr.out"
	assert_bytes "SIGHUP: srvr still refused" "$d/srvr.out" \
		'srvr is not executed because it is not in the whitelist.\n'

	printf 'allow = ruok,mntr,nope\ndump_min_interval = 0\n' >"$d/jm4lwd.conf"
	kill -HUP "$PID"
	if wait_log '^jm4lwd: reload failed, configuration unchanged: ' 10; then
		pass "SIGHUP with a bad file: reload refused, logged"
	else
		fail "SIGHUP with a bad file: reload refused within 10 s" "$(show_tail "$DLOG")"
	fi
	ask jmfp "$p0" >"$d/kept.out"
	assert_bytes "SIGHUP with a bad file: the old list still in force" \
		"$d/kept.out" "$d/jm4lw.$PID.1.w.heap\n"
	stop_daemon
}

# --- signals --------------------------------------------------------------------

# SIGINT ends it as cleanly as SIGTERM (every case above stops with TERM).
case_sigint() {
	start_daemon -- -l 127.0.0.1:0 || return
	alive "SIGINT case: up"
	stop_daemon INT
}

# A port already in use: a clear log line and a non-zero exit, not a hang.
case_port_busy() {
	local busy out rc
	start_daemon -- -l 127.0.0.1:0 || return
	busy=$PORT
	out=$(timeout 30 "$JM4LWD" -l "127.0.0.1:$busy" -W 127.0.0.1:0 2>&1)
	rc=$?
	if [ $rc != 0 ] && [ $rc != 124 ] &&
		printf '%s\n' "$out" | grep -q "cannot listen on 127.0.0.1:$busy (listen): Address already in use"; then
		pass "port in use: exit $rc with the address and the reason"
	else
		fail "port in use: non-zero exit naming the address" "exit status $rc" "$out"
	fi
	# The HTTP port taken, the words' free: one line naming the address
	# and its key, after the words' "listening on", then exit 1.
	out=$(timeout 30 "$JM4LWD" -l 127.0.0.1:0 -W "127.0.0.1:$HTTP_PORT" 2>&1)
	rc=$?
	assert_eq "HTTP port in use: exit 1" 1 "$rc"
	assert_eq "HTTP port in use: one line says the address, its key and why" \
		"jm4lwd: cannot listen on 127.0.0.1:$HTTP_PORT (http_listen): Address already in use" \
		"$(printf '%s\n' "$out" | grep -v ': listening on ')"
	out=$(timeout 30 "$JM4LWD" -l "127.0.0.1:$busy" -W '' 2>&1)
	assert_eq "words port in use: the line names listen" \
		"jm4lwd: cannot listen on 127.0.0.1:$busy (listen): Address already in use" "$out"
	alive "port in use: the first daemon still answers" "$busy"
	stop_daemon
}

# Every program answers --help (its usage, on stdout, exit 0) and
# --version ("PROGRAM VERSION", the project's version from CMake).
case_help_version() {
	local prog name out rc
	for prog in "$JM4LWD" "$JM4LW_CLIENT" "$JM4LW_PROF" "$JM4LW_RUN"; do
		name=$(basename "$prog")
		out=$("$prog" --help 2>"$T/help.err")
		rc=$?
		if [ $rc = 0 ] && [ ! -s "$T/help.err" ] &&
			printf '%s\n' "$out" | head -1 | grep -q "^usage: $name " &&
			[ "$(printf '%s\n' "$out" | grep -c '^ *-')" -ge 3 ]; then
			pass "$name --help: usage with its options on stdout, exit 0"
		else
			fail "$name --help: usage with its options on stdout, exit 0" \
				"exit $rc" "$out" "$(cat "$T/help.err")"
		fi
		out=$("$prog" --version 2>&1)
		rc=$?
		assert_eq "$name --version: \"$name $JM4LW_PROJECT_VERSION\", exit 0" \
			"$name $JM4LW_PROJECT_VERSION/0" "$out/$rc"
	done
}

# scripts/run.sh with its ports moved by -l and -W says the addresses
# jm4lwd bound, read from its log lines, not the default 9181.
case_run_sh() {
	local d pid hint i
	d=$(scratch runsh)
	(cd "$d" && exec env JM4LW_BUILD="$(dirname "$JM4LWD")" \
		bash "$ROOT/scripts/run.sh" -l 127.0.0.1:0 -W 127.0.0.1:0 -D "$d") \
		</dev/null >"$d/out" 2>"$d/err" &
	pid=$!
	track "$pid"
	for i in $(seq $((100 * SLOW))); do
		grep -q '^run.sh: the page: ' "$d/err" && break
		_alive "$pid" || break
		sleep 0.1
	done
	hint=$(sed -n 's/^run.sh: try: //p' "$d/err")
	assert_eq "run.sh -l: the command it prints has the port jm4lwd bound" \
		"echo ruok | nc 127.0.0.1 $(sed -n 's/^jm4lwd: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$d/err")" \
		"$hint"
	assert_eq "run.sh -l: that command answers" imok "$(timeout 10 bash -c "$hint -q 1" 2>/dev/null)"
	assert_eq "run.sh -W: the page's address is the HTTP port jm4lwd bound" \
		"http://$(sed -n 's/^jm4lwd: HTTP listening on //p' "$d/err")/jemalloc" \
		"$(sed -n 's/^run.sh: the page: //p' "$d/err")"
	kill -TERM "$pid"
	wait_exit "$pid" $((10 * SLOW))
	assert_eq "run.sh: jm4lwd is the process, and SIGTERM ends it with 0" 0 "$EXIT_STATUS"
}

# Profile words back to back within dump_min_interval: the views are
# drawn from the newest dump and say how old it is; only a new kept dump
# (jmfp) is refused.
case_words_back_to_back() {
	local d
	d=$(scratch b2b)
	printf 'dump_min_interval = 30\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e MALLOC_CONF=prof:true,prof_active:true -- \
		-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	ask jmtp >"$d/tp1"
	ask jmfg >"$d/fg"
	ask jmtp >"$d/tp2"
	ask jmfp >"$d/fp"
	assert_grep "words back to back: jmtp answers" '^Total: ' "$d/tp1"
	assert_grep "... then jmfg, from jmtp's dump: a flame graph" '^<svg ' "$d/fg"
	assert_eq "... then jmtp again, its first line saying whose dump" \
		"# from a dump taken N s ago (dump_min_interval)" \
		"$(head -1 "$d/tp2" | sed 's/ [0-9][0-9]* s ago/ N s ago/')"
	assert_grep "... with the table" '^Total: ' "$d/tp2"
	assert_grep "... while a new kept dump (jmfp) is refused" \
		'^error: jmfp refused: the last dump was .* dump_min_interval is 30 s' "$d/fp"
	stop_daemon
}

# Staging directories left in dump_dir by processes killed before they
# removed theirs are swept when a daemon starts, not at its first dump;
# only those of a pid that is gone, untouched for minutes (the rest of
# the rules, dumps_sweep_stages', are the unit tests').
case_stale_stages() {
	local d dead old
	d=$(scratch stages)
	true &
	dead=$!
	wait "$dead"
	old=$(($(date +%s) - 1200))
	mkdir -m 700 "$d/.jm4lw.$dead.AbCdEf" "$d/.jm4lw.$dead.fResh1"
	touch -d "@$old" "$d/.jm4lw.$dead.AbCdEf"
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
	assert_cmd "start: a stale staging directory of a process gone is removed" \
		test ! -e "$d/.jm4lw.$dead.AbCdEf"
	assert_grep "... and the log says so" "removed $d/\.jm4lw\.$dead\.AbCdEf, left by process $dead" "$DLOG"
	assert_cmd "... one touched lately is kept" test -d "$d/.jm4lw.$dead.fResh1"
	stop_daemon
}

# (Not under valgrind's run of this script: it adds nothing to the options.)
if [ -z "${JM4LWD_WRAP:-}" ]; then
	case_help_version
	case_run_sh
	case_words_back_to_back
	case_stale_stages
fi
case_prof_off
case_main
case_read_timeout
case_trickle
case_max_connections
case_ipv6
case_two_listeners
case_dump_dir_missing
case_dump_name_taken
case_dump_tmp_symlink
case_readonly
case_check_config
case_allow_reload
case_sigint
case_port_busy
finish

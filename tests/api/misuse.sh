#!/bin/bash
# misuse.sh [CASE...]: the misuse suite. misuse_host.c
# gets the lifecycle wrong one way per run; each must end in a clear
# error or the behaviour jm4lw.h documents, never a crash and never a
# file left in the dump directory. With no CASE, every case.
#	MISUSE_HOST    the host (ctest sets it)
#	MISUSE_WRAP    a command prefix for the host, e.g. valgrind (split on
#	               white space; it must pass the host's exit status on)
#	MISUSE_REPEAT  runs of each mid-dump case (default 8: the issue saw
#	               a staging directory left in 7 of 8)
# A sanitizer reports through the host's exit status (non-zero) and
# stderr, which every case checks.
# shellcheck disable=SC2317 # the case_* functions are called by name
. "$(dirname "$0")/../lib.sh"

[ -n "${MISUSE_HOST:-}" ] || die "MISUSE_HOST not set"
need nc.openbsd curl
read -ra wrap <<<"${MISUSE_WRAP:-}"
[ ${#wrap[@]} -gt 0 ] && SLOW=5
REPEAT=${MISUSE_REPEAT:-8}
# Sampling every allocation: the host's 1024 stacks are in every dump.
export MALLOC_CONF=prof:true,lg_prof_sample:0

# No debuginfod for the host: valgrind 3.19 asks DEBUGINFOD_URLS's
# servers (debuginfod-find, 90 s timeout each) for every object it loads
# without debug info, before the host's main(); a slow or unreachable
# server then holds a start for minutes. Nothing here needs it.
unset DEBUGINFOD_URLS

# host CASE: start the host on a fresh dump directory $D, serving until
# fd 4 closes; sets HPID, WPORT and HPORT. 1 if it never got ready. Its
# start is waited for by the clock, not by a count of sleeps (each turn
# of which a loaded machine stretches): up to 20 s, times SLOW under a
# wrapper (valgrind starting a host took 8 s at load 13, 24 s with an
# unreachable debuginfod), and not a moment after the host printed ready
# or ended.
host() {
	local end=$((SECONDS + 20 * SLOW))
	D=$(scratch "$1")
	# The last host's out and err go first, and the new ones are made
	# before the FIFO's open blocks: once exec 4> returns, out is this
	# host's. (Opened after the FIFO, out still held the last host's
	# ready when exec 4> returned: the wait saw it, the host then
	# emptied out, and the start was called failed with nothing in out.)
	rm -f "$T/in" "$T/out" "$T/err" && mkfifo "$T/in"
	"${wrap[@]}" "$MISUSE_HOST" "$1" "$D" >"$T/out" 2>"$T/err" <"$T/in" &
	HPID=$!
	track "$HPID"
	exec 4>"$T/in"
	# Ended: kill -0 on our child (reaped by bash as it ends) fails twice
	# 0.2 s apart, and still no ready; a single look was seen to take a
	# host for gone (jobs -rp in a pipeline, and once kill -0) just as
	# it printed ready.
	while ! grep -q '^ready$' "$T/out" && [ "$SECONDS" -lt "$end" ]; do
		if ! kill -0 "$HPID" 2>/dev/null; then
			sleep 0.2
			! kill -0 "$HPID" 2>/dev/null && break
		fi
		sleep 0.1
	done
	WPORT=$(sed -n 's/^words=//p' "$T/out")
	HPORT=$(sed -n 's/^http=//p' "$T/out")
	grep -q '^ready$' "$T/out" && return 0
	fail "$1: the host serves" \
		"not ready after $((SECONDS - end + 20 * SLOW)) s; host $(
			kill -0 "$HPID" 2>/dev/null && echo "running, in $(cat "/proc/$HPID/wchan" 2>/dev/null)" || echo ended)" \
		"$(cat "$T/out" "$T/err" | tail -20)"
	# Gone before the next case: it would write into the next one's out.
	kill -KILL "$HPID" 2>/dev/null
	wait "$HPID" 2>/dev/null
	exec 4>&-
	return 1
}

# reap PID SECONDS: wait for our child PID, at most SECONDS (then kill
# it and return 1); its status in EXIT_STATUS. From bash's job table, not
# lib.sh's /proc look (wait_exit): a multi-threaded process mid-exit, or
# one LeakSanitizer is stopping to scan, can look gone there for a moment
# and be taken for hung right after.
reap() {
	local i
	for i in $(seq $(($2 * 10))); do
		jobs -rp | grep -qx "$1" || break
		sleep 0.1
	done
	if jobs -rp | grep -qx "$1"; then
		kill -KILL "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		EXIT_STATUS=timeout
		return 1
	fi
	wait "$1"
	EXIT_STATUS=$?
}

# ended CASE: the host exited by itself, status 0, "exit" its last line,
# and no sanitizer or valgrind report on stderr.
ended() {
	exec 4>&-
	if ! reap "$HPID" $((60 * SLOW)); then
		fail "$1: the host exits by itself" "$(tail -20 "$T/err")"
		return 1
	fi
	clean "$1" "$EXIT_STATUS"
}

# clean CASE STATUS: exit status 0, "exit" printed, nothing reported.
clean() {
	if [ "$2" = 0 ] && [ "$(tail -n 1 "$T/out")" = exit ] &&
		! grep -Eq 'ERROR: AddressSanitizer|runtime error:|Invalid (read|write)|definitely lost' "$T/err"; then
		pass "$1: no crash, no report, exit 0"
	else
		fail "$1: no crash, no report, exit 0" "exit status $2" \
			"$(tail -3 "$T/out")" "$(grep -E -A12 'ERROR|runtime error|Invalid|lost' "$T/err" | head -40)"
		return 1
	fi
}

# tidy CASE: nothing half-done in $D: no staging directory, no hidden
# file, no empty file, and every dump a whole profile.
tidy() {
	local bad="" f
	bad=$(find "$D" -mindepth 1 \( -name '.*' -o -empty \) -printf '%P ')
	for f in "$D"/*.heap; do
		[ -e "$f" ] || continue
		grep -q '^MAPPED_LIBRARIES:' "$f" || bad="$bad ${f##*/}(cut)"
	done
	assert_eq "$1: nothing left in the dump directory" "" "$bad"
}

# alone CASE: a case without a peer: run the host to its end.
alone() {
	D=$(scratch "$1")
	timeout $((60 * SLOW)) "${wrap[@]}" "$MISUSE_HOST" "$1" "$D" \
		</dev/null >"$T/out" 2>"$T/err"
	clean "$1" $?
	tidy "$1"
}

# Case quit: jm4lw_free() in a word's handler (a use-after-free
# in conn_log after conn_dispatch). The reply the handler wrote still
# goes out whole, and the connection ends with a FIN.
case_quit() {
	host quit || return
	closed_after "$WPORT" 'quit\n' 20 >"$T/reply"
	assert_grep "quit: the handler's reply, then EOF (not a reset)" \
		"^[0-9.]+ eof 4 bytes: b'bye\\\\n'" "$T/reply"
	ended quit
}

# Case http_quit: the same word through HTTP (/4lw/quit): freed at the
# end of evhttp's request callback; the reply evhttp held goes out first.
case_http_quit() {
	host quit || return
	timeout $((30 * SLOW)) curl -s -o "$T/body" -w '%{http_code}' \
		"http://127.0.0.1:$HPORT/4lw/quit" >"$T/code"
	assert_eq "http_quit: 200 from the handler that freed the module" \
		200 "$(cat "$T/code")"
	assert_bytes "http_quit: its body" "$T/body" 'bye\n'
	ended http_quit
}

# Case logfree: the log callback frees the module on a peer's line.
case_logfree() {
	host logfree || return
	ask ruok "$WPORT" >"$T/reply"
	assert_bytes "logfree: the word that was being logged is answered" \
		"$T/reply" 'imok'
	ended logfree
}

# mid_dump CASE WORD N: WORD starts a dump, the module is freed while it
# runs, the host exits at once: N times, no leftovers, and the peer gets
# one error line saying the dump was cancelled.
mid_dump() {
	local c=$1 word=$2 n=$3 i bad=0 ok=0
	for i in $(seq "$n"); do
		host "$c" || return
		ask "$word" "$WPORT" >"$T/reply" 2>&1
		ended "$c" || bad=$((bad + 1))
		if grep -Eq '^error: .*cancelled' "$T/reply" &&
			[ "$(wc -l <"$T/reply")" = 1 ]; then
			ok=$((ok + 1))
		else
			fail "$c run $i: the peer's reply is one error line" \
				"$(show "$T/reply")"
		fi
		tidy "$c run $i"
	done
	assert_eq "$c: every one of $n peers got the cancel line" "$n" "$ok"
	assert_eq "$c: every one of $n hosts ended clean" 0 "$bad"
}

case_dump_free() { mid_dump dump_free jmfp "$REPEAT"; }
case_dump_free_cb() { mid_dump dump_free_cb jmfp "$REPEAT"; }
case_view_free() { mid_dump view_free jmtp "$REPEAT"; }

# Case dump_wait: jm4lw_free_wait() lets the dump finish: 0, the peer gets
# its path, the dump is whole and the staging directory gone.
case_dump_wait() {
	local p
	host dump_wait || return
	ask jmfp "$WPORT" >"$T/reply" 2>&1
	ended dump_wait
	assert_grep "dump_wait: jm4lw_free_wait returned 0" '^free_wait=0$' "$T/out"
	p=$(cat "$T/reply")
	assert_cmd "dump_wait: the peer got the dump's path ($p)" \
		test -s "$p" -a "${p%/*}" = "$D"
	tidy dump_wait
}

# taken N: within 30 s (times SLOW) the module has taken N HTTP requests
# (mntr's jm4lw_http_requests): a request handed to the module before a
# word frees it, not one still in flight that the free could outrun.
taken() {
	local i n
	for i in $(seq $((300 * SLOW))); do
		n=$(ask mntr "$WPORT" | awk -F '\t' '$1 == "jm4lw_http_requests" { print $2 }')
		[ "${n:-0}" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# Case http_dump_quit: a `quit` word frees the module while an HTTP
# request's dump (/debug/pprof/heap) runs: the request is answered (the
# cancel as a 5xx with the line, or the profile if the dump won the race),
# and nothing is left behind. The quit goes once the module has taken the
# request: sent after a fixed pause, it could outrun curl on a loaded
# machine, and a request not yet sent when the module goes cannot be
# answered (curl: "Couldn't connect", or "Empty reply" for a connection
# accepted with no request on it yet). Each run's files are fresh: curl
# writes no body file for a reply it did not get.
case_http_dump_quit() {
	local i code cancelled=0 cpid
	for i in $(seq "$REPEAT"); do
		host quit || return
		rm -f "$T/body" "$T/code" "$T/curl"
		timeout $((30 * SLOW)) curl -sS -o "$T/body" -w '%{http_code}' \
			"http://127.0.0.1:$HPORT/debug/pprof/heap" >"$T/code" 2>"$T/curl" &
		cpid=$!
		taken 1 || fail "http_dump_quit run $i: the module takes the request" \
			"$(cat "$T/curl")"
		ask quit "$WPORT" >/dev/null
		wait "$cpid"
		code=$(cat "$T/code")
		if [ "$code" = 200 ] && [ -s "$T/body" ]; then
			:
		elif [[ $code = 5* ]] && grep -q 'cancelled' "$T/body"; then
			cancelled=$((cancelled + 1))
		else
			fail "http_dump_quit run $i: the request is answered" \
				"status $code" "$(cat "$T/curl")" \
				"$(head -c 300 "$T/body" 2>&1)"
		fi
		ended "http_dump_quit run $i"
		tidy "http_dump_quit run $i"
	done
	pass "http_dump_quit: $cancelled of $REPEAT requests cancelled, the rest served"
}

# http_read FD: one HTTP reply from FD (its head, then Content-Length
# bytes of body) printed; 1 if none came within 10 s (times SLOW).
http_read() {
	local line len=0 body
	while IFS= read -r -t $((10 * SLOW)) line <&"$1"; do
		printf '%s\n' "$line"
		line=${line%$'\r'}
		[ -z "$line" ] && break
		[[ ${line,,} = content-length:* ]] && len=${line#*: }
	done
	[ "$len" -gt 0 ] || return 1
	IFS= read -r -N "$len" -t $((10 * SLOW)) body <&"$1" || return 1
	printf '%s' "$body"
}

# Case http_unread: a keep-alive HTTP peer sends its next request while
# the loop is held by the word that then frees the module: the request
# is never read, and still gets a whole reply, a 503 with the line (not
# an empty close: curl's "Empty reply from server", status 000), then a
# FIN.
case_http_unread() {
	local req rc len body
	req=$'GET /4lw/ruok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
	host serve || return
	exec 5<>"/dev/tcp/127.0.0.1/$HPORT"
	printf '%s' "$req" >&5
	http_read 5 >"$T/first"
	assert_grep "http_unread: the first request is served" '^imok$' "$T/first"
	ask hold "$WPORT" >"$T/reply" &
	for _ in $(seq $((300 * SLOW))); do
		grep -q '^holding$' "$T/out" && break
		sleep 0.1
	done
	printf '%s' "$req" >&5 # unread: the loop is held
	echo go >&4
	wait $!
	timeout $((10 * SLOW)) cat <&5 >"$T/stream"
	rc=$?
	exec 5<&-
	assert_bytes "http_unread: the word that froze the loop is answered" \
		"$T/reply" 'bye\n'
	assert_eq "http_unread: the stream ends in a FIN, not a reset" 0 "$rc"
	assert_grep "http_unread: the unread request gets a 503" \
		$'^HTTP/1.1 503 Service Unavailable\r$' "$T/stream"
	len=$(sed -n 's/^Content-Length: \([0-9]*\)\r$/\1/p' "$T/stream")
	body=$(sed -n '/^\r$/,$p' "$T/stream" | tail -n +2)
	assert_eq "http_unread: ... whose body is the one line" \
		"error: the module is being freed (jm4lw_free); retry when the service is back" "$body"
	assert_eq "http_unread: ... all of it (Content-Length)" "$len" $((${#body} + 1))
	ended http_unread
}

# Case double_free: the second jm4lw_free() says so and does nothing.
case_double_free() {
	alone double_free
	assert_grep "double_free: one line names the mistake" \
		'^jm4lw: jm4lw_free\(0x[0-9a-f]+\): not a live module' "$T/err"
}

# Case add_after: jm4lw_add_word() on a freed module: -1 and a line.
case_add_after() {
	alone add_after
	assert_grep "add_after: -1" '^add_word after free: -1$' "$T/out"
	assert_grep "add_after: one line names the mistake" \
		'^jm4lw: jm4lw_add_word\(0x[0-9a-f]+\): not a live module' "$T/err"
}

# Case base_first: event_base_free() first is caught (the module's events
# are left, not freed through the freed base). Its leaks are the
# documented price: leak checking is off for this case.
case_base_first() {
	local saved=("${wrap[@]}")
	[ ${#wrap[@]} -gt 0 ] && wrap=("${wrap[@]/--leak-check=full/--leak-check=no}")
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 alone base_first
	wrap=("${saved[@]}")
	assert_grep "base_first: the log names the order rule" \
		'jm4lw_free: the event_base was freed before the module' "$T/err"
}

# Case listen_null: jm4lw_listen(NULL, ...) is -1, not a SIGSEGV.
case_listen_null() {
	alone listen_null
	assert_grep "listen_null: -1" '^listen\(NULL\): -1$' "$T/out"
}

# Case listen_logfree: the log callback frees the module inside
# jm4lw_listen(): deferred to the call's end, then done.
case_listen_logfree() {
	alone listen_logfree
	assert_grep "listen_logfree: listen returned, the module freed after" \
		'^listen: 0, module freed by the log$' "$T/out"
}

# Case block: a handler that sleeps 2 s blocks the host's loop: a ruok
# sent meanwhile is answered only after it, and then all is served.
case_block() {
	local t0 t1
	host serve || return
	ask slow "$WPORT" >"$T/slow" &
	sleep 0.5
	t0=$(date +%s%N)
	ask ruok "$WPORT" >"$T/reply"
	t1=$(date +%s%N)
	wait $!
	assert_bytes "block: the blocking word's reply" "$T/slow" 'slept\n'
	assert_bytes "block: a ruok sent meanwhile is answered" "$T/reply" 'imok'
	assert_cmd "block: ... after the handler returned ($(((t1 - t0) / 1000000)) ms)" \
		test $(((t1 - t0) / 1000000)) -ge 1000
	ask ruok "$WPORT" >"$T/reply"
	assert_bytes "block: served as usual after" "$T/reply" 'imok'
	ended block
}

# Case block_timeout: with read_timeout = 1 s, a peer connected before
# the 2 s block sends its word in time, during it; the loop sees its
# deadline pass and its word together when the handler returns, and the
# timeout wins: closed unanswered, its word unread, so with a reset
# (jm4lw_word_fn's doc says so).
case_block_timeout() {
	MISUSE_READ_TIMEOUT=1 host serve || return
	exec 5<>"/dev/tcp/127.0.0.1/$WPORT"
	ask slow "$WPORT" >"$T/slow" &
	sleep 0.4
	printf 'ruok\n' >&5
	wait $!
	timeout $((10 * SLOW)) cat <&5 >"$T/reply" 2>/dev/null # a reset
	exec 5<&-
	assert_bytes "block_timeout: the blocking word's reply" "$T/slow" 'slept\n'
	assert_bytes "block_timeout: the peer whose deadline passed meanwhile is closed unanswered" \
		"$T/reply" ''
	ask ruok "$WPORT" >"$T/reply"
	assert_bytes "block_timeout: served as usual after" "$T/reply" 'imok'
	ended block_timeout
}

# Case big: a handler that writes 100 MB gets one error line naming
# JM4LW_REPLY_MAX; the memory is freed and the module serves on.
case_big() {
	local before after
	host serve || return
	before=$(ask mntr "$WPORT" | awk -F '\t' '$1 == "jemalloc_allocated" { print $2 }')
	ask big_ "$WPORT" >"$T/reply"
	assert_grep "big: one error line naming the limit" \
		'^error: the reply of big_ was over 16777216 bytes \(JM4LW_REPLY_MAX\)' "$T/reply"
	assert_eq "big: ... and nothing else" 1 "$(wc -l <"$T/reply")"
	after=$(ask mntr "$WPORT" | awk -F '\t' '$1 == "jemalloc_allocated" { print $2 }')
	assert_cmd "big: allocated back within 4 MB ($before -> $after bytes)" \
		test "${after:-0}" -lt $((${before:-0} + 4194304))
	ask ruok "$WPORT" >"$T/reply"
	assert_bytes "big: served as usual after" "$T/reply" 'imok'
	ended big
}

all=(quit http_quit logfree dump_free dump_free_cb view_free dump_wait
	http_dump_quit http_unread
	double_free add_after base_first listen_null listen_logfree block
	block_timeout big)
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("${all[@]}")
for c in "${cases[@]}"; do
	declare -F "case_$c" >/dev/null || die "no case $c (cases: ${all[*]})"
	"case_$c"
done
finish

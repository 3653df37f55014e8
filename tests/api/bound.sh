#!/bin/bash
# bound.sh CASE: what the module reports is what it does.
# An embedding host (bound_host.c) keeps the default http_listen
# (127.0.0.1:9182) and binds the words on 127.0.0.1:0; conf, asked on the
# words' port, and jm4lw_http_bound_addr() must show only what is bound.
#	words  the host never calls jm4lw_http_listen(): conf has an empty
#	       http_listen= and listen= the words' real port
#	http   jm4lw_http_listen(m, "127.0.0.1:0"): the real port comes from
#	       jm4lw_http_bound_addr(), conf shows it, GET /metrics answers
. "$(dirname "$0")/../lib.sh"

[ -n "${BOUND_HOST:-}" ] || die "BOUND_HOST not set"

# start MODE [ign]: run the host (with SIGPIPE ignored: ign), serving
# until fd 4 closes; its "words=" and "http=" lines are left in $T/out.
start() {
	local pid
	rm -f "$T/in" && mkfifo "$T/in"
	if [ "${2:-}" = ign ]; then
		(trap '' PIPE && exec "$BOUND_HOST" "$1") <"$T/in" >"$T/out" 2>"$T/err" &
	else
		"$BOUND_HOST" "$1" <"$T/in" >"$T/out" 2>"$T/err" &
	fi
	pid=$!
	track $pid
	exec 4>"$T/in"
	for _ in $(seq 1 200); do
		grep -q '^ready$' "$T/out" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	die "bound_host $1 reports its listeners: $(cat "$T/out" "$T/err")"
}

case "${1:-}" in
words)
	start words
	words=$(sed -n 's/^words=//p' "$T/out")
	PORT=${words##*:}
	assert_eq "one words listener, on loopback" "127.0.0.1:$PORT" "$words"
	assert_eq "jm4lw_http_bound_addr: no HTTP listener" "" \
		"$(sed -n 's/^http=//p' "$T/out")"
	ask conf >"$T/conf"
	assert_grep "conf answers" '^allow=' "$T/conf"
	assert_cmd "conf: listen= is the words' bound address" \
		grep -qx "listen=127.0.0.1:$PORT" "$T/conf"
	assert_cmd "conf: http_listen= is empty: nothing serves HTTP ($(grep '^http_listen=' "$T/conf"))" \
		grep -qx 'http_listen=' "$T/conf"
	;;
http)
	start http
	words=$(sed -n 's/^words=//p' "$T/out")
	PORT=${words##*:}
	http=$(sed -n 's/^http=//p' "$T/out")
	HPORT=${http##*:}
	assert_cmd "jm4lw_http_bound_addr: one listener with a real port ($http)" \
		grep -Eqx '127\.0\.0\.1:[1-9][0-9]*' <<<"$http"
	ask conf >"$T/conf"
	assert_cmd "conf: http_listen= is that address ($(grep '^http_listen=' "$T/conf"))" \
		grep -qx "http_listen=$http" "$T/conf"
	assert_cmd "conf: listen= is the words' bound address" \
		grep -qx "listen=127.0.0.1:$PORT" "$T/conf"
	curl -s -o "$T/metrics" -w '%{http_code}' --max-time 30 \
		"http://127.0.0.1:$HPORT/metrics" >"$T/code"
	assert_eq "GET /metrics on the reported port: 200" 200 "$(cat "$T/code")"
	assert_grep "/metrics: Prometheus text" '^jemalloc_allocated_bytes [0-9]+' "$T/metrics"
	# evhttp writes without MSG_NOSIGNAL: a host on its own loop that
	# does not ignore SIGPIPE is told so, once; one that does is not.
	assert_eq "SIGPIPE not ignored: one warning line" 1 \
		"$(grep -c '^jm4lw: SIGPIPE is not ignored: a peer that resets an HTTP reply would end the process .*signal(SIGPIPE, SIG_IGN)' "$T/err")"
	exec 4>&-
	wait
	start http ign
	assert_no_grep "SIGPIPE ignored: no warning" 'SIGPIPE' "$T/err"
	;;
*)
	die "usage: bound.sh words|http"
	;;
esac
exec 4>&-
finish

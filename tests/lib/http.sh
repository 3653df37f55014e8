# shellcheck shell=bash
# tests/lib/http.sh — the HTTP face: requests with curl and their checks,
# raw connections for what curl never sends, and the /jemalloc page driven
# in a browser (run_page). Definitions only; sourced by tests/lib.sh over
# core.sh.

# hreq NAME PATH [CURL ARGS...]: one request to the daemon's HTTP face
# ($HTTP_PORT) with curl; the body in $T/NAME.body, the headers in
# $T/NAME.head, and the status printed ("000": no answer).
hreq() {
	local name=$1 path=$2
	shift 2
	timeout $((30 * SLOW)) curl -s -o "$T/$name.body" -D "$T/$name.head" \
		-w '%{http_code}' "$@" "http://127.0.0.1:$HTTP_PORT$path"
}

# hheader NAME HEADER: the value of HEADER in $T/NAME.head (CR cut off).
hheader() {
	awk -v h="$2" '
		index(tolower($0), tolower(h) ":") == 1 {
			sub(/^[^:]*:[ \t]*/, ""); sub(/\r$/, ""); print; exit }' "$T/$1.head"
}

# assert_http DESC WANT NAME PATH [CURL ARGS...]: hreq answers WANT.
assert_http() {
	local desc=$1 want=$2 name=$3 got
	shift 3
	got=$(hreq "$name" "$@")
	if [ "$got" = "$want" ]; then
		pass "$desc ($want)"
	else
		fail "$desc" "expected status $want, got $got" \
			"$(head -c 300 "$T/$name.body" 2>/dev/null)"
		return 1
	fi
}

# http_get URL OUT: GET URL into OUT with curl (bounded); status 0 when
# the reply is 200.
http_get() {
	local code
	code=$(timeout $((60 * SLOW)) curl -sS -o "$2" -w '%{http_code}' "$1" 2>"$2.err")
	[ "$code" = 200 ]
}

# closed_after PORT BYTES [BOUND]: connect to 127.0.0.1:PORT, send BYTES
# (a printf format) and nothing more; print the seconds until the server
# closed and what it sent ("eof"/"reset"), or "timeout" past BOUND (30) s.
closed_after() {
	python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.argv[2][:-1].encode("latin-1"))
t0 = time.monotonic(); got = b""; s.settimeout(float(sys.argv[3]))
try:
    while True:
        b = s.recv(65536)
        if not b:
            end = "eof"; break
        got += b
except socket.timeout:
    end = "timeout"
except OSError:
    end = "reset"
print("%.2f %s %d bytes: %r" % (time.monotonic() - t0, end, len(got), got[:40]))' \
		"$1" "$(printf -- "$2" && echo .)" "${3:-30}"
}

# run_page SCRIPT MIN SECS ARGS...: tests/integration/SCRIPT (a browser
# driver printing "ok|FAIL<TAB>what<TAB>detail" lines), given SECS, its
# lines as this harness's passes and failures; fewer than MIN lines is a
# failure of its own.
run_page() {
	local script=$1 min=$2 secs=$3 res line what detail n=0
	shift 3
	res=$T/$script.results
	timeout "$secs" python3 "$TESTS_DIR/integration/$script" "$@" \
		>"$res" 2>"$T/$script.log"
	while IFS=$'\t' read -r line what detail; do
		n=$((n + 1))
		case $line in
		ok) pass "page: $what" ;;
		FAIL) fail "page: $what" "${detail:-}" ;;
		*) fail "$script printed a line it should not have" "$line $what" ;;
		esac
	done <"$res"
	[ "$n" -ge "$min" ] || fail "$script ran its checks (it printed $n)" \
		"$(tail -20 "$T/$script.log")"
}

#!/bin/bash
# Hostile HTTP: a shutdown while an HTTP job
# runs, a 409 during one, a flood of idle HTTP connections under a low
# descriptor limit, HEAD, and requests two readers could take differently
# (two Hosts, "Host :", absolute-form, two lengths).
# The metrics allow rule (metrics_allow: the doctor's families on /metrics only when
# jmdr is allowed, promtool-valid either way, through a reload) and the query checks
# (two_origins, x_jm4lw_value, query_tokens, path_as_sent).
# Raw requests go out from one python3 process per case (rawhttp below),
# never a process per request.
#
#	bash hostile_http.sh    (JM4LWD=...)
. "$(dirname "$0")/common.sh"

need curl

# The raw client: argv is PORT then requests (Python escapes: \r\n...).
# Each request goes on a connection of its own; per request one line:
# the status line, then the body's first line, "|"-separated, then
# "closed" if the server ended the connection after its reply.
cat >"$T/rawhttp.py" <<'EOF'
import socket, sys
port = int(sys.argv[1])
for raw in sys.argv[2:]:
    req = raw.encode("latin-1").decode("unicode_escape").encode("latin-1")
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(req)
    got = b""
    ended = ""
    try:
        s.settimeout(3)
        while True:
            b = s.recv(65536)
            if not b:
                ended = " closed"
                break
            got += b
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    head, _, body = got.partition(b"\r\n\r\n")
    status = head.split(b"\r\n")[0].decode("latin-1")
    first = body.split(b"\n")[0].decode("latin-1")
    print("%s|%s|%d body lines%s" % (status, first,
          len(body.rstrip(b"\n").split(b"\n")) if body else 0, ended))
EOF

# rawhttp REQUEST...: one line per request (see above), into stdout.
rawhttp() {
	timeout $((60 * SLOW)) python3 "$T/rawhttp.py" "$HTTP_PORT" "$@"
}

# assert_raw DESC WANT_GLOB REQUEST: the one line of REQUEST matches.
assert_raw() {
	local desc=$1 want=$2 got
	got=$(rawhttp "$3")
	# shellcheck disable=SC2053 # a glob on purpose
	if [[ $got == $want ]]; then
		pass "$desc ($got)"
	else
		fail "$desc" "expected $want" "got: $got"
	fi
}

# The figures a dump or a render moves, from mntr, on one line.
dump_figures() {
	local k
	for k in jm4lw_dumps_written jm4lw_dumps_failed jm4lw_dumps_refused jm4lw_profiles_served; do
		printf '%s=%s ' "$k" "$(probe_mntr "$k")"
	done
}

# big_dump DIR [STACKS]: a big made-up heap profile in DIR under a name
# of ours, its name in BIG: STACKS (40,000) stacks of 32 frames in jm4lwd's own code, so a render of
# it (parse, symbolize, format) takes a while in any build. (bench_dump's
# real one is tiny under ASan, whose malloc jemalloc never sees.) The
# frames lie in the executable segment only: an address in .rodata or
# the headers is named object+0xADDR, one name of its own each (issue
# 21), and half a million such names made the render several times
# slower, past the cases' bounds on a loaded machine.
big_dump() {
	BIG=jm4lw.4242.0.heap
	python3 -c '
import random, struct, sys
random.seed(1)
elf = open(sys.argv[2], "rb").read()
phoff, = struct.unpack_from("<Q", elf, 0x20)
phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
for k in range(phnum):
    ptype, flags, off, vaddr, paddr, filesz = struct.unpack_from(
        "<IIQQQQ", elf, phoff + k * phentsize)
    if ptype == 1 and flags & 1:  # PT_LOAD, PF_X: the code
        break
n = int(sys.argv[3])
out = open(sys.argv[1], "w")
out.write("heap_v2/524288\n  t*: %d: %d [0: 0]\n" % (n, n * 1024))
for i in range(n):
    out.write("@ " + " ".join("0x%x" % (0x400000 + off + random.randrange(filesz))
                              for _ in range(32)) + "\n")
    out.write("  t*: 1: 1024 [0: 0]\n")
out.write("\nMAPPED_LIBRARIES:\n00400000-%08x r-xp 00000000 00:00 0 %s\n"
          % (0x400000 + off + filesz + 0xfff & ~0xfff, sys.argv[2]))
' "$1/$BIG" "$JM4LWD" "${2:-40000}"
}

# 1. SIGTERM while a /jemalloc/dump render runs: no use after free (ASan),
# exit 0. A render of the big dump takes about a second: one python3 sends
# the request and, 50 ms later, the signal. Five rounds.
case_shutdown_with_http_job() {
	local d i ok=0 r
	for i in 1 2 3 4 5; do
		d=$(scratch "shutjob$i")
		big_dump "$d" || return
		start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
		r=$(timeout $((30 * SLOW)) python3 -c '
import os, signal, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(("GET /jemalloc/dump?name=%s&format=text HTTP/1.1\r\n"
           "Host: 127.0.0.1\r\n\r\n" % sys.argv[3]).encode())
time.sleep(0.05)
os.kill(int(sys.argv[2]), signal.SIGTERM)
got = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
except OSError:
    pass
print("reply: %r" % got[:12])
' "$HTTP_PORT" "$PID" "$BIG" 2>&1)
		# Still there after 20 s: its threads' stacks say where.
		for _ in $(seq $((200 * SLOW))); do
			_alive "$PID" || break
			sleep 0.1
		done
		_alive "$PID" && command -v eu-stack >/dev/null &&
			eu-stack -p "$PID" 2>&1 | head -80 | sed 's/^/# /'
		if wait_exit "$PID" 1 && [ "$EXIT_STATUS" = 0 ] &&
			! grep -q "Sanitizer\|runtime error" "$DLOG"; then
			ok=$((ok + 1))
		else
			echo "# round $i: exit ${EXIT_STATUS:-none}; $r"
			show_tail "$DLOG" 40
		fi
	done
	assert_eq "shutdown_with_http_job: SIGTERM 50 ms into a render, 5 rounds, each exit 0 and no sanitizer report" 5 "$ok"
}

# 1. A 409 while a job runs: the running job's waiter is kept (answered,
# and not leaked: LSan checks at exit in the ASan build). One python3
# sends the render and, once the daemon has taken it (its HTTP request
# count, from mntr, has moved: the job is admitted in that very
# callback), the second, and reads both; then again with SIGTERM right
# after the 409, the first render still running. The render runs on the
# worker, niced, which a loaded machine slows down: the first reply
# is waited for without a clock of its own (the case's outer bound is
# the limit), so a slow render is late, not a failure.
case_conflict_during_http_job() {
	local d r sig
	d=$(scratch conflict)
	# A fifth of the big one: the first render is waited for, and on
	# a starved worker even this one runs long past the second's 409.
	big_dump "$d" 8000 || return
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
	for sig in "" TERM; do
		r=$(timeout $((90 * SLOW)) python3 -c '
import os, signal, socket, sys, time
port, pid, name, sig, wport = (int(sys.argv[1]), int(sys.argv[2]),
                               sys.argv[3], sys.argv[4], int(sys.argv[5]))
req = ("GET /jemalloc/dump?name=%s&format=text HTTP/1.1\r\n"
       "Host: 127.0.0.1\r\nConnection: close\r\n\r\n" % name).encode()
def reply(s):
    got = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except OSError:
        pass
    return got.split(b"\r\n")[0].decode("latin-1")
def requests():
    w = socket.create_connection(("127.0.0.1", wport), timeout=20)
    w.sendall(b"mntr\n")
    got = b""
    while True:
        b = w.recv(65536)
        if not b:
            break
        got += b
    for line in got.decode().splitlines():
        k, _, v = line.partition("\t")
        if k == "jm4lw_http_requests":
            return int(v)
    raise SystemExit("no jm4lw_http_requests in mntr")
before = requests()
a = socket.create_connection(("127.0.0.1", port), timeout=20)
a.sendall(req)
while requests() == before:
    time.sleep(0.01)
a.settimeout(None)  # the render: as long as the outer bound allows
b = socket.create_connection(("127.0.0.1", port), timeout=20)
b.sendall(req)
second = reply(b)
if sig:
    os.kill(pid, signal.SIGTERM)
print("second: %s; first: %s" % (second, reply(a)))
' "$HTTP_PORT" "$PID" "$BIG" "$sig" "$PORT" 2>&1)
		if [ -z "$sig" ]; then
			assert_eq "conflict_during_http_job: a render while one runs is 409, the first still answered" \
				"second: HTTP/1.1 409 Conflict; first: HTTP/1.1 200 OK" "$r"
		else
			echo "# with SIGTERM: $r"
		fi
	done
	if wait_exit "$PID" $((20 * SLOW)) && [ "$EXIT_STATUS" = 0 ]; then
		pass "conflict_during_http_job: SIGTERM with the first render running: exit 0"
	else
		fail "conflict_during_http_job: SIGTERM with the first render running: exit 0" \
			"exit $EXIT_STATUS" "$(show_tail "$DLOG" 40)"
	fi
	assert_no_grep "conflict_during_http_job: no sanitizer or leak report" "Sanitizer|runtime error" "$DLOG"
}

# 9. HEAD: headers alone, then the keep-alive connection's GET intact; a
# HEAD on a job's route runs no job.
case_head_no_body() {
	local d out before after files
	d=$(scratch head)
	start_daemon -C "$d" -e "$PROF_ON" -- -l 127.0.0.1:0 -D "$d" || return
	out=$(timeout $((30 * SLOW)) python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
time.sleep(0.5)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
got = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    got += b
head, _, rest = got.partition(b"\r\n\r\n")
cl = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
print("head=%s length=%s next=%r" % (head.split(b"\r\n")[0].decode(),
      cl[0].split(b":")[1].strip().decode() if cl else "none", rest[:15]))
' "$HTTP_PORT" 2>&1)
	if [[ $out == "head=HTTP/1.1 200 OK length="[0-9]*" next=b'HTTP/1.1 200 OK'" ]]; then
		pass "head_no_body: HEAD /metrics, headers and Content-Length alone; the next GET's reply intact ($out)"
	else
		fail "head_no_body: HEAD /metrics then GET on one connection" "$out"
	fi
	before=$(dump_figures)
	files=$(ls -A "$d" | grep -c '\.heap$')
	assert_raw "head_no_body: HEAD /debug/pprof/heap runs no job (405, no body)" \
		"HTTP/1.1 405 *||0 body lines*" \
		'HEAD /debug/pprof/heap HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'
	sleep 0.5
	after=$(dump_figures)
	assert_eq "head_no_body: ... mntr's dump and profile figures unchanged" "$before" "$after"
	assert_eq "head_no_body: ... and no dump file in dump_dir" "$files" "$(ls -A "$d" | grep -c '\.heap$')"
	stop_daemon
}

# 12. What two readers could take differently: 400, one line, closed.
case_ambiguous() {
	local d
	d=$(scratch ambiguous)
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
	assert_raw "duplicate_host: two Host headers are refused" \
		"HTTP/1.1 400 *|error: *|1 body lines closed" \
		'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.com\r\n\r\n'
	assert_raw "spaced_host_header: 'Host : evil.com' is refused, not taken as no Host" \
		"HTTP/1.1 400 *|error: *|1 body lines closed" \
		'GET /metrics HTTP/1.1\r\nHost : evil.com\r\n\r\n'
	assert_raw "absolute_form_request: GET http://evil.com/metrics is refused" \
		"HTTP/1.1 400 *|error: *|1 body lines closed" \
		'GET http://evil.com/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
	assert_raw "duplicate_content_length: two Content-Lengths are refused" \
		"HTTP/1.1 400 *|error: *|1 body lines closed" \
		'POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nContent-Length: 9\r\n\r\n0x10'
	# Still served: one Host, and none.
	assert_raw "one Host header: served" "HTTP/1.1 200 *" \
		'GET /jemalloc/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'
	check_clean_http
	stop_daemon
}

# 12. Every error of ours is one "error:" line: the methods evhttp used
# to answer with its HTML 501 page now reach us (405 with Allow). (The
# parser's own errors -- a request it cannot read, a body over the limit
# -- are still evhttp's page: 2.1 has no hook before it answers them.)
case_error_bodies_one_line() {
	local d got bad
	d=$(scratch errbody)
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
	got=$(rawhttp \
		'GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' \
		'PUT /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n' \
		'DELETE /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' \
		'OPTIONS /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' \
		'PATCH /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n' \
		'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n\r\n')
	echo "$got" | sed 's/^/# /'
	bad=$(echo "$got" | grep -vc '^HTTP/1\.[01] [45][0-9][0-9] [^|]*|error: [^|]*|1 body lines')
	assert_eq "error_bodies_one_line: 404, PUT, DELETE, OPTIONS, PATCH, two Hosts: each one 'error:' line" 0 "$bad"
	stop_daemon
}

# The HTTP face still answers, and the words.
check_clean_http() {
	probe_ruok "the words still answer"
	assert_http "GET /metrics still served" 200 metrics /metrics
}

# 7. ~1,100 idle HTTP connections under ulimit -n 1024: the words' ruok
# and GET /metrics are still answered, and the daemon is not out of
# descriptors.
case_idle_http_flood() {
	local d r
	d=$(scratch flood)
	conf_file "$d" "read_timeout = 30"
	# The limit for the daemon alone: prlimit execs it with the limit
	# (start_daemon reads JM4LWD_WRAP per daemon).
	local wrap=${JM4LWD_WRAP:-}
	JM4LWD_WRAP="prlimit --nofile=1024:1024 $wrap"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d"
	r=$?
	JM4LWD_WRAP=$wrap
	[ "$r" = 0 ] || return
	assert_grep "idle_http_flood: the daemon runs under a limit of 1024 descriptors" \
		"Max open files *1024 *1024" "/proc/$PID/limits"
	# One process holds 1,100 idle connections, then asks ruok on the
	# words' port and GET /metrics, then releases them.
	r=$(timeout $((90 * SLOW)) python3 -c '
import socket, sys, time
hp, wp = int(sys.argv[1]), int(sys.argv[2])
socks = []
for _ in range(1100):
    try:
        s = socket.socket(); s.settimeout(2)
        s.connect(("127.0.0.1", hp)); socks.append(s)
    except OSError:
        pass
time.sleep(1)
def ask(port, req, want):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(req); got = b""
        while True:
            b = s.recv(65536)
            if not b: break
            got += b
        return got.startswith(want)
    except OSError:
        return False
ok_w = ask(wp, b"ruok", b"imok")
ok_h = ask(hp, b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", b"HTTP/1.1 200")
print("held %d; ruok %s; GET /metrics %s" % (len(socks), ok_w, ok_h))
for s in socks: s.close()
sys.exit(0 if ok_w and ok_h else 1)
' "$HTTP_PORT" "$PORT" 2>&1)
	if [ $? = 0 ]; then
		pass "idle_http_flood: 1,100 idle HTTP connections under ulimit -n 1024; ruok and GET /metrics answered ($r)"
	else
		fail "idle_http_flood: ruok and GET /metrics answered during 1,100 idle HTTP connections" "$r" "$(show_tail "$DLOG")"
	fi
	probe_ruok "idle_http_flood: ruok after the flood"
	stop_daemon
}

# A change of state with two Origins (a same-origin one first,
# a foreign one after) was taken on the first; "X-Jm4lw: 0" counted as the
# header; format=json%00 was served as json (evhttp decodes %00 to a NUL
# that ends the C string); GET //metrics was the index page (evhttp's URI
# parser reads //metrics as an authority and an empty path).
case_csrf_query_path() {
	local d
	d=$(scratch csrf)
	start_daemon -C "$d" -e "$PROF_ON" -- -l 127.0.0.1:0 -D "$d" || return
	assert_raw "two_origins: a same-origin Origin and then a foreign one: 400" \
		"HTTP/1.1 400 *|error: more than one Origin header|1 body lines closed" \
		"POST /4lw/jmdp HTTP/1.1\\r\\nHost: 127.0.0.1:$HTTP_PORT\\r\\nOrigin: http://127.0.0.1:$HTTP_PORT\\r\\nOrigin: http://evil.example\\r\\nX-Jm4lw: 1\\r\\nContent-Length: 0\\r\\n\\r\\n"
	assert_raw "two_origins: one same-origin Origin: served" \
		"HTTP/1.1 200 *" \
		"POST /4lw/jmdp HTTP/1.1\\r\\nHost: 127.0.0.1:$HTTP_PORT\\r\\nOrigin: http://127.0.0.1:$HTTP_PORT\\r\\nX-Jm4lw: 1\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n"
	assert_raw "two_x_jm4lw: two X-Jm4lw headers: 400" \
		"HTTP/1.1 400 *|error: more than one X-Jm4lw header|*" \
		'POST /4lw/jmdp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Jm4lw: 0\r\nX-Jm4lw: 1\r\nContent-Length: 0\r\n\r\n'
	assert_http "x_jm4lw_value: X-Jm4lw: 0 is refused as a missing header (403)" \
		403 xj0 /4lw/jmdp -X POST -H 'X-Jm4lw: 0'
	assert_grep "x_jm4lw_value: the line says what to send" \
		'^error: this request changes state: send it as POST with the header X-Jm4lw: 1$' "$T/xj0.body"
	assert_http "x_jm4lw_value: X-Jm4lw: yes is refused (403)" \
		403 xjy /4lw/jmdp -X POST -H 'X-Jm4lw: yes'
	assert_http "x_jm4lw_value: X-Jm4lw: 1 is taken" \
		200 xj1 /4lw/jmdp -X POST -H 'X-Jm4lw: 1'
	assert_http "query_tokens: format=json%00 is a 400, not json" \
		400 qnul '/jemalloc/stats?format=json%00'
	assert_grep "query_tokens: the line names the NUL" \
		'^error: a NUL byte \(%00\) in the query string$' "$T/qnul.body"
	assert_http "query_tokens: format=svg%00 is a 400, no job" \
		400 qsvg '/jemalloc/profile?format=svg%00'
	assert_http "query_tokens: a newline in a value is a 400" \
		400 qnl '/jemalloc/stats?format=json%0a'
	assert_http "query_tokens: a quote in a value is a 400" \
		400 qq '/jemalloc/stats?format=%22json'
	assert_http "query_tokens: format twice is a 400" \
		400 q2 '/jemalloc/stats?format=json&format=text'
	assert_http "query_tokens: format=json still served" \
		200 qok '/jemalloc/stats?format=json'
	assert_http "path_as_sent: GET //metrics is a 404, not the index" \
		404 dslash //metrics
	assert_grep "path_as_sent: the 404 names the path" \
		'^error: no such path: //metrics \(see /\)$' "$T/dslash.body"
	assert_http "path_as_sent: GET //jemalloc/doctor is a 404" \
		404 dslash2 //jemalloc/doctor
	assert_http "path_as_sent: GET /metrics%2f is a 404" 404 enc '/metrics%2f'
	assert_http "path_as_sent: GET / is still the index" 200 index /
	assert_http "path_as_sent: GET /metrics?x=1 is still /metrics" 200 mq '/metrics?x=1'
	check_clean_http
	stop_daemon
}

# doctor_families FILE: the samples of the doctor's families in FILE.
doctor_families() {
	grep -Ec '^jemalloc_(resident_part|purge_gain|prof_cost|arena_|size_class_)' "$1"
}

# metrics_valid DESC FILE: promtool check metrics finds no problem.
metrics_valid() {
	local rc
	if ! command -v promtool >/dev/null; then
		skip "$1" "no promtool (Debian's prometheus)"
		return
	fi
	promtool check metrics <"$2" >"$T/promtool.out" 2>&1
	rc=$?
	if [ $rc = 0 ] && [ ! -s "$T/promtool.out" ]; then
		pass "$1 ($(grep -c '^[a-z]' "$2") samples)"
	else
		fail "$1" "exit status $rc" "$(head -20 "$T/promtool.out")"
	fi
}

# With allow = ruok,mntr, jmdr was refused and /jemalloc/doctor
# 403, yet /metrics carried 85 of the doctor's samples (per arena, per size
# class, purge gain, resident parts). What a word reveals is governed by
# that word on every face: the families appear only when jmdr is allowed,
# at the next scrape after a reload.
# reload_allow DIR LIST: jm4lwd's configuration in DIR says allow = LIST;
# SIGHUP, and wait for the reload's log line.
reload_allow() {
	conf_file "$1" "allow = $2"
	: >"$DLOG"
	kill -HUP "$PID"
	wait_log "configuration reloaded" 20 || fail "metrics_allow: reload to $2" "$(show_tail "$DLOG")"
}

case_metrics_allow() {
	local d n
	d=$(scratch metrics_allow)
	conf_file "$d" "allow = ruok,mntr"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	assert_http "metrics_allow: jmdr refused: /jemalloc/doctor is 403" \
		403 doc /jemalloc/doctor
	assert_http "metrics_allow: /metrics is served (mntr)" 200 m1 /metrics
	assert_eq "metrics_allow: no doctor's sample on /metrics without jmdr" \
		0 "$(doctor_families "$T/m1.body")"
	assert_grep "metrics_allow: mntr's figures are there" \
		'^jemalloc_allocated_bytes [0-9]+$' "$T/m1.body"
	metrics_valid "metrics_allow: promtool: /metrics without jmdr is valid" "$T/m1.body"
	reload_allow "$d" ruok,mntr,jmdr
	assert_http "metrics_allow: after a reload with jmdr, /metrics" 200 m2 /metrics
	n=$(doctor_families "$T/m2.body")
	assert_cmd "metrics_allow: the doctor's families appear with jmdr ($n samples)" \
		test "$n" -gt 10
	metrics_valid "metrics_allow: promtool: /metrics with jmdr is valid" "$T/m2.body"
	reload_allow "$d" readonly
	hreq m3 /metrics >/dev/null
	assert_cmd "metrics_allow: allow = readonly serves jmdr: the families stay" \
		test "$(doctor_families "$T/m3.body")" -gt 10
	reload_allow "$d" ruok,mntr
	hreq m4 /metrics >/dev/null
	assert_eq "metrics_allow: reloaded without jmdr, the families go" \
		0 "$(doctor_families "$T/m4.body")"
	metrics_valid "metrics_allow: promtool: and it is valid again" "$T/m4.body"
	reload_allow "$d" ruok,jmdr
	assert_http "metrics_allow: without mntr, /metrics is 403" 403 m5 /metrics
	probe_ruok "metrics_allow: the words still answer"
	stop_daemon
}

case_head_no_body
case_csrf_query_path
case_metrics_allow
case_ambiguous
case_error_bodies_one_line
case_conflict_during_http_job
case_shutdown_with_http_job
case_idle_http_flood
finish

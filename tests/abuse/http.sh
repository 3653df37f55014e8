#!/bin/bash
# Abuse of the HTTP face: oversized headers, slow headers, pipelined
# junk, 1,000 idle half-requests held open, and curl hammering HTTP while
# the words are asked. Each case ends with check_clean: the words port
# still answers ruok and the daemon's descriptors are back at the
# start-up count (the half-requests once read_timeout has closed them).
#
#	bash http.sh    (JM4LWD=...)
. "$(dirname "$0")/common.sh"

need curl

# many_closed DESC N BYTES WANT: N connections at once (abuse.py closed:
# one process) each send BYTES (\r, \n escapes) and nothing more; each
# must end with a FIN and, if WANT is set, a reply starting with WANT.
many_closed() {
	local desc=$1 n=$2 bytes=$3 want=$4
	ab_case "$desc" closed "$HTTP_PORT" "$n" "$bytes" ${want:+--want "$want"}
}

case_headers() {
	local d big
	d=$(scratch headers)
	conf_file "$d" "read_timeout = 2" "http_max_header_bytes = 4096"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	baseline "headers" || return
	# Just over the limit: 431; far over it (and never ending): evhttp
	# stops reading at its backstop and closes.
	big=$(head -c 5000 /dev/zero | tr '\0' a)
	many_closed "headers of 5000 bytes (limit 4096)" 20 \
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: $big\r\n\r\n" "HTTP/1.1 431"
	big=$(head -c 100000 /dev/zero | tr '\0' a)
	many_closed "a header line of 100000 bytes, unended" 20 \
		"GET /metrics HTTP/1.1\r\nX-Big: $big" "HTTP/1.1 400"
	# Slow headers: a line every while, never the blank one.
	many_closed "half headers, then silence (read_timeout=2)" 50 \
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: 1\r\n" ""
	check_clean "headers"
	stop_daemon
}

case_pipelined() {
	local d
	d=$(scratch pipelined)
	conf_file "$d" "read_timeout = 2"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	baseline "pipelined" || return
	# Three good requests in one write, then junk: three imok replies in
	# order, then one 400 for the junk, and the connection ends.
	python3 -c 'import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /4lw/ruok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 3 + b"\x01\x02 junk \xff\r\n\r\n")
s.settimeout(20); got = b""
while True:
    b = s.recv(65536)
    if not b: break
    got += b
print(got.count(b"HTTP/1.1 200 "), got.count(b"imok"), got.count(b"HTTP/1.1 400 "))' \
		"$HTTP_PORT" >"$T/pipe.out" 2>&1
	assert_eq "3 pipelined requests then junk: 3 x 200 imok, then 400 and the end" \
		"3 3 1" "$(cat "$T/pipe.out")"
	# Random bytes, 200 connections (one driver process): each is ended,
	# none hangs.
	ab_case "200 connections of random bytes: each ended by the server" \
		junk "$HTTP_PORT" 200 "$RANDOM"
	check_clean "pipelined"
	stop_daemon
}

case_idle() {
	local d r i pids=() urls
	d=$(scratch idle)
	conf_file "$d" "read_timeout = 3" "max_connections = 64"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	baseline "idle" || return
	# 1,000 half-requests held open; meanwhile the words and HTTP answer.
	hold_start "$HTTP_PORT" 1000 --send $'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n' --ensure --max 60
	held_wait
	if r=$(ab talk 127.0.0.1 "$PORT" ruok --expect imok --repeat 50 2>&1); then
		pass "1,000 half-requests held: 50 ruok on the words port, each imok"
	else
		fail "1,000 half-requests held: ruok on the words port" "$r"
	fi
	assert_http "1,000 half-requests held: GET /4lw/ruok still answers" 200 idle /4lw/ruok
	# read_timeout ends every one of them; the count comes back.
	sleep 4
	release_held
	assert_grep "... the server had ended all 1,000 by read_timeout" \
		'^released 1000: 0 still open and silent, 0 with unread bytes, 1000 ended' "$T/hold.out"
	check_clean "idle"

	# Words while HTTP is busy: 4 curl processes, each asking
	# /jemalloc/stats and /metrics 100 times on a connection of its own
	# per request (Connection: close), 100 ruok and 20 mntr meanwhile.
	urls=()
	for _ in $(seq 100); do
		urls+=(-o /dev/null "http://127.0.0.1:$HTTP_PORT/jemalloc/stats"
			-o /dev/null "http://127.0.0.1:$HTTP_PORT/metrics")
	done
	for i in 1 2 3 4; do
		curl -s -H 'Connection: close' -w '%{http_code}\n' "${urls[@]}" \
			>"$T/busy.$i" &
		pids+=($!)
	done
	if r=$(ab talk 127.0.0.1 "$PORT" ruok --expect imok --repeat 100 2>&1); then
		pass "HTTP busy (4 curl processes): 100 ruok, each imok"
	else
		fail "HTTP busy: 100 ruok, each imok" "$r"
	fi
	for i in $(seq 20); do
		[ -n "$(mntr_value jm4lw_words_served)" ] || echo bad
	done >"$T/mntr.out"
	assert_eq "HTTP busy: 20 mntr, each with its figures" "" "$(cat "$T/mntr.out")"
	wait "${pids[@]}"
	assert_eq "... and the 800 HTTP requests were all 200" 800 "$(cat "$T"/busy.* | grep -c '^200$')"
	check_clean "busy"
	stop_daemon
}

case_headers
case_pipelined
case_idle
finish

#!/bin/bash
# The HTTP face with curl against a live jm4lwd: every path that needs no
# heap profile, each refusal as its status and one-line reason (Host,
# CSRF, 404, 405, 403 allow list and allow_from, 501), and the limits
# (header size 431, body size 413, read_timeout, the keep-alive cap).
# Profiling stays off here, so this runs under the sanitizers too;
# http_prof.sh has the profiles.
#
#	bash http.sh    (JM4LWD=...)
. "$(dirname "$0")/../lib.sh"

need curl python3 nc.openbsd

# json_ok NAME: $T/NAME.body is one JSON object (python's parser).
json_ok() {
	python3 -c 'import json, sys; o = json.load(open(sys.argv[1])); assert isinstance(o, dict)' \
		"$T/$1.body" 2>&1
}

case_paths() {
	local d got
	d=$(scratch paths)
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
	assert_http "GET /metrics" 200 metrics /metrics
	assert_eq "/metrics is Prometheus text 0.0.4" \
		"text/plain; version=0.0.4; charset=utf-8" "$(hheader metrics Content-Type)"
	# Every sample's metric has its HELP and TYPE lines before it.
	got=$(awk '/^# HELP /{h[$3]=1; next} /^# TYPE /{t[$3]=1; next}
		/^[a-z]/{ n = $1; sub(/\{.*/, "", n); s++;
			if (!h[n] || !t[n]) bad = bad " " n }
		END { print s + 0 ":" bad }' "$T/metrics.body")
	if [ "${got%%:*}" -gt 5 ] && [ -z "${got#*:}" ]; then
		pass "/metrics: ${got%%:*} samples, each after its # HELP and # TYPE"
	else
		fail "/metrics: each sample after its # HELP and # TYPE" "$got"
	fi
	assert_grep "/metrics counts HTTP requests" '^jm4lw_http_requests_total [1-9]' "$T/metrics.body"

	assert_http "GET /jemalloc/status" 200 status /jemalloc/status
	assert_cmd "/jemalloc/status is a JSON object" json_ok status
	assert_grep "/jemalloc/status: prof_enabled false (no MALLOC_CONF)" '"prof_enabled": false' "$T/status.body"
	assert_grep_F "/jemalloc/status: prof_active" '"prof_active": ' "$T/status.body"
	assert_grep_F "/jemalloc/status: the counters" '"jm4lw_dumps_written": ' "$T/status.body"
	assert_http "GET /jemalloc/stats?format=json" 200 statsj "/jemalloc/stats?format=json"
	assert_cmd "/jemalloc/stats?format=json is JSON" json_ok statsj
	assert_http "GET /jemalloc/stats" 200 stats /jemalloc/stats
	assert_grep "/jemalloc/stats is malloc_stats_print's text" '^___ Begin jemalloc statistics ___' "$T/stats.body"
	for p in / /debug/pprof/; do
		assert_http "GET $p (an index)" 200 index "$p"
		assert_grep_F "$p links /debug/pprof/heap" 'href="/debug/pprof/heap"' "$T/index.body"
	done
	# The index's format lists are views[]'s, as /jemalloc/formats has them.
	assert_http "GET /jemalloc/formats" 200 formats /jemalloc/formats
	assert_cmd "/jemalloc/formats is a JSON object" json_ok formats
	fl=$(python3 -c 'import json, sys; print("|".join(f["name"] for f in json.load(open(sys.argv[1]))["formats"]))' "$T/formats.body")
	case "|$fl|" in
	*"|collapsed|"*"|threads|"*) pass "/jemalloc/formats: $fl" ;;
	*) fail "/jemalloc/formats names collapsed ... threads" "$fl" ;;
	esac
	assert_http "GET / (for its help)" 200 index /
	assert_grep_F "/'s help of /jemalloc/profile lists the formats" "?format=$fl, &amp;base=previous" "$T/index.body"
	assert_grep_F "/'s help of /jemalloc/dump lists the formats" "&amp;format=$fl[&amp;base=M]" "$T/index.body"
	# /jemalloc is the page (page.sh drives it in a browser).
	assert_http "GET /jemalloc (the page)" 200 page /jemalloc
	assert_eq "... HTML" "text/html; charset=utf-8" "$(hheader page Content-Type)"

	# /4lw/<word>: the same bytes as the word on the raw port.
	for w in ruok conf jmls; do
		assert_http "GET /4lw/$w" 200 "w$w" "/4lw/$w"
		ask "$w" >"$T/w$w.raw"
		if cmp -s "$T/w$w.raw" "$T/w$w.body"; then
			pass "/4lw/$w is byte for byte the word's reply ($(wc -c <"$T/w$w.raw") bytes)"
		else
			fail "/4lw/$w is byte for byte the word's reply" "raw: $(show "$T/w$w.raw")" \
				"http: $(show "$T/w$w.body")"
		fi
	done

	# jeprof's and Go's symbol endpoints.
	assert_http "GET /pprof/symbol" 200 sym /pprof/symbol
	assert_bytes "GET /pprof/symbol says there are symbols" "$T/sym.body" 'num_symbols: 1\n'
	assert_http "GET /debug/pprof/symbol" 200 dsym /debug/pprof/symbol
	assert_bytes "GET /debug/pprof/symbol says there are symbols" "$T/dsym.body" 'num_symbols: 1\n'
	local base off addr
	base=$(awk -v p="$(readlink -f "$JM4LWD")" '$6 == p && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "/proc/$PID/maps")
	off=$(nm "$JM4LWD" | awk '$3 == "main" { print $1; exit }')
	if [ -z "$base" ] || [ -z "$off" ]; then
		fail "main's address in jm4lwd (maps and nm)" "base=$base main=$off"
	else
		addr=$(printf '0x%x' $((0x$base + 0x$off)))
		assert_http "POST /pprof/symbol $addr+0x1" 200 symp /pprof/symbol --data "$addr+0x1"
		assert_grep "/pprof/symbol names main at $addr" "^$addr main\$" "$T/symp.body"
		assert_eq "/pprof/symbol: a line for each address" 2 "$(wc -l <"$T/symp.body")"
	fi
	assert_http "POST /pprof/symbol with a token that is no address" 400 symbad /pprof/symbol --data '0x10+zz'
	assert_grep_F "... says which token" '"zz" is not an address' "$T/symbad.body"

	# cmdline, as Go answers it: the arguments joined by NUL.
	assert_http "GET /debug/pprof/cmdline" 200 cmd /debug/pprof/cmdline
	head -c -1 "/proc/$PID/cmdline" >"$T/cmd.want"
	if cmp -s "$T/cmd.body" "$T/cmd.want"; then
		pass "/debug/pprof/cmdline: the arguments joined by NUL, none after the last"
	else
		fail "/debug/pprof/cmdline: the arguments joined by NUL" "$(show "$T/cmd.body")"
	fi
	assert_http "GET /pprof/cmdline" 200 pcmd /pprof/cmdline
	assert_cmd "/pprof/cmdline is the same" cmp "$T/cmd.body" "$T/pcmd.body"

	# Profiling is off: a profile is 501 with the MALLOC_CONF to set.
	for p in /debug/pprof/heap /pprof/heap "/jemalloc/profile?format=text"; do
		assert_http "GET $p without profiling" 501 noprof "$p"
		assert_grep "... says which MALLOC_CONF" '^error: .*MALLOC_CONF=prof:true' "$T/noprof.body"
	done
	assert_http "POST /4lw/jmep without profiling" 501 jmep /4lw/jmep -X POST -H 'X-Jm4lw: 1'
	stop_daemon
}

# Each refusal: status, and the one-line reason.
case_refusals() {
	local d
	d=$(scratch refusals)
	printf '%s\n' "http_allowed_hosts = jm.example" "allow = ruok,mntr,jmls,jmep" >"$d/jm4lwd.conf"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	assert_http "404 for an unknown path" 404 r404 /nope
	assert_grep '... with one line' '^error: no such path: /nope' "$T/r404.body"
	assert_http "404 for an unknown word" 404 w404 /4lw/zzzz
	assert_http "405 for POST /metrics" 405 p405 /metrics -X POST
	assert_eq "... with Allow: GET, HEAD" "GET, HEAD" "$(hheader p405 Allow)"
	assert_http "405 for GET /4lw/jmep (changes state)" 405 g405 /4lw/jmep
	assert_eq "... with Allow: POST" "POST" "$(hheader g405 Allow)"
	assert_grep '... and the reason' '^error: jmep changes state: POST it$' "$T/g405.body"

	# ZooKeeper's whitelist line, under 403.
	assert_http "403 for a word not in allow" 403 nallow /4lw/conf
	assert_bytes "... with ZooKeeper's whitelist line" "$T/nallow.body" \
		'conf is not executed because it is not in the whitelist.\n'
	# The allow list governs the paths too, through the word that
	# answers the same: mntr is allowed, jmtp/jmfg/jmst/conf are not.
	assert_http "200 for /metrics (mntr is allowed)" 200 amet /metrics
	assert_http "403 for /debug/pprof/heap (jmtp is not)" 403 approf /debug/pprof/heap
	assert_grep '... naming the word' '^error: /debug/pprof/heap is served as jmtp, which is not in the allow list$' "$T/approf.body"
	assert_http "403 for /jemalloc/profile?format=svg (jmfg is not)" 403 asvg '/jemalloc/profile?format=svg'
	assert_http "403 for /jemalloc/stats (jmst is not)" 403 astats /jemalloc/stats
	assert_http "403 for /pprof/symbol (jmtp is not)" 403 asym /pprof/symbol
	assert_http "403 for /pprof/cmdline (conf is not)" 403 acmd /pprof/cmdline

	# DNS rebinding: a Host that is no IP literal, localhost or listed.
	assert_http "403 for Host: evil.example" 403 host /metrics -H 'Host: evil.example'
	assert_grep '... saying why' '^error: Host evil.example is not an IP address' "$T/host.body"
	assert_http "403 for Host: 127.0.0.1.evil.example" 403 host2 /metrics -H 'Host: 127.0.0.1.evil.example'
	assert_http "403 for Host: 127.0.0.1:x.evil (a port of letters)" 403 host3 /metrics -H 'Host: 127.0.0.1:x.evil'
	assert_http "200 for Host: localhost:1" 200 hostl /metrics -H 'Host: localhost:1'
	assert_http "200 for Host: jm.example (http_allowed_hosts)" 200 hosta /metrics -H "Host: jm.example:$HTTP_PORT"
	assert_http "200 for Host: [::1]:80" 200 host6 /metrics -H 'Host: [::1]:80'

	# CSRF: a change of state needs POST, X-Jm4lw and no foreign origin.
	assert_http "403 for POST /4lw/jmep without X-Jm4lw" 403 csrf1 /4lw/jmep -X POST
	assert_grep '... saying which header' 'X-Jm4lw: 1' "$T/csrf1.body"
	assert_http "403 for POST /4lw/jmep from another Origin" 403 csrf2 /4lw/jmep -X POST \
		-H 'X-Jm4lw: 1' -H 'Origin: http://evil.example'
	assert_http "403 for POST /4lw/jmep with Origin: null" 403 csrf3 /4lw/jmep -X POST \
		-H 'X-Jm4lw: 1' -H 'Origin: null'
	assert_http "403 for POST /4lw/jmep with Sec-Fetch-Site: cross-site" 403 csrf4 /4lw/jmep -X POST \
		-H 'X-Jm4lw: 1' -H 'Sec-Fetch-Site: cross-site'
	# Past the checks, the word itself answers (profiling is off here).
	assert_http "POST /4lw/jmep with X-Jm4lw and its own Origin reaches the word" 501 csrf5 /4lw/jmep \
		-X POST -H 'X-Jm4lw: 1' -H "Origin: http://127.0.0.1:$HTTP_PORT"
	assert_grep_F "... whose line says profiling is off" 'MALLOC_CONF' "$T/csrf5.body"
	# The words port is unchanged by all this.
	alive "the words port still answers ruok"
	stop_daemon

	# allow_from: a peer outside it gets 403 and its address.
	d=$(scratch allow_from)
	printf '%s\n' "allow_from = 10.0.0.0/8" >"$d/jm4lwd.conf"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	assert_http "403 for a peer outside allow_from" 403 afrom /metrics
	assert_grep '... saying so' '^error: 127\.0\.0\.1.* is not in allow_from$' "$T/afrom.body"
	stop_daemon
}

case_limits() {
	local d got t1 big what
	d=$(scratch limits)
	printf '%s\n' "http_max_header_bytes = 2048" "http_max_body_bytes = 1024" \
		"read_timeout = 2" "http_keepalive_requests = 3" >"$d/jm4lwd.conf"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return

	big=$(head -c 3000 /dev/zero | tr '\0' a)
	assert_http "431 for 3000 bytes of headers (http_max_header_bytes=2048)" 431 h431 /metrics -H "X-Big: $big"
	assert_grep '... with the limit named' '^error: .*http_max_header_bytes=2048$' "$T/h431.body"
	assert_eq "... and the connection closed" close "$(hheader h431 Connection)"
	assert_http "1900 bytes of headers pass" 200 h200 /metrics -H "X-Big: ${big:0:1800}"
	# Far past the limit evhttp stops reading: a status, then the close.
	big=$(head -c 20000 /dev/zero | tr '\0' a)
	got=$(hreq hbig /metrics -H "X-Big: $big")
	if [ "$got" = 431 ] || [ "$got" = 400 ]; then
		pass "20000 bytes of headers: $got, and closed ($(hheader hbig Connection))"
	else
		fail "20000 bytes of headers: a 4xx and closed" "status $got"
	fi

	head -c 2000 /dev/zero | tr '\0' '+' >"$T/body"
	assert_http "413 for a 2000-byte body (http_max_body_bytes=1024)" 413 b413 /pprof/symbol \
		--data-binary "@$T/body"
	head -c 1000 /dev/zero | tr '\0' '+' >"$T/body"
	assert_http "a 1000-byte body passes" 200 b200 /pprof/symbol --data-binary "@$T/body"

	# read_timeout: half a request line, or a body that stops coming,
	# is closed after ~2 s.
	for what in 'GET /metr' 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1' \
		'POST /pprof/symbol HTTP/1.1\r\nContent-Length: 100\r\n\r\n0x1+'; do
		got=$(closed_after "$HTTP_PORT" "$what")
		t1=${got%% *}
		if [[ $got == *" eof "* ]] && [ "${t1%.*}" -ge 1 ] && [ "${t1%.*}" -lt $((5 * SLOW)) ]; then
			pass "read_timeout=2 closes \"${what:0:22}...\" (after $got)"
		else
			fail "read_timeout=2 closes \"${what:0:22}...\"" "$got"
		fi
	done

	# The keep-alive cap: the 3rd request's reply says Connection: close,
	# and curl needs a second connection for the 4th.
	timeout 30 curl -sv -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
		"http://127.0.0.1:$HTTP_PORT/4lw/ruok" "http://127.0.0.1:$HTTP_PORT/4lw/ruok" \
		"http://127.0.0.1:$HTTP_PORT/4lw/ruok" "http://127.0.0.1:$HTTP_PORT/4lw/ruok" \
		2>"$T/ka.err"
	assert_eq "http_keepalive_requests=3: the replies' Connection headers" "close" \
		"$(grep -i '^< connection:' "$T/ka.err" | tr -d '\r' | awk '{ print $3 }' | tr '\n' ' ' | sed 's/ $//')"
	assert_eq "... the first 3 requests on one connection, the 4th on a new one" \
		"Connected to 127.0.0.1 Re-using Re-using Connected to 127.0.0.1" \
		"$(grep -oE 'Connected to 127\.0\.0\.1|Re-using' "$T/ka.err" | tr '\n' ' ' | sed 's/ $//')"
	alive "the words port still answers ruok"
	stop_daemon
}

case_paths
case_refusals
case_limits
finish

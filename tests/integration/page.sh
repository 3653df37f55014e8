#!/bin/bash
# The /jemalloc page in headless Chromium, on the agent in Debian's
# redis-server under load: the chart grows, the flame graph names Redis's
# functions, a click zooms, search highlights and sums, the buttons turn
# profiling off and on (and /jemalloc/status follows), two dumps with
# Redis grown in between show createStringObject grown, every download
# link answers, the allocator's JSON filters, nothing overflows at phone
# width, and the page asks no host but its own. page.py drives Chromium
# over the DevTools pipe (see its header) and prints one line per check;
# page_firefox.py runs the page's core in headless Firefox (WebDriver
# BiDi), the other engine it must work in.
# Screenshots stay in the scratch dir; PAGE_SHOTS=DIR copies them there
# (docs/img/page.png is page.png). Needs jemalloc's profiling (not under
# the sanitizers).
#
#	bash page.sh   (JM4LW_RUN from ctest; PAGE_SHOTS=DIR, KEEP_TMP=1)
. "$(dirname "$0")/../lib.sh"

need chromium firefox-esr python3 curl redis-server redis-cli redis-benchmark nc.openbsd
[ -x "$JM4LW_RUN" ] || die "$JM4LW_RUN is not executable"

case_page() {
	local shots urls f od opid conf
	# A snapshot a second, a ring of 90: the Growth section's "last
	# minute" and "Heap at the peak" have snapshots within the test.
	conf=$(scratch page_conf)/jm4lw.conf
	printf 'snapshot_interval = 1\nsnapshot_count = 90\n' >"$conf"
	start_redis_agent page MALLOC_CONF=lg_prof_sample:14 JM4LW_CONF="$conf" || return
	# Another process of the user keeps its dumps in the same dump_dir
	# (as every process does by default): the page must not take them
	# for the agent's own.
	od=$(scratch other)
	printf 'dump_min_interval = 0\n' >"$od/jm4lwd.conf"
	start_daemon -C "$od" -e MALLOC_CONF=prof:true -- -f jm4lwd.conf \
		-l 127.0.0.1:0 -D "$RDIR" || return
	opid=$PID
	ask jmfp >/dev/null
	ask jmfp >/dev/null
	# shellcheck disable=SC2034 # hreq's port (lib.sh)
	HTTP_PORT=$AHTTP

	# The file as served: HTML under our CSP, naming no other host.
	assert_http "GET /jemalloc serves the page" 200 page /jemalloc
	assert_grep_F "it is HTML" "text/html" <(hheader page Content-Type)
	assert_grep_F "its CSP lets it ask its own origin only" "connect-src 'self'" \
		<(hheader page Content-Security-Policy)
	assert_grep_F "its CSP loads nothing by default" "default-src 'none'" \
		<(hheader page Content-Security-Policy)
	urls=$(grep -oE '[A-Za-z][A-Za-z0-9+.-]*://[^"'\'' <>)]*' "$T/page.body" |
		grep -vx 'http://www.w3.org/2000/svg' | sort -u)
	assert_eq "the page names no URL but the SVG namespace" "" "$urls"
	assert_no_grep "no src=, @import or url() (self-contained)" \
		'src=|@import|url\(' "$T/page.body"
	assert_grep_F "it is the page, not the index" 'id="flame-heap"' "$T/page.body"

	# Load: a heap to look at, and a trickle of writes while the page is
	# open (bursts, to leave the two cores to Chromium).
	redis-benchmark -p "$RPORT" -q -n 30000 -c 4 -t set,lpush,sadd -d 256 \
		-r 20000 >/dev/null 2>&1
	setsid bash -c "while :; do redis-benchmark -p $RPORT -q -n 2000 -c 2 \
		-t set,lpush -d 128 -r 50000 >/dev/null 2>&1; sleep 0.5; done" &
	track -g $!

	shots=$(scratch shots)
	run_page page.py 53 240 "$AHTTP" "$RPORT" "$shots"
	run_page page_firefox.py 7 240 "$AHTTP" "$shots"
	for f in heap zoom search growth stats phone page firefox; do
		if [ "$(head -c 8 "$shots/$f.png" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ]; then
			pass "screenshot $f.png ($(wc -c <"$shots/$f.png") bytes)"
		else
			fail "screenshot $f.png was written" "$(ls "$shots")"
		fi
	done
	if [ -n "${PAGE_SHOTS:-}" ]; then
		mkdir -p "$PAGE_SHOTS" && cp "$shots"/*.png "$PAGE_SHOTS"/ &&
			echo "# screenshots in $PAGE_SHOTS"
	fi

	# Redis and the agent came through it.
	assert_eq "redis-server still answers PING" PONG "$(redis-cli -p "$RPORT" ping 2>&1)"
	assert_eq "the agent still answers ruok" imok "$(ask ruok "$APORT")"
	PID=$opid stop_daemon
}

# Without opt.prof: jm4lwd with no MALLOC_CONF; the buttons that need
# profiling are off and say why, purge works, nothing asks for a profile.
case_noprof() {
	local shots
	start_daemon -- -l 127.0.0.1:0 || return
	shots=$(scratch noprof)
	run_page page.py 7 240 --noprof "$HTTP_PORT" "$shots"
	[ -n "${PAGE_SHOTS:-}" ] && cp "$shots"/noprof.png "$PAGE_SHOTS"/
	stop_daemon
}

case_page
case_noprof
finish

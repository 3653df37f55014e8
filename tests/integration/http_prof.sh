#!/bin/bash
# The HTTP face's profile paths with profiling on, on jm4lwd under the real
# jemalloc: every /jemalloc/profile format is what its consumer reads
# (xmllint for svg, go tool pprof for pprof, jeprof's markers for raw and
# symbolized), base=previous compares with the last kept dump (409 before
# there is one), a view within dump_min_interval is drawn from the newest
# dump (go tool pprof, jeprof and curl back to back all answered), and
# kept dumps refused for the rate or the disk are 429 with Retry-After
# and 503, each with the word's one-line reason. Real-program
# consumers (go tool pprof and jeprof on the agent in redis-server,
# Prometheus) are in http_pprof.sh and prometheus.sh.
#
#	bash http_prof.sh   (JM4LWD, else build/)
. "$(dirname "$0")/../lib.sh"

# go tool pprof and jeprof write what they fetch under $HOME.
export HOME=$T/home GOCACHE=$T/gocache PPROF_TMPDIR=$T/pprof
mkdir -p "$HOME" "$GOCACHE" "$PPROF_TMPDIR"

need curl xmllint go jeprof timeout

case_formats() {
	local d
	d=$(scratch formats)
	printf 'dump_min_interval = 0\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e MALLOC_CONF=prof:true,lg_prof_sample:10 -- \
		-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	ask mntr >/dev/null # something sampled besides the start

	assert_http "format=text" 200 ftext '/jemalloc/profile?format=text'
	assert_grep "... jeprof's Total line under our heading" '^Total: [0-9.]+ MiB$' "$T/ftext.body"
	assert_http "format=collapsed (the default)" 200 fcol /jemalloc/profile
	assert_no_grep "... every line 'frames bytes'" '^$|[^0-9]$' "$T/fcol.body"
	assert_http "format=svg" 200 fsvg '/jemalloc/profile?format=svg'
	assert_eq "... as image/svg+xml" image/svg+xml "$(hheader fsvg Content-Type)"
	assert_cmd "... which xmllint reads" xmllint --noout "$T/fsvg.body"
	assert_http "format=raw" 200 fraw '/jemalloc/profile?format=raw'
	assert_eq "... a heap_v2 dump" heap_v2/ "$(head -c 8 "$T/fraw.body")"
	assert_http "format=symbolized" 200 fsym '/jemalloc/profile?format=symbolized'
	assert_eq "... jeprof's symbolized file" "--- symbol" "$(head -1 "$T/fsym.body")"
	assert_grep "... with the dump after --- heap" '^heap_v2/' "$T/fsym.body"
	assert_http "/debug/pprof/heap" 200 pheap /debug/pprof/heap
	assert_eq "... gzip" 1f8b "$(head -c 2 "$T/pheap.body" | od -An -tx1 | tr -d ' \n')"
	mkdir -p "$d/go"
	if HOME=$d/go GOCACHE=$d/go/cache timeout 60 go tool pprof -raw "$T/pheap.body" \
		>"$T/pheap.raw" 2>&1; then
		assert_grep "go tool pprof reads it: inuse_space samples" 'inuse_space/bytes' "$T/pheap.raw"
	else
		fail "go tool pprof reads /debug/pprof/heap" "$(head -3 "$T/pheap.raw")"
	fi
	assert_http "unknown format: 400" 400 fbad '/jemalloc/profile?format=gif'

	# base=previous: no kept dump yet, then a jmfp.
	assert_http "base=previous before any kept dump: 409" 409 nobase \
		'/jemalloc/profile?format=text&base=previous'
	assert_grep "... saying there is nothing to compare with" \
		'^error: cannot compare: no earlier dump' "$T/nobase.body"
	assert_http "POST /4lw/jmfp keeps a dump" 200 kept /4lw/jmfp -X POST -H 'X-Jm4lw: 1'
	assert_eq "... its path, as the word's" heap_v2/ "$(head -c 8 "$(cat "$T/kept.body")")"
	assert_http "base=previous after it" 200 wbase '/jemalloc/profile?format=text&base=previous'
	assert_grep "... the growth since that dump" "^# growth since $(cat "$T/kept.body"), " "$T/wbase.body"
	assert_http "base= with format=raw: 400" 400 rawbase '/jemalloc/profile?format=raw&base=previous'

	# The kept dumps, for the page: listed, and each one readable.
	local name first
	name=$(basename "$(cat "$T/kept.body")")
	assert_http "/jemalloc/dumps" 200 dumps /jemalloc/dumps
	assert_eq "... JSON naming the kept dump" "$name" \
		"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["dumps"][0]["name"])' "$T/dumps.body")"
	assert_http "/jemalloc/dump?name=..&format=text" 200 dtext "/jemalloc/dump?name=$name&format=text"
	assert_grep "... its table" '^Total: [0-9.]+ MiB$' "$T/dtext.body"
	assert_http "... format=raw" 200 draw "/jemalloc/dump?name=$name&format=raw"
	# The file with each stack's leading libjemalloc frames cut, the
	# new leaf at pc - 1, as jeprof should see it (lib.sh's cut_libjemalloc is the same rule in Perl).
	cut_libjemalloc "$(cat "$T/kept.body")" "$T/kept.cut"
	assert_cmd "... the file with libjemalloc's leading frames cut, byte for byte" \
		cmp -s "$T/draw.body" "$T/kept.cut"
	assert_cmd "... which is not the file itself (libjemalloc's frames led its stacks)" \
		test "$(grep -c '^@' "$T/draw.body")" -gt 0 -a \
		"$(cmp -s "$T/draw.body" "$(cat "$T/kept.body")"; echo $?)" = 1
	first=$name
	sleep 0.1
	hreq kept2 /4lw/jmfp -X POST -H 'X-Jm4lw: 1' >/dev/null
	name=$(basename "$(cat "$T/kept2.body")")
	assert_http "... base=<another dump>" 200 dbase "/jemalloc/dump?name=$name&format=collapsed&base=$first"
	assert_no_grep "... as 'frames old new' lines" '^$| [^0-9 ]+ [0-9]+$|^[^ ]*$' "$T/dbase.body"
	assert_http "an unknown dump: 404" 404 dnone '/jemalloc/dump?name=jm4lw.1.2.heap&format=raw'
	# A '/' is no byte of a name: the query check refuses it before any
	# lookup; a name of tokens that is not ours is a 404.
	assert_http "a path for a name: 400" 400 dpath '/jemalloc/dump?name=../../etc/passwd&format=raw'
	assert_grep "... saying so" '^error: the query.s name has a byte outside A-Z a-z 0-9 \. _ -$' "$T/dpath.body"
	assert_http "a name not ours: 404" 404 dother '/jemalloc/dump?name=..&format=raw'
	assert_grep "... saying so" '^error: no dump "\.\." in dump_dir$' "$T/dother.body"
	assert_http "no name: 400" 400 dnoname '/jemalloc/dump?format=raw'
	stop_daemon
}

case_refused() {
	local d
	d=$(scratch refused)
	# 30 s, not the default 1 s: under load the first reply (a dump
	# rendered on a starved worker) can take longer than a second, and
	# the second request then came after the interval.
	printf 'dump_min_interval = 30\n' >"$d/rate.conf"
	start_daemon -C "$d" -e MALLOC_CONF=prof:true -- -f rate.conf -l 127.0.0.1:0 -D "$d" || return
	hreq first /debug/pprof/heap >/dev/null
	# A scraper's path shares: the newest profile, its age, no refusal.
	assert_http "a second scrape within dump_min_interval: the newest profile" \
		200 again /debug/pprof/heap
	assert_eq "... with its Age" yes \
		"$(a=$(hheader again Age); [[ $a =~ ^[0-9]+$ ]] && [ "$a" -le 30 ] && echo yes)"
	# A view of the live heap within dump_min_interval: drawn from the
	# newest dump (the scrape's), with its age, not refused.
	assert_http "a view asked for within dump_min_interval: the newest dump's" \
		200 view '/jemalloc/profile?format=pprof'
	assert_eq "... with X-Jm4lw-Dump-Age, 0 to 30 (s)" yes \
		"$(a=$(hheader view X-Jm4lw-Dump-Age); [[ $a =~ ^[0-9]+$ ]] && [ "$a" -le 30 ] && echo yes)"
	# The README's block, back to back: go tool pprof, remote jeprof,
	# curl's flame graph, each answered.
	timeout $((60 * SLOW)) go tool pprof -top "http://127.0.0.1:$HTTP_PORT/debug/pprof/heap" \
		>"$T/b2b.pprof" 2>&1
	assert_grep "back to back: go tool pprof prints its table" '^Showing nodes' "$T/b2b.pprof"
	timeout $((60 * SLOW)) jeprof --text "http://127.0.0.1:$HTTP_PORT/pprof/heap" \
		>"$T/b2b.jeprof" 2>&1
	assert_grep "back to back: then jeprof prints its Total line" '^Total: ' "$T/b2b.jeprof"
	assert_no_grep "... with no 'No such file'" 'No such file' "$T/b2b.jeprof"
	timeout $((30 * SLOW)) curl -s "http://127.0.0.1:$HTTP_PORT/jemalloc/profile?format=svg" \
		>"$T/b2b.svg"
	assert_cmd "back to back: then curl's heap.svg is an SVG" xmllint --noout "$T/b2b.svg"
	assert_grep "... (<svg)" '<svg ' "$T/b2b.svg"
	# A person's new kept dump keeps the rate's refusal.
	assert_http "a kept dump (jmfp) asked for within dump_min_interval: 429" 429 rate \
		/4lw/jmfp -X POST -H 'X-Jm4lw: 1'
	# dump_min_interval (30 s) less the time since, plus core's 50 ms of
	# margin, rounded up: 31 when the second request came at once.
	assert_eq "... with Retry-After: 1 to 31 (s)" yes \
		"$(r=$(hheader rate Retry-After); [[ $r =~ ^[0-9]+$ ]] && [ "$r" -ge 1 ] && [ "$r" -le 31 ] && echo yes)"
	assert_grep "... and jmfp's reason" 'refused: the last dump was .* retry in' "$T/rate.body"
	stop_daemon
	printf 'dump_min_free = 1000T\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e MALLOC_CONF=prof:true -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	assert_http "the disk guard: 503" 503 disk '/jemalloc/profile?format=text'
	assert_grep "... with dump_min_free's reason" 'dump_min_free is' "$T/disk.body"
	alive "the port still answers"
	stop_daemon
}

# Two processes sharing one dump_dir (as every process of a user does by
# default): each lists its own dumps first and says whose the others
# are; a growth against another process's dump says so.
case_shared_dir() {
	local d pa pb a1 a2 b1 got aport
	d=$(scratch shared)
	printf 'dump_min_interval = 0\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e MALLOC_CONF=prof:true,lg_prof_sample:10 -- \
		-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	pa=$PID
	a1=$(basename "$(ask jmfp)")
	a2=$(basename "$(ask jmfp)")
	local aport=$PORT
	start_daemon -C "$d" -e MALLOC_CONF=prof:true,lg_prof_sample:10 -- \
		-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	pb=$PID
	b1=$(basename "$(ask jmfp)")

	assert_http "shared dump_dir: /jemalloc/dumps" 200 sdumps /jemalloc/dumps
	got=$(python3 - "$T/sdumps.body" "$pb" "$pa" "$b1" "$a1" "$a2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
me, other, b1, a1, a2 = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
d = j["dumps"]
bad = []
if j["pid"] != me: bad.append("pid %s" % j["pid"])
if j["program"] != "jm4lwd": bad.append("program %r" % j["program"])
if j["mine"] != 1: bad.append("mine %s" % j["mine"])
if [x["name"] for x in d] != [b1, a2, a1]: bad.append("order %s" % [x["name"] for x in d])
if [(x["pid"], x["this"]) for x in d] != [(me, True), (other, False), (other, False)]:
    bad.append("whose %s" % [(x["pid"], x["this"]) for x in d])
if [x["program"] for x in d[1:]] != ["jm4lwd", "jm4lwd"]: bad.append("programs %s" % [x["program"] for x in d])
print("; ".join(bad) or "ok")
PY
)
	assert_eq "... this process's dump first, then the other's (newest first), each with its pid and program" ok "$got"

	ask jmls >"$d/jmls.out"
	assert_grep "jmls: the summary says how many are this process's and whose the others are" \
		"^# 3 dumps, [0-9]+ bytes in .* \\(jm4lw\\.\\*\\.heap\\); 1 of this process \\(pid $pb, jm4lwd\\) first, 2 of other processes \\(pid $pa jm4lwd\\)$" "$d/jmls.out"
	assert_eq "... path, size, time and cause stay the first four columns; pid and whose after" \
		"$b1 $pb this|$a2 $pa jm4lwd|$a1 $pa jm4lwd" \
		"$(grep -v '^#' "$d/jmls.out" | awk -F'\t' '{ n = split($1, p, "/"); printf "%s%s %s %s", (NR > 1 ? "|" : ""), p[n], $5, $6 }')"

	assert_http "a dump against another process's base" 200 sother \
		"/jemalloc/dump?format=collapsed&name=$b1&base=$a2"
	assert_eq "... says so in X-Jm4lw-Warning" \
		"the base dump is of another process (pid $pa; the dump's: pid $pb): the difference mixes two heaps" \
		"$(hheader sother X-Jm4lw-Warning)"
	assert_http "... and format=text" 200 sothert "/jemalloc/dump?format=text&name=$b1&base=$a2"
	assert_grep "... in a warning line" '^# warning: the base profile is of another process' "$T/sothert.body"
	assert_http "a dump against its own process's base" 200 ssame \
		"/jemalloc/dump?format=collapsed&name=$a2&base=$a1"
	assert_eq "... no warning" "" "$(hheader ssame X-Jm4lw-Warning)"
	stop_daemon
	PID=$pa PORT=$aport stop_daemon
}

case_formats
case_refused
case_shared_dir
finish

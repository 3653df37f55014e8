#!/bin/bash
# shellcheck disable=SC2119 # lib.sh's stop_daemon: its argument is optional
# The call graph (jmcg, format=dot, format=callgraph, jm4lw-prof -f dot
# and -f callgraph) against its real consumers: Graphviz's dot reads
# every dot text we hand out and draws the hot functions; a node's self
# and cumulative figures are the text table's on the same dump; a
# difference (--base, base=previous) is drawn; format=callgraph is an SVG
# xmllint reads, laid out by libgvc in the process; and where libgvc
# cannot be loaded (JM4LW_GVC_LIB=/nonexistent) it is still an SVG, of
# the dot text under a line saying why, and that text is dot that dot
# reads.
#
# The words' host is tests/host/jeprof_host in leak mode (a 64 MiB ring
# through jm4lw_test_distinctive_alloc(), a leak through
# jm4lw_test_leaky_function()); the HTTP face's is jm4lwd sampling
# its own heap; and the agent in redis-server.
#
#	bash callgraph.sh   (JEPROF_HOST, JM4LWD, JM4LW_PROF; else build/)
. "$(dirname "$0")/../lib.sh"

RING=jm4lw_test_distinctive_alloc
LEAK=jm4lw_test_leaky_function

need dot curl nc.openbsd timeout xmllint python3 redis-server redis-cli redis-benchmark jeprof go
[ -x "$JEPROF_HOST" ] || die "$JEPROF_HOST is not executable"
[ -x "$JM4LW_PROF" ] || die "$JM4LW_PROF is not executable"

# dot_reads NAME FILE: Graphviz's dot lays FILE out as SVG (FILE.svg).
dot_reads() {
	if timeout $((60 * SLOW)) dot -Tsvg "$2" >"$2.svg" 2>"$2.err"; then
		pass "$1: dot -Tsvg reads it"
	else
		fail "$1: dot -Tsvg reads it" "$(head -3 "$2.err")" "$(head -c 400 "$2")"
		return 1
	fi
}

# node FILE NAME: "FLAT CUM" of NAME's node in dot FILE (CUM is FLAT
# where the label has no "of" line, as jeprof's).
node() {
	perl -ne '
		BEGIN { $n = shift @ARGV }
		next unless /^N\d+ \[label="\Q$n\E\\n(\S+)(?: \S+)? \([^)]*\)\\r(?:of (\S+))?/;
		print "$1 ", (defined $2 ? $2 : $1), "\n"; exit' "$2" "$1"
}

# text_row FILE NAME: "FLAT CUM" of NAME's row in a --text table.
text_row() {
	awk -v f="$2" '$6 == f && NF == 6 { print $1, $4; exit }' "$1"
}

# svg_lines SVG: the <text> lines of a dot-text SVG, as text.
svg_lines() {
	python3 -c 'import sys, xml.etree.ElementTree as E
for t in E.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text"):
    print(t.text or "")' "$1"
}

# hot_names FILE: the functions of a --text table (jmtp) holding half the
# heap or more (the program's main chain, from libc's start).
hot_names() {
	awk 'NF == 6 && $5 + 0 >= 50 { print $6 }' "$1"
}

# hex_names FILE: how many rows of a --text table name no function.
hex_names() {
	awk 'NF == 6 && $6 ~ /^0x/ { n++ } END { print n + 0 }' "$1"
}

case_words() {
	local p1 p2 row got f
	D=$(scratch words)
	printf 'dump_min_interval = 0\n' >"$D/jm4lw.conf"
	start_jeprof_host "$D" JM4LW_TEST_LEAK=1 JM4LW_CONF="$D/jm4lw.conf" || return 1
	ask jmep >/dev/null
	sleep 2 # the ring turns over under sampling

	ask jmcg >"$D/jmcg.dot"
	assert_eq "jmcg: a digraph" digraph "$(head -c 7 "$D/jmcg.dot")"
	dot_reads jmcg "$D/jmcg.dot"
	assert_grep "jmcg: dot draws the ring's function" ">$RING<" "$D/jmcg.dot.svg"
	assert_grep "jmcg: dot draws the leak's function" ">$LEAK<" "$D/jmcg.dot.svg"
	assert_grep "jmcg: the legend's total" 'label=".*\\lTotal: [0-9.]+ [KMG]iB\\l' "$D/jmcg.dot"
	assert_grep "jmcg: ... a sampled estimate, with its expected error" \
		'\\lTotal: [0-9.]+ [KMG]iB\\lA sampled estimate, ±[0-9.]+% at 95%\\l' "$D/jmcg.dot"
	assert_grep "jmcg: the legend's share shown" \
		'\\lShowing nodes accounting for [0-9.]+ [KMG]iB, [0-9.]+% of [0-9.]+ [KMG]iB total\\l' "$D/jmcg.dot"
	assert_grep "jmcg: edges labelled with what flowed" \
		'^N[0-9]+ -> N[0-9]+ \[label="[0-9.]+ [KMG]iB",weight=[0-9]+,penwidth=' "$D/jmcg.dot"

	# One kept dump, the views offline: a node's figures are the
	# text table's row (objects: whole numbers both truncate alike).
	p1=$(ask jmfp)
	assert_eq "jmfp: a kept dump" yes "$([ -s "$p1" ] && echo yes)"
	"$JM4LW_PROF" -f dot "$p1" >"$D/p1.dot" 2>"$D/p1.err"
	dot_reads "jm4lw-prof -f dot" "$D/p1.dot"
	"$JM4LW_PROF" -f text --objects "$p1" >"$D/p1.otxt" 2>&1
	"$JM4LW_PROF" -f dot --objects "$p1" >"$D/p1.odot" 2>&1
	for f in "$RING" "$LEAK"; do
		row=$(text_row "$D/p1.otxt" "$f")
		got=$(node "$D/p1.odot" "$f")
		if [ -n "$row" ] && [ "$row" = "$got" ]; then
			pass "jm4lw-prof --objects: $f's node is its text row (self, cum: $got)"
		else
			fail "jm4lw-prof --objects: $f's node is its text row" \
				"text: ${row:-none}" "dot: ${got:-none}"
		fi
	done
	# Bytes: the text table's MB against the legend's MiB, to its decimal.
	row=$("$JM4LW_PROF" -f text "$p1" 2>&1 | sed -n 's/^Total: \([0-9.]*\) MiB$/\1/p')
	got=$(sed -n 's/.*\\lTotal: \([0-9.]*\) MiB\\l.*/\1/p' "$D/p1.dot")
	assert_eq "jm4lw-prof: the legend's total is the text table's ($row MiB, $got MiB)" 1 \
		"$(awk -v a="$row" -v b="$got" 'BEGIN { d = a - b; print (a != "" && b != "" && d <= 0.11 && d >= -0.11) }')"

	sleep 1
	p2=$(ask jmfp)
	"$JM4LW_PROF" -f dot --base "$p1" "$p2" >"$D/diff.dot" 2>"$D/diff.err"
	dot_reads "jm4lw-prof -f dot --base" "$D/diff.dot"
	assert_grep "--base: the legend says what changed" '\\lChange: [-+]?[0-9.]+ [KMG]?i?B net, ' "$D/diff.dot"

	"$JM4LW_PROF" -f callgraph "$p2" >"$D/cg.svg" 2>"$D/cg.err"
	assert_cmd "jm4lw-prof -f callgraph: xmllint --noout accepts it" xmllint --noout "$D/cg.svg"
	assert_grep "... Graphviz's own SVG" '^<!-- Generated by graphviz' "$D/cg.svg"
	assert_grep "... drawing the leak's function" ">$LEAK<" "$D/cg.svg"
	JM4LW_GVC_LIB=/nonexistent "$JM4LW_PROF" -f callgraph "$p2" >"$D/nogvc.svg" 2>"$D/nogvc.err"
	assert_cmd "without libgvc: still an SVG xmllint accepts" xmllint --noout "$D/nogvc.svg"
	assert_grep "... marked as the dot text" '^<svg [^>]*data-jm4lw="dot-text"' "$D/nogvc.svg"
	svg_lines "$D/nogvc.svg" >"$D/nogvc.dot"
	assert_grep "... its first line says why and what to do" \
		'^// Graphviz \(libgvc\.so\.6\) is not installed here \(/nonexistent cannot be loaded: .*\): this is the call graph in dot; render it with dot -Tsvg$' \
		"$D/nogvc.dot"
	dot_reads "without libgvc: the SVG's lines" "$D/nogvc.dot"
	assert_grep "... which draw the leak's function" ">$LEAK<" "$D/nogvc.dot.svg"
	stop_jeprof_host
}

case_http() {
	local d name
	d=$(scratch http)
	printf 'dump_min_interval = 0\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e MALLOC_CONF=prof:true,lg_prof_sample:10 -- \
		-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	ask mntr >/dev/null # something sampled besides the start

	assert_http "format=dot" 200 fdot '/jemalloc/profile?format=dot'
	assert_eq "... as text/vnd.graphviz" "text/vnd.graphviz; charset=utf-8" "$(hheader fdot Content-Type)"
	dot_reads "format=dot" "$T/fdot.body"
	assert_http "format=callgraph" 200 fcg '/jemalloc/profile?format=callgraph'
	assert_eq "... as image/svg+xml" image/svg+xml "$(hheader fcg Content-Type)"
	assert_cmd "... which xmllint reads" xmllint --noout "$T/fcg.body"
	assert_grep "... laid out by Graphviz in the process" '^<!-- Generated by graphviz' "$T/fcg.body"
	assert_http "/4lw/jmcg" 200 w4lw /4lw/jmcg
	dot_reads "/4lw/jmcg" "$T/w4lw.body"
	ask jmcg >"$d/jmcg.dot"
	dot_reads "echo jmcg | nc" "$d/jmcg.dot"

	assert_http "format=dot&base=previous before a kept dump: 409" 409 nobase \
		'/jemalloc/profile?format=dot&base=previous'
	assert_http "POST /4lw/jmfp keeps a dump" 200 kept /4lw/jmfp -X POST -H 'X-Jm4lw: 1'
	assert_http "format=dot&base=previous" 200 wbase '/jemalloc/profile?format=dot&base=previous'
	dot_reads "format=dot&base=previous" "$T/wbase.body"
	assert_grep "... a difference" '\\lChange: ' "$T/wbase.body"
	assert_http "format=callgraph&base=previous" 200 cgbase '/jemalloc/profile?format=callgraph&base=previous'
	assert_cmd "... which xmllint reads" xmllint --noout "$T/cgbase.body"

	name=$(basename "$(cat "$T/kept.body")")
	assert_http "/jemalloc/dump?name=..&format=dot" 200 ddot "/jemalloc/dump?name=$name&format=dot"
	dot_reads "a kept dump's format=dot" "$T/ddot.body"
	assert_http "/jemalloc/dump?name=..&format=callgraph" 200 dcg "/jemalloc/dump?name=$name&format=callgraph"
	assert_cmd "... which xmllint reads" xmllint --noout "$T/dcg.body"
	stop_daemon
}

case_no_gvc() {
	local d
	d=$(scratch nogvc)
	printf 'dump_min_interval = 0\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -e MALLOC_CONF=prof:true,lg_prof_sample:10 \
		-e JM4LW_GVC_LIB=/nonexistent -- \
		-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	assert_http "without libgvc: format=callgraph" 200 ncg '/jemalloc/profile?format=callgraph'
	assert_eq "... still image/svg+xml" image/svg+xml "$(hheader ncg Content-Type)"
	assert_cmd "... which xmllint reads" xmllint --noout "$T/ncg.body"
	assert_grep "... marked as the dot text" '^<svg [^>]*data-jm4lw="dot-text"' "$T/ncg.body"
	svg_lines "$T/ncg.body" >"$d/ncg.dot"
	assert_grep "... its first line says why" '^// Graphviz \(libgvc\.so\.6\) is not installed here' "$d/ncg.dot"
	dot_reads "without libgvc: the SVG's lines" "$d/ncg.dot"
	assert_http "... and again (the failed load is remembered)" 200 ncg2 '/jemalloc/profile?format=callgraph'
	assert_grep "... the same answer" 'data-jm4lw="dot-text"' "$T/ncg2.body"
	assert_eq "... and the daemon keeps serving" imok "$(ask ruok)"
	stop_daemon
}

# The agent in redis-server: format=callgraph laid out in a host that
# exports names Graphviz has too (zmalloc, zrealloc: Redis's, not
# Graphviz's, and the first layout crashed redis-server until Graphviz
# got a namespace of its own); the host keeps serving.
case_redis_exports_zmalloc() {
	local code n f missing p
	printf 'dump_min_interval = 0\n' >"$T/cgredis.conf"
	start_redis_agent cgredis JM4LW_CONF="$T/cgredis.conf" || return
	redis-benchmark -p "$RPORT" -q -n 20000 -c 2 -t set -d 256 -r 20000 >/dev/null 2>&1
	ask jmtp "$APORT" >"$RDIR/before.txt"
	code=$(timeout $((60 * SLOW)) curl -s -o "$RDIR/cg.svg" -w '%{http_code}' \
		"http://127.0.0.1:$AHTTP/jemalloc/profile?format=callgraph")
	assert_eq "redis-server: format=callgraph answers" 200 "$code"
	assert_cmd "... an SVG xmllint reads" xmllint --noout "$RDIR/cg.svg"
	assert_grep "... laid out by Graphviz in redis-server" '^<!-- Generated by graphviz' "$RDIR/cg.svg"
	assert_grep "... naming Redis's own functions" '>(createStringObject|zmalloc_usable|ztrymalloc_usable|_sdsnewlen|sdsnewlen|dictAddRaw)<' "$RDIR/cg.svg"
	# Debian's redis-server is a link to redis-check-rdb, the file the
	# process maps: the program is named as the process is, the file
	# beside it.
	assert_grep "... titled by the process's name, the file it maps beside" \
		"^<title>redis&#45;server \\($(readlink -f "$(command -v redis-server)" | sed 's/-/\&#45;/g')\\)</title>" "$RDIR/cg.svg"
	http_get "http://127.0.0.1:$AHTTP/debug/pprof/heap" "$RDIR/heap.pb" ||
		fail "redis-server: /debug/pprof/heap answers" "$(head -c 300 "$RDIR/heap.pb")"
	go tool pprof -top "$RDIR/heap.pb" >"$RDIR/heap.top" 2>&1
	assert_grep "go tool pprof -top: File: is the process's name" '^File: redis-server$' "$RDIR/heap.top"
	assert_grep "... and a comment names the file it maps" '^redis-server \(/.*redis-check-rdb\)$' "$RDIR/heap.top"
	assert_eq "... and redis-server still answers PING" PONG "$(redis-cli -p "$RPORT" ping 2>&1)"
	assert_eq "... and the agent ruok" imok "$(ask ruok "$APORT")"

	# Names after the first call graph: Graphviz's namespace maps a
	# second libc.so.6, lower; each copy is its own object at its own
	# base, and the process's libc frames keep their names, in the
	# process, offline on a dump written now, and in jeprof.
	n=$(grep -c ' r-xp .*/libc\.so\.6$' "/proc/$RPID/maps")
	assert_eq "... Graphviz's namespace maps a second libc.so.6" 2 "$n"
	ask jmtp "$APORT" >"$RDIR/after.txt"
	missing=
	for f in $(hot_names "$RDIR/before.txt"); do
		grep -q " $f\$" "$RDIR/after.txt" || missing="$missing $f"
	done
	assert_eq "jmtp after the call graph: the hot chain's names (libc's, redis's) are before's" "" "$missing"
	assert_eq "... and no more hex frames than before" "$(hex_names "$RDIR/before.txt")" "$(hex_names "$RDIR/after.txt")"
	assert_grep "... libc's __libc_start_call_main among them" ' __libc_start_call_main$' "$RDIR/after.txt"
	p=$(ask jmfp "$APORT")
	"$JM4LW_PROF" -f text "$p" >"$RDIR/after.off" 2>&1
	assert_grep "jm4lw-prof on a dump written after it: libc named" ' __libc_start_call_main$' "$RDIR/after.off"
	assert_eq "... no hex frame" 0 "$(hex_names "$RDIR/after.off")"
	timeout $((60 * SLOW)) jeprof --text "$(command -v redis-server)" "$p" >"$RDIR/after.jeprof" 2>"$RDIR/after.jeprof.err"
	assert_grep "jeprof reads that dump and names libc" ' __libc_start_call_main$' "$RDIR/after.jeprof"
	kill -TERM "$RPID"
	wait_exit "$RPID" $((10 * SLOW)) || fail "redis-server exits on SIGTERM"
}

case_words
case_http
case_no_gvc
case_redis_exports_zmalloc
finish

#!/bin/bash
# jm4lw-prof --merge on real dumps of two processes of one program: two
# jeprof_hosts, each holding ~64 MiB through
# jm4lw_test_distinctive_alloc(), sampled at different periods, mapped
# by ASLR at different addresses. The merged profile must be the sum of
# the two, stack by stack (each collapsed line the sum of the two
# dumps' own lines), in every view that merges (text, collapsed, svg,
# pprof through go tool pprof); dumps of another build must get one
# warning line, on stderr and in the text view; the views that carry
# one dump as written must be refused.
#
# Then jm4lw's fan-out, jm4lw -H a,b --merge, against two real jm4lwd:
# each host's dump fetched over HTTP (GET /pprof/heap) and merged by
# jm4lw-prof, the same bytes as jm4lw-prof --merge on the dumps it kept;
# a host that does not answer is named and the others still merged.
#
#	bash merge.sh   (JEPROF_HOST, LEAK_HOST, JM4LW_PROF, JM4LWD,
#	                 JM4LW_CLIENT from ctest)
. "$(dirname "$0")/../lib.sh"

need go nc.openbsd timeout
[ -x "$JM4LW_PROF" ] || die "$JM4LW_PROF is not executable"
[ -x "$LEAK_HOST" ] || die "$LEAK_HOST is not executable"
[ -x "$JM4LWD" ] || die "$JM4LWD is not executable"
[ -x "$JM4LW_CLIENT" ] || die "$JM4LW_CLIENT is not executable"
# go tool pprof reads local files offline; it only wants somewhere to
# write.
export HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_BINARY_PATH=$T/nobin
mkdir -p "$HOME" "$GOCACHE" "$GOPATH" "$PPROF_BINARY_PATH"

FN=jm4lw_test_distinctive_alloc

# host NAME LG: a jeprof_host sampling from its start, every 2^LG bytes;
# its dump's path in $NAME.
host() {
	local name=$1 lg=$2 p
	start_jeprof_host "$name" \
		MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:"$lg" ||
		die "$name does not start"
	p=$(ask jmfp)
	[ -f "$p" ] || die "$name: jmfp wrote a dump (reply: $p)"
	printf -v "$name" '%s' "$p"
	stop_jeprof_host "$name: "
}

host A 17
host B 19

# main_start DUMP: where the main program's code is mapped.
main_start() {
	awk '$2 ~ /^r-xp/ && $6 ~ /jeprof_host$/ { sub(/-.*/, "", $1); print $1; exit }' "$1"
}

case_aslr() {
	local a b
	a=$(main_start "$A")
	b=$(main_start "$B")
	if [ -z "$a" ] || [ -z "$b" ]; then
		fail "both dumps map jeprof_host's code" "A: $a" "B: $b"
	elif [ "$a" = "$b" ]; then
		skip "ASLR is off here: both processes have jeprof_host at $a"
	else
		pass "ASLR: jeprof_host's code at $a in one process, $b in the other"
	fi
	assert_grep "the periods differ: A 2^17" '^heap_v2/131072$' "$A"
	assert_grep "the periods differ: B 2^19" '^heap_v2/524288$' "$B"
}

# sums FILE...: the collapsed lines of FILEs summed per stack, sorted.
sums() {
	cat "$@" | awk '{ v = $NF; $NF = ""; s[$0] += v }
		END { for (k in s) print k s[k] }' | sort
}

# Each stack of the merge is the sum of that stack in both dumps, each
# unsampled with its own period: a frame not lined up (ASLR) would name
# another function, or none, and the stacks would not match.
case_collapsed() {
	local d=$T/collapsed bad
	mkdir -p "$d"
	"$JM4LW_PROF" -f collapsed "$A" >"$d/a" &&
		"$JM4LW_PROF" -f collapsed "$B" >"$d/b" ||
		{
			fail "jm4lw-prof -f collapsed reads each dump"
			return
		}
	assert_cmd "--merge -f collapsed exits 0" \
		"$JM4LW_PROF" --merge -f collapsed -o "$d/m" "$A" "$B" || return
	assert_grep "the merge has $FN's stack" "$FN" "$d/m"
	sums "$d/a" "$d/b" >"$d/ab"
	sums "$d/m" >"$d/mm"
	# Each line is rounded to a byte on its own: one apart at most.
	bad=$(join -t $'\x01' <(awk '{ v = $NF; $NF = ""; print $0 "\x01" v }' "$d/ab" | sort) \
		<(awk '{ v = $NF; $NF = ""; print $0 "\x01" v }' "$d/mm" | sort) -a1 -a2 |
		awk -F '\x01' 'NF != 3 || $2 - $3 > 1 || $3 - $2 > 1')
	if [ -s "$d/mm" ] && [ -z "$bad" ]; then
		pass "every merged stack is the sum of the two dumps' ($(wc -l <"$d/mm") stacks)"
	else
		fail "every merged stack is the sum of the two dumps'" "$bad"
	fi
}

# flat FILE: the text table's flat bytes of $FN.
flat_mb() {
	awk -v fn="$FN" '$6 == fn { print $1 }' "$1"
}

# The text view: Total: is the sum; the ring of both processes (2 x 64
# MiB) within sampling error; no warning for one build.
case_text() {
	local d=$T/text a b m want
	mkdir -p "$d"
	"$JM4LW_PROF" "$A" >"$d/a"
	"$JM4LW_PROF" "$B" >"$d/b"
	assert_cmd "--merge (text) exits 0" \
		"$JM4LW_PROF" --merge -o "$d/m" "$A" "$B" || return
	"$JM4LW_PROF" --merge "$A" "$B" 2>"$d/err" >/dev/null
	assert_no_grep "one build: no warning" "warning" "$d/err"
	assert_no_grep "one build: no warning in the text" "^# warning" "$d/m"
	a=$(flat_mb "$d/a")
	b=$(flat_mb "$d/b")
	m=$(flat_mb "$d/m")
	want=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", a + b }')
	if awk -v m="$m" -v w="$want" 'BEGIN { exit !(m != "" && m - w <= 0.15 && w - m <= 0.15) }'; then
		pass "text: $FN's flat is the sum ($a + $b = $m MB)"
	else
		fail "text: $FN's flat is the sum" "A $a, B $b, merged $m"
	fi
	# 2 x 64 MiB = 134.2 MB, sampled: within a quarter.
	if awk -v m="$m" 'BEGIN { exit !(m > 100 && m < 168) }'; then
		pass "text: $FN holds 2 x 64 MiB within sampling error ($m MB)"
	else
		fail "text: $FN holds 2 x 64 MiB within sampling error" "$m MB"
	fi
}

# pprof: go tool pprof reads the merge, its total is the text's.
case_pprof() {
	local d=$T/pprof t g
	mkdir -p "$d"
	assert_cmd "--merge -f pprof exits 0" \
		"$JM4LW_PROF" --merge -f pprof -o "$d/m.pb.gz" "$A" "$B" || return
	if timeout 120 go tool pprof -raw "$d/m.pb.gz" >"$d/raw" 2>"$d/raw.err"; then
		pass "go tool pprof -raw reads the merge ($(grep -c '^ *[0-9-]* *[0-9-]*:' "$d/raw") samples)"
	else
		fail "go tool pprof -raw reads the merge" "$(head -5 "$d/raw.err")"
	fi
	timeout 120 go tool pprof -top -sample_index=inuse_space -unit=MB \
		"$d/m.pb.gz" >"$d/top" 2>&1
	t=$("$JM4LW_PROF" --merge "$A" "$B" | sed -n 's/^Total: \([0-9.]*\) MiB$/\1/p')
	assert_grep "go tool pprof -top: $FN" "$FN" "$d/top"
	g=$(sed -n 's/.* of \([0-9.]*\)MB total$/\1/p' "$d/top")
	if [ -n "$t" ] && [ -n "$g" ] &&
		# The text rounds to 0.1 MB, pprof to 0.01: up to 0.05 apart,
		# and 131.4 - 131.35 is a hair over 0.05 in floating point.
		awk -v g="$g" -v t="$t" 'BEGIN { exit !(g - t <= 0.0501 && t - g <= 0.0501) }'; then
		pass "go tool pprof -top's total is the text's Total: ($t MB)"
	else
		fail "go tool pprof -top's total is the text's Total:" \
			"text: $t MB" "$(grep total "$d/top")"
	fi
}

case_svg() {
	local d=$T/svg
	mkdir -p "$d"
	assert_cmd "--merge -f svg exits 0" \
		"$JM4LW_PROF" --merge -f svg -o "$d/m.svg" "$A" "$B" || return
	assert_grep "the flame graph has $FN" "$FN" "$d/m.svg"
}

# A dump whose main program is another file (another build ID): the
# merge warns once, on stderr and at the top of the text view.
case_builds() {
	local d=$T/builds n
	mkdir -p "$d"
	sed "s#  *$(realpath "$JEPROF_HOST")\$# $(realpath "$LEAK_HOST")#" "$B" >"$d/other.heap"
	assert_grep "the doctored dump maps leak_host" 'leak_host$' "$d/other.heap" || return
	"$JM4LW_PROF" --merge "$A" "$d/other.heap" >"$d/m" 2>"$d/err"
	n=$(grep -c 'warning: the dumps are of different builds' "$d/err")
	assert_eq "another build: one warning line on stderr" 1 "$n"
	assert_grep "it names both files" 'jeprof_host \(build [0-9a-f]+\) in .* but .*leak_host \(build [0-9a-f]+\) in' "$d/err"
	assert_grep "and the text view says it first" \
		'^# warning: the dumps are of different builds' <(head -1 "$d/m")
	for f in collapsed svg pprof; do
		"$JM4LW_PROF" --merge -f "$f" "$A" "$d/other.heap" >/dev/null 2>"$d/err.$f"
		assert_grep "-f $f: the warning on stderr" 'different builds' "$d/err.$f"
	done
}

# The same build at another path (a release directory per version, one
# file): one object, known by its build ID, so one mapping in pprof and
# the stacks still summed; no warning. A library only one dump maps
# (another file, the other dump has none) is placed past the others and
# named by its own file.
case_paths() {
	local d=$T/paths n
	mkdir -p "$d/moved"
	cp "$JEPROF_HOST" "$d/moved/jeprof_host"
	sed "s#  *$(realpath "$JEPROF_HOST")\$# $d/moved/jeprof_host#" "$B" >"$d/moved.heap"
	assert_grep "the doctored dump maps the copy" "$d/moved/jeprof_host\$" "$d/moved.heap" || return
	"$JM4LW_PROF" --merge -f collapsed "$A" "$d/moved.heap" >"$d/m" 2>"$d/err"
	assert_no_grep "the same build elsewhere: no warning" warning "$d/err"
	if [ -s "$T/collapsed/m" ] && cmp -s "$d/m" "$T/collapsed/m"; then
		pass "the same build elsewhere: the merge is the one of the two dumps as taken"
	else
		fail "the same build elsewhere: the merge is the one of the two dumps as taken" \
			"$(diff "$d/m" "$T/collapsed/m" | head -5)"
	fi
	"$JM4LW_PROF" --merge -f pprof -o "$d/m.pb.gz" "$A" "$d/moved.heap"
	timeout 120 go tool pprof -raw "$d/m.pb.gz" >"$d/raw" 2>&1
	n=$(sed -n '/^Mappings/,$p' "$d/raw" | grep -c 'jeprof_host ')
	assert_eq "the same build elsewhere: one mapping for it in pprof" 1 "$n"
}

# What cannot be merged is refused with one clear line.
case_refused() {
	local d=$T/refused f
	mkdir -p "$d"
	for f in symbolized raw; do
		"$JM4LW_PROF" --merge -f "$f" "$A" "$B" >"$d/out" 2>"$d/err"
		assert_eq "-f $f: refused (exit 2)" 2 "$?"
		assert_grep "-f $f: says why" "--merge does not go with -f $f" "$d/err"
		assert_eq "-f $f: nothing on stdout" 0 "$(wc -c <"$d/out")"
	done
	"$JM4LW_PROF" --merge --base "$A" "$A" "$B" >/dev/null 2>"$d/err"
	assert_eq "--base: refused (exit 2)" 2 "$?"
	"$JM4LW_PROF" -f symbolized -o "$d/sym.heap" "$A"
	"$JM4LW_PROF" --merge "$d/sym.heap" "$B" >/dev/null 2>"$d/err"
	assert_eq "a symbolized input: exit 1" 1 "$?"
	assert_grep "a symbolized input: says why" "symbolized profile cannot be merged" "$d/err"
	"$JM4LW_PROF" "$A" "$B" >/dev/null 2>"$d/err"
	assert_grep "two dumps without --merge: points to it" "--merge sums several" "$d/err"
	# A FIFO among the inputs is refused at once, never waited on; a
	# symlink is followed (the user named it): the merge is its target's.
	mkfifo "$d/fifo"
	timeout 20 "$JM4LW_PROF" --merge -f collapsed "$A" "$d/fifo" >/dev/null 2>"$d/err"
	assert_eq "a FIFO: refused (exit 1), not waited on" 1 "$?"
	assert_grep "... saying it is not a regular file" "fifo: not a regular file\$" "$d/err"
	ln -s "$B" "$d/link.heap"
	"$JM4LW_PROF" --merge -f collapsed "$A" "$d/link.heap" >"$d/link.out" 2>"$d/err"
	"$JM4LW_PROF" --merge -f collapsed "$A" "$B" >"$d/direct.out" 2>&1
	if [ -s "$d/link.out" ] && cmp -s "$d/link.out" "$d/direct.out"; then
		pass "a symlink to a dump: followed, the merge is its target's"
	else
		fail "a symlink to a dump: followed, the merge is its target's" "$(head -3 "$d/err")"
	fi
}

# http_port DIR: the HTTP port a jm4lwd logged in DIR/jm4lwd.log.
http_port() {
	sed -n 's/^jm4lwd: HTTP listening on .*:\([0-9]*\)$/\1/p' "$1/jm4lwd.log" | head -1
}

case_fanout() {
	local d=$T/fanout h1 h2 p1 p2 dead t1 t2 tm
	mkdir -p "$d/one" "$d/two" "$d/tmp"
	for x in one two; do
		start_daemon -C "$d/$x" -e MALLOC_CONF=prof:true,lg_prof_sample:10 -- \
			-l 127.0.0.1:0 -D "$d/$x" || return
		printf -v "p_$x" '%s' "$PID"
	done
	h1=$(http_port "$d/one")
	h2=$(http_port "$d/two")
	[ -n "$h1" ] && [ -n "$h2" ] || {
		fail "both jm4lwd serve HTTP" "$h1 $h2"
		return
	}
	dead=$(free_port)
	TMPDIR=$d/tmp timeout 120 "$JM4LW_CLIENT" -t 60 -H "127.0.0.1:$h1,127.0.0.1:$h2" \
		--merge -f collapsed --dumps "$d/kept" >"$d/fan" 2>"$d/fan.err"
	assert_eq "jm4lw -H a,b --merge -f collapsed exits 0" 0 "$?" ||
		show_tail "$d/fan.err"
	assert_eq "--dumps kept one dump per host" 2 "$(ls "$d/kept" | wc -l)"
	p1=$(ls "$d/kept" | head -1)
	p2=$(ls "$d/kept" | tail -1)
	assert_eq "each a heap_v2 dump" "heap_v2/ heap_v2/" \
		"$(head -c 8 "$d/kept/$p1") $(head -c 8 "$d/kept/$p2")"
	if [ "$(main_of "$d/kept/$p1")" != "$(main_of "$d/kept/$p2")" ]; then
		pass "of two processes (jm4lwd mapped at two addresses)"
	else
		skip "ASLR is off here: both jm4lwd mapped at one address"
	fi
	"$JM4LW_PROF" --merge -f collapsed "$d/kept/$p1" "$d/kept/$p2" >"$d/prof"
	if [ -s "$d/fan" ] && cmp -s "$d/fan" "$d/prof"; then
		pass "the fan-out's merge is jm4lw-prof --merge's on those dumps ($(wc -l <"$d/fan") stacks)"
	else
		fail "the fan-out's merge is jm4lw-prof --merge's on those dumps" \
			"$(diff "$d/fan" "$d/prof" | head -5)"
	fi
	t1=$("$JM4LW_PROF" -f collapsed "$d/kept/$p1" | awk '{ s += $NF } END { print s + 0 }')
	t2=$("$JM4LW_PROF" -f collapsed "$d/kept/$p2" | awk '{ s += $NF } END { print s + 0 }')
	tm=$(awk '{ s += $NF } END { print s + 0 }' "$d/fan")
	if [ "$tm" -gt 0 ] && [ $((tm - t1 - t2)) -le 64 ] && [ $((t1 + t2 - tm)) -le 64 ]; then
		pass "the fan-out's total is the two hosts' ($t1 + $t2 = $tm B)"
	else
		fail "the fan-out's total is the two hosts'" "$t1 + $t2 vs $tm"
	fi
	assert_eq "no temporary directory left" 0 "$(ls "$d/tmp" | wc -l)"
	sleep 1.2 # dump_min_interval
	TMPDIR=$d/tmp timeout 120 "$JM4LW_CLIENT" -t 60 -H "127.0.0.1:$h1,127.0.0.1:$dead" \
		--merge -f pprof -o "$d/fan.pb.gz" 2>"$d/dead.err"
	assert_eq "a host that does not answer: exit 2" 2 "$?"
	assert_grep "... named on stderr" "127.0.0.1:$dead: Connection refused" "$d/dead.err"
	if timeout 120 go tool pprof -top "$d/fan.pb.gz" >"$d/top" 2>&1; then
		pass "... the others merged all the same: go tool pprof reads it"
	else
		fail "... the others merged all the same: go tool pprof reads it" "$(head -3 "$d/top")"
	fi
	assert_eq "... and no temporary directory left" 0 "$(ls "$d/tmp" | wc -l)"
	sleep 1.2
	"$JM4LW_CLIENT" -H "127.0.0.1:$h1" --merge -f raw >/dev/null 2>"$d/raw.err"
	assert_eq "--merge -f raw: refused by jm4lw-prof (exit 2)" 2 "$?"
	"$JM4LW_CLIENT" -H "127.0.0.1:$h1" --merge ruok >/dev/null 2>&1
	assert_eq "--merge with words: usage (exit 2)" 2 "$?"
	PID=$p_one
	stop_daemon
	PID=$p_two
	stop_daemon
}

# standin KIND: standin.py KIND serving the dump $A over HTTP, gone wrong
# as KIND says (http-cut, http-long, http-head-cut); its port in $SPORT.
standin() {
	local log=$T/standin-$1.log pid _
	: >"$log"
	python3 "$TESTS_DIR/integration/standin.py" "$1" --big "$A" >"$log" 2>&1 &
	pid=$!
	track "$pid"
	SPORT=
	for _ in $(seq 200); do
		SPORT=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$log")
		[ -n "$SPORT" ] && return 0
		_alive "$pid" || break
		sleep 0.05
	done
	fail "standin.py $1 listens" "$(cat "$log")"
	return 1
}

# A fetch gone wrong says what happened and merges nothing from it: a
# body cut short of its Content-Length, a whole body whose
# Content-Length is 1000 bytes too large (or too small), a connection
# closed inside the header.
case_fetch_cut() {
	local d=$T/fetch size
	mkdir -p "$d"
	size=$(wc -c <"$A")
	fetch_from http-cut "$d" cut --dumps "$d/cut" || return
	assert_eq "a body cut at half: exit 2" 2 "$rc"
	assert_grep "... says the connection closed after N of M bytes" \
		"^jm4lw: 127\.0\.0\.1:$SPORT: GET /pprof/heap: connection closed after $((size / 2)) of $size bytes of the body \(its Content-Length\)\$" "$d/cut.err"
	assert_eq "... and keeps no dump of it" 0 "$(ls "$d/cut" 2>/dev/null | wc -l)"
	fetch_from http-long "$d" long --dumps "$d/long" || return
	assert_eq "a Content-Length 1000 bytes too large: refused (exit 2)" 2 "$rc"
	assert_grep "... says the connection closed short of it" \
		"connection closed after $size of $((size + 1000)) bytes of the body" "$d/long.err"
	assert_eq "... and keeps no dump of it" 0 "$(ls "$d/long" 2>/dev/null | wc -l)"
	fetch_from http-short "$d" short || return
	assert_eq "a Content-Length 1000 bytes too small: refused (exit 2)" 2 "$rc"
	assert_grep "... says the body is longer than announced" \
		"a body of $size bytes, longer than its Content-Length of $((size - 1000))\$" "$d/short.err"
	fetch_from http-head-cut "$d" head || return
	assert_eq "a connection closed inside the header: exit 2" 2 "$rc"
	assert_grep "... says so" \
		"GET /pprof/heap: connection closed after 28 bytes, inside the HTTP header\$" "$d/head.err"
}

# fetch_from MODE DIR NAME [ARG...]: jm4lw --merge from a standin.py in
# MODE, its output in DIR/NAME.out and .err, its exit status in rc.
fetch_from() {
	standin "$1" || return
	timeout 60 "$JM4LW_CLIENT" -t 30 -H "127.0.0.1:$SPORT" --merge "${@:4}" \
		>"$2/$3.out" 2>"$2/$3.err"
	rc=$?
}

# main_of DUMP: where jm4lwd's code is mapped in DUMP.
main_of() {
	awk '$2 ~ /^r-xp/ && $6 ~ /jm4lwd$/ { sub(/-.*/, "", $1); print $1; exit }' "$1"
}

case_aslr
case_collapsed
case_text
case_pprof
case_svg
case_builds
case_paths
case_refused
case_fanout
case_fetch_cut
finish

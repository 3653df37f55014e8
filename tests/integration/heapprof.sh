#!/bin/bash
# The profile pipeline's first step against jeprof: prof/heapprof.c
# (through tests/host/heapprof_dump) must read a real heap_v2 dump to the
# same unsampled totals jeprof prints ("Total:", in bytes and in objects),
# skip lines it does not know, and refuse a cut or foreign file with one
# clear line.
#
# Then jm4lw-prof, the offline tool, against jeprof on the same dumps:
# the same Total: lines, the same functions with the same flat figures at
# the top of the text table, collapsed stacks that add up to the total,
# and a symbolized profile jeprof reads alone to the same table.
#
#	bash heapprof.sh   (BENCH_HOST, HEAPPROF_DUMP, JEPROF_HOST, JM4LW_PROF
#	                    from ctest)
. "$(dirname "$0")/../lib.sh"

need jeprof nc.openbsd timeout

# jm4lw-prof built without libdw (JM4LW_SYMBOLIZER=elf, from ctest) reads
# symbol tables only, no DWARF inline frames: its peer is then jeprof
# without addr2line, which names addresses through nm alone.
if [ "${JM4LW_SYMBOLIZER:-libdw}" = elf ]; then
	JEPROF_TOOLS="addr2line:/bin/false,$(dirname "$(command -v nm)")/"
	export JEPROF_TOOLS
	echo "# ELF symbol tables only: jeprof with nm alone ($JEPROF_TOOLS)"
fi
[ -x "$HEAPPROF_DUMP" ] || die "$HEAPPROF_DUMP is not executable"
[ -x "$BENCH_HOST" ] || die "$BENCH_HOST is not executable"
[ -x "$JM4LW_PROF" ] || die "$JM4LW_PROF is not executable"

# top FILE: the rows of a text table with a flat figure above 0, the
# first 10, as "flat function" with names as jeprof shows them: C++ names
# demangled and without their argument lists (jeprof's short names),
# symbol versions cut.
top() {
	awk 'NR > 1 && $1 + 0 > 0 { $2 = $3 = $4 = $5 = ""; print }' "$1" |
		head -n 10 | c++filt |
		sed -E -e 's/@@[^ ]*//' -e 's/([^ ])\([^()]*\)/\1/g' -e 's/  */ /g'
}

# moved_away PROFILE: the profile as it would be read on another machine,
# every mapping's file under a directory that does not exist.
moved_away() {
	awk '/^MAPPED_LIBRARIES:/ { m = 1; print; next }
		m && $6 ~ /^\// { sub(/ \//, " /moved-away/") } { print }' "$1"
}

# same_tables NAME BINARY PROFILE: jm4lw-prof's text and jeprof's.
same_tables() {
	local name=$1 bin=$2 prof=$3 d=$T/$1
	mkdir -p "$d"
	jeprof_memo --text "$bin" "$prof" >"$d/jeprof.txt"
	# same_totals asked this one already: its answer, not a second run.
	jeprof_memo --text --inuse_objects "$bin" "$prof" >"$d/jeprof.objs"
	# --no-fold: jeprof's flat is the leaf's own, allocation wrappers
	# included.
	assert_cmd "$name: jm4lw-prof -f text exits 0" \
		"$JM4LW_PROF" --no-fold -o "$d/ours.txt" "$prof" || return
	"$JM4LW_PROF" --no-fold --objects "$prof" >"$d/ours.objs"
	assert_eq "$name: jm4lw-prof's Total: line is jeprof's" \
		"$(head -1 "$d/jeprof.txt")" "$(jeprof_total "$d/ours.txt")"
	assert_eq "$name: the same in objects" \
		"$(head -1 "$d/jeprof.objs")" "$(head -1 "$d/ours.objs")"
	top "$d/jeprof.txt" >"$d/jeprof.top"
	# [stripped-static]: jeprof names a function no symbol contains
	# after the nearest symbol below it; ours is object+0xSTART.
	as_jeprof "$prof" <"$d/ours.txt" >"$d/ours.jp"
	top "$d/ours.jp" >"$d/ours.top"
	if [ -s "$d/ours.top" ] && cmp -s "$d/jeprof.top" "$d/ours.top"; then
		pass "$name: the same functions and flat figures at the top ($(head -1 "$d/ours.top"))"
	else
		fail "$name: the same functions and flat figures at the top" \
			"jeprof:" "$(cat "$d/jeprof.top")" "jm4lw-prof:" \
			"$(cat "$d/ours.top")"
	fi
	# The symbolized profile: jeprof reads it without the program.
	assert_cmd "$name: jm4lw-prof -f symbolized exits 0" \
		"$JM4LW_PROF" -f symbolized -o "$d/sym.heap" "$prof" || return
	# libjemalloc's internal frames have no name jeprof's skip list
	# knows (libjemalloc.so.2+0x...): the file we write has them cut
	# off every stack already, as our own formats do.
	(cd "$d" && timeout 300 jeprof --text sym.heap) 2>/dev/null |
		as_jeprof "$prof" >"$d/jeprof-sym.txt"
	(cd "$d" && timeout 300 jeprof --collapsed sym.heap) \
		>"$d/jeprof-sym.col" 2>/dev/null
	if [ -s "$d/jeprof-sym.col" ] &&
		! grep -q 'libjemalloc' "$d/jeprof-sym.col"; then
		pass "$name: jeprof --collapsed on the symbolized profile: no libjemalloc frame in any of its $(wc -l <"$d/jeprof-sym.col") stacks"
	else
		fail "$name: jeprof --collapsed on the symbolized profile: no libjemalloc frame" \
			"$(grep -m3 libjemalloc "$d/jeprof-sym.col" || echo "no stacks")"
	fi
	assert_eq "$name: jeprof reading the symbolized profile alone prints the same Total:" \
		"$(head -1 "$d/jeprof.txt")" "$(head -1 "$d/jeprof-sym.txt")"
	top "$d/jeprof-sym.txt" >"$d/jeprof-sym.top"
	if [ -s "$d/jeprof-sym.top" ] && cmp -s "$d/jeprof.top" "$d/jeprof-sym.top"; then
		pass "$name: ... and the same functions at the top"
	else
		fail "$name: jeprof on the symbolized profile: the same functions at the top" \
			"with the program:" "$(cat "$d/jeprof.top")" \
			"symbolized, without:" "$(cat "$d/jeprof-sym.top")"
	fi
	# ... and jm4lw-prof reads it back to the same tables, inline marks
	# and all, here and where the program and libraries are not: a copy
	# whose mappings name paths that do not exist.
	"$JM4LW_PROF" --no-fold "$d/sym.heap" >"$d/sym.txt" 2>&1
	assert_eq "$name: jm4lw-prof -f text on its symbolized profile: the same table" \
		"$(cat "$d/ours.txt")" "$(cat "$d/sym.txt")"
	"$JM4LW_PROF" --no-fold --objects "$d/sym.heap" >"$d/sym.objs" 2>&1
	assert_eq "$name: ... and in objects" \
		"$(cat "$d/ours.objs")" "$(cat "$d/sym.objs")"
	moved_away "$d/sym.heap" >"$d/elsewhere.sym.heap"
	moved_away "$prof" >"$d/elsewhere.heap"
	"$JM4LW_PROF" --no-fold "$d/elsewhere.sym.heap" >"$d/elsewhere.sym.txt" 2>&1
	"$JM4LW_PROF" --no-fold "$d/elsewhere.heap" >"$d/elsewhere.txt" 2>&1
	if cmp -s "$d/ours.txt" "$d/elsewhere.sym.txt" &&
		! cmp -s "$d/ours.txt" "$d/elsewhere.txt"; then
		pass "$name: ... without the program and its libraries (the raw profile then is hex)"
	else
		fail "$name: the symbolized profile reads the same without the program" \
			"$(diff "$d/ours.txt" "$d/elsewhere.sym.txt" | head -5)" \
			"raw profile there: $(sed -n 2p "$d/elsewhere.txt")"
	fi
	"$JM4LW_PROF" -f collapsed "$prof" >"$d/ours.collapsed"
	"$JM4LW_PROF" -f collapsed "$d/sym.heap" >"$d/sym.collapsed"
	assert_eq "$name: collapsed stacks from the symbolized profile: the same" \
		"$(cat "$d/ours.collapsed")" "$(cat "$d/sym.collapsed")"
	# Symbolized again: the same file (its profile part, not its symbols
	# nested in another's).
	"$JM4LW_PROF" -f symbolized "$d/sym.heap" >"$d/sym2.heap"
	assert_eq "$name: a symbolized profile symbolized again is itself" \
		"$(sort "$d/sym.heap")" "$(sort "$d/sym2.heap")"
	assert_cmd "$name: collapsed stacks add up to the total (1 B a line)" \
		awk -v t="$("$HEAPPROF_DUMP" "$prof" | awk '$1 == "inuse_space" { print $2 }')" \
		'{ s += $NF; n++ } END { d = s - t; if (d < 0) d = -d; exit !(n > 0 && d <= n) }' \
		"$d/ours.collapsed"
}

# A big profile: bench_host's 64 MiB over chains of 8-16 frames, sampled
# every 8 KiB: thousands of distinct stacks.
case_many_stacks() {
	local p
	bench_dump many_stacks || return
	p=$DUMP
	assert_cmd "bench_host: the profile has over 1000 stacks" \
		test "$(grep -c '^@' "$p")" -gt 1000
	same_totals "bench_host" "$BENCH_HOST" "$p"
	same_tables "bench_host" "$BENCH_HOST" "$p"
	# The binary moved since the dump: --binary says where it is now.
	cp "$BENCH_HOST" "$T/moved_host"
	"$JM4LW_PROF" --binary "$T/moved_host" "$p" >"$T/moved.txt"
	assert_eq "--binary: the same table from a copy of the program" \
		"$(cat "$T/bench_host/ours.txt")" "$(cat "$T/moved.txt")"
	cp "$p" "$T/big.heap"
}

# Lines the parser does not know are skipped: ClickHouse's jemalloc fork
# adds "f:" lines; the totals stay jeprof's.
case_unknown_lines() {
	[ -s "$T/big.heap" ] || return
	awk '/^@/ { print; print "  f: 0x1 0x2"; next } { print }' \
		"$T/big.heap" >"$T/fork.heap"
	a=$("$HEAPPROF_DUMP" "$T/big.heap" | grep inuse_space)
	b=$("$HEAPPROF_DUMP" "$T/fork.heap" | grep inuse_space)
	assert_eq "unknown f: lines are skipped, the totals unchanged" "$a" "$b"
}

# Cut short, or not a profile at all: one line, exit 1, no crash.
case_bad_files() {
	local out rc
	[ -s "$T/big.heap" ] || return
	head -c $(($(stat -c %s "$T/big.heap") / 2)) "$T/big.heap" >"$T/cut.heap"
	out=$("$HEAPPROF_DUMP" "$T/cut.heap" 2>&1)
	rc=$?
	assert_eq "a profile cut in half: exit 1" 1 "$rc"
	assert_grep "a profile cut in half: one line saying so" \
		"^heapprof_dump: $T/cut.heap: the profile is cut short \\(" \
		<(printf '%s\n' "$out")
	assert_eq "a profile cut in half: one line" 1 "$(printf '%s\n' "$out" | wc -l)"
	head -c 4096 /dev/urandom >"$T/junk.heap"
	out=$("$HEAPPROF_DUMP" "$T/junk.heap" 2>&1)
	rc=$?
	assert_eq "random bytes: exit 1" 1 "$rc"
	assert_eq "random bytes: one line saying so" \
		"heapprof_dump: $T/junk.heap: not a jemalloc heap profile (no heap_v2/ header)" \
		"$out"
	out=$("$JM4LW_PROF" "$T/cut.heap" 2>&1)
	rc=$?
	assert_eq "jm4lw-prof on a cut profile: exit 1, one line" \
		"1 jm4lw-prof: $T/cut.heap: the profile is cut short" \
		"$rc ${out%% (*}"
	"$JM4LW_PROF" -f nosuch "$T/big.heap" >/dev/null 2>&1
	assert_eq "jm4lw-prof -f with an unknown format: exit 2" 2 "$?"
	"$JM4LW_PROF" >/dev/null 2>&1
	assert_eq "jm4lw-prof without a profile: exit 2" 2 "$?"
}

# The embedding host's own profile, read from its dump directory.
case_jeprof_host() {
	local p
	start_jeprof_host heapprof_host \
		MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:16 || return
	sleep 1
	p=$(ask jmfp)
	[ -s "$p" ] || { fail "jeprof_host: jmfp wrote a profile" "$p"; return; }
	same_totals "jeprof_host" "$JEPROF_HOST" "$p"
	same_tables "jeprof_host" "$JEPROF_HOST" "$p"
	stop_jeprof_host
}

# Threads with names. jemalloc 5.3 writes a thread's name
# after its counts in the header: with prof_sys_thread_name, the system's
# names (here the program's, and one with blanks set by
# pthread_setname_np); without it, those given by thread.prof.name (here
# one with blanks). jeprof reads such a dump; so must heapprof, jm4lw-prof
# and the host's own words, with the names kept.
#
# thread_names NAME MALLOC_CONF THREAD_NAME [tables]: one host, one dump.
thread_names() {
	local p out what=$1 conf=$2 name=$3
	start_jeprof_host "$what" JM4LW_TEST_THREAD_NAME="$name" \
		MALLOC_CONF="$conf" || return
	p=$(ask jmfp)
	[ -s "$p" ] || { fail "$what: jmfp wrote a profile" "$p"; stop_jeprof_host; return; }
	assert_grep "$what: the dump names the thread \"$name\"" \
		"^  t[0-9]+: [0-9]+: [0-9]+ \\[[0-9]+: [0-9]+\\] $name\$" "$p"
	out=$("$HEAPPROF_DUMP" "$p" 2>&1)
	assert_grep "$what: heapprof keeps the name with its blanks" \
		"^thread [0-9]+ [1-9][0-9]* $name\$" <(printf '%s\n' "$out")
	assert_grep "$what: ... and each stack's thread lines" \
		"^thread_lines [1-9]" <(printf '%s\n' "$out")
	same_totals "$what" "$JEPROF_HOST" "$p"
	[ "${4:-}" = tables ] && same_tables "$what" "$JEPROF_HOST" "$p"
	out=$(ask_when_due jmtp)
	assert_no_grep "$what: jmtp in the host reads its own dump" \
		'^error: ' <(printf '%s\n' "$out")
	assert_grep "$what: ... and shows the named thread's allocations" \
		'jm4lw_test_distinctive_alloc' <(printf '%s\n' "$out")
	stop_jeprof_host
}

case_thread_names() {
	thread_names sys_thread_names \
		prof:true,prof_active:true,lg_prof_sample:16,prof_sys_thread_name:true \
		"jm4lw thread 2" tables
	assert_grep "sys_thread_names: ... and the program's own name" \
		"^  t[0-9]+: [0-9]+: [0-9]+ \\[[0-9]+: [0-9]+\\] jeprof_host\$" \
		"$(ls "$D"/dumps/*.heap | head -1)"
	thread_names prof_thread_names \
		prof:true,prof_active:true,lg_prof_sample:16 "jm4lw named thread 2"
}

# The leak hunt: two dumps of jeprof_host leaking ~25 MiB/s, and
# jm4lw-prof --base against jeprof --base: the same Total: of the growth
# and the same functions at the top.
case_base() {
	local a b d=$T/base
	mkdir -p "$d"
	leak_dumps || return
	a=$DUMP_A
	b=$DUMP_B
	timeout 300 jeprof --text --base="$a" "$JEPROF_HOST" "$b" \
		>"$d/jeprof.txt" 2>/dev/null
	assert_cmd "--base: jm4lw-prof --base exits 0" \
		"$JM4LW_PROF" --no-fold --base "$a" -o "$d/ours.txt" "$b" || return
	assert_eq "--base: the growth's Total: is jeprof's" \
		"$(head -1 "$d/jeprof.txt")" "$(jeprof_total "$d/ours.txt")"
	top "$d/jeprof.txt" >"$d/jeprof.top"
	as_jeprof "$b" <"$d/ours.txt" >"$d/ours.jp" # [stripped-static]
	top "$d/ours.jp" >"$d/ours.top"
	if grep -q jm4lw_test_leaky_function "$d/ours.top" &&
		cmp -s "$d/jeprof.top" "$d/ours.top"; then
		pass "--base: the leak at the top, as jeprof has it ($(head -1 "$d/ours.top"))"
	else
		fail "--base: the same growth at the top as jeprof --base" \
			"jeprof:" "$(cat "$d/jeprof.top")" "jm4lw-prof:" \
			"$(cat "$d/ours.top")"
	fi
	# Collapsed --base: difffolded's "old new" columns, whose growth adds
	# up to the text report's Total.
	"$JM4LW_PROF" -f collapsed --base "$a" "$b" >"$d/diff.collapsed"
	assert_no_grep "--base -f collapsed: every line is 'frames old new'" \
		'^$| [^0-9 ]+ [0-9]+$| [0-9]+ [^0-9 ]+$|^[^ ]*$' "$d/diff.collapsed"
	assert_eq "--base -f collapsed: the growth adds up to the text Total" \
		"$("$JM4LW_PROF" --base "$a" "$b" | sed -n 's/^Total: \(.*\) MiB$/\1/p')" \
		"$(awk '{ s += $NF - $(NF - 1) } END { printf "%.1f", s / 1048576 }' "$d/diff.collapsed")"
	"$JM4LW_PROF" -f symbolized --base "$a" "$b" >/dev/null 2>&1
	assert_eq "--base with -f symbolized: exit 2 (it carries the dump as is)" 2 "$?"
	# Between symbolized profiles and raw dumps: stacks are addresses in
	# both, the names come from whichever has them.
	"$JM4LW_PROF" -f symbolized "$a" >"$d/a.sym"
	"$JM4LW_PROF" -f symbolized "$b" >"$d/b.sym"
	"$JM4LW_PROF" --no-fold --base "$d/a.sym" "$b" >"$d/sym-raw.txt" 2>&1
	assert_eq "--base a symbolized profile: the same growth table" \
		"$(cat "$d/ours.txt")" "$(cat "$d/sym-raw.txt")"
	"$JM4LW_PROF" --no-fold --base "$d/a.sym" "$d/b.sym" >"$d/sym-sym.txt" 2>&1
	assert_eq "--base between two symbolized profiles: the same growth table" \
		"$(cat "$d/ours.txt")" "$(cat "$d/sym-sym.txt")"
	"$JM4LW_PROF" --base "$a" "$d/b.sym" >"$d/raw-sym.txt" 2>&1
	assert_eq "--base a raw dump, from a symbolized profile: the same Total:" \
		"$(head -1 "$d/ours.txt")" "$(head -1 "$d/raw-sym.txt")"
	stop_jeprof_host
}

case_many_stacks
case_thread_names
case_base
case_unknown_lines
case_bad_files
case_jeprof_host
finish

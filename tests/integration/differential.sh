#!/bin/bash
# jm4lw-prof against jeprof on real programs, not test hosts written for
# it: Debian's redis-server with the preload agent inside (stripped, its
# libraries stripped, libjemalloc stripped), and tests/host/cxx_host, a C++
# program of templates, STL containers and an inlined allocating function,
# built -O2 -g. For each:
#   - the same Total: as jeprof --show_bytes --text, to the byte, and the
#     same Total: line as jeprof --text (MB) in jm4lw-prof's own table;
#   - -f collapsed adds up to what jeprof --collapsed adds up to;
#   - --base: the same Total: of the growth, to the byte and in MB;
#   - the same ten functions with the same flat figures at the top of the
#     table (the growth's too), once names are put in one form: c++filt,
#     symbol versions off, then jeprof's own ShortFunctionName (argument
#     lists and template arguments off, a leading return type off), flat
#     summed per name (jeprof merges what that form makes equal);
#   - for the program's own functions (full symbols and DWARF, where
#     jeprof's addr2line -i works), the same cum figures too.
#
# Where jeprof is wrong, the comparison is made against what jeprof would
# print without its error, and the case is named here and in the output:
#
# [stripped-jemalloc] Debian's libjemalloc.so.2 is stripped: jeprof names
#   its internal frames after the nearest exported symbol,
#   malloc_usable_size, and its skip list (malloc, operator new, ...)
#   cannot cut them when the entry point tail-calls into them (libjemalloc's
#   operator new does: every C++ allocation then is "malloc_usable_size",
#   99.9 % of cxx_host's flat). jm4lw-prof cuts every frame in the shared
#   library that defines mallctl. The flat and cum comparisons therefore run
#   jeprof on a copy of the dump with the frames inside libjemalloc's
#   executable mappings removed from every stack (the new leaf written as
#   its address - 1, since jeprof looks a leaf up as is and a caller at
#   - 1). Totals and collapsed sums are held against jeprof on the dump as
#   it is.
# [binutils-inline-static] binutils addr2line (2.40), which jeprof runs,
#   names an inline frame of a C++ function without DW_AT_linkage_name (a
#   static function, reached through DW_AT_abstract_origin then
#   DW_AT_specification) after the function it was inlined into: jeprof
#   shows "cxxhost::make_buffers (inline)" for cxx_host's inlined_buffer()
#   inlined into make_buffers(); llvm-addr2line and eu-addr2line say
#   inlined_buffer, as jm4lw-prof does. Compared under jeprof's name.
# [stripped-static] Where no symbol contains an address (a stripped
#   object's static functions and GCC clones), jeprof names it after the
#   nearest symbol below, a function it is not part of; jm4lw-prof names
#   it object+0xSTART. The tables are compared with ours put
#   under jeprof's names (as_jeprof in lib.sh: the same nearest symbol
#   below, from the object's nm table). tests/integration/names.sh holds
#   our names to the unstripped objects instead.
# [stripped-no-inline] For an object whose symbol table nm cannot read (a
#   stripped library whose DWARF is in a separate debug file, as libc6-dbg
#   gives libc and ld.so), jeprof finds no _fini to separate addr2line -i's
#   answers with, runs addr2line without -i and keeps each address's
#   innermost function only: "__bindtextdomain" and "call_init (inline)"
#   vanish from its stacks. Flat is the same (the innermost is the leaf);
#   cum differs there, so cum is compared for the program's own functions
#   only.
# [demangle] libstdc++'s __cxa_demangle (GCC 12) refuses some names
#   binutils' c++filt reads (a generic lambda's operator() over a
#   parameter pack, std::__invoke_impl and std::apply of it); jm4lw-prof
#   demangles with libiberty's demangler, c++filt's, where it is built
#   with it: then no row of ours is left mangled. c++filt on
#   both sides stays as normalization.
#
#	bash differential.sh   (HEAPPROF_DUMP, JM4LW_PROF, CXX_HOST,
#	                        JM4LW_RUN from ctest)
. "$(dirname "$0")/../lib.sh"

need jeprof c++filt perl redis-server redis-cli redis-benchmark nc.openbsd \
	timeout
for b in "$HEAPPROF_DUMP" "$JM4LW_PROF" "$CXX_HOST" "$JM4LW_RUN"; do
	[ -x "$b" ] || die "$b is not executable"
done
# One sample per 32 KiB: thousands of samples over tens of MB.
LG_SAMPLE=15

# trim PROFILE OUT: PROFILE with the frames in libjemalloc's executable
# mappings cut off each stack ([stripped-jemalloc] above).
trim() {
	perl -e '
		use strict; use warnings; no warnings "portable";
		my @lines = <STDIN>;
		my ($maps, @r) = (0);
		for (@lines) {
			$maps = 1, next if /^MAPPED_LIBRARIES:/;
			next unless $maps;
			my ($lo, $hi, $path) =
			    /^([0-9a-f]+)-([0-9a-f]+)\s+r.x.\s.*\s(\S+)$/ or next;
			push @r, [hex($lo), hex($hi)] if $path =~ /libjemalloc/;
		}
		for (@lines) {
			if (/^@ (.*)$/) {
				my @a = split " ", $1;
				my $i = 0;
				while ($i < $#a) {
					my $pc = hex($a[$i]);
					last unless grep { $pc >= $_->[0] && $pc < $_->[1] } @r;
					$i++;
				}
				if ($i > 0) {
					my @k = @a[$i .. $#a];
					$k[0] = sprintf("0x%x", hex($k[0]) - 1);
					$_ = "@ @k\n";
				}
			}
			print;
		}' <"$1" >"$2"
}

# compare NAME BINARY PROFILE [BASE]: jm4lw-prof against jeprof on PROFILE
# (its growth since BASE).
compare() {
	local name=$1 bin=$2 prof=$3 base=${4:-} d=$T/$1 jb=() ob=() n sums
	mkdir -p "$d"
	[ -n "$base" ] && jb=(--base="$d/base.trim") ob=(--base "$base")
	same_totals "$name" "$bin" "$prof" "$base"
	timeout 300 jeprof --text ${base:+--base="$base"} "$bin" "$prof" \
		>"$d/jeprof.txt" 2>/dev/null
	# --no-fold: jeprof's flat is the leaf's own, allocation wrappers
	# (zmalloc) included.
	assert_cmd "$name: jm4lw-prof -f text --no-fold exits 0" \
		"$JM4LW_PROF" --no-fold "${ob[@]}" -o "$d/ours.txt" "$prof" || return
	assert_eq "$name: jm4lw-prof's Total: line is jeprof --text's" \
		"$(head -1 "$d/jeprof.txt")" "$(jeprof_total "$d/ours.txt")"
	n=$(grep -c ' _Z' "$d/ours.txt")
	if [ "${JM4LW_DEMANGLER:-}" = libiberty ]; then
		assert_eq "$name: [demangle] no row of ours left mangled (libiberty's demangler)" \
			0 "$n"
	elif [ "$n" -gt 0 ]; then
		echo "# $name: [demangle] $n rows of ours still mangled: c++filt reads them"
	fi

	if [ -z "$base" ]; then
		# Collapsed stacks: every stack is one line of a whole number
		# of bytes on each side, so the sums may be one byte a line
		# apart.
		timeout 300 jeprof --collapsed "$bin" "$prof" >"$d/jeprof.col" \
			2>/dev/null
		"$JM4LW_PROF" -f collapsed "$prof" >"$d/ours.col"
		sums=$(awk 'FNR == NR { j += $NF; jn++; next } { o += $NF; on++ }
			END { printf "ours %d B in %d lines, jeprof %d B in %d lines", o, on, j, jn
				d = o - j; if (d < 0) d = -d
				exit !(jn > 0 && on > 0 && d <= jn + on) }' \
			"$d/jeprof.col" "$d/ours.col")
		if [ $? = 0 ]; then
			pass "$name: -f collapsed adds up to jeprof --collapsed's sum ($sums)"
		else
			fail "$name: -f collapsed adds up to jeprof --collapsed's sum (1 B a line)" "$sums"
		fi
	else
		trim "$base" "$d/base.trim"
	fi

	# Flat and cum against jeprof on the dump without libjemalloc's
	# frames ([stripped-jemalloc]).
	trim "$prof" "$d/prof.trim"
	timeout 300 jeprof --text "${jb[@]}" "$bin" "$d/prof.trim" \
		>"$d/jeprof-trim.txt" 2>/dev/null
	assert_eq "$name: jeprof on the dump without libjemalloc's frames: the same Total:" \
		"$(head -1 "$d/jeprof.txt")" "$(head -1 "$d/jeprof-trim.txt")"
	# [stripped-static] ours under jeprof's (wrong) names.
	as_jeprof "$prof" <"$d/ours.txt" >"$d/ours.jp"
	table_by_name 1 <"$d/ours.jp" >"$d/ours.flat"
	table_by_name 1 <"$d/jeprof-trim.txt" >"$d/jeprof.flat"
	same_rows "$name: the same ten functions at the top, the same flat figures" \
		10 "$d/ours.flat" "$d/jeprof.flat"
	assert_no_grep "$name: no malloc_usable_size row in ours ([stripped-jemalloc])" \
		'malloc_usable_size' "$d/ours.txt"
	table_by_name 4 "$FILTER" <"$d/ours.jp" >"$d/ours.cum"
	table_by_name 4 "$FILTER" <"$d/jeprof-trim.txt" >"$d/jeprof.cum"
	same_rows "$name: the same cum figures for the program's own functions (/$FILTER/)" \
		30 "$d/ours.cum" "$d/jeprof.cum"
}

# redis-server through the agent: strings, lists, hashes, sets, sorted
# sets, ~300000 keys, sampled every 32 KiB; a dump, more load, a second.
case_redis() {
	local rport port a b d
	start_redis_agent redis MALLOC_CONF=lg_prof_sample:$LG_SAMPLE || return
	d=$RDIR rport=$RPORT port=$APORT
	redis_load "$rport" 0 150000
	a=$(ask jmfp "$port")
	redis_load "$rport" 150000 150000
	# The load between takes about dump_min_interval (1 s): a fast
	# machine's second jmfp may come a moment early.
	b=$(ask_when_due jmfp "$port")
	if [ ! -s "$a" ] || [ ! -s "$b" ]; then
		fail "redis: jmfp wrote two profiles" "$a" "$b"
		return
	fi
	assert_cmd "redis: the profile has over 30 stacks and 1000 samples" \
		awk '/^@/ { n++ } /^  t\*: / && NR > 2 { s += $2 }
			END { exit !(n > 30 && s > 1000) }' "$b"
	FILTER='^[a-z][A-Za-z]*(Command|Generic\w*|Object|Add|Insert|Push|Set)\b'
	compare redis /usr/bin/redis-server "$b"
	compare redis-base /usr/bin/redis-server "$b" "$a"
	redis-cli -p "$rport" shutdown nosave >/dev/null 2>&1
}

# redis_load PORT FIRST N: N keys from FIRST of each kind.
redis_load() {
	awk -v f="$2" -v n="$3" 'BEGIN {
		for (i = f; i < f + n; i++) {
			printf "SET s:%d value-%d-%s\r\n", i, i, substr("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 1, i % 64)
			if (i % 2 == 0) printf "HSET h:%d f1 %d f2 v%d\r\n", i % 50000, i, i
			if (i % 3 == 0) printf "RPUSH l:%d item-%d\r\n", i % 2000, i
			if (i % 5 == 0) printf "SADD set:%d m%d\r\n", i % 1000, i
			if (i % 7 == 0) printf "ZADD z:%d %d m%d\r\n", i % 500, i, i
		} }' | redis-cli -p "$1" --pipe >/dev/null 2>&1 ||
		fail "redis: redis-cli --pipe loaded $3 keys"
	redis-benchmark -p "$1" -q -n 50000 -r 100000 -d 200 -P 16 \
		-t set,lpush,hset >/dev/null 2>&1
}

# cxx_host: two dumps of its own, written with mallctl("prof.dump").
case_cxx() {
	local d=$T/cxx out
	mkdir -p "$d"
	out=$(cd "$d" && MALLOC_CONF=prof:true,lg_prof_sample:$LG_SAMPLE \
		timeout 60 "$CXX_HOST" "$d/a.heap" "$d/b.heap" 2>&1)
	assert_eq "cxx_host ran" "cxx_host: ok (100000 widgets)" "$out" || return
	FILTER='^cxxhost::'
	compare cxx "$CXX_HOST" "$d/b.heap"
	compare cxx-base "$CXX_HOST" "$d/b.heap" "$d/a.heap"
	# Inline frames are there on both sides (jeprof's from addr2line -i).
	assert_grep "cxx: jm4lw-prof shows inline frames" ' \(inline\)$' \
		"$T/cxx/ours.txt"
	assert_grep "cxx: ... and so does jeprof" ' \(inline\)$' \
		"$T/cxx/jeprof-trim.txt"
	# [stripped-jemalloc], as jeprof has it on the dump as it is.
	assert_grep "cxx: jeprof on the raw dump puts C++ allocations under malloc_usable_size ([stripped-jemalloc])" \
		'^ *[0-9.]+ +[5-9][0-9]\.[0-9]%.* malloc_usable_size$' \
		"$T/cxx/jeprof.txt"
}

case_cxx
case_redis
finish

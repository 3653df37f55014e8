#!/bin/bash
# tests/bench/prof_speed.sh OUT.md — offline profiles: from a dump file to
# collapsed stacks, jm4lw-prof -f collapsed against jeprof --collapsed
# with binutils' addr2line (its default) and against jeprof with
# llvm-addr2line (the "fast jeprof" trick: a directory first in PATH whose
# addr2line is llvm-addr2line-14; jeprof runs it as "addr2line -f -C -e
# OBJ" and "-i", which llvm-addr2line accepts, and reads its two lines per
# frame the same way). Wall time and peak RSS (/usr/bin/time -v: for jeprof
# the largest of perl, nm and addr2line, each waited for), one run each,
# the three in a row on the same dump; user-space instructions of
# jm4lw-prof with callgrind (perf has no instruction counter here).
#
# Two programs:
#   clang   Debian's clang++-14 -c of one C++ file, under LD_PRELOAD of
#           libjemalloc.so.2 with prof_final (a dump at exit): a big
#           program whose libraries (libLLVM-14, libclang-cpp) are
#           stripped, with tens of thousands of dynamic symbols.
#   dwarf   a program generated here (tests/bench/prof_speed.sh writes
#           its C++: 15 files of 150 template instantiations each over
#           the standard containers), built with g++ -O1 -g, so its
#           DWARF is over 50 MB; its dump at exit.
#
# Called by run.sh (section "prof"; run.sh --only prof runs it alone), which sets:
#   JM4LW_PROF  the jm4lw-prof to measure
#   PB_DIR      where the generated program and the dumps are kept
#               (reused on the next run)
#   MODE        smoke: print one line and skip (the heavy part takes
#               minutes); full: measure
#   CAP         seconds before a run is stopped and reported as "> CAP s"
#               (default 600)
#   FLOOR_CAP   the same for eu-addr2line's floor runs (default 120)
# Writes the report section (Markdown) to OUT.md; exit 1 when a tool
# failed to produce output.
#
# libc's separate debug file (Debian's libc6-dbg, which valgrind pulls
# in; `apt-get install -y libc6-dbg`) changes what jm4lw-prof reads: its
# DWARF names libc's and ld.so's frames, compressed (SHF_COMPRESSED). The
# report says whether it is installed, and measures jm4lw-prof once more
# without it (--system-debug-dir /nonexistent) when it is.
set -uo pipefail

OUT=$1
MODE=${MODE:-full}
CAP=${CAP:-600}
PB_DIR=${PB_DIR:-/tmp/jm4lw-prof-bench}
HERE=$(cd "$(dirname "$0")" && pwd)
LIBJE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
rc=0
FLOOR=() # "name dump" of each program measured, for the floor's rows

# The helpers the test harness shares: log (base.sh), o (figures.sh).
# shellcheck source=../lib/base.sh
. "$HERE/../lib/base.sh"
# shellcheck source=../lib/figures.sh
. "$HERE/../lib/figures.sh"

: >"$OUT"
o "## 9. Offline profiles: jm4lw-prof against jeprof, dump file to collapsed stacks"
o ""
o "\`tests/bench/prof_speed.sh\` does the work."
o ""
if [ "$MODE" = smoke ]; then
	o "Skipped in \`--smoke\`: building the 50 MB-of-DWARF program and running jeprof on two large programs takes minutes."
	log "smoke: skipped"
	exit 0
fi
for t in jeprof clang++-14 g++ llvm-addr2line-14 addr2line nm readelf valgrind /usr/bin/time; do
	command -v "$t" >/dev/null ||
		{ o "Not measured: $t is missing (llvm-14, time, g++, valgrind, clang-14)."; log "$t missing"; exit 1; }
done
[ -x "${JM4LW_PROF:-}" ] || { log "JM4LW_PROF is not set"; exit 1; }
[ -r "$LIBJE" ] || { log "$LIBJE missing (libjemalloc2)"; exit 1; }
mkdir -p "$PB_DIR/llvm" "$PB_DIR/dwarf"
ln -sf "$(command -v llvm-addr2line-14)" "$PB_DIR/llvm/addr2line"

# debug_mb FILE: the sizes of its .debug_* sections, in MB.
debug_mb() {
	readelf -SW "$1" | perl -ne '$s += hex($2) if /\]\s+(\.debug_\S+)\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)/;
		END { printf "%.1f", $s / 1e6 }'
}

# symbols DUMP: the defined dynamic and static function symbols of the
# objects mapped executable in DUMP, summed ("nm -D --defined-only" and
# "nm --defined-only", whichever has more, per object).
symbols() {
	local f n total=0 d s
	while read -r f; do
		d=$(nm -D --defined-only "$f" 2>/dev/null | wc -l)
		s=$(nm --defined-only "$f" 2>/dev/null | wc -l)
		n=$((d > s ? d : s))
		total=$((total + n))
	done < <(sed -n '/^MAPPED_LIBRARIES:/,$p' "$1" |
		awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' | sort -u)
	echo "$total"
}

# run KEY CMD...: one timed run (stdout to $PB_DIR/KEY.out), capped at
# CAP seconds; sets WALL (seconds, or "> CAP") and RSS (MB).
run() {
	local key=$1 st
	shift
	log "$key: $*"
	timeout "${RUN_CAP:-$CAP}" /usr/bin/time -v -o "$PB_DIR/$key.time" "$@" \
		>"$PB_DIR/$key.out" 2>"$PB_DIR/$key.err"
	st=$?
	if [ $st = 124 ]; then
		WALL="> ${RUN_CAP:-$CAP}"
		RSS="—"
	else
		WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0
			for (i = 1; i <= n; i++) s = s * 60 + t[i]; printf "%.2f", s }' "$PB_DIR/$key.time")
		RSS=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$PB_DIR/$key.time")
		if [ $st != 0 ] || [ ! -s "$PB_DIR/$key.out" ]; then
			log "$key: exit $st: $(tail -2 "$PB_DIR/$key.err")"
			rc=1
		fi
	fi
	log "$key: $WALL s, $RSS MB"
}

# sum KEY: lines and bytes of a collapsed output.
sum() { awk '{ s += $NF } END { printf "%d stacks, %.0f B", NR, s }' "$PB_DIR/$1.out"; }

# instr DUMP: jm4lw-prof's user-space instructions (callgrind, ~100
# times slower: not tried when the run took over 10 s, "—" when capped).
instr() {
	local out
	awk -v w="$1" 'BEGIN { exit !(w ~ />/ || w + 0 > 10) }' && return 0
	out=$(timeout "$CAP" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		"$JM4LW_PROF" -f collapsed "$2" 2>&1 >/dev/null) || return 0
	sed -n 's/^==[0-9]*== Collected : //p' <<<"$out"
}

# libc_dbg: the path of libc's separate debug file (libc6-dbg), by its
# build ID, or nothing.
libc_dbg() {
	local libc id
	libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null) || return 0
	id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
	[ -n "$id" ] && [ -r "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] &&
		echo "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	return 0
}
LIBC_DBG=$(libc_dbg)

# measure NAME BINARY DUMP: the three tools on DUMP; a table row each.
measure() {
	local name=$1 bin=$2 dump=$3 w0 r0 w1 r1 w2 r2 i0 wn rn
	run "$name.ours" "$JM4LW_PROF" -f collapsed "$dump"
	w0=$WALL r0=$RSS
	if [ -n "$LIBC_DBG" ]; then
		run "$name.ours_nodbg" "$JM4LW_PROF" -f collapsed --system-debug-dir /nonexistent "$dump"
		wn=$WALL rn=$RSS
	fi
	# The floor's rows are against this run.
	W0=$w0
	FLOOR+=("$name $dump")
	run "$name.jeprof" jeprof --collapsed "$bin" "$dump"
	w1=$WALL r1=$RSS
	run "$name.jeprof_llvm" env PATH="$PB_DIR/llvm:$PATH" jeprof --collapsed "$bin" "$dump"
	w2=$WALL r2=$RSS
	log "$name: callgrind of jm4lw-prof"
	i0=$(instr "$w0" "$dump")
	ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ />/) printf "> %.2f×", substr(a, 3) / b; else if (b > 0) printf "%.2f×", a / b; else print "—" }'; }
	o "| $name | jm4lw-prof -f collapsed | $w0 s | $r0 MB | 1× | $(awk -v i="$i0" 'BEGIN { gsub(",", "", i); if (i != "") printf "%.2f G", i / 1e9; else print "—" }') | $(sum "$name.ours") |"
	[ -n "$LIBC_DBG" ] &&
		o "| $name | jm4lw-prof -f collapsed --system-debug-dir /nonexistent (libc6-dbg not read) | $wn s | $rn MB | — | — | $(sum "$name.ours_nodbg") |"
	o "| $name | jeprof --collapsed (binutils addr2line) | $w1 s | $r1 MB | $(ratio "$w1" "$w0") | — | $(sum "$name.jeprof") |"
	o "| $name | jeprof --collapsed (llvm-addr2line-14) | $w2 s | $r2 MB | $(ratio "$w2" "$w0") | — | $(sum "$name.jeprof_llvm") |"
}

# addrs NAME DUMP: DUMP's unique addresses as the symbolizers are asked
# them (a caller's return address - 1, the leaf as is), each as "OBJECT
# 0xADDRESS" in the object's own address space (the mapping's start and
# file offset taken off, unless the object is ET_EXEC), into
# $PB_DIR/NAME.addrs, and per object into $PB_DIR/NAME.by/N.{obj,addrs}.
addrs() {
	local name=$1 dump=$2 exec
	rm -rf "$PB_DIR/$name.by"
	mkdir -p "$PB_DIR/$name.by"
	exec=$(sed -n '/^MAPPED_LIBRARIES:/,$p' "$dump" | awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' |
		sort -u | while read -r f; do
			readelf -h "$f" 2>/dev/null | grep -q 'Type:.*EXEC' && echo "$f"
		done | paste -sd' ')
	EXEC="$exec" perl -e '
		use strict; use warnings; no warnings "portable";
		my ($dump, $by) = @ARGV;
		my %exec = map { $_ => 1 } split " ", $ENV{EXEC};
		my (@maps, %seen, %objs, $in);
		open(my $d, "<", $dump) or die "$dump: $!";
		my @stacks;
		while (<$d>) {
			if (/^MAPPED_LIBRARIES:/) { $in = 1; next }
			if (!$in && /^@ (.*)$/) { push @stacks, [map { hex } split " ", $1]; next }
			next unless $in;
			my ($lo, $hi, $off, $p) =
			    /^([0-9a-f]+)-([0-9a-f]+)\s+r.x.\s+([0-9a-f]+)\s.*\s(\/\S+)$/ or next;
			push @maps, [hex($lo), hex($hi), hex($off), $p];
		}
		for my $s (@stacks) {
			for my $i (0 .. $#$s) {
				my $pc = $s->[$i] - ($i > 0 ? 1 : 0);
				next if $seen{$pc}++;
				for my $m (@maps) {
					next unless $pc >= $m->[0] && $pc < $m->[1];
					my $a = $exec{$m->[3]} ? $pc : $pc - $m->[0] + $m->[2];
					push @{$objs{$m->[3]}}, sprintf("0x%x", $a);
					last;
				}
			}
		}
		my $n = 0;
		open(my $all, ">", "$by.addrs") or die;
		for my $o (sort keys %objs) {
			open(my $f, ">", "$by.by/$n.addrs") or die;
			open(my $g, ">", "$by.by/$n.obj") or die;
			print $g "$o\n";
			for (@{$objs{$o}}) { print $f "$_\n"; print $all "$o $_\n" }
			$n++;
		}' "$dump" "$PB_DIR/$name"
}

# floor NAME DUMP: the same unique addresses through llvm-symbolizer-14
# in one batch (inline frames, demangled) and through eu-addr2line -f -i
# -C (one run per object, its addresses on stdin); rows against
# jm4lw-prof's whole run ($W0: parse, symbolize, render).
floor() {
	local name=$1 dump=$2 n wl rl we re
	addrs "$name" "$dump"
	n=$(wc -l <"$PB_DIR/$name.addrs")
	run "$name.llvm_symbolizer" llvm-symbolizer-14 --inlining --demangle \
		--functions=linkage <"$PB_DIR/$name.addrs"
	wl=$WALL rl=$RSS
	# eu-addr2line exits 1 when an address has no name ("??"), as some
	# in stripped libraries have not: the output is what is checked.
	# shellcheck disable=SC2016 # expanded by that bash, from its arguments
	# eu-addr2line -i walks a unit's DIEs from its root per address
	# (dwarf_getscopes): minutes on the DWARF program, so capped lower.
	RUN_CAP=${FLOOR_CAP:-120} run "$name.eu_addr2line" bash -c '
		for o in "$1"/*.obj; do
			eu-addr2line -f -i -C -e "$(cat "$o")" <"${o%.obj}.addrs"
		done
		exit 0' floor "$PB_DIR/$name.by"
	we=$WALL re=$RSS
	ratio2() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ />/ || b + 0 == 0 && b !~ />/) print "—"; else if (b ~ />/) printf "< %.3f", a / substr(b, 3); else printf "%.2f", a / b }'; }
	o "| $name | $n | llvm-symbolizer-14, one batch | $wl s | $rl MB | $(ratio2 "$W0" "$wl") |"
	o "| $name | $n | eu-addr2line -f -i -C, per object | $we s | $re MB | $(ratio2 "$W0" "$we") |"
}

# --- the programs ---------------------------------------------------------

# clang: one dump at exit of clang++-14 -O2 -c of a file that pulls in the
# whole standard library and instantiates templates over it.
clang_dump() {
	local d=$PB_DIR/clang
	mkdir -p "$d"
	rm -f "$d"/clang.*.heap
	cat >"$d/big.cc" <<'EOF'
#include <bits/stdc++.h>
#include <regex>
template <int N> struct T {
	std::map<std::string, std::vector<T<N - 1>>> m;
	std::regex r{"a+b*"};
};
template <> struct T<0> {
	int x;
};
int f()
{
	T<12> t;
	return t.m.size();
}
EOF
	(cd "$d" && LD_PRELOAD=$LIBJE \
		MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:12,prof_prefix:$d/clang \
		clang++-14 -O2 -c big.cc -o big.o) || return 1
	ls "$d"/clang.*.heap 2>/dev/null | head -1
}

# dwarf: 15 generated files of 150 instantiations each of a struct of
# standard containers; g++ -O1 -g; main keeps every object to its exit.
TUS=$(seq 0 14)
dwarf_build() {
	local d=$PB_DIR/dwarf k
	# Kept from an earlier run when it was generated the same way.
	[ -x "$d/prog" ] && [ "$(cat "$d/stamp" 2>/dev/null)" = "$(echo $TUS)" ] &&
		return 0
	for k in $TUS; do
		cat >"$d/tu$k.cc" <<EOF
#include <bits/stdc++.h>
namespace tu$k {
template <int I> struct Rec {
	std::map<std::string, std::vector<std::array<long, I % 7 + 1>>> m;
	std::unordered_map<int, std::string> u;
	std::deque<std::function<int(int)>> d;
	std::set<std::pair<int, std::string>> s;
};
template <int I> __attribute__((noinline)) void *make()
{
	auto *r = new Rec<I>;
	for (int k = 0; k < 3; k++)
		r->m["key" + std::to_string(k)].resize(I % 13 + 1);
	r->u[I] = std::string(I % 50 + 20, 'x');
	r->d.emplace_back([](int x) { return x + I; });
	r->s.emplace(I, "v");
	return r;
}
template <int... Is>
void run(std::vector<void *> &v, std::integer_sequence<int, Is...>)
{
	(v.push_back(make<Is>()), ...);
}
}
void run_$k(std::vector<void *> &v)
{
	for (int i = 0; i < 20; i++)
		tu$k::run(v, std::make_integer_sequence<int, 150>{});
}
EOF
	done
	{
		echo '#include <vector>'
		for k in $TUS; do echo "void run_$k(std::vector<void *> &);"; done
		echo 'int main() { static std::vector<void *> v;'
		for k in $TUS; do echo "run_$k(v);"; done
		echo 'return v.empty(); }'
	} >"$d/main.cc"
	log "dwarf: building the generated program (15 files, ~20 s each)"
	(cd "$d" && { printf 'tu%s\n' $TUS; echo main; } |
		xargs -P "$(nproc)" -I{} g++ -std=c++17 -O1 -g -c {}.cc -o {}.o &&
		g++ -o prog ./*.o -ljemalloc) >"$d/build.log" 2>&1 ||
		{ tail -5 "$d/build.log" >&2; return 1; }
	echo $TUS >"$d/stamp"
}

dwarf_dump() {
	local d=$PB_DIR/dwarf
	rm -f "$d"/prog.*.heap
	(cd "$d" && MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:10,prof_prefix:$d/prog \
		./prog) || return 1
	ls "$d"/prog.*.heap 2>/dev/null | head -1
}

o "What: the time from a heap profile on disk to its collapsed stacks (what a flame graph is drawn from), and the"
o "largest resident set on the way. jeprof symbolizes through \`nm\` and \`addr2line -i\` per object, in Perl; the"
o "\"fast jeprof\" is the same jeprof with a directory first in \`PATH\` whose \`addr2line\` is \`llvm-addr2line-14\`."
o "jm4lw-prof reads the objects once with elfutils' libdwfl. One run each, in a row, on a shared machine: the ratios"
o "within a row of runs are the figures to read, not the seconds."
o ""

log "clang: a dump at exit of clang++-14 -c"
CLANG_DUMP=$(clang_dump) || { log "clang: no dump"; rc=1; }
if dwarf_build; then
	DWARF_DUMP=$(dwarf_dump) || { log "dwarf: no dump"; rc=1; }
else
	log "dwarf: the build failed"
	DWARF_DUMP=
	rc=1
fi

if [ -n "$LIBC_DBG" ]; then
	o "libc6-dbg is installed: libc's and ld.so's frames are named from their separate debug files' compressed DWARF"
	o "(\`$LIBC_DBG\`, $(debug_mb "$LIBC_DBG") MB of \`.debug_*\` as stored). The row \"libc6-dbg not read\" is jm4lw-prof without them."
else
	o "libc6-dbg is not installed: libc's frames are named from its symbol table only (\`apt-get install -y libc6-dbg\` for the"
	o "case the issue measures; valgrind pulls it in)."
fi
o ""
o "| program | dump | objects mapped executable | their defined symbols (nm -D or nm, per object) | DWARF |"
o "| --- | --- | --- | --- | --- |"
if [ -n "${CLANG_DUMP:-}" ]; then
	o "| clang | $(grep -c '^@' "$CLANG_DUMP") stacks, $(awk '/^@/ { for (i = 2; i <= NF; i++) a[$i] } END { print length(a) }' "$CLANG_DUMP") addresses | $(sed -n '/^MAPPED_LIBRARIES:/,$p' "$CLANG_DUMP" | awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' | sort -u | wc -l) | $(symbols "$CLANG_DUMP") (libLLVM-14.so.1 $(nm -D --defined-only /usr/lib/llvm-14/lib/libLLVM-14.so.1 | wc -l), libclang-cpp.so.14 $(nm -D --defined-only /usr/lib/x86_64-linux-gnu/libclang-cpp.so.14 | wc -l)) | none (stripped Debian packages) |"
fi
if [ -n "${DWARF_DUMP:-}" ]; then
	o "| dwarf | $(grep -c '^@' "$DWARF_DUMP") stacks, $(awk '/^@/ { for (i = 2; i <= NF; i++) a[$i] } END { print length(a) }' "$DWARF_DUMP") addresses | $(sed -n '/^MAPPED_LIBRARIES:/,$p' "$DWARF_DUMP" | awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' | sort -u | wc -l) | $(symbols "$DWARF_DUMP") | $(debug_mb "$PB_DIR/dwarf/prog") MB of \`.debug_*\` in the program (\`readelf -S\`) |"
fi
o ""
o "| program | tool | wall | peak RSS | wall ÷ jm4lw-prof's | instructions (callgrind) | output |"
o "| --- | --- | --- | --- | --- | --- | --- |"
[ -n "${CLANG_DUMP:-}" ] && measure clang /usr/lib/llvm-14/bin/clang "$CLANG_DUMP"
[ -n "${DWARF_DUMP:-}" ] && measure dwarf "$PB_DIR/dwarf/prog" "$DWARF_DUMP"
o ""
# The floor: what symbolizing the same addresses costs the fastest tools.
if [ "${#FLOOR[@]}" -gt 0 ] && command -v llvm-symbolizer-14 >/dev/null &&
	command -v eu-addr2line >/dev/null; then
	o "The floor: the same unique addresses (a caller's return address - 1, as both sides look them up), given to"
	o "\`llvm-symbolizer-14\` in one batch and to \`eu-addr2line\` once per object; symbolization only, no parse or render."
	o "**jm4lw-prof ÷ tool** is jm4lw-prof's whole run (above: parse, symbolize, render) over the tool's: at or under 1"
	o "means no slower than that tool alone."
	o ""
	o "| program | unique addresses | tool | wall | peak RSS | **jm4lw-prof ÷ tool** |"
	o "| --- | --- | --- | --- | --- | --- |"
	for f in "${FLOOR[@]}"; do
		read -r fname fdump <<<"$f"
		W0=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0
			for (i = 1; i <= n; i++) s = s * 60 + t[i]; printf "%.2f", s }' "$PB_DIR/$fname.ours.time")
		floor "$fname" "$fdump"
	done
	o ""
fi
o "Commands (\`DUMP\` the profile, \`PROG\` the program; \`llvm/addr2line\` a symbolic link to \`/usr/bin/llvm-addr2line-14\`):"
o ""
o '```'
o "/usr/bin/time -v jm4lw-prof -f collapsed DUMP"
o "/usr/bin/time -v jm4lw-prof -f collapsed --system-debug-dir /nonexistent DUMP   # with libc6-dbg: without its files"
o "/usr/bin/time -v jeprof --collapsed PROG DUMP"
o "PATH=\$PWD/llvm:\$PATH /usr/bin/time -v jeprof --collapsed PROG DUMP"
o "valgrind --tool=callgrind jm4lw-prof -f collapsed DUMP"
o "llvm-symbolizer-14 --inlining --demangle --functions=linkage <ADDRS   # lines \"OBJECT 0xADDRESS\""
o "eu-addr2line -f -i -C -e OBJECT <ADDRS-OF-OBJECT                      # once per object"
o '```'
exit $rc

#!/bin/bash
# Never a wrong function name. A symbol names an address only
# if the address lies inside it; a function no symbol contains is one
# frame, "object+0xSTART", START its first byte from .eh_frame.
#
# [stripped] tests/host/names_host (static helpers and GCC's .constprop
#   and .part clones between small exported functions, -O2), stripped as
#   Debian strips (strip --strip-unneeded: .dynsym only), and profiled:
#   - per address of the symbolized file (offline, jm4lw-prof, and in the
#     process, HTTP format=symbolized): every .dynsym name contains its
#     address, every names_host+0xSTART is the start of the FDE covering
#     it (llvm-dwarfdump --eh-frame), and every name is what the
#     unstripped copy says there (eu-addr2line -S: its symbol and offset);
#   - every other output, offline and in the process (text, collapsed,
#     svg, pprof; jmtp, jmcs, jmfg; HTTP collapsed and pprof): each static
#     function is one frame, names_host+0xSTART, and no exported function
#     is charged with a static one's bytes;
#   - go tool pprof shows our names_host+0x... and, given the unstripped
#     copy (-symbolize=force: our mapping says it has functions), names
#     them itself from the Location's address and the Mapping we keep.
#     The copy goes on the command line, not through PPROF_BINARY_PATH:
#     Go 1.19's go tool pprof reads no build ID from a file (its objTool's
#     BuildID() is ""), so it refuses every file PPROF_BINARY_PATH finds
#     for a mapping that has one ("build-id mismatch (ID != )"); the
#     standalone pprof (github.com/google/pprof) reads them. And its DWARF
#     reader names no GCC clone (.part/.constprop: an out-of-line instance
#     named through DW_AT_abstract_origin): those show as [names_host].
# [truth] Unstripped programs, per address: our inline chains, names
#   demangled with libiberty and static functions with their namespaces,
#   against llvm-symbolizer-14 --inlining --demangle and eu-addr2line -f
#   -i -C on the same object (names_truth.pl): tests/host/cxx_host (C++
#   templates, lambdas over parameter packs, a static function in a
#   namespace inlined), names_cxx (static functions in a nested and an
#   anonymous namespace, which GCC's DWARF names bare: llvm-symbolizer
#   says names::inner::block, and so do we) and names_host unstripped.
#   Built with libdw only (the ELF backend has no inline frames).
# [redis] Debian's redis-server with the agent under redis-benchmark: per
#   address of its in-process and offline symbolized profiles, every
#   .dynsym name contains its address; how many frames the nearest symbol
#   below (jeprof's rule, ours before) would have named wrongly is
#   printed.
#
#	bash names.sh   (NAMES_HOST, NAMES_CXX, CXX_HOST, JM4LW_PROF, JM4LW_RUN
#	                 from ctest)
. "$(dirname "$0")/../lib.sh"

need eu-readelf eu-addr2line llvm-dwarfdump-14 llvm-symbolizer-14 c++filt \
	nm strip perl go curl \
	nc.openbsd timeout redis-server redis-cli redis-benchmark
for b in "$NAMES_HOST" "$NAMES_CXX" "$CXX_HOST" "$JM4LW_PROF" "$JM4LW_RUN"; do
	[ -x "$b" ] || die "$b is not executable"
done
CHECK=$(dirname "$0")/names_check.pl
TRUTH=$(dirname "$0")/names_truth.pl
# go tool pprof wants somewhere to write; no binary behind our back.
export HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_BINARY_PATH=$T/nobin
mkdir -p "$HOME" "$GOCACHE" "$GOPATH" "$PPROF_BINARY_PATH"

# The stripped copy, the unstripped one (under a directory of its own, by
# the same name, for PPROF_BINARY_PATH) and what the static functions
# must be called: names_host+0x<start>, from the unstripped symbol table.
BIN=$T/bin/names_host
FULL=$T/full/names_host
mkdir -p "$T/bin" "$T/full"
cp "$NAMES_HOST" "$FULL"
cp "$NAMES_HOST" "$BIN"
strip --strip-unneeded "$BIN"
STATICS=$(nm "$FULL" | while read -r v t n; do
	[ "$t" = t ] && [ "${n#names_static}" != "$n" ] && printf 'names_host+0x%x\n' "0x$v"
done | sort)
[ "$(wc -w <<<"$STATICS")" = 3 ] ||
	die "names_host has not its three static functions: $STATICS"
EXPORTED='names_exported_(first|second|third)'

# check_sym DESC OBJECT SYMBOLIZED [FULL]: names_check.pl finds no wrong
# name; its counts go to the output.
check_sym() {
	local out
	out=$(perl "$CHECK" ${4:+--full "$4"} "$2" "$3" 2>&1)
	echo "# $1: $(tail -1 <<<"$out")"
	if grep -q '^BAD\|^names_check' <<<"$out" || ! grep -q '^checked [1-9]' <<<"$out"; then
		fail "$1" "$(grep -v '^checked' <<<"$out" | head -5)"
	else
		pass "$1"
	fi
}

# statics_in DESC FILE: every static function is there by its start.
statics_in() {
	local s missing=
	for s in $STATICS; do
		grep -qF "$s" "$2" || missing="$missing $s"
	done
	if [ -z "$missing" ]; then
		pass "$1: each static function is one frame, names_host+0xSTART"
	else
		fail "$1: each static function is one frame, names_host+0xSTART" \
			"missing:$missing" "$(head -5 "$2")"
	fi
}

# check_stacks DESC FILE: FILE is collapsed stacks (root first, ";"); an
# exported function's callee is a static function by its start, never a
# name of .dynsym (the nearest symbol below would be _start).
check_stacks() {
	local bad
	statics_in "$1" "$2"
	bad=$(grep -E "(^|;)$EXPORTED;" "$2" | grep -vE "(^|;)$EXPORTED;names_host\+0x[0-9a-f]+( [0-9]+)?$" | head -3)
	assert_eq "$1: what an exported function calls is names_host+0x..., not a wrong name" "" "$bad"
}

# check_text DESC FILE: a jeprof-style table: the statics have rows, and
# no function that allocates nothing itself has flat bytes.
check_text() {
	local bad
	statics_in "$1" "$2"
	bad=$(awk '$1 ~ /^[0-9.]+$/ && $1 + 0 > 0 && $6 ~ /^(_start|main|names_exported_(first|second|third))$/' "$2")
	assert_eq "$1: no flat bytes for _start, main or the exported callers" "" "$bad"
}

# pprof_stacks PROFILE OUT: go tool pprof -traces as collapsed stacks
# (a sample's labels, "thread:  NAME", are no frame).
pprof_stacks() {
	timeout 120 go tool pprof -traces "$1" 2>/dev/null | perl -ne '
		sub out { print join(";", reverse @f), "\n" if @f; @f = (); }
		if (/^-+\+-+$/) { out(); next; }
		next if /^\s*(bytes|objects|space|count|thread):/ || /^\S/;
		s/^\s+(-?[0-9.]+[kMGT]?B?\s+)?//; chomp;
		push @f, $_ if length;
		END { out(); }' >"$2"
}

# check_pprof DESC PROFILE: go tool pprof reads it; its stacks as above.
check_pprof() {
	pprof_stacks "$2" "$2.stacks"
	check_stacks "$1 (go tool pprof -traces)" "$2.stacks"
}

case_offline() {
	local d=$T/offline f
	mkdir -p "$d"
	if ! (cd "$d" && MALLOC_CONF=prof:true,lg_prof_sample:0 timeout 60 \
		"$BIN" "$d/p.heap") || [ ! -s "$d/p.heap" ]; then
		fail "stripped names_host wrote its profile"
		return
	fi
	echo "# static functions: $(tr '\n' ' ' <<<"$STATICS")"
	for f in symbolized text collapsed svg pprof; do
		assert_cmd "jm4lw-prof -f $f on the stripped program's profile" \
			"$JM4LW_PROF" -f "$f" -o "$d/p.$f" "$d/p.heap" || return
	done
	check_sym "jm4lw-prof -f symbolized: per address, true names only (against the unstripped copy)" \
		"$BIN" "$d/p.symbolized" "$FULL"
	check_text "jm4lw-prof -f text" "$d/p.text"
	check_stacks "jm4lw-prof -f collapsed" "$d/p.collapsed"
	statics_in "jm4lw-prof -f svg" "$d/p.svg"
	check_pprof "jm4lw-prof -f pprof" "$d/p.pprof"

	# The Location keeps the address, the Mapping the file: go tool
	# pprof names a static function itself given the unstripped copy.
	timeout 120 go tool pprof -top -nodecount=100 "$d/p.pprof" \
		>"$d/pprof.top" 2>&1
	statics_in "go tool pprof -top shows our names" "$d/pprof.top"
	timeout 120 go tool pprof -symbolize=force -top -nodecount=100 \
		"$FULL" "$d/p.pprof" >"$d/pprof-full.top" 2>&1
	assert_grep "go tool pprof -symbolize=force with the unstripped copy names names_static_fill itself" \
		' names_static_fill$' "$d/pprof-full.top"
	assert_no_grep "go tool pprof with the unstripped copy: none of our names_host+0x left" \
		'names_host\+0x' "$d/pprof-full.top"
}

case_inproc() {
	local d=$T/inproc port http f
	mkdir -p "$d"
	mkfifo "$d/stdin"
	printf 'dump_min_interval = 0\n' >"$d/jm4lw.conf"
	# Held open here: names_host waits until its stdin closes.
	exec 3<>"$d/stdin"
	(cd "$d" && exec env JM4LW_DUMP_DIR="$d" JM4LW_HTTP_LISTEN=127.0.0.1:0 \
		JM4LW_CONF="$d/jm4lw.conf" \
		MALLOC_CONF=lg_prof_sample:0 "$JM4LW_RUN" --prof-active \
		-l 127.0.0.1:0 -- "$BIN" <"$d/stdin" >"$d/out" 2>"$d/err") &
	track $!
	for _ in $(seq 200); do
		port=$(sed -n 's/^jm4lw agent\[[0-9]*\]: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$d/err" 2>/dev/null | head -1)
		http=$(sed -n 's/^jm4lw agent\[[0-9]*\]: HTTP listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$d/err" 2>/dev/null | head -1)
		[ -n "$port" ] && [ -n "$http" ] && grep -q ready "$d/out" && break
		sleep 0.1
	done
	if [ -z "$port" ] || [ -z "$http" ] || ! grep -q ready "$d/out"; then
		fail "stripped names_host with the agent: words, HTTP, ready" "$(show_tail "$d/err")"
		exec 3>&-
		return
	fi
	ask jmtp "$port" >"$d/jmtp"
	check_text "jmtp (in the process)" "$d/jmtp"
	ask jmcs "$port" >"$d/jmcs"
	check_stacks "jmcs (in the process)" "$d/jmcs"
	ask jmfg "$port" >"$d/jmfg"
	statics_in "jmfg (in the process)" "$d/jmfg"
	for f in symbolized collapsed pprof; do
		http_get "http://127.0.0.1:$http/jemalloc/profile?format=$f" "$d/h.$f" ||
			fail "HTTP format=$f: 200" "$(head -3 "$d/h.$f")"
	done
	check_sym "HTTP format=symbolized (in the process): per address, true names only" \
		"$BIN" "$d/h.symbolized" "$FULL"
	check_stacks "HTTP format=collapsed (in the process)" "$d/h.collapsed"
	check_pprof "HTTP format=pprof (in the process)" "$d/h.pprof"
	exec 3>&-
}

# truth DESC OBJECT SYMBOLIZED: names_truth.pl finds every address's
# frames as llvm-symbolizer and eu-addr2line name them.
truth() {
	local out
	out=$(perl "$TRUTH" "$2" "$3" 2>&1)
	echo "# $1: $(tail -1 <<<"$out")"
	if grep -q '^DIFF\|^names_truth' <<<"$out" || ! grep -q '^addresses [1-9]' <<<"$out"; then
		fail "$1" "$(grep -v '^addresses' <<<"$out" | cut -c1-400 | head -5)"
	else
		pass "$1"
	fi
}

# [truth]: the unstripped programs, per address.
case_truth() {
	local d=$T/truth
	mkdir -p "$d"
	if [ "${JM4LW_SYMBOLIZER:-libdw}" != libdw ]; then
		skip "[truth]: built without libdw (no inline frames to compare)"
		return
	fi
	(cd "$d" && MALLOC_CONF=prof:true,lg_prof_sample:12 timeout 60 \
		"$CXX_HOST" "$d/a.heap" "$d/b.heap" >/dev/null 2>&1)
	assert_cmd "cxx_host: jm4lw-prof -f symbolized" \
		"$JM4LW_PROF" -f symbolized -o "$d/cxx.symbolized" "$d/b.heap" &&
		truth "cxx_host: per address, our frames are llvm-symbolizer's and eu-addr2line's" \
			"$CXX_HOST" "$d/cxx.symbolized"
	(cd "$d" && MALLOC_CONF=prof:true,lg_prof_sample:0 timeout 60 \
		"$NAMES_CXX" "$d/ns.heap")
	assert_cmd "names_cxx: jm4lw-prof -f symbolized" \
		"$JM4LW_PROF" -f symbolized -o "$d/ns.symbolized" "$d/ns.heap" &&
		truth "names_cxx: per address, static functions with their namespaces, as llvm-symbolizer has them" \
			"$NAMES_CXX" "$d/ns.symbolized"
	assert_grep "names_cxx: names::inner::block by its namespaces" \
		' names::inner::block(--|$)' "$d/ns.symbolized"
	(cd "$d" && MALLOC_CONF=prof:true,lg_prof_sample:0 timeout 60 \
		"$FULL" "$d/n.heap")
	assert_cmd "names_host unstripped: jm4lw-prof -f symbolized" \
		"$JM4LW_PROF" -f symbolized -o "$d/n.symbolized" "$d/n.heap" &&
		truth "names_host unstripped: per address, our frames are llvm-symbolizer's and eu-addr2line's" \
			"$FULL" "$d/n.symbolized"
}

# [redis]: per address, in the process and offline.
case_redis() {
	local a
	# Debian's redis-server is a link to redis-check-rdb: the profile
	# maps the file.
	REDIS=$(readlink -f "$(command -v redis-server)")
	printf 'dump_min_interval = 0\n' >"$T/redis.conf"
	start_redis_agent redis MALLOC_CONF=lg_prof_sample:12 \
		JM4LW_CONF="$T/redis.conf" || return
	redis-benchmark -p "$RPORT" -q -n 50000 -r 100000 -d 200 -P 16 \
		-t set,get,lpush,rpop,sadd,hset,zadd,lrange_100 >/dev/null 2>&1
	http_get "http://127.0.0.1:$AHTTP/jemalloc/profile?format=symbolized" "$RDIR/h.symbolized" ||
		fail "redis: HTTP format=symbolized: 200" "$(head -3 "$RDIR/h.symbolized")"
	check_sym "redis: HTTP format=symbolized (in the process): every .dynsym name contains its address" \
		"$REDIS" "$RDIR/h.symbolized"
	a=$(ask jmfp "$APORT")
	if [ ! -s "$a" ]; then
		fail "redis: jmfp wrote a profile" "$a"
		return
	fi
	"$JM4LW_PROF" -f symbolized -o "$RDIR/p.symbolized" "$a"
	check_sym "redis: jm4lw-prof -f symbolized: every .dynsym name contains its address" \
		"$REDIS" "$RDIR/p.symbolized"
	redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
}

case_offline
case_inproc
case_truth
case_redis
finish

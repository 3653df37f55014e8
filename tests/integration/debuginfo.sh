#!/bin/bash
# Debug info from where production keeps it: a program split
# as distributions split it (objcopy --only-keep-debug, strip,
# --add-gnu-debuglink), its profile symbolized with the debug file in
# each place the symbolizer looks, in order:
#   - the object itself (the unstripped copy: the ground truth);
#   - SYSROOT/.build-id/xx/rest.debug (the system's tree, here a scratch
#     root given with --system-debug-dir, so nothing is written to
#     /usr/lib/debug);
#   - .gnu_debuglink beside the object, in its .debug/, and under the
#     system's root (SYSROOT/<object's dir>/NAME);
#   - --debug-dir DIR (repeatable) and the debug_dirs key: build-ID tree,
#     DIR/<object's dir>/NAME and DIR/NAME;
#   - debuginfod (DEBUGINFOD_URLS): Debian's real debuginfod server on
#     127.0.0.1 scanning a scratch directory of debug files.
# Programs: cxx_host (C++, -O2 -g, templates and inline frames; offline)
# and jm4lwd itself (C; offline and in the process, where debuginfod is
# off unless symbolize_debuginfod = on). "Names as the unstripped binary
# gives them" is per address of the program's own code: the symbolized
# file's names (inline chains included) and, through go tool pprof -raw,
# pprof's locations (function, inline frames, file:line); >= 99 % equal.
# With the server stopped or not answering, the run ends within the
# timeout with the program's frames unnamed by DWARF and one warning line
# naming what was missing. Whether object+0xSTART naming applies or not,
# "unnamed" is whatever the no-debug-info path prints (hex or the
# symbol table's name); the test holds only that DWARF's names are absent.
#
#	bash debuginfo.sh   (JM4LW_PROF, CXX_HOST, JM4LWD from ctest)
# shellcheck disable=SC2119 # lib.sh's free_port, stop_daemon: optional arguments
. "$(dirname "$0")/../lib.sh"

[ "${JM4LW_SYMBOLIZER:-libdw}" = libdw ] || {
	echo "# built without libdw: no DWARF, no debug files"
	skip "debug info needs the libdw symbolizer"
	echo "0 passed, 0 failed"
	exit 0
}
need debuginfod objcopy strip readelf nm curl perl go nc.openbsd timeout python3
for b in "$JM4LW_PROF" "$CXX_HOST" "$JM4LWD"; do
	[ -x "$b" ] || die "$b is not executable"
done
# Other suites' DEBUGINFOD_* must not leak in; each case sets its own.
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE

# split SRC DIR: DIR/NAME, SRC stripped with a .gnu_debuglink, and the
# debug file beside it as DIR/NAME.debug (moved by each case).
split() {
	local name
	name=$(basename "$1")
	mkdir -p "$2"
	objcopy --only-keep-debug "$1" "$2/$name.debug" &&
		strip --strip-all -o "$2/$name" "$1" &&
		objcopy --add-gnu-debuglink="$2/$name.debug" "$2/$name"
}

# build_id FILE: its GNU build ID in hex.
build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'
}

# symbols SYMFILE DUMP PROG: the lines of SYMFILE's symbol section (a
# -f symbolized output) whose address is in PROG's executable mappings in
# DUMP, sorted: the program's own code only (the libraries are not what
# is split here).
symbols() {
	perl -e '
		use strict; use warnings; no warnings "portable";
		my ($sym, $dump, $prog) = @ARGV;
		my (@r, $maps);
		open(my $d, "<", $dump) or die "$dump: $!";
		while (<$d>) {
			$maps = 1, next if /^MAPPED_LIBRARIES:/;
			next unless $maps;
			my ($lo, $hi, $p) = /^([0-9a-f]+)-([0-9a-f]+)\s+r.x.\s.*\s(\S+)$/ or next;
			push @r, [hex($lo), hex($hi)] if $p eq $prog;
		}
		open(my $s, "<", $sym) or die "$sym: $!";
		my $in = 0;
		while (<$s>) {
			if (/^--- symbol/) { $in = 1; next }
			last if $in && /^---/;
			next unless $in && /^0x([0-9a-f]+) /;
			my $a = hex($1);
			print if grep { $a >= $_->[0] && $a < $_->[1] } @r;
		}' "$1" "$2" "$3" | sort
}

# agree DESC TRUTH OURS [MIN%]: OURS names at least MIN % (default 99)
# of TRUTH's lines as TRUTH does (same lines, by address).
agree() {
	local total same min=${4:-99}
	total=$(wc -l <"$2")
	same=$(comm -12 "$2" "$3" | wc -l)
	if [ "$total" -gt 0 ] && [ $((same * 100)) -ge $((total * min)) ]; then
		pass "$1 ($same of $total locations)"
	else
		fail "$1 ($same of $total locations, want >= $min %)" \
			"$(diff "$2" "$3" | head -6 | cut -c1-200)"
	fi
}

# disagree DESC TRUTH OURS: fewer than half of TRUTH's lines are OURS'
# (DWARF's names are not there).
disagree() {
	local total same
	total=$(wc -l <"$2")
	same=$(comm -12 "$2" "$3" | wc -l)
	if [ "$total" -gt 0 ] && [ $((same * 2)) -lt "$total" ]; then
		pass "$1 ($same of $total as DWARF names them)"
	else
		fail "$1 ($same of $total as DWARF names them)"
	fi
}

# locations PPROF.gz: go tool pprof -raw's locations (address, function,
# file:line of each inline frame), without their ids, sorted.
locations() {
	timeout $((60 * SLOW)) go tool pprof -raw "$1" 2>/dev/null |
		awk '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 }
		     on && /^ *[0-9]+: / { sub(/^ *[0-9]+: /, ""); print; next }
		     on { print }' | sort
}

# check DESC CMD...: pass when CMD succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}

# ask_to WORD FILE: ask's reply into FILE (for timed).
# shellcheck disable=SC2317 # called through timed
ask_to() {
	ask "$1" >"$2"
}

# prof ARGS...: jm4lw-prof on the C++ dump, symbolized, the program's
# lines into $T/out.sym; stderr in $T/out.err.
prof() {
	"$JM4LW_PROF" -f symbolized -o "$T/out.full" "$@" "$CXX_DUMP" 2>"$T/out.err"
	symbols "$T/out.full" "$CXX_DUMP" "$S/cxx_host" >"$T/out.sym"
}

# ---------------------------------------------------------------- setup
BIN=$T/bin
S=$T/s # the stripped programs, as installed
DBG=$T/dbg # their debug files, kept aside
mkdir -p "$BIN" "$S" "$DBG"
cp "$CXX_HOST" "$BIN/cxx_host"
cp "$JM4LWD" "$BIN/jm4lwd"
if ! split "$BIN/cxx_host" "$S" || ! split "$BIN/jm4lwd" "$S"; then
	die "objcopy/strip split the test programs"
fi
mv "$S/cxx_host.debug" "$S/jm4lwd.debug" "$DBG/"
CXX_ID=$(build_id "$S/cxx_host")
C_ID=$(build_id "$S/jm4lwd")
if [ -z "$CXX_ID" ] || [ -z "$C_ID" ]; then
	die "the test programs have GNU build IDs"
fi
assert_eq "strip kept the build ID" "$CXX_ID" "$(build_id "$BIN/cxx_host")"

# The stripped C++ program's profile, sampled every 32 KiB.
mkdir -p "$T/cxx"
out=$(cd "$T/cxx" && MALLOC_CONF=prof:true,lg_prof_sample:15 \
	timeout $((60 * SLOW)) "$S/cxx_host" "$T/cxx/a.heap" "$T/cxx/b.heap" 2>&1)
assert_eq "stripped cxx_host ran" "cxx_host: ok (100000 widgets)" "$out" ||
	finish
CXX_DUMP=$T/cxx/b.heap

# Ground truth: the unstripped binary itself, no debuginfod.
prof --no-debuginfod --binary "$BIN/cxx_host"
cp "$T/out.sym" "$T/truth.sym"
"$JM4LW_PROF" -f pprof --no-debuginfod --binary "$BIN/cxx_host" \
	-o "$T/truth.pb.gz" "$CXX_DUMP" 2>/dev/null
locations "$T/truth.pb.gz" >"$T/truth.loc"
n=$(wc -l <"$T/truth.sym")
if [ "$n" -ge 10 ] && grep -q ' (inline)\|--' "$T/truth.sym" &&
	grep -q 'cxx_host.cc:[0-9]' "$T/truth.loc"; then
	pass "the unstripped binary names $n addresses of cxx_host, with inline frames and file:line"
else
	fail "the unstripped binary names cxx_host's addresses, with inline frames and file:line" \
		"$(head -3 "$T/truth.sym" | cut -c1-200)"
fi

# --------------------------------------------- offline, place by place
prof --no-debuginfod
cp "$T/out.sym" "$T/none.sym"
disagree "no debug file anywhere: DWARF's names are not there" "$T/truth.sym" "$T/none.sym"

# case DESC SETUP-DIR ARGS...: the debug file copied to SETUP-DIR (made),
# jm4lw-prof ARGS, names against the truth; SETUP-DIR removed after.
case_place() {
	local desc=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	cp "$DBG/cxx_host.debug" "$dir/${PLACE_NAME:-cxx_host.debug}"
	prof --no-debuginfod "$@"
	agree "$desc" "$T/truth.sym" "$T/out.sym"
	rm -f "$dir/${PLACE_NAME:-cxx_host.debug}"
}
SYS=$T/sysroot
mkdir -p "$SYS"
PLACE_NAME=${CXX_ID:2}.debug case_place \
	"build ID under the system's root (SYSROOT/.build-id/${CXX_ID:0:2}/...debug)" \
	"$SYS/.build-id/${CXX_ID:0:2}" --system-debug-dir "$SYS"
case_place ".gnu_debuglink beside the object" "$S"
case_place ".gnu_debuglink in the object's .debug/" "$S/.debug"
case_place ".gnu_debuglink under the system's root (SYSROOT/<dir>/NAME)" \
	"$SYS$S" --system-debug-dir "$SYS"
PLACE_NAME=${CXX_ID:2}.debug case_place \
	"--debug-dir DIR as a build-ID tree (the second of two)" \
	"$T/dd1/.build-id/${CXX_ID:0:2}" --debug-dir "$T/nothing" --debug-dir "$T/dd1"
case_place "--debug-dir DIR as a debuglink mirror (DIR/<dir>/NAME)" \
	"$T/dd2$S" --debug-dir "$T/dd2"
case_place "--debug-dir DIR holding NAME" "$T/dd3" --debug-dir "$T/dd3"
# A debug file of another build under the right name is not taken.
mkdir -p "$T/dd4"
cp "$DBG/jm4lwd.debug" "$T/dd4/cxx_host.debug"
prof --no-debuginfod --debug-dir "$T/dd4"
disagree "a debug file of another build (its build ID differs) is refused" \
	"$T/truth.sym" "$T/out.sym"
# The system's tree is searched, not /usr/lib/debug, when it is given.
prof --no-debuginfod --system-debug-dir "$T/dd1"
disagree "--system-debug-dir replaces the system's root (no build-ID tree there now)" \
	"$T/truth.sym" "$T/out.sym"

# ------------------------------------------ an absolute .gnu_debuglink
# objcopy --add-gnu-debuglink keeps the file's base name only; a link to
# an absolute path is written by hand (name, NUL, padding to 4, the
# file's CRC32). Its target is checked as a relative link's is (build ID,
# else the CRC the link gives): another build's file there is refused,
# and the object keeps its own .dynsym names (names_host stripped as
# Debian strips, --strip-unneeded); the right file gives its names
# (the static functions .dynsym does not have). Also without a build ID
# in the object, where the CRC decides.
# abslink OBJ TARGET CRCFILE: OBJ gets a .gnu_debuglink naming TARGET
# (absolute) with CRCFILE's CRC32.
abslink() {
	python3 -c 'import struct, sys, zlib
n = sys.argv[1].encode() + b"\0"
n += b"\0" * (-len(n) % 4)
with open(sys.argv[2], "rb") as f:
    crc = zlib.crc32(f.read())
sys.stdout.buffer.write(n + struct.pack("<I", crc))' "$2" "$3" >"$1.link" &&
		objcopy --add-section .gnu_debuglink="$1.link" "$1"
}
AL=$T/abslink
mkdir -p "$AL/dbg"
head -c 65536 /dev/urandom >"$T/random.bytes"
objcopy --only-keep-debug "$NAMES_HOST" "$AL/right.debug"
objcopy --only-keep-debug "$CXX_HOST" "$AL/wrong.debug"
for id in with without; do
	cp "$NAMES_HOST" "$AL/names_host"
	strip --strip-unneeded "$AL/names_host"
	[ "$id" = with ] || objcopy --remove-section .note.gnu.build-id "$AL/names_host"
	abslink "$AL/names_host" "$AL/dbg/names_host.debug" "$AL/right.debug" ||
		die "objcopy wrote an absolute .gnu_debuglink"
	rm -f "$AL/p.heap"
	if ! (cd "$AL" && MALLOC_CONF=prof:true,lg_prof_sample:0 timeout $((60 * SLOW)) \
		"$AL/names_host" "$AL/p.heap" >/dev/null) || [ ! -s "$AL/p.heap" ]; then
		fail "names_host with an absolute .gnu_debuglink ($id build ID) wrote its profile"
		continue
	fi
	# Another build's debug file, then bytes that are no ELF; the
	# status is 0 (under ASan: nothing leaked).
	for wrong in "another build's file:$AL/wrong.debug" "random bytes:$T/random.bytes"; do
		cp "${wrong#*:}" "$AL/dbg/names_host.debug"
		rc=0
		"$JM4LW_PROF" -f symbolized --no-debuginfod -o "$AL/wrong.sym" "$AL/p.heap" \
			2>"$AL/wrong.err" || rc=$?
		assert_eq "absolute .gnu_debuglink to ${wrong%%:*} ($id build ID): exit 0" 0 "$rc"
		assert_grep "absolute .gnu_debuglink to ${wrong%%:*} ($id build ID): .dynsym's names kept" \
			'^0x[0-9a-f]+ .*names_exported_first' "$AL/wrong.sym"
		assert_no_grep "absolute .gnu_debuglink to ${wrong%%:*} ($id build ID): none of its names" \
			'cxxhost::' "$AL/wrong.sym"
	done
	cp "$AL/right.debug" "$AL/dbg/names_host.debug"
	"$JM4LW_PROF" -f symbolized --no-debuginfod -o "$AL/right.sym" "$AL/p.heap" 2>"$AL/right.err"
	assert_grep "absolute .gnu_debuglink to the right file ($id build ID): its names (a static function)" \
		'^0x[0-9a-f]+ .*names_static_fill' "$AL/right.sym"
done

# ------------------------------------------------------------ debuginfod
SRV=$T/srv
mkdir -p "$SRV"
cp "$DBG/cxx_host.debug" "$DBG/jm4lwd.debug" "$SRV/"
DPORT=$(free_port)
debuginfod -p "$DPORT" -d "$T/debuginfod.sqlite" -F -c 1 -t 0 -g 0 \
	"$SRV" >"$T/debuginfod.log" 2>&1 &
DPID=$!
track "$DPID"
# Indexed when it serves both files (it scans in the background).
up=
for _ in $(seq $((300 * SLOW))); do
	if curl -sf -o /dev/null "http://127.0.0.1:$DPORT/buildid/$CXX_ID/debuginfo" &&
		curl -sf -o /dev/null "http://127.0.0.1:$DPORT/buildid/$C_ID/debuginfo"; then
		up=1
		break
	fi
	_alive "$DPID" || break
	sleep 0.1
done
[ -n "$up" ] || die "debuginfod on 127.0.0.1:$DPORT serves the debug files within 30 s" \
	"$(tail -5 "$T/debuginfod.log")"
pass "debuginfod on 127.0.0.1:$DPORT serves both debug files"
URLS=http://127.0.0.1:$DPORT

export DEBUGINFOD_URLS=$URLS DEBUGINFOD_CACHE_PATH=$T/cache1
prof
agree "debuginfod (DEBUGINFOD_URLS set: on by default): names and inline frames" \
	"$T/truth.sym" "$T/out.sym"
"$JM4LW_PROF" -f pprof -o "$T/dfd.pb.gz" "$CXX_DUMP" 2>/dev/null
locations "$T/dfd.pb.gz" >"$T/dfd.loc"
agree "debuginfod: pprof locations (functions, inline frames, file:line)" \
	"$T/truth.loc" "$T/dfd.loc"
assert_no_grep "debuginfod: no warning names cxx_host" 'cxx_host' "$T/out.err"
check "debuginfod: the file is in DEBUGINFOD_CACHE_PATH" \
	test -s "$T/cache1/$CXX_ID/debuginfo"
export DEBUGINFOD_CACHE_PATH=$T/cache2
prof --no-debuginfod
disagree "--no-debuginfod: not asked" "$T/truth.sym" "$T/out.sym"
check "--no-debuginfod: nothing fetched" test ! -e "$T/cache2/$CXX_ID"

# ----------------------------------------- the C program, in the process
# jm4lwd stripped, its debug file on the server only; its own heap
# sampled at every allocation. /pprof/symbol is symbolized in the process
# (on the worker) through the same configuration as jmtp.
# inproc NAME CONF-LINES...: start the stripped jm4lwd with these config
# lines; its HTTP port in HTTP_PORT, a fresh dump in C_DUMP, the truth
# for it in $T/NAME.truth (the program's addresses, as the unstripped
# binary names them) and the process's names for them in $T/NAME.ours.
inproc() {
	local name=$1 conf addrs code
	shift
	conf=$(scratch "$name")/jm4lwd.conf
	printf '%s\n' "dump_min_interval = 0" "$@" >"$conf"
	JM4LWD=$S/jm4lwd start_daemon -e "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0" \
		-e "DEBUGINFOD_URLS=${IN_URLS:-}" -e "DEBUGINFOD_CACHE_PATH=$T/$name.cache" \
		-- -f "$conf" -l 127.0.0.1:0 -D "$(dirname "$conf")" || return 1
	C_DUMP=$(ask jmfp)
	[ -f "$C_DUMP" ] || { fail "$name: jmfp gave a dump" "$C_DUMP"; return 1; }
	"$JM4LW_PROF" -f symbolized --no-debuginfod --binary "$BIN/jm4lwd" \
		-o "$T/$name.full" "$C_DUMP" 2>/dev/null
	symbols "$T/$name.full" "$C_DUMP" "$S/jm4lwd" >"$T/$name.truth"
	addrs=$(awk '{ print $1 }' "$T/$name.truth" | paste -sd+)
	code=$(timeout $((60 * SLOW)) curl -sS -o "$T/$name.sym" -w '%{http_code}' \
		--data-binary "$addrs" "http://127.0.0.1:$HTTP_PORT/pprof/symbol")
	[ "$code" = 200 ] || { fail "$name: /pprof/symbol answers 200" "$code"; return 1; }
	sort "$T/$name.sym" >"$T/$name.ours"
}

IN_URLS=$URLS
if inproc dfd-on "symbolize_debuginfod = on" "symbolize_timeout = 20"; then
	n=$(wc -l <"$T/dfd-on.truth")
	if [ "$n" -ge 10 ]; then pass "jm4lwd's dump has $n addresses of its own code"; else
		fail "jm4lwd's dump has addresses of its own code ($n)"; fi
	agree "in the process, symbolize_debuginfod = on: jm4lwd's names (C)" \
		"$T/dfd-on.truth" "$T/dfd-on.ours"
	assert_grep "in the process: libdebuginfod loaded once asked (dlopen)" \
		'libdebuginfod' "/proc/$PID/maps"
	ask jmtp >"$T/dfd-on.jmtp"
	assert_grep "in the process: jmtp answers" '^# live heap' "$T/dfd-on.jmtp"
	assert_no_grep "in the process: jmtp's warning does not name jm4lwd" \
		'^# warning: no debug info from debuginfod.*jm4lwd' "$T/dfd-on.jmtp"
	stop_daemon
fi
if inproc dfd-off; then
	disagree "in the process, symbolize_debuginfod off (the default): not asked" \
		"$T/dfd-off.truth" "$T/dfd-off.ours"
	check "in the process, off: nothing fetched" \
		test ! -e "$T/dfd-off.cache/$C_ID"
	# Never asked: neither libdebuginfod nor the libcurl it brings.
	assert_no_grep "in the process, off: libdebuginfod and libcurl not mapped" \
		'libdebuginfod|libcurl' "/proc/$PID/maps"
	stop_daemon
fi
IN_URLS=
mkdir -p "$T/cdd/.build-id/${C_ID:0:2}"
cp "$DBG/jm4lwd.debug" "$T/cdd/.build-id/${C_ID:0:2}/${C_ID:2}.debug"
if inproc dirs "debug_dirs = $T/nothing,$T/cdd"; then
	agree "in the process, debug_dirs (a build-ID tree, the second of two)" \
		"$T/dirs.truth" "$T/dirs.ours"
	stop_daemon
fi

# In the process the object is read through /proc/self/map_files; its
# debuglink is still looked for beside the file the module names.
cp "$DBG/jm4lwd.debug" "$S/jm4lwd.debug"
if inproc beside; then
	agree "in the process, .gnu_debuglink beside the object" \
		"$T/beside.truth" "$T/beside.ours"
	stop_daemon
fi
rm -f "$S/jm4lwd.debug"

# ------------------------------------------------ a debuginfod that lies
# A server that answers every build ID with one file (lying_debuginfod.py:
# a real debuginfod indexes files by the ID in them and cannot be made to
# lie): its answer is checked as strictly as any other debug file. Another
# build's debug file or bytes that are no ELF are not used, one warning
# line says so, and the copy in libdebuginfod's cache is removed (asked
# again, the server is asked again: a bad answer is never used from the
# cache either).
# liar FILE: the stand-in on a loopback port, serving FILE; its URL in
# LIAR, the requests it was asked in $LIAR_LOG.
liar() {
	local log pid port _
	log=$(mktemp "$T/liar.XXXX")
	LIAR_LOG=$log.requests
	python3 "$TESTS_DIR/integration/lying_debuginfod.py" "$1" \
		--log "$LIAR_LOG" >"$log" 2>&1 &
	pid=$!
	track "$pid"
	for _ in $(seq 200); do
		port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$log")
		[ -n "$port" ] && break
		_alive "$pid" || break
		sleep 0.05
	done
	[ -n "$port" ] || die "lying_debuginfod.py listens on a loopback port" "$(cat "$log")"
	LIAR=http://127.0.0.1:$port
}

# jm4lwd's function names (its unstripped symbol table): none of them may
# name an address of cxx_host.
nm --defined-only "$BIN/jm4lwd" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$T/jm4lwd.funcs"
# no_foreign DESC SYM: no name in SYM is one of jm4lwd's functions.
no_foreign() {
	local bad
	bad=$(awk 'NR == FNR { f[$0] = 1; next }
		{ for (i = 2; i <= NF; i++) { n = $i; sub(/\(.*/, "", n); if (n in f) { print; break } } }' \
		"$T/jm4lwd.funcs" "$2" | head -3)
	assert_eq "$1" "" "$bad"
}

liar "$DBG/jm4lwd.debug"
export DEBUGINFOD_URLS=$LIAR DEBUGINFOD_CACHE_PATH=$T/cache-liar
for run in first second; do
	: >"$LIAR_LOG"
	prof
	no_foreign "another build's debug file from debuginfod ($run run): no name of that build" "$T/out.sym"
	disagree "another build's debug file from debuginfod ($run run): not used" \
		"$T/truth.sym" "$T/out.sym"
	assert_grep "another build's debug file from debuginfod ($run run): one warning line says so" \
		"^jm4lw-prof: warning: debuginfod: the answer for $CXX_ID \(cxx_host\) is another build \($C_ID\); not used" \
		"$T/out.err"
	check "another build's debug file from debuginfod ($run run): not left in the cache" \
		test ! -e "$T/cache-liar/$CXX_ID/debuginfo"
	assert_grep "another build's debug file ($run run): the server was asked (no cached answer used)" \
		"^/buildid/$CXX_ID/debuginfo" "$LIAR_LOG"
done
liar "$T/random.bytes"
export DEBUGINFOD_URLS=$LIAR DEBUGINFOD_CACHE_PATH=$T/cache-random
prof
disagree "random bytes from debuginfod: not used" "$T/truth.sym" "$T/out.sym"
assert_grep "random bytes from debuginfod: one warning line says so" \
	"^jm4lw-prof: warning: debuginfod: the answer for $CXX_ID \(cxx_host\) is not an ELF file; not used" \
	"$T/out.err"
check "random bytes from debuginfod: not left in the cache" \
	test ! -e "$T/cache-random/$CXX_ID/debuginfo"
export DEBUGINFOD_URLS=$URLS DEBUGINFOD_CACHE_PATH=$T/cache2

# In the process (symbolize_debuginfod = on): cxx_host's debug file for
# jm4lwd's build ID.
liar "$DBG/cxx_host.debug"
IN_URLS=$LIAR
if inproc liar "symbolize_debuginfod = on" "symbolize_timeout = 20"; then
	disagree "in the process, another build's debug file from debuginfod: not used" \
		"$T/liar.truth" "$T/liar.ours"
	assert_no_grep "in the process, another build's debug file: no name of that build" \
		'cxxhost::' "$T/liar.ours"
	ask jmtp >"$T/liar.jmtp"
	assert_no_grep "in the process: jmtp names nothing of that build" 'cxxhost::' "$T/liar.jmtp"
	assert_grep "in the process: jmtp's warning says the answer is another build" \
		"^# warning: debuginfod: the answer for $C_ID \(jm4lwd\) is another build \($CXX_ID\); not used; nor for [0-9]+ more objects \(.*libjemalloc" \
		"$T/liar.jmtp"
	check "in the process: the answer is not left in the cache" \
		test ! -e "$T/liar.cache/$C_ID/debuginfo"
	stop_daemon
fi
IN_URLS=

# --------------------------------------------- debuginfod down or silent
kill "$DPID"
wait_exit "$DPID" 10
# timed DESC BOUND CMD...: CMD ends within BOUND seconds.
timed() {
	local desc=$1 bound=$2 t0 t1
	shift 2
	t0=$(date +%s%N)
	"$@"
	t1=$(date +%s%N)
	ELAPSED_MS=$(((t1 - t0) / 1000000))
	if [ "$ELAPSED_MS" -le $((bound * 1000)) ]; then
		pass "$desc (${ELAPSED_MS} ms)"
	else
		fail "$desc (${ELAPSED_MS} ms, bound $bound s)"
	fi
}
export DEBUGINFOD_CACHE_PATH=$T/cache3
timed "server stopped: jm4lw-prof --timeout 3 ends in time" $((3 + 5 * SLOW)) \
	prof --timeout 3
disagree "server stopped: cxx_host's frames are not DWARF's" "$T/truth.sym" "$T/out.sym"
assert_grep "server stopped: one warning line names what is missing" \
	'^jm4lw-prof: warning: no debug info from debuginfod for .*cxx_host' "$T/out.err"

# A server that takes the connection and never answers (nc -d: reads,
# sends nothing): the timeout.
SPORT=$(free_port)
nc.openbsd -d -l 127.0.0.1 "$SPORT" >/dev/null 2>&1 &
track $!
for _ in $(seq 50); do
	ss -ltn "sport = :$SPORT" 2>/dev/null | grep -q LISTEN && break
	sleep 0.1
done
export DEBUGINFOD_URLS=http://127.0.0.1:$SPORT DEBUGINFOD_CACHE_PATH=$T/cache4
timed "silent server: jm4lw-prof --timeout 2 ends within it" $((2 + 4 * SLOW)) \
	prof --timeout 2
check "silent server: it did wait for the server (${ELAPSED_MS} ms)" \
	test "$ELAPSED_MS" -ge 1500
disagree "silent server: cxx_host's frames are not DWARF's" "$T/truth.sym" "$T/out.sym"
assert_grep "silent server: the warning says the timeout was reached" \
	'^jm4lw-prof: warning: no debug info from debuginfod for .*cxx_host.*: the timeout was reached' \
	"$T/out.err"
assert_eq "silent server: one warning line" 1 "$(grep -c 'no debug info from debuginfod' "$T/out.err")"
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH

# The same in the process: jmtp within the timeout, its warning line.
SPORT2=$(free_port)
nc.openbsd -d -lk 127.0.0.1 "$SPORT2" >/dev/null 2>&1 &
track $!
sleep 0.3
IN_URLS=http://127.0.0.1:$SPORT2
if inproc silent "symbolize_debuginfod = on" "symbolize_timeout = 2"; then
	disagree "in the process, silent server: jm4lwd's frames are not DWARF's" \
		"$T/silent.truth" "$T/silent.ours"
	timed "in the process, silent server: jmtp answers within the timeout" \
		$((2 + 4 * SLOW)) ask_to jmtp "$T/silent.jmtp"
	assert_grep "in the process: jmtp says what was missing in one line" \
		'^# warning: no debug info from debuginfod for .*jm4lwd.*: the timeout was reached' \
		"$T/silent.jmtp"
	# jmcs has no room for a remark: the host's log says it.
	ask jmcs >"$T/silent.jmcs"
	assert_no_grep "in the process: jmcs's collapsed stacks carry no remark" '^#' "$T/silent.jmcs"
	if wait_log 'symbolizing: no debug info from debuginfod for .*jm4lwd'; then
		pass "in the process: jmcs's missing debug info is in the host's log"
	else
		fail "in the process: jmcs's missing debug info is in the host's log" \
			"$(show_tail "$DLOG")"
	fi
	alive "in the process: the daemon still serves"
	stop_daemon
fi
finish

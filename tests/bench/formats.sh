#!/bin/bash
# formats.sh [BUILD_DIR]: what each view of a profile costs offline, on one
# dump of many stacks. Starts BUILD_DIR/tests/bench/bench_host (default
# build/, made with -DJM4LW_TESTS=ON; BENCH_HOST names another) over MIB MiB (256) of blocks through
# thousands of call chains, sampled once per 2^LG bytes (15), takes one
# dump by jmfp and stops it; then runs jm4lw-prof on that dump in every
# format (text, collapsed, svg, dot, callgraph, pprof): wall and CPU
# seconds and peak RSS (GNU time), output bytes, and with CALLGRIND=1 (the
# default when valgrind is here) the instructions of the whole run, which
# a loaded machine does not move. JEPROF=1 adds jeprof --collapsed on the
# same dump. KEEP_DUMP=FILE keeps the dump there. Prints one Markdown
# table; a figure, not a test (exit 1 only when something did not run).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$ROOT/build}" && pwd) || exit 2
MIB=${MIB:-256}
LG=${LG:-15}
CALLGRIND=${CALLGRIND:-$(command -v valgrind >/dev/null && echo 1 || echo 0)}
JEPROF=${JEPROF:-0}
FORMATS="text collapsed svg dot callgraph pprof"
HOST=${BENCH_HOST:-$B/tests/bench/bench_host}
PROF=$B/jm4lw-prof
# shellcheck source=../lib/base.sh
. "$ROOT/tests/lib/base.sh"
for f in "$HOST" "$PROF" /usr/bin/time; do
	[ -x "$f" ] || { log "$f missing (a build with -DJM4LW_TESTS=ON; GNU time)"; exit 2; }
done
W=$(mktemp -d "$B/formats.XXXXXX") || exit 2
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT

# The dump: the host's heap built, one jmfp.
mkdir -p "$W/dumps"
MALLOC_CONF=prof:true,lg_prof_sample:$LG "$HOST" -S -T -m "$MIB" -l 127.0.0.1:0 "$W/dumps" \
	</dev/null >"$W/host.log" 2>&1 &
pid=$!
port=$(wait_port "$W/host.log" "bench_host: listening on" 300) ||
	{ log "bench_host did not start: $(tail -3 "$W/host.log")"; exit 1; }
# No -q: Debian's nc.openbsd -q N waits N seconds after stdin's end even
# once the reply is in and the host has closed (120 s of every run).
dump=$(echo jmfp | timeout 120 nc.openbsd 127.0.0.1 "$port")
[ -f "$dump" ] || { log "jmfp: ${dump:-no reply}"; exit 1; }
cp "$dump" "$W/host.heap"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=
D=$W/host.heap
[ -z "${KEEP_DUMP:-}" ] || cp "$D" "$KEEP_DUMP"
stacks=$(grep -c '^@' "$D")

# row TOOL FORMAT CMD...: one run of CMD (its output in $W/out), a row.
row() {
	local tool=$1 f=$2 ins=— wall u s kb
	shift 2
	/usr/bin/time -f '%e %U %S %M' -o "$W/time" "$@" >"$W/out" 2>"$W/err" ||
		{ log "$tool -f $f: $(head -2 "$W/err")"; return 1; }
	read -r wall u s kb <"$W/time"
	if [ "$CALLGRIND" = 1 ]; then
		valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" "$@" >/dev/null 2>&1 &&
			ins=$(awk '$1 == "totals:" || $1 == "summary:" { printf "%.0f M", $2 / 1e6; exit }' "$W/cg.out")
	fi
	printf '| %s | %s | %s | %.2f | %.0f | %s | %s |\n' "$tool" "$f" "$wall" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" \
		"$((kb / 1024))" "$ins" "$(stat -c %s "$W/out")"
}

echo "Dump: bench_host -S -m $MIB at lg_prof_sample:$LG, $stacks stacks, $(stat -c %s "$D") bytes ($B)."
echo ""
echo "| tool | format | wall s | CPU s | peak MiB | instructions | output bytes |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
rc=0
for f in $FORMATS; do
	row jm4lw-prof "$f" "$PROF" -f "$f" "$D" || rc=1
done
if [ "$JEPROF" = 1 ]; then
	CALLGRIND=0 row jeprof collapsed jeprof --collapsed "$HOST" "$D" || rc=1
fi
exit $rc

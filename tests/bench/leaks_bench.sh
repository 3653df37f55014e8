#!/bin/bash
# Figures for the leak question (BENCHMARKS.md, "Leak suspects"):
# tests/host/leak_host dumps N times by jmfp (each kept dump writes its
# leak index, which parses and symbolizes it on the worker), then jmlk
# over the N dumps is timed with their indexes, without them (the first
# question makes them), and again; /jemalloc/leaks; jm4lw-prof --trend
# offline over the same dumps. Prints the figures; checks nothing.
#
#	bash tests/bench/leaks_bench.sh [N]      (default 100)
. "$(dirname "$0")/../lib.sh"

JM4LW_PROF=${JM4LW_PROF:-$ROOT/build/jm4lw-prof}
N=${1:-100}
need nc.openbsd curl
d=$(scratch leaks_bench)
printf 'dump_min_interval = 0\ndump_min_free = 0\n' >"$d/conf"
start_leak_host "$d" 12 || die "leak_host" "$(cat "$d/err")"
PID=$LPID
PORT=$LPORT
HPORT=$LHPORT
sleep 1

# secs CMD...: CMD's wall time in seconds.
secs() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}

t=$(secs sh -c "for i in \$(seq $N); do echo jmfp | nc.openbsd 127.0.0.1 $PORT; done")
echo "jmfp x $N (each with its leak index): $t s, $(awk -v t="$t" -v n="$N" 'BEGIN { printf "%.0f", t * 1000 / n }') ms each"
echo "dump size: $(du -b "$(find "$d/dumps" -maxdepth 1 -name '*.heap' | head -1)" | cut -f1) B; index: $(du -b "$(find "$d/dumps" -maxdepth 1 -name '*.heap.trend' | head -1)" | cut -f1) B"
for i in 1 2 3; do echo "jmlk over $N dumps, indexed ($i): $(secs sh -c "echo jmlk | nc.openbsd 127.0.0.1 $PORT") s"; done
echo "/jemalloc/leaks over $N dumps, indexed: $(secs curl -s "http://127.0.0.1:$HPORT/jemalloc/leaks") s"
find "$d/dumps" -maxdepth 1 -name '*.heap.trend' -delete
echo "jmlk over $N dumps, no index (made now): $(secs sh -c "echo jmlk | nc.openbsd 127.0.0.1 $PORT") s"
echo "jmlk over $N dumps, indexed again: $(secs sh -c "echo jmlk | nc.openbsd 127.0.0.1 $PORT") s"
mapfile -t dumps < <(find "$d/dumps" -maxdepth 1 -name '*.heap')
echo "jm4lw-prof --trend over $N dumps: $(secs "$JM4LW_PROF" --trend "${dumps[@]}") s"
echo jmlk | nc.openbsd 127.0.0.1 "$PORT" | head -3
kill -TERM "$PID"
wait_exit "$PID" 10 >/dev/null

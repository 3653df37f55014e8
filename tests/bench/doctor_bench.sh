#!/bin/bash
# The memory doctor's cost, as figures for BENCHMARKS.md:
#  a. doctor_bench (16 arenas, every small class in use in each): the
#     diagnosis, jmdr, /metrics' doctor part, in the process; the median
#     of ROUNDS runs; callgrind's instructions per diagnosis;
#  b. /metrics end to end, kept alive (curl, as Prometheus scrapes): the
#     CPU per request of the thread that serves it, on jm4lwd (1 arena) and
#     on bench_host -T with 16 busy arenas, this build against BASE_BUILD
#     (a build of the commit before the doctor) when given.
#
#	doctor_bench.sh OUT.md   (BUILD, BASE_BUILD, ROUNDS, N from the caller)
set -u
OUT=${1:?usage: doctor_bench.sh OUT.md}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
BASE_BUILD=${BASE_BUILD:-}
ROUNDS=${ROUNDS:-5}
N=${N:-2000}
W=$(mktemp -d "${TMPDIR:-/tmp}/doctor-bench.XXXXXX") || exit 2
PIDS=()
# shellcheck disable=SC2154 # p is the trap's own loop variable
trap 'for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$W"' EXIT
: >"$OUT"
# The helpers the test harness shares: log, wait_port (base.sh); o, kv,
# median (figures.sh).
# shellcheck source=../lib/base.sh
. "$ROOT/tests/lib/base.sh"
# shellcheck source=../lib/figures.sh
. "$ROOT/tests/lib/figures.sh"

# ---------------------------------------------------------------- a. in the process
for _ in $(seq 1 "$ROUNDS"); do
	"$BUILD/tests/bench/doctor_bench" -n "$N" >>"$W/a.lines" || log "doctor_bench failed"
done
ins=nan
if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
	valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" \
		--toggle-collect=doctor_diagnose "$BUILD/tests/bench/doctor_bench" -q -n 200 \
		>/dev/null 2>&1 &&
		ins=$(awk '$1 == "totals:" || $1 == "summary:" { print int($2 / 201); exit }' "$W/cg.out")
fi
am() { while read -r l; do kv "$l" "$1"; done <"$W/a.lines" | median; }

# ---------------------------------------------------------------- b. /metrics end to end
# thread_cpu_us PID NAME: CPU (user + system) of PID's thread NAME, in µs.
thread_cpu_us() {
	local t
	for t in /proc/"$1"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = "$2" ] || continue
		sed 's/.*) //' "$t/stat" | awk -v k="$(getconf CLK_TCK)" '{ printf "%d", ($12 + $13) * 1000000 / k }'
		return
	done
	echo 0
}
# scrape NAME PID THREAD PORT: N kept-alive /metrics; µs CPU a request.
scrape() {
	local c0 c1
	curl -s -o /dev/null "http://127.0.0.1:$4/metrics?w=[1-200]"
	c0=$(thread_cpu_us "$2" "$3")
	curl -s -o /dev/null "http://127.0.0.1:$4/metrics?n=[1-$N]"
	c1=$(thread_cpu_us "$2" "$3")
	awk -v a="$c0" -v b="$c1" -v n="$N" 'BEGIN { printf "%.1f\n", (b - a) / n }' >>"$W/$1"
	curl -s "http://127.0.0.1:$4/metrics" | grep -c '^[a-z]' >"$W/$1.samples"
}
# serve WHICH BUILDDIR: jm4lwd, then bench_host with 16 busy arenas.
serve() {
	local which=$1 b=$2 pid port
	env MALLOC_CONF=prof:true,prof_active:false "$b/jm4lwd" -l 127.0.0.1:0 -W 127.0.0.1:0 \
		>"$W/jm4lwd.$which.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	if port=$(wait_port "$W/jm4lwd.$which.log" "HTTP listening on" 30); then
		scrape "jm4lwd.$which" "$pid" jm4lwd "$port"
	else
		log "jm4lwd ($which) did not start"
	fi
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null
	mkdir -p "$W/dumps"
	env MALLOC_CONF=prof:true,narenas:16 "$b/tests/bench/bench_host" -T -m 64 -A 16 -P 2 \
		-l 127.0.0.1:0 -W 127.0.0.1:0 "$W/dumps" >"$W/host.$which.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	if port=$(wait_port "$W/host.$which.log" "HTTP listening on" 30); then
		sleep 1
		scrape "host.$which" "$pid" jm4lw "$port"
		curl -s "http://127.0.0.1:$port/jemalloc/doctor" >"$W/host.$which.doctor" 2>/dev/null
	else
		log "bench_host ($which) did not start"
	fi
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null
}
for _ in $(seq 1 "$ROUNDS"); do
	serve new "$BUILD"
	[ -n "$BASE_BUILD" ] && serve base "$BASE_BUILD"
done
bm() { median <"$W/$1" 2>/dev/null || echo nan; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b + 0 == 0) print "—"; else printf "%.2f", a / b }'; }
narenas=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["narenas"])' "$W/host.new.doctor" 2>/dev/null || echo "?")

o "### a. The diagnosis in the process (doctor_bench: $(kv "$(head -1 "$W/a.lines")" arenas) arenas x $(kv "$(head -1 "$W/a.lines")" bins) small classes, every class in use in each; median of $ROUNDS runs of $N calls)"
o ""
o "| | µs a call |"
o "| --- | --- |"
o "| the diagnosis on a snapshot (\`doctor_diagnose\`, no epoch) | $(am diag_us) |"
o "| the same after its own \`epoch\` (what \`jmdr\` pays when the last epoch is over 1 ms old) | $(am diag_epoch_us) |"
o "| \`jmdr\`: epoch, diagnosis and its text ($(am jmdr_bytes) bytes) | $(am jmdr_us) |"
o "| \`/metrics\`' doctor part: coalesced epoch, diagnosis, the families | $(am metrics_doctor_us) |"
o "| of which the families' text | $(am families_us) |"
o ""
o "Instructions per diagnosis (callgrind, \`--toggle-collect=doctor_diagnose\`, 200 calls): **$ins**."
o ""
o "### b. \`/metrics\` end to end, kept alive ($N requests a case, median of $ROUNDS rounds)"
o ""
o "CPU (user + system) of the thread that serves HTTP (\`/proc/PID/task/TID/stat\`) ÷ requests; curl on one"
o "kept-alive connection (jm4lwd closes it every 100 replies, as for Prometheus)."
o ""
o "| process | samples before → now | CPU µs/request before | now | now ÷ before |"
o "| --- | --- | --- | --- | --- |"
o "| jm4lwd (1 arena) | $(cat "$W/jm4lwd.base.samples" 2>/dev/null || echo —) → $(cat "$W/jm4lwd.new.samples" 2>/dev/null) | $(bm jm4lwd.base) | $(bm jm4lwd.new) | **$(ratio "$(bm jm4lwd.new)" "$(bm jm4lwd.base)")** |"
o "| bench_host -T, $narenas arenas (16 threads allocating) | $(cat "$W/host.base.samples" 2>/dev/null || echo —) → $(cat "$W/host.new.samples" 2>/dev/null) | $(bm host.base) | $(bm host.new) | **$(ratio "$(bm host.new)" "$(bm host.base)")** |"
o ""
o "Commands:"
o ""
o '```'
o "doctor_bench -n $N; valgrind --tool=callgrind --toggle-collect=doctor_diagnose doctor_bench -q -n 200"
o "MALLOC_CONF=prof:true,prof_active:false jm4lwd -l 127.0.0.1:0 -W 127.0.0.1:0"
o "MALLOC_CONF=prof:true,narenas:16 bench_host -T -m 64 -A 16 -P 2 -l 127.0.0.1:0 -W 127.0.0.1:0 DIR"
o "curl -s -o /dev/null 'http://127.0.0.1:\$HTTP_PORT/metrics?n=[1-$N]'"
o '```'
cat "$OUT"

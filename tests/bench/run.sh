#!/bin/bash
# shellcheck disable=SC2034 # the settings below are read by the sections it sources
# tests/bench/run.sh [--smoke] [--only SECTION,...] — jm4lw's benchmark suite.
#
# Starts everything on loopback, measures these comparisons and writes a
# Markdown report (in the build directory; the repository's BENCHMARKS.md
# gathers the current figures from such reports):
#   1. ruok conn/s: jm4lwd / floor (tests/bench/floor.c)        target >= 0.90
#   2. ruok and mntr conn/s: jm4lwd / ZooKeeper 3.8             target mntr >= 5
#   3. jmst (fresh connections) / Redis MEMORY MALLOC-STATS     target >= 1.0
#   4. jmfp wall time / bare mallctl("prof.dump"), same heap    target <= 1.05
#   5. the preload agent in redis-server: GET/SET throughput    target >= 0.99,
#      idle wake-ups/s of its thread (target 0), RSS added (target <= 1 MiB)
#   6. ruok p99 with 1000 idle connections held open            target <= 10 ms
#   7. ruok latency while jmfp dumps a >= 1 GiB heap of ~30000 backtraces
#      back to back, the module on its own thread and on the host's loop
#                                target (thread) p99 <= 2 ms, max <= 10 ms
#   8. ruok through a flood of 1000 idle and trickling connections at
#      jm4lwd's default max_connections (64); its descriptors after
#   (7 and 8 print figures, never a verdict: they show jm4lw before and
#   after the dump moves to a worker thread and idle peers are evicted.)
#   9. offline profiles: jm4lw-prof -f collapsed against jeprof --collapsed
#      (binutils addr2line, and llvm-addr2line) on clang-14 and on a
#      program with > 50 MB of DWARF: wall, peak RSS, instructions
#      (tests/bench/prof_speed.sh; figures only; skipped by --smoke)
#  10. in-process profiles (jmtp, jmcs, jmfg): the host's extra RssAnon at
#      the peak and after, in clangd under jm4lw-run and in bench_host -S
#      (tests/bench/inproc.py; massif says what the peak is made of), and
#      the host's own allocating threads (bench_host -A, word alst) and
#      ruok while jmfg runs back to back, thread and embedded mode
#                                target: extra RssAnon <= 16 MiB, back after
#      (--smoke: bench_host only, one round, thread mode)
#  11. the HTTP face: /metrics against mntr (latency, CPU per request),
#      /debug/pprof/heap against jm4lw-prof -f pprof (tests/bench/http_bench.sh)
#  12. the memory doctor's cost (tests/bench/doctor_bench.sh)
#  13. a busy machine: jmfp/jmtp/jmfg reply times, redis SET
#      and a bench_host of thousands of stacks (its allocating thread's
#      latency) with jmfp back to back, the host's wait on jemalloc's
#      profiling locks per dump (tests/bench/lockprobe.c), quiet and beside
#      two busy loops (tests/bench/busy.sh; figures only; --smoke: quiet
#      only; HOSTS, CONDITIONS, JM4LW_WORKER_NICE pass through to it)
#  14. offline profile views: jm4lw-prof in every format (text, collapsed,
#      svg, dot, callgraph, pprof) on one dump of thousands of stacks:
#      time, peak RSS, instructions (tests/bench/formats.sh; figures only;
#      --smoke: an 8 MiB host, no callgrind)
#  15. the rolling profile snapshots: redis's p99 with them every second,
#      at the 60 s default and off, side by side, quiet and beside two
#      busy loops; the ring's bytes, the worker's CPU per snapshot
#      (tests/bench/snapshots.sh; figures only; --smoke: quiet, one
#      round, a few seconds)
# The cases of a comparison run in alternation (A B A B ...), at concurrency
# 1 and 32, for ROUNDS rounds (default 5; 7 for the agent's throughput), the
# order reversed every other round; a ratio is the median of the per-round
# ratios (each of two runs made side by side in time), so a machine whose
# load drifts during the run moves both sides of a ratio alike. Servers are pinned to CPU 1 and the load
# generators to CPU 0 when there are two CPUs or more. The full run ends with
# perf profiles (CPU and syscalls per connection, time per DSO) when perf
# works here.
#
# --smoke: every case ~1 s, one round, each section at its smallest size
# (a 16 MiB heap, the fewest requests); proves the harness in about a
# minute and a half on a quiet 2-core machine (CI). Exit status, both modes: 0 when every server started,
# every request was answered and every reply was right; 1 otherwise. A ratio
# never fails the run: targets are reported, met or missed.
#
# Environment: JM4LW_BUILD (default build-bench; built with cmake Release if
# jm4lwd is missing), BENCH_OUT (report path; default
# $JM4LW_BUILD/BENCHMARKS-full.md for the full run, never the repository's
# BENCHMARKS.md, which gathers the current figures of many runs by hand;
# $JM4LW_BUILD/BENCHMARKS-smoke.md for --smoke), ROUNDS,
# AGENT_ROUNDS, DUR (seconds per case), HEAP_MB, CLIENT_CPU, SERVER_CPU,
# KEEP=1 (keep the scratch directory), ONLY or --only (run only these
# sections, by name: floor zk jmfp idle redis stall flood prof inproc http
# doctor busy formats snapshots; e.g. --only stall,flood or ONLY="stall flood"; the
# report, $JM4LW_BUILD/BENCHMARKS-only.md unless BENCH_OUT says otherwise,
# then has dashes for the others). redis also brings the callgrind counts.
#
# Needs: gcc or cc, python3 (a free port), taskset, java + Debian's
# zookeeper, redis-server + redis-benchmark + redis-cli. perf, valgrind
# (callgrind, massif) and clangd (section 10) are optional.
#
# The layout: this driver sets the mode up and runs the sections in
# tests/bench/sections/ (one file a section, in the order of SECTIONS
# below, over the helpers of tests/bench/lib.sh). Sections only measure:
# their figures go to the run's results ($WORK/results.sh, with the logs
# and profiles beside it). tests/bench/report.sh then writes the report
# from those results alone (tests/bench/report/, one file a section), so
#	KEEP=1 tests/bench/run.sh ...; tests/bench/report.sh WORK OUT
# writes a report again without measuring anything.
set -uo pipefail
# What the shell holds before the run: save_results keeps what the run adds.
BENCH_VARS0=$(compgen -v)

# The sections --only (and ONLY=) take, by name.
SECTION_NAMES="floor zk jmfp idle redis stall flood prof inproc http doctor busy formats snapshots"

# usage [STATUS]: the synopsis, on stdout for --help (status 0), else on
# stderr (status 2).
usage() {
	local st=${1:-2}
	{
		echo "usage: tests/bench/run.sh [--smoke] [--only SECTION[,SECTION...]]..."
		echo "  SECTION: $SECTION_NAMES"
	} >&$((st == 0 ? 1 : 2))
	exit "$st"
}

MODE=full
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) MODE=smoke ;;
	--only)
		[ $# -ge 2 ] || usage
		ONLY="${ONLY:+$ONLY }${2//,/ }"
		shift
		;;
	--only=*)
		ONLY="${ONLY:+$ONLY }${1#--only=}"
		ONLY=${ONLY//,/ }
		;;
	-h | --help) usage 0 ;;
	*) usage ;;
	esac
	shift
done
# A section name that is none of ours would run nothing and say nothing.
for s in ${ONLY:-}; do
	[[ " $SECTION_NAMES " == *" $s "* ]] || {
		echo "run.sh: no section '$s' (--only takes: $SECTION_NAMES)" >&2
		exit 2
	}
done

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${JM4LW_BUILD:-$ROOT/build-bench}
if [ "$MODE" = smoke ]; then
	DUR=${DUR:-1}
	ROUNDS=${ROUNDS:-1}
	AGENT_ROUNDS=${AGENT_ROUNDS:-1}
	HEAP_MB=${HEAP_MB:-16}
	DUMPS=3
	ZK_WARM=1
	IDLE_SECS=1
	STALL_SECS=1 FLOOD_SECS=1          # sections 7 and 8, per case
	INPROC_ROUNDS=1 INPROC_SECS=1 INPROC_STALL_ROUNDS=1 # section 10
	export INPROC_SETTLE=0.3           # inproc.py: the "after" read
	RB_KV_N1=1000 RB_KV_N32=5000       # redis-benchmark -t set,get
	RB_MS_N1=100 RB_MS_N32=200         # MEMORY MALLOC-STATS
	OUT=${BENCH_OUT:-$BUILD/BENCHMARKS-smoke.md}
else
	DUR=${DUR:-3}
	ROUNDS=${ROUNDS:-5}
	AGENT_ROUNDS=${AGENT_ROUNDS:-9}
	HEAP_MB=${HEAP_MB:-1024}
	DUMPS=9
	ZK_WARM=15
	IDLE_SECS=5
	STALL_SECS=10 FLOOD_SECS=10
	INPROC_ROUNDS=5 INPROC_SECS=5 INPROC_STALL_ROUNDS=3
	RB_KV_N1=60000 RB_KV_N32=200000
	RB_MS_N1=2000 RB_MS_N32=3000
	OUT=${BENCH_OUT:-$BUILD/BENCHMARKS-full.md}
fi
# A partial run never overwrites the full report.
[ -n "${ONLY:-}" ] && OUT=${BENCH_OUT:-$BUILD/BENCHMARKS-only.md}
CONCS="1 32"
IDLE_CONNS=1000
STALL_LG=15         # section 7: one sample per 32 KiB, ~30000 per GiB
CHURN_THREADS=2 CHURN_PCT=25 # section 10: bench_host -A 2 -P 25
FLOOD_TRICKLE_MS=1000
REFUSAL="error: too many connections"
T_START=$(date +%s)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/jm4lw-bench.XXXXXX")
PIDS=()
FAILURES=()
declare -A R        # results: key -> "v1 v2 ..." (one value per round)
declare -A PORTNAME # port -> name, for the commands shown in the report

BENCH_SRC=${BENCH_SRC:-$ROOT/tests/bench}
# shellcheck source=lib.sh
. "$BENCH_SRC/lib.sh"

trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# The sections in the order they run (tests/bench/sections/NAME.sh). The
# servers setup starts serve the sections up to callgrind, which stops
# them; each section checks want() for itself.
SECTIONS=(setup s1-floor s2-zk s4-jmfp s6-idle s7-stall s8-flood s10-inproc
	s3s5-redis callgrind s9-prof s11-http s12-doctor s13-busy s14-formats
	s15-snapshots)
for section_file in "${SECTIONS[@]}"; do
	t_section=$SECONDS
	# shellcheck source=/dev/null
	. "$BENCH_SRC/sections/$section_file.sh"
	# What each section costs, so the smoke run's time can be kept down.
	log "section $section_file: $((SECONDS - t_section)) s"
done

LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
T_END=$(date +%s)

save_results "$WORK/results.sh"
log "writing $OUT"
bash "$BENCH_SRC/report.sh" "$WORK" "$OUT" || bench_fail "tests/bench/report.sh $WORK $OUT"

if [ ${#FAILURES[@]} -gt 0 ]; then
	log "${#FAILURES[@]} failure(s):"
	printf '  %s\n' "${FAILURES[@]}" >&2
	exit 1
fi
log "done in $((T_END - T_START)) s; report in $OUT"
exit 0

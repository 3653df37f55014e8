#!/bin/bash
# tests/bench/busy.sh [--smoke] [OUT.md] — a busy machine (issue 27).
#
# Debian's redis-server under the agent (jm4lw-run --prof-active,
# lg_prof_sample 19, HEAP_MB of 4 KiB values), with tests/bench/lockprobe
# preloaded beside it, in two conditions: quiet, and with two busy loops
# (`while :; do :; done`, normal priority) beside it. In each, measures:
#   a. jmfp, jmtp, jmfg reply times (TRIES each, one connection at a time,
#      tests/bench/wordtime; a reply slower than REPLY_TIMEOUT is ">N s"
#      and its word is not tried again), and the CPU time per job of the
#      threads named jm4lw-worker and jm4lw-dump (utime+stime of
#      /proc/PID/task/TID/stat, before and after the word's tries, once
#      the job is done; "-" for a thread the build does not have);
#   b. redis SET (redis-benchmark -c 4 -d 4096 -t set -n RB_N --csv):
#      throughput, p50, p99, max, without dumps and with jmfp asked back
#      to back meanwhile (dump_min_interval = 0), and their ratios;
#   c. the lock window: lockprobe's longest malloc+free of a sampled
#      object in 50 ms windows overlapping a dump (each word's interval
#      from wordtime, on CLOCK_MONOTONIC like the probe) against the
#      windows of the same condition with no dump.
# Prints a Markdown section to OUT.md (default $JM4LW_BUILD/busy.md) and
# to stdout.
#
# The build is JM4LW_BUILD (default build-bench): its jm4lw-run and agent.
# lockprobe and wordtime come from $JM4LW_BUILD/tests/bench when it has
# them, else they are compiled from this script's directory, so the same
# script measures an older build (e.g. a worktree at e237666):
#	JM4LW_BUILD=/path/to/old/build tests/bench/busy.sh old.md
#
# --smoke: a 32 MiB heap, one try a word, quiet only, short runs (CI,
# under a minute); the busy condition too with SMOKE_BUSY=1.
# Exit 0 when every server started and every reply was right (a timeout
# is right only in the busy condition of a full run: it is the figure);
# 1 otherwise. Environment: HEAP_MB, TRIES, REPLY_TIMEOUT, RB_N, KEEP=1.
set -uo pipefail

MODE=full
if [ "${1:-}" = --smoke ]; then
	MODE=smoke
	shift
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH_SRC=$(cd "$(dirname "$0")" && pwd)
BUILD=${JM4LW_BUILD:-$ROOT/build-bench}
OUT=${1:-$BUILD/busy.md}
if [ "$MODE" = smoke ]; then
	HEAP_MB=${HEAP_MB:-32} TRIES=${TRIES:-1} REPLY_TIMEOUT=${REPLY_TIMEOUT:-20}
	RB_N=${RB_N:-60000} CONDITIONS="quiet"
	[ "${SMOKE_BUSY:-0}" = 1 ] && CONDITIONS="quiet busy"
else
	HEAP_MB=${HEAP_MB:-300} TRIES=${TRIES:-3} REPLY_TIMEOUT=${REPLY_TIMEOUT:-40}
	RB_N=${RB_N:-300000} CONDITIONS="quiet busy"
fi
LG=19
# How long to wait for a job in progress (a timed-out one) to finish.
IDLE_WAIT=$((REPLY_TIMEOUT * 3))

WORK=$(mktemp -d "${TMPDIR:-/tmp}/jm4lw-busy.XXXXXX") || exit 1
PIDS=()
FAILURES=()
declare -A R PORTNAME
# shellcheck source=lib.sh
. "$BENCH_SRC/lib.sh"
log() { echo "busy.sh: $*" >&2; }
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && sleep 0.5 && kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then log "scratch kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The tools.
need redis-server "Debian package redis-server" && need redis-benchmark "Debian package redis-tools" &&
	need redis-cli "Debian package redis-tools" && need python3 "free ports" || exit 1
for f in jm4lw-run libjm4lw_agent.so; do
	[ -e "$BUILD/$f" ] || { log "FAIL: $BUILD/$f missing (build it, or set JM4LW_BUILD)"; exit 1; }
done
BIN=$BUILD/tests/bench
if [ ! -x "$BIN/wordtime" ] || [ ! -e "$BIN/liblockprobe.so" ]; then
	BIN=$WORK/bin
	mkdir -p "$BIN"
	CC=${CC:-$(command -v gcc || command -v cc)}
	WARN="-Wall -Wextra -Werror -Wshadow -Wformat=2 -Wmissing-prototypes -Wstrict-prototypes"
	# shellcheck disable=SC2086
	{ $CC -O2 $WARN -o "$BIN/wordtime" "$BENCH_SRC/wordtime.c" &&
		$CC -O2 -g -fno-omit-frame-pointer -fPIC -shared $WARN -o "$BIN/liblockprobe.so" \
			"$BENCH_SRC/lockprobe.c" -pthread -ldl; } 2>"$WORK/cc.log" ||
		{ cat "$WORK/cc.log" >&2; log "FAIL: compiling wordtime, lockprobe"; exit 1; }
fi
WT=$BIN/wordtime
mono() { "$WT" -m; }

# ---------------------------------------------------------------- redis

RPORT=$(free_port)
PORTNAME[$RPORT]=REDIS_PORT
mkdir -p "$WORK/redis" "$WORK/dumps"
cat >"$WORK/agent.conf" <<EOF
# busy.sh: jmfp as fast as admitted, no HTTP port
dump_min_interval = 0
dump_dir = $WORK/dumps
read_timeout = 600
http_listen =
EOF
PROBE=$WORK/probe
start redis env MALLOC_CONF=lg_prof_sample:$LG JM4LW_LOCKPROBE="$PROBE" LD_PRELOAD="$BIN/liblockprobe.so" \
	"$BUILD/jm4lw-run" -l 127.0.0.1:0 -c "$WORK/agent.conf" --prof-active -- \
	redis-server --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK/redis"
RPID=$STARTED
up=0
for _ in $(seq 1 100); do
	[ "$(redis-cli -p "$RPORT" ping 2>/dev/null)" = PONG ] && { up=1; break; }
	sleep 0.1
done
[ $up = 1 ] || { log "FAIL: redis-server did not start: $(tail -3 "$WORK/redis.log")"; exit 1; }
APORT=$(wait_listen redis "$RPID" "jm4lw agent\[[0-9]*\]: listening on" 10) ||
	{ log "FAIL: the agent in redis-server did not listen"; exit 1; }
grep -q "^lockprobe: .*lg_sample $LG" "$WORK/redis.log" ||
	{ log "FAIL: lockprobe did not start in redis-server: $(grep lockprobe "$WORK/redis.log" | head -2)"; exit 1; }

# Fill: HEAP_MB of 4000-byte values (4 KiB with their sds header), random keys.
n=$((HEAP_MB * 1048576 / 4096))
redis-benchmark -h 127.0.0.1 -p "$RPORT" -t set -d 4000 -n "$n" -r 1000000000 -P 32 -c 4 -q >"$WORK/fill.log" 2>&1 ||
	fail "filling redis: $(tail -2 "$WORK/fill.log")"
USED=$(redis-cli -p "$RPORT" info memory | tr -d '\r' | sed -n 's/^used_memory_human://p')
KEYS=$(redis-cli -p "$RPORT" dbsize)
PORTNAME[$APORT]=AGENT_PORT
log "redis-server on $RPORT (agent on $APORT): $KEYS keys, used_memory $USED"

# ---------------------------------------------------------------- helpers

# CPU ticks (utime+stime) of redis's thread named $1, or "-" when none.
thread_ticks() {
	local t v=-
	for t in /proc/"$RPID"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = "$1" ]; then
			v=$(sed 's/.*) //' "$t/stat" | awk '{ print $12 + $13 }')
			break
		fi
	done
	echo "$v"
}
# Is a job running: a jm4lw-worker or jm4lw-dump thread runnable or in
# disk sleep? (Between jobs they sleep on a condition variable: S.)
job_running() {
	local t
	for t in /proc/"$RPID"/task/*; do
		case "$(cat "$t/comm" 2>/dev/null)" in
		jm4lw-worker | jm4lw-dump)
			case "$(sed 's/.*) //' "$t/stat" | cut -d' ' -f1)" in R | D) return 0 ;; esac ;;
		esac
	done
	return 1
}
# Wait up to IDLE_WAIT s for the module to be idle (3 samples in a row).
wait_idle() {
	local i quiet=0
	for i in $(seq 1 $((IDLE_WAIT * 10))); do
		if job_running; then quiet=0; else quiet=$((quiet + 1)); fi
		[ $quiet -ge 3 ] && return 0
		sleep 0.1
	done
	return 1
}
# Per-job CPU in ms from tick counts before and after N jobs.
per_job() {
	awk -v a="$1" -v b="$2" -v n="$3" -v t="$TICK_US" 'BEGIN {
		if (b == "-" || n == 0) { print "-"; exit }
		if (a == "-") a = 0
		printf "%.0f", (b - a) * t / 1000 / n }'
}
# The 99th percentile of the numbers on stdin.
p99() { sort -g | awk '{ a[NR] = $1 } END { k = int(NR * 0.99); if (k < 1) k = 1; if (NR == 0) print "—"; else printf "%.2f", a[k] }'; }
# s from ns.
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
# median and max of the numbers on stdin, "median / max", "—" for none.
medmax() {
	sort -g | awk -v f="${1:-%.2f}" '{ a[NR] = $1 } END {
		if (NR == 0) { print "—"; exit }
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf f " / " f "\n", m, a[NR] }'
}

BUSY_PIDS=()
busy_start() {
	local i
	for i in 1 2; do
		start "busyloop$i" bash -c 'while :; do :; done'
		BUSY_PIDS+=("$STARTED")
	done
}
busy_stop() {
	local p
	for p in "${BUSY_PIDS[@]}"; do stop "$p"; done
	BUSY_PIDS=()
}

# rbench KEY: redis SET from redis-benchmark's CSV: KEY.{rps,p50,p99,max}.
rbench() {
	local key=$1 line
	note_cmd "redis-benchmark -p $RPORT -c 4 -d 4096 -t set -n $RB_N --csv"
	if ! line=$(redis-benchmark -h 127.0.0.1 -p "$RPORT" -c 4 -d 4096 -t set -n "$RB_N" --csv 2>"$WORK/rb.err" |
		grep '^"SET"'); then
		fail "$key: redis-benchmark: $(head -2 "$WORK/rb.err" | tr '\n' ' ')"
		return 1
	fi
	R[$key.rps]=$(awk -F'","' '{ printf "%.0f", $2 }' <<<"$line")
	R[$key.p50]=$(awk -F'","' '{ print $5 }' <<<"$line")
	R[$key.p99]=$(awk -F'","' '{ print $7 }' <<<"$line")
	R[$key.max]=$(awk -F'","' '{ gsub(/"/, "", $8); print $8 }' <<<"$line")
	log "$key: ${R[$key.rps]} SET/s p50 ${R[$key.p50]} ms p99 ${R[$key.p99]} ms max ${R[$key.max]} ms"
}

# ---------------------------------------------------------------- conditions

prefix_of() {
	case $1 in
	jmfp) echo / ;;
	jmtp) echo "# live heap" ;;
	jmfg) echo "<?xml" ;;
	esac
}

for cond in $CONDITIONS; do
	log "condition: $cond"
	: >"$WORK/dumps.$cond" # START END STATUS (every job's interval)
	: >"$WORK/skip.$cond"  # intervals of no known state: not "without"
	[ "$cond" = busy ] && busy_start && sleep 1
	R[$cond.t0]=$(mono)
	R[$cond.load0]=$(cut -d' ' -f1 /proc/loadavg)

	# a. reply times and CPU per job
	for w in jmfp jmtp jmfg; do
		wait_idle || fail "$cond $w: a job still runs after ${IDLE_WAIT} s"
		w0=$(thread_ticks jm4lw-worker) d0=$(thread_ticks jm4lw-dump)
		jobs=0 times=() timed_out=
		note_cmd "wordtime -p \$AGENT_PORT -w $w -n 1 -t $REPLY_TIMEOUT -r $IDLE_WAIT -x '$(prefix_of $w)'   # x $TRIES"
		for _ in $(seq 1 "$TRIES"); do
			line=$("$WT" -p "$APORT" -w "$w" -n 1 -t "$REPLY_TIMEOUT" -r "$IDLE_WAIT" -x "$(prefix_of $w)")
			read -r s e st _ <<<"$line"
			case $st in
			ok) times+=("$(secs "$s" "$e")") jobs=$((jobs + 1)); echo "$s $e $w" >>"$WORK/dumps.$cond" ;;
			timeout)
				jobs=$((jobs + 1))
				timed_out=">$REPLY_TIMEOUT"
				if [ "$cond" != busy ] || [ "$MODE" != full ]; then
					fail "$cond $w: no reply in $REPLY_TIMEOUT s"
				fi
				wait_idle || fail "$cond $w: the job still runs $IDLE_WAIT s after the timeout"
				# The job ran on past the timeout: its windows are a dump's
				# but of no known end; count them as neither.
				echo "$s $(mono) $w" >>"$WORK/skip.$cond"
				break
				;;
			*) fail "$cond $w: reply $st ($line)" ;;
			esac
		done
		wait_idle || fail "$cond $w: a job still runs after ${IDLE_WAIT} s"
		w1=$(thread_ticks jm4lw-worker) d1=$(thread_ticks jm4lw-dump)
		R[$cond.$w.time]=$(printf '%s\n' "${times[@]}" | grep . | medmax)
		if [ -n "$timed_out" ] && [ ${#times[@]} = 0 ]; then
			R[$cond.$w.time]="$timed_out"
		elif [ -n "$timed_out" ]; then
			R[$cond.$w.time]+=", then $timed_out"
		fi
		R[$cond.$w.cpu]="$(per_job "$w0" "$w1" "$jobs") / $(per_job "$d0" "$d1" "$jobs")"
		log "$cond $w: ${R[$cond.$w.time]} s; CPU per job (worker / dump) ${R[$cond.$w.cpu]} ms"
	done

	# b. redis SET without dumps, then with jmfp back to back
	wait_idle || fail "$cond: a job still runs after ${IDLE_WAIT} s"
	rbench "$cond.nodump"
	note_cmd "wordtime -p \$AGENT_PORT -w jmfp -d 3600 -t $REPLY_TIMEOUT -x / &   # then redis-benchmark as above, then kill it"
	"$WT" -p "$APORT" -w jmfp -d 3600 -t "$REPLY_TIMEOUT" -x / >"$WORK/loop.$cond" 2>&1 &
	LOOP=$!
	PIDS+=("$LOOP")
	sleep 0.2
	rbench "$cond.dumps"
	kill -TERM "$LOOP" 2>/dev/null
	wait "$LOOP" 2>/dev/null
	tkill=$(mono)
	wait_idle || fail "$cond: the last dump still runs ${IDLE_WAIT} s after the loop stopped"
	# The loop's replies are dumps; the one in flight when it stopped has
	# no line: from the last reply's end to now, neither.
	awk '$3 == "ok" || $3 == "busy" { print $1, $2, "loop-" $3 }' "$WORK/loop.$cond" >>"$WORK/dumps.$cond"
	last=$(awk 'END { print $2 }' "$WORK/loop.$cond")
	echo "${last:-$tkill} $(mono) inflight" >>"$WORK/skip.$cond"
	R[$cond.loop.ok]=$(grep -c ' ok ' "$WORK/loop.$cond")
	R[$cond.loop.busy]=$(grep -c ' busy ' "$WORK/loop.$cond")
	if grep -qv -e ' ok ' -e ' busy ' -e ' timeout ' "$WORK/loop.$cond"; then
		fail "$cond: a jmfp of the loop failed: $(grep -v -e ' ok ' -e ' busy ' "$WORK/loop.$cond" | head -1)"
	fi
	if grep -q ' timeout ' "$WORK/loop.$cond" && { [ "$cond" != busy ] || [ "$MODE" != full ]; }; then
		fail "$cond: a jmfp of the loop timed out"
	fi
	[ "${R[$cond.loop.ok]}" -gt 0 ] || fail "$cond: no jmfp of the loop was answered"
	R[$cond.loop.times]=$(awk '$3 == "ok" { print ($2 - $1) / 1e9 }' "$WORK/loop.$cond" | medmax)

	R[$cond.t1]=$(mono)
	R[$cond.load1]=$(cut -d' ' -f1 /proc/loadavg)
	[ "$cond" = busy ] && busy_stop

	# c. the lock window: per dump (only busy-free "ok" replies: a
	# refused one never dumped), the longest probe operation in windows
	# overlapping it; and the windows of the condition touching no job.
	awk -v t0="${R[$cond.t0]}" -v t1="${R[$cond.t1]}" -v W=50000000 \
		-v dumps="$WORK/dumps.$cond" -v skip="$WORK/skip.$cond" -v out="$WORK/lw.$cond" '
		BEGIN {
			while ((getline l < dumps) > 0) { split(l, f, " "); if (f[3] == "loop-busy") { ns++; ss[ns] = f[1]; se[ns] = f[2]; continue }
				nd++; ds[nd] = f[1]; de[nd] = f[2] }
			while ((getline l < skip) > 0) { split(l, f, " "); ns++; ss[ns] = f[1]; se[ns] = f[2] }
		}
		$1 >= t0 && $1 < t1 {
			ws = $1; we = $1 + W + $2; hit = 0
			for (i = 1; i <= nd; i++) if (ws < de[i] && we > ds[i]) { hit = 1; if ($2 > dmax[i]) dmax[i] = $2 }
			if (hit) { dw[++ndw] = $2; next }
			for (i = 1; i <= ns; i++) if (ws < se[i] && we > ss[i]) { hit = 1; break }
			if (!hit) print "free", $2 / 1e6 > out
		}
		END {
			for (i = 1; i <= nd; i++) if (i in dmax) print "dump", dmax[i] / 1e6 > out
			for (i = 1; i <= ndw; i++) print "dwin", dw[i] / 1e6 > out
		}' "$PROBE"
	touch "$WORK/lw.$cond"
	R[$cond.lw.dump]=$(awk '$1 == "dump" { print $2 }' "$WORK/lw.$cond" | medmax %.2f)
	R[$cond.lw.ndump]=$(grep -c '^dump ' "$WORK/lw.$cond")
	R[$cond.lw.free]=$(awk '$1 == "free" { print $2 }' "$WORK/lw.$cond" | medmax %.2f)
	R[$cond.lw.nfree]=$(grep -c '^free ' "$WORK/lw.$cond")
	R[$cond.lw.free99]=$(awk '$1 == "free" { print $2 }' "$WORK/lw.$cond" | p99)
	R[$cond.lw.dwin99]=$(awk '$1 == "dwin" { print $2 }' "$WORK/lw.$cond" | p99)
	[ "${R[$cond.lw.ndump]}" -gt 0 ] || fail "$cond: no probe window overlapped a dump (is lockprobe writing $PROBE?)"
	log "$cond lock window: per dump ${R[$cond.lw.dump]} ms (${R[$cond.lw.ndump]} dumps); without ${R[$cond.lw.free]} ms"
done

# ---------------------------------------------------------------- report

# shellcheck disable=SC2317 # called through row's eval
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "—"; else printf "%.2f", a / b }'; }
row() {
	local c line="| $1 |"
	shift
	for c in $CONDITIONS; do line+=" $(eval "echo \"$*\"") |"; done
	echo "$line"
}
{
	hdr="| |" sep="| --- |"
	for c in $CONDITIONS; do
		case $c in
		quiet) hdr+=" quiet |" ;;
		busy) hdr+=" busy (2 busy loops) |" ;;
		esac
		sep+=" --- |"
	done
	echo "$hdr"
	echo "$sep"
	for w in jmfp jmtp jmfg; do
		# shellcheck disable=SC2016
		row "$w reply, median / max (s, $TRIES tries)" '${R[$c.$w.time]}'
	done
	# shellcheck disable=SC2016
	{
		row "redis SET without dumps: req/s; p50 / p99 / max (ms)" '${R[$c.nodump.rps]:-—}; ${R[$c.nodump.p50]:-—} / ${R[$c.nodump.p99]:-—} / ${R[$c.nodump.max]:-—}'
		row "redis SET, jmfp back to back: req/s; p50 / p99 / max (ms)" '${R[$c.dumps.rps]:-—}; ${R[$c.dumps.p50]:-—} / ${R[$c.dumps.p99]:-—} / ${R[$c.dumps.max]:-—}'
		row "with ÷ without: req/s; p99; max" '$(ratio "${R[$c.dumps.rps]:-}" "${R[$c.nodump.rps]:-}"); $(ratio "${R[$c.dumps.p99]:-}" "${R[$c.nodump.p99]:-}")×; $(ratio "${R[$c.dumps.max]:-}" "${R[$c.nodump.max]:-}")×'
		row "jmfp of the loop: answered (refused busy); median / max (s)" '${R[$c.loop.ok]:-0} (${R[$c.loop.busy]:-0}); ${R[$c.loop.times]:-—}'
		row "probe, longest malloc+free per dump: median / max (ms)" '${R[$c.lw.dump]} (${R[$c.lw.ndump]} dumps); p99 of their windows ${R[$c.lw.dwin99]}'
		row "probe, 50 ms windows without a dump: median / p99 / max (ms)" '$(cut -d/ -f1 <<<"${R[$c.lw.free]}")/ ${R[$c.lw.free99]} /$(cut -s -d/ -f2 <<<"${R[$c.lw.free]}") (${R[$c.lw.nfree]} windows)'
	}
	for w in jmfp jmtp jmfg; do
		# shellcheck disable=SC2016
		row "CPU per $w job, jm4lw-worker / jm4lw-dump (ms)" '${R[$c.$w.cpu]}'
	done
	# shellcheck disable=SC2016
	row "load average (1 min) at start → end" '${R[$c.load0]} → ${R[$c.load1]}'
} >"$WORK/table.md"

{
	echo "Redis $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') under \`jm4lw-run --prof-active\` (lg_prof_sample $LG), $KEYS keys (used_memory $USED), lockprobe preloaded beside the agent;"
	src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
	echo "build \`$BUILD\` (commit $(git -C "${src:-$ROOT}" rev-parse --short HEAD 2>/dev/null), $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt" 2>/dev/null) build); $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)); mode $MODE."
	echo ""
	cat "$WORK/table.md"
	echo ""
	echo "Commands (\`\$REDIS_PORT\`, \`\$AGENT_PORT\`: free ports picked at run time):"
	echo ""
	echo '```'
	echo "MALLOC_CONF=lg_prof_sample:$LG JM4LW_LOCKPROBE=\$WORK/probe LD_PRELOAD=liblockprobe.so jm4lw-run -l 127.0.0.1:0 -c agent.conf --prof-active -- redis-server --port \$REDIS_PORT --bind 127.0.0.1 --save '' --appendonly no"
	echo "#   agent.conf: dump_min_interval = 0, dump_dir, read_timeout = 600, http_listen ="
	echo "redis-benchmark -p \$REDIS_PORT -t set -d 4000 -n $n -r 1000000000 -P 32 -c 4 -q   # the fill"
	echo "bash -c 'while :; do :; done' &  # x2, the busy condition only"
	[ -s "$WORK/cmds.$SECTION" ] && sed "s/-p $RPORT /-p \$REDIS_PORT /" "$WORK/cmds.$SECTION"
	echo '```'
} >"$OUT"
cat "$OUT"

if [ ${#FAILURES[@]} -gt 0 ]; then
	log "${#FAILURES[@]} failure(s):"
	printf '  %s\n' "${FAILURES[@]}" >&2
	exit 1
fi
exit 0

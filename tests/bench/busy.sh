#!/bin/bash
# tests/bench/busy.sh [--smoke] [OUT.md] — a busy machine: the module's replies and its cost to the host beside two busy loops.
#
# Two hosts, one after the other (HOSTS, default "redis stacks"):
#   redis   Debian's redis-server under the agent (jm4lw-run --prof-active,
#           lg_prof_sample 19, HEAP_MB of 4 KiB values): the issue's
#           scenario, but its heap, written by one code path, makes a
#           profile of a few stacks, so prof.dump's lock window is tiny;
#   stacks  tests/bench/bench_host -S -m STACKS_MB -A 1 -P 50 (the module
#           embedded, MALLOC_CONF=prof:true,lg_prof_sample:15): thousands
#           of distinct stacks, so prep and the merges hold bt2gctx_mtx
#           for milliseconds, and one host thread that allocates and frees
#           sampled blocks and records each operation's latency (alst).
# Each with tests/bench/lockprobe preloaded, in the conditions CONDITIONS
# (default "quiet busy"): quiet, and busy: two busy loops (`while :; do :;
# done`, normal priority) beside it. In each, measures:
#   a. the reply times of WORDS (default jmfp, jmtp, jmfg, jmcg, jmth,
#      jmrc; TRIES each, one connection at a time,
#      tests/bench/wordtime; a reply slower than REPLY_TIMEOUT is ">N s"
#      and its word is not tried again; the tries follow each other at
#      once, so a try may wait for the leak index the module makes of the
#      jmfp before it, between jobs; with SETTLE=1 each try waits for the
#      module to be idle first), and the CPU time per job of the
#      threads named jm4lw-worker and jm4lw-dump (utime+stime of
#      /proc/PID/task/TID/stat, before and after the word's tries, once
#      the job is done; "-" for a thread the build does not have);
#   b. the host's own work without dumps and with jmfp asked back to back
#      meanwhile (dump_min_interval = 0), and their ratios:
#      redis: SET (redis-benchmark -c 4 -d 4096 -t set -n RB_N --csv):
#      throughput, p50, p99, max, one run each;
#      stacks: the allocating thread's operations (alst: ops/s, p50, p99,
#      max) over ALST_SECS s intervals in the order without, with, with,
#      without, so a load that moves touches both sides alike;
#   c. the lock window: lockprobe's longest malloc+free of a sampled
#      object in 50 ms windows overlapping a dump (each word's interval
#      from wordtime, on CLOCK_MONOTONIC like the probe) against the
#      windows of the same condition with no dump.
# Prints a Markdown section to OUT.md (default $JM4LW_BUILD/busy.md) and
# to stdout.
#
# The build is JM4LW_BUILD (default build-bench): its jm4lw-run, agent,
# jm4lw client and tests/bench/bench_host. lockprobe and wordtime come
# from $JM4LW_BUILD/tests/bench when it has them, else they are compiled
# from this script's directory, so the same script measures an older
# build (e.g. a worktree at e237666; it needs bench_host for "stacks"):
#	JM4LW_BUILD=/path/to/old/build tests/bench/busy.sh old.md
# JM4LW_WORKER_NICE (0..19 or idle), when set, is exported into the hosts'
# environment: the module reads it at start to nice its worker otherwise
# than +5 (builds before the dump thread ignore it); the report says what the
# worker thread ran at, read from /proc.
#
# --smoke: small heaps (8 MiB), one try a word, quiet only, short runs
# (CI, under a minute); the busy condition too with SMOKE_BUSY=1.
# Exit 0 when every server started and every reply was right (a timeout
# is right only in the busy condition of a full run: it is the figure);
# 1 otherwise. Environment: HOSTS, CONDITIONS, WORDS, HEAP_MB, STACKS_MB, TRIES,
# REPLY_TIMEOUT, RB_N, ALST_SECS, SETTLE, JM4LW_WORKER_NICE, KEEP=1.
# shellcheck disable=SC2034,SC2119,SC2317 # lib.sh reads CLIENT_BIN, SECTION; free_port's argument is optional; start_$h, host_work_$h are called by name
set -uo pipefail

# The words timed in a. (jmcg: the call graph, jmth: the heap by thread,
# jmrc: recent allocations; each a job on the worker like jmtp's).
WORDS=${WORDS:-jmfp jmtp jmfg jmcg jmth jmrc}
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
	HEAP_MB=${HEAP_MB:-8} STACKS_MB=${STACKS_MB:-8} TRIES=${TRIES:-1} REPLY_TIMEOUT=${REPLY_TIMEOUT:-20}
	RB_N=${RB_N:-10000} ALST_SECS=${ALST_SECS:-1} DEF_CONDITIONS="quiet"
	[ "${SMOKE_BUSY:-0}" = 1 ] && DEF_CONDITIONS="quiet busy"
else
	HEAP_MB=${HEAP_MB:-300} STACKS_MB=${STACKS_MB:-256} TRIES=${TRIES:-3} REPLY_TIMEOUT=${REPLY_TIMEOUT:-40}
	RB_N=${RB_N:-300000} ALST_SECS=${ALST_SECS:-8} DEF_CONDITIONS="quiet busy"
fi
CONDITIONS=${CONDITIONS:-$DEF_CONDITIONS}
HOSTS=${HOSTS:-redis stacks}
SETTLE=${SETTLE:-0}
for c in $CONDITIONS; do
	case $c in quiet | busy) ;; *) echo "busy.sh: CONDITIONS: quiet and/or busy, not '$c'" >&2; exit 2 ;; esac
done
for h in $HOSTS; do
	case $h in redis | stacks) ;; *) echo "busy.sh: HOSTS: redis and/or stacks, not '$h'" >&2; exit 2 ;; esac
done
if [ -n "${JM4LW_WORKER_NICE:-}" ]; then
	export JM4LW_WORKER_NICE
else
	unset JM4LW_WORKER_NICE
fi
# How long to wait for a job in progress (a timed-out one) to finish.
IDLE_WAIT=$((REPLY_TIMEOUT * 3))

WORK=$(mktemp -d "${TMPDIR:-/tmp}/jm4lw-busy.XXXXXX") || exit 1
PIDS=()
FAILURES=()
declare -A R PORTNAME
# shellcheck source=lib.sh
. "$BENCH_SRC/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# The tools.
if [[ " $HOSTS " == *" redis "* ]]; then
	bench_need redis-server "Debian package redis-server" && bench_need redis-benchmark "Debian package redis-tools" &&
		bench_need redis-cli "Debian package redis-tools" || exit 1
fi
bench_need python3 "free ports" || exit 1
for f in jm4lw-run libjm4lw_agent.so jm4lw; do
	[ -e "$BUILD/$f" ] || { log "FAIL: $BUILD/$f missing (build it, or set JM4LW_BUILD)"; exit 1; }
done
if [[ " $HOSTS " == *" stacks "* ]] && [ ! -x "$BUILD/tests/bench/bench_host" ]; then
	log "FAIL: $BUILD/tests/bench/bench_host missing (configure with -DJM4LW_TESTS=ON, or HOSTS=redis)"
	exit 1
fi
CLIENT_BIN=$BUILD/jm4lw # lib.sh's alst
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

# ---------------------------------------------------------------- hosts
# start_HOST: start it, fill it, and set HPID (the host's pid), APORT
# (its four-letter-word port), PROBE (lockprobe's file) and R[HOST.desc],
# R[HOST.cmds] (what the report says of it); 1 when it did not start.
# stop_HOST: stop it.

start_redis() {
	local up=0 n used keys
	RPORT=$(free_port)
	PORTNAME[$RPORT]=REDIS_PORT
	mkdir -p "$WORK/redis" "$WORK/dumps"
	cat >"$WORK/agent.conf" <<EOC
# busy.sh: jmfp as fast as admitted, no HTTP port
dump_min_interval = 0
dump_dir = $WORK/dumps
read_timeout = 600
http_listen =
EOC
	PROBE=$WORK/probe.redis
	start redis env MALLOC_CONF=lg_prof_sample:19 JM4LW_LOCKPROBE="$PROBE" LD_PRELOAD="$BIN/liblockprobe.so" \
		"$BUILD/jm4lw-run" -l 127.0.0.1:0 -c "$WORK/agent.conf" --prof-active -- \
		redis-server --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK/redis"
	HPID=$STARTED
	for _ in $(seq 1 100); do
		[ "$(redis-cli -p "$RPORT" ping 2>/dev/null)" = PONG ] && { up=1; break; }
		sleep 0.1
	done
	[ "$up" = 1 ] || { bench_fail "redis-server did not start: $(tail -3 "$WORK/redis.log")"; return 1; }
	APORT=$(wait_listen redis "$HPID" "jm4lw agent\[[0-9]*\]: listening on" 10) ||
		{ bench_fail "the agent in redis-server did not listen"; return 1; }
	grep -q "^lockprobe: .*lg_sample 19" "$WORK/redis.log" ||
		{ bench_fail "lockprobe did not start in redis-server: $(grep lockprobe "$WORK/redis.log" | head -2)"; return 1; }
	# Fill: HEAP_MB of 4000-byte values (4 KiB with their sds header), random keys.
	n=$((HEAP_MB * 1048576 / 4096))
	redis-benchmark -h 127.0.0.1 -p "$RPORT" -t set -d 4000 -n "$n" -r 1000000000 -P 32 -c 4 -q >"$WORK/fill.log" 2>&1 ||
		{ bench_fail "filling redis: $(tail -2 "$WORK/fill.log")"; return 1; }
	used=$(redis-cli -p "$RPORT" info memory | tr -d '\r' | sed -n 's/^used_memory_human://p')
	keys=$(redis-cli -p "$RPORT" dbsize)
	PORTNAME[$APORT]=AGENT_PORT
	log "redis-server on $RPORT (agent on $APORT): $keys keys, used_memory $used"
	R[redis.desc]="Redis $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') under \`jm4lw-run --prof-active\` (lg_prof_sample 19), $keys keys (used_memory $used), lockprobe preloaded beside the agent"
	R[redis.cmds]="MALLOC_CONF=lg_prof_sample:19 JM4LW_LOCKPROBE=\$WORK/probe LD_PRELOAD=liblockprobe.so jm4lw-run -l 127.0.0.1:0 -c agent.conf --prof-active -- redis-server --port \$REDIS_PORT --bind 127.0.0.1 --save '' --appendonly no
#   agent.conf: dump_min_interval = 0, dump_dir, read_timeout = 600, http_listen =
redis-benchmark -p \$REDIS_PORT -t set -d 4000 -n $n -r 1000000000 -P 32 -c 4 -q   # the fill"
}
stop_redis() { stop "$HPID"; }

SWEEPER=
start_stacks() {
	local heap
	mkdir -p "$WORK/sdumps"
	PROBE=$WORK/probe.stacks
	start stacks env MALLOC_CONF=prof:true,lg_prof_sample:15 JM4LW_LOCKPROBE="$PROBE" LD_PRELOAD="$BIN/liblockprobe.so" \
		"$BUILD/tests/bench/bench_host" -S -m "$STACKS_MB" -A 1 -P 50 "$WORK/sdumps"
	HPID=$STARTED
	APORT=$(wait_listen stacks "$HPID" "bench_host: listening on" 300) ||
		{ bench_fail "bench_host did not start: $(tail -3 "$WORK/stacks.log")"; return 1; }
	grep -q "^lockprobe: .*lg_sample 15" "$WORK/stacks.log" ||
		{ bench_fail "lockprobe did not start in bench_host: $(grep lockprobe "$WORK/stacks.log" | head -2)"; return 1; }
	PORTNAME[$APORT]=BENCH_HOST_PORT
	# The dumps of the back-to-back loops would fill the disk: each goes
	# once it is 10 s old (its index, made after the answer, is made by then).
	(while kill -0 "$HPID" 2>/dev/null; do
		find "$WORK/sdumps" -maxdepth 1 -type f -not -newermt '10 seconds ago' -delete 2>/dev/null
		sleep 1
	done) &
	SWEEPER=$!
	PIDS+=("$SWEEPER")
	heap=$(sed -n 's/^bench_host: \([0-9]*\) blocks, stats.allocated \([0-9]*\) MiB.*/\2 MiB, \1 blocks/p' "$WORK/stacks.log" | head -1)
	log "bench_host on $APORT: $heap"
	R[stacks.desc]="bench_host -S -A 1 -P 50 (the module embedded, on the host's loop; lg_prof_sample 15), $heap, one host thread allocating and freeing sampled blocks, lockprobe preloaded"
	R[stacks.cmds]="MALLOC_CONF=prof:true,lg_prof_sample:15 JM4LW_LOCKPROBE=\$WORK/probe LD_PRELOAD=liblockprobe.so bench_host -S -m $STACKS_MB -A 1 -P 50 \$WORK/sdumps"
}
stop_stacks() {
	stop "$HPID"
	[ -n "$SWEEPER" ] && { kill "$SWEEPER" 2>/dev/null; wait "$SWEEPER" 2>/dev/null; }
	rm -rf "$WORK/sdumps"
}

# ---------------------------------------------------------------- helpers

# CPU ticks (utime+stime) of the host's thread named $1, or "-" when none.
thread_ticks() {
	local t v=-
	for t in /proc/"$HPID"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = "$1" ]; then
			v=$(sed 's/.*) //' "$t/stat" | awk '{ print $12 + $13 }')
			break
		fi
	done
	echo "$v"
}
# The host's thread named $1: "nice N, SCHED_X" (stat fields 19 and 41),
# or "-" when none.
thread_prio() {
	local t
	for t in /proc/"$HPID"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = "$1" ] || continue
		sed 's/.*) //' "$t/stat" | awk '{ p = $39; n = p == 0 ? "SCHED_OTHER" : p == 3 ? "SCHED_BATCH" : p == 5 ? "SCHED_IDLE" : "policy " p
			print "nice " $17 ", " n }'
		return
	done
	echo -
}
# Is a job running: a jm4lw-worker or jm4lw-dump thread runnable or in
# disk sleep? (Between jobs they sleep on a condition variable: S.)
job_running() {
	local t
	for t in /proc/"$HPID"/task/*; do
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
# The largest of R[$1]'s values ("nan" for none).
# shellcheck disable=SC2086 # R holds "v1 v2 ..."
rmax() { printf '%s\n' ${R[$1]:-} | grep -v -e '^$' -e nan | sort -g | tail -1 | grep . || echo nan; }

# rbench KEY: redis SET from redis-benchmark's CSV: KEY.{rps,p50,p99,max}.
rbench() {
	local key=$1 line
	note_cmd "redis-benchmark -p $RPORT -c 4 -d 4096 -t set -n $RB_N --csv"
	if ! line=$(redis-benchmark -h 127.0.0.1 -p "$RPORT" -c 4 -d 4096 -t set -n "$RB_N" --csv 2>"$WORK/rb.err" |
		grep '^"SET"'); then
		bench_fail "$key: redis-benchmark: $(head -2 "$WORK/rb.err" | tr '\n' ' ')"
		return 1
	fi
	R[$key.rps]=$(awk -F'","' '{ printf "%.0f", $2 }' <<<"$line")
	R[$key.p50]=$(awk -F'","' '{ print $5 }' <<<"$line")
	R[$key.p99]=$(awk -F'","' '{ print $7 }' <<<"$line")
	R[$key.max]=$(awk -F'","' '{ gsub(/"/, "", $8); print $8 }' <<<"$line")
	log "$key: ${R[$key.rps]} SET/s p50 ${R[$key.p50]} ms p99 ${R[$key.p99]} ms max ${R[$key.max]} ms"
}

# The jmfp loop: back to back on one connection at a time, into
# $WORK/loop.$1 (START END STATUS BYTES lines); LOOP is its pid.
loop_start() {
	note_cmd "wordtime -p \$${PORTNAME[$APORT]} -w jmfp -d 3600 -t $REPLY_TIMEOUT -x / &   # then the host's work as above, then kill it"
	"$WT" -p "$APORT" -w jmfp -d 3600 -t "$REPLY_TIMEOUT" -x / >"$WORK/loop.$1" 2>&1 &
	LOOP=$!
	PIDS+=("$LOOP")
	sleep 0.2
}
loop_stop() {
	kill -TERM "$LOOP" 2>/dev/null
	wait "$LOOP" 2>/dev/null
}

# host_work_HOST KEY: the host's own work without dumps (KEY.nodump.*)
# and with the jmfp loop running (KEY.dumps.*); the loop's lines in
# $WORK/loop.KEY. Returns when the loop has stopped.
host_work_redis() {
	rbench "$1.nodump"
	loop_start "$1"
	rbench "$1.dumps"
	loop_stop
}
host_work_stacks() {
	note_cmd "jm4lw -p \$BENCH_HOST_PORT alst   # at each interval's start and end: $ALST_SECS s without dumps, $ALST_SECS s with, $ALST_SECS s with, $ALST_SECS s without"
	alst "$1" "$APORT" && sleep "$ALST_SECS" && alst "$1" "$APORT" nodump
	loop_start "$1"
	alst "$1" "$APORT" && sleep "$ALST_SECS" && alst "$1" "$APORT" dumps && sleep "$ALST_SECS" &&
		alst "$1" "$APORT" dumps
	loop_stop
	wait_idle || bench_fail "$1: the last dump still runs ${IDLE_WAIT} s after the loop stopped"
	alst "$1" "$APORT" && sleep "$ALST_SECS" && alst "$1" "$APORT" nodump
	local k p
	for p in nodump dumps; do
		k=$1.alst.$p
		R[$1.$p.rps]=$(fmt "$(med "$k.ops_per_s")")
		R[$1.$p.p50]=$(fmt "$(div "$(med "$k.p50_ns")" 1000)" %.1f)
		R[$1.$p.p99]=$(fmt "$(div "$(med "$k.p99_ns")" 1000)" %.1f)
		R[$1.$p.max]=$(fmt "$(div "$(rmax "$k.max_ns")" 1000)" %.0f)
		# shellcheck disable=SC2086 # R holds "v1 v2 ..."
		R[$1.$p.p99s]=$(printf '%s\n' ${R[$k.p99_ns]:-} | awk '{ printf "%s%.1f", (NR > 1 ? ", " : ""), $1 / 1000 }')
		# shellcheck disable=SC2086
		R[$1.$p.maxs]=$(printf '%s\n' ${R[$k.max_ns]:-} | awk '{ printf "%s%.0f", (NR > 1 ? ", " : ""), $1 / 1000 }')
	done
}

# ---------------------------------------------------------------- conditions

prefix_of() {
	case $1 in
	jmfp) echo / ;;
	jmtp) echo "# live heap" ;;
	jmfg) echo "<?xml" ;;
	jmcg) echo "digraph" ;;
	jmth) echo "# live heap by thread" ;;
	jmrc) echo "# " ;;
	esac
}

# measure HOST COND: a, b and c above, into R[HOST.COND.*].
measure() {
	local h=$1 cond=$2 k=$1.$2 w w0 w1 d0 d1 jobs times timed_out line s e st last tkill
	log "$h: condition $cond"
	: >"$WORK/dumps.$k" # START END STATUS (every job's interval)
	: >"$WORK/skip.$k"  # intervals of no known state: not "without"
	[ "$cond" = busy ] && busy_start && sleep 1
	R[$k.t0]=$(mono)
	R[$k.load0]=$(cut -d' ' -f1 /proc/loadavg)

	# a. reply times and CPU per job
	for w in $WORDS; do
		wait_idle || bench_fail "$k $w: a job still runs after ${IDLE_WAIT} s"
		w0=$(thread_ticks jm4lw-worker) d0=$(thread_ticks jm4lw-dump)
		jobs=0 times=() timed_out=
		note_cmd "wordtime -p \$${PORTNAME[$APORT]} -w $w -n 1 -t $REPLY_TIMEOUT -r $IDLE_WAIT -x '$(prefix_of $w)'   # x $TRIES"
		for _ in $(seq 1 "$TRIES"); do
			# SETTLE=1: each try asks an idle module (after the last
			# dump's leak index, which runs between jobs).
			[ "$SETTLE" = 1 ] && { wait_idle || bench_fail "$k $w: a job still runs after ${IDLE_WAIT} s"; }
			line=$("$WT" -p "$APORT" -w "$w" -n 1 -t "$REPLY_TIMEOUT" -r "$IDLE_WAIT" -x "$(prefix_of $w)")
			read -r s e st _ <<<"$line"
			case $st in
			ok) times+=("$(secs "$s" "$e")") jobs=$((jobs + 1)); echo "$s $e $w" >>"$WORK/dumps.$k" ;;
			timeout)
				jobs=$((jobs + 1))
				timed_out=">$REPLY_TIMEOUT"
				if [ "$cond" != busy ] || [ "$MODE" != full ]; then
					bench_fail "$k $w: no reply in $REPLY_TIMEOUT s"
				fi
				wait_idle || bench_fail "$k $w: the job still runs $IDLE_WAIT s after the timeout"
				# The job ran on past the timeout: its windows are a dump's
				# but of no known end; count them as neither.
				echo "$s $(mono) $w" >>"$WORK/skip.$k"
				break
				;;
			*) bench_fail "$k $w: reply $st ($line)" ;;
			esac
		done
		wait_idle || bench_fail "$k $w: a job still runs after ${IDLE_WAIT} s"
		w1=$(thread_ticks jm4lw-worker) d1=$(thread_ticks jm4lw-dump)
		R[$k.$w.time]=$(printf '%s\n' "${times[@]}" | grep . | medmax)
		if [ -n "$timed_out" ] && [ ${#times[@]} = 0 ]; then
			R[$k.$w.time]="$timed_out"
		elif [ -n "$timed_out" ]; then
			R[$k.$w.time]+=", then $timed_out"
		fi
		R[$k.$w.cpu]="$(per_job "$w0" "$w1" "$jobs") / $(per_job "$d0" "$d1" "$jobs")"
		log "$k $w: ${R[$k.$w.time]} s; CPU per job (worker / dump) ${R[$k.$w.cpu]} ms"
	done
	R[$k.prio]="$(thread_prio jm4lw-worker) / $(thread_prio jm4lw-dump)"

	# b. the host's work without dumps, then with jmfp back to back
	wait_idle || bench_fail "$k: a job still runs after ${IDLE_WAIT} s"
	"host_work_$h" "$k"
	tkill=$(mono)
	wait_idle || bench_fail "$k: the last dump still runs ${IDLE_WAIT} s after the loop stopped"
	# The loop's replies are dumps; the one in flight when it stopped has
	# no line: from the last reply's end to now, neither.
	awk '$3 == "ok" || $3 == "busy" { print $1, $2, "loop-" $3 }' "$WORK/loop.$k" >>"$WORK/dumps.$k"
	last=$(awk 'END { print $2 }' "$WORK/loop.$k")
	echo "${last:-$tkill} $(mono) inflight" >>"$WORK/skip.$k"
	R[$k.loop.ok]=$(grep -c ' ok ' "$WORK/loop.$k")
	R[$k.loop.busy]=$(grep -c ' busy ' "$WORK/loop.$k")
	if grep -qv -e ' ok ' -e ' busy ' -e ' timeout ' "$WORK/loop.$k"; then
		bench_fail "$k: a jmfp of the loop failed: $(grep -v -e ' ok ' -e ' busy ' "$WORK/loop.$k" | head -1)"
	fi
	if grep -q ' timeout ' "$WORK/loop.$k" && { [ "$cond" != busy ] || [ "$MODE" != full ]; }; then
		bench_fail "$k: a jmfp of the loop timed out"
	fi
	# Beside busy loops a starved worker may answer none in the host's
	# work's time: that is the figure (a full run's busy condition only).
	if [ "${R[$k.loop.ok]}" = 0 ] && { [ "$cond" != busy ] || [ "$MODE" != full ]; }; then
		bench_fail "$k: no jmfp of the loop was answered"
	fi
	R[$k.loop.times]=$(awk '$3 == "ok" { print ($2 - $1) / 1e9 }' "$WORK/loop.$k" | medmax)

	R[$k.t1]=$(mono)
	R[$k.load1]=$(cut -d' ' -f1 /proc/loadavg)
	[ "$cond" = busy ] && busy_stop

	# c. the lock window: per dump (only busy-free "ok" replies: a
	# refused one never dumped), the longest probe operation in windows
	# overlapping it; and the windows of the condition touching no job.
	awk -v t0="${R[$k.t0]}" -v t1="${R[$k.t1]}" -v W=50000000 \
		-v dumps="$WORK/dumps.$k" -v skip="$WORK/skip.$k" -v out="$WORK/lw.$k" '
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
	touch "$WORK/lw.$k"
	R[$k.lw.dump]=$(awk '$1 == "dump" { print $2 }' "$WORK/lw.$k" | medmax %.2f)
	R[$k.lw.ndump]=$(grep -c '^dump ' "$WORK/lw.$k")
	R[$k.lw.free]=$(awk '$1 == "free" { print $2 }' "$WORK/lw.$k" | medmax %.2f)
	R[$k.lw.nfree]=$(grep -c '^free ' "$WORK/lw.$k")
	R[$k.lw.free99]=$(awk '$1 == "free" { print $2 }' "$WORK/lw.$k" | p99)
	R[$k.lw.dwin99]=$(awk '$1 == "dwin" { print $2 }' "$WORK/lw.$k" | p99)
	[ "${R[$k.lw.ndump]}" -gt 0 ] || bench_fail "$k: no probe window overlapped a dump (is lockprobe writing $PROBE?)"
	log "$k lock window: per dump ${R[$k.lw.dump]} ms (${R[$k.lw.ndump]} dumps); without ${R[$k.lw.free]} ms"
}

RAN=()
for h in $HOSTS; do
	SECTION=$h # note_cmd's commands, per host
	if "start_$h"; then
		RAN+=("$h")
		for cond in $CONDITIONS; do measure "$h" "$cond"; done
	fi
	"stop_$h"
done

# ---------------------------------------------------------------- report

# shellcheck disable=SC2317 # called through row's eval
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "—" || b == "—" || b + 0 == 0) print "—"; else printf "%.2f", a / b }'; }
row() {
	local c line="| $1 |"
	shift
	for c in $CONDITIONS; do line+=" $(eval "echo \"$*\"") |"; done
	echo "$line"
}
# shellcheck disable=SC2016 # the rows' cells are eval'd by row, per condition
table() {
	local h=$1 hdr="| |" sep="| --- |" c w
	for c in $CONDITIONS; do
		case $c in
		quiet) hdr+=" quiet |" ;;
		busy) hdr+=" busy (2 busy loops) |" ;;
		esac
		sep+=" --- |"
	done
	echo "$hdr"
	echo "$sep"
	for w in $WORDS; do
		row "$w reply, median / max (s, $TRIES tries)" '${R[$h.$c.$w.time]}'
	done
	case $h in
	redis)
		row "redis SET without dumps: req/s; p50 / p99 / max (ms)" '${R[$h.$c.nodump.rps]:-—}; ${R[$h.$c.nodump.p50]:-—} / ${R[$h.$c.nodump.p99]:-—} / ${R[$h.$c.nodump.max]:-—}'
		row "redis SET, jmfp back to back: req/s; p50 / p99 / max (ms)" '${R[$h.$c.dumps.rps]:-—}; ${R[$h.$c.dumps.p50]:-—} / ${R[$h.$c.dumps.p99]:-—} / ${R[$h.$c.dumps.max]:-—}'
		;;
	stacks)
		row "host thread without dumps: ops/s; p50 / p99 / max (µs; 2 × $ALST_SECS s: mean, mean, max)" '${R[$h.$c.nodump.rps]:-—}; ${R[$h.$c.nodump.p50]:-—} / ${R[$h.$c.nodump.p99]:-—} / ${R[$h.$c.nodump.max]:-—}'
		row "host thread, jmfp back to back: ops/s; p50 / p99 / max (µs; same)" '${R[$h.$c.dumps.rps]:-—}; ${R[$h.$c.dumps.p50]:-—} / ${R[$h.$c.dumps.p99]:-—} / ${R[$h.$c.dumps.max]:-—}'
		row "host thread p99 per interval, without; with (µs)" '${R[$h.$c.nodump.p99s]:-—}; ${R[$h.$c.dumps.p99s]:-—}'
		row "host thread max per interval, without; with (µs)" '${R[$h.$c.nodump.maxs]:-—}; ${R[$h.$c.dumps.maxs]:-—}'
		;;
	esac
	row "with ÷ without: throughput; p99; max" '$(ratio "${R[$h.$c.dumps.rps]:-}" "${R[$h.$c.nodump.rps]:-}"); $(ratio "${R[$h.$c.dumps.p99]:-}" "${R[$h.$c.nodump.p99]:-}")×; $(ratio "${R[$h.$c.dumps.max]:-}" "${R[$h.$c.nodump.max]:-}")×'
	row "jmfp of the loop: answered (refused busy); median / max (s)" '${R[$h.$c.loop.ok]:-0} (${R[$h.$c.loop.busy]:-0}); ${R[$h.$c.loop.times]:-—}'
	row "probe, longest malloc+free per dump: median / max (ms)" '${R[$h.$c.lw.dump]} (${R[$h.$c.lw.ndump]} dumps); p99 of their windows ${R[$h.$c.lw.dwin99]}'
	row "probe, 50 ms windows without a dump: median / p99 / max (ms)" '$(cut -d/ -f1 <<<"${R[$h.$c.lw.free]}")/ ${R[$h.$c.lw.free99]} /$(cut -s -d/ -f2 <<<"${R[$h.$c.lw.free]}") (${R[$h.$c.lw.nfree]} windows)'
	for w in $WORDS; do
		row "CPU per $w job, jm4lw-worker / jm4lw-dump (ms)" '${R[$h.$c.$w.cpu]}'
	done
	row "jm4lw-worker / jm4lw-dump ran at" '${R[$h.$c.prio]}'
	row "load average (1 min) at start → end" '${R[$h.$c.load0]} → ${R[$h.$c.load1]}'
}

{
	src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
	echo "Build \`$BUILD\` (commit $(git -C "${src:-$ROOT}" rev-parse --short HEAD 2>/dev/null), $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt" 2>/dev/null) build); JM4LW_WORKER_NICE ${JM4LW_WORKER_NICE:-unset}$([ "$SETTLE" = 1 ] && echo "; SETTLE=1: each try asks an idle module"); $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)); mode $MODE."
	for h in "${RAN[@]}"; do
		echo ""
		echo "**$h**: ${R[$h.desc]}."
		echo ""
		table "$h"
		echo ""
		echo "Commands (\`\$..._PORT\`: free ports picked at run time):"
		echo ""
		echo '```'
		echo "${R[$h.cmds]}"
		echo "bash -c 'while :; do :; done' &  # x2, the busy condition only"
		[ -s "$WORK/cmds.$h" ] && grep -v "alst   # before and after" "$WORK/cmds.$h" | sed "s/-p ${RPORT:-none} /-p \$REDIS_PORT /"
		echo '```'
	done
} >"$OUT"
cat "$OUT"

if [ ${#FAILURES[@]} -gt 0 ]; then
	log "${#FAILURES[@]} failure(s):"
	printf '  %s\n' "${FAILURES[@]}" >&2
	exit 1
fi
exit 0

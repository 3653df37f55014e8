#!/bin/bash
# tests/bench/snapshots.sh [--smoke] [OUT.md] — what the rolling profile snapshots cost redis: its p99 with them on and off, quiet and beside two busy loops, and their memory and CPU.
#
# Three Debian redis-servers under the agent (jm4lw-run --prof-active,
# lg_prof_sample at jemalloc's default 19), side by side, each filled the
# same way (KEYS keys of 200 bytes by a script on redis's side):
#   off   snapshot_count = 0 (no snapshot is ever taken)
#   s1    snapshot_interval = 1 (a snapshot a second: 60 times the default)
#   s60   the defaults (snapshot_interval 60, snapshot_count 30)
# In each condition of CONDITIONS (default "quiet busy"; busy: two busy
# loops, `while :; do :; done`, beside them), ROUNDS rounds of
# redis-benchmark -t set,get -d 200 -r KEYS -c 4 -n RB_N --csv against each
# instance, one after the other in the order off s1 s60, reversed every
# other round: a ratio (s1 / off, s60 / off) is the median of the
# per-round ratios of two runs made side by side in time, so the load of a
# shared machine moves both sides alike.
# The snapshots' own figures, from the s1 instance: the ring's bytes and
# its count (jmpk's "# snapshots:" line), the worker's CPU time per
# snapshot (utime+stime of the jm4lw-worker and jm4lw-dump threads over
# the run, over the snapshots taken meanwhile), that as a share of a core
# at the 60 s default, and each instance's RssAnon and jemalloc's
# stats.allocated (mntr) at the end.
# Prints a Markdown section to OUT.md (default $JM4LW_BUILD/snapshots.md)
# and to stdout.
#
# The build is JM4LW_BUILD (default build-bench): its jm4lw-run,
# libjm4lw_agent.so and jm4lw.
# --smoke: 2,000 keys, one round of 2,000 requests, quiet only: a few
# seconds (CI's bench stage); figures prove the harness, not the code.
# Exit 0 when every server started and every run was answered; 1
# otherwise. Environment: CONDITIONS, ROUNDS, RB_N, KEYS, SETTLE (seconds
# the s1 instance takes snapshots before the first round), KEEP=1.
# shellcheck disable=SC2034,SC2119,SC2086 # lib.sh reads SECTION; free_port's argument is optional; R and INSTANCES hold "v1 v2 ..." lists
set -uo pipefail

MODE=full
if [ "${1:-}" = --smoke ]; then
	MODE=smoke
	shift
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH_SRC=$(cd "$(dirname "$0")" && pwd)
BUILD=${JM4LW_BUILD:-$ROOT/build-bench}
OUT=${1:-$BUILD/snapshots.md}
if [ "$MODE" = smoke ]; then
	ROUNDS=${ROUNDS:-1} RB_N=${RB_N:-2000} KEYS=${KEYS:-2000} SETTLE=${SETTLE:-1.5}
	DEF_CONDITIONS="quiet"
else
	ROUNDS=${ROUNDS:-7} RB_N=${RB_N:-100000} KEYS=${KEYS:-200000} SETTLE=${SETTLE:-5}
	DEF_CONDITIONS="quiet busy"
fi
CONDITIONS=${CONDITIONS:-$DEF_CONDITIONS}
for c in $CONDITIONS; do
	case $c in quiet | busy) ;; *) echo "snapshots.sh: CONDITIONS: quiet and/or busy, not '$c'" >&2; exit 2 ;; esac
done
INSTANCES="off s1 s60"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/jm4lw-snaps.XXXXXX") || exit 1
PIDS=()
FAILURES=()
declare -A R PORTNAME RP AP HP
# shellcheck source=lib.sh
. "$BENCH_SRC/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

bench_need redis-server "Debian package redis-server" && bench_need redis-benchmark "Debian package redis-tools" &&
	bench_need redis-cli "Debian package redis-tools" && bench_need python3 "free ports" || exit 1
for f in jm4lw-run libjm4lw_agent.so jm4lw; do
	[ -e "$BUILD/$f" ] || { log "FAIL: $BUILD/$f missing (build it, or set JM4LW_BUILD)"; exit 1; }
done

# start_inst NAME CONF-LINES: redis-server NAME under the agent, filled;
# RP[NAME] its port, AP[NAME] the agent's, HP[NAME] its pid.
start_inst() {
	local name=$1 conf=$2 port aport pid up=0
	port=$(free_port)
	mkdir -p "$WORK/$name" "$WORK/$name.dumps"
	printf '# snapshots.sh: %s\ndump_dir = %s\nhttp_listen =\n%s\n' "$name" "$WORK/$name.dumps" "$conf" >"$WORK/$name.conf"
	start "$name" "$BUILD/jm4lw-run" -l 127.0.0.1:0 -c "$WORK/$name.conf" --prof-active -- \
		redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK/$name"
	pid=$STARTED
	for _ in $(seq 1 100); do
		[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && { up=1; break; }
		sleep 0.1
	done
	[ "$up" = 1 ] || { bench_fail "redis-server $name did not start: $(tail -3 "$WORK/$name.log")"; return 1; }
	aport=$(wait_listen "$name" "$pid" "jm4lw agent\[[0-9]*\]: listening on" 10) ||
		{ bench_fail "the agent in redis-server $name did not listen"; return 1; }
	RP[$name]=$port AP[$name]=$aport HP[$name]=$pid
	PORTNAME[$port]=REDIS_PORT
	timeout 300 redis-cli -p "$port" eval \
		"for i=1,tonumber(ARGV[1]) do redis.call('set', 'key:'..string.format('%012d', i), string.rep('x', 200)) end return 1" \
		0 "$KEYS" >/dev/null || { bench_fail "filling redis-server $name"; return 1; }
}

# CPU ticks (utime+stime) of the module's worker threads (jm4lw-worker,
# jm4lw-dump) of process $1.
worker_ticks() {
	local t v=0
	for t in /proc/"$1"/task/*; do
		case "$(cat "$t/comm" 2>/dev/null)" in
		jm4lw-worker | jm4lw-dump) v=$((v + $(sed 's/.*) //' "$t/stat" | awk '{ print $12 + $13 }'))) ;;
		esac
	done
	echo "$v"
}

# ring NAME: jmpk's "# snapshots:" figures of instance NAME, as
# "KEPT TAKEN DROPPED BYTES LAST_MS", or nothing.
ring() {
	"$BUILD/jm4lw" -p "${AP[$1]}" jmpk 2>/dev/null | head -3 |
		sed -n 's/^# snapshots: \([0-9]*\) kept (\([0-9]*\) taken, \([0-9]*\) dropped) in \([0-9]*\) bytes .*the last took \([0-9.]*\) ms on the worker$/\1 \2 \3 \4 \5/p'
}

# rbench KEY NAME: SET and GET of redis-benchmark's CSV against NAME:
# KEY.{set,get}.{rps,p99} appended (one value per round).
rbench() {
	local key=$1 name=$2 csv t line
	note_cmd "redis-benchmark -p ${RP[$name]} -t set,get -d 200 -r $KEYS -c 4 -n $RB_N --csv"
	if ! csv=$(redis-benchmark -h 127.0.0.1 -p "${RP[$name]}" -t set,get -d 200 -r "$KEYS" -c 4 -n "$RB_N" --csv 2>"$WORK/rb.err"); then
		bench_fail "$key: redis-benchmark: $(head -2 "$WORK/rb.err" | tr '\n' ' ')"
		return 1
	fi
	for t in SET GET; do
		line=$(grep "^\"$t\"" <<<"$csv") || { bench_fail "$key: no $t line from redis-benchmark"; return 1; }
		rec "$key.${t,,}.rps" "$(awk -F'","' '{ printf "%.0f", $2 }' <<<"$line")"
		rec "$key.${t,,}.p99" "$(awk -F'","' '{ print $7 }' <<<"$line")"
	done
}

# pfig A B: the median of the per-round ratios of series A to B to two
# places (figures.sh's pmed), with their range after more than one round.
pfig() {
	local m
	m=$(fmt "$(pmed "$1" "$2")" %.2f)
	if [ "$ROUNDS" -gt 1 ]; then echo "$m ($(prng "$1" "$2"))"; else echo "$m"; fi
}
# kth VALUES K: the Kth word of VALUES.
kth() { awk -v k="$2" '{ print $k }' <<<"$1"; }

SECTION=snapshots
T0=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
start_inst off "snapshot_count = 0" || exit 1
start_inst s1 "snapshot_interval = 1" || exit 1
start_inst s60 "" || exit 1
log "redis: off on ${RP[off]}, s1 on ${RP[s1]}, s60 on ${RP[s60]} ($KEYS keys each)"
sleep "$SETTLE"
first=$(ring s1)
[ -n "$first" ] || { bench_fail "s1: jmpk has no '# snapshots:' line: $("$BUILD/jm4lw" -p "${AP[s1]}" jmpk 2>&1 | head -2)"; exit 1; }
ticks0=$(worker_ticks "${HP[s1]}")
t_run0=$(date +%s.%N)

for cond in $CONDITIONS; do
	[ "$cond" = busy ] && busy_start
	for r in $(seq 1 "$ROUNDS"); do
		for name in $(order "$r" $INSTANCES); do
			rbench "$cond.$name" "$name" || exit 1
		done
	done
	[ "$cond" = busy ] && busy_stop
	log "$cond: p99 SET off / s1 / s60: ${R[$cond.off.set.p99]} / ${R[$cond.s1.set.p99]} / ${R[$cond.s60.set.p99]} ms"
done

ticks1=$(worker_ticks "${HP[s1]}")
t_run1=$(date +%s.%N)
last=$(ring s1)
[ -n "$last" ] || { bench_fail "s1: jmpk has no '# snapshots:' line at the end"; exit 1; }
for name in $INSTANCES; do
	R[$name.rss]=$(rss "${HP[$name]}" RssAnon)
	R[$name.alloc]=$("$BUILD/jm4lw" -p "${AP[$name]}" mntr 2>/dev/null | awk -F'\t' '$1 == "jemalloc_allocated" { print $2 }')
done
taken=$(($(kth "$last" 2) - $(kth "$first" 2)))
cpu_ms=$(awk -v a="$ticks0" -v b="$ticks1" -v t="$TICK_US" 'BEGIN { printf "%.0f", (b - a) * t / 1000 }')
per=$(awk -v c="$cpu_ms" -v n="$taken" 'BEGIN { if (n > 0) printf "%.2f", c / n; else print "nan" }')
core60=$(awk -v p="$per" 'BEGIN { if (p == "nan") print "nan"; else printf "%.4f", p / 60000 * 100 }')
T1=$(date +%s)
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# The report.
{
	echo "Three redis-servers $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') under \`jm4lw-run --prof-active\` (lg_prof_sample 19), $KEYS keys of 200 bytes each,"
	echo "side by side: **off** (\`snapshot_count = 0\`), **s1** (\`snapshot_interval = 1\`), **s60** (the defaults, 60 s)."
	echo "$ROUNDS round(s) a condition of \`redis-benchmark -t set,get -d 200 -r $KEYS -c 4 -n $RB_N\`, the instances in"
	echo "alternating order; a ratio is the median of the per-round ratios (range in brackets). Load average"
	echo "$LOAD0 → $LOAD1, $((T1 - T0)) s$([ "$MODE" = smoke ] && echo "; **smoke run**: the figures prove the harness")."
	echo ""
	echo "| condition | p99 SET ms, off / s1 / s60 | SET p99 s1 ÷ off | SET p99 s60 ÷ off | GET p99 s1 ÷ off | GET p99 s60 ÷ off | SET/s s1 ÷ off |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	for cond in $CONDITIONS; do
		c=$cond
		printf '| %s | %s / %s / %s | **%s** | **%s** | %s | %s | %s |\n' \
			"$([ "$cond" = busy ] && echo "busy (2 busy loops)" || echo quiet)" \
			"$(fmt "$(med "$c.off.set.p99")" %.2f)" "$(fmt "$(med "$c.s1.set.p99")" %.2f)" \
			"$(fmt "$(med "$c.s60.set.p99")" %.2f)" \
			"$(pfig "$c.s1.set.p99" "$c.off.set.p99")" "$(pfig "$c.s60.set.p99" "$c.off.set.p99")" \
			"$(pfig "$c.s1.get.p99" "$c.off.get.p99")" "$(pfig "$c.s60.get.p99" "$c.off.get.p99")" \
			"$(pfig "$c.s1.set.rps" "$c.off.set.rps")"
	done
	echo ""
	echo "| the snapshots (s1) | |"
	echo "| --- | --- |"
	echo "| the ring at the end | $(kth "$last" 1) kept ($(kth "$last" 2) taken, $(kth "$last" 3) dropped) in **$(kth "$last" 4) bytes** |"
	echo "| worker CPU per snapshot (jm4lw-worker + jm4lw-dump, utime+stime) | **$per ms** ($cpu_ms ms over $taken snapshots in $(awk -v a="$t_run0" -v b="$t_run1" 'BEGIN { printf "%.0f", b - a }') s) |"
	echo "| the last snapshot's time on the worker (wall) | $(kth "$last" 5) ms |"
	echo "| share of a core at the default 60 s interval | **$core60 %** |"
	echo "| RssAnon off / s1 / s60 | ${R[off.rss]} / ${R[s1.rss]} / ${R[s60.rss]} KiB |"
	echo "| jemalloc stats.allocated off / s1 / s60 | ${R[off.alloc]} / ${R[s1.alloc]} / ${R[s60.alloc]} B |"
} >"$WORK/out.md"
mkdir -p "$(dirname "$OUT")"
cp "$WORK/out.md" "$OUT"
cat "$WORK/out.md"
if [ ${#FAILURES[@]} -gt 0 ]; then
	printf 'FAIL: %s\n' "${FAILURES[@]}" >&2
	exit 1
fi
exit 0

#!/bin/bash
# shutdown_rounds: SIGTERM mid-job, round after round, on a busy machine
# (once, "Terminated, exiting" was logged and jm4lwd was still
# alive 20 s later, during a job). Each round starts jm4lwd with profiling
# on, starts one job (jmfp, jmtp, or an HTTP render: /jemalloc/profile?
# format=svg, in turn), sends SIGTERM after a random 0-300 ms, and waits up
# to 20 s for the exit. A round that hangs gets its stacks printed
# (gdb -batch -p PID -ex 'thread apply all bt') into $OUT/hang.N.bt and
# is then killed. Two busy loops (one per core of a 2-core machine) run
# beside it all, and are killed at the end.
#
#	bash tests/soak/shutdown_rounds.sh [ROUNDS] [OUT_DIR]
#
# JM4LWD: the daemon (default build/jm4lwd). Prints one line per round
# that is not a clean exit 0 within 2 s, and a summary: exits by status,
# the slowest exits, hangs.
set -u
ROUNDS=${1:-200}
OUT=${2:-$(mktemp -d /tmp/shutdown_rounds.XXXX)}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
JM4LWD=${JM4LWD:-$ROOT/build/jm4lwd}
mkdir -p "$OUT"
command -v gdb >/dev/null || echo "# gdb missing: hangs get no stacks"

busy=()
for i in 1 2; do
	(while :; do :; done) &
	busy+=($!)
done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT

jobs_kinds=(jmfp jmtp http)
hangs=0
slow=0
declare -A status_count=()
times=()
for r in $(seq 1 "$ROUNDS"); do
	d=$OUT/r$r
	mkdir -p "$d/dumps"
	chmod 700 "$d/dumps"
	printf 'dump_min_interval = 0\ndump_min_free = 0\n' >"$d/c.conf"
	MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10 \
		"$JM4LWD" -f "$d/c.conf" -l 127.0.0.1:0 -W 127.0.0.1:0 \
		-D "$d/dumps" </dev/null >"$d/log" 2>&1 &
	pid=$!
	for i in $(seq 100); do
		grep -qs 'HTTP listening on' "$d/log" && break
		sleep 0.05
	done
	port=$(sed -n 's/^jm4lwd: listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$d/log" | head -1)
	hport=$(sed -n 's/^jm4lwd: HTTP listening on .*:\([0-9]*\)$/\1/p' "$d/log" | head -1)
	if [ -z "$port" ] || [ -z "$hport" ]; then
		echo "round $r: did not come up: $(tail -2 "$d/log")"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		continue
	fi
	kind=${jobs_kinds[$((r % 3))]}
	case $kind in
	http) timeout 30 curl -s -o /dev/null "http://127.0.0.1:$hport/jemalloc/profile?format=svg" & ;;
	*) (printf '%s\n' "$kind" | timeout 30 nc.openbsd 127.0.0.1 "$port" >/dev/null) & ;;
	esac
	client=$!
	sleep "0.$(printf '%03d' $((RANDOM % 300)))"
	t0=$(date +%s%N)
	kill -TERM "$pid"
	# Ended: our child is no longer running (zombie or reaped). The
	# job table says so without a race with /proc.
	exited=0
	for i in $(seq 200); do
		if ! jobs -rp | grep -qx "$pid"; then
			exited=1
			break
		fi
		sleep 0.1
	done
	if [ "$exited" = 0 ]; then
		hangs=$((hangs + 1))
		echo "round $r ($kind): HUNG 20 s after SIGTERM; stacks in $OUT/hang.$r.bt"
		gdb -batch -p "$pid" -ex 'thread apply all bt' >"$OUT/hang.$r.bt" 2>&1
		cp "$d/log" "$OUT/hang.$r.log"
		kill -KILL "$pid"
	fi
	wait "$pid" 2>/dev/null
	st=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	times+=("$ms $r $kind $st")
	status_count[$st]=$((${status_count[$st]:-0} + 1))
	if [ "$st" != 0 ] || [ "$ms" -gt 2000 ]; then
		[ "$ms" -gt 2000 ] && slow=$((slow + 1))
		echo "round $r ($kind): exit $st after $ms ms; log: $(tr '\n' '|' <"$d/log" | tail -c 300)"
	fi
	kill "$client" 2>/dev/null
	wait "$client" 2>/dev/null
done
echo "== $ROUNDS rounds: hangs $hangs, exits over 2 s $slow"
for s in "${!status_count[@]}"; do
	echo "exit status $s: ${status_count[$s]} rounds"
done
echo "slowest exits (ms round kind status):"
printf '%s\n' "${times[@]}" | sort -rn | head -5

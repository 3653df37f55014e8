# shellcheck shell=bash
# tests/lib/hosts.sh — the module and the agent in real programs: the test
# hosts (jeprof_host, leak_host, bench_host), redis-server under the
# preload agent, and the dumps they serve. Definitions only; sourced by
# tests/lib.sh over core.sh and daemon.sh (ask).

# start_jeprof_host NAME|DIR [VAR=VALUE...]: tests/host/jeprof_host with
# profiling on (sampling off) and the VARs, in scratch dir NAME (or in DIR,
# an existing directory), dumping to $D/dumps; its port from the "listening
# on" line on its stdout. Sets D, DLOG, PID and PORT; returns 1 after
# recording a failure.
start_jeprof_host() {
	local name=$1
	shift
	if [ -d "$name" ]; then D=$name; else D=$(scratch "$name"); fi
	mkdir -p "$D/dumps"
	DLOG=$D/host.err
	: >"$D/host.out"
	(cd "$D" && exec env "$PROF_ON" "$@" "$JEPROF_HOST" "$D/dumps") \
		</dev/null >"$D/host.out" 2>"$DLOG" &
	PID=$!
	track "$PID"
	PORT=
	for _ in $(seq $((100 * SLOW))); do
		PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$D/host.out")
		[ -n "$PORT" ] && break
		_alive "$PID" || break
		sleep 0.1
	done
	if [ -z "$PORT" ]; then
		fail "jeprof_host ($name) printed its port within 10 s" \
			"stdout: $(cat "$D/host.out")" "$(show_tail "$DLOG")"
		return 1
	fi
}

# stop_jeprof_host [PREFIX]: SIGTERM the jeprof_host in $PID and check
# that it exits 0 within 10 s (never under JM4LWD_WRAP, so not times
# $SLOW); PREFIX goes before the description ("growth: ").
stop_jeprof_host() {
	kill -TERM "$PID"
	if wait_exit "$PID" 10 && [ "$EXIT_STATUS" = 0 ]; then
		pass "${1:-}jeprof_host exits 0 on SIGTERM"
	else
		fail "${1:-}jeprof_host exits 0 on SIGTERM" "status $EXIT_STATUS" "$(show_tail "$DLOG")"
	fi
}

# start_leak_host DIR LG_SAMPLE [MALLOC_CONF]: tests/host/leak_host with
# its config in DIR/conf (the caller writes it), dumping into DIR/dumps,
# with lg_prof_sample:LG_SAMPLE and sampling on (or MALLOC_CONF as given);
# its stdout (the "listening on" lines, a fork child's) in DIR/out, its
# log in DIR/err. Waits (10 s) for both listeners. Sets LPID, LPORT (the
# words') and LHPORT (HTTP's); returns 1 if it did not listen.
start_leak_host() {
	local dir=$1 lg=$2 host
	local mconf=${3:-prof:true,prof_active:true,lg_prof_sample:$lg}
	[ -x "$LEAK_HOST" ] || die "$LEAK_HOST is not executable"
	host=$(realpath "$LEAK_HOST") # it runs in $dir
	mkdir -p "$dir/dumps"
	(cd "$dir" && exec env JM4LW_CONF="$dir/conf" MALLOC_CONF="$mconf" \
		"$host" "$dir/dumps") </dev/null >"$dir/out" 2>"$dir/err" &
	LPID=$!
	track "$LPID"
	for _ in $(seq $((100 * SLOW))); do
		LPORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/out")
		LHPORT=$(sed -n 's/^http on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/out")
		[ -n "$LPORT" ] && [ -n "$LHPORT" ] && return 0
		_alive "$LPID" || break
		sleep 0.1
	done
	return 1
}

# start_redis_agent NAME [VAR=VALUE...] [-- REDIS_ARGS...]: Debian's
# redis-server with the preload agent (jm4lw-run --prof-active: sampling
# on), its words and its HTTP on ports the kernel picks, in scratch dir
# NAME, with the VARs in its environment (say
# MALLOC_CONF=lg_prof_sample:15) and REDIS_ARGS after its own. Waits
# (20 s) for the agent's two "listening on" lines and redis's PING. Sets
# RDIR, RPID (redis-server's pid: jm4lw-run execs it), RPORT (redis's
# port), APORT (the words') and AHTTP (HTTP's); returns 1 after
# recording a failure.
start_redis_agent() {
	local name=$1 vars=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	RDIR=$(scratch "$name")
	# A free port may be taken before redis binds it (the agent's own
	# listeners pick theirs meanwhile): then again, with another.
	for _ in 1 2 3; do
		RPORT=$(free_port)
		APORT=
		AHTTP=
		(cd "$RDIR" && exec env JM4LW_DUMP_DIR="$RDIR" \
			JM4LW_HTTP_LISTEN=127.0.0.1:0 "${vars[@]}" "$JM4LW_RUN" --prof-active \
			-l 127.0.0.1:0 -- redis-server --port "$RPORT" --bind 127.0.0.1 \
			--save "" --appendonly no --dir "$RDIR" "$@") \
			</dev/null >"$RDIR/out" 2>"$RDIR/err" &
		RPID=$!
		track "$RPID"
		for _ in $(seq 200); do
			APORT=$(sed -n 's/^jm4lw agent\[[0-9]*\]: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$RDIR/err" | head -1)
			AHTTP=$(sed -n 's/^jm4lw agent\[[0-9]*\]: HTTP listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$RDIR/err" | head -1)
			[ -n "$APORT" ] && [ -n "$AHTTP" ] &&
				redis-cli -p "$RPORT" ping 2>/dev/null | grep -qx PONG && return 0
			_alive "$RPID" || break
			sleep 0.1
		done
		grep -q "listening socket 127.0.0.1:$RPORT: bind: Address already in use" \
			"$RDIR/out" 2>/dev/null || break
	done
	fail "$name: redis-server with the agent: words, HTTP and PING within 20 s" \
		"words port: ${APORT:-none}, HTTP port: ${AHTTP:-none}" \
		"$(show_tail "$RDIR/err")"
	return 1
}

# start_bench_host DIR MALLOC_CONF ARGS...: tests/bench/bench_host ARGS
# DIR, run in DIR (its stdout and stderr in DIR/out and DIR/err); sets
# PID and PORT, from its "listening on" line (building its heap may take
# a while: up to 60 s, times $SLOW). Returns 1 after recording a failure.
start_bench_host() {
	local d=$1 conf=$2
	shift 2
	(cd "$d" && exec env MALLOC_CONF="$conf" "$BENCH_HOST" "$@" "$d") \
		</dev/null >"$d/out" 2>"$d/err" &
	PID=$!
	track "$PID"
	PORT=
	for _ in $(seq $((600 * SLOW))); do
		PORT=$(sed -n 's/^bench_host: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$d/err")
		[ -n "$PORT" ] && break
		_alive "$PID" || break
		sleep 0.1
	done
	[ -n "$PORT" ] || { fail "bench_host started" "$(tail -3 "$d/err")"; return 1; }
}

# stop_host DESC [PID [LOG]]: SIGTERM the host PID (default $PID) and check
# that it exits 0 within 10 s; LOG (default $D/err) is shown if not.
stop_host() {
	local pid=${2:-$PID}
	kill -TERM "$pid"
	if wait_exit "$pid" 10 && [ "$EXIT_STATUS" = 0 ]; then
		pass "$1 exits 0 on SIGTERM"
	else
		fail "$1 exits 0 on SIGTERM" "status $EXIT_STATUS" "$(tail -5 "${3:-$D/err}")"
	fi
}

# bench_dump NAME: a big real profile -- bench_host's 64 MiB over chains of
# 8-16 frames, sampled every 8 KiB: thousands of distinct stacks -- taken
# with jmfp in scratch dir NAME, the host stopped after. Its path in DUMP;
# returns 1 after recording a failure.
bench_dump() {
	local d
	d=$(scratch "$1")
	DUMP=
	start_bench_host "$d" prof:true,lg_prof_sample:13 -S -m 64 || return 1
	DUMP=$(ask jmfp "$PORT")
	kill "$PID"
	wait_exit "$PID" 10 >/dev/null 2>&1
	[ -s "$DUMP" ] || { fail "bench_host: jmfp wrote a profile" "$DUMP"; return 1; }
}

# leak_dumps: jeprof_host leaking with sampling on (scratch "leak_base"),
# and two jmfp dumps 1.5 s apart (dump_min_interval; ~35 MiB more leaked
# between): their paths in DUMP_A and DUMP_B. Returns 1 after recording
# a failure. The host keeps running (stop_jeprof_host).
leak_dumps() {
	start_jeprof_host leak_base JM4LW_TEST_LEAK=1 \
		MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:16 || return 1
	DUMP_A=$(ask jmfp)
	sleep 1.5
	DUMP_B=$(ask jmfp)
	[ -s "$DUMP_A" ] && [ -s "$DUMP_B" ] ||
		{ fail "--base: two dumps" "$DUMP_A" "$DUMP_B"; return 1; }
}

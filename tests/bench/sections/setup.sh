# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Setup: the build, the bench programs, CPU pinning, perf, and the servers
# every section shares (jm4lwd with the bench configuration, the floor).
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
bench_need python3 "scripts/deps.sh test" || exit 1
CC=${CC:-$(command -v gcc || command -v cc)}

# Always bring the build up to date, so the figures are the tree's.
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
	log "configuring $BUILD (cmake, Release)"
	cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >"$WORK/cmake.log" 2>&1 ||
		{ tail -20 "$WORK/cmake.log" >&2; bench_fail "cmake configure of $BUILD"; exit 1; }
fi
cmake --build "$BUILD" -j"$(nproc)" >>"$WORK/cmake.log" 2>&1 ||
	{ tail -20 "$WORK/cmake.log" >&2; bench_fail "build of $BUILD"; exit 1; }
for f in jm4lwd jm4lw libjm4lw.a libjm4lw_agent.so; do
	[ -e "$BUILD/$f" ] || { bench_fail "$BUILD/$f missing after the build"; exit 1; }
done
JM4LWD=$BUILD/jm4lwd
CLIENT_BIN=$BUILD/jm4lw
AGENT=$BUILD/libjm4lw_agent.so

# The bench programs: from the CMake build when tests/bench is part of it,
# else compiled here with the project's warnings.
if [ -x "$BUILD/tests/bench/loadgen" ] && [ -x "$BUILD/tests/bench/floor" ] &&
	[ -x "$BUILD/tests/bench/bench_host" ]; then
	BIN=$BUILD/tests/bench
	BIN_HOW="CMake targets in $BUILD/tests/bench"
else
	BIN=$WORK/bin
	mkdir -p "$BIN"
	WARN="-Wall -Wextra -Werror -Wshadow -Wformat=2 -Wmissing-prototypes -Wstrict-prototypes -Wpointer-arith -D_GNU_SOURCE"
	# shellcheck disable=SC2086,SC2046
	{ $CC -O2 $WARN -o "$BIN/loadgen" "$BENCH_SRC/loadgen.c" &&
		$CC -O2 $WARN -o "$BIN/floor" "$BENCH_SRC/floor.c" &&
		$CC -O2 -g -fno-omit-frame-pointer $WARN -I"$ROOT/include" \
			-o "$BIN/bench_host" "$BENCH_SRC/bench_host.c" "$BUILD/libjm4lw.a" \
			$(pkg-config --libs libevent_core jemalloc inih) -lpthread; } \
		2>"$WORK/cc.log" || { cat "$WORK/cc.log" >&2; bench_fail "compiling tests/bench"; exit 1; }
	BIN_HOW="compiled by run.sh: $CC -O2 -Wall -Wextra -Werror ..."
fi
LOADGEN=$BIN/loadgen

if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	CCPU=${CLIENT_CPU:-0}
	SCPU=${SERVER_CPU:-1}
	ON_CLIENT=(taskset -c "$CCPU")
	ON_SERVER=(taskset -c "$SCPU")
	PINNING="load generators on CPU $CCPU, servers on CPU $SCPU (taskset)"
else
	ON_CLIENT=()
	ON_SERVER=()
	PINNING="none (fewer than 2 CPUs or no taskset)"
fi

PERF=0
if [ "$MODE" = full ] && command -v perf >/dev/null &&
	perf stat -e task-clock,raw_syscalls:sys_enter -o /dev/null true 2>/dev/null &&
	perf record -e cpu-clock -o "$WORK/perf.probe" true >/dev/null 2>&1; then
	PERF=1
fi

# ---------------------------------------------------------------- servers

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$WORK/dumps"
cat >"$WORK/jm4lwd.conf" <<EOF
# run.sh: the benchmark configuration
max_connections = 2000
max_connections_per_peer = 2000
dump_min_interval = 0
read_timeout = 600
dump_dir = $WORK/dumps
# No HTTP: its default port is one for every jm4lwd here (section 11 has its own).
http_listen =
EOF

log "mode $MODE: $ROUNDS round(s) of ${DUR}s per case; report -> $OUT"
start jm4lwd env MALLOC_CONF=prof:true,prof_active:false "${ON_SERVER[@]}" "$JM4LWD" \
	-f "$WORK/jm4lwd.conf" -l 127.0.0.1:0
JPID=$STARTED
JPORT=$(wait_listen jm4lwd "$JPID" "jm4lwd: listening on" 20) || { bench_fail "jm4lwd did not start"; exit 1; }
PORTNAME[$JPORT]=JM4LWD_PORT
start floor "${ON_SERVER[@]}" "$BIN/floor" -m linger
FPID=$STARTED
FPORT=$(wait_listen floor "$FPID" "floor: listening on" 20) || { bench_fail "floor did not start"; exit 1; }
PORTNAME[$FPORT]=FLOOR_PORT
start floorc "${ON_SERVER[@]}" "$BIN/floor" -m close
FCPID=$STARTED
FCPORT=$(wait_listen floorc "$FCPID" "floor: listening on" 20) || { bench_fail "floor -m close did not start"; exit 1; }
PORTNAME[$FCPORT]=FLOOR_CLOSE_PORT


#!/bin/bash
# examples.sh: every example builds from the installed package, both ways a
# user finds it, and serves a word. The build tree is
# installed to a scratch prefix (cmake --install --prefix), examples/ is
# configured against it with CMake's find_package and with pkg-config, and
# each program runs on port 0 and is asked one word with nc (counter also
# GET /metrics with curl). Each must load libjm4lw from the prefix, not
# from the build tree.
#	BUILD_DIR  the build tree to install (ctest sets it)
#	SRC_DIR    the source tree (examples/ is read from it)
. "$(dirname "$0")/../lib.sh"

if [ -z "${BUILD_DIR:-}" ] || [ -z "${SRC_DIR:-}" ]; then
	die "BUILD_DIR, SRC_DIR not set"
fi
need cmake pkg-config nc.openbsd curl ldd

prefix=$(scratch prefix)
if cmake --install "$BUILD_DIR" --prefix "$prefix" >"$T/install.log" 2>&1; then
	pass "cmake --install to a scratch prefix"
else
	die "cmake --install" "$(tail -5 "$T/install.log")"
fi
pc=$(dirname "$(find "$prefix" -name jm4lw.pc | head -1)")
[ -f "$pc/jm4lw.pc" ] || die "jm4lw.pc installed under the prefix"

# build HOW DIR: configure and build examples/ against the prefix.
build() {
	local how=$1 dir=$2 args=()
	if [ "$how" = pkg-config ]; then
		args=(-DJM4LW_EXAMPLE_PKGCONFIG=ON)
	else
		args=(-DCMAKE_PREFIX_PATH="$prefix")
	fi
	# Nothing of the build tree or the system's own jm4lw may stand in.
	if PKG_CONFIG_PATH="$pc" cmake -S "$SRC_DIR/examples" -B "$dir" \
		-DCMAKE_C_COMPILER="${CC:-cc}" "${args[@]}" >"$dir.log" 2>&1 &&
		cmake --build "$dir" -j2 >>"$dir.log" 2>&1; then
		pass "examples build with $how"
	else
		fail "examples build with $how" "$(tail -15 "$dir.log")"
		return 1
	fi
}

# from_prefix DESC PROGRAM: PROGRAM's libjm4lw is the installed one.
from_prefix() {
	local lib
	lib=$(ldd "$2" | awk '$1 ~ /^libjm4lw\.so/ { print $3 }')
	case $lib in
	"$prefix"/*) pass "$1: libjm4lw from the prefix" ;;
	*) fail "$1: libjm4lw from the prefix" "ldd: ${lib:-not found}" ;;
	esac
}

# wait_line FILE REGEX: the first line of FILE matching REGEX (20 s).
wait_line() {
	local line
	for _ in $(seq 1 200); do
		line=$(grep -m1 -E "$2" "$1")
		if [ -n "$line" ]; then
			echo "$line"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# run_counter DIR: counter on port 0, asked hits, conf and GET /metrics.
run_counter() {
	local dir=$1 out="$1/counter.out" err="$1/counter.err" pid admin http
	from_prefix "counter ($dir)" "$dir/counter"
	env "$PROF_ON" "$dir/counter" 127.0.0.1:0 127.0.0.1:0 127.0.0.1:0 \
		>"$out" 2>"$err" &
	pid=$!
	track "$pid"
	if ! http=$(wait_line "$out" '^http '); then
		fail "counter serves" "$(cat "$out" "$err")"
		return
	fi
	admin=$(sed -n 's/^admin //p' "$out")
	http=${http#http }
	PORT=${admin##*:}
	ask hits >"$dir/hits"
	assert_bytes "counter: its own word, hits" "$dir/hits" 'hits\t0\n'
	ask mntr >"$dir/mntr"
	assert_grep "counter: a built-in word, mntr" '^jemalloc_allocated	[0-9]+$' "$dir/mntr"
	curl -s --max-time 30 "http://$http/metrics" >"$dir/metrics"
	assert_grep "counter: GET /metrics" '^jemalloc_allocated_bytes [0-9]+' "$dir/metrics"
	kill -INT "$pid"
	if wait_exit "$pid" 20 && [ "$EXIT_STATUS" = 0 ]; then
		pass "counter: SIGINT ends it cleanly"
	else
		fail "counter: SIGINT ends it cleanly" "status $EXIT_STATUS" "$(cat "$err")"
	fi
}

# run_thread DIR: thread on port 0, asked its word.
run_thread() {
	local dir=$1 err="$1/thread.err" pid line
	from_prefix "thread ($dir)" "$dir/thread"
	env "$PROF_ON" "$dir/thread" 127.0.0.1:0 >/dev/null 2>"$err" &
	pid=$!
	track "$pid"
	if ! PORT=$(wait_port "$err"); then
		fail "thread serves" "$(cat "$err")"
		return
	fi
	line=$(ask work)
	assert_cmd "thread: its own word, work ($line)" \
		grep -Eqx 'work	[0-9]+' <<<"$line"
	ask ruok >"$dir/ruok"
	assert_bytes "thread: ruok" "$dir/ruok" 'imok'
	kill -TERM "$pid"
	if wait_exit "$pid" 20 && [ "$EXIT_STATUS" = 0 ]; then
		pass "thread: SIGTERM ends it cleanly"
	else
		fail "thread: SIGTERM ends it cleanly" "status $EXIT_STATUS" "$(cat "$err")"
	fi
}

for how in cmake pkg-config; do
	dir="$T/ex-$how"
	build "$how" "$dir" || continue
	run_counter "$dir"
	run_thread "$dir"
done
finish

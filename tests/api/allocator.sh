#!/bin/bash
# shellcheck disable=SC2154 # $API_<variant>: the hosts, set by ctest
# allocator.sh CASE: the module refuses to report on a jemalloc the program
# does not malloc from, and works where malloc is jemalloc's.
# Each host holds 32 MB from malloc(); where the module starts,
# mntr must count them, where it refuses, one line says how to fix it.
#	link     -ljm4lw alone refuses; -ljemalloc ahead of or after -ljm4lw
#	         works (under gcc's default --as-needed and without it)
#	static   jm4lw_static works; with libc forced ahead of jemalloc, refuses
#	preload  the glibc host refuses, and under LD_PRELOAD=libjemalloc.so.2
#	         works (so does the static host with libc first)
#	agent    the agent alone in the glibc host refuses, the host runs on;
#	         after libjemalloc.so.2, or under jm4lw-run, it serves
. "$(dirname "$0")/../lib.sh"

je=$(/sbin/ldconfig -p | awk '/libjemalloc\.so\.2 / { print $NF; exit }')
[ -n "$je" ] || die "libjemalloc.so.2 not found"
HELD=$((32 << 20))

# errno_text NAME: strerror's text for errno NAME.
errno_text() {
	python3 -c 'import errno, os, sys; print(os.strerror(getattr(errno, sys.argv[1])))' "$1"
}

# refuses NAME HOST [ENV...]: jm4lw_new and jm4lw_start_thread both
# return NULL with the one line that says how to link or preload jemalloc.
refuses() {
	local name=$1 host=$2 mode out rc
	shift 2
	for mode in new thread; do
		out=$(env "$@" "$host" "$mode" </dev/null 2>"$T/err")
		rc=$?
		assert_cmd "$name: jm4lw_$mode refuses ($out)" test "$rc" -eq 1 || continue
		assert_cmd "$name: jm4lw_$mode says malloc is not jemalloc's and how to fix it" \
			grep -q "^$mode: NULL: this process does not run on jemalloc: malloc is libc\.so\.6's, not libjemalloc\.so\.2's.*-ljemalloc.*LD_PRELOAD=libjemalloc\.so\.2\$" <<<"$out"
	done
}

# serves NAME CMD...: CMD, a host in thread mode serving until its stdin
# closes, listens, and its mntr counts the 32 MB it holds (an idle
# jemalloc shows ~34 KB). Sets SERVED to CMD's exit status; returns 1 if
# it never listens.
serves() {
	local name=$1 port alloc pid
	shift
	rm -f "$T/in" && mkfifo "$T/in"
	"$@" <"$T/in" >"$T/out" 2>"$T/err" &
	pid=$!
	track $pid
	exec 4>"$T/in" # the host serves until this closes
	if ! port=$(wait_port "$T/err"); then
		fail "$name: it listens" "$(cat "$T/out" "$T/err")"
		exec 4>&-
		return 1
	fi
	alloc=$("$JM4LW_CLIENT" -p "$port" mntr | awk -F'\t' '$1 == "jemalloc_allocated" { print $2 }')
	assert_cmd "$name: mntr counts the host's 32 MB (jemalloc_allocated $alloc)" \
		test "${alloc:-0}" -ge "$HELD"
	exec 4>&-
	wait "$pid"
	SERVED=$?
}

# works NAME HOST [ENV...]: jm4lw_new succeeds, and jm4lw_start_thread
# serves the host's figures (serves), then stops when asked.
works() {
	local name=$1 host=$2 out rc
	shift 2
	out=$(env "$@" "$host" new </dev/null 2>"$T/err")
	rc=$?
	assert_cmd "$name: jm4lw_new works ($out $(head -c 300 "$T/err"))" test "$rc" -eq 0 -a "$out" = "new: ok"
	serves "$name: jm4lw_start_thread" env "$@" "$host" thread &&
		assert_cmd "$name: the thread stops when asked" test "$SERVED" -eq 0
}

case "${1:-}" in
link)
	refuses "-ljm4lw only" "$API_glibc"
	works "-ljemalloc -ljm4lw" "$API_je_first"
	works "-ljm4lw -ljemalloc" "$API_je_last"
	works "--no-as-needed -ljemalloc -ljm4lw" "$API_je_first_noasneeded"
	works "--no-as-needed -ljm4lw -ljemalloc" "$API_je_last_noasneeded"
	;;
static)
	works "jm4lw_static" "$API_static"
	refuses "-lc jm4lw_static" "$API_static_libc_first"
	;;
preload)
	# The preload is what makes the difference: without it, refused.
	refuses "no preload" "$API_glibc"
	# Naming a thread where malloc is libc's: ENOSYS, no crash; with
	# jemalloc preloaded but no profiling: ENOENT.
	assert_eq "no preload: jm4lw_thread_name says ENOSYS" \
		"name: $(errno_text ENOSYS)" "$("$API_glibc" name 2>&1)"
	assert_eq "LD_PRELOAD=libjemalloc.so.2: jm4lw_thread_name says ENOENT (no profiling)" \
		"name: $(errno_text ENOENT)" "$(LD_PRELOAD="$je" "$API_glibc" name 2>&1)"
	works "LD_PRELOAD=libjemalloc.so.2" "$API_glibc" LD_PRELOAD="$je"
	works "LD_PRELOAD=libjemalloc.so.2 (static, libc first)" "$API_static_libc_first" LD_PRELOAD="$je"
	;;
agent)
	# The glibc host loads jemalloc (libjm4lw's NEEDED) but mallocs from
	# libc: the agent alone must not serve that jemalloc's figures.
	out=$(env LD_PRELOAD="$JM4LW_AGENT_SO" JM4LW_LISTEN=127.0.0.1:0 \
		"$API_glibc" new </dev/null 2>"$T/err")
	err=$(grep 'jm4lw agent' "$T/err")
	assert_cmd "agent alone: one agent line ($err)" test "$(grep -c 'jm4lw agent' "$T/err")" -eq 1
	assert_cmd "agent alone: it says malloc is not jemalloc's and how to preload it" \
		grep -q "does not run on jemalloc: malloc is libc\.so\.6's, not libjemalloc\.so\.2's.*not starting.*jm4lw-run.*LD_PRELOAD=" <<<"$err"
	assert_cmd "agent alone: it listens nowhere" bash -c "! grep -q 'listening on' '$T/err'"
	assert_cmd "agent alone: the host runs on (its own jm4lw_new refuses as usual)" \
		grep -q '^new: NULL: ' <<<"$out"
	# With jemalloc preloaded ahead of it, the same host is served.
	serves "agent after jemalloc" env LD_PRELOAD="$je $JM4LW_AGENT_SO" \
		JM4LW_LISTEN=127.0.0.1:0 "$API_glibc" thread
	# jm4lw-run sees that jemalloc comes after libc and preloads it.
	serves "jm4lw-run" env JM4LW_QUIET= "$JM4LW_RUN" -l 127.0.0.1:0 -- \
		"$API_glibc" thread
	;;
*)
	die "usage: allocator.sh link|static|preload|agent"
	;;
esac
finish

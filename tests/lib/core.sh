# shellcheck shell=bash
# tests/lib/core.sh — the harness's core: what a test records (pass, fail,
# skip, finish), its assertions, and the processes it starts and waits for
# (track, wait_exit, at_exit and the exit trap's cleanup). Definitions only:
# tests/lib.sh sources this and sets up the state it works on ($T,
# passed/failed/skipped, _pids, _at_exit, SLOW) and the traps.

# track [-g] PID: stop PID on exit (TERM, then KILL after 5 s). With -g,
# PID leads its own process group (setsid) and the whole group goes.
track() {
	if [ "$1" = -g ]; then
		_pids+=("-$2")
	else
		_pids+=("$1")
	fi
}

# at_exit COMMAND: run COMMAND (a string, eval'ed) on exit, after every
# process started here is gone and before the scratch directory is removed
# (e.g. to unmount a file system mounted under $T).
at_exit() {
	_at_exit+=("$1")
}

# Stop what we started (TERM, then KILL after 5 s), remove the scratch dir.
_lib_cleanup() {
	local pid i
	for pid in "${_pids[@]}"; do
		kill -TERM -- "$pid" 2>/dev/null
	done
	for pid in "${_pids[@]}"; do
		for i in $(seq $((50 * SLOW))); do
			_alive "${pid#-}" || break
			sleep 0.1
		done
		kill -KILL -- "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	for i in "${_at_exit[@]}"; do
		eval "$i"
	done
	if [ "${KEEP_TMP:-0}" = 1 ]; then
		echo "# scratch kept in $T" >&2
	else
		rm -rf "$T"
	fi
}

# --- results ---------------------------------------------------------------------

pass() {
	passed=$((passed + 1))
	echo "ok - $1"
}

# fail DESC [DETAIL...]: record a failure; each DETAIL is printed indented.
fail() {
	local line
	failed=$((failed + 1))
	echo "FAIL - $1"
	shift
	for line in "$@"; do
		printf '%s\n' "$line" | sed 's/^/    /'
	done
}

skip() {
	skipped=$((skipped + 1))
	echo "skip - $1"
}

# Abort the script: a prerequisite is missing, nothing else can be tested.
die() {
	fail "$1"
	finish
}

# Print the totals as the last line; exit non-zero on any failure (or when
# nothing at all was checked, which would be a broken script, not a pass).
finish() {
	[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && exit 0
	exit 1
}

# Show bytes unambiguously (for failure messages): at most 400 of them.
show() {
	head -c 400 "$1" | od -An -c | head -8
}

# Show a file's tail as text (daemon logs).
show_tail() {
	echo "--- tail of $1:"
	tail -n "${2:-15}" "$1" 2>/dev/null
}

# --- assertions ------------------------------------------------------------------
# Each records one pass or fail and returns 0/1, so callers may stop early.

# assert_eq DESC EXPECTED ACTUAL
assert_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "expected: $(printf '%q' "$2")" "actual:   $(printf '%q' "$3")"
		return 1
	fi
}

# assert_bytes DESC FILE EXPECTED: FILE holds exactly the bytes EXPECTED
# (a printf format, so '\n' may be written as such).
assert_bytes() {
	# shellcheck disable=SC2059
	if cmp -s "$2" <(printf -- "$3"); then
		pass "$1"
	else
		fail "$1" "expected bytes:" "$(printf -- "$3" | od -An -c | head -4)" \
			"actual bytes ($(wc -c <"$2") in all):" "$(show "$2")"
		return 1
	fi
}

# assert_grep DESC ERE FILE: some line of FILE matches ERE.
assert_grep() {
	_assert_found -E "no line matches /$2/ in $3:" "$@"
}

# assert_grep_F DESC STRING FILE: FILE contains STRING literally.
assert_grep_F() {
	_assert_found -F "\"$2\" not found in $3:" "$@"
}

# _assert_found GREP_OPTION WHY DESC PATTERN FILE: the two above.
_assert_found() {
	local opt=$1 why=$2
	shift 2
	if grep "$opt" -q -- "$2" "$3"; then
		pass "$1"
	else
		fail "$1" "$why" "$(head -c 600 "$3")"
		return 1
	fi
}

# assert_no_grep DESC ERE FILE: no line of FILE matches ERE.
assert_no_grep() {
	if ! grep -Eq -- "$2" "$3"; then
		pass "$1"
	else
		fail "$1" "unexpected match of /$2/ in $3:" "$(grep -E -- "$2" "$3" | head -5)"
		return 1
	fi
}

# assert_cmd DESC CMD...: CMD exits 0 (its output is shown on failure).
assert_cmd() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		pass "$desc"
	else
		fail "$desc" "command: $*" "exit status $rc" "$(printf '%s' "$out" | head -20)"
		return 1
	fi
}

# need TOOL...: a missing tool is a failure (CI installs them all).
need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null ||
			die "$t is not installed (scripts/deps.sh test installs it)"
	done
}

# --- processes -------------------------------------------------------------------

# fds_own PID: PID's open descriptors, less the symbolizer's cached
# copies of the objects it read (memfds named jm4lw-object, prof_util.c's
# object cache: they stay open between requests by design, at most
# FDS_CACHED_MAX of them).
FDS_CACHED_MAX=32
fds_own() {
	echo $(($(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l) - $(fds_cached "$1")))
}

# fds_cached PID: how many cached object copies PID holds open.
fds_cached() {
	find "/proc/$1/fd" -mindepth 1 -maxdepth 1 -lname '/memfd:jm4lw-object*' 2>/dev/null | wc -l
}

# Is PID alive and not a zombie? kill -0 says whether it exists (a zombie
# too); its state in /proc says whether it is a zombie. A stat that cannot
# be read while kill -0 finds the process is not taken for its end: it
# vanishes for a moment while a multi-threaded process exits, or while
# LeakSanitizer stops it to scan.
_alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)
	[ "$st" != Z ]
}

# _running PID: PID, a job of this shell, has not ended: bash's job table,
# which waitpid keeps (a job ends when its last thread has, and only
# then can its status be had), with no look at /proc.
_running() {
	jobs -rp | grep -qx "$1"
}

# scratch NAME: make and print a fresh directory under $T. (mktemp, not a
# counter: this runs in $(...), where a counter would not count.)
scratch() {
	mktemp -d "$T/$1.XXXX"
}

# wait_exit PID SECONDS: wait for our child PID to end; sets EXIT_STATUS.
# Returns 1 (and kills it) if it is still running after SECONDS. PID must
# be a job of this shell (started with & here): its end is read from the
# job table (_running), not /proc.
# shellcheck disable=SC2034 # EXIT_STATUS is for the caller
wait_exit() {
	local pid=$1 n=$(($2 * 10)) i
	for i in $(seq "$n"); do
		_running "$pid" || break
		sleep 0.1
	done
	if _running "$pid"; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		EXIT_STATUS=timeout
		return 1
	fi
	wait "$pid" 2>/dev/null
	EXIT_STATUS=$?
	_forget "$pid"
	return 0
}

_forget() {
	local p keep=()
	for p in "${_pids[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	_pids=("${keep[@]}")
}

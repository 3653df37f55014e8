# shellcheck shell=bash
# tests/lib/daemon.sh — a real jm4lwd: start and stop it, read its log,
# talk to it over the words (ask, alive, mntr) and check what dumps left
# behind. Definitions only; sourced by tests/lib.sh over core.sh.

# start_daemon [-C DIR] [-e VAR=VALUE]... [-L NLISTENERS] [--] ARGS...
#
# Start jm4lwd ARGS in the foreground of a background job, with MALLOC_CONF
# unset unless -e sets it, working directory DIR (default: a new scratch
# dir), stderr in $DLOG, behind $JM4LWD_WRAP if that is set. Waits (up to
# 10 s, times $SLOW) for NLISTENERS (default 1)
# "listening on" lines and sets:
#	PID    the daemon's pid
#	PORT   the first listener's port;  PORTS  all of them
#	HTTP_PORT  the HTTP listener's (-W 127.0.0.1:0 unless ARGS say -W)
#	ADDRS  the listeners as logged (127.0.0.1:PORT, [::1]:PORT)
#	D      its directory;  DLOG  its stderr
# Returns 1 after recording a failure if it does not come up.
start_daemon() {
	local envs=() nl=1 i re n wrap=()
	# Read here, not once at the top: a case may set it for one daemon.
	read -ra wrap <<<"${JM4LWD_WRAP:-}"
	D=
	while [ $# -gt 0 ]; do
		case $1 in
		-C) D=$2; shift 2 ;;
		-e) envs+=("$2"); shift 2 ;;
		-L) nl=$2; shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	[ -n "$D" ] || D=$(scratch daemon)
	# HTTP on a free port unless the case says where (-W): suites run in
	# parallel, and the default 9182 is one port for all of them.
	case " $* " in
	*" -W "*) ;;
	*) set -- -W 127.0.0.1:0 "$@" ;;
	esac
	DLOG=$D/jm4lwd.log
	: >"$DLOG"
	(cd "$D" && exec env -u MALLOC_CONF "${envs[@]}" "${wrap[@]}" "$JM4LWD" "$@") \
		</dev/null >>"$DLOG" 2>&1 &
	PID=$!
	track "$PID"
	# The subshell execs env, which execs jm4lwd (or the wrapper, which
	# execs or becomes it): $! is the daemon's pid.
	re='^jm4lwd: listening on (127\.0\.0\.1|\[::1\]):[0-9]+$'
	for i in $(seq $((100 * SLOW))); do
		n=$(grep -Ec "$re" "$DLOG")
		[ "$n" -ge "$nl" ] && break
		_alive "$PID" || break
		sleep 0.1
	done
	if [ "$n" -lt "$nl" ]; then
		fail "jm4lwd $* came up with $nl listener(s) within $((10 * SLOW)) s" \
			"$(show_tail "$DLOG")"
		return 1
	fi
	# HTTP binds right after the words: its port, unless -W "" is off.
	HTTP_PORT=
	for i in $(seq $((20 * SLOW))); do
		HTTP_PORT=$(sed -n 's/^jm4lwd: HTTP listening on .*:\([0-9]*\)$/\1/p' "$DLOG" | head -1)
		[ -n "$HTTP_PORT" ] && break
		case " $* " in *" -W  "*) break ;; esac
		_alive "$PID" || break
		sleep 0.05
	done
	mapfile -t ADDRS < <(grep -E "$re" "$DLOG" | sed 's/^jm4lwd: listening on //')
	PORTS=()
	for i in "${ADDRS[@]}"; do
		PORTS+=("${i##*:}")
	done
	PORT=${PORTS[0]}
	return 0
}

# stop_daemon [SIGNAL]: send SIGTERM (or SIGNAL) and check a clean exit 0
# within 10 s (times $SLOW). Records a pass or a fail. Under JM4LWD_WRAP a
# non-zero status is also what the wrapper reports (valgrind's
# --error-exitcode), and its report is in the log.
stop_daemon() {
	local sig=${1:-TERM}
	kill -"$sig" "$PID" 2>/dev/null
	if ! wait_exit "$PID" $((10 * SLOW)); then
		fail "jm4lwd exits on SIG$sig" "still running after $((10 * SLOW)) s, killed" \
			"$(show_tail "$DLOG")"
		return 1
	fi
	if [ "$EXIT_STATUS" = 0 ]; then
		pass "jm4lwd exits 0 on SIG$sig${JM4LWD_WRAP:+ (under ${_wrap[0]}: no errors)}"
	elif [ -n "$JM4LWD_WRAP" ]; then
		fail "jm4lwd exits 0 on SIG$sig under ${_wrap[0]}" \
			"exit status $EXIT_STATUS: ${_wrap[0]} or jm4lwd reported errors" \
			"$(show_tail "$DLOG" 60)"
		return 1
	else
		fail "jm4lwd exits 0 on SIG$sig" "exit status $EXIT_STATUS" \
			"$(show_tail "$DLOG")"
		return 1
	fi
}

# wait_log ERE [SECONDS]: wait until the daemon log has a line matching ERE
# (SECONDS times $SLOW).
wait_log() {
	local i
	for i in $(seq $((${2:-10} * 10 * SLOW))); do
		grep -Eq -- "$1" "$DLOG" && return 0
		sleep 0.1
	done
	return 1
}

# ask WORD [PORT [HOST]]: send WORD as an operator would, with nc.openbsd
# (it exits once the server closes), reply on stdout. The outer timeout
# only keeps a hung server from hanging the suite.
ask() {
	printf '%s\n' "$1" | timeout $((30 * SLOW)) nc.openbsd "${3:-127.0.0.1}" "${2:-$PORT}"
}

# ask_when_due WORD [PORT [HOST]]: ask WORD, and again after the time
# a rate refusal names ("retry in S s", at most three times): for a view
# asked right after a dump, where dump_min_interval is the rule and how
# long the checks in between took is the machine's.
ask_when_due() {
	local out n
	for n in 1 2 3 4; do
		out=$(ask "$@")
		[[ $out =~ ^error:\ .*\ retry\ in\ ([0-9.]+)\ s ]] && [ "$n" -lt 4 ] || break
		sleep "$(awk -v s="${BASH_REMATCH[1]}" 'BEGIN { print s + 0.1 }')"
	done
	printf '%s\n' "$out"
}

# alive DESC [PORT [HOST]]: the daemon still answers ruok with exactly imok.
# It is not a liveness probe only: the process must not have died either.
alive() {
	local f="$T/alive.out"
	ask ruok "${2:-$PORT}" "${3:-127.0.0.1}" >"$f" 2>&1
	if ! _alive "$PID"; then
		fail "$1" "jm4lwd (pid $PID) is gone" "$(show_tail "$DLOG")"
		return 1
	fi
	assert_bytes "$1" "$f" 'imok'
}

# mntr_value KEY [PORT]: one figure from mntr (empty if absent).
mntr_value() {
	ask mntr "${2:-$PORT}" | awk -F '\t' -v k="$1" '$1 == k { print $2 }'
}

# wait_mntr KEY OP VALUE [PORT]: until mntr's KEY compares so with test's
# OP (-eq, -ge, ...), within 20 s (times $SLOW).
wait_mntr() {
	local v
	for _ in $(seq $((100 * SLOW))); do
		v=$(mntr_value "$1" "${4:-$PORT}")
		[ -n "$v" ] && test "$v" "$2" "$3" && return 0
		sleep 0.2
	done
	return 1
}

# wait_quiet DESC: within 10 s (times $SLOW) the daemon holds no connection
# but the mntr one asking (no leak after the case before).
wait_quiet() {
	local i v=
	for i in $(seq $((50 * SLOW))); do
		v=$(mntr_value jm4lw_open_connections)
		[ "$v" = 1 ] && break
		sleep 0.2
	done
	assert_eq "$1" 1 "$v"
}

# raw_case DESC ARGS...: run the raw-socket helper (for bytes no ordinary
# client sends) and record its verdict with the line it printed.
raw_case() {
	local desc=$1 r
	shift
	if r=$(timeout $((60 * SLOW)) python3 "$TESTS_DIR/integration/raw.py" "$@" 2>&1); then
		pass "$desc ($r)"
	else
		fail "$desc" "raw.py $*: $r"
		return 1
	fi
}

# leftovers DIR...: what dumps left behind in DIRs, one name and a space
# each: hidden .jm4lw.* entries, except staging directories
# (.jm4lw.PID.XXXXXX, where jemalloc writes; a live module keeps its own)
# while they are empty.
leftovers() {
	local f n
	while IFS= read -r f; do
		n=${f##*/}
		if [ -d "$f" ] && [ ! -L "$f" ] && [ -z "$(ls -A "$f")" ] &&
			[[ $n =~ ^\.jm4lw\.[0-9]+\.[A-Za-z0-9]{6}$ ]]; then
			continue
		fi
		printf '%s ' "$n"
	done < <(find "$@" -mindepth 1 -maxdepth 1 -name '.jm4lw.*' 2>/dev/null)
}

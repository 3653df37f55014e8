# shellcheck shell=bash
# common.sh — what only the abuse tests share (the abuse.py driver and the
# checks built on it), on top of the suites' harness tests/lib.sh (scratch
# dir $T, pass/fail/finish, start_daemon/stop_daemon, ask, mntr_value).
# Source it, do not run it:
#
#	. "$(dirname "$0")/common.sh"
#
# Every case ends with check_clean: the daemon still answers ruok with
# imok, holds no more descriptors than right after start-up (polled: closes
# may linger a moment), and its dump directory holds exactly the dumps the
# case expects (no .jm4lw.* temporary left behind).
AB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
. "$AB_DIR/../lib.sh"

need nc.openbsd python3 timeout
[ -x "$JM4LWD" ] || die "$JM4LWD is not executable"

# Where check_clean's probes go (a case whose allow_from keeps 127.0.0.1
# out sets these): host, and a local address to bind to (empty: any).
PROBE_HOST=127.0.0.1
PROBE_BIND=

# ab ARGS...: run the abuse driver (abuse.py) under an outer bound.
ab() {
	timeout $((150 * SLOW)) python3 "$AB_DIR/abuse.py" "$@"
}

# ab_case DESC ARGS...: run the driver and record its verdict with the last
# line it printed (all of its output on failure).
ab_case() {
	local desc=$1 r
	shift
	if r=$(ab "$@" 2>&1); then
		pass "$desc (${r##*$'\n'})"
	else
		fail "$desc" "abuse.py $*:" "$r"
		return 1
	fi
}

# conf_file DIR LINE...: write DIR/jm4lwd.conf, one LINE per line.
conf_file() {
	local d=$1
	shift
	printf '%s\n' "$@" >"$d/jm4lwd.conf"
}

# The daemon's open descriptors, and its CPU time in clock ticks.
fd_count() {
	fds_own "$PID"
}
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$PID/stat"
}

# probe_ruok DESC: a fresh connection to $PROBE_HOST gets exactly imok, and
# the process is still there.
probe_ruok() {
	local r
	if ! _alive "$PID"; then
		fail "$1" "jm4lwd (pid $PID) is gone" "$(show_tail "$DLOG")"
		return 1
	fi
	if r=$(ab talk "$PROBE_HOST" "$PORT" ruok --expect imok \
		${PROBE_BIND:+--bind "$PROBE_BIND"} 2>&1); then
		pass "$1"
	else
		fail "$1" "$r" "$(show_tail "$DLOG")"
		return 1
	fi
}

# probe_mntr KEY: one mntr figure, asked the way probe_ruok asks.
probe_mntr() {
	ab talk "$PROBE_HOST" "$PORT" mntr ${PROBE_BIND:+--bind "$PROBE_BIND"} \
		--out "$T/mntr.out" >/dev/null 2>&1
	awk -F '\t' -v k="$1" '$1 == k { print $2 }' "$T/mntr.out"
}

# baseline DESC: after start_daemon: the daemon answers, then FD0 is its
# descriptor count once the probe's connection is gone (the lowest of a
# few samples: a close can lag the probe by a moment).
baseline() {
	local i n
	probe_ruok "$1: up, answers imok" || return 1
	FD0=$(fd_count)
	for i in $(seq 10); do
		sleep 0.05
		n=$(fd_count)
		[ "$n" -lt "$FD0" ] && FD0=$n
	done
	echo "# $1: $FD0 descriptors open after start-up"
}

# wait_fds DESC: the descriptor count comes back to FD0 within 20 s.
wait_fds() {
	local i n
	for i in $(seq $((100 * SLOW))); do
		n=$(fd_count)
		[ "$n" -le "$FD0" ] && break
		sleep 0.2
	done
	if [ "$(fds_cached "$PID")" -gt "$FDS_CACHED_MAX" ]; then
		fail "$1" "$(fds_cached "$PID") cached object copies open, more than the cache's $FDS_CACHED_MAX slots"
		return 1
	fi
	if [ "$n" = "$FD0" ]; then
		pass "$1"
	else
		fail "$1" "$n descriptors open, $FD0 after start-up:" \
			"$(ls -l "/proc/$PID/fd" 2>&1 | tail -n +2 | head -20)"
		return 1
	fi
}

# check_clean CASE [DIR [FILE...]]: the checks every case ends with (see
# the top). DIR is the dump directory, FILEs the names it must hold.
check_clean() {
	local c=$1 dir=${2:-} want got
	probe_ruok "$c: a fresh connection still gets imok"
	wait_fds "$c: descriptors back to the start-up count ($FD0)"
	[ -n "$dir" ] || return 0
	shift 2
	want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
	# A dump's leak index (<dump>.trend) goes with its dump:
	# listed only when its dump is not there.
	got=$( (ls -A "$dir" | grep -v '^\.jm4lw\.' |
		while IFS= read -r f; do
			case $f in *.heap.trend) [ -e "$dir/${f%.trend}" ] && continue ;; esac
			printf '%s\n' "$f"
		done; leftovers "$dir" | tr ' ' '\n') |
		sed '/^$/d' | sort | tr '\n' ' ')
	assert_eq "$c: the dump dir holds ${want:-no file}${want:+and nothing else}" "$want" "$got"
}

# mount_tmpfs DIR OPTIONS: mount a tmpfs on DIR (made if missing), to be
# unmounted on exit. Returns 1 if mounting is impossible here (not root,
# no CAP_SYS_ADMIN): the caller skips what needs it.
mount_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o "$2" tmpfs "$1" 2>"$T/mount.err" || return 1
	at_exit "umount '$1' 2>/dev/null || umount -l '$1'"
}

# Hold connections in the background (abuse.py hold ARGS) until
# release_held; held_wait waits for its "connected" line and prints it.
# Call these directly, not in $(...): release_held must close the pipe the
# holder waits on in this shell.
hold_start() {
	rm -f "$T/hold.fifo" "$T/hold.out"
	mkfifo "$T/hold.fifo"
	(exec timeout $((150 * SLOW)) python3 "$AB_DIR/abuse.py" hold "$@" \
		<"$T/hold.fifo" >"$T/hold.out" 2>&1) &
	HOLD_PID=$!
	track "$HOLD_PID"
	exec 7>"$T/hold.fifo"
}
held_wait() {
	local i
	for i in $(seq $((300 * SLOW))); do
		grep -q '^connected ' "$T/hold.out" && break
		_alive "$HOLD_PID" || break
		sleep 0.1
	done
	echo "# holder: $(grep '^connected ' "$T/hold.out" || cat "$T/hold.out")"
}
release_held() {
	exec 7>&-
	wait "$HOLD_PID"
	_forget "$HOLD_PID"
	echo "# holder: $(tail -n 1 "$T/hold.out")"
}

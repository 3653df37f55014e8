# shellcheck shell=bash
# tests/lib/base.sh — helpers that hold no state and need none: what the
# test harness (tests/lib.sh) and the benchmarks (tests/bench/) both use.
# Sourcing it only defines functions, so a script may take it alone.

# log MESSAGE...: MESSAGE on stderr, after the running script's name.
log() { echo "${0##*/}: $*" >&2; }

# free_port [HOST]: a port nobody listens on right now on HOST (default
# 127.0.0.1; "::1" for IPv6), as the kernel picks it.
free_port() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.bind((sys.argv[1], 0))
print(s.getsockname()[1])' "${1:-127.0.0.1}"
}

# have_ipv6: this machine has ::1 to bind to.
have_ipv6() {
	python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' \
		2>/dev/null
}

# wait_port FILE [PATTERN [SECONDS]]: the port of the first "PATTERN
# 127.0.0.1:PORT" line (PATTERN a sed regex, "listening on" unless given) a
# program wrote to FILE, within SECONDS (20); or nothing and status 1.
wait_port() {
	local pat=${2:-listening on} port
	for _ in $(seq 1 $((${3:-20} * 10))); do
		port=$(sed -n "s/.*$pat 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p" "$1" | head -1)
		if [ -n "$port" ]; then echo "$port"; return 0; fi
		sleep 0.1
	done
	return 1
}

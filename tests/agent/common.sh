# Shared by the agent tests: a scratch dir, process cleanup, checks, and
# the closing "N passed, M failed" line. Source it; set -u is on.
set -u
PASS=0
FAILED=0
PIDS=""
WORK=$(mktemp -d "${TMPDIR:-/tmp}/agent.XXXXXX")

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT

ok() { PASS=$((PASS + 1)); echo "ok - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }

# check DESCRIPTION COMMAND...: pass when COMMAND succeeds.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else fail "$what"; return 1; fi
}

# wait_port FILE: the port of the first "listening on 127.0.0.1:PORT" line
# an agent wrote to FILE (up to 20 s), or nothing.
wait_port() {
	local i port
	for i in $(seq 1 200); do
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$1" | head -1)
		if [ -n "$port" ]; then echo "$port"; return 0; fi
		sleep 0.1
	done
	return 1
}

# ask PORT WORD: the reply, through our client.
ask() { "$JM4LW_CLIENT" -p "$1" -t 30 "$2"; }

# free_port: a loopback port nobody listens on right now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

finish() {
	echo "$PASS passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}

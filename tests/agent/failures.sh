#!/bin/bash
# The agent must never break its host: no jemalloc, a taken port, a bad
# config — one line on stderr, and the program does its job.
. "$(dirname "$0")/common.sh"

je=$(/sbin/ldconfig -p | awk '/libjemalloc\.so\.2 / { print $NF; exit }')

# run_host ENV...: /bin/echo under the agent; sets OUT, ERR, RC.
run_host() {
	OUT=$(env "$@" /bin/echo host-works 2>"$WORK/err")
	RC=$?
	ERR=$(cat "$WORK/err")
}

run_host LD_PRELOAD="$JM4LW_AGENT_SO"
check "no jemalloc: the program still works" test "$OUT" = host-works -a "$RC" -eq 0
check "no jemalloc: exactly one agent line saying why" bash -c \
	"[ \$(grep -c 'jm4lw agent' <<<'$ERR') -eq 1 ] && grep -q 'does not run on jemalloc' <<<'$ERR'"

# A port somebody else holds.
busy=$(free_port)
python3 -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',$busy)); s.listen(); time.sleep(60)" &
PIDS="$PIDS $!"
for i in $(seq 1 50); do ss -ltn 2>/dev/null | grep -q ":$busy " && break; sleep 0.1; done
run_host LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_LISTEN=127.0.0.1:$busy
check "port taken: the program still works" test "$OUT" = host-works -a "$RC" -eq 0
check "port taken: the agent says so" grep -q "Address already in use" <<<"$ERR"

printf 'listen = 127.0.0.1:0\nbogus_key = 1\n' >"$WORK/bad.conf"
run_host LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_CONF="$WORK/bad.conf"
check "bad config: the program still works" test "$OUT" = host-works -a "$RC" -eq 0
check "bad config: file:line in the message" grep -q "bad.conf:2" <<<"$ERR"

run_host LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_LISTEN=not-an-address
check "bad listen: the program still works" test "$OUT" = host-works -a "$RC" -eq 0

# A program that exits at once with the agent running is not held up.
run_host LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_LISTEN=127.0.0.1:0 JM4LW_QUIET=1
check "agent running: short-lived program exits normally" test "$OUT" = host-works -a "$RC" -eq 0
check "JM4LW_QUIET keeps stderr clean" test -z "$ERR"

# The wrapper's own errors.
"$JM4LW_RUN" >/dev/null 2>&1
check "jm4lw-run without a program: usage, exit 2" test $? -eq 2
"$JM4LW_RUN" -- /nonexistent/prog 2>/dev/null
check "jm4lw-run on a missing program: exit 127" test $? -eq 127
JM4LW_AGENT=/nonexistent.so "$JM4LW_RUN" /bin/true 2>/dev/null
check "jm4lw-run without the agent: exit 2" test $? -eq 2
finish

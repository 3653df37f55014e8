#!/bin/bash
# The agent must never break its host: no jemalloc, a taken port, a bad
# config — one line on stderr, and the program does its job.
. "$(dirname "$0")/../lib.sh"

need python3

je=$(/sbin/ldconfig -p | awk '/libjemalloc\.so\.2 / { print $NF; exit }')

# run_host ENV...: /bin/echo under the agent; sets OUT, ERR, RC.
run_host() {
	OUT=$(env "$@" /bin/echo host-works 2>"$T/err")
	RC=$?
	ERR=$(cat "$T/err")
}

run_host LD_PRELOAD="$JM4LW_AGENT_SO"
assert_cmd "no jemalloc: the program still works" test "$OUT" = host-works -a "$RC" -eq 0
assert_cmd "no jemalloc: exactly one agent line saying why" bash -c \
	"[ \$(grep -c 'jm4lw agent' <<<'$ERR') -eq 1 ] && grep -q 'does not run on jemalloc' <<<'$ERR'"

# A port somebody else holds.
busy=$(free_port)
python3 -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',$busy)); s.listen(); time.sleep(60)" &
track $!
for i in $(seq 1 50); do ss -ltn 2>/dev/null | grep -q ":$busy " && break; sleep 0.1; done
run_host LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_LISTEN=127.0.0.1:$busy
assert_cmd "port taken: the program still works" test "$OUT" = host-works -a "$RC" -eq 0
assert_cmd "port taken: the agent says so" grep -q "Address already in use" <<<"$ERR"
# The HTTP port taken, the words' free: the words serve, and one line
# names the address and the key.
run_host LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_LISTEN=127.0.0.1:0 JM4LW_HTTP_LISTEN="127.0.0.1:$busy"
assert_cmd "HTTP port taken: the program still works" test "$OUT" = host-works -a "$RC" -eq 0
assert_grep "HTTP port taken: one line with the address and its key" \
	"^jm4lw agent\[[0-9]+\]: cannot listen on 127\.0\.0\.1:$busy \(http_listen\): Address already in use$" "$T/err"
assert_grep "... and the words listen all the same" "listening on 127\.0\.0\.1:" "$T/err"

printf 'listen = 127.0.0.1:0\nbogus_key = 1\n' >"$T/bad.conf"
run_host LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_CONF="$T/bad.conf"
assert_cmd "bad config: the program still works" test "$OUT" = host-works -a "$RC" -eq 0
assert_cmd "bad config: file:line in the message" grep -q "bad.conf:2" <<<"$ERR"

# JM4LW_CONF naming a FIFO blocked the agent's constructor in
# open() for ever: the program never reached its main. Bounded, so the old
# hang is a failure, not a stuck suite.
mkfifo "$T/fifo.conf"
OUT=$(timeout 20 env LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_CONF="$T/fifo.conf" \
	/bin/echo host-works 2>"$T/err")
RC=$?
ERR=$(cat "$T/err")
assert_cmd "config a FIFO: the program reaches main and works" test "$OUT" = host-works -a "$RC" -eq 0
assert_cmd "config a FIFO: the agent says it is no regular file" \
	grep -q "fifo.conf: not a regular file (a FIFO)" <<<"$ERR"

run_host LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_LISTEN=not-an-address
assert_cmd "bad listen: the program still works" test "$OUT" = host-works -a "$RC" -eq 0

# A program that exits at once with the agent running is not held up.
run_host LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_LISTEN=127.0.0.1:0 JM4LW_QUIET=1
assert_cmd "agent running: short-lived program exits normally" test "$OUT" = host-works -a "$RC" -eq 0
assert_cmd "JM4LW_QUIET keeps stderr clean" test -z "$ERR"

# A port moved is a port asked for: JM4LW_LISTEN alone serves the words
# only, never HTTP on the default 9182 besides; JM4LW_HTTP_LISTEN (or
# jm4lw-run -W) asks for it.
# (lib.sh exports JM4LW_HTTP_LISTEN=127.0.0.1:0 for every other test.)
run_host -u JM4LW_HTTP_LISTEN LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_LISTEN=127.0.0.1:0
assert_grep "JM4LW_LISTEN alone: the words listen" "listening on 127\.0\.0\.1:" "$T/err"
assert_no_grep "JM4LW_LISTEN alone: no HTTP listener, no bind of 9182" \
	"HTTP listening|http_listen" "$T/err"
run_host LD_PRELOAD="$je $JM4LW_AGENT_SO" JM4LW_LISTEN=127.0.0.1:0 JM4LW_HTTP_LISTEN=127.0.0.1:0
assert_grep "JM4LW_LISTEN and JM4LW_HTTP_LISTEN: HTTP too" "HTTP listening on 127\.0\.0\.1:" "$T/err"
OUT=$(env -u JM4LW_HTTP_LISTEN "$JM4LW_RUN" -l 127.0.0.1:0 /bin/echo host-works 2>"$T/err")
assert_no_grep "jm4lw-run -l alone: no HTTP listener" "HTTP listening|http_listen" "$T/err"
OUT=$(env -u JM4LW_HTTP_LISTEN "$JM4LW_RUN" -l 127.0.0.1:0 -W 127.0.0.1:0 /bin/echo host-works 2>"$T/err")
assert_grep "jm4lw-run -l and -W: HTTP there" "HTTP listening on 127\.0\.0\.1:" "$T/err"

# The wrapper's own errors.
"$JM4LW_RUN" >/dev/null 2>&1
assert_cmd "jm4lw-run without a program: usage, exit 2" test $? -eq 2
"$JM4LW_RUN" -- /nonexistent/prog 2>/dev/null
assert_cmd "jm4lw-run on a missing program: exit 127" test $? -eq 127
JM4LW_AGENT=/nonexistent.so "$JM4LW_RUN" /bin/true 2>/dev/null
assert_cmd "jm4lw-run without the agent: exit 2" test $? -eq 2
finish

#!/bin/bash
# A host that forks while its worker dumps: the child gets a
# copy of the module with "a dump is in progress" set, and no worker to
# end it; its jmfp must still succeed (before the fix it said "in
# progress" forever). tests/host/leak_host's word frk1 forks on the loop
# right after a jmfp was handed to the worker (the dump writes its
# symbolized companion, dump_symbolized: the worker is busy for a while;
# its leak index comes after the answer), and the child
# listens on a port of its own.
#
# Control: the parent's own jmfp, asked just before the fork, is
# answered with its path, and the fork came while it was still out
# (frk1 was answered before it).
#
#	bash leak_fork.sh   (LEAK_HOST=path/to/leak_host, else build/)
. "$(dirname "$0")/../lib.sh"

need nc.openbsd timeout

D=$(scratch leak_fork)
printf 'dump_min_interval = 0\ndump_min_free = 0\ndump_symbolized = true\n' >"$D/conf"
start_leak_host "$D" 10 || die "leak_host is listening" "$(cat "$D/err")"
PID=$LPID
PORT=$LPORT
HPORT=$LHPORT
sleep 1 # a heap with stacks to dump

# The parent's jmfp, then frk1 while its dump is out (~160 ms: the dump
# writes its symbolized companion): the order in which their first lines come says
# the fork came first. The child holds a copy of the parent's jmfp
# connection (fork copies every descriptor), so that reply ends only when
# the child is gone: it is read by its first line.
# fork_mid_dump: jmfp, then frk1 10 ms later; sets cpid. 0 when frk1's
# answer came first (the fork met the dump out), else 1 (the child is
# stopped: the load let the dump end first; try again).
fork_mid_dump() {
	local before
	before=$(grep -c '^child ' "$D/out")
	: >"$D/order"
	(printf 'jmfp\n' | timeout 20 nc.openbsd 127.0.0.1 "$PORT" |
		{ IFS= read -r l; printf '%s\n' "$l" >"$D/parent"; echo jmfp >>"$D/order"; }) &
	sleep 0.01
	ask frk1 >"$D/fork"
	echo frk1 >>"$D/order"
	for _ in $(seq 100); do
		[ "$(wc -l <"$D/order")" -ge 2 ] && break
		sleep 0.1
	done
	# The child's pid from its own line (the frk1 reply is checked
	# below, once).
	for _ in $(seq 100); do
		[ "$(grep -c '^child ' "$D/out")" -gt "$before" ] && break
		sleep 0.1
	done
	cpid=$(sed -n 's/^child \([0-9]*\) listening on .*/\1/p' "$D/out" | tail -1)
	[ "$(grep -c '^child ' "$D/out")" -gt "$before" ] || die "frk1 forked" "$(cat "$D/fork" "$D/out")"
	track "$cpid"
	[ "$(tr '\n' ' ' <"$D/order")" = "frk1 jmfp " ] && return 0
	kill -TERM "$cpid"
	wait_exit "$cpid" 10 >/dev/null 2>&1
	sleep 1.1
	return 1
}
ok=0
for _ in $(seq 10); do
	fork_mid_dump && { ok=1; break; }
done
assert_eq "the fork came while the parent's dump was out" 1 "$ok"
# The frk1 connection is both processes' after the fork; the child lets
# go of its copy without a word or a shutdown, so the reply is the
# parent's alone, whole.
assert_eq "frk1's reply is the parent's \"forked PID\" alone" "forked $cpid" "$(cat "$D/fork")"
assert_grep "the parent's jmfp: its path" "^$D/dumps/jm4lw\.$PID\.[0-9]+\.[a-z]\.heap\$" "$D/parent"

for _ in $(seq 100); do
	CPORT=$(sed -n "s/^child $cpid listening on 127\.0\.0\.1:\([0-9]*\)\$/\1/p" "$D/out")
	[ -n "$CPORT" ] && break
	sleep 0.1
done
[ -n "$CPORT" ] || die "the child listens" "$(cat "$D/out" "$D/err")"
ask jmfp "$CPORT" >"$D/child1"
assert_grep "the child's jmfp succeeds (not \"in progress\")" "^$D/dumps/jm4lw\.$cpid\.[0-9]+\.[a-z]\.heap\$" "$D/child1"
ask jmfp "$CPORT" >"$D/child2"
assert_grep "the child's second jmfp too" "^$D/dumps/jm4lw\.$cpid\.[0-9]+\.[a-z]\.heap\$" "$D/child2"

# The child shares the parent's listening socket: gone first, so the
# parent answers.
kill -TERM "$cpid"
wait_exit "$cpid" 10 >/dev/null 2>&1

# A keep-alive HTTP connection of the parent (the first child gone, so
# the parent accepts it), open across a fork: the
# child's jm4lw_free at its exit (SIGTERM) must not shut it down (evhttp
# shuts down every socket it frees); the parent answers on it after.
# ka_get PATH: one request on fd 5, the status code.
ka_get() {
	local line len=0
	printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n' "$1" "$HPORT" >&5 || return 1
	IFS= read -r -t 10 line <&5 || return 1
	set -- $line
	local code=$2
	while IFS= read -r -t 10 line <&5; do
		line=${line%$'\r'}
		[ -z "$line" ] && break
		case ${line,,} in content-length:*) len=${line#*:}; len=${len// /} ;; esac
	done
	[ "$len" -gt 0 ] && { read -r -t 10 -N "$len" _ <&5 || return 1; }
	echo "$code"
}
exec 5<>"/dev/tcp/127.0.0.1/$HPORT"
assert_eq "a keep-alive HTTP connection to the parent: its first request" 200 "$(ka_get /jemalloc/status)"
before=$(grep -c '^child ' "$D/out")
ask frk1 >/dev/null
for _ in $(seq 100); do
	[ "$(grep -c '^child ' "$D/out")" -gt "$before" ] && break
	sleep 0.1
done
kpid=$(sed -n 's/^child \([0-9]*\) listening on .*/\1/p' "$D/out" | tail -1)
track "$kpid"
kill -TERM "$kpid"
# Gone, or a zombie (leak_host does not reap its children).
for _ in $(seq 100); do
	st=$(awk '{ print $3 }' "/proc/$kpid/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] && break
	sleep 0.1
done
if [ -z "$st" ] || [ "$st" = Z ]; then pass "the fork child that held a copy of it has exited (SIGTERM: jm4lw_free)"; else
	fail "the fork child that held a copy of it has exited (SIGTERM: jm4lw_free)" "state $st"
fi
assert_eq "the same connection answers after the child's exit" 200 "$(ka_get /jemalloc/status)"
exec 5>&-
ask jmfp >"$D/parent2"
assert_grep "the parent dumps on after the fork" "^$D/dumps/jm4lw\.$PID\.[0-9]+\.[a-z]\.heap\$" "$D/parent2"

stop_host leak_host
finish

#!/bin/bash
# Tests of the jm4lw client against small stand-in servers (socat on
# loopback), so the client's own behaviour is pinned down without jm4lwd:
# exact bytes, separators, nc's shape, exit statuses, timeouts, IPv6, caps,
# and the fan-out to many hosts with -H.
#
#	bash client.sh path/to/jm4lw
set -u

JM4LW=${1:?usage: bash client.sh path/to/jm4lw}
case $JM4LW in /*) ;; *) JM4LW=$PWD/$JM4LW ;; esac
[ -x "$JM4LW" ] || { echo "client.sh: $JM4LW is not executable" >&2; exit 2; }
for tool in socat python3 timeout cmp; do
	command -v "$tool" >/dev/null ||
		{ echo "client.sh: $tool is needed" >&2; exit 2; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/jm4lw-client.XXXXXX") || exit 2
servers=()
passed=0
failed=0

# Stop every server we started (each leads its own process group, so the
# handlers it forked go too) and remove the scratch directory.
cleanup() {
	local pid
	for pid in "${servers[@]}"; do
		kill -TERM -- "-$pid" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP

pass() {
	passed=$((passed + 1))
	echo "ok - $1"
}

# Record a failure with what the client printed, so the log explains it.
fail() {
	failed=$((failed + 1))
	echo "FAIL - $1"
	echo "  exit status: $rc"
	echo "  stdout: $(head -c 300 "$dir/out" | od -An -c | head -5)"
	echo "  stderr: $(head -c 300 "$dir/err")"
}

# Run the client; stdout, stderr and status land in $dir/out, $dir/err, $rc.
# The outer timeout only keeps a broken client from hanging the suite.
run() {
	timeout 60 "$JM4LW" "$@" >"$dir/out" 2>"$dir/err"
	rc=$?
}

# A port nobody listens on right now (the kernel picks it).
free_port() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.bind((sys.argv[1], 0))
print(s.getsockname()[1])' "$1"
}

# Is anything listening on TCP port $1? Read from /proc: probing with a
# connection would run a handler.
listening() {
	local hex
	hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p' |
		grep -q .
}

# Start socat on a free loopback port running handler script $2 for each
# connection; the port ends up in $port. $1 is 4 or 6.
start_server() {
	local fam=$1 script=$2 pid addr _
	for _ in 1 2 3 4 5; do
		if [ "$fam" = 6 ]; then
			port=$(free_port ::1) || return 1
			addr="TCP6-LISTEN:$port,bind=[::1]"
		else
			port=$(free_port 127.0.0.1) || return 1
			addr="TCP4-LISTEN:$port,bind=127.0.0.1"
		fi
		# -t 60: socat would otherwise close 0.5 s after the client's
		# half-close, cutting replies short and ending silent servers.
		setsid socat -t 60 "$addr,reuseaddr,fork" \
			SYSTEM:"sh $dir/$script" 2>>"$dir/socat.log" &
		pid=$!
		servers+=("$pid")
		for _ in $(seq 100); do
			listening "$port" && return 0
			kill -0 "$pid" 2>/dev/null || break # lost the port race
			sleep 0.05
		done
	done
	echo "client.sh: socat would not listen" >&2
	cat "$dir/socat.log" >&2
	exit 2
}

# The stand-in server: a reply per word, shaped like jm4lwd's.
cat >"$dir/dispatch.sh" <<EOF
echo x >>"$dir/connections"
w=\$(head -c4)
case \$w in
ruok) printf imok ;;
mntr) printf 'k1\tv1\nk2\tv2\n' ;;
noeo) printf 'no newline' ;;
badw) printf 'error: unknown word "badw"; known words: ruok mntr\n' ;;
jmfp) printf 'jmfp is not executed because it is not in the whitelist.\n' ;;
othr) printf 'jmfp is not executed because it is not in the whitelist.\n' ;;
slow) sleep 30 ;;
bigr) cat "$dir/big" ;;
huge) head -c 70000000 /dev/zero ;;
*) ;;
esac
EOF
: >"$dir/connections"
# 2 MiB with every byte value, NUL included.
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 8192)' \
	>"$dir/big"

start_server 4 dispatch.sh
P=$port

# --- usage -----------------------------------------------------------------

run --help
if [ $rc = 0 ] && grep -q '^usage: jm4lw' "$dir/out" && [ ! -s "$dir/err" ]; then
	pass "--help prints usage to stdout, exit 0"
else fail "--help"; fi

run -?
if [ $rc = 0 ] && grep -q '^usage: jm4lw' "$dir/out"; then
	pass "-? prints usage to stdout, exit 0"
else fail "-?"; fi

run -V
if [ $rc = 0 ] && grep -Eq '^jm4lw [0-9]+\.[0-9]+\.[0-9]+$' "$dir/out"; then
	pass "-V prints the version"
else fail "-V"; fi

run
if [ $rc = 2 ] && [ ! -s "$dir/out" ] && grep -q '^usage:' "$dir/err"; then
	pass "no word: usage on stderr, exit 2"
else fail "no word"; fi

run -x ruok
if [ $rc = 2 ] && grep -q 'unknown option' "$dir/err" &&
	grep -q '^usage:' "$dir/err"; then
	pass "unknown option: exit 2"
else fail "unknown option"; fi

for t in 0 -1 abc 1e9 nan; do
	run -t "$t" -p "$P" ruok
	if [ $rc = 2 ] && [ ! -s "$dir/out" ] && grep -q 'timeout' "$dir/err"; then
		pass "-t $t refused"
	else fail "-t $t"; fi
done

run -p 70000 ruok
if [ $rc = 2 ] && grep -q 'bad port' "$dir/err"; then
	pass "port out of range refused"
else fail "-p 70000"; fi

# A valid word first: had the client connected before checking every word,
# imok would be on stdout.
before=$(wc -l <"$dir/connections")
for w in abc abcde ''; do
	run -p "$P" ruok "$w"
	if [ $rc = 2 ] && [ ! -s "$dir/out" ] &&
		grep -q 'exactly 4 bytes' "$dir/err"; then
		pass "word \"$w\": exit 2 before connecting"
	else fail "word \"$w\""; fi
done
after=$(wc -l <"$dir/connections")
if [ "$before" = "$after" ]; then
	pass "bad words made no connection"
else rc=-; fail "bad words made $((after - before)) connections"; fi

# --- replies ---------------------------------------------------------------

run -p "$P" ruok
if [ $rc = 0 ] && cmp -s "$dir/out" <(printf imok) && [ ! -s "$dir/err" ]; then
	pass "single word: exactly imok, no newline"
else fail "single word"; fi

run -h 127.0.0.1 -p "$P" -t 0.5 noeo
if [ $rc = 0 ] && cmp -s "$dir/out" <(printf 'no newline'); then
	pass "single reply without newline passed through as is"
else fail "single noeo"; fi

run -p "$P" ruok mntr noeo ruok
if [ $rc = 0 ] &&
	cmp -s "$dir/out" <(printf 'imok\nk1\tv1\nk2\tv2\nno newline\nimok\n'); then
	pass "several words: replies kept apart"
else fail "several words"; fi

run -p "$P" badw
if [ $rc = 1 ] && grep -q '^error: unknown word' "$dir/out" &&
	[ ! -s "$dir/err" ]; then
	pass "error reply: printed, exit 1"
else fail "error reply"; fi

run -p "$P" jmfp
if [ $rc = 1 ] &&
	grep -qx 'jmfp is not executed because it is not in the whitelist.' \
		"$dir/out"; then
	pass "whitelist reply: printed, exit 1"
else fail "whitelist reply"; fi

run -p "$P" othr
if [ $rc = 0 ]; then
	pass "another word's whitelist text is an ordinary reply"
else fail "othr"; fi

run -p "$P" zzzz
if [ $rc = 1 ] && [ ! -s "$dir/out" ] &&
	grep -q "127.0.0.1:$P: zzzz: empty reply" "$dir/err"; then
	pass "empty reply: stderr note, exit 1"
else fail "empty reply"; fi

run -p "$P" ruok badw ruok
if [ $rc = 1 ] && [ "$(grep -c '^imok$' "$dir/out")" = 2 ] &&
	grep -q '^error: ' "$dir/out"; then
	pass "error in the middle: keeps going, exit 1"
else fail "error in the middle"; fi

run -p "$P" bigr
if [ $rc = 0 ] && cmp -s "$dir/out" "$dir/big"; then
	pass "2 MiB reply arrives whole ($(sha256sum <"$dir/out" | cut -c1-16))"
else fail "2 MiB reply"; fi

run -p "$P" huge
if [ $rc = 2 ] && [ ! -s "$dir/out" ] &&
	grep -q "127.0.0.1:$P: huge: reply larger than 64 MiB" "$dir/err"; then
	pass "reply over 64 MiB: exit 2, nothing printed"
else fail "reply over 64 MiB"; fi

# --- nc's shape --------------------------------------------------------------

run 127.0.0.1 "$P" < <(printf 'ruok\r\n\r\n  mntr \r\n\n\truok\r\n')
if [ $rc = 0 ] && cmp -s "$dir/out" <(printf 'imok\nk1\tv1\nk2\tv2\nimok\n'); then
	pass "host port: words from stdin, CRLF, blanks, spaces"
else fail "nc shape"; fi

run -t 3 localhost "$P" < <(echo ruok)
if [ $rc = 0 ] && cmp -s "$dir/out" <(printf imok); then
	pass "echo ruok | jm4lw -t 3 localhost PORT: exactly imok"
else fail "nc shape, one word"; fi

run 127.0.0.1 "$P" < <(printf 'ruok\nlonger\n')
if [ $rc = 2 ] && [ ! -s "$dir/out" ] && grep -q 'stdin:2:' "$dir/err"; then
	pass "bad word on stdin: exit 2 before connecting"
else fail "bad word on stdin"; fi

run 127.0.0.1 "$P" </dev/null
if [ $rc = 2 ] && grep -q 'no word' "$dir/err"; then
	pass "nothing on stdin: exit 2"
else fail "empty stdin"; fi

run -p "$P" 127.0.0.1 "$P" </dev/null
if [ $rc = 2 ] && grep -q 'given twice' "$dir/err"; then
	pass "host port with -p: exit 2"
else fail "host port with -p"; fi

# --- names and addresses -----------------------------------------------------

run -h localhost -p "$P" ruok
if [ $rc = 0 ] && cmp -s "$dir/out" <(printf imok); then
	pass "-h localhost"
else fail "-h localhost"; fi

run -h no-such-host.invalid -p "$P" ruok
if [ $rc = 2 ] && [ ! -s "$dir/out" ] &&
	grep -q '^jm4lw: no-such-host.invalid:' "$dir/err"; then
	pass "unresolvable host: exit 2 with message"
else fail "unresolvable host"; fi

if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' \
	2>/dev/null; then
	start_server 6 dispatch.sh
	P6=$port
	for h in ::1 '[::1]'; do
		run -h "$h" -p "$P6" ruok mntr
		if [ $rc = 0 ] &&
			cmp -s "$dir/out" <(printf 'imok\nk1\tv1\nk2\tv2\n'); then
			pass "-h $h"
		else fail "-h $h"; fi
		run "$h" "$P6" < <(echo ruok)
		if [ $rc = 0 ] && cmp -s "$dir/out" <(printf imok); then
			pass "$h PORT from stdin"
		else fail "$h PORT"; fi
	done
else
	echo "skip - no ::1 on this machine, IPv6 not tested"
fi

# --- failures ----------------------------------------------------------------

refused=$(free_port 127.0.0.1)
run -p "$refused" ruok mntr
if [ $rc = 2 ] && [ ! -s "$dir/out" ] &&
	[ "$(grep -c "^jm4lw: 127.0.0.1:$refused: Connection refused$" \
		"$dir/err")" = 2 ]; then
	pass "connection refused: a message per word, exit 2"
else fail "connection refused"; fi

# The bound is generous on purpose: only a client that ignores -t fails it.
start=$(date +%s%N)
run -p "$P" -t 0.5 slow
ms=$((($(date +%s%N) - start) / 1000000))
if [ $rc = 2 ] && [ ! -s "$dir/out" ] &&
	grep -q "127.0.0.1:$P: slow: timed out after 0.5 s" "$dir/err" &&
	[ $ms -lt 10000 ]; then
	pass "silent server with -t 0.5: exit 2 (${ms} ms)"
else fail "silent server (${ms} ms)"; fi

run -p "$P" -t 0.5 ruok slow badw ruok
if [ $rc = 2 ] && cmp -s "$dir/out" <(printf 'imok\nerror: unknown word "badw"; known words: ruok mntr\nimok\n') &&
	grep -q 'slow: timed out' "$dir/err"; then
	pass "timeout in the middle: keeps going, worst status 2"
else fail "timeout in the middle"; fi

# --- many hosts (-H) ------------------------------------------------------

# A second server like the first, one that answers every word with an error
# line, and a port nobody listens on.
start_server 4 dispatch.sh
P2=$port
cat >"$dir/error.sh" <<'EOF'
head -c4 >/dev/null
printf 'error: heap profiling is not enabled in this process\n'
EOF
start_server 4 error.sh
PE=$port
down=$(free_port 127.0.0.1)
A=127.0.0.1:$P
B=127.0.0.1:$P2
E=127.0.0.1:$PE
D=127.0.0.1:$down

# The lines of host $1 in $dir/out, in the order printed.
lines_of() {
	awk -v p="$1: " 'index($0, p) == 1' "$dir/out"
}

# What host $1 of dispatch.sh prints for "ruok mntr noeo", prefixed.
dispatch_lines() {
	printf '%s: imok\n%s: k1\tv1\n%s: k2\tv2\n%s: no newline\n' \
		"$1" "$1" "$1" "$1"
}

run -H "$A,$D,$B" ruok mntr noeo
if [ $rc = 2 ] && cmp -s <(lines_of "$A") <(dispatch_lines "$A") &&
	cmp -s <(lines_of "$B") <(dispatch_lines "$B") &&
	[ "$(wc -l <"$dir/out")" = 8 ] &&
	[ "$(grep -c "^jm4lw: $D: Connection refused$" "$dir/err")" = 3 ] &&
	[ "$(wc -l <"$dir/err")" = 3 ]; then
	pass "3 hosts, 1 down: prefixed lines of 2, stderr for 1, exit 2"
else fail "3 hosts, 1 down"; fi

run -H "$A,$B" ruok mntr noeo
if [ $rc = 0 ] && [ ! -s "$dir/err" ] &&
	cmp -s <(lines_of "$A") <(dispatch_lines "$A") &&
	cmp -s <(lines_of "$B") <(dispatch_lines "$B") &&
	[ "$(wc -l <"$dir/out")" = 8 ] && [ "$(tail -c1 "$dir/out")" = "" ]; then
	pass "multi-line and newline-less replies prefixed line by line"
else fail "prefixed lines"; fi

run -H "$A,$E,$B" ruok
if [ $rc = 1 ] && [ ! -s "$dir/err" ] &&
	cmp -s <(sort "$dir/out") <(printf '%s: imok\n%s: imok\n%s: error: heap profiling is not enabled in this process\n' \
		"$A" "$B" "$E" | sort); then
	pass "all up, one answers an error line: exit 1"
else fail "one error line"; fi

run -t 0.5 -H "$A,$E" slow
if [ $rc = 2 ] && cmp -s "$dir/out" <(printf '%s: error: heap profiling is not enabled in this process\n' "$E") &&
	grep -qx "jm4lw: $A: slow: timed out after 0.5 s" "$dir/err"; then
	pass "timeout on one host, error on another: worst status 2"
else fail "timeout and error"; fi

# One worker takes the hosts in the order given, so the output is exact.
run -P 1 -H "$B" -H "$A" ruok mntr
if [ $rc = 0 ] && cmp -s "$dir/out" <(printf '%s: imok\n%s: k1\tv1\n%s: k2\tv2\n%s: imok\n%s: k1\tv1\n%s: k2\tv2\n' \
	"$B" "$B" "$B" "$A" "$A" "$A"); then
	pass "-P 1, -H twice: hosts one after the other, in order"
else fail "-P 1"; fi

for words in ruok noeo mntr 'ruok mntr noeo ruok' 'ruok badw'; do
	# shellcheck disable=SC2086 # the words are meant to split
	run -p "$P" $words
	cp "$dir/out" "$dir/out.plain"
	want=$rc
	# shellcheck disable=SC2086
	run -H "$A" $words
	if [ $rc = "$want" ] && cmp -s "$dir/out" "$dir/out.plain"; then
		pass "one -H host: same bytes as without -H ($words)"
	else fail "one -H host ($words)"; fi
done

run -H 127.0.0.1,localhost -p "$P" ruok
if [ $rc = 0 ] && cmp -s <(sort "$dir/out") \
	<(printf '%s: imok\nlocalhost:%s: imok\n' "$A" "$P" | sort); then
	pass "bare hosts take -p's port, shown as written"
else fail "bare hosts"; fi

printf '# the fleet\n\n   \n  %s   # primary\n\t%s\r\n# the end\n' "$A" "$B" \
	>"$dir/fleet.txt"
run -P 1 -H "@$dir/fleet.txt" ruok
if [ $rc = 0 ] && cmp -s "$dir/out" <(printf '%s: imok\n%s: imok\n' "$A" "$B"); then
	pass "-H @file: comments, blank lines, spaces, CRLF"
else fail "-H @file"; fi

run -P 1 -H @- ruok <"$dir/fleet.txt"
if [ $rc = 0 ] && cmp -s "$dir/out" <(printf '%s: imok\n%s: imok\n' "$A" "$B"); then
	pass "-H @- reads hosts from stdin"
else fail "-H @-"; fi

printf '%s\n# fine so far\n\n127.0.0.1:99999\n%s\n' "$A" "$B" >"$dir/bad.txt"
before=$(wc -l <"$dir/connections")
run -H "@$dir/bad.txt" ruok
after=$(wc -l <"$dir/connections")
if [ $rc = 2 ] && [ ! -s "$dir/out" ] && [ "$before" = "$after" ] &&
	grep -qF "jm4lw: $dir/bad.txt:4: bad host entry \"127.0.0.1:99999\"" "$dir/err"; then
	pass "bad entry in @file: exit 2 naming file:line, no connection"
else fail "bad entry in @file"; fi

for arg in "@$dir/missing.txt" @/dev/null; do
	run -H "$arg" ruok
	if [ $rc = 2 ] && [ ! -s "$dir/out" ] && [ -s "$dir/err" ]; then
		pass "-H $arg: exit 2"
	else fail "-H $arg"; fi
done

before=$(wc -l <"$dir/connections")
for e in 127.0.0.1: 127.0.0.1:0 127.0.0.1:65536 ":$P" '[::1' "[::1]$P" \
	'[]:1' '[db1]:1' "$A,,$B" "$A," '' "$A:$P" 'db1:x:1' 'a b'; do
	run -H "$A,$e" ruok
	if [ $rc = 2 ] && [ ! -s "$dir/out" ] &&
		grep -q 'bad host entry' "$dir/err" && grep -q '^usage:' "$dir/err"; then
		pass "-H entry \"$e\" refused"
	else fail "-H entry \"$e\""; fi
done
for p in 0 257 x 1x; do
	run -P "$p" -H "$A,$B" ruok
	if [ $rc = 2 ] && [ ! -s "$dir/out" ] && grep -q 'bad -P' "$dir/err"; then
		pass "-P $p refused"
	else fail "-P $p"; fi
done
run -h 127.0.0.1 -H "$A" ruok
if [ $rc = 2 ] && [ ! -s "$dir/out" ] && grep -q -- '-h and -H' "$dir/err"; then
	pass "-h with -H refused"
else fail "-h with -H"; fi
run -p 0 -H "$A,127.0.0.1" ruok
if [ $rc = 2 ] && [ ! -s "$dir/out" ] && grep -q 'bad port' "$dir/err"; then
	pass "-H with a bad -p refused"
else fail "-H with -p 0"; fi
for _ in $(seq 4097); do echo "$A"; done >"$dir/many.txt"
run -H "@$dir/many.txt" ruok
if [ $rc = 2 ] && [ ! -s "$dir/out" ] &&
	grep -q "many.txt:4097: too many hosts (at most 4096)" "$dir/err"; then
	pass "4097 hosts refused"
else fail "4097 hosts"; fi
after=$(wc -l <"$dir/connections")
if [ "$before" = "$after" ]; then
	pass "bad -H usage made no connection"
else rc=-; fail "bad -H usage made $((after - before)) connections"; fi

if [ -n "${P6:-}" ]; then
	run -H "[::1]:$P6,$A" ruok mntr
	if [ $rc = 0 ] &&
		cmp -s <(lines_of "[::1]:$P6") <(printf '[::1]:%s: imok\n[::1]:%s: k1\tv1\n[::1]:%s: k2\tv2\n' "$P6" "$P6" "$P6") &&
		[ "$(lines_of "$A" | wc -l)" = 3 ]; then
		pass "-H [::1]:PORT"
	else fail "-H [::1]:PORT"; fi
	run -p "$P6" -H "::1,[::1],$A" ruok
	if [ $rc = 0 ] && [ "$(grep -cx "\[::1\]:$P6: imok" "$dir/out")" = 2 ]; then
		pass "-H ::1 and [::1] with -p: shown as [::1]:PORT"
	else fail "-H bare ::1"; fi
else
	echo "skip - no ::1 on this machine, -H [::1]:PORT not tested"
fi

# Concurrency without trusting the clock's precision: 8 servers that take 1 s
# each. 8 at once finish far below the 8 s one after another would take (the
# bound is generous); 4 at once cannot finish in less than 2 rounds, 2 s.
cat >"$dir/delay.sh" <<'EOF'
head -c4 >/dev/null
sleep 1
printf imok
EOF
slow_hosts=
for _ in 1 2 3 4 5 6 7 8; do
	start_server 4 delay.sh
	slow_hosts=$slow_hosts${slow_hosts:+,}127.0.0.1:$port
done
for par in 8 4; do
	start=$(date +%s%N)
	run -P "$par" -H "$slow_hosts" ruok
	ms=$((($(date +%s%N) - start) / 1000000))
	if [ $rc = 0 ] && [ ! -s "$dir/err" ] &&
		[ "$(grep -c ': imok$' "$dir/out")" = 8 ] &&
		if [ $par = 8 ]; then [ $ms -lt 6000 ]; else [ $ms -ge 2000 ]; fi; then
		pass "8 hosts of 1 s each with -P $par: ${ms} ms"
	else fail "8 slow hosts with -P $par (${ms} ms)"; fi
done

echo "$passed passed, $failed failed"
[ $failed = 0 ]

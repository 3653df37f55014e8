#!/bin/bash
# Tests of the jm4lw client against small stand-in servers (socat on
# loopback), so the client's own behaviour is pinned down without jm4lwd:
# exact bytes, separators, nc's shape, exit statuses, timeouts, IPv6, caps.
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

echo "$passed passed, $failed failed"
[ $failed = 0 ]

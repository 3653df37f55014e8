#!/bin/bash
# Tests of the jm4lw client against small stand-in servers (standin.py on
# loopback), so the client's own behaviour is pinned down without jm4lwd:
# exact bytes, separators, nc's shape, exit statuses, timeouts, IPv6, caps,
# and the fan-out to many hosts with -H.
#
#	bash client.sh path/to/jm4lw
JM4LW=${1:?usage: bash client.sh path/to/jm4lw}
case $JM4LW in /*) ;; *) JM4LW=$PWD/$JM4LW ;; esac
. "$(dirname "$0")/../lib.sh"
[ -x "$JM4LW" ] || die "$JM4LW is not executable"
need python3 timeout cmp

# fail_run DESC: record a failure with what the client printed (run's $rc,
# $T/out and $T/err), so the log explains it.
fail_run() {
	fail "$1" "exit status: $rc" \
		"stdout: $(head -c 300 "$T/out" | od -An -c | head -5)" \
		"stderr: $(head -c 300 "$T/err")"
}

# Run the client; stdout, stderr and status land in $T/out, $T/err, $rc.
# The outer timeout only keeps a broken client from hanging the suite.
run() {
	timeout 60 "$JM4LW" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}

# start_server 4|6 KIND: a stand-in server (standin.py KIND: dispatch,
# error or delay) on a loopback port of IPv4 or IPv6 the kernel picks; the
# port ends up in $port. One process serves every connection (a thread
# each), counting them in $T/connections; dispatch's bigr reply is $T/big.
start_server() {
	local fam=$1 kind=$2 pid log six=() _
	log=$(mktemp "$T/standin.XXXX")
	[ "$fam" = 6 ] && six=(-6)
	python3 "$TESTS_DIR/integration/standin.py" "$kind" "${six[@]}" \
		--count "$T/connections" --big "$T/big" >"$log" 2>&1 &
	pid=$!
	track "$pid"
	for _ in $(seq 200); do
		port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$log")
		[ -n "$port" ] && return 0
		_alive "$pid" || break
		sleep 0.05
	done
	fail "standin.py $kind listens on a loopback port" "$(cat "$log")"
	finish
}

# The stand-in server's replies (standin.py dispatch), shaped like
# jm4lwd's: ruok imok; mntr two key/value lines; noeo a reply without a
# newline; badw an unknown-word line; jmfp and othr the whitelist line;
# slow nothing for 30 s; bigr $T/big; huge 70,000,000 bytes; others
# nothing.
: >"$T/connections"
# 2 MiB with every byte value, NUL included.
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 8192)' \
	>"$T/big"

start_server 4 dispatch
P=$port

# --- usage -----------------------------------------------------------------

run --help
if [ $rc = 0 ] && grep -q '^usage: jm4lw' "$T/out" && [ ! -s "$T/err" ]; then
	pass "--help prints usage to stdout, exit 0"
else fail_run "--help"; fi

run -?
if [ $rc = 0 ] && grep -q '^usage: jm4lw' "$T/out"; then
	pass "-? prints usage to stdout, exit 0"
else fail_run "-?"; fi

run -V
if [ $rc = 0 ] && grep -Eq '^jm4lw [0-9]+\.[0-9]+\.[0-9]+$' "$T/out"; then
	pass "-V prints the version"
else fail_run "-V"; fi

run
if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q '^usage:' "$T/err"; then
	pass "no word: usage on stderr, exit 2"
else fail_run "no word"; fi

run -x ruok
if [ $rc = 2 ] && grep -q 'unknown option' "$T/err" &&
	grep -q '^usage:' "$T/err"; then
	pass "unknown option: exit 2"
else fail_run "unknown option"; fi

for t in 0 -1 abc 1e9 nan; do
	run -t "$t" -p "$P" ruok
	if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q 'timeout' "$T/err"; then
		pass "-t $t refused"
	else fail_run "-t $t"; fi
done

run -p 70000 ruok
if [ $rc = 2 ] && grep -q 'bad port' "$T/err"; then
	pass "port out of range refused"
else fail_run "-p 70000"; fi

# A valid word first: had the client connected before checking every word,
# imok would be on stdout.
before=$(wc -l <"$T/connections")
for w in abc abcde ''; do
	run -p "$P" ruok "$w"
	if [ $rc = 2 ] && [ ! -s "$T/out" ] &&
		grep -q 'exactly 4 bytes' "$T/err"; then
		pass "word \"$w\": exit 2 before connecting"
	else fail_run "word \"$w\""; fi
done
after=$(wc -l <"$T/connections")
if [ "$before" = "$after" ]; then
	pass "bad words made no connection"
else rc=-; fail_run "bad words made $((after - before)) connections"; fi

# --- replies ---------------------------------------------------------------

run -p "$P" ruok
if [ $rc = 0 ] && cmp -s "$T/out" <(printf imok) && [ ! -s "$T/err" ]; then
	pass "single word: exactly imok, no newline"
else fail_run "single word"; fi

run -h 127.0.0.1 -p "$P" -t 0.5 noeo
if [ $rc = 0 ] && cmp -s "$T/out" <(printf 'no newline'); then
	pass "single reply without newline passed through as is"
else fail_run "single noeo"; fi

run -p "$P" ruok mntr noeo ruok
if [ $rc = 0 ] &&
	cmp -s "$T/out" <(printf 'imok\nk1\tv1\nk2\tv2\nno newline\nimok\n'); then
	pass "several words: replies kept apart"
else fail_run "several words"; fi

run -p "$P" badw
if [ $rc = 1 ] && grep -q '^error: unknown word' "$T/out" &&
	[ ! -s "$T/err" ]; then
	pass "error reply: printed, exit 1"
else fail_run "error reply"; fi

run -p "$P" jmfp
if [ $rc = 1 ] &&
	grep -qx 'jmfp is not executed because it is not in the whitelist.' \
		"$T/out"; then
	pass "whitelist reply: printed, exit 1"
else fail_run "whitelist reply"; fi

run -p "$P" othr
if [ $rc = 0 ]; then
	pass "another word's whitelist text is an ordinary reply"
else fail_run "othr"; fi

run -p "$P" zzzz
if [ $rc = 1 ] && [ ! -s "$T/out" ] &&
	grep -q "127.0.0.1:$P: zzzz: empty reply" "$T/err"; then
	pass "empty reply: stderr note, exit 1"
else fail_run "empty reply"; fi

run -p "$P" ruok badw ruok
if [ $rc = 1 ] && [ "$(grep -c '^imok$' "$T/out")" = 2 ] &&
	grep -q '^error: ' "$T/out"; then
	pass "error in the middle: keeps going, exit 1"
else fail_run "error in the middle"; fi

run -p "$P" bigr
if [ $rc = 0 ] && cmp -s "$T/out" "$T/big"; then
	pass "2 MiB reply arrives whole ($(sha256sum <"$T/out" | cut -c1-16))"
else fail_run "2 MiB reply"; fi

run -p "$P" huge
if [ $rc = 2 ] && [ ! -s "$T/out" ] &&
	grep -q "127.0.0.1:$P: huge: reply larger than 64 MiB" "$T/err"; then
	pass "reply over 64 MiB: exit 2, nothing printed"
else fail_run "reply over 64 MiB"; fi

# --- nc's shape --------------------------------------------------------------

run 127.0.0.1 "$P" < <(printf 'ruok\r\n\r\n  mntr \r\n\n\truok\r\n')
if [ $rc = 0 ] && cmp -s "$T/out" <(printf 'imok\nk1\tv1\nk2\tv2\nimok\n'); then
	pass "host port: words from stdin, CRLF, blanks, spaces"
else fail_run "nc shape"; fi

run -t 3 localhost "$P" < <(echo ruok)
if [ $rc = 0 ] && cmp -s "$T/out" <(printf imok); then
	pass "echo ruok | jm4lw -t 3 localhost PORT: exactly imok"
else fail_run "nc shape, one word"; fi

run 127.0.0.1 "$P" < <(printf 'ruok\nlonger\n')
if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q 'stdin:2:' "$T/err"; then
	pass "bad word on stdin: exit 2 before connecting"
else fail_run "bad word on stdin"; fi

run 127.0.0.1 "$P" </dev/null
if [ $rc = 2 ] && grep -q 'no word' "$T/err"; then
	pass "nothing on stdin: exit 2"
else fail_run "empty stdin"; fi

run -p "$P" 127.0.0.1 "$P" </dev/null
if [ $rc = 2 ] && grep -q 'given twice' "$T/err"; then
	pass "host port with -p: exit 2"
else fail_run "host port with -p"; fi

# --- names and addresses -----------------------------------------------------

run -h localhost -p "$P" ruok
if [ $rc = 0 ] && cmp -s "$T/out" <(printf imok); then
	pass "-h localhost"
else fail_run "-h localhost"; fi

run -h no-such-host.invalid -p "$P" ruok
if [ $rc = 2 ] && [ ! -s "$T/out" ] &&
	grep -q '^jm4lw: no-such-host.invalid:' "$T/err"; then
	pass "unresolvable host: exit 2 with message"
else fail_run "unresolvable host"; fi

if have_ipv6; then
	start_server 6 dispatch
	P6=$port
	for h in ::1 '[::1]'; do
		run -h "$h" -p "$P6" ruok mntr
		if [ $rc = 0 ] &&
			cmp -s "$T/out" <(printf 'imok\nk1\tv1\nk2\tv2\n'); then
			pass "-h $h"
		else fail_run "-h $h"; fi
		run "$h" "$P6" < <(echo ruok)
		if [ $rc = 0 ] && cmp -s "$T/out" <(printf imok); then
			pass "$h PORT from stdin"
		else fail_run "$h PORT"; fi
	done
else
	skip "no ::1 on this machine, IPv6 not tested"
fi

# --- failures ----------------------------------------------------------------

refused=$(free_port 127.0.0.1)
run -p "$refused" ruok mntr
if [ $rc = 2 ] && [ ! -s "$T/out" ] &&
	[ "$(grep -c "^jm4lw: 127.0.0.1:$refused: Connection refused$" \
		"$T/err")" = 2 ]; then
	pass "connection refused: a message per word, exit 2"
else fail_run "connection refused"; fi

# Each error line leaves in one write(2), so the lines of hosts reported
# at once (threads, --merge's children, other programs on the same
# stderr) never interleave inside a line: every write to fd 2 is a
# whole "jm4lw: ...\n" line (stdio's unbuffered stderr wrote the prefix,
# the text and the newline apart).
if command -v strace >/dev/null; then
	# LeakSanitizer cannot run under ptrace: off for this one run.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		timeout 60 strace -f -qq -e trace=write -e signal=none -s 512 \
		-o "$T/strace" "$JM4LW" -P 4 \
		-H "127.0.0.1:$refused,127.0.0.1:$refused,127.0.0.1:$refused" \
		ruok mntr >/dev/null 2>&1
	# Ours only: a sanitizer's runtime may write to fd 2 of its own.
	writes=$(grep 'write(2, ' "$T/strace" |
		grep -c -e 'jm4lw: ' -e 'Connection refused' -e 'write(2, "\\n", 1)')
	whole=$(grep -c 'write(2, "jm4lw: [^"]*\\n", [0-9]*) = ' "$T/strace")
	if [ "$writes" = 6 ] && [ "$whole" = 6 ]; then
		pass "each error line in one write (6 lines, 6 writes)"
	else
		fail "each error line in one write" "$writes writes, $whole whole lines" \
			"$(grep 'write(2, ' "$T/strace" | head -12)"
	fi
else
	skip "strace is not installed: the one-write check"
fi

# The bound is generous on purpose: only a client that ignores -t fails it.
start=$(date +%s%N)
run -p "$P" -t 0.5 slow
ms=$((($(date +%s%N) - start) / 1000000))
if [ $rc = 2 ] && [ ! -s "$T/out" ] &&
	grep -q "127.0.0.1:$P: slow: timed out after 0.5 s" "$T/err" &&
	[ $ms -lt 10000 ]; then
	pass "silent server with -t 0.5: exit 2 (${ms} ms)"
else fail_run "silent server (${ms} ms)"; fi

run -p "$P" -t 0.5 ruok slow badw ruok
if [ $rc = 2 ] && cmp -s "$T/out" <(printf 'imok\nerror: unknown word "badw"; known words: ruok mntr\nimok\n') &&
	grep -q 'slow: timed out' "$T/err"; then
	pass "timeout in the middle: keeps going, worst status 2"
else fail_run "timeout in the middle"; fi

# --- many hosts (-H) ------------------------------------------------------

# A second server like the first, one that answers every word with an error
# line, and a port nobody listens on.
start_server 4 dispatch
P2=$port
start_server 4 error
PE=$port
down=$(free_port 127.0.0.1)
A=127.0.0.1:$P
B=127.0.0.1:$P2
E=127.0.0.1:$PE
D=127.0.0.1:$down

# The lines of host $1 in $T/out, in the order printed.
lines_of() {
	awk -v p="$1: " 'index($0, p) == 1' "$T/out"
}

# What host $1 of dispatch.sh prints for "ruok mntr noeo", prefixed.
dispatch_lines() {
	printf '%s: imok\n%s: k1\tv1\n%s: k2\tv2\n%s: no newline\n' \
		"$1" "$1" "$1" "$1"
}

run -H "$A,$D,$B" ruok mntr noeo
if [ $rc = 2 ] && cmp -s <(lines_of "$A") <(dispatch_lines "$A") &&
	cmp -s <(lines_of "$B") <(dispatch_lines "$B") &&
	[ "$(wc -l <"$T/out")" = 8 ] &&
	[ "$(grep -c "^jm4lw: $D: Connection refused$" "$T/err")" = 3 ] &&
	[ "$(wc -l <"$T/err")" = 3 ]; then
	pass "3 hosts, 1 down: prefixed lines of 2, stderr for 1, exit 2"
else fail_run "3 hosts, 1 down"; fi

run -H "$A,$B" ruok mntr noeo
if [ $rc = 0 ] && [ ! -s "$T/err" ] &&
	cmp -s <(lines_of "$A") <(dispatch_lines "$A") &&
	cmp -s <(lines_of "$B") <(dispatch_lines "$B") &&
	[ "$(wc -l <"$T/out")" = 8 ] && [ "$(tail -c1 "$T/out")" = "" ]; then
	pass "multi-line and newline-less replies prefixed line by line"
else fail_run "prefixed lines"; fi

run -H "$A,$E,$B" ruok
if [ $rc = 1 ] && [ ! -s "$T/err" ] &&
	cmp -s <(sort "$T/out") <(printf '%s: imok\n%s: imok\n%s: error: heap profiling is not enabled in this process\n' \
		"$A" "$B" "$E" | sort); then
	pass "all up, one answers an error line: exit 1"
else fail_run "one error line"; fi

run -t 0.5 -H "$A,$E" slow
if [ $rc = 2 ] && cmp -s "$T/out" <(printf '%s: error: heap profiling is not enabled in this process\n' "$E") &&
	grep -qx "jm4lw: $A: slow: timed out after 0.5 s" "$T/err"; then
	pass "timeout on one host, error on another: worst status 2"
else fail_run "timeout and error"; fi

# One worker takes the hosts in the order given, so the output is exact.
run -P 1 -H "$B" -H "$A" ruok mntr
if [ $rc = 0 ] && cmp -s "$T/out" <(printf '%s: imok\n%s: k1\tv1\n%s: k2\tv2\n%s: imok\n%s: k1\tv1\n%s: k2\tv2\n' \
	"$B" "$B" "$B" "$A" "$A" "$A"); then
	pass "-P 1, -H twice: hosts one after the other, in order"
else fail_run "-P 1"; fi

for words in ruok noeo mntr 'ruok mntr noeo ruok' 'ruok badw'; do
	# shellcheck disable=SC2086 # the words are meant to split
	run -p "$P" $words
	cp "$T/out" "$T/out.plain"
	want=$rc
	# shellcheck disable=SC2086
	run -H "$A" $words
	if [ $rc = "$want" ] && cmp -s "$T/out" "$T/out.plain"; then
		pass "one -H host: same bytes as without -H ($words)"
	else fail_run "one -H host ($words)"; fi
done

run -H 127.0.0.1,localhost -p "$P" ruok
if [ $rc = 0 ] && cmp -s <(sort "$T/out") \
	<(printf '%s: imok\nlocalhost:%s: imok\n' "$A" "$P" | sort); then
	pass "bare hosts take -p's port, shown as written"
else fail_run "bare hosts"; fi

printf '# the fleet\n\n   \n  %s   # primary\n\t%s\r\n# the end\n' "$A" "$B" \
	>"$T/fleet.txt"
run -P 1 -H "@$T/fleet.txt" ruok
if [ $rc = 0 ] && cmp -s "$T/out" <(printf '%s: imok\n%s: imok\n' "$A" "$B"); then
	pass "-H @file: comments, blank lines, spaces, CRLF"
else fail_run "-H @file"; fi

run -P 1 -H @- ruok <"$T/fleet.txt"
if [ $rc = 0 ] && cmp -s "$T/out" <(printf '%s: imok\n%s: imok\n' "$A" "$B"); then
	pass "-H @- reads hosts from stdin"
else fail_run "-H @-"; fi

printf '%s\n# fine so far\n\n127.0.0.1:99999\n%s\n' "$A" "$B" >"$T/bad.txt"
before=$(wc -l <"$T/connections")
run -H "@$T/bad.txt" ruok
after=$(wc -l <"$T/connections")
if [ $rc = 2 ] && [ ! -s "$T/out" ] && [ "$before" = "$after" ] &&
	grep -qF "jm4lw: $T/bad.txt:4: bad host entry \"127.0.0.1:99999\"" "$T/err"; then
	pass "bad entry in @file: exit 2 naming file:line, no connection"
else fail_run "bad entry in @file"; fi

for arg in "@$T/missing.txt" @/dev/null; do
	run -H "$arg" ruok
	if [ $rc = 2 ] && [ ! -s "$T/out" ] && [ -s "$T/err" ]; then
		pass "-H $arg: exit 2"
	else fail_run "-H $arg"; fi
done

before=$(wc -l <"$T/connections")
for e in 127.0.0.1: 127.0.0.1:0 127.0.0.1:65536 ":$P" '[::1' "[::1]$P" \
	'[]:1' '[db1]:1' "$A,,$B" "$A," '' "$A:$P" 'db1:x:1' 'a b'; do
	run -H "$A,$e" ruok
	if [ $rc = 2 ] && [ ! -s "$T/out" ] &&
		grep -q 'bad host entry' "$T/err" && grep -q '^usage:' "$T/err"; then
		pass "-H entry \"$e\" refused"
	else fail_run "-H entry \"$e\""; fi
done
for p in 0 257 x 1x; do
	run -P "$p" -H "$A,$B" ruok
	if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q 'bad -P' "$T/err"; then
		pass "-P $p refused"
	else fail_run "-P $p"; fi
done
run -h 127.0.0.1 -H "$A" ruok
if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q -- '-h and -H' "$T/err"; then
	pass "-h with -H refused"
else fail_run "-h with -H"; fi
run -p 0 -H "$A,127.0.0.1" ruok
if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q 'bad port' "$T/err"; then
	pass "-H with a bad -p refused"
else fail_run "-H with -p 0"; fi
for _ in $(seq 4097); do echo "$A"; done >"$T/many.txt"
run -H "@$T/many.txt" ruok
if [ $rc = 2 ] && [ ! -s "$T/out" ] &&
	grep -q "many.txt:4097: too many hosts (at most 4096)" "$T/err"; then
	pass "4097 hosts refused"
else fail_run "4097 hosts"; fi
after=$(wc -l <"$T/connections")
if [ "$before" = "$after" ]; then
	pass "bad -H usage made no connection"
else rc=-; fail_run "bad -H usage made $((after - before)) connections"; fi

if [ -n "${P6:-}" ]; then
	run -H "[::1]:$P6,$A" ruok mntr
	if [ $rc = 0 ] &&
		cmp -s <(lines_of "[::1]:$P6") <(printf '[::1]:%s: imok\n[::1]:%s: k1\tv1\n[::1]:%s: k2\tv2\n' "$P6" "$P6" "$P6") &&
		[ "$(lines_of "$A" | wc -l)" = 3 ]; then
		pass "-H [::1]:PORT"
	else fail_run "-H [::1]:PORT"; fi
	run -p "$P6" -H "::1,[::1],$A" ruok
	if [ $rc = 0 ] && [ "$(grep -cx "\[::1\]:$P6: imok" "$T/out")" = 2 ]; then
		pass "-H ::1 and [::1] with -p: shown as [::1]:PORT"
	else fail_run "-H bare ::1"; fi
else
	echo "skip - no ::1 on this machine, -H [::1]:PORT not tested"
fi

# Concurrency without trusting the clock's precision: 8 servers that take 1 s
# each. 8 at once finish far below the 8 s one after another would take (the
# bound is generous); 4 at once cannot finish in less than 2 rounds, 2 s.
slow_hosts=
for _ in 1 2 3 4 5 6 7 8; do
	start_server 4 delay
	slow_hosts=$slow_hosts${slow_hosts:+,}127.0.0.1:$port
done
for par in 8 4; do
	start=$(date +%s%N)
	run -P "$par" -H "$slow_hosts" ruok
	ms=$((($(date +%s%N) - start) / 1000000))
	if [ $rc = 0 ] && [ ! -s "$T/err" ] &&
		[ "$(grep -c ': imok$' "$T/out")" = 8 ] &&
		if [ $par = 8 ]; then [ $ms -lt 6000 ]; else [ $ms -ge 2000 ]; fi; then
		pass "8 hosts of 1 s each with -P $par: ${ms} ms"
	else fail_run "8 slow hosts with -P $par (${ms} ms)"; fi
done

finish

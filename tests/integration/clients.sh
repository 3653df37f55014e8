#!/bin/bash
# One real client against one real jm4lwd (profiling on, real jemalloc):
# ruok, mntr, jmst, jmep, jmfp (fed to the real jeprof), jmdp.
#
#	bash clients.sh CLIENT
#	bash clients.sh jm4lw path/to/jm4lw
#
# CLIENT is one of nc.openbsd nc.traditional ncat busybox socat devtcp
# zookeeper jm4lw (our client: its path as the second argument, else
# $JM4LW_CLIENT, else build/jm4lw). A client that is not installed is a failure, not a skip:
# CI installs them all (scripts/deps.sh test).
#
# How each one is invoked is what an operator would type; see ask_client.
. "$(dirname "$0")/../lib.sh"

CLIENT=${1:?usage: bash clients.sh CLIENT [path/to/jm4lw]}
[ $# -ge 2 ] && JM4LW_CLIENT=$2
ZK_CP='/usr/share/java/*'

case $CLIENT in
nc.openbsd | nc.traditional | ncat | socat) need "$CLIENT" ;;
busybox) need busybox ;;
devtcp) need bash ;;
zookeeper)
	need java
	[ -r /usr/share/java/zookeeper.jar ] ||
		die "zookeeper.jar not in /usr/share/java (Debian package zookeeper)"
	;;
jm4lw)
	[ -x "$JM4LW_CLIENT" ] || die "client $JM4LW_CLIENT is not executable"
	;;
*) die "unknown client \"$CLIENT\"" ;;
esac
need jeprof timeout
[ -x "$JM4LWD" ] || die "$JM4LWD is not executable"

# ask_client WORD: send WORD with $CLIENT; reply in $out, stderr in $err,
# exit status in $rc. The timeout only keeps a hung client from hanging
# the suite; a client that needed it fails.
#
# Every nc here exits on its own once jm4lwd closes: after stdin's EOF
# nc.openbsd and nc.traditional (Debian: -q defaults to "wait forever")
# keep reading until the server's FIN, ncat half-closes and waits for it,
# busybox nc waits for it too. So the plain `echo WORD | nc HOST PORT` of
# every runbook works, and no -q/-w/-N is needed.
#
# socat is the exception: once stdin hits EOF it gives the other direction
# only 0.5 s (-t) before closing, which cuts off any reply that takes longer
# (a jmfp of a big heap). -t 30 is what an operator needs to type.
#
# bash /dev/tcp cannot half-close; it does not need to, jm4lwd answers after
# 4 bytes and closes, so `cat` sees EOF.
#
# ZooKeeper's FourLetterWordMain sends the word, half-closes, reads the
# reply with readLine() adding "\n" after every line, then println()s it:
# "imok" comes out as "imok\n\n" and a text reply gains one more "\n". It
# gives up after 5 s without data (SO_TIMEOUT 5000) and exits 1.
#
# jm4lw is ours: the -p form, exit 0 for an ordinary reply.
ask_client() {
	local word=$1
	out=$T/$CLIENT.$word.out
	err=$T/$CLIENT.$word.err
	case $CLIENT in
	nc.openbsd) echo "$word" | timeout 60 nc.openbsd 127.0.0.1 "$PORT" ;;
	nc.traditional) echo "$word" | timeout 60 nc.traditional 127.0.0.1 "$PORT" ;;
	ncat) echo "$word" | timeout 60 ncat 127.0.0.1 "$PORT" ;;
	busybox) echo "$word" | timeout 60 busybox nc 127.0.0.1 "$PORT" ;;
	socat) echo "$word" | timeout 60 socat -t 30 - "TCP:127.0.0.1:$PORT" ;;
	devtcp)
		timeout 60 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" &&
			printf "%s\n" "$2" >&3 && cat <&3' devtcp "$PORT" "$word"
		;;
	zookeeper)
		timeout 60 java -cp "$ZK_CP" \
			org.apache.zookeeper.client.FourLetterWordMain \
			127.0.0.1 "$PORT" "$word"
		;;
	jm4lw) timeout 60 "$JM4LW_CLIENT" -h 127.0.0.1 -p "$PORT" "$word" ;;
	esac >"$out" 2>"$err"
	rc=$?
}

# check_exit DESC: the client exited 0, and said nothing on stderr (java's
# SLF4J start-up chatter excepted).
check_exit() {
	if [ "$rc" != 0 ]; then
		fail "$1: $CLIENT exits 0" "exit status $rc" \
			"stderr: $(head -c 400 "$err")" "stdout:" "$(show "$out")"
		return 1
	fi
	if [ "$CLIENT" != zookeeper ] && [ -s "$err" ]; then
		fail "$1: $CLIENT quiet on stderr" "$(head -c 400 "$err")"
		return 1
	fi
	pass "$1: $CLIENT exits 0"
}

# The reply as jm4lwd sent it, with the extra "\n" FourLetterWordMain's
# println() adds taken off again (only for text replies ending in "\n").
reply_text() {
	if [ "$CLIENT" = zookeeper ]; then
		head -c -1 "$out"
	else
		cat "$out"
	fi
}

# ruok: the byte-exact liveness reply health checks compare.
case_ruok() {
	ask_client ruok
	check_exit ruok
	if [ "$CLIENT" = zookeeper ]; then
		# readLine() + "\n", then println(): see ask_client.
		assert_bytes "ruok via zookeeper: imok as FourLetterWordMain prints it" \
			"$out" 'imok\n\n'
	else
		assert_bytes "ruok via $CLIENT: exactly imok, no newline" "$out" 'imok'
	fi
}

# mntr: key<TAB>value lines with the allocator's figures and our version.
case_mntr() {
	local version
	version=$("$JM4LWD" -h | sed -n 's/^jm4lwd \([0-9.]*\),.*/\1/p')
	ask_client mntr
	check_exit mntr
	reply_text >"$out.text"
	assert_grep "mntr via $CLIENT: jemalloc_allocated with a number" \
		$'^jemalloc_allocated\t[0-9]+$' "$out.text"
	assert_grep "mntr via $CLIENT: jm4lw_version $version (as jm4lwd -h)" \
		"^jm4lw_version	${version//./\\.}\$" "$out.text"
	assert_grep "mntr via $CLIENT: prof on, sampling off" \
		$'^jemalloc_opt_prof\ttrue$' "$out.text"
	assert_no_grep "mntr via $CLIENT: every line is key<TAB>value" \
		$'^([^\t]*|[^\t]*\t.*\t.*)$' "$out.text"
}

# jmst: jemalloc's statistics arrive whole, first marker to last.
case_jmst() {
	local begin='___ Begin jemalloc statistics ___'
	local end='--- End jemalloc statistics ---'
	ask_client jmst
	check_exit jmst
	reply_text >"$out.text"
	assert_eq "jmst via $CLIENT: starts with jemalloc's begin marker" \
		"$begin" "$(head -n 1 "$out.text")"
	# The very last bytes, so a reply cut short cannot pass.
	tail -c $((${#end} + 1)) "$out.text" >"$out.last"
	assert_bytes "jmst via $CLIENT: ends with the end marker and \\n" \
		"$out.last" "$end\\n"
}

# jmep: sampling on, and the reply says what it was before.
case_jmep() {
	ask_client jmep
	check_exit jmep
	reply_text >"$out.text"
	assert_bytes "jmep via $CLIENT: ok, active, was inactive" "$out.text" \
		'ok: profiling active (prof.active=true, was false); profiles hold only allocations made from now on\n'
}

# jmfp: the reply is the path of a whole profile that the real jeprof reads.
case_jmfp() {
	local path
	ask_client jmfp
	check_exit jmfp
	path=$(reply_text | head -n 1)
	reply_text >"$out.text"
	assert_bytes "jmfp via $CLIENT: one line, the path" "$out.text" \
		"$(printf '%s' "$path" | sed 's/%/%%/g')\\n" || return
	assert_grep "jmfp via $CLIENT: <dir>/jm4lw.<pid>.<seq>.w.heap" \
		"^${DUMPS//./\\.}/jm4lw\\.$PID\\.[0-9]+\\.w\\.heap\$" "$out.text" || return
	if [ -s "$path" ]; then
		pass "jmfp via $CLIENT: $path exists"
	else
		fail "jmfp via $CLIENT: $path exists" "$(ls -la "$DUMPS")"
		return
	fi
	if [ -n "$(leftovers "$DUMPS")" ]; then
		fail "jmfp via $CLIENT: no temporary left" "$(ls -la "$DUMPS")"
	else
		pass "jmfp via $CLIENT: no temporary left"
	fi
	# jeprof needs the binary for symbols; --text prints "Total: N MB"
	# and then a line per function: main's proves jm4lwd's symbols were read
	# (the connection asking for the dump is live and sampled).
	timeout 60 jeprof --text "$JM4LWD" "$path" >"$T/jeprof.out" 2>"$T/jeprof.err"
	local jrc=$?
	if [ -n "${JM4LW_SANITIZED:-}" ] && [ $jrc = 0 ]; then
		# A sanitizer's malloc replaces jemalloc's: the profile is real
		# but holds no samples. jeprof must still read it.
		pass "jeprof --text reads the dump (sanitizer build: no samples)"
	elif [ $jrc = 0 ] && grep -Eq '^Total: [0-9.]+ [kMG]?B$' "$T/jeprof.out" &&
		grep -Eq ' main$' "$T/jeprof.out"; then
		pass "jeprof --text reads the dump: $(grep -m1 '^Total:' "$T/jeprof.out"), main symbolized"
	else
		fail "jeprof --text reads the dump" "exit status $jrc" \
			"stdout: $(head -c 400 "$T/jeprof.out")" \
			"stderr: $(head -c 400 "$T/jeprof.err")"
	fi
}

# jmdp: sampling off again.
case_jmdp() {
	ask_client jmdp
	check_exit jmdp
	reply_text >"$out.text"
	assert_bytes "jmdp via $CLIENT: ok, inactive, was active" "$out.text" \
		'ok: profiling inactive (prof.active=false, was true)\n'
}

dir=$(scratch "$CLIENT")
DUMPS=$dir/dumps
mkdir "$DUMPS"
# lg_prof_sample:0 samples every allocation once jmep is sent: jm4lwd itself
# allocates little, and a profile with no sample makes jeprof --text print
# nothing at all, which no check could tell from a broken dump.
start_daemon -C "$dir" -e "$PROF_ON,lg_prof_sample:0" -- \
	-l 127.0.0.1:0 -D "$DUMPS" || finish

case_ruok
case_mntr
case_jmst
case_jmep
case_jmfp
case_jmdp
alive "jm4lwd still answers ruok after $CLIENT's session"
stop_daemon
finish

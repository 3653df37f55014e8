#!/bin/bash
# Abuse cases 4, 5 and 6: more peers than the daemon may or can hold.
#   4  twice max_connections at once (cap 20, 40 idle peers): exactly 20
#      held, 20 closed at once in favour of newcomers and counted as
#      evicted, and one more still gets imok; with the one slot answering
#      a word (a reply stuck unread), peers over the cap that send their
#      word first (as every client does) get the too-many line, ending in
#      a FIN rather than a reset;
#   5  500 idle peers held (cap 1000) while a fresh ruok is still answered;
#   5b 1000 idle and trickling peers at the default caps: a fresh ruok is
#      answered every time, and the descriptors come back;
#   6  a daemon with `ulimit -n 64` under a storm of 200 held connects: it
#      pauses accept (logged) instead of spinning on EMFILE, and recovers
#      by itself once the storm is gone.
#
#	bash limits.sh    (JM4LWD=path/to/jm4lwd)
. "$(dirname "$0")/common.sh"

# 4. read_timeout is long, so only the cap can close anyone.
case_over_cap() {
	local d i
	d=$(scratch over_cap)
	conf_file "$d" "max_connections = 20" "read_timeout = 60"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	baseline "2x max_connections" || return
	ab_case "40 idle peers, max_connections=20: 20 held, 20 closed without a byte within 10 s, a 41st gets imok" \
		overcap "$PORT" 40 20 10
	# The driver closed the held ones: slots free again.
	for i in $(seq $((50 * SLOW))); do
		[ "$(ask ruok 2>/dev/null)" = imok ] && break
		sleep 0.2
	done
	assert_eq "2x max_connections: mntr connections_evicted is 21" 21 \
		"$(mntr_value jm4lw_connections_evicted)"
	assert_eq "2x max_connections: mntr connections_rejected is 0" 0 \
		"$(mntr_value jm4lw_connections_rejected)"
	wait_quiet "2x max_connections: no connection left open (mntr)"
	check_clean "2x max_connections"
	stop_daemon
}

# 4b. Over the cap, peers that send their word at once, as every client
# does: the too-many line must arrive and the connection end in a FIN
# (PROTOCOL.md: "never a reset that could destroy the reply in flight").
# Closing with the word unread makes the kernel send a reset instead.
case_over_cap_with_word() {
	local d i out rc bad=0
	d=$(scratch over_cap_word)
	conf_file "$d" "max_connections = 1" "read_timeout = 60" \
		"write_timeout = 60"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	baseline "over the cap, with a word" || return
	# The one slot answers a word: jmsj's ~50 KB stuck unread behind a
	# small segment size and receive window.
	hold_start "$PORT" 1 --send jmsj --rcvbuf 1024 --mss 536 --max 60 \
		--answered
	held_wait
	ab_case "max_connections=1 full, 50 peers sending ruok: each gets the too-many line and a FIN, no reset" \
		talk 127.0.0.1 "$PORT" ruok --repeat 50 \
		--expect 'error: too many connections (max_connections=1)\n'
	if [ -x "$JM4LW_CLIENT" ]; then
		for i in $(seq 20); do
			out=$(timeout 30 "$JM4LW_CLIENT" -p "$PORT" ruok 2>&1)
			rc=$?
			if [ "$rc" != 1 ] || [ "$out" != "error: too many connections (max_connections=1)" ]; then
				bad=$((bad + 1))
				echo "# jm4lw ruok: exit $rc: $out"
			fi
		done
		assert_eq "max_connections=1 full: the jm4lw client shows the too-many line and exits 1, 20 of 20" \
			0 "$bad"
	else
		skip "the jm4lw client ($JM4LW_CLIENT) is not there"
	fi
	release_held
	for i in $(seq $((50 * SLOW))); do
		[ "$(ask ruok 2>/dev/null)" = imok ] && break
		sleep 0.2
	done
	check_clean "over the cap, with a word"
	stop_daemon
}

# 5. 500 idle peers: each holds one descriptor, none blocks the others.
case_many_idle() {
	local d i
	d=$(scratch many_idle)
	conf_file "$d" "max_connections = 1000" \
		"max_connections_per_peer = 1000" "read_timeout = 30"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	baseline "500 idle" || return
	hold_start "$PORT" 500 --ensure --wait 30 --max 120
	held_wait
	assert_grep "500 idle: all 500 connected" '^connected 500 of 500 ' "$T/hold.out"
	ab_case "500 idle held: a fresh ruok is answered within 5 s" \
		talk 127.0.0.1 "$PORT" ruok --expect imok --bound 5
	# connect() returns once the kernel has the handshake; with 500 at
	# once the listen backlog (128) overflows and the rest reach accept()
	# only when the kernel retries them, a second or more later.
	for i in $(seq $((100 * SLOW))); do
		[ "$(mntr_value jm4lw_open_connections)" = 501 ] && break
		sleep 0.2
	done
	assert_eq "500 idle: mntr open_connections is 501 (with the mntr; within 20 s)" 501 \
		"$(mntr_value jm4lw_open_connections)"
	assert_eq "500 idle: one descriptor each, no more" $((FD0 + 500)) "$(fd_count)"
	release_held
	assert_grep "500 idle: none was closed while held (read_timeout 30)" \
		'^released 500: 500 still open' "$T/hold.out"
	wait_quiet "500 idle: all gone from mntr after release"
	check_clean "500 idle"
	stop_daemon
}

# 5b. The port a flood cannot close: 1000 peers that never finish a word
# (half idle, half trickling), re-opened as fast as the daemon closes
# them, at the default caps. Every ruok of a client at another address is
# answered (max_connections_per_peer keeps slots free for it). From the
# flood's own address every ruok is answered or, rarely, closed before
# its word arrived (the flood turns the address's 48 slots over in a few
# milliseconds, and a probe not yet heard from looks like the flood):
# never the too-many line, never a wrong reply, at most 5 % lost.
case_idle_flood() {
	local d
	d=$(scratch idle_flood)
	conf_file "$d" "read_timeout = 30"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	baseline "idle flood" || return
	ab_case "1000 idle and trickling peers from 127.0.0.1: ruok gets imok (at most 5 % closed before their word came)" \
		flood "$PORT" 1000 $((5 * SLOW)) --max-lost 5
	ab_case "1000 idle and trickling peers from 127.0.0.2: every ruok from 127.0.0.1 gets imok" \
		flood "$PORT" 1000 $((5 * SLOW)) --bind 127.0.0.2
	wait_quiet "idle flood: no connection left open (mntr)"
	check_clean "idle flood"
	stop_daemon
}

# 6. ulimit -n 64: the daemon runs out of descriptors long before
# max_connections (1000 here). accept() then fails with EMFILE while the
# connection stays in the backlog, so a listener that simply retried would
# spin at 100% CPU. It must pause accepting instead, and resume by itself.
case_emfile_storm() {
	local d t0 t1 i
	d=$(scratch emfile)
	# Caps above the descriptors, or eviction would keep them free.
	conf_file "$d" "read_timeout = 30" "max_connections = 1000" \
		"max_connections_per_peer = 1000"
	printf '#!/bin/sh\nulimit -n 64 || exit 111\nexec "$@"\n' >"$d/ulimit64"
	chmod +x "$d/ulimit64"
	JM4LWD_WRAP="$d/ulimit64" start_daemon -C "$d" -- -f jm4lwd.conf \
		-l 127.0.0.1:0 -D "$d" || return
	assert_grep "ulimit -n 64: the daemon runs with 64 descriptors" \
		'^Max open files +64 +64 ' "/proc/$PID/limits"
	baseline "EMFILE storm" || return
	hold_start "$PORT" 200 --wait 3 --max 90
	held_wait
	if wait_log 'accept: Too many open files; pausing accept for [0-9]+ s' 15; then
		pass "EMFILE storm: the daemon logs that it pauses accept"
	else
		fail "EMFILE storm: the daemon logs that it pauses accept (within 15 s)" \
			"$(show_tail "$DLOG")"
	fi
	# EMFILE means every slot below the limit is taken (descriptors the
	# daemon inherited above 64, if any, do not count).
	assert_eq "EMFILE storm: all 64 descriptor slots are in use" 64 \
		"$(find "/proc/$PID/fd" -mindepth 1 -maxdepth 1 -printf '%f\n' | awk '$1 < 64' | wc -l)"
	t0=$(cpu_ticks)
	sleep 3
	t1=$(cpu_ticks)
	echo "# CPU time during 3 s of storm: $((t1 - t0)) ticks of 1/$(getconf CLK_TCK) s"
	if [ $((t1 - t0)) -lt "$(getconf CLK_TCK)" ]; then
		pass "EMFILE storm: no spinning (less than 1 s CPU in 3 s: $((t1 - t0)) ticks)"
	else
		fail "EMFILE storm: no spinning (less than 1 s CPU in 3 s)" \
			"$((t1 - t0)) ticks" "$(show_tail "$DLOG")"
	fi
	assert_grep "EMFILE storm: after a pause it tries again by itself (logged)" \
		'accepting connections again' "$DLOG"
	release_held
	# Recovering: the backlog drains, the held peers' descriptors close.
	for i in $(seq $((100 * SLOW))); do
		[ "$(ask ruok 2>/dev/null)" = imok ] && break
		sleep 0.2
	done
	alive "EMFILE storm: ruok works again once the storm is gone (within 20 s)"
	wait_quiet "EMFILE storm: no connection left open (mntr)"
	check_clean "EMFILE storm"
	stop_daemon
}

case_over_cap
case_over_cap_with_word
case_many_idle
case_idle_flood
case_emfile_storm
finish

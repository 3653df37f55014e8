#!/bin/bash
# Abuse cases 2, 3 and 11: peers that are slow, rude or stuck.
#   2  byte-at-a-time senders: a word trickled a byte per 200 ms is served;
#      one slower than read_timeout overall (each gap shorter) is cut off
#      at the absolute deadline from accept, not reset per byte;
#   3  peers that half-close after the word (200x), and peers that reset
#      (SO_LINGER 0) in the middle of a reply (200x jmst as asked, 200x
#      jmsj with a clamped MSS so the daemon is provably still writing);
#  11  a peer that sends jmsj and never reads: write_timeout=1 drops it and
#      frees its descriptor while the peer still holds its end.
#
#	bash peers.sh    (JM4LWD=path/to/jm4lwd)
. "$(dirname "$0")/common.sh"

# 2a. Slow but within read_timeout (5 s): served, also 8 at once, and a
# big reply after a trickled word.
case_trickle_served() {
	local d
	d=$(scratch trickle)
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
	baseline "trickle" || return
	ab_case "trickle: ruok a byte per 200 ms gets imok" \
		trickle "$PORT" 'ruok' 0.2 1
	ab_case "trickle: 8 peers at once, ruok\\r\\n a byte per 200 ms, all get imok" \
		trickle "$PORT" 'ruok\r\n' 0.2 8
	ab_case "trickle: jmst a byte per 200 ms gets the whole statistics" \
		trickle "$PORT" 'jmst' 0.2 1
	check_clean "trickle"
	stop_daemon
}

# 2b. read_timeout=2, a byte every 1.5 s: every gap is shorter than the
# timeout, the word is not. A deadline restarted per byte would serve it
# at 4.5 s; the absolute one (from accept) must end it without a reply.
case_trickle_cut() {
	local d
	d=$(scratch trickle_cut)
	conf_file "$d" "read_timeout = 2"
	start_daemon -C "$d" -- -v -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	baseline "trickle cut" || return
	ab_case "read_timeout=2, a byte per 1.5 s: no reply, ended (within 15 s)" \
		trickle_cut "$PORT" 1.5 15
	if wait_log '^jm4lwd: 127\.0\.0\.1:[0-9]+: read timeout$' 10; then
		pass "trickle cut: the daemon logged the read timeout"
	else
		fail "trickle cut: the daemon logged the read timeout" "$(show_tail "$DLOG")"
	fi
	check_clean "trickle cut"
	stop_daemon
}

# 3. Half-closes and resets, one daemon; -v so its log shows the resets.
case_halfclose_reset() {
	local d r n
	d=$(scratch reset)
	start_daemon -C "$d" -- -v -l 127.0.0.1:0 -D "$d" || return
	baseline "half-close/reset" || return
	ab_case "half-close after ruok, 200x: imok and a FIN every time" \
		halfclose "$PORT" ruok 200
	ab_case "half-close after jmst, 200x: the whole statistics and a FIN every time" \
		halfclose "$PORT" jmst 200
	# jmst (~16 KB) with SO_RCVBUF 1024: as asked. On loopback the
	# daemon's send buffer often takes the whole reply, so the reset
	# lands mid-write only sometimes; the count is reported, not checked.
	ab_case "reset (SO_LINGER 0) after a few bytes of jmst, 200x" \
		reset "$PORT" jmst 200 1024 0
	# jmsj (~50 KB) with the MSS clamped to 536 as well: the daemon's send
	# buffer stays small, it must still be writing (its end not shut down)
	# when every reset arrives — otherwise this tests nothing.
	if r=$(ab reset "$PORT" jmsj 200 1024 536 2>&1); then
		n=$(sed -n 's/.*midwrite=\([0-9]*\).*/\1/p' <<<"$r")
		assert_eq "reset in the middle of a jmsj reply, 200x: the daemon was writing every time (${r##*RESULT })" \
			200 "$n"
	else
		fail "reset in the middle of a jmsj reply, 200x" "$r"
	fi
	alive "half-close/reset: ruok right after the resets"
	wait_quiet "half-close/reset: no connection left open (mntr)"
	check_clean "half-close/reset"
	stop_daemon
}

# 11. write_timeout=1 and 10 peers that ask for jmsj (tiny receive buffer,
# clamped MSS) and never read: each is dropped and its descriptor freed
# while the peers still hold their ends.
case_write_timeout() {
	local d n
	d=$(scratch write_timeout)
	conf_file "$d" "write_timeout = 1"
	start_daemon -C "$d" -- -v -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	baseline "write_timeout" || return
	hold_start "$PORT" 10 --send jmsj --rcvbuf 1024 --mss 536 --max 60
	held_wait
	for n in $(seq $((150 * SLOW))); do
		[ "$(grep -c ': write timeout$' "$DLOG")" -ge 10 ] && break
		sleep 0.1
	done
	assert_eq "write_timeout=1: the 10 stuck readers are dropped for it (log, within 15 s)" \
		10 "$(grep -c ': write timeout$' "$DLOG")"
	wait_fds "write_timeout: their descriptors are freed while the peers hold on"
	assert_eq "write_timeout: mntr open_connections is 1 (the mntr)" 1 \
		"$(mntr_value jm4lw_open_connections)"
	release_held
	check_clean "write_timeout"
	stop_daemon
}

case_trickle_served
case_trickle_cut
case_halfclose_reset
case_write_timeout
finish

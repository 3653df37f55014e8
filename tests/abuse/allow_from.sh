#!/bin/bash
# Abuse case 10: allow_from. A peer outside it is closed at accept without
# a byte of reply (not after read_timeout, which is 60 s here) and counted
# in mntr jm4lw_connections_denied; a peer inside is served as usual.
# Covers IPv4 and IPv6, single addresses and networks, the default
# (127.0.0.0/8,::1), SIGHUP reload, and bad values refused by -n.
# Only loopback traffic: 127.0.0.2 and 127.255.255.254 are loopback too,
# so a client socket bound to them shows the daemon another peer address.
#
#	bash allow_from.sh    (JM4LWD=path/to/jm4lwd)
. "$(dirname "$0")/common.sh"

if have_ipv6; then
	HAVE_V6=1
else
	HAVE_V6=0
fi

# denied DESC HOST [BIND]: ruok from there gets no byte, the connection is
# ended by the daemon at once; and one that sends nothing is ended too
# (well before read_timeout=60).
denied() {
	ab_case "$1: ruok gets no byte, closed" talk "$2" "$PORT" ruok --silent \
		--bound 10 ${3:+--bind "$3"}
	ab_case "$1: a silent peer is closed at once, not after read_timeout" \
		talk "$2" "$PORT" - --silent --bound 10 ${3:+--bind "$3"}
}
# served DESC HOST [BIND]: ruok from there gets imok.
served() {
	ab_case "$1" talk "$2" "$PORT" ruok --expect imok ${3:+--bind "$3"}
}

# allow_from=::1 on an IPv4 and an IPv6 listener.
case_v6_only() {
	local d
	if [ "$HAVE_V6" = 0 ]; then
		skip "SKIP allow_from=::1: no ::1 on this machine"
		return
	fi
	d=$(scratch v6_only)
	conf_file "$d" "allow_from = ::1" "read_timeout = 60"
	start_daemon -C "$d" -L 2 -- -f jm4lwd.conf -l '127.0.0.1:0,[::1]:0' -D "$d" ||
		return
	PORT=${PORTS[1]} # [::1]
	PROBE_HOST=::1
	baseline "allow_from=::1" || return
	PORT=${PORTS[0]}
	denied "allow_from=::1, IPv4 peer" 127.0.0.1
	ab_case "allow_from=::1, IPv4 peer sending jmst: still not a byte" \
		talk 127.0.0.1 "$PORT" jmst --silent --bound 10
	PORT=${PORTS[1]}
	served "allow_from=::1: an IPv6 peer gets imok" ::1
	ab talk ::1 "$PORT" mntr --out "$d/mntr.out" >/dev/null
	assert_grep "allow_from=::1: mntr counts the 3 denied IPv4 peers" \
		'^jm4lw_connections_denied	3$' "$d/mntr.out"
	assert_grep "allow_from=::1: they never became connections (open 1: the mntr)" \
		'^jm4lw_open_connections	1$' "$d/mntr.out"
	ab talk ::1 "$PORT" conf --out "$d/conf.out" >/dev/null
	assert_grep "conf shows allow_from=::1" '^allow_from=::1$' "$d/conf.out"
	assert_no_grep "allow_from=::1: the denied peers are not logged without -v" \
		'^jm4lwd: 127\.0\.0\.1:[0-9]+:' "$DLOG"
	check_clean "allow_from=::1"
	PROBE_HOST=127.0.0.1
	stop_daemon
}

# allow_from=127.0.0.2/32: 127.0.0.1 is out, a socket bound to 127.0.0.2 in.
case_one_v4_address() {
	local d
	d=$(scratch one_v4)
	conf_file "$d" "allow_from = 127.0.0.2/32" "read_timeout = 60"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	PROBE_BIND=127.0.0.2
	baseline "allow_from=127.0.0.2/32" || return
	denied "allow_from=127.0.0.2/32, peer 127.0.0.1" 127.0.0.1
	denied "allow_from=127.0.0.2/32, peer 127.0.0.3" 127.0.0.1 127.0.0.3
	served "allow_from=127.0.0.2/32: peer 127.0.0.2 gets imok" 127.0.0.1 127.0.0.2
	assert_eq "allow_from=127.0.0.2/32: mntr counts 4 denied" 4 \
		"$(probe_mntr jm4lw_connections_denied)"
	check_clean "allow_from=127.0.0.2/32"
	PROBE_BIND=
	stop_daemon
}

# The default: loopback, all of 127.0.0.0/8 and ::1.
case_default() {
	local d
	d=$(scratch default)
	start_daemon -C "$d" -L $((1 + HAVE_V6)) -- -l \
		"127.0.0.1:0$([ "$HAVE_V6" = 1 ] && echo ',[::1]:0')" -D "$d" || return
	baseline "default allow_from" || return
	assert_grep "conf: the default allow_from is 127.0.0.0/8,::1" \
		'^allow_from=127\.0\.0\.0/8,::1$' <(ask conf)
	served "default allow_from: 127.0.0.2 gets imok" 127.0.0.1 127.0.0.2
	served "default allow_from: 127.255.255.254 gets imok" 127.0.0.1 127.255.255.254
	if [ "$HAVE_V6" = 1 ]; then
		PORT=${PORTS[1]}
		served "default allow_from: ::1 gets imok" ::1
		PORT=${PORTS[0]}
	fi
	assert_eq "default allow_from: nobody denied" 0 "$(mntr_value jm4lw_connections_denied)"
	check_clean "default allow_from"
	stop_daemon
}

# Nothing on loopback allowed, then SIGHUP opens 127.0.0.0/8 on the same
# listeners; ::1 stays out.
case_reload() {
	local d p4 p6 i
	if [ "$HAVE_V6" = 0 ]; then
		skip "SKIP allow_from reload over IPv4 and IPv6: no ::1"
		return
	fi
	d=$(scratch reload)
	conf_file "$d" "allow_from = 10.1.2.3,fd00::/8" "read_timeout = 60"
	start_daemon -C "$d" -L 2 -- -f jm4lwd.conf -l '127.0.0.1:0,[::1]:0' -D "$d" ||
		return
	p4=${PORTS[0]} p6=${PORTS[1]}
	FD0=$(fd_count) # nothing can ask it anything yet; the loop is idle
	PORT=$p4 denied "allow_from=10.1.2.3,fd00::/8: peer 127.0.0.1" 127.0.0.1
	PORT=$p6 denied "allow_from=10.1.2.3,fd00::/8: peer ::1" ::1
	wait_fds "nothing allowed: the denied peers left no descriptor behind"
	conf_file "$d" "allow_from = 127.0.0.0/8" "read_timeout = 60"
	kill -HUP "$PID"
	wait_log '^jm4lwd: configuration reloaded' 10 ||
		fail "SIGHUP reload logged" "$(show_tail "$DLOG")"
	PORT=$p4 served "after SIGHUP to allow_from=127.0.0.0/8: 127.0.0.1 gets imok" 127.0.0.1
	PORT=$p6 ab_case "after SIGHUP: ::1 still gets no byte" \
		talk ::1 "$p6" ruok --silent --bound 10
	PORT=$p4
	assert_eq "after SIGHUP: mntr counts all 5 denied" 5 \
		"$(mntr_value jm4lw_connections_denied)"
	conf_file "$d" "allow_from = *" "read_timeout = 60"
	kill -HUP "$PID"
	for i in $(seq $((50 * SLOW))); do
		[ "$(grep -c '^jm4lwd: configuration reloaded' "$DLOG")" -ge 2 ] && break
		sleep 0.1
	done
	PORT=$p6 served "after SIGHUP to allow_from=*: ::1 gets imok" ::1
	assert_grep "conf shows allow_from=*" '^allow_from=\*$' <(ask conf "$p4")
	check_clean "allow_from reload"
	stop_daemon
}

# -n refuses what is not an address or network, with FILE:LINE: reason.
case_bad_values() {
	local d v out
	d=$(scratch bad_values)
	for v in "127.0.0.1/8" "127.0.0.0/33" "::1/129" "fd00::/" "localhost" \
		"127.0.0.1,,::1" "*,::1" "10.0.0.0/8 junk"; do
		printf '[jm4lw]\nallow_from = %s\n' "$v" >"$d/bad.conf"
		out=$(timeout 30 "$JM4LWD" -n -f "$d/bad.conf" 2>&1)
		if [ $? = 1 ] && [[ $out == "$d/bad.conf:2: "* ]]; then
			pass "-n: allow_from = $v refused ($out)"
		else
			fail "-n: allow_from = $v refused with $d/bad.conf:2: reason" "$out"
		fi
	done
	printf '[jm4lw]\nallow_from = 10.0.0.0/8, 192.0.2.7 ,fd00::/8,::1,127.0.0.0/8\n' >"$d/good.conf"
	assert_eq "-n: a list of IPv4/IPv6 addresses and networks is fine" \
		"configuration OK" "$(timeout 30 "$JM4LWD" -n -f "$d/good.conf" 2>&1)"
}

case_v6_only
case_one_v4_address
case_default
case_reload
case_bad_values
finish

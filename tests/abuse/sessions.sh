#!/bin/bash
# Abuse case 1: 10,000 short sessions of random bytes against one live
# jm4lwd, 16 at a time — 0 to 64 bytes each, 40% with a real word in front,
# half of them half-closing after sending. Every reply is checked against
# its first 4 bytes (abuse.py sessions), and the daemon's own counters
# must agree with what was sent, exactly.
#
#	bash sessions.sh    (JM4LWD=..., AB_SEED=N replays a run, AB_SESSIONS=N)
. "$(dirname "$0")/common.sh"

SEED=${AB_SEED:-$((RANDOM * 32768 + RANDOM))}
N=${AB_SESSIONS:-10000}

# mntr_all FILE: every mntr figure into FILE.
mntr_all() {
	ask mntr >"$1"
}
fig() {
	awk -F '\t' -v k="$1" '$1 == k { print $2 }' "$2"
}

case_random_sessions() {
	local d r served unknown conns
	d=$(scratch sessions)
	mkdir "$d/dumps"
	# Profiling off (no MALLOC_CONF): a random jmfp/jmep must get the
	# profiling-off line, not write files or start sampling.
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D dumps || return
	baseline "sessions" || return
	mntr_all "$d/before"
	echo "# $N sessions, seed $SEED (AB_SEED=$SEED replays them)"
	if r=$(ab sessions "$PORT" "$N" 16 "$SEED" 2>&1); then
		pass "$N random sessions: every reply right for its first 4 bytes, no error on our side (${r##*RESULT })"
	else
		fail "$N random sessions (seed $SEED)" "$r" "$(show_tail "$DLOG")"
	fi
	mntr_all "$d/after"
	# The driver's counts include its one probe for the list of words.
	served=$(sed -n 's/.* sent_word=\([0-9]*\).*/\1/p' <<<"$r")
	unknown=$(sed -n 's/.* unknown=\([0-9]*\).*/\1/p' <<<"$r")
	conns=$(sed -n 's/.* connections=\([0-9]*\).*/\1/p' <<<"$r")
	if [ -z "$served" ] || [ -z "$unknown" ] || [ -z "$conns" ]; then
		fail "sessions: the driver printed its counts" "$r"
	else
		# The second mntr counts itself as one word and one connection.
		assert_eq "mntr: words_served grew by the sessions that sent >= 4 bytes (+1 mntr)" \
			$((served + 1)) \
			$(($(fig jm4lw_words_served "$d/after") - $(fig jm4lw_words_served "$d/before")))
		assert_eq "mntr: words_unknown grew by the sessions whose 4 bytes are no word" \
			"$unknown" \
			$(($(fig jm4lw_words_unknown "$d/after") - $(fig jm4lw_words_unknown "$d/before")))
		assert_eq "mntr: connections_total grew by the driver's connections (+1 mntr)" \
			$((conns + 1)) \
			$(($(fig jm4lw_connections_total "$d/after") - $(fig jm4lw_connections_total "$d/before")))
	fi
	assert_eq "mntr: no connection rejected or denied (16 at a time, cap 64)" "0 0" \
		"$(fig jm4lw_connections_rejected "$d/after") $(fig jm4lw_connections_denied "$d/after")"
	assert_eq "mntr: no dump written, failed or refused" "0 0 0" \
		"$(fig jm4lw_dumps_written "$d/after") $(fig jm4lw_dumps_failed "$d/after") $(fig jm4lw_dumps_refused "$d/after")"
	wait_quiet "sessions: no connection left open (mntr)"
	check_clean "sessions" "$d/dumps"
	# PROTOCOL.md: "Every reply but ruok's ends in \n" — jmsj too.
	ask jmsj >"$d/jmsj.out"
	assert_eq "jmsj: the reply ends in a newline (PROTOCOL.md: every reply but ruok's)" \
		"0a" "$(tail -c 1 "$d/jmsj.out" | od -An -tx1 | tr -d ' ')"
	stop_daemon
}

case_random_sessions
finish

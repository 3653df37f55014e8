# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 8. ruok through a flood of idle and trickling connections.
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

# jm4lwd as shipped (no -f: max_connections 64, read_timeout 5 s) under
# 1000 connections that idle or trickle and come back as soon as they are
# closed, while a prober asks ruok every 10 ms on connections of its own.
# fds counts the daemon's descriptors (/proc/PID/fd).
fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
SECTION=11
if want flood; then
	log "8. ruok through a flood of $IDLE_CONNS idle connections at the default max_connections"
	note_cmd "${ON_SERVER[*]} jm4lwd -l 127.0.0.1:0 -W ''   # no -f: the defaults, no HTTP"
	start flood-jm4lwd "${ON_SERVER[@]}" "$JM4LWD" -l 127.0.0.1:0 -W ""
	DPID=$STARTED
	if DPORT=$(wait_listen flood-jm4lwd "$DPID" "jm4lwd: listening on" 20); then
		PORTNAME[$DPORT]=JM4LWD_DEFAULT_PORT
		R[flood.max]=$(sed -n 's/^max_connections=//p' <("$CLIENT_BIN" -h 127.0.0.1 -p "$DPORT" -t 5 conf 2>/dev/null))
		R[flood.fd0]=$(fds "$DPID")
		probe=(-c 1 -i 10 -d "$FLOOD_SECS" -w ruok -r "$REFUSAL")
		bench flood.base "$DPID" "$DPORT" "${probe[@]}" && rec flood.base.n "$(kv "$LG" requests)"
		note_cmd "${ON_CLIENT[*]} loadgen -p $DPORT -c 0 -k $IDLE_CONNS -F -T $FLOOD_TRICKLE_MS -d $((FLOOD_SECS + 2)) & sleep 1.5"
		"${ON_CLIENT[@]}" "$LOADGEN" -h 127.0.0.1 -p "$DPORT" -c 0 -k "$IDLE_CONNS" -F -T "$FLOOD_TRICKLE_MS" \
			-d $((FLOOD_SECS + 2)) >"$WORK/flood.out" 2>"$WORK/flood.err" &
		flooder=$!
		sleep 1.5
		( sleep "$(awk -v d="$FLOOD_SECS" 'BEGIN { print d / 2 }')"; fds "$DPID" >"$WORK/flood.fdmid" ) &
		mid=$!
		# The prober fails only on a wrong reply: refusals and
		# connections closed before a reply are this section's figures.
		note_cmd "${ON_CLIENT[*]} loadgen -p $DPORT ${probe[*]:0:${#probe[@]}-1} \"$REFUSAL\""
		P=$("${ON_CLIENT[@]}" "$LOADGEN" -h 127.0.0.1 -p "$DPORT" "${probe[@]}" 2>"$WORK/flood.probe.err")
		[ -n "$P" ] && [ "$(kv "$P" wrong)" = 0 ] ||
			bench_fail "flood: the ruok prober: $(head -3 "$WORK/flood.probe.err" | tr '\n' ' ') $P"
		for k in requests errors refused p50_us p99_us max_us; do
			# No answer at all: no latencies either.
			v=$(kv "$P" "$k")
			[[ $k == *_us ]] && [ "$(kv "$P" requests)" = 0 ] && v=nan
			rec "flood.probe.$k" "${v:-nan}"
		done
		wait "$mid"
		wait "$flooder" || bench_fail "flood: loadgen -k $IDLE_CONNS -F: $(head -3 "$WORK/flood.err" | tr '\n' ' ')"
		F=$(cat "$WORK/flood.out")
		R[flood.dropped]=$(kv "$F" idle_dropped)
		R[flood.trickled]=$(kv "$F" trickled)
		R[flood.fdmid]=$(cat "$WORK/flood.fdmid" 2>/dev/null)
		sleep 1
		R[flood.fd1]=$(fds "$DPID")
		log "flood: ruok $(kv "$P" requests) answered, $(kv "$P" refused) refused, $(kv "$P" errors) failed; fds ${R[flood.fd0]} -> ${R[flood.fdmid]} -> ${R[flood.fd1]}"
		# Still serving once the flood is over.
		lg flood.after "$DPORT" -n 1 -w ruok >/dev/null
	else
		bench_fail "jm4lwd (default configuration) did not start"
	fi
	stop "$DPID"
fi


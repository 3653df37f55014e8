# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 6. ruok p99 with 1000 idle connections held open.
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

SECTION=6
if want idle; then
	log "6. ruok p99 with $IDLE_CONNS idle connections held open"
	for r in $(seq 1 "$ROUNDS"); do
		for c in $CONCS; do
			for s in $(order "$r" base idle); do
				if [ "$s" = base ]; then
					bench "s6.c$c.base" "$JPID" "$JPORT" -c "$c" -d "$DUR" -w ruok
					continue
				fi
				# With the idle ones: ask mntr mid-run how many the daemon holds.
				note_cmd "${ON_CLIENT[*]} loadgen -p $JPORT -k $IDLE_CONNS -c $c -d $DUR -w ruok & sleep $(awk -v d="$DUR" 'BEGIN { print d / 2 + 0.5 }'); jm4lw -p $JPORT mntr"
				( sleep "$(awk -v d="$DUR" 'BEGIN { print d / 2 + 0.5 }')"
				  "$CLIENT_BIN" -h 127.0.0.1 -p "$JPORT" -t 5 mntr >"$WORK/idle.mntr" 2>&1 ) &
				probe=$!
				bench "s6.c$c.idle" "$JPID" "$JPORT" -k "$IDLE_CONNS" -c "$c" -d "$DUR" -w ruok
				wait "$probe"
				open=$(awk -F'\t' '$1 == "jm4lw_open_connections" { print $2 }' "$WORK/idle.mntr")
				rec "s6.c$c.open" "${open:-nan}"
				[ -n "$open" ] && [ "$open" -ge "$IDLE_CONNS" ] ||
					bench_fail "s6: mntr mid-run says jm4lw_open_connections=${open:-?} (want >= $IDLE_CONNS)"
				rec "s6.c$c.idle_open" "$(kv "$LG" idle_open)"
			done
		done
	done
fi


# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Instructions per request (callgrind), then the shared servers stop.
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

# callgrind counts the instructions each server runs per request: the same
# figure on a busy machine as on a quiet one, where the throughput ratios
# above move by tens of percent from run to run. User space only (the
# kernel's TCP work is not counted); servers unpinned, one at a time.
CG=0
if [ "$REDIS_OK" = 1 ] && command -v valgrind >/dev/null && command -v callgrind_control >/dev/null &&
	command -v callgrind_annotate >/dev/null; then
	CG=1
else
	log "callgrind: valgrind (Debian package valgrind) or redis missing; instruction counts skipped"
fi

# cg_start NAME PATTERN [VAR=VALUE...] CMD...: CMD under callgrind, with
# the VARs in its environment (set outside valgrind: valgrind does not
# follow an exec of env); waits for PATTERN (a log line, or "redis" for a
# PING on CGPORT) and sets CGPID, CGPORT, CGN.
cg_start() {
	local name=$1 pat=$2 vars=() i
	shift 2
	while [[ ${1:-} == [A-Z]*=* ]]; do vars+=("$1"); shift; done
	start "cg-$name" env "${vars[@]}" valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$name.out" "$@"
	CGPID=$STARTED CGN=0 CGNAME=$name
	if [ "$pat" = redis ]; then
		for i in $(seq 1 300); do
			[ "$(redis-cli -p "$CGPORT" ping 2>/dev/null)" = PONG ] && return 0
			sleep 0.1
		done
		bench_fail "callgrind: redis ($name) did not answer PING"
		return 1
	fi
	CGPORT=$(wait_listen "cg-$name" "$CGPID" "$pat" 60) || { bench_fail "callgrind: $name did not start"; return 1; }
}
# cg_count KEY N CMD...: zero the counters, run CMD (N requests), dump;
# records KEY (instructions per request) and KEY.secs (CMD's wall time).
# KEY.FN for each function in CG_FNS: inclusive instructions per request.
cg_count() {
	local key=$1 n=$2 f t0 t1 tot fn v i
	shift 2
	callgrind_control -z "$CGPID" >/dev/null 2>&1 || { bench_fail "callgrind_control -z $CGNAME"; return 1; }
	t0=$(date +%s.%N)
	"$@" >"$WORK/cg.cmd.out" 2>&1 || { bench_fail "callgrind: $key: $* failed: $(tail -2 "$WORK/cg.cmd.out" | tr '\n' ' ')"; return 1; }
	t1=$(date +%s.%N)
	callgrind_control -d "$CGPID" >/dev/null 2>&1 || { bench_fail "callgrind_control -d $CGNAME"; return 1; }
	CGN=$((CGN + 1))
	f=$WORK/cg.$CGNAME.out.$CGN
	for i in $(seq 1 50); do [ -s "$f" ] && grep -q '^totals:' "$f" && break; sleep 0.1; done
	tot=$(awk '$1 == "totals:" { print $2; exit }' "$f")
	[ -n "$tot" ] || { bench_fail "callgrind: no totals in $f"; return 1; }
	rec "$key" "$(awk -v t="$tot" -v n="$n" 'BEGIN { printf "%.0f", t / n }')"
	rec "$key.secs" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
	for fn in ${CG_FNS:-}; do
		v=$(callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null |
			awk -v fn="$fn" '{ s = $0; sub(/ *\[.*$/, "", s) } s ~ (":" fn "$") { gsub(/,/, "", $1); print $1; exit }')
		rec "$key.$fn" "$(awk -v t="${v:-nan}" -v n="$n" 'BEGIN { if (t == "nan") print "nan"; else printf "%.0f", t / n }')"
	done
}

if [ $CG = 1 ]; then
	SECTION=9
	log "instructions per request (callgrind)"
	CG_J=$([ "$MODE" = smoke ] && echo 5 || echo 100)     # jmst, MALLOC-STATS
	CG_R=$([ "$MODE" = smoke ] && echo 50 || echo 2000)   # ruok, mntr
	CG_KV=$([ "$MODE" = smoke ] && echo 200 || echo 20000) # SET + GET, each
	CG_IDLE=$([ "$MODE" = smoke ] && echo 1 || echo 3)      # idle seconds
	note_cmd "MALLOC_CONF=prof:true,prof_active:false valgrind --tool=callgrind jm4lwd -f jm4lwd.conf -l 127.0.0.1:0; callgrind_control -z; loadgen -n N -w WORD; callgrind_control -d"
	if cg_start jm4lwd "jm4lwd: listening on" MALLOC_CONF=prof:true,prof_active:false "$JM4LWD" \
		-f "$WORK/jm4lwd.conf" -l 127.0.0.1:0; then
		CG_FNS="malloc_stats_print" cg_count cg.j.jmst "$CG_J" "$LOADGEN" -p "$CGPORT" -n "$CG_J" -w jmst
		cg_count cg.j.ruok "$CG_R" "$LOADGEN" -p "$CGPORT" -n "$CG_R" -w ruok
		CG_FNS="mallctl" cg_count cg.j.mntr "$CG_R" "$LOADGEN" -p "$CGPORT" -n "$CG_R" -w mntr
		R[cg.j.jmst.bytes]=$("$CLIENT_BIN" -p "$CGPORT" -t 60 jmst 2>/dev/null | wc -c)
	fi
	stop "$CGPID"
	note_cmd "valgrind --tool=callgrind floor -m linger; callgrind_control -z; loadgen -n N -w ruok; callgrind_control -d"
	if cg_start floor "floor: listening on" "$BIN/floor" -m linger; then
		cg_count cg.f.ruok "$CG_R" "$LOADGEN" -p "$CGPORT" -n "$CG_R" -w ruok
	fi
	stop "$CGPID"
	# redis: MALLOC-STATS, then idle, then SET+GET; plain and with the agent.
	for k in plain agent; do
		env=()
		[ $k = agent ] && env+=(LD_PRELOAD="$AGENT" JM4LW_LISTEN=127.0.0.1:0 JM4LW_DUMP_DIR="$WORK/redis-$k")
		CGPORT=$(free_port)
		note_cmd "$([ $k = agent ] && echo "LD_PRELOAD=libjm4lw_agent.so JM4LW_LISTEN=127.0.0.1:0 ")valgrind --tool=callgrind redis-server --port \$PORT ...; callgrind_control -z; redis-benchmark -c 1 -n N ...; callgrind_control -d"
		if cg_start "redis-$k" redis "${env[@]}" redis-server --port "$CGPORT" --bind 127.0.0.1 \
			--save "" --appendonly no --dir "$WORK/redis-$k"; then
			if [ $k = agent ] && ! grep -q "jm4lw agent\[[0-9]*\]: listening on" "$WORK/cg-redis-$k.log"; then
				bench_fail "callgrind: the agent in redis-$k did not listen"
			fi
			[ $k = plain ] && CG_FNS="malloc_stats_print" cg_count cg.r.ms "$CG_J" \
				redis-benchmark -p "$CGPORT" -c 1 -n "$CG_J" MEMORY MALLOC-STATS
			cg_count "cg.$k.idle" 1 sleep "$CG_IDLE"
			cg_count "cg.$k.kv" $((CG_KV * 2)) redis-benchmark -p "$CGPORT" -c 1 -n "$CG_KV" -t set,get
		fi
		stop "$CGPID"
	done
fi

stop "$JPID"
stop "$FPID"


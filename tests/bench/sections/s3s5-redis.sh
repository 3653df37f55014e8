# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 3. jmst against Redis MEMORY MALLOC-STATS, and 5. the preload agent
# inside redis-server (one set of redis-servers serves both).
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

REDIS_OK=0
if want redis && bench_need redis-server "Debian package redis-server" && bench_need redis-benchmark "Debian package redis-tools" &&
	bench_need redis-cli "Debian package redis-tools"; then
	REDIS_OK=1
	REDIS_VERSION=$(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')
	declare -A RPID RPORT APORT
	for k in plain agent agentprof; do
		RPORT[$k]=$(free_port)
		mkdir -p "$WORK/redis-$k"
		env=(env)
		# shellcheck disable=SC2054
		case $k in
		agent) env+=(LD_PRELOAD="$AGENT" JM4LW_LISTEN=127.0.0.1:0 JM4LW_DUMP_DIR="$WORK/redis-$k") ;;
		agentprof) env+=(LD_PRELOAD="$AGENT" JM4LW_LISTEN=127.0.0.1:0 JM4LW_DUMP_DIR="$WORK/redis-$k"
			MALLOC_CONF=prof:true,prof_active:false) ;;
		esac
		start "redis-$k" "${env[@]}" "${ON_SERVER[@]}" redis-server --port "${RPORT[$k]}" --bind 127.0.0.1 \
			--save "" --appendonly no --dir "$WORK/redis-$k"
		RPID[$k]=$STARTED
		PORTNAME[${RPORT[$k]}]=REDIS_${k^^}_PORT
	done
	SECTION=5
	note_cmd "${ON_SERVER[*]} redis-server --port \$REDIS_PLAIN_PORT --bind 127.0.0.1 --save '' --appendonly no"
	note_cmd "LD_PRELOAD=libjm4lw_agent.so JM4LW_LISTEN=127.0.0.1:0 ${ON_SERVER[*]} redis-server --port \$REDIS_AGENT_PORT ..."
	note_cmd "LD_PRELOAD=libjm4lw_agent.so JM4LW_LISTEN=127.0.0.1:0 MALLOC_CONF=prof:true,prof_active:false ${ON_SERVER[*]} redis-server --port \$REDIS_AGENTPROF_PORT ..."
	for k in plain agent agentprof; do
		up=0
		for i in $(seq 1 100); do
			[ "$(redis-cli -p "${RPORT[$k]}" ping 2>/dev/null)" = PONG ] && { up=1; break; }
			sleep 0.1
		done
		[ $up = 1 ] || { bench_fail "redis-$k did not start"; REDIS_OK=0; }
		if [ $k != plain ]; then
			APORT[$k]=$(wait_listen "redis-$k" "${RPID[$k]}" "jm4lw agent\[[0-9]*\]: listening on" 10) ||
				{ bench_fail "the agent in redis-$k did not listen"; REDIS_OK=0; }
			PORTNAME[${APORT[$k]:-0}]=AGENT_${k^^}_PORT
		fi
	done
fi
if [ $REDIS_OK = 1 ]; then
	sleep 1
	# 5: RSS right after start-up, then the idle agent's wake-ups.
	for k in plain agent agentprof; do
		for f in VmRSS RssAnon RssFile; do R[s5.rss.$k.$f]=$(rss "${RPID[$k]}" $f); done
	done
	note_cmd "grep -E 'VmRSS|RssAnon|RssFile' /proc/\$REDIS_PID/status   # 1 s after PONG, before any load"
	note_cmd "cat /proc/\$REDIS_PID/task/*/comm; grep ctxt_switches /proc/\$REDIS_PID/task/\$JM4LW_TID/status   # $IDLE_SECS s apart"
	for k in agent agentprof; do R[s5.sw0.$k]=$(agent_switches "${RPID[$k]}") || bench_fail "no jm4lw thread in redis-$k"; done
	sleep "$IDLE_SECS"
	for k in agent agentprof; do
		R[s5.sw1.$k]=$(agent_switches "${RPID[$k]}")
		R[s5.wake.$k]=$(awk -v a="${R[s5.sw0.$k]:-0}" -v b="${R[s5.sw1.$k]:-0}" -v s="$IDLE_SECS" 'BEGIN { printf "%.2f", (b - a) / s }')
	done

	# 3: jmst against MEMORY MALLOC-STATS.
	SECTION=3
	log "3. jmst vs Redis MEMORY MALLOC-STATS"
	redis-cli -p "${RPORT[plain]}" memory malloc-stats >"$WORK/malloc-stats" 2>&1
	grep -q -- "--- End jemalloc statistics ---" "$WORK/malloc-stats" ||
		bench_fail "redis MEMORY MALLOC-STATS is not jemalloc's report: $(head -2 "$WORK/malloc-stats")"
	R[s3.redis.bytes]=$(wc -c <"$WORK/malloc-stats")
	redis-cli -p "${RPORT[agent]}" memory malloc-stats >"$WORK/malloc-stats-a" 2>&1
	R[s3.redisa.bytes]=$(wc -c <"$WORK/malloc-stats-a")
	for r in $(seq 1 "$ROUNDS"); do
		for c in $CONCS; do
			n=$RB_MS_N1
			[ "$c" = 1 ] || n=$RB_MS_N32
			for s in $(order "$r" j r rk0 a ra); do
				case $s in
				j) bench "s3.c$c.j" "$JPID" "$JPORT" -c "$c" -d "$DUR" -w jmst ;;
				r) rb "s3.c$c.r" "${RPID[plain]}" "${RPORT[plain]}" -c "$c" -n "$n" MEMORY MALLOC-STATS ;;
				rk0) rb "s3.c$c.rk0" "${RPID[plain]}" "${RPORT[plain]}" -k 0 -c "$c" -n "$n" MEMORY MALLOC-STATS ;;
				a) bench "s3.c$c.a" "${RPID[agent]}" "${APORT[agent]}" -c "$c" -d "$DUR" -w jmst ;;
				ra) rb "s3.c$c.ra" "${RPID[agent]}" "${RPORT[agent]}" -c "$c" -n "$n" MEMORY MALLOC-STATS ;;
				esac
			done
		done
	done
	if [ $PERF = 1 ]; then
		for i in 1 2 3; do pstat p.j.jmst "$JPID" "$JPORT" -c 32 -n 3000 -w jmst; done
		prof p.j.jmst "$JPID" "$JPORT" -c 32 -n 3000 -w jmst
	fi

	# 5: GET/SET with and without the agent, the agent's thread watched.
	SECTION=5
	log "5. the agent inside redis-server"
	for k in agent agentprof; do R[s5.lsw0.$k]=$(agent_switches "${RPID[$k]}"); done
	for r in $(seq 1 "$AGENT_ROUNDS"); do
		for c in $CONCS; do
			n=$RB_KV_N1
			[ "$c" = 1 ] || n=$RB_KV_N32
			for k in $(order "$r" plain agent agentprof); do
				rb "s5.c$c.$k" "${RPID[$k]}" "${RPORT[$k]}" -c "$c" -n "$n" -t set,get
			done
		done
	done
	for k in agent agentprof; do
		R[s5.lsw1.$k]=$(agent_switches "${RPID[$k]}")
		R[s5.loadsw.$k]=$(( ${R[s5.lsw1.$k]:-0} - ${R[s5.lsw0.$k]:-0} ))
	done
	for k in plain agent agentprof; do stop "${RPID[$k]}"; done
fi

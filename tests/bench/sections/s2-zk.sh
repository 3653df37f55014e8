# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 2. ruok and mntr conn/s: jm4lwd against ZooKeeper.
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

SECTION=2
want zk && log "2. ruok and mntr: jm4lwd vs ZooKeeper"
ZK_OK=0
ZKJAR=/usr/share/java/zookeeper.jar
if want zk && bench_need java "Debian package zookeeper" && [ -r "$ZKJAR" ]; then
	ZPORT=$(free_port)
	mkdir -p "$WORK/zk/data"
	cat >"$WORK/zk/zoo.cfg" <<EOF
tickTime=2000
dataDir=$WORK/zk/data
clientPort=$ZPORT
clientPortAddress=127.0.0.1
maxClientCnxns=0
4lw.commands.whitelist=*
admin.enableServer=false
EOF
	note_cmd "${ON_SERVER[*]} java -cp /etc/zookeeper/conf:$ZKJAR org.apache.zookeeper.server.quorum.QuorumPeerMain zoo.cfg"
	start zk "${ON_SERVER[@]}" java -cp "/etc/zookeeper/conf:$ZKJAR" \
		org.apache.zookeeper.server.quorum.QuorumPeerMain "$WORK/zk/zoo.cfg"
	ZKPID=$STARTED
	PORTNAME[$ZPORT]=ZK_PORT
	# Ready when mntr answers: for a moment after start ruok says imok while
	# mntr says "This ZooKeeper instance is not currently serving requests".
	for i in $(seq 1 300); do
		rm -f "$WORK/zk.mntr"
		"$LOADGEN" -p "$ZPORT" -n 1 -w mntr -o "$WORK/zk.mntr" >/dev/null 2>&1 && { ZK_OK=1; break; }
		kill -0 "$ZKPID" 2>/dev/null || break
		sleep 0.2
	done
	if [ $ZK_OK = 1 ]; then
		ZK_VERSION=$(sed -n 's/^zk_version[[:space:]]*\([0-9.]*\).*/\1/p' "$WORK/zk.mntr")
		log "ZooKeeper ${ZK_VERSION:-?} up on $ZPORT; warming up ${ZK_WARM}s per word"
		lg zk.warm "$ZPORT" -c 32 -d "$ZK_WARM" -w ruok
		lg zk.warm "$ZPORT" -c 32 -d "$ZK_WARM" -w mntr
		for r in $(seq 1 "$ROUNDS"); do
			for w in ruok mntr; do
				for c in $CONCS; do
					for s in $(order "$r" j z); do
						if [ "$s" = j ]; then
							bench "s2.$w.c$c.j" "$JPID" "$JPORT" -c "$c" -d "$DUR" -w "$w"
						else
							bench "s2.$w.c$c.z" "$ZKPID" "$ZPORT" -c "$c" -d "$DUR" -w "$w"
						fi
					done
				done
			done
		done
		if [ $PERF = 1 ]; then
			for i in 1 2 3; do
				for s in $(order "$i" j z); do
					if [ "$s" = j ]; then pstat p.j.mntr "$JPID" "$JPORT" -c 32 -n 20000 -w mntr
					else pstat p.z.mntr "$ZKPID" "$ZPORT" -c 32 -n 10000 -w mntr; fi
				done
			done
			prof p.j.mntr "$JPID" "$JPORT" -c 32 -n 20000 -w mntr
			prof p.z.mntr "$ZKPID" "$ZPORT" -c 32 -n 10000 -w mntr
		fi
	else
		bench_fail "ZooKeeper did not answer mntr within 60 s"
		tail -5 "$WORK/zk.log" >&2
	fi
	stop "$ZKPID"
else
	! want zk || [ -r "$ZKJAR" ] || bench_fail "$ZKJAR missing (Debian package zookeeper)"
fi


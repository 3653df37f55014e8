#!/bin/bash
# The agent inside Debian's redis-server (dynamically linked with
# libjemalloc.so.2), unmodified: the port answers from redis's own heap.
. "$(dirname "$0")/common.sh"

command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
	{ fail "redis-server and redis-cli are installed"; finish; exit; }

rport=$(free_port)
(cd "$WORK" && exec env JM4LW_LISTEN=127.0.0.1:0 JM4LW_DUMP_DIR="$WORK" \
	MALLOC_CONF=prof:true,prof_active:false LD_PRELOAD="$JM4LW_AGENT_SO" \
	redis-server --port "$rport" --bind 127.0.0.1 --save "" \
	--appendonly no --dir "$WORK" >"$WORK/redis.out" 2>"$WORK/redis.err") &
PIDS="$PIDS $!"
port=$(wait_port "$WORK/redis.err") || { cat "$WORK/redis.err"; fail "agent listens"; finish; exit; }
ok "agent listens in redis-server on 127.0.0.1:$port"
for i in $(seq 1 100); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
check "redis answers PING with the agent inside" \
	test "$(redis-cli -p "$rport" ping)" = PONG

# jmst is the same allocator's report as redis's own MEMORY MALLOC-STATS.
ask "$port" jmst >"$WORK/jmst"
redis-cli -p "$rport" memory malloc-stats >"$WORK/redis-stats"
check "jmst begins with jemalloc's marker" \
	test "$(head -1 "$WORK/jmst")" = "___ Begin jemalloc statistics ___"
check "jmst ends with jemalloc's marker" \
	test "$(tail -1 "$WORK/jmst")" = "--- End jemalloc statistics ---"
check "MEMORY MALLOC-STATS has the same markers" \
	grep -q -- "--- End jemalloc statistics ---" "$WORK/redis-stats"
check "both report the same jemalloc version and opt.prof" bash -c \
	"diff <(grep -E '^Version:|opt.prof:' '$WORK/jmst') <(grep -E '^Version:|opt.prof:' '$WORK/redis-stats')"
check "srvr says thread mode" bash -c "'$JM4LW_CLIENT' -p $port srvr | grep -qx 'Mode: thread'"

# Sample redis's own allocations: large values written through redis-cli.
check "jmep" bash -c "'$JM4LW_CLIENT' -p $port jmep | grep -q '^ok'"
head -c 300000 /dev/zero | tr '\0' x >"$WORK/value"
for i in $(seq 1 60); do redis-cli -p "$rport" -x set "key$i" <"$WORK/value" >/dev/null; done
allocated=$(ask "$port" mntr | awk -F'\t' '$1 == "jemalloc_allocated" { print $2 }')
check "mntr sees redis's heap (allocated $allocated > 15 MB)" test "${allocated:-0}" -gt 15000000
dump=$(ask "$port" jmfp)
check "jmfp gives a file ($dump)" test -s "$dump"
jeprof --text /usr/bin/redis-server "$dump" >"$WORK/jeprof" 2>"$WORK/jeprof.err"
check "jeprof names a redis allocation function" \
	grep -qE 'zmalloc|sdsnewlen|_sdsMakeRoomFor|sdsMakeRoomFor' "$WORK/jeprof"
grep -E 'zmalloc|sds' "$WORK/jeprof" | head -3
check "redis still serves after all that" test "$(redis-cli -p "$rport" get key1 | wc -c)" -gt 300000
redis-cli -p "$rport" shutdown nosave >/dev/null 2>&1
rm -f "$dump"
finish

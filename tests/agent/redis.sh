#!/bin/bash
# The agent inside Debian's redis-server (dynamically linked with
# libjemalloc.so.2), unmodified: the port answers from redis's own heap.
. "$(dirname "$0")/../lib.sh"

need redis-server redis-cli nc.openbsd timeout python3

rport=$(free_port)
(cd "$T" && exec env JM4LW_LISTEN=127.0.0.1:0 JM4LW_DUMP_DIR="$T" \
	MALLOC_CONF=prof:true,prof_active:false LD_PRELOAD="$JM4LW_AGENT_SO" \
	redis-server --port "$rport" --bind 127.0.0.1 --save "" \
	--appendonly no --dir "$T" >"$T/redis.out" 2>"$T/redis.err") &
rpid=$!
track $rpid
port=$(wait_port "$T/redis.err") || { cat "$T/redis.err"; die "agent listens"; }
pass "agent listens in redis-server on 127.0.0.1:$port"
for i in $(seq 1 100); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
assert_cmd "redis answers PING with the agent inside" \
	test "$(redis-cli -p "$rport" ping)" = PONG

# jmst is the same allocator's report as redis's own MEMORY MALLOC-STATS.
ask jmst "$port" >"$T/jmst"
redis-cli -p "$rport" memory malloc-stats >"$T/redis-stats"
assert_cmd "jmst begins with jemalloc's marker" \
	test "$(head -1 "$T/jmst")" = "___ Begin jemalloc statistics ___"
assert_cmd "jmst ends with jemalloc's marker" \
	test "$(tail -1 "$T/jmst")" = "--- End jemalloc statistics ---"
assert_cmd "MEMORY MALLOC-STATS has the same markers" \
	grep -q -- "--- End jemalloc statistics ---" "$T/redis-stats"
assert_cmd "both report the same jemalloc version and opt.prof" bash -c \
	"diff <(grep -E '^Version:|opt.prof:' '$T/jmst') <(grep -E '^Version:|opt.prof:' '$T/redis-stats')"
assert_cmd "srvr says thread mode" bash -c "'$JM4LW_CLIENT' -p $port srvr | grep -qx 'Mode: thread'"

# Sample redis's own allocations: large values written through redis-cli.
assert_cmd "jmep" bash -c "'$JM4LW_CLIENT' -p $port jmep | grep -q '^ok'"
head -c 300000 /dev/zero | tr '\0' x >"$T/value"
for i in $(seq 1 60); do redis-cli -p "$rport" -x set "key$i" <"$T/value" >/dev/null; done
allocated=$(ask mntr "$port" | awk -F'\t' '$1 == "jemalloc_allocated" { print $2 }')
assert_cmd "mntr sees redis's heap (allocated $allocated > 15 MB)" test "${allocated:-0}" -gt 15000000
dump=$(ask jmfp "$port")
assert_cmd "jmfp gives a file ($dump)" test -s "$dump"
jeprof --text /usr/bin/redis-server "$dump" >"$T/jeprof" 2>"$T/jeprof.err"
assert_cmd "jeprof names a redis allocation function" \
	grep -qE 'zmalloc|sdsnewlen|_sdsMakeRoomFor|sdsMakeRoomFor' "$T/jeprof"
grep -E 'zmalloc|sds' "$T/jeprof" | head -3
assert_cmd "redis still serves after all that" test "$(redis-cli -p "$rport" get key1 | wc -c)" -gt 300000
# SIGTERM, as systemd and kill stop it: redis exits through exit(), and
# the agent's staging directory in dump_dir (made by jmfp) goes with it.
assert_cmd "jmfp staged in dump_dir (a .jm4lw.$rpid.* directory)" \
	bash -c "ls -a '$T' | grep -q '^\.jm4lw\.$rpid\.'"
kill -TERM "$rpid"
# (Gone or a zombie: it is our child, reaped only by wait.)
for _ in $(seq $((100 * SLOW))); do
	grep -q '^State:[[:space:]]*[^Z]' "/proc/$rpid/status" 2>/dev/null || break
	sleep 0.1
done
assert_eq "SIGTERM: the agent leaves no staging directory in dump_dir" "" \
	"$(ls -a "$T" | grep "^\.jm4lw\.$rpid\.")"
rm -f "$dump"
finish

#!/bin/bash
# The agent inside Debian's redis-server (dynamically linked with
# libjemalloc.so.2), unmodified: the port answers from redis's own heap.
# jmtp and jmlk name redis's own code, not the zmalloc wrappers it
# allocates through (folded into their callers).
. "$(dirname "$0")/../lib.sh"

need redis-server redis-cli nc.openbsd timeout python3

JM4LW_PROF=${JM4LW_PROF:-$ROOT/build/jm4lw-prof}
rport=$(free_port)
printf 'dump_min_interval = 0\ndump_min_free = 0\n' >"$T/conf"
(cd "$T" && exec env JM4LW_LISTEN=127.0.0.1:0 JM4LW_DUMP_DIR="$T" \
	JM4LW_CONF="$T/conf" JM4LW_HTTP_LISTEN= \
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

# The allocator's wrappers: redis allocates through zmalloc,
# zmalloc_usable, zrealloc_usable (ztrymalloc_usable where not inlined).
# Without folding (jm4lw-prof --no-fold, jeprof's table) they hold the
# top; jmtp's top rows with self bytes are redis's own callers instead
# (some static ones named redis-check-rdb+0x...: Debian strips redis).
wrappers='^z(try)?(malloc|calloc|realloc)(_usable)?$'
# selfrows FILE: the functions of the rows holding self bytes.
selfrows() {
	awk '$1 ~ /^[0-9.]+$/ && $2 ~ /%$/ && NF >= 6 && $1 + 0 > 0 { print $6 }' "$1"
}
"$JM4LW_PROF" -f text --no-fold "$dump" >"$T/nofold" 2>&1
assert_cmd "control: without folding a zmalloc wrapper is the top row ($(selfrows "$T/nofold" | head -1))" \
	bash -c "selfrows() { $(declare -f selfrows | tail -n +2); }; selfrows '$T/nofold' | head -1 | grep -Eq '$wrappers'"
ask jmtp "$port" >"$T/jmtp"
selfrows "$T/jmtp" >"$T/jmtp.self"
echo "# jmtp's top rows: $(head -4 "$T/jmtp.self" | tr '\n' ' ')"
assert_cmd "jmtp: rows hold self bytes" test -s "$T/jmtp.self"
assert_no_grep "jmtp: no zmalloc wrapper among the rows with self bytes" "$wrappers" "$T/jmtp.self"
assert_grep "jmtp: the line under Total: names zmalloc_usable" \
	'^Folded allocation wrappers into their callers: (.*, )?zmalloc_usable(, .*)? \(fold_wrappers to change\)$' "$T/jmtp"
# Every wrapper that held self bytes in the dump is named as folded.
"$JM4LW_PROF" -f text "$dump" >"$T/fold" 2>&1
missing=$(selfrows "$T/nofold" | grep -E "$wrappers" | while read -r f; do
	grep -q "^Folded allocation wrappers into their callers: .*\b$f\b" "$T/fold" || echo "$f"
done)
assert_eq "jm4lw-prof: each wrapper --no-fold shows with self bytes is named folded" "" "$missing"
assert_eq "jm4lw-prof: the same Total: with and without folding" \
	"$(grep '^Total:' "$T/nofold")" "$(grep '^Total:' "$T/fold")"

# Leak suspects over kept dumps, the keys growing before each: the
# suspect is redis's code, not a wrapper.
for b in 1 2 3; do
	for i in $(seq 1 15); do redis-cli -p "$rport" -x set "grow$b.$i" <"$T/value" >/dev/null; done
	ask jmfp "$port" >/dev/null
done
ask jmlk "$port" >"$T/jmlk"
suspect=$(awk '/ [0-9]+\/[0-9]+ / { print $NF; exit }' "$T/jmlk")
assert_cmd "jmlk names a suspect ($suspect)" test -n "$suspect"
assert_cmd "jmlk: the suspect is not a zmalloc wrapper" bash -c "! grep -Eq '$wrappers' <<<'$suspect'"
assert_grep "jmlk: says which wrappers it looked past" \
	'^# Folded allocation wrappers into their callers: .*zmalloc' "$T/jmlk"
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

#!/bin/bash
# Fragmentation by allocation site inside Debian's redis-server under the
# preload agent, unmodified: 200,000 SETs of 200-byte values, then 80 % of
# the keys deleted at random (redis-cli --pipe). jmfr and
# /jemalloc/fragmentation must name the class the values are in as the
# worst, with redis's own code as its first site (the SET's argument made
# in createStringObject, through redis's sds and zmalloc), and the class's
# free regions must be stats.arenas.<i>.bins.<j>'s as jmsj reads them
# (within 1 %), and its sites' live bytes curregs x size within sampling
# error (15 %).
. "$(dirname "$0")/../lib.sh"

need redis-server redis-cli curl python3 nc.openbsd timeout jq

LG=14
python3 "$TESTS_DIR/lib/fragload.py" 39 200 "$T/load.resp" "$T/del.resp"
[ -s "$T/del.resp" ] || die "the workload's files are written"

start_redis_agent frag "MALLOC_CONF=lg_prof_sample:$LG" || finish
timeout 120 redis-cli -p "$RPORT" --pipe <"$T/load.resp" >"$T/load" 2>&1 &&
	timeout 120 redis-cli -p "$RPORT" --pipe <"$T/del.resp" >"$T/del" 2>&1 ||
	fail "the workload ran" "$(tail -3 "$T/load" "$T/del")"
assert_cmd "redis holds the 40,000 keys left" \
	test "$(redis-cli -p "$RPORT" dbsize)" = 40000

ask_when_due jmfr "$APORT" >"$T/text"
sed -n '1,40s/^/# /p' "$T/text"
assert_grep "jmfr: the method and its limits" '^# .*sampling error' "$T/text"
sleep 1
code=$(timeout 60 curl -sS -o "$T/json" -w '%{http_code}' \
	"http://127.0.0.1:$AHTTP/jemalloc/fragmentation")
assert_eq "/jemalloc/fragmentation in redis: 200" 200 "$code"
ask jmsj "$APORT" >"$T/stats"
size=$(jq '.worst[0].size' "$T/json")
# A 200-byte value is an sds of 200 + a 3-byte header + its NUL: 204 B.
cls=$(jq '[.classes[] | select(.size >= 204)][0].size' "$T/json")
assert_eq "the worst class is the values' ($cls B)" "$cls" "$size"
assert_cmd "its first site is redis's own, the SET's argument (createStringObject)" \
	jq -e '.worst[0].sites[0].stack | test("createStringObject")' "$T/json"
site=$(jq -r '.worst[0].sites[0].site' "$T/json")
case $site in
z*alloc* | ztry* | *_usable) fail "the site is named past the allocator's wrappers, as jmtp names it" "$site" ;;
*) pass "the site is named past the allocator's wrappers, as jmtp names it ($site)" ;;
esac
jq -r '.worst[0].sites[0] | "# site \(.site) \(.share) \(.stack)"' "$T/json"
frag_vs_bins "" "$T/json" "$T/stats" "$size" 0.15 '.worst[0].attributed_bytes'
assert_cmd "redis still answers PING" test "$(redis-cli -p "$RPORT" ping)" = PONG
stop_host "redis-server with the agent" "$RPID" "$RDIR/err"
finish

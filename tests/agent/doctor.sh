#!/bin/bash
# The memory doctor inside Debian's redis-server, against the
# figures redis itself reads from the same jemalloc: after a fragmenting
# workload (200,000 values of mixed sizes, 80% then deleted at random,
# through redis-cli --pipe), our allocated/active/resident are INFO
# memory's allocator_allocated/active/resident within 3% and our
# fragmentation bytes are its allocator_frag_bytes; with long decay
# (dirty_decay_ms:600000) the purge the doctor predicts is within 25% of
# what jmpg then returns.
. "$(dirname "$0")/../lib.sh"

need redis-server redis-cli curl python3 nc.openbsd timeout

# The workload as two RESP files: SETs of mixed sizes (most small, in
# many size classes; a few in large classes), then DELs of 80% of the
# keys at random (tests/lib/fragload.py); redis-cli --pipe sends them.
python3 "$TESTS_DIR/lib/fragload.py" 22 mixed "$T/load.resp" "$T/del.resp"
[ -s "$T/del.resp" ] || die "the workload's files are written"

# workload NAME: load, then delete, in redis $RPORT.
workload() {
	timeout 120 redis-cli -p "$RPORT" --pipe <"$T/load.resp" >"$T/$1.load" 2>&1 &&
		timeout 120 redis-cli -p "$RPORT" --pipe <"$T/del.resp" >"$T/$1.del" 2>&1
}

# json FILE KEY: a top-level number of the doctor's JSON.
json() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# info KEY: a figure of redis's INFO memory.
info() {
	redis-cli -p "$RPORT" info memory | tr -d '\r' | awk -F: -v k="$1" '$1 == k { print $2 }'
}

# within DESC OURS THEIRS PCT: |ours - theirs| <= PCT% of theirs.
within() {
	if python3 -c 'import sys; o, t, p = map(float, sys.argv[1:]); sys.exit(0 if abs(o - t) <= p / 100 * max(t, 1) else 1)' "$2" "$3" "$4"; then
		pass "$1: ours $2, theirs $3 (within $4%)"
	else
		fail "$1" "ours $2, theirs $3: more than $4% apart"
	fi
}

# --- (a) the same figures as redis's INFO memory ------------------------------
start_redis_agent frag || finish
workload frag || fail "the workload ran" "$(tail -3 "$T/frag.load" "$T/frag.del")"
assert_cmd "redis holds the 40,000 keys left" \
	test "$(redis-cli -p "$RPORT" dbsize)" = 40000
# Redis reads its allocator figures in its cron (every 100 ms): let it
# take one of the quiet heap, then read both back to back.
sleep 0.5
http_get "http://127.0.0.1:$AHTTP/jemalloc/doctor" "$T/a.json" ||
	fail "GET /jemalloc/doctor" "$(cat "$T/a.json" "$T/a.json.err")"
redis-cli -p "$RPORT" info memory | tr -d '\r' >"$T/a.info"
for k in allocated active resident; do
	within "$k vs allocator_$k" "$(json "$T/a.json" "$k")" \
		"$(awk -F: -v k="allocator_$k" '$1 == k { print $2 }' "$T/a.info")" 3
done
within "fragmentation bytes (active - allocated) vs allocator_frag_bytes" \
	"$(json "$T/a.json" frag_bytes)" \
	"$(awk -F: '$1 == "allocator_frag_bytes" { print $2 }' "$T/a.info")" 3
assert_cmd "the parts add up to resident" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if sum(p["bytes"] for p in d["parts"]) == d["resident"] else 1)' "$T/a.json"
assert_cmd "small-class fragmentation and large padding are the fragmentation" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["small_frag"] + d["large_pad"] == d["frag_bytes"] else 1)' "$T/a.json"
grep -E '^allocator_(allocated|active|resident|frag_bytes):' "$T/a.info" | sed 's/^/# redis: /'
redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1

# --- (b) the purge the doctor predicts is what jmpg returns -------------------
start_redis_agent decay MALLOC_CONF=dirty_decay_ms:600000 || finish
workload decay || fail "the workload ran" "$(tail -3 "$T/decay.load" "$T/decay.del")"
sleep 0.2
ask jmdr "$APORT" >"$T/jmdr"
sed 's/^/# /' "$T/jmdr"
assert_grep "jmdr says what jmpg would return" '^  - jmpg returns ~[0-9.]+ [KMG]iB now' "$T/jmdr"
assert_grep "jmdr names the long decay" 'dirty_decay_ms is 600000' "$T/jmdr"
assert_grep "jmdr names a fragmented size class, with sizes" \
	'size class [0-9]+ B is [0-9]+% used: [0-9.]+ [KMG]iB free' "$T/jmdr"
assert_grep "jmdr's table has small-slab fragmentation, with its size" \
	'^  free regions in small slabs +[0-9.]+ [KMG]iB' "$T/jmdr"
assert_grep "jmdr's table has dirty pages, with their size" \
	'^  dirty pages \(jmpg returns them\) +[0-9.]+ [KMG]iB' "$T/jmdr"
http_get "http://127.0.0.1:$AHTTP/jemalloc/doctor" "$T/b.json" ||
	fail "GET /jemalloc/doctor" "$(cat "$T/b.json" "$T/b.json.err")"
predicted=$(json "$T/b.json" purge_gain_bytes)
before=$(json "$T/b.json" resident)
ask jmpg "$APORT" >"$T/jmpg"
assert_grep "jmpg purges" '^ok: purged all arenas' "$T/jmpg"
sleep 0.05
after=$(mntr_value jemalloc_resident "$APORT")
assert_cmd "the doctor predicts a purge worth testing ($predicted bytes)" \
	test "${predicted:-0}" -gt 1048576
within "predicted purge vs resident before - after jmpg" "$predicted" \
	"$((before - ${after:-0}))" 25
redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
finish

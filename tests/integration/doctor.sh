#!/bin/bash
# The memory doctor's faces on real processes: jmdr and
# GET /jemalloc/doctor on jm4lwd (the parts add up to resident), the allow
# list governing both like the other read-only words, /metrics with the
# doctor's families through promtool with bounded series, and the page's
# "Where resident memory goes" in headless Chromium on the agent in a
# fragmented redis-server (doctor_page.py: the bar adds up to resident,
# Purge shows predicted and got).
#
#	bash doctor.sh   (JM4LWD, JM4LW_RUN from ctest)
. "$(dirname "$0")/../lib.sh"

need curl python3 promtool nc.openbsd chromium redis-server redis-cli

# jmdr and its route on jm4lwd.
case_faces() {
	start_daemon -- -l 127.0.0.1:0 || return
	ask jmdr >"$T/jmdr"
	assert_grep "jmdr: a table of where resident goes" '^resident [0-9.]+ [KMG]?i?B \(allocated ' "$T/jmdr"
	assert_grep "jmdr: the program's part" '^  allocated by the program +[0-9.]+ ' "$T/jmdr"
	assert_grep "jmdr: the residue, stated as such" '^  not explained by the figures ' "$T/jmdr"
	assert_grep "jmdr: retained and mapped apart, as virtual" '^virtual, not resident: mapped ' "$T/jmdr"
	assert_grep "jmdr: then the advice" '^advice:' "$T/jmdr"
	assert_http "GET /jemalloc/doctor" 200 doc /jemalloc/doctor
	assert_grep_F "... is JSON" "application/json" <(hheader doc Content-Type)
	assert_cmd "... with allocated, active, resident and purge_gain_bytes in bytes, the parts adding up to resident" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("allocated", "active", "resident", "purge_gain_bytes", "mapped", "retained", "dirty", "muzzy", "small_frag"):
    assert isinstance(d[k], int) and d[k] >= 0, k
assert sum(p["bytes"] for p in d["parts"]) == d["resident"]
assert d["allocated"] <= d["active"] <= d["resident"]
assert len(d["size_classes"]) >= 30 and d["arenas"]' "$T/doc.body"
	assert_http "GET /4lw/jmdr is the word's text" 200 wdoc /4lw/jmdr
	assert_grep "... the same table" '^  dirty pages \(jmpg returns them\) ' "$T/wdoc.body"

	# /metrics: promtool-clean, the families there, the series bounded.
	assert_http "GET /metrics" 200 met /metrics
	promtool check metrics <"$T/met.body" >"$T/met.lint" 2>&1
	assert_eq "promtool check metrics: no problem with the doctor's families" "0:" \
		"$?:$(cat "$T/met.lint")"
	for f in jemalloc_arena_dirty_bytes jemalloc_arena_muzzy_bytes \
		jemalloc_arena_fragmentation_bytes jemalloc_arena_utilization_ratio \
		jemalloc_size_class_fragmentation_bytes jemalloc_size_class_utilization_ratio \
		jemalloc_resident_part_bytes jemalloc_purge_gain_bytes; do
		assert_grep "/metrics has $f with HELP and TYPE" "^# TYPE $f gauge$" "$T/met.body"
	done
	n=$(grep -c '^jemalloc_size_class_utilization_ratio{' "$T/met.body")
	assert_cmd "one series per small size class ($n)" test "$n" -ge 30 -a "$n" -le 64
	n=$(grep -c '^jemalloc_arena_dirty_bytes{' "$T/met.body")
	assert_cmd "at most 17 arena series ($n)" test "$n" -ge 1 -a "$n" -le 17
	stop_daemon
}

# The allow list: jmdr is read-only, and its route follows the word.
case_allow() {
	local d
	d=$(scratch allow)
	printf 'allow = ruok,mntr\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	ask jmdr >"$d/jmdr.out"
	assert_bytes "allow=ruok,mntr: jmdr refused with ZooKeeper's line" "$d/jmdr.out" \
		'jmdr is not executed because it is not in the whitelist.\n'
	assert_http "... and /jemalloc/doctor is 403" 403 adoc /jemalloc/doctor
	assert_grep "... naming the word" 'served as jmdr, which is not in the allow list' "$T/adoc.body"
	stop_daemon
	printf 'allow = readonly\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	ask jmdr >"$d/jmdr.out"
	assert_grep "allow=readonly: jmdr served" '^advice:' "$d/jmdr.out"
	assert_http "allow=readonly: /jemalloc/doctor served" 200 rdoc /jemalloc/doctor
	stop_daemon
}

# The page, on redis fragmented with dirty pages waiting.
case_page() {
	start_redis_agent page MALLOC_CONF=dirty_decay_ms:600000,lg_prof_sample:16 || return
	python3 - "$T/load.resp" "$T/del.resp" <<'PY'
import random, sys
random.seed(22)
n = 100000
def cmd(*args):
    return "*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a), a) for a in args)
with open(sys.argv[1], "w") as f:
    for i in range(n):
        f.write(cmd("SET", "k%d" % i, "v" * random.randint(8, 400)))
keys = list(range(n))
random.shuffle(keys)
with open(sys.argv[2], "w") as f:
    for i in keys[: n * 8 // 10]:
        f.write(cmd("DEL", "k%d" % i))
PY
	# The worker's first job (here a profile, as the page asks for one)
	# returns the host's dirty pages once, as it sets up (jemalloc 5.3,
	# with redis's background threads): over before the workload, so the
	# dirty pages the page shows wait for its Purge.
	http_get "http://127.0.0.1:$AHTTP/jemalloc/profile?format=collapsed" "$T/first" ||
		fail "a first profile" "$(cat "$T/first.err")"
	timeout 120 redis-cli -p "$RPORT" --pipe <"$T/load.resp" >/dev/null 2>&1
	timeout 120 redis-cli -p "$RPORT" --pipe <"$T/del.resp" >/dev/null 2>&1
	run_page doctor_page.py 10 180 "$AHTTP" "$RDIR"
	if [ -n "${PAGE_SHOTS:-}" ]; then
		mkdir -p "$PAGE_SHOTS" && cp "$RDIR/doctor.png" "$PAGE_SHOTS"/
	fi
	redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
}

case_faces
case_allow
case_page
finish

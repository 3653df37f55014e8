#!/bin/bash
# dump_on_memory in a real memory cgroup: redis-server under the agent in
# a child of this process's cgroup v1 memory group, limited to 256 MiB,
# with dump_on_memory = 80%. Filled past the threshold (never near the
# limit), it dumps once (NAME.o.heap, pinned read-only) with its log line
# and counters; filled more, no second dump; emptied below and filled
# again, the second. A flood of jmfp under dump_keep = 2 leaves both
# memory dumps until jmls lists them; then they rotate away. Skipped
# (exit 77) where no child memory group can be made; the group is removed
# at the end.
. "$(dirname "$0")/../lib.sh"

need redis-server redis-cli nc.openbsd timeout curl promtool jeprof

MiB=$((1 << 20))
LIMIT=$((256 * MiB))
rel=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
base=/sys/fs/cgroup/memory${rel%/}
CG=$base/jm4lw-memory-test.$$
if [ -z "$rel" ] || ! mkdir "$CG" 2>/dev/null; then
	echo "skip - no writable cgroup v1 memory controller here ($base)"
	rm -rf "$T"
	exit 77
fi
# After every process started here is gone (the group must be empty).
at_exit "rmdir '$CG' 2>/dev/null || echo '# cannot remove $CG' >&2"
if ! echo "$LIMIT" >"$CG/memory.limit_in_bytes" 2>/dev/null; then
	echo "skip - cannot set memory.limit_in_bytes in $CG"
	rmdir "$CG"
	rm -rf "$T"
	exit 77
fi

cat >"$T/memory.conf" <<EOF
dump_on_memory = 80%
memory_check_interval = 1
dump_min_interval = 0
dump_keep = 2
EOF
threshold=$((LIMIT * 80 / 100))

# Freed memory goes back at once (no decay), so usage falls when redis
# deletes; the shell moves itself into the group, then becomes jm4lw-run.
# shellcheck disable=SC2016
start_redis_agent memory JM4LW_CONF="$T/memory.conf" \
	MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0 \
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" || finish
HTTP_PORT=$AHTTP
assert_cmd "redis-server runs in the child group" \
	grep -qx "$RPID" "$CG/cgroup.procs"

usage() { cat "$CG/memory.usage_in_bytes"; }
mntr() { mntr_value "$1" "$APORT"; }
odumps() { find "$RDIR" -maxdepth 1 -name 'jm4lw.*.o.heap' | sort; }


# fill UPTO: 16 MiB strings (SETRANGE zero-fills them) until the group's
# usage is at least UPTO; never more than 16 MiB past it.
n=0
fill() {
	while [ "$(usage)" -lt "$1" ]; do
		n=$((n + 1))
		redis-cli -p "$RPORT" setrange "big$n" $((16 * MiB - 1)) x >/dev/null
	done
}

assert_cmd "the watcher reads the group's limit (cgroup_v1, 256 MiB)" \
	wait_mntr jm4lw_memory_limit -eq "$LIMIT" "$APORT"
assert_eq "mntr says where the limit comes from" cgroup_v1 \
	"$(mntr jm4lw_memory_source)"
assert_eq "the threshold is 80% of the limit" "$threshold" \
	"$(mntr jm4lw_memory_threshold)"
assert_eq "no memory dump below the threshold" "" "$(odumps)"

fill "$threshold"
echo "# filled to $(($(usage) / MiB)) MiB of $((LIMIT / MiB)) MiB"
assert_cmd "crossing 80%: one memory dump (.o.heap)" \
	wait_mntr jm4lw_memory_dumps_cgroup_v1 -eq 1 "$APORT"
first=$(odumps)
assert_cmd "its file is there ($first)" test -s "$first"
assert_grep "its log line names the trigger and the figures" \
	"memory dump: ${first//./\\.} \\(cgroup v1: usage [0-9.]+ MiB of 256\\.0 MiB limit, [0-9.]+% >= 80%\\)" \
	"$RDIR/err"
assert_eq "it is pinned: read-only until listed" 400 "$(stat -c %a "$first")"
curl -s "http://127.0.0.1:$HTTP_PORT/metrics" >"$T/metrics"
assert_grep "/metrics counts it by trigger" \
	'^jm4lw_memory_dumps_total\{trigger="cgroup_v1"\} 1$' "$T/metrics"
assert_grep "/metrics has the limit" "^jm4lw_memory_limit_bytes $LIMIT\$" \
	"$T/metrics"
assert_cmd "promtool accepts /metrics" \
	bash -c "promtool check metrics <'$T/metrics'"
jeprof --text /usr/bin/redis-server "$first" >"$T/jeprof" 2>"$T/jeprof.err"
assert_cmd "jeprof reads the memory dump and names redis's allocations" \
	grep -qE 'zmalloc|sdsnewlen|_sdsMakeRoomFor|sdsMakeRoomFor|sdsgrowzero' \
	"$T/jeprof"

# More, still above: no second dump. Once mntr shows the new usage the
# watcher has judged it; two readings more to be sure.
fill $(($(usage) + 8 * MiB))
echo "# filled to $(($(usage) / MiB)) MiB"
above=$(($(usage) - 4 * MiB))
wait_mntr jm4lw_memory_usage -ge "$above" "$APORT"
sleep 2
assert_eq "still above: no second memory dump" 1 \
	"$(mntr jm4lw_memory_dumps_cgroup_v1)"
assert_eq "still one .o.heap" "$first" "$(odumps)"

# Below 95% of the threshold, then across again: the second.
redis-cli -p "$RPORT" flushall >/dev/null
assert_cmd "emptied: the watcher sees usage below 95% of the threshold" \
	wait_mntr jm4lw_memory_usage -lt $((threshold - threshold / 20)) "$APORT"
fill "$threshold"
assert_cmd "crossing again: the second memory dump" \
	wait_mntr jm4lw_memory_dumps_cgroup_v1 -eq 2 "$APORT"
assert_eq "two .o.heap dumps" 2 "$(odumps | wc -l)"
redis-cli -p "$RPORT" flushall >/dev/null

# A flood of jmfp under dump_keep = 2: the memory dumps stay.
for i in 1 2 3 4 5; do
	ask_when_due jmfp "$APORT" >"$T/jmfp.$i"
done
assert_cmd "the flood's dumps were written" \
	grep -q '\.w\.heap$' "$T/jmfp.5"
assert_eq "dump_keep kept two of the flood" 2 \
	"$(find "$RDIR" -maxdepth 1 -name 'jm4lw.*.w.heap' | wc -l)"
assert_eq "both memory dumps survived the flood" 2 "$(odumps | wc -l)"

# Listed: released, rotated by the next dumps.
ask jmls "$APORT" >"$T/jmls"
assert_grep "jmls lists the memory dumps as memory" "${first##*/}.*memory" \
	"$T/jmls"
assert_eq "listed: no longer read-only" 600 "$(stat -c %a "$first")"
ask_when_due jmfp "$APORT" >/dev/null
ask_when_due jmfp "$APORT" >/dev/null
assert_eq "released, they rotate away with the next dumps" "" "$(odumps)"
assert_cmd "redis still serves" test "$(redis-cli -p "$RPORT" ping)" = PONG
finish

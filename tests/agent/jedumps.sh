#!/bin/bash
# jemalloc's own dumps are ours: Debian's redis-server under jm4lw-run
# (the preload agent), its MALLOC_CONF asking jemalloc for dumps of its
# own. lg_prof_interval's dumps land in dump_dir, not redis's working
# directory, and are kept like ours (jmls's cause, dump_keep, the leak
# index, dump_symbolized, jmlk, jmdf, the log, mntr, /metrics, the dumps
# JSON); prof_gdump's are held to one per dump_min_interval; prof_final's
# lands in dump_dir when redis stops.
. "$(dirname "$0")/../lib.sh"

need redis-server redis-cli nc.openbsd curl python3 timeout

# fill PORT KEYPREFIX N: N keys of 200 bytes, by a script on redis's
# side (no DEBUG POPULATE: Debian's redis refuses DEBUG by default).
fill() {
	timeout $((120 * SLOW)) redis-cli -p "$1" eval \
		"for i=1,tonumber(ARGV[1]) do redis.call('set', KEYS[1]..i, string.rep('x', 200)) end return 1" \
		1 "$2" "$3" >/dev/null
}

# adopted DIR PID LETTER CAUSE: has every dump jemalloc numbered LETTER
# since the first one adopted (those of redis's start came before the
# agent watched) its "CAUSE dump: PATH" line? Retention may have deleted
# files, never the newest, whose number says how many were written.
adopted() {
	local first last lines
	first=$(sed -n "s/^jm4lw agent\[$2\]: $4 dump: .*\.$3\([0-9]*\)\.heap$/\1/p" "$RDIR/err" | head -1)
	last=$(ls "$1" | sed -n "s/^jm4lw\.$2\.[0-9]*\.$3\([0-9]*\)\.heap$/\1/p" | sort -n | tail -1)
	lines=$(grep -c "^jm4lw agent\[$2\]: $4 dump: " "$RDIR/err")
	[ -n "$first" ] && [ -n "$last" ] && [ $((last - first + 1)) = "$lines" ]
}

# wait_log_in FILE ERE: FILE has a line matching ERE, within 20 s.
wait_log_in() {
	for _ in $(seq $((100 * SLOW))); do
		grep -Eq -- "$2" "$1" && return 0
		sleep 0.2
	done
	return 1
}

# wait_adopted DIR PID LETTER CAUSE: adopted, within 120 s.
wait_adopted() {
	for _ in $(seq $((600 * SLOW))); do
		adopted "$@" && return 0
		sleep 0.2
	done
	return 1
}

# --- lg_prof_interval: dumps every 64 MiB allocated ---
# (Indexing and symbolizing one of redis's dumps allocates ~20 MiB: below
# half the interval they are done, see the next part.)
D=$T/dumps-i
mkdir -m 700 "$D"
printf 'dump_keep = 3\ndump_symbolized = on\n' >"$T/i.conf"
start_redis_agent interval JM4LW_DUMP_DIR="$D" JM4LW_CONF="$T/i.conf" \
	MALLOC_CONF=lg_prof_interval:26 || finish
rpid=$RPID
assert_grep "interval: the agent says where jemalloc's dumps go" \
	"jemalloc's own dumps \\(lg_prof_interval, prof_gdump, prof_final\\) go to $(readlink -f "$D")/jm4lw\\.\\*" "$RDIR/err"
fill "$RPORT" a 600000
assert_cmd "interval: each interval dump since the agent watched was taken in" \
	wait_adopted "$D" "$rpid" i interval
n=$(mntr_value jm4lw_jemalloc_interval_dumps "$APORT")
assert_cmd "interval: mntr counts jemalloc's interval dumps ($n >= 3)" \
	test "${n:-0}" -ge 3
assert_eq "interval: one 'interval dump: PATH' log line each" "$n" \
	"$(grep -c "^jm4lw agent\[$rpid\]: interval dump: $D/jm4lw\.$rpid\.[0-9]*\.i[0-9]*\.heap$" "$RDIR/err")"
assert_eq "interval: none in redis's working directory" "" \
	"$(cd "$RDIR" && ls -- *.heap 2>/dev/null)"
ls "$D" >"$T/i.ls"
assert_grep "interval: jemalloc's dumps are in dump_dir" \
	"^jm4lw\\.$rpid\\.[0-9]+\\.i[0-9]+\\.heap$" "$T/i.ls"
assert_eq "interval: jemalloc's dumps are 0600 once taken in, as ours" "600" \
	"$(cd "$D" && stat -c %a -- *.i*.heap | sort -u | tr '\n' ' ' | sed 's/ $//')"
heaps=$(grep -c '\.heap$' "$T/i.ls")
assert_cmd "interval: dump_keep=3 holds ($heaps dumps kept of $n)" \
	test "$heaps" -le 3
assert_cmd "interval: retention deleted the older ones (mntr jm4lw_dumps_deleted > 0)" \
	test "$(mntr_value jm4lw_dumps_deleted "$APORT")" -gt 0
ask jmls "$APORT" >"$T/i.jmls"
assert_eq "interval: jmls lists every kept dump, each with cause interval" \
	"$(grep -c "\\.i[0-9]*\\.heap$" "$T/i.ls")" \
	"$(awk -F '\t' 'NR > 1 && $1 ~ /\.i[0-9]+\.heap$/ && $4 == "interval"' "$T/i.jmls" | wc -l)"
newest=$(awk -F '\t' 'NR == 2 { print $1 }' "$T/i.jmls")
assert_eq "interval: jmdf's base (mntr jm4lw_last_dump) is the newest" \
	"$newest" "$(mntr_value jm4lw_last_dump "$APORT")"
# Made in the adoption's job, before its log line. Where indexing costs
# more than half of the 64 MiB (debug info of redis installed, say), the
# agent stops it and says so: the next part's case.
if grep -q "which would set off the next" "$RDIR/err"; then
	skip "interval: the symbolized companion and leak index ($(grep -o "indexing one allocates [0-9]* KiB" "$RDIR/err"), over half of lg_prof_interval:26 here)"
else
	assert_cmd "interval: its symbolized companion (dump_symbolized)" \
		grep -q '^--- symbol' "$newest.symbolized"
	assert_cmd "interval: its leak index ($newest.trend)" test -s "$newest.trend"
fi
ask jmlk "$APORT" >"$T/i.jmlk"
assert_grep "interval: jmlk reads the kept interval dumps" \
	'^# [0-9]+ leak suspects? over [0-9]+ dumps' "$T/i.jmlk"
ask_when_due jmdf "$APORT" >"$T/i.jmdf"
assert_grep "interval: jmdf compares with the newest interval dump" \
	"^# growth since $newest," "$T/i.jmdf"
http_get "http://127.0.0.1:$AHTTP/jemalloc/dumps" "$T/i.json"
assert_cmd "interval: /jemalloc/dumps says cause interval" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["dumps"]
i = [x for x in d if ".i" in x["name"]]
assert i and all(x["cause"] == "interval" for x in i), d' "$T/i.json"
http_get "http://127.0.0.1:$AHTTP/metrics" "$T/i.metrics"
assert_cmd "interval: /metrics has jm4lw_jemalloc_interval_dumps_total" \
	grep -Eq '^jm4lw_jemalloc_interval_dumps_total [1-9][0-9]*$' "$T/i.metrics"
# A person's jmfp while a jemalloc dump is being taken in waits for it
# and runs next, never "in progress" (adoption is nobody's job): ask
# through a second fill, when dumps come and are taken in (after the
# checks above: these dumps of ours rotate the interval dumps away).
(
	for i in 1 2 3 4 5 6 7 8; do
		ask jmfp "$APORT" >"$T/i.jmfp.$i"
		sleep 1.2
	done
) &
asker=$!
fill "$RPORT" b 600000
wait "$asker"
assert_eq "interval: no jmfp during the fill was refused for a dump taken in" "" \
	"$(cat "$T"/i.jmfp.* | grep 'in progress')"
assert_eq "interval: ... each got its dump's path, or a refusal for the rate" "" \
	"$(cat "$T"/i.jmfp.* | grep -Ev "^$(readlink -f "$D")/jm4lw\.$rpid\.[0-9]*\.w\.heap$|^error: jmfp refused: the last dump was [0-9.]+ s ago and dump_min_interval is")"
assert_cmd "interval: redis still serves" \
	test "$(redis-cli -p "$RPORT" get a1 | wc -c)" -gt 200
redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
wait_exit "$rpid" $((30 * SLOW))

# --- lg_prof_interval below what indexing a dump allocates (8 MiB) ---
# lg_prof_interval counts our allocations too: indexing each dump would
# set off the next one without end. The first one's cost stops it.
D=$T/dumps-s
mkdir -m 700 "$D"
start_redis_agent small JM4LW_DUMP_DIR="$D" MALLOC_CONF=lg_prof_interval:23 ||
	finish
rpid=$RPID
fill "$RPORT" a 100000
assert_cmd "small interval: each interval dump was taken in, and that ended" \
	wait_adopted "$D" "$rpid" i interval
assert_grep "small interval: one line says indexing stops, and why" \
	"^jm4lw agent\\[$rpid\\]: jemalloc's interval dumps come every 8192 KiB allocated and indexing one allocates [0-9]+ KiB, which would set off the next" \
	"$RDIR/err"
assert_eq "small interval: the line comes once" 1 \
	"$(grep -c "which would set off the next" "$RDIR/err")"
redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
wait_exit "$rpid" $((30 * SLOW))

# --- prof_gdump, held to one per dump_min_interval; prof_final ---
D=$T/dumps-u
mkdir -m 700 "$D"
printf 'dump_min_interval = 3600\n' >"$T/u.conf"
start_redis_agent gdump JM4LW_DUMP_DIR="$D" JM4LW_CONF="$T/u.conf" \
	MALLOC_CONF=prof_gdump:true,prof_final:true || finish
rpid=$RPID
# A start is all new highs: jemalloc wrote 30-odd gdump dumps before the
# agent's constructor ran, none of them seen by the module. jm4lw-run
# starts redis with prof_gdump off and the module turns it on once it
# watches dump_dir, so the first one is the module's to see, and the limit
# holds the rest from there (those written before the loop saw the first
# get by: 2 to 5 measured, as for any new high later). An idle redis
# may make no new high before the fill, so u0 is looked for after it.
fill "$RPORT" a 100000
assert_cmd "gdump: the first gdump dump came after the module watched (u0 taken in)" \
	wait_log_in "$RDIR/err" "^jm4lw agent\\[$rpid\\]: gdump dump: $D/jm4lw\\.$rpid\\.0\\.u0\\.heap\$"
for _ in $(seq $((100 * SLOW))); do
	[ "$(mntr_value jm4lw_gdump_paused "$APORT")" = 1 ] && break
	sleep 0.2
done
assert_eq "gdump: a prof_gdump dump held prof.gdump off (mntr jm4lw_gdump_paused)" \
	1 "$(mntr_value jm4lw_gdump_paused "$APORT")"
assert_cmd "gdump: each gdump dump since the agent watched was taken in" \
	wait_adopted "$D" "$rpid" u gdump
assert_eq "gdump: mntr counts them" \
	"$(grep -c "^jm4lw agent\[$rpid\]: gdump dump: " "$RDIR/err")" \
	"$(mntr_value jm4lw_jemalloc_gdumps "$APORT")"
u1=$(ls "$D" | grep -c "^jm4lw\.$rpid\.[0-9]*\.u[0-9]*\.heap$")
a1=$(mntr_value jemalloc_active "$APORT")
fill "$RPORT" b 300000
a2=$(mntr_value jemalloc_active "$APORT")
assert_cmd "gdump: the second fill reached new highs (active $a1 -> $a2)" \
	test "$a2" -gt "$a1"
assert_eq "gdump: no prof_gdump dump within dump_min_interval ($u1 before the second fill)" \
	"$u1" "$(ls "$D" | grep -c "^jm4lw\.$rpid\.[0-9]*\.u[0-9]*\.heap$")"
assert_eq "gdump: still paused once" 1 "$(mntr_value jm4lw_gdump_paused "$APORT")"
redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
wait_exit "$rpid" $((30 * SLOW))
f=$D/jm4lw.$rpid.$(ls "$D" | sed -n "s/^jm4lw\.$rpid\.\([0-9]*\)\.f\.heap$/\1/p").f.heap
assert_cmd "final: prof_final's dump is in dump_dir ($f)" \
	grep -q '^heap_v2/' "$f"
assert_eq "final: none in redis's working directory" "" \
	"$(cd "$RDIR" && ls -- *.heap 2>/dev/null)"
finish

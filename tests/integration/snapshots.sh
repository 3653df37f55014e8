#!/bin/bash
# Rolling profile snapshots: "what grew in the last minutes" and "what was
# in the heap at the peak", asked after the fact. The host
# tests/host/snap_host allocates nothing until asked: big1 puts 8 MiB at
# snap_host_first, big2 4 MiB at snap_host_second, fre1 frees the first
# site's; the module takes a snapshot every second. Then:
#   - ?since= to a moment between big1 and big2 names exactly the second
#     site with 4 MiB, and agrees with jm4lw-prof --base OLD NEW over two
#     kept dumps taken at those moments; /debug/pprof/heap?since= too, as
#     go tool pprof reads it;
#   - jmgr (the oldest snapshot within 5 minutes, before big1) names both;
#   - after fre1, ?at=peak and jmpk show the snapshot before the free
#     (the first site's 8 MiB, which the live heap no longer has), with
#     how near the history's highest stats.allocated it is;
#   - since= beyond the ring, a bad span, since with base: a 400 with one
#     line naming the keys; snapshots off, profiling inactive: an error
#     saying so;
#   - a small snapshot_max_bytes keeps the ring under it;
#   - with prof_gdump on, a spike between two snapshots (spk1) is the peak
#     jmpk and ?at=peak show: jemalloc's gdump dump of the highest sampled
#     total, named, beside the snapshots;
#   - a fork child has no snapshot of its parent's; a reload to
#     snapshot_count 0 frees the ring (jm4lwd, on SIGHUP).
#
#	bash snapshots.sh   (SNAP_HOST=path/to/snap_host, else build/)
#
# Not run in sanitizer builds: the sanitizer's malloc serves the heap.
. "$(dirname "$0")/../lib.sh"

JM4LW_PROF=${JM4LW_PROF:-$ROOT/build/jm4lw-prof}
SNAP_HOST=${SNAP_HOST:-$ROOT/build/tests/host/snap_host}
LEAK_HOST=$SNAP_HOST # start_leak_host starts it the same way

need nc.openbsd curl timeout go

# start DIR CONF [MALLOC_CONF]: snap_host in DIR with CONF (sampling on,
# lg_prof_sample:12, unless MALLOC_CONF says otherwise); sets PID, PORT,
# HPORT.
start() {
	mkdir -p "$1"
	printf '%s\n' "$2" >"$1/conf"
	start_leak_host "$1" 12 "${3:-}" || die "snap_host is listening" "$(cat "$1/err")"
	PID=$LPID
	PORT=$LPORT
	HPORT=$LHPORT
}

# host_do WORD N: ask the host WORD and wait until it has done it.
host_do() {
	ask "$1" >/dev/null
	for _ in $(seq 100); do
		grep -q "^done $2\$" "$D/out" && return 0
		sleep 0.05
	done
	fail "snap_host did $1" "$(cat "$D/out")"
}

# get URL FILE: the body into FILE, the status on stdout.
get() {
	timeout 60 curl -sS -o "$2" -w '%{http_code}' "http://127.0.0.1:$HPORT$1"
}

# mb FUNCTION FILE: the flat MB of FUNCTION's row in a text view.
mb() {
	awk -v f="$1" '$6 == f { print $1; exit }' "$2"
}

# Ring cap: a host of its own, started first so it has snapshots by the
# time the cases below end; nothing but the module allocates there.
D2=$(scratch snapshots_cap)
D=$D2
start "$D2" "snapshot_interval = 1
snapshot_count = 30
snapshot_max_bytes = 1000
dump_min_free = 0"
CAP_PID=$PID CAP_PORT=$PORT
host_do big1 1
CAP_T0=$(date +%s)

D=$(scratch snapshots)
start "$D" "snapshot_interval = 1
snapshot_count = 60
dump_min_interval = 0
dump_min_free = 0
history_interval = 1"

sleep 1.5 # a snapshot before big1
host_do big1 1
sleep 4 # snapshots after big1
OLD=$(ask jmfp)
T_OLD=$(date +%s.%N)
sleep 1.5
host_do big2 2
sleep 1.5
NEW=$(ask jmfp)
[ -f "$OLD" ] && [ -f "$NEW" ] || die "two kept dumps" "$OLD" "$NEW"

# Growth since the snapshot taken at OLD's moment (or just before).
since=$(awk -v a="$T_OLD" -v b="$(date +%s.%N)" 'BEGIN { s = b - a; print int(s) + (s > int(s)) }')
code=$(get "/jemalloc/profile?since=${since}s&format=text" "$D/since")
assert_eq "?since=${since}s answers 200" 200 "$code"
assert_grep "its heading names the snapshot and its age" \
	'^# growth since the snapshot of [0-9T:-]+Z \([0-9]+ s ago, [0-9]+ of [0-9]+ kept\)' "$D/since"
assert_eq "growth since then: snap_host_second, 4 MiB" 4.0 "$(mb snap_host_second "$D/since")"
first=$(mb snap_host_first "$D/since")
if [ -z "$first" ] || [ "$first" = 0.0 ] || [ "$first" = -0.0 ]; then
	pass "growth since then: nothing at snap_host_first"
else
	fail "growth since then: nothing at snap_host_first" "$(head -8 "$D/since")"
fi
"$JM4LW_PROF" --base "$OLD" "$NEW" >"$D/base" 2>"$D/base.err"
assert_eq "jm4lw-prof --base OLD NEW agrees: snap_host_second" \
	"$(mb snap_host_second "$D/base")" "$(mb snap_host_second "$D/since")"
assert_eq "jm4lw-prof --base OLD NEW agrees: the total" \
	"$(awk '/^Total:/ { print $2; exit }' "$D/base")" \
	"$(awk '/^Total:/ { print $2; exit }' "$D/since")"
# Every view that takes a base takes since=.
code=$(get "/jemalloc/profile?since=${since}s&format=collapsed" "$D/since.col")
assert_eq "?since= with format=collapsed answers 200" 200 "$code"
assert_grep "collapsed, old and new: snap_host_second from 0 to 4 MiB" \
	';snap_host_second 0 4194304$' "$D/since.col"
assert_grep "collapsed, old and new: snap_host_first 8 MiB in both" \
	';snap_host_first 8388608 8388608$' "$D/since.col"
# Collapsed has no heading: a header says which snapshot it is from.
timeout 60 curl -sS -o /dev/null -D "$D/since.hdr" \
	"http://127.0.0.1:$HPORT/jemalloc/profile?since=${since}s&format=collapsed"
assert_grep "X-Jm4lw-Base names the snapshot and its age" \
	'^X-Jm4lw-Base: the snapshot of [0-9T:-]+Z \([0-9]+ s ago, [0-9]+ of [0-9]+ kept\)' "$D/since.hdr"

# Go's route too: pprof of the difference, read by go tool pprof.
since=$(awk -v a="$T_OLD" -v b="$(date +%s.%N)" 'BEGIN { s = b - a; print int(s) + (s > int(s)) }')
code=$(get "/debug/pprof/heap?since=${since}s" "$D/since.pb")
assert_eq "/debug/pprof/heap?since=${since}s answers 200" 200 "$code"
go tool pprof -top -sample_index=inuse_space "$D/since.pb" >"$D/since.top" 2>&1
assert_grep "go tool pprof -top: snap_host_second grew 4MB" \
	'^ +4(\.00)?MB .* snap_host_second$' "$D/since.top"
assert_no_grep "go tool pprof -top: snap_host_first did not" \
	'^ +[1-9][0-9.]*[kMG]B .* snap_host_first$' "$D/since.top"
code=$(get "/debug/pprof/heap?since=5m&seconds=5" "$D/both.pb")
assert_eq "/debug/pprof/heap: since= with seconds= is a 400" 400 "$code"

# jmgr: the oldest snapshot within 5 minutes, before big1.
ask jmgr >"$D/jmgr"
assert_eq "jmgr: snap_host_first grew 8 MiB" 8.0 "$(mb snap_host_first "$D/jmgr")"
assert_eq "jmgr: snap_host_second grew 4 MiB" 4.0 "$(mb snap_host_second "$D/jmgr")"
# The module's one job is used again for the next word: a view after
# jmgr is the live heap, drawn by the view, not by jmgr's renderer.
ask jmtp >"$D/after_jmgr"
assert_grep "a jmtp after jmgr is the live heap, not a growth" \
	'^# live heap' "$D/after_jmgr"
assert_no_grep "and says nothing of a snapshot" '^# growth since the snapshot' \
	"$D/after_jmgr"
assert_grep "jmgr says what the ring costs" \
	'^# snapshots: [0-9]+ kept \([0-9]+ taken, [0-9]+ dropped\) in [0-9]+ bytes \(snapshot_max_bytes [0-9]+\), [0-9]+ stacks shared' "$D/jmgr"

# Refusals: one line each, naming the keys.
code=$(get "/jemalloc/profile?since=2h&format=text" "$D/old")
assert_eq "?since= beyond the ring is a 400" 400 "$code"
assert_grep "it says how old the oldest is and the keys" \
	'no snapshot is 7200 s old: the oldest is .* old .*snapshot_count 60' "$D/old"
# Ages to a tenth, and every snapshot kept: "no snapshot is 5 s old: the
# oldest is 5 s old" (4.6 s, rounded) read as a contradiction.
assert_grep "it says the ages of the snapshots kept, to a tenth of a second" \
	'the oldest is [0-9]+\.[0-9] s old; [0-9]+ kept, [0-9]+\.[0-9] s, [0-9]+\.[0-9] s, [0-9]+\.[0-9] s, \.\.\., [0-9]+\.[0-9] s old \(' "$D/old"
code=$(get "/jemalloc/profile?since=5x" "$D/bad")
assert_eq "a bad span is a 400" 400 "$code"
assert_grep_F "it says what a span is" 'want a span like 60s, 5m or 1h' "$D/bad"
code=$(get "/jemalloc/profile?since=5m&base=previous" "$D/both")
assert_eq "since= with base= is a 400" 400 "$code"
code=$(get "/jemalloc/profile?since=&base=x" "$D/both2")
assert_eq "since= with a base= of no meaning is a 400" 400 "$code"
assert_grep "it says the two cannot be combined, before what either value is" \
	'base= and since= cannot be combined' "$D/both2"

# The peak: after fre1, the snapshot before it.
host_do fre1 3
sleep 2
ask jmtp >"$D/now"
assert_eq "control: the live heap has nothing at snap_host_first" "" "$(mb snap_host_first "$D/now")"
code=$(get "/jemalloc/profile?at=peak&format=text" "$D/peak")
assert_eq "?at=peak answers 200" 200 "$code"
assert_eq "the peak holds snap_host_first's 8 MiB" 8.0 "$(mb snap_host_first "$D/peak")"
assert_eq "the peak holds snap_host_second's 4 MiB" 4.0 "$(mb snap_host_second "$D/peak")"
timeout 60 curl -sS -o /dev/null -D "$D/peak.hdr" \
	"http://127.0.0.1:$HPORT/jemalloc/profile?at=peak&format=collapsed"
assert_grep "at=peak's X-Jm4lw-Base names the heading's snapshot" \
	"^X-Jm4lw-Base: $(sed -n 's/^# the heap at the peak: \(the snapshot of [0-9T:-]*Z\) .*/\1/p' "$D/peak")" "$D/peak.hdr"
curl -sS -D "$D/live.hdr" -o /dev/null "http://127.0.0.1:$HPORT/jemalloc/profile?format=collapsed"
assert_no_grep "the live heap's answer has no X-Jm4lw-Base" '^X-Jm4lw-Base' "$D/live.hdr"
assert_grep "it says which snapshot and its stats.allocated" \
	'^# the heap at the peak: the snapshot of [0-9T:-]+Z \([0-9]+ s ago, [0-9]+ of [0-9]+ kept\), stats.allocated [0-9.]+ MiB' "$D/peak"
# The history reads stats.allocated every history_interval: it may have
# missed the snapshot's moment (then the snapshot is the highest seen).
assert_grep "and how near the history's true peak it is" \
	'^# (the true peak in that time .*: [0-9.]+ MiB at [0-9T:-]+Z; this snapshot holds [0-9.]+ % of it|the history.s highest figure in that time .* is [0-9.]+ MiB, below this snapshot.s: this snapshot is the highest seen)$' "$D/peak"
ask jmpk >"$D/jmpk"
assert_eq "jmpk: the same peak" 8.0 "$(mb snap_host_first "$D/jmpk")"
# Profiling stopped: the snapshots kept still answer, and say so.
ask jmdp >/dev/null
ask jmpk >"$D/jmpk.off"
assert_grep "after jmdp, jmpk says profiling is inactive now" \
	'^# profiling is inactive now \(prof.active false\)' "$D/jmpk.off"
assert_eq "and still shows the peak" 8.0 "$(mb snap_host_first "$D/jmpk.off")"

# A fork child has its own heap from now on: its module answers with no
# snapshot of its parent's. (Profiling is inactive here since jmdp, in
# the child too, so it takes none of its own either.)
ask frk1 >"$D/fork"
for _ in $(seq 100); do
	grep -q '^child ' "$D/out" && break
	sleep 0.1
done
cpid=$(sed -n 's/^child \([0-9]*\) listening on .*/\1/p' "$D/out" | head -1)
CPORT=$(sed -n 's/^child [0-9]* listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$D/out" | head -1)
[ -n "$CPORT" ] || die "frk1: the child listens" "$(cat "$D/fork" "$D/out" "$D/err")"
track "$cpid"
ask jmgr "$CPORT" >"$D/child.jmgr"
assert_grep "a fork child's jmgr has no snapshot of its parent's" \
	'^error: .*no snapshot yet: profiling is inactive' "$D/child.jmgr"
ask jmpk "$CPORT" >"$D/child.jmpk"
assert_grep "nor has its jmpk" '^error: .*no snapshot yet' "$D/child.jmpk"
kill -TERM "$cpid"
wait_exit "$cpid" 10 >/dev/null 2>&1
ask jmpk >"$D/jmpk.parent"
assert_eq "control: the parent's jmpk still shows its peak" 8.0 "$(mb snap_host_first "$D/jmpk.parent")"

# The ring under a small cap: the oldest dropped, the bytes at most
# snapshot_max_bytes.
PORT=$CAP_PORT
ask jmpk >"$D2/jmpk"
kept=$(sed -n 's/^# snapshots: \([0-9]*\) kept (\([0-9]*\) taken, \([0-9]*\) dropped) in \([0-9]*\) bytes (snapshot_max_bytes \([0-9]*\)).*/\1 \2 \3 \4 \5/p' "$D2/jmpk")
read -r n taken dropped b cap <<<"$kept"
# Here history_interval is 10 s and snapshots 1 s apart: the history can
# miss what a snapshot saw, and the answer never says "holds 6017.5 %".
held=$(sed -n 's/.*this snapshot holds \([0-9.]*\) % of it$/\1/p' "$D2/jmpk")
if [ -z "$held" ] || awk -v h="$held" 'BEGIN { exit !(h <= 100) }'; then
	pass "jmpk never holds more than 100 % of the history's peak (${held:-the snapshot is the highest seen})"
else
	fail "jmpk never holds more than 100 % of the history's peak" "$(head -5 "$D2/jmpk")"
fi
if [ -n "$kept" ] && [ "$b" -le "$cap" ] && [ "$n" -ge 1 ] && [ "$dropped" -ge 1 ] &&
	[ $((n + dropped)) = "$taken" ]; then
	pass "snapshot_max_bytes 1000: $n kept in $b bytes, $dropped of $taken dropped"
else
	fail "snapshot_max_bytes 1000 keeps the ring under it, dropping the oldest" \
		"$(head -5 "$D2/jmpk")" "after $(($(date +%s) - CAP_T0)) s"
fi
stop_host snap_host "$CAP_PID" "$D2/err"
PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$D/out")
stop_host snap_host "$PID"

# jemalloc's gdump dumps are candidates beside the snapshots: spk1 puts
# 32 MiB up and down within one callback, between two snapshots, and
# prof_gdump wrote a dump at each new high on the way up.
D=$(scratch snapshots_gdump)
start "$D" "$(printf 'snapshot_interval = 1\ndump_min_interval = 0\ndump_min_free = 0')" \
	prof:true,prof_active:true,lg_prof_sample:12,prof_gdump:true
# A snapshot before the spike (the worker may be busy taking in
# jemalloc's dumps of the start a while).
for _ in $(seq 100); do
	ask jmpk >"$D/jmpk0"
	grep -q '^# snapshots: [1-9]' "$D/jmpk0" && break
	sleep 0.2
done
assert_grep "control: a snapshot before the spike" '^# snapshots: [1-9]' "$D/jmpk0"
host_do spk1 4
sleep 1.5 # and after it
ls "$D/dumps" >"$D/ls"
assert_grep "control: jemalloc wrote gdump dumps into dump_dir" \
	"^jm4lw\.$PID\.[0-9]+\.u[0-9]+\.heap\$" "$D/ls"
ask jmtp >"$D/now"
assert_eq "control: the live heap has nothing at snap_host_spike" "" "$(mb snap_host_spike "$D/now")"
ask jmpk >"$D/jmpk"
assert_grep "jmpk: the peak is a gdump dump, named, with the figure it is judged by" \
	"^# the heap at the peak: jemalloc's gdump dump jm4lw\.$PID\.[0-9]+\.u[0-9]+\.heap of [0-9T:-]+Z \([0-9]+ s ago; a new high, [0-9]+ in that time\), its sampled total [0-9.]+ MiB \(the dump's own estimate: jemalloc writes no stats.allocated in it\); the highest snapshot's stats.allocated is [0-9.]+ [KM]iB" \
	"$D/jmpk"
spike=$(mb snap_host_spike "$D/jmpk")
# The highest gdump dump came at the last new high on the way up: it
# holds the blocks allocated before it, most of the 32 MiB.
if awk -v m="${spike:-0}" 'BEGIN { exit !(m >= 4.0 && m <= 32.0) }'; then
	pass "jmpk: the spike no snapshot saw, at snap_host_spike ($spike MiB of 32)"
else
	fail "jmpk: the spike no snapshot saw, at snap_host_spike (4 to 32 MiB)" "$(head -12 "$D/jmpk")"
fi
assert_grep "jmpk: how near the history's highest figure the dump is" \
	"^# (the true peak in that time .* this dump holds [0-9.]+ % of it|the history's highest figure in that time .* this dump is the highest seen)\$" "$D/jmpk"
timeout 60 curl -sS -o "$D/peak.col" -D "$D/peak.hdr" \
	"http://127.0.0.1:$HPORT/jemalloc/profile?at=peak&format=collapsed"
assert_grep "?at=peak: X-Jm4lw-Base names the gdump dump" \
	"^X-Jm4lw-Base: jemalloc's gdump dump jm4lw\.$PID\.[0-9]+\.u[0-9]+\.heap " "$D/peak.hdr"
assert_grep "?at=peak: its collapsed stacks hold the spike" ';snap_host_spike [0-9]+$' "$D/peak.col"
stop_host snap_host "$PID"

# Snapshots off, and profiling inactive: said, not an empty answer.
D=$(scratch snapshots_off)
start "$D" "snapshot_count = 0
dump_min_free = 0"
ask jmgr >"$D/jmgr"
assert_grep "snapshot_count 0: jmgr says snapshots are off" \
	'^error: .*snapshots are off: snapshot_count is 0' "$D/jmgr"
code=$(get "/jemalloc/profile?at=peak" "$D/peak")
assert_eq "snapshot_count 0: ?at=peak is a 400" 400 "$code"
ask jmdp >/dev/null
stop_host snap_host "$PID"
D=$(scratch snapshots_inactive)
start "$D" "$(printf 'snapshot_interval = 1\ndump_min_free = 0')" prof:true,prof_active:false
sleep 2 # two ticks: no snapshot while inactive
ask jmgr >"$D/jmgr"
assert_grep "profiling inactive: jmgr says no snapshot is taken while it is" \
	'^error: .*no snapshot yet: profiling is inactive \(prof.active false\)' "$D/jmgr"
stop_host snap_host "$PID"

# A reload to snapshot_count 0 frees the ring: reloaded back on, the
# module has no snapshot from before (it would answer from them had their
# memory been kept). jm4lwd, profiling itself, reloads on SIGHUP.
W=$(readlink -f "$(scratch snapshots_reload)")
printf 'snapshot_interval = 1\n' >"$W/jm4lwd.conf"
start_daemon -C "$W" -e MALLOC_CONF=prof:true,prof_active:true -- \
	-l 127.0.0.1:0 -f "$W/jm4lwd.conf" || finish
for _ in $(seq 50); do
	ask jmgr >"$W/jmgr1"
	grep -q '^# snapshots: ' "$W/jmgr1" && break
	sleep 0.2
done
assert_grep "reload: jm4lwd keeps snapshots" '^# snapshots: [1-9][0-9]* kept' "$W/jmgr1"
printf 'snapshot_interval = 1\nsnapshot_count = 0\n' >"$W/jm4lwd.conf"
kill -HUP "$PID"
wait_log '^jm4lwd: configuration reloaded' || fail "SIGHUP is logged as reloaded" "$(show_tail "$DLOG")"
ask jmgr >"$W/jmgr2"
assert_grep "reload to snapshot_count 0: snapshots are off" \
	'^error: .*snapshots are off: snapshot_count is 0' "$W/jmgr2"
printf 'snapshot_interval = 3600\nsnapshot_count = 30\n' >"$W/jm4lwd.conf"
kill -HUP "$PID"
for _ in $(seq 50); do
	[ "$(grep -c '^jm4lwd: configuration reloaded' "$DLOG")" -ge 2 ] && break
	sleep 0.1
done
ask jmgr >"$W/jmgr3"
assert_grep "back on: no snapshot from before the count was 0 (the ring was freed)" \
	'^error: .*no snapshot yet' "$W/jmgr3"
stop_daemon
finish

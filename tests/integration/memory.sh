#!/bin/bash
# dump_on_memory through jm4lwd, against a directory laid out like
# /sys/fs/cgroup with cgroup v2 unified at its root (memory_cgroup_root):
# the reload that turns it on, the v2 trigger with memory.events in its
# line, the hysteresis, memory pressure (PSI), bad values (a reload
# refused with its line, garbage in memory.max), the counters in mntr
# and /metrics (promtool), and the reload that turns it off. The files
# are ours to write, so every figure is exact; a real group is
# tests/agent/memory.sh's.
#
#	bash memory.sh      (JM4LWD: see ../lib.sh)
. "$(dirname "$0")/../lib.sh"

need nc.openbsd timeout curl promtool
[ -x "$JM4LWD" ] || die "$JM4LWD is not executable"
# The v2 reader follows this process's "0::" line; without one (a v1-only
# host) it is never asked.
if ! grep -q '^0::/' /proc/self/cgroup; then
	echo "skip - no cgroup v2 line in /proc/self/cgroup"
	rm -rf "$T"
	exit 77
fi

CG=$T/cg
mkdir -p "$CG" "$T/dumps"
# put FILE TEXT: the tree's file, replaced whole (a reader never sees it
# half written).
put() {
	printf '%b' "$2" >"$CG/$1.new" && mv -f "$CG/$1.new" "$CG/$1"
}
put cgroup.controllers 'cpu memory\n'
put memory.max '1073741824\n'
put memory.current '536870912\n'
put memory.events 'low 0\nhigh 2\nmax 1\noom 0\noom_kill 0\n'
put memory.pressure 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n'

conf() {
	cat >"$T/jm4lwd.conf.new" <<EOF
listen = 127.0.0.1:0
dump_dir = $T/dumps
dump_min_free = 0
dump_min_interval = 0
memory_cgroup_root = ${CGROOT:-$CG}
$*
EOF
	mv -f "$T/jm4lwd.conf.new" "$T/jm4lwd.conf"
}
reload() {
	local n
	n=$(grep -c 'configuration reloaded\|reload failed' "$DLOG")
	kill -HUP "$PID"
	for _ in $(seq $((100 * SLOW))); do
		[ "$(grep -c 'configuration reloaded\|reload failed' "$DLOG")" -gt "$n" ] && return 0
		sleep 0.1
	done
	return 1
}
mntr() { mntr_value "$1"; }
odumps() { find "$T/dumps" -maxdepth 1 -name 'jm4lw.*.o.heap' | wc -l; }

conf "dump_on_memory = 0"
start_daemon -e MALLOC_CONF=prof:true,prof_active:false -- -f "$T/jm4lwd.conf" ||
	finish
assert_eq "off: mntr has no memory source" "" "$(mntr jm4lw_memory_source)"
assert_eq "off: no memory dump" 0 "$(mntr jm4lw_memory_dumps_cgroup_v2)"

conf "dump_on_memory = 90%" "
dump_on_memory_psi = some 10%"
assert_cmd "SIGHUP reloads" reload
assert_cmd "on after the reload: the v2 limit is read" \
	wait_mntr jm4lw_memory_limit -eq 1073741824
assert_eq "the source is cgroup_v2" cgroup_v2 "$(mntr jm4lw_memory_source)"
assert_eq "usage is memory.current" 536870912 "$(mntr jm4lw_memory_usage)"
assert_eq "the threshold is 90% of memory.max" 966367641 \
	"$(mntr jm4lw_memory_threshold)"
assert_eq "below: no dump" 0 "$(odumps)"

put memory.current '1000000000\n'
assert_cmd "above 90%: a memory dump" \
	wait_mntr jm4lw_memory_dumps_cgroup_v2 -eq 1
assert_grep "its line: v2's figures and memory.events" \
	'memory dump: .*/jm4lw\.[0-9]+\.[0-9]+\.o\.heap \(cgroup v2: usage 953\.7 MiB of 1\.0 GiB limit, 93\.1% >= 90%; memory\.events high 2 max 1 oom_kill 0\)' \
	"$DLOG"
assert_eq "one .o.heap" 1 "$(odumps)"
first=$(find "$T/dumps" -maxdepth 1 -name 'jm4lw.*.o.heap')
assert_eq "it is pinned: read-only" 400 "$(stat -c %a "$first")"
assert_http "fetched through /jemalloc/dump?name=" 200 fetch \
	"/jemalloc/dump?name=${first##*/}&format=raw"
assert_eq "fetched: released, an ordinary dump again" 600 \
	"$(stat -c %a "$first")"

put memory.current '1010000000\n'
assert_cmd "the watcher sees the higher usage" \
	wait_mntr jm4lw_memory_usage -eq 1010000000
sleep 1.5
assert_eq "still above: no second dump" 1 "$(mntr jm4lw_memory_dumps_cgroup_v2)"
put memory.current '930000000\n' # below 90%, above 95% of it (918049259)
assert_cmd "the watcher sees 930000000" \
	wait_mntr jm4lw_memory_usage -eq 930000000
put memory.current '1000000000\n'
assert_cmd "the watcher sees 1000000000 again" \
	wait_mntr jm4lw_memory_usage -eq 1000000000
sleep 1.5
assert_eq "a dip short of 95% of the threshold re-arms nothing" 1 \
	"$(mntr jm4lw_memory_dumps_cgroup_v2)"
put memory.current '900000000\n'
assert_cmd "the watcher sees 900000000" \
	wait_mntr jm4lw_memory_usage -eq 900000000
put memory.current '1000000000\n'
assert_cmd "below 95% and across again: the second dump" \
	wait_mntr jm4lw_memory_dumps_cgroup_v2 -eq 2
conf "dump_on_memory = 90%" "
dump_on_memory_psi = some 10%
dump_keep = 100"
assert_cmd "SIGHUP that leaves dump_on_memory alone" reload
sleep 1.5
assert_eq "still above after that reload: no third dump" 2 \
	"$(mntr jm4lw_memory_dumps_cgroup_v2)"

put memory.pressure 'some avg10=25.00 avg60=3.00 avg300=0.50 total=123\nfull avg10=1.00 avg60=0.00 avg300=0.00 total=7\n'
assert_cmd "memory pressure (some avg10 25% >= 10%): a PSI dump" \
	wait_mntr jm4lw_memory_dumps_psi -eq 1
assert_grep "its line says the pressure" \
	'memory dump: .*\.o\.heap \(memory pressure: some avg10 25\.00% >= 10%\)' \
	"$DLOG"

curl -s "http://127.0.0.1:$HTTP_PORT/metrics" >"$T/metrics"
assert_grep "/metrics: the v2 counter" \
	'^jm4lw_memory_dumps_total\{trigger="cgroup_v2"\} 2$' "$T/metrics"
assert_grep "/metrics: the psi counter" \
	'^jm4lw_memory_dumps_total\{trigger="psi"\} 1$' "$T/metrics"
assert_grep "/metrics: the threshold" \
	'^jm4lw_memory_threshold_bytes 966367641$' "$T/metrics"
assert_cmd "promtool accepts /metrics" \
	bash -c "promtool check metrics <'$T/metrics'"
curl -s "http://127.0.0.1:$HTTP_PORT/jemalloc/dumps" >"$T/dumps.json"
assert_grep "/jemalloc/dumps says memory" '"cause": "memory"' "$T/dumps.json"

# Bad input: a reload refused with its line, and garbage in the tree.
conf "dump_on_memory = 200%"
assert_cmd "SIGHUP with a bad value" reload
assert_grep "the reload is refused, saying why" \
	'reload failed, configuration unchanged: .*dump_on_memory: "200%" is not a percentage of the limit' \
	"$DLOG"
put memory.max 'bogus\n'
assert_cmd "garbage in memory.max: the machine's memory instead" \
	bash -c "for i in \$(seq $((100 * SLOW))); do
		[ \"\$(printf 'mntr\n' | nc.openbsd 127.0.0.1 $PORT |
			awk -F '\t' '\$1 == \"jm4lw_memory_source\" { print \$2 }')\" = machine ] && exit 0
		sleep 0.2; done; exit 1"
alive "jm4lwd still serves after the bad values"
ask_when_due jmfp >"$T/jmfp"
assert_grep "jmfp still works" '\.w\.heap$' "$T/jmfp"

conf "dump_on_memory = 0"
assert_cmd "SIGHUP turns it off" reload
assert_cmd "off: the figures are gone" bash -c "for i in \$(seq $((100 * SLOW))); do
		printf 'mntr\n' | nc.openbsd 127.0.0.1 $PORT | grep -q '^jm4lw_memory_source' || exit 0
		sleep 0.2; done; exit 1"
assert_eq "off: the counters stay" 2 "$(mntr jm4lw_memory_dumps_cgroup_v2)"

# A FIFO where memory.current should be (as a cgroup file stalled under
# reclaim, an open() that never returns): the watcher reads only regular
# files and says which it refused; a reload that moves the root, and the
# SIGTERM with the watcher on the FIFO, never wait on the watcher.
CG2=$T/cg2
mkdir -p "$CG2"
printf 'cpu memory\n' >"$CG2/cgroup.controllers"
printf '1073741824\n' >"$CG2/memory.max"
mkfifo "$CG2/memory.current"
CGROOT=$CG2 conf "dump_on_memory = 90%"
assert_cmd "SIGHUP: memory_cgroup_root with a FIFO for memory.current" reload
assert_cmd "the FIFO is refused, named in the log" \
	wait_log "dump_on_memory: $CG2/memory.current is not a regular file; not read \(check memory_cgroup_root\)"
assert_cmd "the machine's memory instead" wait_mntr jm4lw_memory_limit -gt 0
conf "dump_on_memory = 90%"
assert_cmd "SIGHUP moving the root off the FIFO is done" reload
alive "ruok answers after that reload"
CGROOT=$CG2 conf "dump_on_memory = 90%"
assert_cmd "SIGHUP back onto the FIFO" reload
alive "ruok answers with the watcher on the FIFO"
stop_daemon
finish

#!/bin/bash
# jemalloc's own dumps follow dump_dir: jm4lwd (on jemalloc, profiling
# itself) with prof_final points jemalloc's prefix into dump_dir at start,
# moves it when SIGHUP changes dump_dir or dump_prefix, lets it go with
# jemalloc_dumps = leave, and prof_final's dump at exit lands where the
# last configuration said. A host's own prof_prefix is left alone.
. "$(dirname "$0")/../lib.sh"

need timeout

# conf DIR KEY=VALUE...: DIR/jm4lwd.conf with those keys.
conf() {
	local dir=$1
	shift
	printf '%s\n' "$@" | sed 's/=/ = /' >"$dir/jm4lwd.conf.new"
	mv -f "$dir/jm4lwd.conf.new" "$dir/jm4lwd.conf"
}

# reload N: SIGHUP and wait for the Nth "configuration reloaded" line.
reload() {
	kill -HUP "$PID"
	wait_log_n '^jm4lwd: configuration reloaded' "$1" ||
		fail "SIGHUP is logged as reloaded" "$(show_tail "$DLOG")"
}

# wait_log_n ERE N: until the log has N lines matching ERE (10 s).
wait_log_n() {
	for _ in $(seq $((100 * SLOW))); do
		[ "$(grep -Ec -- "$1" "$DLOG")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

W=$(readlink -f "$(scratch reload)")
mkdir -m 700 "$W/a" "$W/b"
conf "$W" dump_dir="$W/a"
start_daemon -C "$W" -e MALLOC_CONF=prof:true,prof_final:true -- \
	-l 127.0.0.1:0 -f "$W/jm4lwd.conf" || finish
assert_cmd "start: jemalloc's dumps go to dump_dir a" wait_log \
	"^jm4lwd: jemalloc's own dumps \\(lg_prof_interval, prof_gdump, prof_final\\) go to $W/a/jm4lw\\.\\*$"
conf "$W" dump_dir="$W/b" dump_prefix=app
reload 1
assert_cmd "SIGHUP to dump_dir b, dump_prefix app: they follow" wait_log \
	"^jm4lwd: jemalloc's own dumps .* go to $W/b/app\\.\\*$"
conf "$W" dump_dir="$W/b" dump_prefix=app jemalloc_dumps=leave
reload 2
assert_cmd "jemalloc_dumps = leave: one line says where they go instead" \
	wait_log "^jm4lwd: jemalloc's own dumps go to jeprof\\.\\* \\(jemalloc_dumps = leave\\)$"
conf "$W" dump_dir="$W/b" dump_prefix=app
reload 3
assert_cmd "back to adopt: dump_dir b again" wait_log_n \
	"^jm4lwd: jemalloc's own dumps .* go to $W/b/app\\.\\*$" 2
reload 4
assert_eq "a reload that changes none of it says nothing" 2 \
	"$(grep -c "go to $W/b/app" "$DLOG")"
pid=$PID
stop_daemon
assert_cmd "prof_final's dump is in dump_dir b, under dump_prefix app" \
	grep -q '^heap_v2/' "$W/b/app.$pid.0.f.heap"
assert_eq "none in dump_dir a, nor in the working directory" "" \
	"$(ls "$W/a"; cd "$W" && ls -- *.heap 2>/dev/null)"

# A host's own prof_prefix is its choice.
H=$(readlink -f "$(scratch host)")
mkdir -m 700 "$H/dumps"
start_daemon -C "$H" -e MALLOC_CONF=prof:true,prof_final:true,prof_prefix:"$H/mine" \
	-- -l 127.0.0.1:0 -D "$H/dumps" || finish
assert_cmd "a host's prof_prefix: one line says its dumps go there" wait_log \
	"^jm4lwd: jemalloc's own dumps go to the host's prof_prefix $H/mine\\.\\*, not into $H/dumps"
pid=$PID
stop_daemon
assert_cmd "prof_final's dump is where the host said" \
	grep -q '^heap_v2/' "$H/mine.$pid.0.f.heap"
assert_eq "none in dump_dir" "" "$(ls "$H/dumps")"
finish

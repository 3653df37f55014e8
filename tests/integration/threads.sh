#!/bin/bash
# The heap by thread (jmth, format=threads, jm4lw-prof -f threads, pprof's
# thread label) on real programs under the real jemalloc 5.3:
#   - threads_host names two threads with jm4lw_thread_name(): jmth shows
#     them by name, each with about the heap it keeps (8 MiB, 2 MiB) and
#     its own fill function on top; the unnamed main thread as t<N>; the
#     rows add up to the Total line and to the (sum) line; a 16-byte name
#     and one with a newline are refused with their errnos; under
#     prof_sys_thread_name the call says EBUSY.
#   - Debian's redis-server with the agent (jm4lw-run: prof_sys_thread_name
#     on by default) and --io-threads 2 --io-threads-do-reads, filled by
#     redis-benchmark with 64 clients so its io thread reads queries: jmth
#     names redis-server and io_thd_1; on one kept dump, jm4lw-prof -f
#     threads' Total is -f text's Total, and its rows add up;
#     /jemalloc/profile?format=pprof carries the thread label (go tool
#     pprof -tags lists both threads, -tagfocus=thread=io_thd_1 keeps part
#     of the heap), /debug/pprof/heap carries none, ?labels=thread does,
#     and /debug/pprof/allocs?labels=thread is a 400.
#
#	bash threads.sh   (THREADS_HOST, JM4LW_PROF, JM4LW_RUN from ctest)
. "$(dirname "$0")/../lib.sh"

need go curl redis-server redis-cli redis-benchmark nc.openbsd timeout awk
for b in "$THREADS_HOST" "$JM4LW_PROF" "$JM4LW_RUN"; do
	[ -x "$b" ] || die "$b is not executable"
done
export HOME=$T/home GOCACHE=$T/gocache PPROF_TMPDIR=$T/pprof
mkdir -p "$HOME" "$GOCACHE" "$PPROF_TMPDIR"

# rows_add_up DESC FILE: a threads view's rows (thread, "no thread line"
# and "more threads" rows; not the functions under them, which have an
# empty column) add up to its Total line and to its (sum) line, bytes and
# objects, exactly.
rows_add_up() {
	local got
	got=$(awk '
		/^Total: / { tb = $2; to = $4 }
		$3 ~ /%$/ && $4 != "(sum)" && $2 ~ /^[0-9]+$/ { b += $1; o += $2 }
		$4 == "(sum)" { sb = $1; so = $2 }
		END { printf "%s %s %s %s %s %s", tb, to, b, o, sb, so }' "$2")
	read -r tb to b o sb so <<<"$got"
	if [ -n "$tb" ] && [ "$tb" = "$b" ] && [ "$to" = "$o" ] &&
		[ "$sb" = "$tb" ] && [ "$so" = "$to" ]; then
		pass "$1: the rows add up to Total and (sum) ($tb bytes, $to objects)"
	else
		fail "$1: the rows add up to Total and (sum)" \
			"Total $tb/$to, rows $b/$o, (sum) $sb/$so" "$(head -20 "$2")"
	fi
}

# row FILE NAME: the bytes of the thread row whose name is NAME.
row() {
	awk -v n="$2" '$3 ~ /%$/ && $2 ~ /^[0-9]+$/ && $NF == n { print $1; exit }' "$1"
}

# samples FILE: how many samples the pprof FILE has (go tool pprof -raw).
samples() {
	timeout 120 go tool pprof -raw "$1" 2>/dev/null | awk '
		/^Samples:/ { s = 1; next }
		/^Locations/ { s = 0 }
		s && /^ *-?[0-9]+( +-?[0-9]+)*: / { n++ }
		END { print n + 0 }'
}

# start_threads_host NAME MALLOC_CONF: threads_host in scratch dir NAME;
# sets D, PID, PORT.
start_threads_host() {
	D=$(scratch "$1")
	mkdir -p "$D/dumps"
	(cd "$D" && exec env MALLOC_CONF="$2" "$THREADS_HOST" "$D/dumps") \
		</dev/null >"$D/out" 2>"$D/err" &
	PID=$!
	track "$PID"
	PORT=
	for _ in $(seq $((100 * SLOW))); do
		PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$D/out")
		[ -n "$PORT" ] && return 0
		_alive "$PID" || break
		sleep 0.1
	done
	fail "threads_host ($1) printed its port" "$(cat "$D/out")" "$(show_tail "$D/err")"
	return 1
}

case_host() {
	local a b dump
	start_threads_host host prof:true,prof_active:true,lg_prof_sample:12 || return
	assert_grep "jm4lw_thread_name(\"cache_fill\") is 0" '^name cache_fill: 0$' "$D/out"
	assert_grep "jm4lw_thread_name(\"small_fill\") is 0" '^name small_fill: 0$' "$D/out"
	assert_grep "a 15-byte name is taken" '^fifteen: 0$' "$D/out"
	assert_grep "\"\" clears it" '^cleared: 0$' "$D/out"
	assert_grep "a 16-byte name: ENAMETOOLONG" '^refused long: ENAMETOOLONG$' "$D/out"
	assert_grep "a name with a newline: EINVAL" '^refused bad: EINVAL$' "$D/out"
	# jemalloc writes names unescaped into prof_recent's JSON.
	assert_grep "a name with a quote: EINVAL" '^refused quote: EINVAL$' "$D/out"
	assert_grep "a name with a backslash: EINVAL" '^refused backslash: EINVAL$' "$D/out"
	assert_grep "200 threads each name themselves" '^many named: 200 of 200$' "$D/out"
	ask_when_due jmth >"$D/jmth"
	head -20 "$D/jmth"
	assert_grep "jmth: a heading" '^# live heap by thread' "$D/jmth"
	rows_add_up "jmth (threads_host)" "$D/jmth"
	a=$(row "$D/jmth" cache_fill)
	b=$(row "$D/jmth" small_fill)
	# Sampled at 4 KiB of 64 KiB blocks: within a quarter of what is kept.
	assert_eq "jmth: cache_fill holds ~8 MiB (got ${a:-none})" 1 \
		"$(( ${a:-0} > 6 * 1048576 && ${a:-0} < 10 * 1048576 ))"
	assert_eq "jmth: small_fill holds ~2 MiB (got ${b:-none})" 1 \
		"$(( ${b:-0} > 1 * 1048576 && ${b:-0} < 3 * 1048576 ))"
	# Its own function first under it: the line after the thread's.
	assert_eq "jmth: threads_host_cache_fill is cache_fill's top function" \
		threads_host_cache_fill \
		"$(awk '$NF == "cache_fill" { getline; print $NF; exit }' "$D/jmth")"
	assert_grep "jmth: the unnamed main thread as t<N>, threads_host_main_fill under it" \
		'^ +[0-9]+ +[0-9]+ +[0-9.]+% +t[0-9]+$' "$D/jmth"
	assert_grep "jmth: threads_host_main_fill is named" 'threads_host_main_fill$' "$D/jmth"
	# cache_fill's name came from a buffer freed right after the call.
	dump=$(ask_when_due jmfp)
	assert_eq "a dump names each of the 200 threads (n000..n199)" 200 \
		"$(grep -E '^ +t[0-9]+: .* n[0-9]{3}$' "$dump" 2>/dev/null | awk '{ print $NF }' | sort -u | wc -l)"
	stop_host "threads_host" "$PID" "$D/err"

	# prof_sys_thread_name: jemalloc takes the system's names; the call
	# says so instead of jemalloc's ENOENT.
	start_threads_host sysnames prof:true,prof_active:true,prof_sys_thread_name:true,lg_prof_sample:12 || return
	assert_grep "under prof_sys_thread_name: EBUSY" '^name cache_fill: EBUSY$' "$D/out"
	# A kernel name with a quote, a backslash and a tab, written by
	# jemalloc unescaped into prof_recent's JSON and into the dump.
	for _ in $(seq $((100 * SLOW))); do
		grep -q '^quoted done$' "$D/out" && break
		sleep 0.1
	done
	ask jmrc >"$D/jmrc"
	assert_grep "jmrc reads a record of a thread named q\"uo\\te<TAB>x" \
		' t[0-9]+ \(q"uo\\te\?x\) +live ' "$D/jmrc"
	assert_no_grep "... no error line" '^error:' "$D/jmrc"
	dump=$(ask_when_due jmfp)
	"$JM4LW_PROF" -f threads "$dump" >"$D/prof.threads" 2>"$D/prof.err"
	assert_grep "jm4lw-prof -f threads: the tab in its name as '?'" \
		' t[0-9]+ q"uo\\te\?x$' "$D/prof.threads"
	assert_no_grep "... no tab, no control byte in the view" $'[\t\x01-\x08\x1b]' "$D/prof.threads"
	ask_when_due jmth >"$D/jmth"
	assert_grep "jmth: the same" ' t[0-9]+ q"uo\\te\?x$' "$D/jmth"
	stop_host "threads_host (prof_sys_thread_name)" "$PID" "$D/err"

	# No profiling: ENOENT.
	start_threads_host noprof prof:false || return
	assert_grep "without profiling: ENOENT" '^name cache_fill: ENOENT$' "$D/out"
	stop_host "threads_host (no profiling)" "$PID" "$D/err"
}

case_redis() {
	local dump text thr plain lab url
	printf 'dump_min_interval = 0\n' >"$T/agent.conf"
	start_redis_agent redis MALLOC_CONF=lg_prof_sample:12 \
		JM4LW_CONF="$T/agent.conf" -- --io-threads 2 \
		--io-threads-do-reads yes || return
	url=http://127.0.0.1:$AHTTP
	# redis hands reads to its io threads only with many clients
	# waiting: 64 of them, 2 KB values.
	timeout $((300 * SLOW)) redis-benchmark -p "$RPORT" -c 64 -n 20000 \
		-t set -d 2000 -r 100000 -q >"$T/bench.out" 2>&1
	ask jmth "$APORT" >"$T/jmth"
	head -20 "$T/jmth"
	rows_add_up "jmth (redis)" "$T/jmth"
	assert_grep "jmth: redis's main thread by name" ' t[0-9]+ redis-server$' "$T/jmth"
	assert_grep "jmth: its io thread by name" ' t[0-9]+ io_thd_1$' "$T/jmth"

	# One kept dump, two views of it.
	dump=$(ask jmfp "$APORT")
	if ! [ -s "$dump" ]; then
		fail "jmfp keeps a dump" "$dump"
		return
	fi
	"$JM4LW_PROF" -f threads "$dump" >"$T/prof.threads" 2>"$T/prof.err" ||
		fail "jm4lw-prof -f threads exits 0" "$(cat "$T/prof.err")"
	"$JM4LW_PROF" -f text "$dump" >"$T/prof.text" 2>>"$T/prof.err"
	rows_add_up "jm4lw-prof -f threads" "$T/prof.threads"
	assert_grep "jm4lw-prof -f threads: io_thd_1" ' io_thd_1$' "$T/prof.threads"
	thr=$(awk '/^Total: / { printf "%.1f", $2 / 1048576 }' "$T/prof.threads")
	text=$(awk '/^Total: / { print $2 }' "$T/prof.text")
	assert_eq "jm4lw-prof: -f threads' Total is -f text's (MB)" "$text" "$thr"

	# pprof: labelled where a person asks, not where scrapers do.
	http_get "$url/jemalloc/profile?format=pprof" "$T/lab.pb.gz"
	timeout 120 go tool pprof -tags "$T/lab.pb.gz" >"$T/tags" 2>"$T/tags.err"
	assert_grep "go tool pprof -tags: a thread label" '^ *thread: Total' "$T/tags"
	assert_grep "go tool pprof -tags: redis-server" ': redis-server$' "$T/tags"
	assert_grep "go tool pprof -tags: io_thd_1" ': io_thd_1$' "$T/tags"
	timeout 120 go tool pprof -top -tagfocus=thread=io_thd_1 "$T/lab.pb.gz" \
		>"$T/focus" 2>&1
	assert_grep "go tool pprof -tagfocus=thread=io_thd_1 keeps part of the heap" \
		'^Showing nodes accounting for .*, [0-9.]+% of .* total' "$T/focus"
	assert_no_grep "  (and not all of it)" 'accounting for .*, 100% of' "$T/focus"
	http_get "$url/debug/pprof/heap" "$T/plain.pb.gz"
	timeout 120 go tool pprof -tags "$T/plain.pb.gz" >"$T/plain.tags" 2>&1
	assert_no_grep "/debug/pprof/heap: no thread label (scrapers)" 'thread:' "$T/plain.tags"
	http_get "$url/debug/pprof/heap?labels=thread" "$T/q.pb.gz"
	timeout 120 go tool pprof -tags "$T/q.pb.gz" >"$T/q.tags" 2>&1
	assert_grep "/debug/pprof/heap?labels=thread: the thread label" ': io_thd_1$' "$T/q.tags"
	# The extra samples the label costs, on this heap: for the README.
	plain=$(samples "$T/plain.pb.gz")
	lab=$(samples "$T/q.pb.gz")
	echo "# samples: $plain without labels, $lab with thread labels"
	HTTP_PORT=$AHTTP assert_http "/debug/pprof/allocs?labels=thread: 400" \
		400 allocs "/debug/pprof/allocs?labels=thread"
	redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
}

case_host
case_redis
finish

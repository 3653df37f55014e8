#!/bin/bash
# The HTTP face's profiles against their real consumers, on Debian's
# redis-server with the preload agent inside:
#   - go tool pprof -top http://HOST:PORT/debug/pprof/heap, fetched while
#     redis-benchmark runs, names redis's functions;
#   - on a heap that holds still, go tool pprof on the URL prints the same
#     table, to the byte, as go tool pprof on jm4lw-prof -f pprof of a raw
#     dump (/jemalloc/profile?format=raw) of the same heap, and its total
#     is heapprof_dump's unsampled inuse_space of that dump (1 B apart at
#     most: Go sums integers, we sum floats);
#   - jeprof --text http://HOST:PORT/pprof/heap, in remote mode (no copy
#     of the binary given: it symbolizes through POST /pprof/symbol),
#     prints jm4lw-prof's Total: line and the same top ten functions with
#     the same flat figures (names put in one form as differential.sh
#     does), and --show_bytes heapprof_dump's total to the byte.
#
# The same heap: a URL answers from a fresh dump of its own, which no
# other request can be handed. So each consumer's fetch is sandwiched
# between two raw dumps (A, fetch, B); when A and B hold the same
# unsampled totals, nothing was allocated or freed in between and the
# fetch saw A's heap. An idle redis allocates nothing between commands
# (its serverCron does not at this size; the agent's own thread does not
# sample itself), so A == B on the first try; up to three tries, a
# second apart, are allowed for a stray allocation (redis's cron finishing
# the rehash of a dict the load grew, say).
#
#	bash http_pprof.sh   (HEAPPROF_DUMP, JM4LW_PROF, JM4LW_RUN from ctest)
. "$(dirname "$0")/../lib.sh"

need go jeprof curl perl c++filt redis-server redis-cli redis-benchmark \
	timeout
for b in "$HEAPPROF_DUMP" "$JM4LW_PROF" "$JM4LW_RUN"; do
	[ -x "$b" ] || die "$b is not executable"
done
# pprof and jeprof write what they fetch under $HOME (PPROF_TMPDIR,
# $HOME/jeprof); no binary for pprof to symbolize with behind our back.
export HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath \
	PPROF_BINARY_PATH=$T/nobin PPROF_TMPDIR=$T/pprof
mkdir -p "$HOME" "$GOCACHE" "$GOPATH" "$PPROF_BINARY_PATH" "$PPROF_TMPDIR"
go tool pprof -h >/dev/null 2>&1 || die "go tool pprof does not run"

# Dumps back to back: the sandwiches take three within a second.
printf 'dump_min_interval = 0\n' >"$T/agent.conf"
# One sample per 32 KiB: hundreds of thousands of objects, ~30 stacks.
start_redis_agent redis MALLOC_CONF=lg_prof_sample:15 \
	JM4LW_CONF="$T/agent.conf" || finish
URL=http://127.0.0.1:$AHTTP

# pprof_top OUT SOURCE: go tool pprof -top of SOURCE (a URL or a file),
# every node, in bytes.
pprof_top() {
	timeout 120 go tool pprof -top -sample_index=inuse_space -unit=B \
		-nodefraction=0 -nodecount=100000 "$2" >"$1" 2>"$1.err"
}

# raw N: a raw dump of the live heap into $T/raw.N; its totals (heapprof_dump)
# into $T/raw.N.sum.
raw() {
	http_get "$URL/jemalloc/profile?format=raw" "$T/raw.$1" &&
		"$HEAPPROF_DUMP" "$T/raw.$1" >"$T/raw.$1.sum" 2>&1
}

# sandwich NAME CMD...: run CMD between two raw dumps until both hold the
# same totals (three tries); the first is then $T/NAME.heap.
sandwich() {
	local name=$1 i
	shift
	for i in 1 2 3; do
		raw a && "$@" && raw b || {
			fail "$name: a raw dump, the fetch, a raw dump" \
				"$(cat "$T/raw.a.err" "$T/raw.b.err" 2>/dev/null | head -5)"
			return 1
		}
		if cmp -s "$T/raw.a.sum" "$T/raw.b.sum"; then
			cp "$T/raw.a" "$T/$name.heap"
			pass "$name: the heap held still around the fetch (try $i: $(grep inuse_space "$T/raw.a.sum"))"
			return 0
		fi
		sleep 1 # say redis's cron rehashing a dict: let it finish
	done
	fail "$name: the heap held still around the fetch in 3 tries" \
		"$(paste "$T/raw.a.sum" "$T/raw.b.sum")"
	return 1
}

# Under load: redis-benchmark writes while pprof fetches and renders. It
# loops (-l) until the fetch is done: a fixed count could end first on a
# fast machine, or while a slow one was still rendering.
redis-benchmark -p "$RPORT" -q -l -r 100000 -d 200 -P 16 \
	-t set,lpush,hset >"$T/bench.out" 2>&1 &
bench=$!
sleep 0.5
pprof_top "$T/load.top" "$URL/debug/pprof/heap"
assert_cmd "go tool pprof fetched /debug/pprof/heap during redis-benchmark" \
	_alive "$bench"
kill -TERM "$bench" 2>/dev/null
wait "$bench"
assert_eq "redis-benchmark ran until stopped (SIGTERM)" 143 "$?"
# /usr/bin/redis-server is a symlink to redis-check-rdb, the file mapped.
assert_grep "go tool pprof -top on the URL: a profile of redis-server" \
	'^File: redis-(server|check-rdb)$' "$T/load.top"
for f in zmalloc_usable createStringObject; do
	assert_grep "go tool pprof -top on the URL names $f" " $f\$" "$T/load.top"
done
assert_grep "go tool pprof saved the profile it fetched" '^Saved profile in ' \
	"$T/load.top.err"

# The same heap, two ways: the URL, and the raw dump through jm4lw-prof.
if sandwich pprof pprof_top "$T/url.top" "$URL/debug/pprof/heap"; then
	"$JM4LW_PROF" -f pprof -o "$T/file.pb.gz" "$T/pprof.heap"
	pprof_top "$T/file.top" "$T/file.pb.gz"
	assert_cmd "go tool pprof -top: the URL's table is jm4lw-prof -f pprof's of the same heap, row for row" \
		diff <(sed -n '/^Showing nodes/,$p' "$T/url.top") \
		<(sed -n '/^Showing nodes/,$p' "$T/file.top")
	total=$(sed -n 's/.* of \([0-9]*\)B total$/\1/p' "$T/url.top")
	ours=$(awk '$1 == "inuse_space" { printf "%d", $2 }' "$T/raw.a.sum")
	assert_cmd "go tool pprof's total on the URL (${total:-none} B) is heapprof_dump's inuse_space ($ours B), 1 B apart at most" \
		test -n "$total" -a "$((total - ours))" -le 1 -a "$((ours - total))" -le 1
	n=$(grep -c '^ *[0-9]*B ' "$T/url.top")
	assert_cmd "... over a real profile ($n functions with a flat figure)" \
		test "$n" -ge 5
fi

# Remote jeprof: the raw dump, symbolized by the process (POST
# /pprof/symbol), against jm4lw-prof on a raw dump of the same heap.
# jeprof_url OUT ARGS...: jeprof ARGS on the URL, in a directory with no
# binary in it, into $T/OUT.txt (its stderr in $T/OUT.err).
jeprof_url() {
	local out=$1
	shift
	(cd "$T" && timeout 120 jeprof "$@" "$URL/pprof/heap" \
		>"$T/$out.txt" 2>"$T/$out.err")
}
if sandwich jeprof jeprof_url jeprof --text; then
	"$JM4LW_PROF" --no-fold -o "$T/ours.txt" "$T/jeprof.heap"
	assert_grep "jeprof fetched /pprof/heap itself (remote mode)" \
		"^Fetching /pprof/heap profile from $URL/pprof/heap" "$T/jeprof.err"
	assert_eq "jeprof --text on the URL: jm4lw-prof's Total: line" \
		"$(jeprof_total "$T/ours.txt")" "$(head -1 "$T/jeprof.txt")"
	# Debian's libjemalloc is stripped and its internal frames, reached
	# through tail calls from malloc, have no name jeprof's skip list
	# (malloc, operator new, ...) cuts: /pprof/heap serves the stacks
	# without them, as our own formats show them. So the flat figures
	# land where ours do, and the cum figures are the same too.
	table_by_name 1 <"$T/ours.txt" >"$T/ours.flat"
	table_by_name 1 <"$T/jeprof.txt" >"$T/jeprof.flat"
	same_rows "jeprof --text on the URL: jm4lw-prof's top ten functions by flat, the same figures" \
		10 "$T/ours.flat" "$T/jeprof.flat"
	assert_no_grep "... no libjemalloc frame among jeprof's rows" \
		'libjemalloc' "$T/jeprof.txt"
	table_by_name 4 <"$T/ours.txt" >"$T/ours.cum"
	table_by_name 4 <"$T/jeprof.txt" >"$T/jeprof.cum"
	same_rows "jeprof --text on the URL: jm4lw-prof's top ten functions by cum, the same figures" \
		10 "$T/ours.cum" "$T/jeprof.cum"
	assert_grep "... redis's own allocation functions among them" \
		'	zmalloc_usable$' "$T/jeprof.cum"
fi
# no_libjemalloc DESC FILE: FILE, collapsed stacks, has some and none of
# them holds a libjemalloc frame.
no_libjemalloc() {
	if [ -s "$2" ] && ! grep -q libjemalloc "$2"; then
		pass "$1 ($(wc -l <"$2") stacks)"
	else
		fail "$1" "$(grep -m3 libjemalloc "$2" || echo "no stacks")"
	fi
}
# jeprof --collapsed on the URL: every stack, none led by libjemalloc.
if sandwich jeprof-col jeprof_url jeprof-col --collapsed; then
	no_libjemalloc "jeprof --collapsed on the URL: no libjemalloc frame in any stack" \
		"$T/jeprof-col.txt"
	total=$(awk '{ s += $NF } END { printf "%d", s }' "$T/jeprof-col.txt")
	ours=$(awk '$1 == "inuse_space" { printf "%d", $2 }' "$T/raw.a.sum")
	assert_cmd "... its stacks add up to heapprof_dump's inuse_space ($total B, $ours B; 1 B a stack)" \
		test "$((total - ours))" -le "$(wc -l <"$T/jeprof-col.txt")" -a \
		"$((ours - total))" -le "$(wc -l <"$T/jeprof-col.txt")"
fi
# The symbolized file the process writes, read by jeprof alone.
if http_get "$URL/jemalloc/profile?format=symbolized" "$T/sym.heap"; then
	(cd "$T" && timeout 120 jeprof --collapsed sym.heap) >"$T/sym.col" 2>/dev/null
	no_libjemalloc "jeprof --collapsed on /jemalloc/profile?format=symbolized: no libjemalloc frame in any stack" \
		"$T/sym.col"
	(cd "$T" && timeout 120 jeprof --text --show_bytes sym.heap) >"$T/sym.txt" 2>/dev/null
	"$HEAPPROF_DUMP" "$T/sym.heap" >"$T/sym.sum" 2>&1
	assert_eq "... jeprof --show_bytes on it: heapprof_dump's inuse_space of it, to the byte" \
		"$(awk '$1 == "inuse_space" { printf "%d", $2 }' "$T/sym.sum")" \
		"$(sed -n 's/^Total: \([0-9]*\) B$/\1/p' "$T/sym.txt")"
else
	fail "/jemalloc/profile?format=symbolized" "$(cat "$T/sym.heap")"
fi
# go tool pprof on /debug/pprof/heap: no stack starts in libjemalloc.
timeout 120 go tool pprof -traces "$URL/debug/pprof/heap" >"$T/traces.txt" 2>"$T/traces.err"
leads=$(awk '/^-----------/ { first = 1; next }
	first && NF >= 2 { print $NF; first = 0 }' "$T/traces.txt")
if [ -n "$leads" ] && ! grep -q libjemalloc <<<"$leads"; then
	pass "go tool pprof -traces on /debug/pprof/heap: no stack led by libjemalloc ($(wc -l <<<"$leads") stacks)"
else
	fail "go tool pprof -traces on /debug/pprof/heap: no stack led by libjemalloc" \
		"$(grep -m3 libjemalloc <<<"$leads" || head -20 "$T/traces.txt" "$T/traces.err")"
fi
if sandwich jeprof-bytes jeprof_url jeprof-bytes --text --show_bytes; then
	total=$(sed -n 's/^Total: \([0-9]*\) B$/\1/p' "$T/jeprof-bytes.txt")
	ours=$(awk '$1 == "inuse_space" { printf "%d", $2 }' "$T/raw.a.sum")
	assert_eq "jeprof --show_bytes on the URL: heapprof_dump's inuse_space, to the byte" \
		"$ours" "$total"
fi

redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
wait_exit "$RPID" 10
assert_eq "redis-server with the agent exits 0 on SHUTDOWN" 0 "$EXIT_STATUS"
finish

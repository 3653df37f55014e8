#!/bin/bash
# Leak suspects over a series of dumps (the acceptance test): the
# host tests/host/leak_host leaks 16 KiB every 50 ms through
# leak_host_steady_leak() among churn (leak_host_churn(), a ring of
# random sizes going up and down) and a cache that fills in the first
# 3 s and then stops (leak_host_cache_fill(), 6 MiB); the module's
# schedule dumps every 2 s for ~20 s. Then:
#   - jmlk, /jemalloc/leaks (JSON) and jm4lw-prof --trend (text and
#     JSON) name the leak first, with its rate (~18 MiB/min), and name
#     neither the cache nor the churn;
#   - control: jm4lw-prof --base FIRST LAST, the naive question, does
#     show the cache growing (so its absence above is the analysis, not
#     a cache too small to see);
#   - fewer than 3 dumps is refused with one line (jmlk at the start,
#     --trend over 2 dumps);
#   - /jemalloc/history returns the ring, since= filters it, a bad
#     since= is a 400; jmhi draws it.
#
#	bash leak_trend.sh   (LEAK_HOST=path/to/leak_host, else build/)
#
# Not run in sanitizer builds: the sanitizer's malloc serves the heap.
. "$(dirname "$0")/../lib.sh"

JM4LW_PROF=${JM4LW_PROF:-$ROOT/build/jm4lw-prof}
LEAK=leak_host_steady_leak
CACHE=leak_host_cache_fill
CHURN=leak_host_churn

need nc.openbsd curl jq timeout

D=$(scratch leak_trend)
cat >"$D/conf" <<CONF
dump_interval = 2
dump_min_interval = 1
dump_min_free = 0
history_interval = 1
history_points = 600
CONF
start_leak_host "$D" 12 || die "leak_host is listening" "$(cat "$D/err")"
PID=$LPID
PORT=$LPORT
HPORT=$LHPORT

# ask_job WORD FILE: the word's reply into FILE, asked again while the
# worker is busy with a scheduled dump (a refusal one retries).
ask_job() {
	for _ in $(seq 50); do
		ask "$1" >"$2"
		grep -q 'in progress' "$2" || return 0
		sleep 0.2
	done
}

# http_job URL FILE: the same over HTTP (409 while the worker is busy).
http_job() {
	local code
	for _ in $(seq 50); do
		code=$(timeout 60 curl -sS -o "$2" -w '%{http_code}' "$1")
		[ "$code" = 409 ] || break
		sleep 0.2
	done
	echo "$code"
}

ask_job jmlk "$D/early"
assert_grep "jmlk before 3 dumps: one line saying so" \
	'^error: leak suspects need at least 3 dumps of one process, and there (is|are) [0-2]' "$D/early"

# ~20 s of dumps every 2 s: wait for the eleventh (bounded).
for _ in $(seq 600); do
	[ "$(find "$D/dumps" -maxdepth 1 -name '*.heap' | wc -l)" -ge 11 ] && break
	sleep 0.1
done
n=$(find "$D/dumps" -maxdepth 1 -name '*.heap' | wc -l)
if [ "$n" -ge 11 ]; then pass "the schedule kept 11 dumps"; else fail "the schedule kept 11 dumps" "$n"; fi
# The leak index beside each dump, written by the worker after the
# dump's answer: within a few seconds (bounded).
for _ in $(seq 300); do
	n=$(find "$D/dumps" -maxdepth 1 -name '*.heap' | wc -l)
	m=$(find "$D/dumps" -maxdepth 1 -name '*.heap.trend' | wc -l)
	[ "$m" -ge "$n" ] && break
	sleep 0.1
done
if [ "$m" -ge "$n" ]; then pass "each kept dump has its leak index"; else fail "each kept dump has its leak index" "$m of $n"; fi

# check_first DESC FILE: FILE's first suspect row is the leak, with a rate
# between 6 and 60 MiB/min (it leaks ~18.75), and neither the cache nor
# the churn is anywhere in it.
check_text() {
	local row
	row=$(grep -E '^ +[0-9.]+ [KMG]iB ' "$2" | head -1)
	case $row in
	*" $LEAK") pass "$1: the leak first" ;;
	*) fail "$1: the leak first" "$(cat "$2")" ;;
	esac
	if echo "$row" | awk '$2 == "MiB" && $1 >= 6 && $1 <= 60 { ok = 1 } END { exit !ok }'; then
		pass "$1: its rate, ~18 MiB/min"
	else
		fail "$1: its rate, ~18 MiB/min" "$row"
	fi
	assert_no_grep "$1: not the cache" "$CACHE" "$2"
	assert_no_grep "$1: not the churn" "$CHURN" "$2"
	assert_grep "$1: says how many dumps, over what span" \
		'^# [0-9]+ leak suspects over 1[0-9] dumps, [0-9.]+ s \(' "$2"
}

# check_json DESC FILE: the same of JSON.
check_json() {
	local f r
	f=$(jq -r '.suspects[0].function' "$2" 2>/dev/null)
	assert_eq "$1: the leak first" "$LEAK" "$f"
	r=$(jq -r '.suspects[0].rate_per_min' "$2" 2>/dev/null)
	if [ -n "$r" ] && [ "$r" != null ] && [ "$r" -ge $((6 << 20)) ] && [ "$r" -le $((60 << 20)) ]; then
		pass "$1: its rate, ~18 MiB/min"
	else
		fail "$1: its rate, ~18 MiB/min" "$(head -c 600 "$2")"
	fi
	assert_eq "$1: neither the cache nor the churn" 0 \
		"$(jq "[.suspects[].function | select(. == \"$CACHE\" or . == \"$CHURN\")] | length" "$2")"
	assert_eq "$1: it grew in nearly every interval" true \
		"$(jq '.suspects[0].grown * 10 >= .suspects[0].intervals * 8' "$2")"
}

ask_job jmlk "$D/jmlk"
check_text jmlk "$D/jmlk"
assert_no_grep "jmlk: every index was there, none made now" '^# indexed' "$D/jmlk"
# Indexes that are missing (a busy spell left more than the worker
# keeps a list of, a restart) are made by the question, which says so
# (4, or one more if a scheduled dump's own index is still to come).
find "$D/dumps" -maxdepth 1 -name '*.heap.trend' | sort | head -4 | xargs rm -f
ask_job jmlk "$D/jmlk2"
check_text "jmlk with 4 indexes missing" "$D/jmlk2"
assert_grep "jmlk with 4 indexes missing: says it made them" \
	'^# indexed [45] of the [0-9]+ dumps now' "$D/jmlk2"
code=$(http_job "http://127.0.0.1:$HPORT/jemalloc/leaks" "$D/leaks.json")
assert_eq "/jemalloc/leaks: 200" 200 "$code"
check_json /jemalloc/leaks "$D/leaks.json"
assert_eq "/jemalloc/leaks: a series point per dump" true \
	"$(jq '(.points | length) == .dumps and (.suspects[0].series | length) == .dumps' "$D/leaks.json")"
code=$(http_job "http://127.0.0.1:$HPORT/jemalloc/leaks?format=text" "$D/leaks.txt")
assert_eq "/jemalloc/leaks?format=text: 200" 200 "$code"
check_text "/jemalloc/leaks?format=text" "$D/leaks.txt"
code=$(http_job "http://127.0.0.1:$HPORT/jemalloc/leaks?format=svg" "$D/leaks.bad")
assert_eq "/jemalloc/leaks?format=svg: 400" 400 "$code"

# The flame graph diff the page links to, between the suspect's first
# and last dump of growth, through the existing route.
from=$(jq -r '.suspects[0].from' "$D/leaks.json")
to=$(jq -r '.suspects[0].to' "$D/leaks.json")
code=$(http_job "http://127.0.0.1:$HPORT/jemalloc/dump?name=$to&base=$from&format=svg" "$D/diff.svg")
assert_eq "the suspect's flame graph diff ($from -> $to): 200" 200 "$code"
assert_grep_F "the diff names the leak" "$LEAK" "$D/diff.svg"

# History: the ring, since=, a bad since=, jmhi.
code=$(timeout 30 curl -sS -o "$D/hist.json" -w '%{http_code}' "http://127.0.0.1:$HPORT/jemalloc/history")
assert_eq "/jemalloc/history: 200" 200 "$code"
rows=$(jq '.rows | length' "$D/hist.json")
if [ "${rows:-0}" -ge 15 ]; then pass "/jemalloc/history: a row a second ($rows)"; else fail "/jemalloc/history: a row a second" "$(head -c 400 "$D/hist.json")"; fi
assert_eq "/jemalloc/history: allocated grew with the leak" true \
	"$(jq '(.columns | index("allocated")) as $i | .rows[-1][$i] > .rows[0][$i]' "$D/hist.json")"
t=$(jq '.rows[-3][0]' "$D/hist.json")
code=$(timeout 30 curl -sS -o "$D/since.json" -w '%{http_code}' "http://127.0.0.1:$HPORT/jemalloc/history?since=$t")
assert_eq "/jemalloc/history?since=: only the rows after" true \
	"$(jq --argjson t "$t" '(.rows | length) >= 2 and all(.rows[]; .[0] > $t)' "$D/since.json")"
code=$(timeout 30 curl -sS -o "$D/bad.json" -w '%{http_code}' "http://127.0.0.1:$HPORT/jemalloc/history?since=1e9")
assert_eq "/jemalloc/history?since=1e9: 400" 400 "$code"
ask jmhi >"$D/jmhi"
assert_grep "jmhi: the allocated line with a sparkline" '^allocated +[0-9.]+ [KMG]?i?B .*[▁▂▃▄▅▆▇█]{10,}' "$D/jmhi"

# The same analysis offline, over the same dumps.
mapfile -t dumps < <(find "$D/dumps" -maxdepth 1 -name '*.heap' | sort -t. -k3 -n)
timeout 120 "$JM4LW_PROF" --trend "${dumps[@]}" >"$D/trend.txt" 2>"$D/trend.err"
check_text "jm4lw-prof --trend" "$D/trend.txt"
timeout 120 "$JM4LW_PROF" --trend -f json "${dumps[@]}" >"$D/trend.json" 2>>"$D/trend.err"
check_json "jm4lw-prof --trend -f json" "$D/trend.json"
if timeout 60 "$JM4LW_PROF" --trend "${dumps[0]}" "${dumps[1]}" >"$D/two" 2>&1; then
	fail "--trend over 2 dumps is refused" "$(cat "$D/two")"
else
	assert_grep "--trend over 2 dumps is refused, one line" 'need at least 3 dumps.*there are 2' "$D/two"
fi

# Control: the naive question puts the cache up with the leak.
timeout 60 "$JM4LW_PROF" --base "${dumps[0]}" "${dumps[${#dumps[@]} - 1]}" >"$D/base.txt" 2>/dev/null
assert_grep "control: --base FIRST LAST shows the cache growing" "^ +[1-9][0-9.]* .* $CACHE\$" "$D/base.txt"

# The page in a real browser (leak_page.py, over page.py's driver): the
# history ring drawn on opening, the leak in the Leaks section, not the
# cache, its growth's flame graph linked.
if command -v chromium >/dev/null; then
	run_page leak_page.py 6 180 "$HPORT" "$D" "$rows" "$LEAK" "$CACHE"
else
	skip "the page in a browser: no chromium"
fi

alive_host() { kill -0 "$PID" 2>/dev/null; }
if alive_host; then pass "leak_host is still up"; else fail "leak_host is still up" "$(tail -5 "$D/err")"; fi
stop_host leak_host
# history_points = 0: no ring; jmhi says so in one line, the route is
# a 404 with the same line, and the daemon serves on.
printf 'history_points = 0\n' >"$D/nohist.conf"
if start_daemon -- -f "$D/nohist.conf" -l 127.0.0.1:0; then
	ask jmhi >"$D/nohist"
	assert_bytes "history_points=0: jmhi's one line" "$D/nohist" 'error: no history: history_points is 0\n'
	code=$(timeout 30 curl -sS -o "$D/nohist.http" -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/jemalloc/history")
	assert_eq "history_points=0: /jemalloc/history is a 404" 404 "$code"
	alive "history_points=0: still answers ruok"
	stop_daemon
fi
finish

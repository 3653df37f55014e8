#!/bin/bash
# Fleet scrapers against the real jm4lwd, with real curl: Parca and
# Grafana Alloy count anything but 200 as a failed scrape, and several of
# them (or one per replica of a collector) scrape one target at once and
# every interval. So: concurrent scrapes of /debug/pprof/heap and /allocs
# all get 200 and share dumps (one per question: at most 2 for the two
# paths); a scrape within dump_min_interval gets the newest profile with
# an Age header and makes no dump; a person's jmfp inside it still gets
# its 429 line; past scrape_waiters_max a scrape gets 503 with
# Retry-After; seconds=N answers a delta (two dumps N s apart) or a 400
# with Go's line, and the loop answers meanwhile.
#
#	bash scrape.sh   (JM4LWD from ctest)
. "$(dirname "$0")/../lib.sh"

need curl nc.openbsd timeout

URL=
PIDS=()
# scrape NAME PATH: one curl in the background; its status in
# $T/NAME.code, headers in $T/NAME.head, body in $T/NAME.body.
scrape() {
	(timeout $((60 * SLOW)) curl -s -o "$T/$1.body" -D "$T/$1.head" \
		-w '%{http_code}' "$URL$2" >"$T/$1.code" 2>/dev/null || true) &
	PIDS+=($!)
}

# settle: the scrapes started are done (not the daemon, also a job).
settle() {
	wait "${PIDS[@]}"
	PIDS=()
}

# codes NAME...: the statuses of the scrapes NAME..., sorted and counted.
codes() {
	local n
	for n in "$@"; do cat "$T/$n.code" 2>/dev/null || echo none; echo; done |
		sed '/^$/d' | sort | uniq -c | awk '{ printf "%s%sx%s", sep, $1, $2; sep = " " }'
}

# A window long enough that a slow machine's whole burst falls in it.
d=$(scratch shared)
printf 'dump_min_interval = 30\n' >"$d/jm4lwd.conf"
start_daemon -C "$d" -e MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:10 -- \
	-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || finish
URL=http://127.0.0.1:$HTTP_PORT
before=$(mntr_value jm4lw_profiles_served)
t0=$(date +%s.%N)
names=()
for i in 1 2 3 4; do
	scrape "heap$i" /debug/pprof/heap
	scrape "allocs$i" /debug/pprof/allocs
	names+=("heap$i" "allocs$i")
done
settle
t1=$(date +%s.%N)
after=$(mntr_value jm4lw_profiles_served)
got=$(codes "${names[@]}")
echo "# 8 concurrent scrapes (4 heap, 4 allocs): $got, $((after - before)) dumps, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
assert_eq "8 concurrent scrapes (4 /heap, 4 /allocs) all get 200" "8x200" "$got"
if [ $((after - before)) -ge 1 ] && [ $((after - before)) -le 2 ]; then
	pass "8 concurrent scrapes cost at most 2 dumps ($((after - before)))"
else
	fail "8 concurrent scrapes cost at most 2 dumps" "profiles_served went $before -> $after"
fi
# The shared bodies are whole profiles: gzip, each one a copy.
for n in heap1 heap4 allocs1 allocs4; do
	if [ "$(head -c 2 "$T/$n.body" | od -An -tx1 | tr -d ' ')" = 1f8b ] &&
		gzip -t <"$T/$n.body" 2>/dev/null; then
		pass "$n: a whole gzipped profile ($(stat -c %s "$T/$n.body") bytes)"
	else
		fail "$n: a whole gzipped profile" "$(head -c 200 "$T/$n.body")"
	fi
done

# Within dump_min_interval: the newest profile of that path, its age in
# Age, and no dump.
before=$(mntr_value jm4lw_profiles_served)
assert_http "a scrape within dump_min_interval gets 200" 200 inside /debug/pprof/allocs
age=$(hheader inside Age)
if [[ $age =~ ^[0-9]+$ ]] && [ "$age" -lt 30 ]; then
	pass "it carries Age: $age (seconds, under dump_min_interval)"
else
	fail "it carries an Age header under dump_min_interval" "$(cat "$T/inside.head")"
fi
assert_eq "it made no dump" "$before" "$(mntr_value jm4lw_profiles_served)"
if cmp -s "$T/inside.body" "$T/allocs1.body"; then
	pass "it is the newest /allocs profile, byte for byte"
else
	fail "it is the newest /allocs profile, byte for byte"
fi
# A person's jmfp keeps today's rules: the word's 429 line.
ask jmfp >"$T/jmfp.out"
assert_grep "jmfp within dump_min_interval is still refused with the time to retry" \
	'^error: jmfp refused: the last dump was .* retry in ' "$T/jmfp.out"
assert_http "POST /4lw/jmfp within dump_min_interval is still 429" 429 jmfp \
	/4lw/jmfp -X POST -H 'X-Jm4lw: 1'
assert_grep "  with Retry-After" '^Retry-After: [0-9]' "$T/jmfp.head"
alive "jm4lwd answers ruok after the burst"
stop_daemon

# Past scrape_waiters_max: 503 with Retry-After, the others 200. No
# window (every scrape after a job would make a dump) and a cap of 2, so
# a burst of 12 overflows it while the first dump runs. Whether the
# curls land inside that dump is the machine's timing, so a burst that
# found the worker free each time is made again (at most 5); every
# burst's answers must be 200 or 503.
d=$(scratch crowded)
printf 'dump_min_interval = 0\nscrape_waiters_max = 2\n' >"$d/jm4lwd.conf"
start_daemon -C "$d" -e MALLOC_CONF=prof:true,lg_prof_sample:10 -- \
	-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || finish
URL=http://127.0.0.1:$HTTP_PORT
for burst in 1 2 3 4 5; do
	names=()
	for i in $(seq 12); do
		scrape "c$burst-$i" /debug/pprof/heap
		names+=("c$burst-$i")
	done
	settle
	got=$(codes "${names[@]}")
	echo "# burst $burst: 12 concurrent scrapes, scrape_waiters_max 2: $got"
	if codes "${names[@]}" | tr ' ' '\n' | grep -Eqv 'x(200|503)$'; then
		break # an answer other than 200 or 503: fails below
	fi
	[[ $got == *x503* ]] && break
done
if [[ $got == *x200* && $got == *x503* && $got != *none* ]] &&
	! codes "${names[@]}" | tr ' ' '\n' | grep -Eqv 'x(200|503)$'; then
	pass "past scrape_waiters_max a scrape gets 503, the rest 200 ($got)"
else
	fail "past scrape_waiters_max a scrape gets 503, the rest 200" "$got"
fi
for n in "${names[@]}"; do
	if [ "$(cat "$T/$n.code")" = 503 ]; then
		assert_grep "a 503 says Retry-After" '^Retry-After: 1' "$T/$n.head"
		assert_grep "  and why, naming scrape_waiters_max" \
			'^error: .*scrape_waiters_max 2' "$T/$n.body"
		break
	fi
done
alive "jm4lwd answers ruok after the crowd"
stop_daemon

# Waves of questions: with no window every scrape after a job makes a
# dump, so /heap and /allocs take turns, each turn's group queued behind
# the other's job (a queued group's list once outlived its slot: a new
# group there wrote into the running job's waiters). 40 alternating
# scrapes, under max_connections_per_peer: all 200.
d=$(scratch waves)
printf 'dump_min_interval = 0\n' >"$d/jm4lwd.conf"
start_daemon -C "$d" -e MALLOC_CONF=prof:true,lg_prof_sample:10 -- \
	-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || finish
URL=http://127.0.0.1:$HTTP_PORT
names=()
for i in $(seq 20); do
	scrape "w$i" /debug/pprof/heap
	scrape "v$i" /debug/pprof/allocs
	names+=("w$i" "v$i")
	[ $((i % 5)) = 0 ] && sleep 0.05
done
settle
got=$(codes "${names[@]}")
echo "# 40 alternating /heap and /allocs scrapes in waves, no window: $got"
assert_eq "waves of two questions: every scrape gets 200" "40x200" "$got"
alive "jm4lwd answers ruok after the waves"
stop_daemon

# seconds=N: a delta, two dumps N s apart. The wait is a timer on the
# loop, not the worker: a person's jmfp meanwhile is served, not 409.
# Scrapes of the same question share it: two dumps for two requesters.
d=$(scratch delta)
printf 'dump_min_interval = 0\nwrite_timeout = 10\n' >"$d/jm4lwd.conf"
start_daemon -C "$d" -e MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:10 -- \
	-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || finish
URL=http://127.0.0.1:$HTTP_PORT
for bad in 0 -1 abc 1.5 '' 99999999999999999999 10; do
	code=$(timeout $((30 * SLOW)) curl -s -o "$T/bad.body" -w '%{http_code}' \
		"$URL/debug/pprof/heap?seconds=$bad")
	assert_eq "seconds=$bad gets 400" 400 "$code"
done
assert_grep "seconds=10 says Go's line, the limit and its key" \
	'^error: profile duration exceeds server.s WriteTimeout: seconds=10, at most 9 with write_timeout = 10 \(raise write_timeout in the configuration\)$' "$T/bad.body"
code=$(curl -s -o "$T/bad.body" -w '%{http_code}' "$URL/debug/pprof/allocs?seconds=x")
assert_grep "seconds=x says Go's line" \
	'^error: invalid value for "seconds" - must be a positive integer$' "$T/bad.body"
# A delta with thread labels: refused in one line, never served without
# the labels asked for.
code=$(curl -s -o "$T/lab.body" -w '%{http_code}' "$URL/debug/pprof/heap?seconds=1&labels=thread")
assert_eq "seconds=1&labels=thread gets 400" 400 "$code"
assert_grep "... saying a delta carries no thread labels" \
	'^error: labels=thread: a delta \(seconds=1\) carries no thread labels; ask for one or the other$' "$T/lab.body"
before=$(mntr_value jm4lw_profiles_served)
t0=$(date +%s.%N)
scrape delta1 '/debug/pprof/heap?seconds=3'
scrape delta2 '/debug/pprof/heap?seconds=3'
sleep 1
assert_http "POST /4lw/jmfp while a delta waits is served" 200 during \
	/4lw/jmfp -X POST -H 'X-Jm4lw: 1'
assert_http "  and so is another scrape" 200 other /debug/pprof/allocs
settle
t1=$(date +%s.%N)
after=$(mntr_value jm4lw_profiles_served)
got=$(codes delta1 delta2)
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
echo "# 2 concurrent ?seconds=3: $got in $took s; profiles_served +$((after - before)) (2 of the delta, 1 the /allocs)"
assert_eq "two concurrent deltas of the same span get 200" "2x200" "$got"
if awk -v t="$took" 'BEGIN { exit !(t >= 3) }'; then
	pass "a delta takes its N seconds ($took s)"
else
	fail "a delta takes its N seconds" "$took s"
fi
assert_eq "they share one delta: 2 dumps, plus the /allocs scrape's" 3 $((after - before))
assert_grep "a delta's file name says so" 'filename="heap-delta"' "$T/delta1.head"
if cmp -s "$T/delta1.body" "$T/delta2.body"; then
	pass "both got the same delta, byte for byte"
else
	fail "both got the same delta, byte for byte"
fi
alive "jm4lwd answers ruok after the deltas"
# A delta under way when the daemon stops: its requester is answered.
scrape late '/debug/pprof/heap?seconds=9'
sleep 1
stop_daemon
settle
case $(cat "$T/late.code") in
200 | 000) fail "a delta cut by SIGTERM gets an error line" "$(cat "$T/late.code")" ;;
*) pass "a delta cut by SIGTERM gets an error status ($(cat "$T/late.code"))" ;;
esac
finish

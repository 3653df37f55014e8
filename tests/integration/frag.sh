#!/bin/bash
# Fragmentation by allocation site: tests/host/frag_host allocates
# 100000 objects of 300 B (the 320 B class) through frag_host_site_a()
# and frees 80 % of them at random, and 40000 of 48 B through
# frag_host_site_b(), all kept.
# Then:
#   - jmfr and /jemalloc/fragmentation name 320 B as the worst class and
#     frag_host_site_a as its one site (100 %), never frag_host_site_b;
#   - the class's free regions are jemalloc's own bins as jmsj reads
#     them: (curslabs x nregs - curregs) x size;
#   - the site's estimated live bytes, less the sampled objects jemalloc
#     keeps outside slabs, are the class's curregs x size within sampling
#     error;
#   - with opt.prof_stats, the class's requests average 300 B: 20 B of
#     internal waste in each live region; without, the text says how;
#   - format=fragflame weights the site by the class's free regions;
#   - with recent_max (and jemalloc's prof_recent_alloc_max from the
#     start) above the host's sampled allocations, prof_recent still
#     holds site A's live objects: jmfr's site line shows the oldest one's
#     age, at least the time since the host made them and at most the
#     time since it started; with the default 64, only the line saying
#     what prof_recent covers, and no age;
#   - a bad format is a 400 with one line; jmdr points to jmfr;
#   - allow = readonly serves jmfr; allow = ruok refuses it and the route.
#
#	bash frag.sh   (FRAG_HOST=path/to/frag_host, else build/)
#
# Not run in sanitizer builds: the sanitizer's malloc serves the heap.
. "$(dirname "$0")/../lib.sh"

FRAG_HOST=${FRAG_HOST:-$ROOT/build/tests/host/frag_host}
LG=12

need nc.openbsd curl jq timeout

# start DIR: frag_host with DIR/conf (if any), dumping into DIR/dumps;
# sets PID, PORT and HPORT, or dies.
start() {
	mkdir -p "$1/dumps"
	(cd "$1" && exec env JM4LW_CONF="$([ -f "$1/conf" ] && echo "$1/conf")" \
		MALLOC_CONF="prof:true,prof_active:true,lg_prof_sample:$LG${EXTRA:-}" \
		"$host" "$1/dumps") </dev/null >"$1/out" 2>"$1/err" &
	PID=$!
	track "$PID"
	PORT=
	HPORT=
	for _ in $(seq 200); do
		PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$1/out")
		HPORT=$(sed -n 's/^http on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$1/out")
		[ -n "$PORT" ] && [ -n "$HPORT" ] && return 0
		sleep 0.1
	done
	die "frag_host is listening" "$(cat "$1/err")"
}

host=$(realpath "$FRAG_HOST")
D=$(scratch frag)
# prof_recent's ring, from the start, holds every sampled allocation of
# the fill (some 7300 of site A, 500 of site B at lg 12).
echo "recent_max = 20000" >"$D/conf"
launched=$(date +%s.%N)
EXTRA=,prof_stats:true,prof_recent_alloc_max:20000 start "$D"
made=$(date +%s.%N) # the port is printed after the fill
sleep 2

# get URL FILE: the body into FILE, again after a rate refusal (429).
get() {
	local code
	for _ in $(seq 30); do
		code=$(timeout 60 curl -sS -o "$2" -w '%{http_code}' "$1")
		[ "$code" = 429 ] || [ "$code" = 409 ] || break
		sleep 0.5
	done
	echo "$code"
}

asked=$(date +%s.%N)
ask_when_due jmfr >"$D/text"
answered=$(date +%s.%N)
assert_grep "jmfr: the method and its limits" '^# .*sampling error' "$D/text"
assert_grep "jmfr: 320 B is the worst class" '^ +320 B ' "$D/text"
assert_grep "jmfr: frag_host_site_a has all of it, its age from prof_recent" \
	'^ +100\.0% .* frag_host_site_a  oldest live sampled object [0-9.]+ s old \(prof_recent, [0-9]+ of its records\)$' "$D/text"
age=$(sed -n 's/.* frag_host_site_a  oldest live sampled object \([0-9.]*\) s old .*/\1/p' "$D/text")
# The text rounds to 0.1 s; jemalloc's coarse clock ticks in ms.
if awk -v a="$age" -v lo="$(awk -v x="$asked" -v y="$made" 'BEGIN { print x - y }')" \
	-v hi="$(awk -v x="$answered" -v y="$launched" 'BEGIN { print x - y }')" \
	'BEGIN { exit !(a + 0.05 >= lo && a - 0.05 <= hi) }'; then
	pass "jmfr: the age ($age s) is at least the time since the host made its objects"
else
	fail "jmfr: the age is at least the time since the host made its objects" \
		"$age s, made $made, launched $launched, asked $asked, answered $answered"
fi
assert_grep "jmfr: what prof_recent covers, once" \
	'^prof_recent keeps the last 20000 sampled allocations \(recent_max\): older objects, which are the ones that pin slabs, are not in it' "$D/text"
assert_eq "jmfr: the prof_recent line is said once" 1 "$(grep -c '^prof_recent ' "$D/text")"
assert_grep "jmfr: advice for a redis operator" 'activedefrag' "$D/text"
assert_grep "jmfr: advice for a C developer" 'MALLOCX_ARENA' "$D/text"

code=$(get "http://127.0.0.1:$HPORT/jemalloc/fragmentation" "$D/json")
assert_eq "/jemalloc/fragmentation: 200" 200 "$code"
ask jmsj >"$D/stats"
w=$(jq -r '.worst[0].size' "$D/json")
assert_eq "JSON: the worst class is 320 B" 320 "$w"
assert_eq "JSON: its first site is frag_host_site_a" frag_host_site_a \
	"$(jq -r '.worst[0].sites[0].site' "$D/json")"
share=$(jq -r '.worst[0].sites[0].share' "$D/json")
if awk -v s="$share" 'BEGIN { exit !(s >= 0.999) }'; then
	pass "JSON: frag_host_site_a's share is 100 % ($share)"
else
	fail "JSON: frag_host_site_a's share is 100 %" "$share"
fi
assert_eq "JSON: prof_recent's recent_max" 20000 "$(jq '.recent.recent_max' "$D/json")"
assert_eq "JSON: prof_recent was read" null "$(jq '.recent.error' "$D/json")"
live=$(jq '.worst[0].sites[0].recent.live' "$D/json")
# 20 % of some 7300 samples of site A are live: about 1460.
if [ "$live" -ge 1000 ] 2>/dev/null && [ "$live" -le 2000 ]; then
	pass "JSON: prof_recent holds site A's live sampled objects ($live)"
else
	fail "JSON: prof_recent holds site A's live sampled objects" "$live"
fi
assert_eq "JSON: they are all given to the site" "$live" "$(jq '.recent.matched' "$D/json")"
jage=$(jq '.worst[0].sites[0].recent.oldest_age_s' "$D/json")
if awk -v a="$jage" -v lo="$(awk -v x="$asked" -v y="$made" 'BEGIN { print x - y }')" \
	-v hi="$(awk -v y="$launched" -v x="$(date +%s.%N)" 'BEGIN { print x - y }')" \
	'BEGIN { exit !(a >= lo - 0.01 && a <= hi + 0.01) }'; then
	pass "JSON: the oldest one's age ($jage s) is since the fill"
else
	fail "JSON: the oldest one's age is since the fill" "$jage"
fi
assert_eq "JSON: frag_host_site_b is not a site of the 320 B class" \
	0 "$(jq '[.worst[0].sites[] | select(.site == "frag_host_site_b")] | length' "$D/json")"
# jemalloc's own figures for the class (jmsj: malloc_stats_print's JSON).
j=$(jq '.worst[0].bin' "$D/json")
read -r size < <(jq -r ".jemalloc.arenas.bin[$j].size" "$D/stats")
frag_vs_bins "JSON: " "$D/json" "$D/stats" "$size" 0.1 '.worst[0].sites[0].bytes'
assert_grep_F "JSON: the limits are said" 'inferred from its mean' "$D/json"
assert_eq "prof_stats: the class's requests average 300 B" 300 \
	"$(jq '.worst[0].req_mean' "$D/json")"
assert_eq "prof_stats: 20 B of internal waste in each live region" \
	"$((20 * regs))" "$(jq '.worst[0].internal_bytes' "$D/json")"
assert_grep "prof_stats: jmfr says so" \
	'^  requests average 300 B of its 320: ~[0-9.]+ [KM]iB of its live regions is internal waste$' "$D/text"

code=$(get "http://127.0.0.1:$HPORT/jemalloc/fragmentation?format=fragflame" "$D/flame")
assert_eq "fragflame: 200" 200 "$code"
assert_grep "fragflame: the site under its class, weighted by its waste" \
	'^size class 320 B;.*frag_host_site_a [0-9]+$' "$D/flame"
code=$(get "http://127.0.0.1:$HPORT/jemalloc/fragmentation?format=nope" "$D/bad")
assert_eq "a bad format: 400" 400 "$code"
assert_grep "a bad format: one line naming the formats" 'want json, text or fragflame' "$D/bad"

ask jmdr >"$D/doctor"
assert_grep "jmdr points to jmfr for the fragmentation" 'jmfr names the allocation sites behind this fragmentation' "$D/doctor"
alive "frag_host still answers ruok"
stop_host frag_host "$PID" "$D/err"

# The allow list: jmfr changes nothing (readonly has it); a list
# without it refuses the word and the route.
D=$(scratch frag_ro)
echo "allow = readonly" >"$D/conf"
start "$D"
ask_when_due jmfr >"$D/text"
assert_grep "allow = readonly: jmfr answers" '^# fragmentation by size class' "$D/text"
assert_grep "recent_max 64: site A's objects are past prof_recent: no age" \
	'^ +100\.0% .* frag_host_site_a$' "$D/text"
assert_grep "recent_max 64: the line says what prof_recent covers" \
	'^prof_recent keeps the last 64 sampled allocations \(recent_max\): older objects, which are the ones that pin slabs, are not in it' "$D/text"
assert_grep_F "without prof_stats: jmfr says how to see internal waste" \
	'MALLOC_CONF=prof_stats:true shows it' "$D/text"
stop_host "frag_host (readonly)" "$PID" "$D/err"
D=$(scratch frag_ruok)
echo "allow = ruok" >"$D/conf"
start "$D"
assert_grep_F "allow = ruok: jmfr is refused" \
	"jmfr is not executed because it is not in the whitelist." <(ask jmfr)
code=$(get "http://127.0.0.1:$HPORT/jemalloc/fragmentation" "$D/refused")
assert_eq "allow = ruok: /jemalloc/fragmentation is a 403" 403 "$code"
stop_host "frag_host (ruok)" "$PID" "$D/err"
finish

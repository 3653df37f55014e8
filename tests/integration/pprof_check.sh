#!/bin/bash
# Every pprof we serve, read by the parser the fleet reads it with. Parca
# and Grafana Alloy's pyroscope.scrape fetch /debug/pprof/allocs as they
# scrape Go services; Parca's scraper parses each body with google/pprof's
# profile.ParseData (which ends in CheckValid) and its store then wants
# ids in order; Alloy wants application/octet-stream and diffs the
# alloc_* values itself. go tool pprof (pprof.sh, http_pprof.sh) shows a
# profile without a library user's checks, so tests/tools/pprofcheck,
# built here offline against Debian's golang-github-google-pprof-dev,
# runs ParseData and CheckValid on each body, refuses one pprof took
# through a legacy text parser or whose ids Parca would refuse, and
# prints what a scraper sees (sample types, default, period, counts,
# mappings, build IDs, time and duration).
#
# On jm4lwd under the real jemalloc, with prof_accum on (Go's four sample
# types) and off (the inuse pair): /debug/pprof/heap and /allocs,
# /jemalloc/profile?format=pprof and its base=previous, a kept dump's
# /jemalloc/dump?format=pprof and its base=<dump>, and jm4lw-prof -f pprof
# of the kept dumps (alone and --base). The thread label: none on
# /debug/pprof/heap (scrapers), on ?labels=thread, /jemalloc/profile's and
# jm4lw-prof's, whose inuse_space still adds up to -f threads' Total. /pprof/heap is jeprof's raw
# heap_v2, not pprof: google/pprof must refuse it. And the checker must
# refuse a truncated body, or its passes would prove nothing.
#
#	bash pprof_check.sh   (JM4LWD, JM4LW_PROF from ctest)
. "$(dirname "$0")/../lib.sh"

need go curl timeout
[ -x "$JM4LW_PROF" ] || die "$JM4LW_PROF is not executable"

# Debian's package puts the source under /usr/share/gocode; Go 1.19 builds
# against it offline in GOPATH mode (no module proxy, no go.mod). HOME and
# GOCACHE are ours: the build writes nothing outside $T.
GOCODE=/usr/share/gocode
[ -d "$GOCODE/src/github.com/google/pprof/profile" ] ||
	die "google/pprof's profile package is not in $GOCODE (scripts/deps.sh test installs golang-github-google-pprof-dev)"
CHECK=$T/pprofcheck
mkdir -p "$T/home" "$T/gocache"
if ! (cd "$TESTS_DIR/tools/pprofcheck" &&
	HOME=$T/home GOCACHE=$T/gocache GO111MODULE=off GOPATH=$GOCODE \
		GOFLAGS='' GOPROXY=off timeout 300 go build -o "$CHECK" .) >"$T/build.err" 2>&1; then
	die "pprofcheck builds against $GOCODE: $(head -5 "$T/build.err")"
fi
pass "pprofcheck builds offline against Debian's google/pprof ($(go version | awk '{ print $3 }'))"

# check DESC INPUT WANT_TYPES PERIOD [base]: the checker passes INPUT (a
# URL or a file) and sees a gzipped protobuf of sample types WANT_TYPES
# with period space/bytes:PERIOD, samples in it (a base view may have
# none: nothing sampled grew or shrank), every location in a mapping;
# its line goes into the output either way.
check() {
	local desc=$1 in=$2 types=$3 period=$4 base=${5:-} line bad=
	if ! line=$(timeout 180 "$CHECK" "$in" 2>&1); then
		fail "$desc: google/pprof's ParseData and CheckValid take it" "$line"
		return 1
	fi
	pass "$desc: google/pprof's ParseData and CheckValid take it"
	LAST=$line
	echo "# ${line#"$in": }"
	case $in in
	http*) [[ $line == *" http=200 ctype=application/octet-stream "* ]] ||
		bad="$bad; not 200 application/octet-stream (Alloy refuses any other type)" ;;
	esac
	# Parca files a profile under time_nanos (0 is 1970), whether it
	# was served or written offline; a difference spans its two dumps.
	[[ $line =~ \ time_ns=[1-9] ]] || bad="$bad; no time_nanos"
	[[ $base != base || $line =~ \ duration_ns=[1-9] ]] ||
		bad="$bad; a difference without duration_nanos"
	[[ $line == *" gzip=yes proto=yes "* ]] || bad="$bad; not a gzipped protobuf"
	[[ $line == *" types=$types "* ]] || bad="$bad; sample types not $types"
	[[ $line == *" period=space/bytes:$period "* ]] ||
		bad="$bad; period not space/bytes:$period"
	[[ $line =~ \ samples=[1-9] || $base == base ]] || bad="$bad; no samples"
	[[ $line == *" loc_mapped=all "* ]] || bad="$bad; a location without a mapping"
	[[ $line =~ \ buildids=[1-9][0-9]*/ ]] || bad="$bad; no mapping with a build ID"
	if [ -n "$bad" ]; then
		fail "$desc: what a scraper sees" "${bad#; }"
		return 1
	fi
	pass "$desc: gzip, Go's layout ($types), space/bytes:$period, ${base:+a diff of }samples, mapped, build IDs"
}

INUSE=inuse_objects/count,inuse_space/bytes
ALL=alloc_objects/count,alloc_space/bytes,$INUSE

# has DESC PATTERN: the last checked line matches PATTERN (a regex).
has() {
	if [[ $LAST =~ $2 ]]; then
		pass "$1"
	else
		fail "$1" "$LAST"
	fi
}

# every_path NAME TYPES: every pprof path and format on the daemon
# started last (1 KiB sampling), and jm4lw-prof -f pprof of its dumps.
every_path() {
	local name=$1 types=$2 url=http://127.0.0.1:$HTTP_PORT p=1024 a b
	ask mntr >/dev/null # something sampled besides the start
	check "$name: /debug/pprof/heap" "$url/debug/pprof/heap" "$types" $p
	# Go's /heap names no default: tools take the last type.
	has "$name: /debug/pprof/heap shows inuse_space first" ' default=inuse_space '
	# Scrapers split series on labels: none where they scrape.
	has "$name: /debug/pprof/heap has no label" ' labels=none '
	check "$name: /debug/pprof/heap?labels=thread" \
		"$url/debug/pprof/heap?labels=thread" "$types" $p
	has "$name: /debug/pprof/heap?labels=thread labels each sample's thread" \
		' labels=thread:[1-9][0-9]* '
	check "$name: /debug/pprof/allocs" "$url/debug/pprof/allocs" "$types" $p
	# Go's /allocs shows alloc_space first; with no allocation totals
	# there is none to show, and a comment says why rather than zeros.
	if [ "$types" = "$ALL" ]; then
		has "$name: /debug/pprof/allocs shows alloc_space first" ' default=alloc_space '
		has "$name: no comment about prof_accum when it is on" ' comments=""$'
	else
		has "$name: /debug/pprof/allocs falls back to inuse_space" ' default=inuse_space '
		has "$name: a comment says prof_accum is off" ' comments="[^"]*opt.prof_accum is off'
	fi
	# Go's delta (serveDeltaProfile): two dumps 1 s apart, every type
	# subtracted; the profile at the second dump's time, spanning the
	# two (a delta may have no samples: nothing changed).
	check "$name: /debug/pprof/allocs?seconds=1" \
		"$url/debug/pprof/allocs?seconds=1" "$types" $p base
	if [[ $LAST =~ \ duration_ns=([0-9]+) ]] &&
		[ "${BASH_REMATCH[1]}" -ge 900000000 ] && [ "${BASH_REMATCH[1]}" -lt 60000000000 ]; then
		pass "$name: the delta spans about its second (duration_ns=${BASH_REMATCH[1]})"
	else
		fail "$name: the delta spans about its second" "$LAST"
	fi
	check "$name: /debug/pprof/heap?seconds=1" \
		"$url/debug/pprof/heap?seconds=1" "$types" $p base
	has "$name: the heap delta shows inuse_space first" ' default=inuse_space '
	# go tool pprof reads it as it reads a Go delta.
	if timeout $((120 * SLOW)) curl -s -o "$T/$name-delta.pb.gz" \
		"$url/debug/pprof/heap?seconds=1" &&
		HOME=$T/home GOCACHE=$T/gocache timeout $((120 * SLOW)) \
			go tool pprof -raw "$T/$name-delta.pb.gz" >"$T/$name-delta.raw" 2>"$T/$name-delta.err"; then
		assert_grep "$name: go tool pprof -raw reads a delta" '^PeriodType: space bytes' "$T/$name-delta.raw"
		assert_grep "$name:   with its duration" '^Duration: ' "$T/$name-delta.raw"
	else
		fail "$name: go tool pprof -raw reads a delta" "$(cat "$T/$name-delta.err")"
	fi
	check "$name: /jemalloc/profile?format=pprof" \
		"$url/jemalloc/profile?format=pprof" "$types" $p
	has "$name: /jemalloc/profile?format=pprof labels each sample's thread" \
		' labels=thread:[1-9][0-9]* '
	# Two kept dumps, for base=previous and a kept dump's own path.
	if [ "$(hreq "$name-a" /4lw/jmfp -X POST -H 'X-Jm4lw: 1')" != 200 ] ||
		[ "$(hreq "$name-b" /4lw/jmfp -X POST -H 'X-Jm4lw: 1')" != 200 ]; then
		fail "$name: POST /4lw/jmfp keeps two dumps" \
			"$(cat "$T/$name-a.body" "$T/$name-b.body" 2>/dev/null)"
		return 1
	fi
	a=$(cat "$T/$name-a.body")
	b=$(cat "$T/$name-b.body")
	check "$name: /jemalloc/profile?format=pprof&base=previous" \
		"$url/jemalloc/profile?format=pprof&base=previous" "$types" $p base
	check "$name: /jemalloc/dump?name=..&format=pprof" \
		"$url/jemalloc/dump?name=${b##*/}&format=pprof" "$types" $p
	check "$name: /jemalloc/dump?name=..&format=pprof&base=.." \
		"$url/jemalloc/dump?name=${b##*/}&format=pprof&base=${a##*/}" "$types" $p base
	if "$JM4LW_PROF" -f pprof -o "$T/$name.pb.gz" "$b" 2>"$T/$name.err"; then
		check "$name: jm4lw-prof -f pprof of a kept dump" "$T/$name.pb.gz" "$types" $p
		has "$name: jm4lw-prof -f pprof labels each sample's thread" \
			' labels=thread:[1-9][0-9]* '
		# Split by thread, the values still add up: inuse_space's sum
		# is -f threads' Total (both round the one unsampled sum).
		local sum total
		sum=$(sed -n 's/.* sums=\([0-9,]*\) .*/\1/p' <<<"$LAST" | awk -F, '{ print $NF }')
		total=$("$JM4LW_PROF" -f threads "$b" 2>/dev/null | awk '/^Total: / { print $2 }')
		assert_eq "$name: the labelled samples' inuse_space is -f threads' Total" \
			1 "$(( ${sum:-0} > 0 && ${sum:-0} - ${total:-0} <= 1 && ${total:-0} - ${sum:-0} <= 1 ))"
	else
		fail "$name: jm4lw-prof -f pprof of a kept dump" "$(cat "$T/$name.err")"
	fi
	if "$JM4LW_PROF" -f pprof --base "$a" -o "$T/$name-base.pb.gz" "$b" \
		2>"$T/$name.err"; then
		check "$name: jm4lw-prof -f pprof --base" "$T/$name-base.pb.gz" "$types" $p base
	else
		fail "$name: jm4lw-prof -f pprof --base" "$(cat "$T/$name.err")"
	fi
}

d=$(scratch accum)
# Dumps back to back: a scrape a dump, and dump_min_interval (1 s by
# default) would answer 429 to the next within the second.
printf 'dump_min_interval = 0\n' >"$d/jm4lwd.conf"
start_daemon -C "$d" -e MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:10 -- \
	-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || finish
every_path prof_accum "$ALL"

# /pprof/heap is jemalloc's heap_v2 for jeprof, no pprof: a scraper
# pointed at it fails. (pprof's legacy parser knows gperftools'
# "heap profile: ... @ heap_v2/N" header, not jemalloc's "heap_v2/N".)
if timeout 180 "$CHECK" "http://127.0.0.1:$HTTP_PORT/pprof/heap" >"$T/raw.check" 2>&1; then
	fail "/pprof/heap (heap_v2 for jeprof): google/pprof refuses it" \
		"$(cat "$T/raw.check")"
else
	sed 's/^[^ ]*: /# /' "$T/raw.check"
	assert_grep "/pprof/heap (heap_v2 for jeprof): google/pprof refuses it" \
		': FAIL http=200 .*(unrecognized profile format|not a protobuf)' "$T/raw.check"
fi

# The checker fails on a truncated body: half of a good one.
good=$T/prof_accum.pb.gz
if [ -s "$good" ]; then
	head -c $(($(stat -c %s "$good") / 2)) "$good" >"$T/truncated.pb.gz"
	if out=$(timeout 180 "$CHECK" "$T/truncated.pb.gz" 2>&1); then
		fail "the checker refuses a truncated profile" "$out"
	else
		pass "the checker refuses a truncated profile (${out#*: })"
	fi
fi
stop_daemon

# prof_accum off (jemalloc's default): the inuse pair alone.
d=$(scratch inuse)
printf 'dump_min_interval = 0\n' >"$d/jm4lwd.conf"
start_daemon -C "$d" -e MALLOC_CONF=prof:true,lg_prof_sample:10 -- \
	-f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || finish
every_path inuse "$INUSE"
stop_daemon
finish

#!/bin/bash
# The profile words on a real host under the real jemalloc: jmtp, jmcs,
# jmfg and jmdf answer with the live heap symbolized in the process, leave
# no file behind (jmdf's dump excepted), and agree with jm4lw-prof and
# jeprof on the same dumps. dump_symbolized writes the companion that
# jeprof reads without the program, and retention deletes the pair.
#
# The host (tests/host/jeprof_host, leak mode) churns a steady 64 MiB ring
# through jm4lw_test_distinctive_alloc() and leaks ~25 MiB/s through
# jm4lw_test_leaky_function() until 256 MiB.
#
#	bash words_profile.sh   (JEPROF_HOST, JM4LWD, JM4LW_PROF; else build/)
. "$(dirname "$0")/../lib.sh"

RING=jm4lw_test_distinctive_alloc
LEAK=jm4lw_test_leaky_function

need jeprof nc.openbsd timeout xmllint go
[ -x "$JEPROF_HOST" ] || die "$JEPROF_HOST is not executable"

# files DIR: the names in DIR, hidden ones too, but not the staging
# directory's own entry (its content is listed as stage/NAME).
files() {
	(cd "$1" && for f in * .*; do
		case $f in . | .. | '*' | '.*') ;;
		.jm4lw.*) for g in "$f"/*; do [ -e "$g" ] && echo "stage/${g#*/}"; done ;;
		*) echo "$f" ;;
		esac
	done) | sort
}

# rows FILE: the table rows of a jeprof --text style report.
rows() {
	grep -E '^ *-?[0-9.]+ +-?[0-9.]+% +-?[0-9.]+% +-?[0-9.]+ +-?[0-9.]+% ' "$1"
}

case_words() {
	local conf before after p1 p2 top sum
	D=$(scratch words)
	conf=$D/jm4lw.conf
	printf 'dump_min_interval = 0\ndump_symbolized = on\ndump_keep = 2\n' >"$conf"
	start_jeprof_host "$D" JM4LW_TEST_LEAK=1 JM4LW_CONF="$conf" || return 1
	ask jmep >/dev/null
	sleep 2 # the ring turns over under sampling

	before=$(files "$D/dumps")
	ask jmtp >"$D/jmtp.out"
	assert_grep "jmtp: the heading" '^# live heap, top 30 functions by bytes in use$' "$D/jmtp.out"
	assert_grep "jmtp: the Total line, in MiB as every view's" '^Total: [0-9.]+ MiB$' "$D/jmtp.out"
	assert_grep "jmtp: its Total is a sampled estimate, with its expected error" '^# Total: a sampled estimate, ±[0-9.]+% at 95%$' "$D/jmtp.out"
	top=$(rows "$D/jmtp.out" | head -2 | awk '{ print $6 }' | sort | tr '\n' ' ')
	assert_eq "jmtp: the ring and the leak are the top two, by name" \
		"$RING $LEAK " "$top"
	assert_eq "jmtp: at most 30 rows" 1 "$(($(rows "$D/jmtp.out" | wc -l) <= 30))"

	ask jmcs >"$D/jmcs.out"
	assert_no_grep "jmcs: every line is 'frames bytes'" '^$|[^0-9]$| [^ ]*[^0-9 ][^ ]*$' "$D/jmcs.out"
	assert_no_grep "jmcs: no allocator frame left" '(^|;)(malloc|malloc_usable_size|je_[a-z_]*|imalloc[a-z_]*)( |;|$)' "$D/jmcs.out"
	# The ring holds 256 blocks of 256 KiB: the unsampled estimate of
	# what its function holds is 64 MiB give or take sampling error.
	sum=$(awk -v f="$RING" 'index($0, f) { s += $NF } END { printf "%d", s / 1048576 }' "$D/jmcs.out")
	assert_eq "jmcs: $RING holds ~64 MiB (got $sum MiB)" 1 "$((sum >= 48 && sum <= 80))"

	ask jmfg >"$D/jmfg.svg"
	if xmllint --noout "$D/jmfg.svg" 2>"$D/xmllint.err"; then
		pass "jmfg: an SVG document xmllint accepts"
	else
		fail "jmfg: an SVG document xmllint accepts" "$(head -3 "$D/xmllint.err")" \
			"$(head -c 300 "$D/jmfg.svg")"
	fi
	assert_grep "jmfg: names the leak" "$LEAK" "$D/jmfg.svg"

	after=$(files "$D/dumps")
	assert_eq "jmtp, jmcs, jmfg: no file left in dump_dir or its staging directory" \
		"$before" "$after"

	# jmdf: the first has nothing to compare with; its dump is kept.
	ask jmdf >"$D/jmdf1.out"
	assert_grep "jmdf: the first says there is no earlier dump" \
		'^# no earlier dump by this process' "$D/jmdf1.out"
	p1=$(tail -1 "$D/jmdf1.out")
	assert_eq "jmdf: the last line is the kept dump" heap_v2/ "$(head -c 8 "$p1" 2>&1)"
	assert_eq "dump_symbolized: the companion is there" yes \
		"$([ -s "$p1.symbolized" ] && echo yes)"
	# The companion reads without the program: copied away from it.
	cp "$p1.symbolized" "$D/copy.symbolized"
	if timeout 120 jeprof --text "$D/copy.symbolized" >"$D/jeprof-sym.out" 2>"$D/jeprof-sym.err"; then
		assert_grep "jeprof --text reads the companion, no binary given" "$LEAK" "$D/jeprof-sym.out"
	else
		fail "jeprof --text reads the companion" "$(head -3 "$D/jeprof-sym.err")"
	fi

	sleep 2
	ask jmdf >"$D/jmdf2.out"
	assert_grep "jmdf: the second compares with the first" \
		"^# growth since ${p1//./\\.}, " "$D/jmdf2.out"
	p2=$(tail -1 "$D/jmdf2.out")
	top=$(rows "$D/jmdf2.out" | head -1 | awk '{ print $6 }')
	assert_eq "jmdf: the leak grew the most" "$LEAK" "$top"
	# The same two dumps offline: the same growth, row for row.
	"$JM4LW_PROF" --base "$p1" "$p2" 2>&1 | rows /dev/stdin | head -5 >"$D/offline.rows"
	rows "$D/jmdf2.out" | head -5 >"$D/jmdf.rows"
	if cmp -s "$D/offline.rows" "$D/jmdf.rows"; then
		pass "jmdf: its table is jm4lw-prof --base's on the same dumps"
	else
		fail "jmdf: its table is jm4lw-prof --base's on the same dumps" \
			"$(diff "$D/offline.rows" "$D/jmdf.rows")"
	fi
	# dump_keep = 2: a third dump takes the first pair, both files.
	ask jmfp >/dev/null
	assert_eq "retention: the oldest dump and its companion went together" \
		"gone gone" "$([ -e "$p1" ] || echo gone) $([ -e "$p1.symbolized" ] || echo gone)"
	assert_eq "retention: the newer pair stays" "yes yes" \
		"$([ -e "$p2" ] && echo yes) $([ -e "$p2.symbolized" ] && echo yes)"
	assert_eq "mntr: jm4lw_profiles_served counts jmtp jmcs jmfg jmdf jmdf" 5 \
		"$(mntr_value jm4lw_profiles_served)"
	assert_eq "mntr: jm4lw_symbolizer names the backend" "${JM4LW_SYMBOLIZER:-libdw}" \
		"$(mntr_value jm4lw_symbolizer)"
	stop_jeprof_host
}

# Within dump_min_interval a view is drawn from the newest dump and a new
# kept dump (jmfp) is refused; profiling off refuses both.
case_refusals() {
	local code
	D=$(scratch refusals)
	mkdir -p "$D/dumps"
	start_daemon -C "$D" -e MALLOC_CONF=prof:true,prof_active:false -- -l 127.0.0.1:0 -D dumps || return 1
	ask jmtp >/dev/null
	ask jmcs >"$D/jmcs.out"
	ask jmfp >"$D/jmfp.out"
	assert_grep "jmcs right after jmtp: drawn from its dump, which has no samples" \
		'^error: .*no samples.*jmep' "$D/jmcs.out"
	assert_grep "jmfp right after jmtp: refused with the time to retry" \
		'^error: jmfp refused: the last dump was [0-9.]+ s ago and dump_min_interval is 1 s; retry in [0-9.]+ s$' \
		"$D/jmfp.out"
	sleep 1.2
	ask jmcs >"$D/jmcs2.out"
	assert_grep "jmcs on a heap sampled before jmep: one error line" \
		'^error: .*no samples.*jmep' "$D/jmcs2.out"
	# Over HTTP a state of the heap, not a server error: 409, the line.
	sleep 1.2
	code=$(hreq nosamples /4lw/jmcs)
	assert_eq "GET /4lw/jmcs on a heap without samples: 409" 409 "$code"
	assert_grep "GET /4lw/jmcs: the same error line" \
		'^error: .*no samples.*jmep' "$T/nosamples.body"
	stop_daemon
	start_daemon -C "$D" -- -l 127.0.0.1:0 -D dumps || return 1
	for w in jmtp jmfg jmdf; do
		ask $w >"$D/$w.off"
		assert_grep "$w without MALLOC_CONF=prof:true: says how to start it" \
			'^error: heap profiling is not enabled.*MALLOC_CONF=prof:true' "$D/$w.off"
	done
	alive "still serving after the refusals"
	stop_daemon
}

# An empty or partial profile says why, in every format, and what to do:
# sampling inactive since the start (jm4lw-run's and this daemon's way),
# then active with the heap below one sample interval (1 GiB here, so no
# allocation of the daemon's is sampled), then reset; jmrs says it dropped the samples, jmlk that more dumps
# would not help, jm4lw-prof that a dump has no samples.
case_why_empty() {
	local inactive='sampling is inactive \(prof\.active is false\) since the process started: nothing allocated since then is sampled; jmep turns it on'
	local nosample='no sample yet: jemalloc samples one allocation per 1\.0 GiB allocated on average \(lg_prof_sample=30\), and none sampled since [0-9T:-]+Z is still live'
	D=$(scratch why)
	mkdir -p "$D/dumps"
	printf 'dump_min_interval = 0\n' >"$D/c.conf"
	start_daemon -C "$D" -e MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:30 -- -f "$D/c.conf" -l 127.0.0.1:0 -D dumps || return 1
	ask jmtp >"$D/jmtp.out"
	assert_grep "jmtp, sampling inactive: a note says since when and what to do" "^# note: $inactive\$" "$D/jmtp.out"
	ask jmth >"$D/jmth.out"
	assert_grep "jmth, sampling inactive: the same note" "^# note: $inactive\$" "$D/jmth.out"
	ask jmdf >"$D/jmdf.out"
	assert_grep "jmdf, sampling inactive: the same note" "^# note: $inactive\$" "$D/jmdf.out"
	ask jmfg >"$D/jmfg.svg"
	assert_grep "jmfg, sampling inactive: a visible line in the flame graph" "<text id=\"note\" [^>]*>Note: $inactive</text>" "$D/jmfg.svg"
	ask jmcg >"$D/jmcg.dot"
	assert_grep "jmcg, sampling inactive: a line of the legend" "\\\\lNote: $inactive\\\\l" "$D/jmcg.dot"
	assert_grep "jmcg, sampling inactive: a comment for the text's reader" "^/\* note: $inactive \*/\$" "$D/jmcg.dot"
	ask jmcs >"$D/jmcs.out"
	assert_grep "jmcs, sampling inactive: its refusal says the same" "^error: the heap profile has no samples: $inactive\$" "$D/jmcs.out"
	hreq pprof /debug/pprof/heap >/dev/null
	timeout 120 go tool pprof -comments "$T/pprof.body" >"$D/comments" 2>&1
	assert_grep "pprof, sampling inactive: go tool pprof -comments shows the same note" "^$inactive\$" "$D/comments"
	ask jmrc >"$D/jmrc.out"
	assert_grep "jmrc, sampling inactive: why there are no records" "^# note: $inactive\$" "$D/jmrc.out"
	hreq recent /jemalloc/recent >/dev/null
	assert_eq "/jemalloc/recent, sampling inactive: its JSON's note says why" 1 \
		"$(python3 -c 'import json, re, sys; r = json.load(open(sys.argv[1])); print(int(r["records"] == [] and bool(re.fullmatch(sys.argv[2], r["note"]))))' "$T/recent.body" "$inactive")"
	ask jmlk >"$D/jmlk.out"
	assert_grep "jmlk, sampling inactive: too few dumps, and more would hold nothing" "^error: leak suspects need .*; but $inactive\$" "$D/jmlk.out"
	ask jmfp >/dev/null
	ask jmfp >/dev/null
	ask jmlk >"$D/jmlk2.out"
	assert_grep "jmlk over three empty dumps, sampling inactive: the note says why" "^# note: $inactive\$" "$D/jmlk2.out"
	hreq leaks /jemalloc/leaks >/dev/null
	assert_eq "/jemalloc/leaks, sampling inactive: its JSON's note says why" 1 \
		"$(python3 -c 'import json, re, sys; r = json.load(open(sys.argv[1])); print(int(bool(re.fullmatch(sys.argv[2], r["note"]))))' "$T/leaks.body" "$inactive")"
	hreq status /jemalloc/status >/dev/null
	assert_eq "/jemalloc/status: sampling inactive since the start, its interval and the note" \
		"inactive None True 1073741824 1" \
		"$(python3 -c 'import json, re, sys; s = json.load(open(sys.argv[1]))["sampling"]; print(s["state"], s["since"], s["from_start"], s["interval_bytes"], int(bool(re.fullmatch(sys.argv[2], s["note"]))))' "$T/status.body" "$inactive")"
	ask jmep >/dev/null
	hreq status /jemalloc/status >/dev/null
	assert_eq "/jemalloc/status after jmep: active since then, and the note says what is not in a profile" \
		"active 1 1" \
		"$(python3 -c 'import json, re, sys; s = json.load(open(sys.argv[1]))["sampling"]; print(s["state"], int(bool(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", s["since"]))), int(s["note"] == "sampling active since " + s["since"] + ": allocations made before then are not in this profile"))' "$T/status.body")"
	ask jmtp >"$D/jmtp2.out"
	assert_grep "jmtp below one sample interval: names the interval and since when" "^# note: $nosample; allocate more" "$D/jmtp2.out"
	ask jmrs >"$D/jmrs.out"
	assert_grep "jmrs: says every sample so far was dropped" '^ok: profile reset \(lg_prof_sample=30\); every sample so far was dropped: ' "$D/jmrs.out"
	ask jmtp >"$D/jmtp3.out"
	assert_grep "jmtp after jmrs: since the reset" "^# note: no sample yet: .* since [0-9T:-]+Z \(prof\.reset\) is still live" "$D/jmtp3.out"
	ask jmfp >"$D/jmfp.out"
	"$JM4LW_PROF" -f text "$(tail -1 "$D/jmfp.out")" >"$D/offline.out" 2>&1
	assert_grep "jm4lw-prof on a dump without samples: says so" '^# note: no samples in this dump \(sampling was inactive, or none of the allocations it sampled, one allocation per 1\.0 GiB allocated on average \(lg_prof_sample=30\), was still live\)$' "$D/offline.out"
	"$JM4LW_PROF" -f collapsed "$(tail -1 "$D/jmfp.out")" >/dev/null 2>"$D/offline.err"
	assert_grep "jm4lw-prof -f collapsed (no room for a remark): says so on stderr" '^jm4lw-prof: note: no samples in this dump ' "$D/offline.err"
	stop_daemon
	start_daemon -C "$D" -- -l 127.0.0.1:0 -D dumps || return 1
	ask jmlk >"$D/jmlk.off"
	assert_grep "jmlk without profiling: says it is off and how to start it, not jmfp" \
		'^error: no leak suspects: heap profiling is off in this process \(opt\.prof is false\), so nothing is sampled: start it with MALLOC_CONF=prof:true,prof_active:false and send jmep to start sampling$' "$D/jmlk.off"
	stop_daemon
}

# RssAnon of process PID, in KiB.
rss_anon() {
	awk '/^RssAnon:/ { print $2 }' "/proc/$1/status"
}

# The job's memory goes back when the reply does: the worker allocates in
# an arena of its own and purges it after each job. Without that, libdw's
# tables (11 MiB of libc's decompressed DWARF alone where libc6-dbg is
# installed, as valgrind brings it) stay as dirty pages for jemalloc's
# decay, ~10 s. The host's
# steady ring is all it does here; a jmfp starts the worker first.
case_memory_back() {
	local a b
	D=$(scratch memory)
	start_jeprof_host "$D" || return 1
	ask jmep >/dev/null
	ask jmfp >/dev/null
	sleep 1.5
	a=$(rss_anon "$PID")
	ask jmfg >"$D/jmfg.svg"
	b=$(rss_anon "$PID")
	assert_grep "jmfg answered" '</svg>' "$D/jmfg.svg"
	# Measured here: +1.4 MiB (the new arena's metadata, libdw's first
	# use); +14 MiB without the purge.
	assert_eq "RssAnon after jmfg is within 4 MiB of before ($a -> $b KiB)" \
		1 "$((b - a < 4096))"
	stop_jeprof_host "memory: "
}

case_words
case_memory_back
case_refusals
case_why_empty
finish

#!/bin/bash
# Hostile dumps planted in dump_dir: a file named
# like ours is any local user's to write where dump_dir is shared, and
# the daemon renders it on its worker when asked over HTTP.
#   deep_stack_planted_dump  a heap_v2 dump with one stack of 100,000
#       frames: /jemalloc/dump?name=...&format=svg and text answer (the
#       flame graph's recursion per frame killed the daemon), ruok still
#       imok after, and jm4lw-prof -f svg on the file exits 0;
#   extreme_values_planted_dump  a sampling period of 2^63 with a sample
#       (it printed "Total: inf MB") and counts of UINT64_MAX: a clear
#       error, never inf, nan or a signal, from the daemon and jm4lw-prof.
#
#	bash hostile_values.sh    (JM4LWD=..., JM4LW_PROF=...)
. "$(dirname "$0")/common.sh"

need curl awk xmllint
JM4LW_PROF=${JM4LW_PROF:-$ROOT/build/jm4lw-prof}
[ -x "$JM4LW_PROF" ] || die "$JM4LW_PROF is not executable"

# deep_dump FILE FRAMES: a heap_v2 dump whose one stack has FRAMES frames
# (distinct addresses), written once by awk (no interpreter per frame).
deep_dump() {
	awk -v n="$2" 'BEGIN {
		print "heap_v2/524288"
		print "  t*: 1: 1048576 [0: 0]"
		printf "@"
		for (i = 0; i < n; i++)
			printf " 0x%x", 1048576 + 16 * i
		print ""
		print "  t*: 1: 1048576 [0: 0]"
		print "MAPPED_LIBRARIES:"
	}' >"$1"
}

# prof_ok DESC OUT CMD...: CMD (jm4lw-prof, bounded) ends by itself, not by a
# signal; its status in PROF_STATUS, its stdout in OUT, stderr in OUT.err.
prof_ok() {
	local desc=$1 out=$2
	shift 2
	timeout $((60 * SLOW)) "$@" >"$out" 2>"$out.err"
	PROF_STATUS=$?
	if [ "$PROF_STATUS" -ge 124 ]; then
		fail "$desc" "exit status $PROF_STATUS (a timeout or a signal)" \
			"$(head -c 300 "$out.err")"
		return 1
	fi
	pass "$desc (exit $PROF_STATUS)"
}

case_deep_stack_planted_dump() {
	local d name=jm4lw.4242.1.heap
	d=$(scratch deep)
	conf_file "$d" "dump_dir = $d/dumps" "dump_min_interval = 0"
	mkdir -m 0700 "$d/dumps"
	deep_dump "$d/dumps/$name" 100000
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	baseline "deep stack" || return

	assert_http "deep_stack_planted_dump: format=svg answers" 200 deepsvg \
		"/jemalloc/dump?name=$name&format=svg"
	assert_grep "deep_stack_planted_dump: ... the middle folded into one frame" \
		'<title>\[98977 more frames\]' "$T/deepsvg.body"
	assert_eq "deep_stack_planted_dump: ... 1 + 1024 frames drawn" 1025 \
		"$(grep -c '^<g class="f">' "$T/deepsvg.body")"
	assert_cmd "deep_stack_planted_dump: ... which xmllint reads" \
		xmllint --noout "$T/deepsvg.body"
	assert_http "deep_stack_planted_dump: format=text answers" 200 deeptext \
		"/jemalloc/dump?name=$name&format=text"
	assert_grep "deep_stack_planted_dump: ... its table" '^Total: [0-9.]+ MiB$' \
		"$T/deeptext.body"
	alive "deep_stack_planted_dump: ruok still imok after both"

	prof_ok "deep_stack_planted_dump: jm4lw-prof -f svg on it ends by itself" \
		"$d/prof.svg" "$JM4LW_PROF" -f svg "$d/dumps/$name"
	assert_eq "deep_stack_planted_dump: ... exit 0" 0 "$PROF_STATUS"
	assert_grep "deep_stack_planted_dump: ... the same fold" \
		'<title>\[98977 more frames\]' "$d/prof.svg"
	check_clean "deep stack" "$d/dumps" "$name"
	stop_daemon
}

case_extreme_values_planted_dump() {
	local d f name
	d=$(scratch extreme)
	conf_file "$d" "dump_dir = $d/dumps" "dump_min_interval = 0"
	mkdir -m 0700 "$d/dumps"
	printf 'heap_v2/9223372036854775808\n@ 0x100000\n  t*: 1: 100 [0: 0]\nMAPPED_LIBRARIES:\n' \
		>"$d/dumps/jm4lw.4242.1.heap"
	printf 'heap_v2/524288\n@ 0x100000\n  t*: 1: 18446744073709551615 [0: 0]\nMAPPED_LIBRARIES:\n' \
		>"$d/dumps/jm4lw.4242.2.heap"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	baseline "extreme values" || return

	for name in jm4lw.4242.1.heap jm4lw.4242.2.heap; do
		for f in text svg; do
			# A reply (not a dropped connection): an error line, or a
			# rendering with no inf, nan or negative number in it.
			hreq "ext$f" "/jemalloc/dump?name=$name&format=$f" >"$T/ext.code"
			if { grep -Eq '^[45]..$' "$T/ext.code" &&
				grep -q '^error: ' "$T/ext$f.body"; } ||
				{ grep -q '^200$' "$T/ext.code" &&
					! grep -Eq -- '\binf\b|nan|[ (">]-[0-9]' "$T/ext$f.body"; }; then
				pass "extreme_values_planted_dump: $name as $f: $(cat "$T/ext.code") $(head -c 150 "$T/ext$f.body" | head -1)"
			else
				fail "extreme_values_planted_dump: $name as $f: a clear answer, no inf/nan/negative" \
					"status $(cat "$T/ext.code")" "$(head -c 300 "$T/ext$f.body")"
			fi
		done
		assert_grep "extreme_values_planted_dump: $name refused, saying why" \
			'past 2\^62' "$T/exttext.body"
		prof_ok "extreme_values_planted_dump: jm4lw-prof -f text $name ends by itself" \
			"$d/prof.txt" "$JM4LW_PROF" -f text "$d/dumps/$name"
		assert_grep "extreme_values_planted_dump: ... with a clear error" \
			'past 2\^62' "$d/prof.txt.err"
		assert_no_grep "extreme_values_planted_dump: ... and no inf" 'inf|nan' "$d/prof.txt"
	done
	alive "extreme_values_planted_dump: ruok still imok after"
	check_clean "extreme values" "$d/dumps" jm4lw.4242.1.heap jm4lw.4242.2.heap
	stop_daemon
}

case_deep_stack_planted_dump
case_extreme_values_planted_dump
finish

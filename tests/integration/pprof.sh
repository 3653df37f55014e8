#!/bin/bash
# jm4lw-prof -f pprof against its real consumer, go tool pprof, on real
# dumps: pprof reads the file; its totals (inuse_space in bytes,
# inuse_objects) are jeprof's Total: lines; its top functions are
# jm4lw-prof -f text's with the same flat figures; its mappings carry the
# GNU build IDs readelf prints for the same files; inlined functions are
# inline frames of their callers' locations; and a --base profile adds up
# to jeprof --base's Total:.
#
#	bash pprof.sh   (BENCH_HOST, HEAPPROF_DUMP, JEPROF_HOST, JM4LW_PROF
#	                 from ctest)
. "$(dirname "$0")/../lib.sh"

need go jeprof eu-readelf gzip nc.openbsd timeout
[ -x "$BENCH_HOST" ] || die "$BENCH_HOST is not executable"
[ -x "$JEPROF_HOST" ] || die "$JEPROF_HOST is not executable"
[ -x "$JM4LW_PROF" ] || die "$JM4LW_PROF is not executable"
# go tool pprof reads local files offline; it only wants somewhere to
# write, and no binary to symbolize with behind our back.
export HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_BINARY_PATH=$T/nobin
mkdir -p "$HOME" "$GOCACHE" "$GOPATH" "$PPROF_BINARY_PATH"
go tool pprof -h >/dev/null 2>&1 || die "go tool pprof does not run"

# pprof ARGS...: go tool pprof, bounded.
pprof() {
	timeout 120 go tool pprof "$@"
}

# raw_sum FILE TYPE: "SUM N", the sum of sample type TYPE's values over
# the N samples of go tool pprof -raw's listing FILE.
raw_sum() {
	awk -v want="$2" '
		/^Samples:/ { s = 1; next }
		s == 1 { for (i = 1; i <= NF; i++) if ($i ~ "^" want "/") col = i; s = 2; next }
		/^Locations/ { exit }
		s == 2 && col && $col ~ /^-?[0-9]+:?$/ { v = $col; sub(/:$/, "", v); t += v; n++ }
		END { if (col) printf "%.0f %d\n", t, n }' "$1"
}

# close_enough NAME OURS JEPROF SAMPLES: pprof's sum of our integer
# values is jeprof's float sum, truncated: one unit apart at most (the
# renderer carries each stack's rounding on to the next, so the sum does
# not drift by up to half a unit a sample).
close_enough() {
	local d=$(($2 - $3))
	[ "$d" -lt 0 ] && d=$((-d))
	if [ -n "$3" ] && [ "$d" -le 1 ]; then
		pass "$1: go tool pprof: $2, jeprof's Total: $3 ($4 samples)"
	else
		fail "$1: go tool pprof's total is jeprof's Total:" \
			"go tool pprof: $2 over $4 samples" "jeprof: ${3:-none}"
	fi
}

# pprof_top FILE: go tool pprof -top's rows with a flat figure, as
# "function<TAB>flat bytes".
pprof_top() {
	awk '/^ *flat  *flat%/ { on = 1; next }
		on && $1 != "0" {
			flat = $1; sub(/B$/, "", flat)
			name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", name)
			printf "%s\t%s\n", name, flat
		}' "$1"
}

# same_top NAME OURS.txt PPROF.top: each of jm4lw-prof's first 10 rows
# with a flat figure is in pprof's -top under the same name, with the
# same flat figure (ours in MB with one decimal), and the first is the
# same function.
same_top() {
	local name=$1 ours=$2 top=$3 bad
	bad=$(awk -F '\t' 'NR == FNR { flat[$1] = $2; if (FNR == 1) first = $1; next }
		FNR > 1 && $1 + 0 != 0 && n < 10 {
			f = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ /, "", f)
			n++
			if (n == 1 && f != first)
				print "first: ours " f ", pprof " first
			if (!(f in flat)) { print "not in pprof: " f; next }
			mb = flat[f] / 1048576; d = mb - $1
			if (d < -0.051 || d > 0.051)
				print f ": ours " $1 " MB, pprof " mb " MB"
		}
		END { if (n == 0) print "no rows with a flat figure" }' \
		FS='\t' "$top" FS=' ' "$ours")
	if [ -z "$bad" ]; then
		pass "$name: go tool pprof -top has jm4lw-prof's top functions and flat figures ($(head -1 "$top" | cut -f1))"
	else
		fail "$name: go tool pprof -top has jm4lw-prof's top functions" \
			"$bad" "pprof:" "$(head -10 "$top")" "jm4lw-prof:" \
			"$(sed -n 1,11p "$ours")"
	fi
}

# check_profile NAME BINARY PROFILE: the whole comparison on one dump.
check_profile() {
	local name=$1 bin=$2 prof=$3 d=$T/$1 jb jo sum ids want got path n
	mkdir -p "$d"
	assert_cmd "$name: jm4lw-prof -f pprof exits 0" \
		"$JM4LW_PROF" -f pprof -o "$d/heap.pb.gz" "$prof" || return
	assert_cmd "$name: the file is gzip" gzip -t "$d/heap.pb.gz" || return
	if ! pprof -raw "$d/heap.pb.gz" >"$d/raw" 2>"$d/raw.err"; then
		fail "$name: go tool pprof -raw reads it" "$(head -5 "$d/raw.err")"
		return
	fi
	pass "$name: go tool pprof -raw reads it ($(grep -c '^ *[0-9-]* *[0-9-]*:' "$d/raw") samples)"
	assert_grep "$name: Go's heap layout: inuse_objects/count inuse_space/bytes, inuse_space the default" \
		'^inuse_objects/count inuse_space/bytes\[dflt\]$' "$d/raw"
	assert_grep "$name: period type space/bytes" '^PeriodType: space bytes$' "$d/raw"
	assert_eq "$name: period is the sampling interval" \
		"Period: $(sed -n '1s|^heap_v2/||p' "$prof")" "$(grep '^Period:' "$d/raw")"

	# Totals, in bytes and objects, against jeprof's.
	jb=$(timeout 300 jeprof --text --show_bytes "$bin" "$prof" 2>/dev/null |
		sed -n 's/^Total: \([0-9]*\) B$/\1/p')
	jo=$(timeout 300 jeprof --text --inuse_objects "$bin" "$prof" 2>/dev/null |
		sed -n 's/^Total: \([0-9]*\) objects$/\1/p')
	read -r sum n < <(raw_sum "$d/raw" inuse_space)
	close_enough "$name: inuse_space (bytes)" "${sum:-0}" "$jb" "${n:-0}"
	read -r sum n < <(raw_sum "$d/raw" inuse_objects)
	close_enough "$name: inuse_objects" "${sum:-0}" "$jo" "${n:-0}"
	pprof -top -sample_index=inuse_space -unit=B -nodefraction=0 \
		-nodecount=100000 "$d/heap.pb.gz" >"$d/top.txt" 2>"$d/top.err"
	read -r sum n < <(raw_sum "$d/raw" inuse_space)
	assert_grep "$name: -top -sample_index=inuse_space: the same total" \
		"of ${sum}B total\$" "$d/top.txt"
	pprof -top -sample_index=inuse_objects -nodefraction=0 \
		"$d/heap.pb.gz" >"$d/top-objs.txt" 2>&1
	read -r sum n < <(raw_sum "$d/raw" inuse_objects)
	assert_grep "$name: -top -sample_index=inuse_objects: the same total" \
		"of ${sum} total\$" "$d/top-objs.txt"

	# The top of the table: jm4lw-prof -f text's functions.
	"$JM4LW_PROF" -o "$d/ours.txt" "$prof"
	pprof_top "$d/top.txt" >"$d/top.tsv"
	same_top "$name" "$d/ours.txt" "$d/top.tsv"

	# Mappings: every file's build ID is the one readelf finds in it.
	sed -n '/^Mappings$/,$p' "$d/raw" | awk 'NR > 1 && $3 ~ /^\// { print $3, $4 }' \
		>"$d/maps"
	ids=0
	while read -r path got; do
		[ -r "$path" ] || continue
		want=$(eu-readelf -n "$path" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
		if [ "$got" != "$want" ]; then
			fail "$name: mapping $path: the build ID readelf prints" \
				"pprof: $got" "eu-readelf -n: ${want:-none}"
			return
		fi
		ids=$((ids + 1))
	done <"$d/maps"
	assert_cmd "$name: every mapped file's build ID is readelf's ($ids of them)" \
		test "$ids" -gt 1
	want=$(eu-readelf -n "$bin" | awk '/Build ID:/ { print $3; exit }')
	assert_grep "$name: the program's mapping, symbolized, with its build ID $want" \
		"^1: 0x[0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* [^ ]*/${bin##*/} $want \\[FN\\]\\[FL\\]\\[LN\\]\\[IN\\]\$" \
		"$d/raw"
}

# A big profile: bench_host's 64 MiB over chains of 8-16 frames, sampled
# every 8 KiB (thousands of stacks), with heap_fill() inlined into main.
case_bench() {
	local p
	bench_dump bench || return
	p=$DUMP
	assert_cmd "bench_host: the profile has over 1000 stacks" \
		test "$(grep -c '^@' "$p")" -gt 1000
	check_profile bench_host "$BENCH_HOST" "$p"
	case_inline "$T/bench_host"
	# -p: its time too, which a pprof written from it carries.
	cp -p "$p" "$T/big.heap"
}

# case_inline DIR: what jm4lw-prof shows as "f (inline)" pprof has as an
# inline frame too (a Line before its Location's last, which pprof marks
# "(inline)" itself), in the same stacks.
case_inline() {
	local d=$1 fn
	fn=$(awk 'NR > 1 && / \(inline\)$/ { sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ /, ""); print; exit }' \
		"$d/ours.txt")
	[ -n "$fn" ] || { fail "bench_host: jm4lw-prof shows an inline frame"; return; }
	pass "bench_host: jm4lw-prof shows an inline frame: $fn"
	pprof -traces "$d/heap.pb.gz" >"$d/traces" 2>&1
	assert_grep "bench_host: go tool pprof -traces shows $fn" \
		"^ *[0-9.]*[kMG]*B *${fn% (inline)} \\(inline\\)\$|^  *${fn% (inline)} \\(inline\\)\$" \
		"$d/traces"
	assert_cmd "bench_host: -raw: ${fn% (inline)} is a Line inlined into a caller of the same location" \
		awk -v f="${fn% (inline)}" '/^Locations$/ { on = 1; next } /^Mappings$/ { on = 0 }
			on && $1 ~ /^[0-9]+:$/ { cur = $4; next }
			on && cur == f && NF >= 2 { found = 1 }
			END { exit !found }' "$d/raw"
}

# The embedding host, and the leak hunt: two dumps of jeprof_host leaking
# ~25 MiB/s; the second alone, then --base the first against jeprof
# --base: the growth adds up to the same Total:, the leak on top.
case_base() {
	local a b d=$T/base sum n jb
	mkdir -p "$d"
	leak_dumps || return
	a=$DUMP_A
	b=$DUMP_B
	check_profile jeprof_host "$JEPROF_HOST" "$b"
	assert_cmd "--base: jm4lw-prof -f pprof --base exits 0" \
		"$JM4LW_PROF" -f pprof --base "$a" -o "$d/diff.pb.gz" "$b" || return
	pprof -raw "$d/diff.pb.gz" >"$d/raw" 2>&1
	jb=$(timeout 300 jeprof --text --show_bytes --base="$a" "$JEPROF_HOST" \
		"$b" 2>/dev/null | sed -n 's/^Total: \([0-9]*\) B$/\1/p')
	read -r sum n < <(raw_sum "$d/raw" inuse_space)
	close_enough "--base: the growth in bytes" "${sum:-0}" "$jb" "${n:-0}"
	assert_grep "--base: the heap that shrank is there as negative values" \
		'^ *-[0-9]+ +-[0-9]+:' "$d/raw"
	pprof -top -unit=B "$d/diff.pb.gz" >"$d/top.txt" 2>&1
	"$JM4LW_PROF" --base "$a" -o "$d/ours.txt" "$b"
	pprof_top "$d/top.txt" >"$d/top.tsv"
	assert_eq "--base: the leak at the top, as in jm4lw-prof --base" \
		"jm4lw_test_leaky_function jm4lw_test_leaky_function" \
		"$(head -1 "$d/top.tsv" | cut -f1) $(awk 'NR == 2 { print $NF }' "$d/ours.txt")"
	stop_jeprof_host
}

# prof_accum: jemalloc also counts everything allocated since start, and
# the file has Go's alloc_objects and alloc_space before the inuse pair,
# adding up to jeprof --alloc_space and --alloc_objects.
case_accum() {
	local p d=$T/accum sum n ja jo
	mkdir -p "$d"
	start_jeprof_host accum \
		MALLOC_CONF=prof:true,prof_active:true,prof_accum:true,lg_prof_sample:16 || return
	sleep 1
	p=$(ask jmfp)
	[ -s "$p" ] || { fail "prof_accum: jmfp wrote a profile" "$p"; return; }
	assert_cmd "prof_accum: jm4lw-prof -f pprof exits 0" \
		"$JM4LW_PROF" -f pprof -o "$d/heap.pb.gz" "$p" || return
	pprof -raw "$d/heap.pb.gz" >"$d/raw" 2>&1
	assert_grep "prof_accum: alloc_objects, alloc_space, then the inuse pair, inuse_space the default" \
		'^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]$' \
		"$d/raw"
	ja=$(timeout 300 jeprof --text --show_bytes --alloc_space "$JEPROF_HOST" \
		"$p" 2>/dev/null | sed -n 's/^Total: \([0-9]*\) B$/\1/p')
	jo=$(timeout 300 jeprof --text --alloc_objects "$JEPROF_HOST" "$p" \
		2>/dev/null | sed -n 's/^Total: \([0-9]*\) objects$/\1/p')
	read -r sum n < <(raw_sum "$d/raw" alloc_space)
	close_enough "prof_accum: alloc_space" "${sum:-0}" "$ja" "${n:-0}"
	read -r sum n < <(raw_sum "$d/raw" alloc_objects)
	close_enough "prof_accum: alloc_objects" "${sum:-0}" "$jo" "${n:-0}"
	read -r sum n < <(raw_sum "$d/raw" inuse_space)
	assert_cmd "prof_accum: less in use than allocated ($sum of $ja B)" \
		test "${sum:-0}" -gt 0 -a "${sum:-0}" -lt "${ja:-0}"
	stop_jeprof_host
}

# Failures are one line and exit 1, never a half-written success.
case_errors() {
	local out rc
	[ -s "$T/big.heap" ] || return
	out=$("$JM4LW_PROF" -f pprof -o /dev/full "$T/big.heap" 2>&1)
	rc=$?
	assert_eq "-f pprof to a full disk: exit 1, one line" \
		"1 jm4lw-prof: /dev/full: No space left on device" "$rc $out"
	"$JM4LW_PROF" -f pprof --objects -o "$T/objs.pb.gz" "$T/big.heap"
	assert_cmd "-f pprof --objects: the same file (both values are in it)" \
		cmp "$T/objs.pb.gz" "$T/bench_host/heap.pb.gz"
}

case_bench
case_base
case_accum
case_errors
finish

# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 14. what each view of a profile costs offline: jm4lw-prof in every
# format on one dump of many stacks (tests/bench/formats.sh), with
# callgrind's instructions in the full run (--smoke: an 8 MiB host, no
# callgrind).
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

SECTION=formats
if want formats; then
	log "14. profile views offline: jm4lw-prof in every format"
	{
		echo "## 14. Profile views offline: jm4lw-prof in every format"
		echo ""
		echo "\`tests/bench/formats.sh\` does the work: one dump of \`bench_host -S\` (thousands of stacks), then"
		echo "\`jm4lw-prof -f FORMAT\` on it in each format, each run whole (parse, symbolization, rendering)."
		echo ""
	} >"$MD/$SECTION"
	fenv=(env BENCH_HOST="$BIN/bench_host")
	[ "$MODE" = smoke ] && fenv+=(MIB=8 CALLGRIND=0)
	"${fenv[@]}" "$BENCH_SRC/formats.sh" "$BUILD" >>"$MD/$SECTION" ||
		bench_fail "formats: tests/bench/formats.sh $BUILD (see its lines above)"
fi

# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 12. the memory doctor's cost (tests/bench/doctor_bench.sh).
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

# jmdr's diagnosis on 16 arenas x every small class (time, instructions),
# and /metrics with the doctor's families against the build before them
# (BASE_BUILD, when the caller gives one): figures only.
SECTION=doctor
if want doctor; then
	log "12. the memory doctor: jmdr and /metrics' families"
	{
		echo "## 12. The memory doctor: jmdr and /metrics' new families"
		echo ""
	} >"$MD/$SECTION"
	n=5000
	[ "$MODE" = smoke ] && n=200
	if BUILD=$BUILD BASE_BUILD=${BASE_BUILD:-} ROUNDS=$ROUNDS N=$n \
		"$BENCH_SRC/doctor_bench.sh" "$WORK/doctor.md"; then
		cat "$WORK/doctor.md" >>"$MD/$SECTION"
	else
		bench_fail "doctor: tests/bench/doctor_bench.sh (see its lines above)"
	fi
fi

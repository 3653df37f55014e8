# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 15. the rolling profile snapshots: redis's p99 with them on (every
# second, and at the 60 s default) and off, quiet and beside two busy
# loops, paired and alternating; the ring's bytes and the worker's CPU per
# snapshot (tests/bench/snapshots.sh).
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

SECTION=snapshots
if want snapshots; then
	log "15. snapshots: redis p99 with them on and off, their memory and CPU"
	{
		echo "## 15. Snapshots: what they cost redis"
		echo ""
		echo "\`tests/bench/snapshots.sh\` does the work (\`JM4LW_BUILD=DIR tests/bench/snapshots.sh OUT.md\` measures"
		echo "another build; \`CONDITIONS\`, \`ROUNDS\`, \`RB_N\`, \`KEYS\` pass through)."
		echo ""
	} >"$MD/$SECTION"
	smoke=()
	[ "$MODE" = smoke ] && smoke=(--smoke)
	JM4LW_BUILD=$BUILD "$BENCH_SRC/snapshots.sh" "${smoke[@]}" "$WORK/snapshots.md" >/dev/null
	R[snapshots.rc]=$?
	cat "$WORK/snapshots.md" >>"$MD/$SECTION" 2>/dev/null
	[ "${R[snapshots.rc]}" = 0 ] ||
		bench_fail "snapshots: tests/bench/snapshots.sh (see its lines above)"
fi

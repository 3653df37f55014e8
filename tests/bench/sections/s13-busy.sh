# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 13. a busy machine: jmfp/jmtp/jmfg reply times, redis SET
# latency and a many-stacks bench_host's allocating thread while dumps run
# back to back, and how long a host thread waits on jemalloc's profiling
# locks during a dump (tests/bench/busy.sh, tests/bench/lockprobe.c),
# quiet and beside two busy loops.
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

SECTION=busy
if want busy; then
	log "13. a busy machine: replies, redis SET and the lock window during dumps"
	{
		echo "## 13. A busy machine: replies, the host's work and the lock window during dumps"
		echo ""
		echo "\`tests/bench/busy.sh\` does the work;"
		echo "\`JM4LW_BUILD=DIR tests/bench/busy.sh OUT.md\` measures another build)."
		echo ""
	} >"$MD/$SECTION"
	smoke=()
	[ "$MODE" = smoke ] && smoke=(--smoke)
	JM4LW_BUILD=$BUILD "$BENCH_SRC/busy.sh" "${smoke[@]}" "$WORK/busy.md" >/dev/null
	# Its status is a result too (and R must not be empty: save_results
	# cannot see an empty associative array, and the report needs one).
	R[busy.rc]=$?
	if [ "${R[busy.rc]}" = 0 ]; then
		cat "$WORK/busy.md" >>"$MD/$SECTION"
	else
		cat "$WORK/busy.md" >>"$MD/$SECTION" 2>/dev/null
		bench_fail "busy: tests/bench/busy.sh (see its lines above)"
	fi
fi

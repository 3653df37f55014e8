# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 9. offline profiles: jm4lw-prof against jeprof (tests/bench/prof_speed.sh).
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

# Offline profiles: jm4lw-prof against jeprof (and jeprof with
# llvm-addr2line), dump file to collapsed stacks; figures only. Minutes:
# --smoke writes a line saying it skipped.
SECTION=12
if want prof; then
	log "9. offline profiles: jm4lw-prof vs jeprof"
	MODE=$MODE JM4LW_PROF=$BUILD/jm4lw-prof PB_DIR=$BUILD/prof-bench \
		"$BENCH_SRC/prof_speed.sh" "$MD/$SECTION" ||
		bench_fail "prof: tests/bench/prof_speed.sh (see its lines above)"
fi


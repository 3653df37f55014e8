# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 11. the HTTP face (tests/bench/http_bench.sh).
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

SECTION=http
if want http; then
	log "11. the HTTP face: /metrics against mntr, /debug/pprof/heap against jm4lw-prof"
	MODE=$MODE ROUNDS=$ROUNDS HEAP_MB=$HEAP_MB JM4LWD=$JM4LWD LOADGEN=$LOADGEN \
		BENCH_HOST=$BIN/bench_host JM4LW_PROF=$BUILD/jm4lw-prof CC=$CC \
		CLIENT_CPU=${CCPU:-} SERVER_CPU=${SCPU:-} \
		"$BENCH_SRC/http_bench.sh" "$MD/$SECTION" ||
		bench_fail "http: tests/bench/http_bench.sh (see its lines above)"
fi


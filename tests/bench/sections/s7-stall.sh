# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 7. ruok while jmfp dumps a large heap back to back (stall() in lib.sh).
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

SECTION=10
if want stall; then
	log "7. ruok while jmfp dumps a ${HEAP_MB} MiB heap back to back"
	stall stall.thread jmfp "$STALL_SECS" -T
	stall stall.embedded jmfp "$STALL_SECS"
fi


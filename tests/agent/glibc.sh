#!/bin/bash
# jm4lw-run on a program that is not linked with jemalloc at all: the
# wrapper preloads Debian's libjemalloc.so.2 and the agent.
. "$(dirname "$0")/common.sh"

libs=$(ldd "$GLIBC_PROG")
check "glibc_prog is a dynamic program without jemalloc" \
	bash -c "grep -q libc.so <<<'$libs' && ! grep -q jemalloc <<<'$libs'"

(cd "$WORK" && exec env JM4LW_DUMP_DIR="$WORK" "$JM4LW_RUN" -l 127.0.0.1:0 -- "$GLIBC_PROG" \
	>"$WORK/out" 2>"$WORK/err") &
PIDS="$PIDS $!"
port=$(wait_port "$WORK/err") || { cat "$WORK/err"; fail "agent listens"; finish; exit; }
ok "agent listens on 127.0.0.1:$port"
mntr=$(ask "$port" mntr)
check "profiling is on, sampling off until jmep" bash -c \
	"grep -qx \$'jemalloc_opt_prof\ttrue' <<<'$mntr' && grep -qx \$'jemalloc_prof_active\tfalse' <<<'$mntr'"

# Negative control first: before jmep nothing is sampled.
before=$(ask "$port" jmfp)
check "jmep" bash -c "'$JM4LW_CLIENT' -p $port jmep | grep -q '^ok'"
sleep 2 # the program allocates 50 MB/s; let samples accumulate
after=$(ask "$port" jmfp)
jeprof --text "$GLIBC_PROG" "$before" >"$WORK/before" 2>/dev/null
jeprof --text "$GLIBC_PROG" "$after" >"$WORK/after" 2>/dev/null
check "a dump before jmep does not name the allocator function" \
	bash -c "! grep -q glibc_prog_distinctive_alloc '$WORK/before'"
check "jeprof names glibc_prog_distinctive_alloc after jmep" \
	grep -q glibc_prog_distinctive_alloc "$WORK/after"
check "the program ran normally" grep -q "glibc_prog running" "$WORK/out"
rm -f "$before" "$after"

# --prof-active, and the user's own MALLOC_CONF winning over ours.
(cd "$WORK" && exec env MALLOC_CONF=lg_prof_sample:12 "$JM4LW_RUN" \
	--prof-active -l 127.0.0.1:0 "$GLIBC_PROG" >/dev/null 2>"$WORK/err2") &
PIDS="$PIDS $!"
port2=$(wait_port "$WORK/err2") || { cat "$WORK/err2"; fail "agent listens (2)"; finish; exit; }
mntr=$(ask "$port2" mntr)
check "--prof-active samples from the start" grep -qx $'jemalloc_prof_active\ttrue' <<<"$mntr"
check "the user's MALLOC_CONF is kept (lg_prof_sample 12)" grep -qx $'jemalloc_lg_prof_sample\t12' <<<"$mntr"
finish

#!/bin/bash
# jm4lw-run on a program that is not linked with jemalloc at all: the
# wrapper preloads Debian's libjemalloc.so.2 and the agent.
. "$(dirname "$0")/../lib.sh"

need nc.openbsd timeout

libs=$(ldd "$GLIBC_PROG")
assert_cmd "glibc_prog is a dynamic program without jemalloc" \
	bash -c "grep -q libc.so <<<'$libs' && ! grep -q jemalloc <<<'$libs'"

(cd "$T" && exec env JM4LW_DUMP_DIR="$T" "$JM4LW_RUN" -l 127.0.0.1:0 -- "$GLIBC_PROG" \
	>"$T/out" 2>"$T/err") &
track $!
port=$(wait_port "$T/err") || { cat "$T/err"; die "agent listens"; }
pass "agent listens on 127.0.0.1:$port"
mntr=$(ask mntr "$port")
assert_cmd "profiling is on, sampling off until jmep" bash -c \
	"grep -qx \$'jemalloc_opt_prof\ttrue' <<<'$mntr' && grep -qx \$'jemalloc_prof_active\tfalse' <<<'$mntr'"

# Negative control first: before jmep nothing is sampled.
before=$(ask jmfp "$port")
assert_cmd "jmep" bash -c "'$JM4LW_CLIENT' -p $port jmep | grep -q '^ok'"
sleep 2 # the program allocates 50 MB/s; let samples accumulate
after=$(ask jmfp "$port")
jeprof --text "$GLIBC_PROG" "$before" >"$T/before" 2>/dev/null
jeprof --text "$GLIBC_PROG" "$after" >"$T/after" 2>/dev/null
assert_cmd "a dump before jmep does not name the allocator function" \
	bash -c "! grep -q glibc_prog_distinctive_alloc '$T/before'"
assert_cmd "jeprof names glibc_prog_distinctive_alloc after jmep" \
	grep -q glibc_prog_distinctive_alloc "$T/after"
assert_cmd "the program ran normally" grep -q "glibc_prog running" "$T/out"
rm -f "$before" "$after"

# --prof-active, and the user's own MALLOC_CONF winning over ours.
(cd "$T" && exec env MALLOC_CONF=lg_prof_sample:12 "$JM4LW_RUN" \
	--prof-active -l 127.0.0.1:0 "$GLIBC_PROG" >/dev/null 2>"$T/err2") &
track $!
port2=$(wait_port "$T/err2") || { cat "$T/err2"; die "agent listens (2)"; }
mntr=$(ask mntr "$port2")
assert_cmd "--prof-active samples from the start" grep -qx $'jemalloc_prof_active\ttrue' <<<"$mntr"
assert_cmd "the user's MALLOC_CONF is kept (lg_prof_sample 12)" grep -qx $'jemalloc_lg_prof_sample\t12' <<<"$mntr"
finish

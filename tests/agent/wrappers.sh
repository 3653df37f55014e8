#!/bin/bash
# The allocator's wrappers folded into their callers. tests/agent/
# wrap_prog allocates through a two-level wrapper, wrap_prog_alloc() ->
# wrap_prog_alloc_usable() -> malloc (redis's zmalloc -> zmalloc_usable,
# git's xmalloc), from four sites of known sizes: 4, 2 and 1 MiB at
# start, and a leak of 64 KiB per SIGUSR1. Under jm4lw-run with every
# allocation sampled (lg_prof_sample:0: the figures are exact):
#   - jmtp's top rows are exactly the sites, with their bytes; the
#     wrappers hold no self bytes, keep their cumulative figure, and the
#     line under Total: names them;
#   - jmth's functions are the sites, to the byte;
#   - jmlk's suspect is the leaking site, not a wrapper;
#   - jm4lw-prof on a kept dump: the same, the same Total as --no-fold
#     (jeprof's table, where the inner wrapper is the top row: the
#     control), --fold adds a name, --fold=!NAME keeps one, -f collapsed
#     keeps the raw stacks;
#   - conf shows fold_wrappers.
. "$(dirname "$0")/../lib.sh"

need nc.openbsd timeout awk

JM4LW_PROF=${JM4LW_PROF:-$ROOT/build/jm4lw-prof}
cat >"$T/conf" <<CONF
dump_min_interval = 0
dump_min_free = 0
http_listen =
CONF
(cd "$T" && exec env MALLOC_CONF=lg_prof_sample:0 JM4LW_CONF="$T/conf" \
	JM4LW_DUMP_DIR="$T" "$JM4LW_RUN" --prof-active -l 127.0.0.1:0 -- \
	"$WRAP_PROG" >"$T/out" 2>"$T/err") &
pid=$!
track $pid
port=$(wait_port "$T/err") || die "agent listens" "$(cat "$T/err")"
for _ in $(seq 100); do grep -qx ready "$T/out" && break; sleep 0.1; done
assert_grep "wrap_prog allocated its three sites" '^ready$' "$T/out" || finish

# leak N: the Nth leaked block, done.
leak() {
	kill -USR1 "$pid"
	for _ in $(seq 100); do grep -qx "leaked $1" "$T/out" && return 0; sleep 0.05; done
	fail "wrap_prog leaked block $1" "$(cat "$T/out")"
}

# Four kept dumps, the leak a block bigger before each.
dumps=()
for i in 1 2 3 4; do
	leak $i
	dumps+=("$(ask jmfp "$port")")
done
assert_cmd "four kept dumps" test -s "${dumps[3]}"

# rows FILE: "flat name" of each table row, in order (the header, the
# fold line and comments are no rows).
rows() {
	awk '$1 ~ /^-?[0-9.]+$/ && $2 ~ /%$/ && NF >= 6 { print $1, $6 }' "$1"
}

ask jmtp "$port" >"$T/jmtp"
rows "$T/jmtp" | head -4 >"$T/top4"
assert_eq "jmtp: the top rows are the sites that asked, with their MiB" \
	"4.0 wrap_prog_site_big
2.0 wrap_prog_site_medium
1.0 wrap_prog_site_small
0.2 wrap_prog_site_leak" "$(cat "$T/top4")"
assert_no_grep "jmtp: no wrapper holds self bytes" \
	'^ *[1-9][0-9.]* .* wrap_prog_alloc(_usable)?$|^ *0\.[1-9] .* wrap_prog_alloc(_usable)?$' "$T/jmtp"
assert_grep "jmtp: the line under Total: names both wrappers" \
	'^Folded allocation wrappers into their callers: (.*, )?wrap_prog_alloc(, .*)?, wrap_prog_alloc_usable(, .*)? \(fold_wrappers to change\)$' "$T/jmtp"
assert_grep "jmtp: the outer wrapper keeps its cumulative figure (7.2 MiB)" \
	'^ +0\.0 +0\.0% +[0-9.]+% +7\.2 +[0-9.]+% wrap_prog_alloc$' "$T/jmtp"

ask jmth "$port" >"$T/jmth"
assert_grep "jmth: the thread's first function is wrap_prog_site_big, 4194304 bytes" \
	'^ +4194304 +[0-9.]+% +wrap_prog_site_big$' "$T/jmth"
assert_grep "jmth: wrap_prog_site_small, 1048576 bytes" \
	'^ +1048576 +[0-9.]+% +wrap_prog_site_small$' "$T/jmth"
assert_no_grep "jmth: no wrapper among the functions" ' wrap_prog_alloc(_usable)?$' "$T/jmth"

ask jmlk "$port" >"$T/jmlk"
assert_eq "jmlk: the first suspect is the leaking site, not its wrapper" \
	wrap_prog_site_leak "$(awk '/ [0-9]+\/[0-9]+ / { print $NF; exit }' "$T/jmlk")"
assert_grep "jmlk: says which wrappers it looked past" \
	'^# Folded allocation wrappers into their callers: .*wrap_prog_alloc' "$T/jmlk"

# Offline, on the last kept dump.
last=${dumps[3]}
"$JM4LW_PROF" -f text "$last" >"$T/prof" 2>&1
"$JM4LW_PROF" -f text --no-fold "$last" >"$T/noprof" 2>&1
assert_eq "jm4lw-prof: the same top rows as jmtp" "$(cat "$T/top4")" \
	"$(rows "$T/prof" | head -4)"
assert_eq "jm4lw-prof: the same Total: with and without folding" \
	"$(grep '^Total:' "$T/noprof")" "$(grep '^Total:' "$T/prof")"
assert_eq "jm4lw-prof --no-fold: jeprof's table, the inner wrapper on top (7.2)" \
	"7.2 wrap_prog_alloc_usable" "$(rows "$T/noprof" | head -1)"
assert_no_grep "jm4lw-prof --no-fold: no fold line" '^Folded' "$T/noprof"
"$JM4LW_PROF" -f text --fold=wrap_prog_site_small "$last" >"$T/fold" 2>&1
assert_grep "jm4lw-prof --fold=NAME folds it too: its bytes go to main" \
	'^ +1\.0 +[0-9.]+% +[0-9.]+% +[0-9.]+ +[0-9.]+% main$' "$T/fold"
"$JM4LW_PROF" -f text --fold='!wrap_prog_alloc' "$last" >"$T/keep" 2>&1
assert_eq "jm4lw-prof --fold=!NAME keeps that wrapper: all 7.2 MiB stop there" \
	"7.2 wrap_prog_alloc" "$(rows "$T/keep" | head -1)"
assert_grep "... and the inner one still folds into it" \
	'^Folded allocation wrappers into their callers: wrap_prog_alloc_usable ' "$T/keep"
"$JM4LW_PROF" --fold 'a off' "$last" >"$T/bad" 2>&1
assert_eq "jm4lw-prof --fold with off among names: exit 2, the reason first" \
	"2 jm4lw-prof: --fold: off stands alone (want off, or function names)" \
	"$? $(head -1 "$T/bad")"
"$JM4LW_PROF" -f collapsed "$last" >"$T/collapsed" 2>&1
assert_grep "jm4lw-prof -f collapsed: the raw stacks, wrappers in place" \
	';wrap_prog_site_big;wrap_prog_alloc;wrap_prog_alloc_usable [0-9]+$' "$T/collapsed"
assert_grep "conf shows fold_wrappers" '^fold_wrappers=' <(ask conf "$port")
finish

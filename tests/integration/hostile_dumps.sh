#!/bin/bash
# Kept dumps and their leak indexes changed under jm4lwd, in
# every build (a planted dump needs no jemalloc samples, so the sanitizer
# builds run it too):
#   - a big dump in our own 0700 dump_dir truncated while the
#     worker renders it: the daemon lives on (it died of SIGBUS while the
#     dump was mapped), answers each request, and leaves nothing behind;
#   - leak indexes with NaN, infinite or absurd numbers are made
#     again from their dumps: /jemalloc/leaks is JSON a strict reader
#     takes, jmlk prints real years; a function name that is not UTF-8
#     gives valid JSON;
#   - jm4lw-prof --trend warns of dumps of two processes and of a
#     file given more than once (counted once);
#   - a library the dump names replaced in place (a deploy's `cp new.so
#     old.so` truncates it) while the dump is symbolized: jm4lw-prof and
#     jm4lwd died of SIGBUS reading it through their mapping; the shim
#     (tests/host/truncate_shim.c) truncates it right after it is mapped.
#
#	bash hostile_dumps.sh   (JM4LWD, else build/)
. "$(dirname "$0")/../lib.sh"

need curl nc.openbsd python3 truncate timeout nm
# libc, whose copy plays a library of ours.
LIBC=$(ldconfig -p | awk '/libc\.so\.6 .*x86-64/ { print $NF; exit }')
LIBC=${LIBC:-$(ldconfig -p | awk '/libc\.so\.6 / { print $NF; exit }')}

# big_dump FILE MB: a heap_v2 dump of about MB MiB, stacks of addresses in
# an anonymous mapping (rendered as hex: no object to read).
big_dump() {
	python3 - "$1" "$2" <<'EOF'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write("heap_v2/524288\n  t*: 1: 1 [0: 0]\n")
    i, size = 0, 0
    chunk = []
    while size < mb << 20:
        frames = " ".join("0x7f00%08x" % ((i * 16 + k) * 64) for k in range(8))
        s = "@ %s\n  t*: 1: %d [0: 0]\n  t0: 1: %d [0: 0]\n" % (
            frames, 1024 + i % 4096, 1024 + i % 4096)
        chunk.append(s)
        size += len(s)
        i += 1
        if len(chunk) == 10000:
            f.write("".join(chunk))
            chunk = []
    f.write("".join(chunk))
    f.write("\nMAPPED_LIBRARIES:\n7f0000000000-7f0100000000 r-xp 00000000 00:00 0 \n")
EOF
}

# small_dump FILE [PROGRAM]: a small valid dump (of PROGRAM, mapped at
# 0x7f0000000000, if given).
small_dump() {
	printf 'heap_v2/524288\n  t*: 1: 4096 [0: 0]\n@ 0x7f0000001000 0x7f0000002000\n  t*: 1: 4096 [1: 4096]\n\nMAPPED_LIBRARIES:\n7f0000000000-7f0000100000 r-xp 00000000 00:00 0 %s\n' "${2:-}" >"$1"
}

# Item 2: truncate -s 4096 a 16 MiB dump 0.1 s into its rendering, a
# few times; the daemon must answer each request and live on. 16 MiB
# (~150k stacks) renders for seconds, long past the truncation, so a
# dump mapped again would still fault here; a round whose read beats the
# truncation renders it whole, and at 64 MiB each such round cost tens
# of seconds.
case_truncated() {
	local d code i ok=1
	d=$(scratch truncated)
	chmod 700 "$d"
	big_dump "$T/big.heap" 16
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
	for i in 1 2 3 4; do
		cp "$T/big.heap" "$d/jm4lw.7.0.heap"
		chmod 600 "$d/jm4lw.7.0.heap"
		timeout $((120 * SLOW)) curl -s -o "$T/trunc.$i.body" -w '%{http_code}' \
			"http://127.0.0.1:$HTTP_PORT/jemalloc/dump?name=jm4lw.7.0.heap&format=text" \
			>"$T/trunc.$i.code" &
		sleep 0.$((i % 2 ? 1 : 3))
		truncate -s 4096 "$d/jm4lw.7.0.heap"
		wait $!
		code=$(cat "$T/trunc.$i.code")
		echo "# round $i: status $code, $(head -c 120 "$T/trunc.$i.body" | head -1)"
		if [ "$code" = 000 ] || ! _alive "$PID"; then
			fail "dump truncated while rendered (round $i): jm4lwd answers and lives" \
				"status $code" "$(show_tail "$DLOG")"
			ok=0
			break
		fi
	done
	[ "$ok" = 1 ] && pass "a 16 MiB dump truncated while rendered, 4 times: jm4lwd answered each and lives"
	[ "$ok" = 1 ] || return
	alive "... and still answers ruok"
	stop_daemon
	assert_eq "... and leaves nothing behind in dump_dir" "" "$(leftovers "$d")"
}

# json_ok FILE: FILE is strict JSON (no NaN, no Infinity) in valid UTF-8;
# prints its "first" and "last" times.
json_ok() {
	python3 - "$1" <<'EOF'
import json, sys
def bad(c):
    raise ValueError("not JSON: " + c)
with open(sys.argv[1], "rb") as f:
    doc = json.loads(f.read().decode("utf-8"), parse_constant=bad)
print(doc["first"], doc["last"])
EOF
}

# Item 6: indexes beside three real dumps with numbers no dump has.
case_bad_index() {
	local d now i code t0 t1 years bad
	d=$(scratch bad_index)
	chmod 700 "$d"
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
	now=$(date +%s)
	bad=("time nan\ntotal 1" "time inf\ntotal 1e300" "time 1e300\ntotal nan")
	for i in 0 1 2; do
		small_dump "$d/jm4lw.$PID.$i.heap"
		touch -d "@$((now - 300 + 100 * i))" "$d/jm4lw.$PID.$i.heap"
		printf "jm4lw-trend 1\n${bad[$i]}\n4096\tf\t\n" >"$d/jm4lw.$PID.$i.heap.trend"
		chmod 600 "$d/jm4lw.$PID.$i.heap" "$d/jm4lw.$PID.$i.heap.trend"
	done
	code=$(timeout $((60 * SLOW)) curl -s -o "$T/leaks.json" -w '%{http_code}' \
		"http://127.0.0.1:$HTTP_PORT/jemalloc/leaks")
	assert_eq "/jemalloc/leaks over indexes saying nan, inf, 1e300: 200" 200 "$code"
	if times=$(json_ok "$T/leaks.json" 2>&1); then
		pass "... strict JSON (python3 json, NaN refused)"
		read -r t0 t1 <<<"$times"
		assert_cmd "... its times are the dumps' (made again from them): $t0 to $t1" \
			python3 -c "import sys; a, b, n = map(float, sys.argv[1:]); sys.exit(not (abs(a - (n - 300)) < 2 and abs(b - (n - 100)) < 2))" \
			"$t0" "$t1" "$now"
	else
		fail "... strict JSON" "$times" "$(head -c 300 "$T/leaks.json")"
	fi
	ask jmlk >"$T/jmlk.txt"
	years=$(grep -oE '\(-?[0-9]+-[0-9]{2}-[0-9]{2}T' "$T/jmlk.txt" | tr -d '(T' | cut -d- -f1 | sort -u | tr '\n' ' ')
	if [ -n "$years" ] && ! grep -qE '(^| )-|[0-9]{5}' <<<"$years"; then
		pass "jmlk: real years ($years)"
	else
		fail "jmlk: real years" "years: ${years:-none}" "$(head -3 "$T/jmlk.txt")"
	fi
	# A dump that is no profile, with a bad index: left out, and the
	# answer says so with its reason.
	printf 'not a profile\n' >"$d/jm4lw.$PID.9.heap"
	printf 'jm4lw-trend 1\ntime nan\ntotal 1\n' >"$d/jm4lw.$PID.9.heap.trend"
	chmod 600 "$d/jm4lw.$PID.9.heap" "$d/jm4lw.$PID.9.heap.trend"
	ask jmlk >"$T/jmlk2.txt"
	assert_grep "jmlk: a dump neither its index nor itself reads is left out, saying why" \
		"^# skipped 1 dumps \\(the first: .*jm4lw\\.$PID\\.9\\.heap.*not a jemalloc heap profile" "$T/jmlk2.txt"
	rm -f "$d/jm4lw.$PID.9.heap" "$d/jm4lw.$PID.9.heap.trend"
	# A function name that is not UTF-8, growing in every interval
	# (indexes made under the default fold_wrappers: "fold " empty).
	for i in 0 1 2; do
		printf 'jm4lw-trend 1\ntime %d\ntotal %d\nfold \n%d\tleak\377\376 \200name\tmain;leak\377\n' \
			$((now - 300 + 100 * i)) $((1048576 * (i + 1))) $((1048576 * (i + 1))) \
			>"$d/jm4lw.$PID.$i.heap.trend"
	done
	code=$(timeout $((60 * SLOW)) curl -s -o "$T/utf8.json" -w '%{http_code}' \
		"http://127.0.0.1:$HTTP_PORT/jemalloc/leaks")
	assert_eq "/jemalloc/leaks with a name not UTF-8: 200" 200 "$code"
	if out=$(json_ok "$T/utf8.json" 2>&1); then
		pass "... valid UTF-8 JSON"
	else
		fail "... valid UTF-8 JSON" "$out"
	fi
	assert_grep_F "... the name's bad bytes as U+FFFD" 'leak\ufffd\ufffd \ufffdname' "$T/utf8.json"
	stop_daemon
}

# Item 8: jm4lw-prof --trend over dumps of two processes (by the pids in
# their names, or by their mappings), or one file given several times:
# one warning line each, as --base warns; a repeated file counts once.
case_trend_warnings() {
	local d i
	d=$(scratch trend)
	for i in 0 1 2 3; do
		small_dump "$d/jm4lw.7.$i.heap" /usr/bin/prog
		touch -d "@$(($(date +%s) - 400 + 100 * i))" "$d/jm4lw.7.$i.heap"
	done
	cp -p "$d/jm4lw.7.3.heap" "$d/jm4lw.9.0.heap"
	small_dump "$d/app.heap" /usr/bin/other
	cp -p "$d/jm4lw.7.3.heap" "$d/plain.heap"
	"$JM4LW_PROF" --trend "$d"/jm4lw.7.[0-3].heap >/dev/null 2>"$T/one.err"
	assert_eq "--trend over one process's dumps: no warning" "" "$(cat "$T/one.err")"
	"$JM4LW_PROF" --trend "$d"/jm4lw.7.[0-2].heap "$d/jm4lw.9.0.heap" \
		>/dev/null 2>"$T/pids.err"
	assert_eq "--trend over two pids' dumps: one warning line" \
		"jm4lw-prof: warning: the dumps are of more than one process (pids 7 and 9 in their names): the trend mixes their heaps" \
		"$(cat "$T/pids.err")"
	"$JM4LW_PROF" --trend "$d"/jm4lw.7.[0-2].heap "$d/app.heap" \
		>/dev/null 2>"$T/maps.err"
	assert_eq "--trend over another program's dump: one warning line" \
		"jm4lw-prof: warning: $d/app.heap is of another process than $d/jm4lw.7.0.heap (its main program, or where it is mapped, differs): the trend mixes their heaps" \
		"$(cat "$T/maps.err")"
	"$JM4LW_PROF" --trend "$d/jm4lw.7.0.heap" "$d/jm4lw.7.1.heap" \
		"$d/jm4lw.7.2.heap" "$d/jm4lw.7.2.heap" "$d/./jm4lw.7.2.heap" \
		>"$T/dup.out" 2>"$T/dup.err"
	assert_eq "--trend with one file three times: one warning line" \
		"jm4lw-prof: warning: $d/jm4lw.7.2.heap was given 3 times: counted once" \
		"$(cat "$T/dup.err")"
	assert_grep "... and it counts once (3 dumps, not 5)" '^# 0 leak suspects over 3 dumps' "$T/dup.out"
	"$JM4LW_PROF" --trend "$d/jm4lw.7.0.heap" "$d/jm4lw.7.0.heap" \
		"$d/jm4lw.7.1.heap" >/dev/null 2>"$T/few.err"
	assert_grep "... so two files given as three are too few" \
		'^jm4lw-prof: .*need at least 3 dumps' "$T/few.err"
}

# lib_dump FILE LIB: a dump of 50 stacks, each a function of LIB (a copy
# of libc, mapped at 0x7f1000000000) called from libc's first function
# (the real one, at 0x7f2000000000).
lib_dump() {
	python3 - "$1" "$2" "$LIBC" <<'EOF'
import os, subprocess, sys
out, lib, libc = sys.argv[1:4]
def funcs(path):
    o = subprocess.run(["nm", "-D", "--defined-only", path],
                       capture_output=True, text=True, check=True).stdout
    return sorted({int(p[0], 16) for p in (l.split() for l in o.splitlines())
                   if len(p) == 3 and p[1] in "Tt" and int(p[0], 16) > 0})
lf, cf = funcs(lib), funcs(libc)
lf = lf[:: max(1, len(lf) // 50)][:50]
L, C = 0x7F1000000000, 0x7F2000000000
with open(out, "w") as f:
    f.write("heap_v2/524288\n  t*: %d: %d [0: 0]\n" % (len(lf), 4096 * len(lf)))
    for a in lf:
        f.write("@ 0x%x 0x%x\n  t*: 1: 4096 [0: 0]\n  t0: 1: 4096 [0: 0]\n"
                % (L + a + 1, C + cf[0] + 1))
    f.write("\nMAPPED_LIBRARIES:\n")
    for base, p in ((L, lib), (C, libc)):
        end = base + ((os.path.getsize(p) + 4095) & ~4095)
        f.write("%x-%x r-xp 00000000 08:01 1 %s\n" % (base, end, p))
EOF
}

# A library of ours truncated right after the symbolizer mapped it, in
# jm4lw-prof and in jm4lwd (a planted dump rendered): no signal; its
# frames are named from the copy read before, the others from libc.
case_replaced_library() {
	local d lib st code
	d=$(scratch replaced)
	chmod 700 "$d"
	lib=$d/libx.so
	cp "$LIBC" "$lib.orig"
	cp "$lib.orig" "$lib"
	lib_dump "$T/lib.heap" "$lib"
	# (Through env: timeout itself must not load the shim, which a
	# sanitizer build builds with its runtime's symbols undefined.)
	timeout $((60 * SLOW)) env LD_PRELOAD="$TRUNCATE_SHIM" \
		JM4LW_TEST_TRUNCATE="$lib" "$JM4LW_PROF" -f text "$T/lib.heap" \
		>"$T/lib.txt" 2>"$T/lib.err"
	st=$?
	assert_cmd "jm4lw-prof, its library truncated under it: no signal (exit $st)" \
		test "$st" = 0
	assert_grep "... the library's frames are named (from the copy)" \
		'^ *[0-9.]+ +[0-9.]+% .* [A-Za-z_][A-Za-z0-9_]*$' "$T/lib.txt"
	assert_no_grep "... none is left in hex" '0x7f1000' "$T/lib.txt"
	cp "$lib.orig" "$lib"
	start_daemon -C "$d" -e "LD_PRELOAD=$TRUNCATE_SHIM" \
		-e "JM4LW_TEST_TRUNCATE=$lib" -- -l 127.0.0.1:0 -D "$d" || return
	cp "$T/lib.heap" "$d/jm4lw.7.0.heap"
	chmod 600 "$d/jm4lw.7.0.heap"
	code=$(timeout $((60 * SLOW)) curl -s -o "$T/lib.body" -w '%{http_code}' \
		"http://127.0.0.1:$HTTP_PORT/jemalloc/dump?name=jm4lw.7.0.heap&format=text")
	assert_eq "jm4lwd renders that dump, its library truncated under it: 200" \
		200 "$code"
	assert_no_grep "... none of its frames is left in hex" '0x7f1000' "$T/lib.body"
	alive "... and lives"
	stop_daemon
}

case_truncated
case_bad_index
case_trend_warnings
case_replaced_library
finish

#!/bin/bash
# Kept dumps and their leak indexes changed under jm4lwd (issue 28), in
# every build (a planted dump needs no jemalloc samples, so the sanitizer
# builds run it too):
#   - item 2: a big dump in our own 0700 dump_dir truncated while the
#     worker renders it: the daemon lives on (it died of SIGBUS while the
#     dump was mapped), answers each request, and leaves nothing behind;
#
#	bash hostile_dumps.sh   (JM4LWD, else build/)
. "$(dirname "$0")/../lib.sh"

need curl nc.openbsd python3 truncate timeout

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

# Item 2: truncate -s 4096 a 64 MiB dump 0.1 s into its rendering, a
# few times; the daemon must answer each request and live on.
case_truncated() {
	local d code i ok=1
	d=$(scratch truncated)
	chmod 700 "$d"
	big_dump "$T/big.heap" 64
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
	[ "$ok" = 1 ] && pass "a 64 MiB dump truncated while rendered, 4 times: jm4lwd answered each and lives"
	[ "$ok" = 1 ] || return
	alive "... and still answers ruok"
	stop_daemon
	assert_eq "... and leaves nothing behind in dump_dir" "" "$(leftovers "$d")"
}

case_truncated
finish

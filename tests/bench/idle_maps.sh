#!/bin/bash
# idle_maps.sh [BUILD_DIR]: what an idle host maps of the symbolizer's
# libraries (libdw is loaded on the first profile, not at start). Starts BUILD_DIR/jm4lwd (default build/)
# as the README runs it (profiling on, sampling off), reads
# /proc/PID/smaps: the resident kB of each of libdw, libelf, libz, libbz2,
# liblzma and libstdc++, and the process's VmRSS, RssAnon and RssFile;
# then turns sampling on, asks jmtp once (the first symbolization) and
# reads them again. Prints one Markdown table. A figure, not a test.
set -u
B=$(cd "${1:-build}" && pwd) || exit 2
W=$(mktemp -d "${TMPDIR:-/tmp}/idle_maps.XXXXXX") || exit 2
LIBS="libdw libelf libz libbz2 liblzma libstdc++"

# rss PID LIB: the resident kB of LIB's mappings in PID ("-": not mapped).
rss() {
	awk -v lib="$2" '
		/^[0-9a-f]+-[0-9a-f]+ / { n = split($NF, p, "/"); f = p[n]
			on = (index(f, lib ".so") == 1 || index(f, lib "-") == 1) }
		on && /^Rss:/ { kb += $2; seen = 1 }
		END { if (seen) print kb; else print "-" }' "/proc/$1/smaps"
}

# row PID WHEN: one table row.
row() {
	local l r="| $2 |"
	for l in $LIBS; do
		r="$r $(rss "$1" "$l") |"
	done
	for l in VmRSS RssAnon RssFile; do
		r="$r $(awk -v k="$l:" '$1 == k { print $2 }' "/proc/$1/status") |"
	done
	echo "$r"
}

(cd "$W" && exec env MALLOC_CONF=prof:true,prof_active:false \
	"$B/jm4lwd" -l 127.0.0.1:0 -W "" -D "$W") </dev/null >"$W/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$W"' EXIT
port=
for _ in $(seq 100); do
	port=$(sed -n 's/^jm4lwd: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$W/log")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { echo "jm4lwd did not start: $(cat "$W/log")" >&2; exit 1; }
sleep 1 # settled
echo "| jm4lwd ($B) | ${LIBS// / kB | } kB | VmRSS kB | RssAnon kB | RssFile kB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
row "$pid" "idle, never asked for a profile"
echo jmep | timeout 30 nc.openbsd 127.0.0.1 "$port" >/dev/null
echo jmtp | timeout 60 nc.openbsd 127.0.0.1 "$port" >"$W/jmtp"
grep -q '^Total:' "$W/jmtp" || { echo "jmtp: $(head -3 "$W/jmtp")" >&2; exit 1; }
row "$pid" "after the first jmtp"

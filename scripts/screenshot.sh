#!/bin/bash
# screenshot.sh [OUT.png]: the picture of the /jemalloc page in the
# README (default docs/img/page.png). Starts Debian's redis-server under
# build/jm4lw-run on free ports, loads it with redis-benchmark, and has
# screenshot.py drive the page in headless Chromium (a dump, growth, a
# search). Needs a build (scripts/run.sh or the test build), chromium,
# redis-server and redis-benchmark; everything it starts is stopped at
# the end.
cd "$(dirname "$0")/.." || exit 2
out=$(realpath -m "${1:-docs/img/page.png}")
. tests/lib.sh
need chromium python3 redis-server redis-benchmark redis-cli
start_redis_agent shot || exit 1
redis-benchmark -p "$RPORT" -q -n 40000 -c 4 -t set,lpush,sadd -d 256 -r 20000 >/dev/null 2>&1
# A trickle of writes while the page is open, so its chart moves.
setsid bash -c "while :; do redis-benchmark -p $RPORT -q -n 2000 -c 2 \
	-t set,lpush -d 128 -r 50000 >/dev/null 2>&1; sleep 0.5; done" &
track -g $!
shots=$(scratch shots)
if python3 scripts/screenshot.py "$AHTTP" "$RPORT" "$shots/page.png" &&
	[ -s "$shots/page.png" ]; then
	mkdir -p "$(dirname "$out")" && cp "$shots/page.png" "$out" &&
		pass "the page's picture in $out ($(wc -c <"$out") bytes)"
else
	fail "screenshot.py saved the page's picture"
fi
finish

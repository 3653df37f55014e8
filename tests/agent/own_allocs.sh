#!/bin/bash
# Nothing the module allocates for itself shows up in the profiles it
# writes. redis-server under the agent with every allocation sampled
# (lg_prof_sample:0), asked words and HTTP routes (connections, replies,
# the worker's dumps), then the raw dump over HTTP: no stack may hold a
# frame in the agent (libjm4lw) or in libevent, which only the module
# uses in redis. The agent's setup runs on redis's main thread before the
# module's thread exists (the loop, the listeners, evhttp), its words on
# that thread, its jobs on the worker: each is a way in.
. "$(dirname "$0")/../lib.sh"

need redis-server redis-cli curl nc.openbsd python3

cat >"$T/conf" <<CONF
dump_min_interval = 0
dump_min_free = 0
CONF
start_redis_agent own "MALLOC_CONF=lg_prof_sample:0" "JM4LW_CONF=$T/conf" || finish
redis-cli -p "$RPORT" set k "$(head -c 4000 /dev/zero | tr '\0' v)" >/dev/null
for w in ruok mntr jmst jmtp jmfp jmdr srvr conf; do
	ask "$w" "$APORT" >"$T/$w.out" 2>&1
done
for p in /metrics /jemalloc/status "/jemalloc/profile?format=text" /debug/pprof/heap; do
	curl -s -o /dev/null "http://127.0.0.1:$AHTTP$p"
done
HTTP_PORT=$AHTTP
assert_http "the raw dump over HTTP" 200 raw "/jemalloc/profile?format=raw"
python3 - "$T/raw.body" >"$T/own" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
stacks, maps = text.split("MAPPED_LIBRARIES:", 1)
ours = []
for line in maps.splitlines():
    f = line.split()
    if len(f) >= 6 and re.search(r"/lib(jm4lw|event)[^/]*\.so", f[5]):
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        ours.append((lo, hi, f[5]))
print("objects: %d" % len(ours))
n = 0
for m in re.finditer(r"^@((?: 0x[0-9a-f]+)+)\n\s*t\*: (\d+): (\d+)", stacks, re.M):
    pcs = [int(a, 16) for a in m.group(1).split()]
    if int(m.group(2)) == 0:
        continue
    hit = [o for pc in pcs for o in ours if o[0] <= pc < o[1]]
    if hit:
        n += 1
        print("stack of %s objects, %s bytes, in %s" % (m.group(2), m.group(3), hit[0][2]))
print("stacks with a frame of ours: %d" % n)
PY
cat "$T/own"
assert_cmd "the agent and libevent are mapped (the check can see them)" \
	grep -q '^objects: [1-9]' "$T/own"
assert_cmd "no live sampled stack runs through the agent or libevent" \
	grep -qx 'stacks with a frame of ours: 0' "$T/own"
finish

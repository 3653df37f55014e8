#!/bin/bash
# jmrc inside Debian's redis-server under the preload agent (jm4lw-run
# --prof-active), unmodified: after large SETs and DELs through
# redis-cli, jmrc shows redis's own allocations with both stacks, named
# (the SET's value made in redis's sds functions, freed by DEL or by the
# client's end), and /jemalloc/recent the same as JSON with its freed
# records' free stacks.
. "$(dirname "$0")/../lib.sh"

need redis-server redis-cli curl python3 nc.openbsd timeout

start_redis_agent recent || finish
head -c 300000 /dev/zero | tr '\0' x >"$T/value"
for i in $(seq 1 30); do redis-cli -p "$RPORT" -x set "key$i" <"$T/value" >/dev/null; done
for i in $(seq 1 10); do redis-cli -p "$RPORT" del "key$i" >/dev/null; done

ask jmrc "$APORT" >"$T/jmrc.out"
assert_grep "jmrc: the heading (the agent's default recent_max, 64)" \
	'^# [0-9]+ of [0-9]+ recent sampled allocations, newest first \(jemalloc keeps 64; ' "$T/jmrc.out"
# A 300 KB value is one allocation a SET makes in redis's sds code.
assert_grep "jmrc: the values' allocations by redis's own names (sds)" \
	'^ +29[0-9]\.[0-9] KiB .* (live|freed) +.*_?sds[A-Za-z]+ → [a-z_]+$' "$T/jmrc.out"
assert_grep "jmrc: some still live" ' live +(\.\.\. → )?[a-z_]' "$T/jmrc.out"
assert_grep "jmrc: some freed, with the free's line named" \
	'^ {12} +[0-9.]+[smhd] +t[0-9]+ .* free +(\.\.\. → )?[A-Za-z_]' "$T/jmrc.out"

hreq=$(timeout 30 curl -s -o "$T/recent.json" -w '%{http_code}' \
	"http://127.0.0.1:$AHTTP/jemalloc/recent")
assert_eq "/jemalloc/recent in redis" 200 "$hreq"
assert_cmd "/jemalloc/recent: both stacks of a freed record, raw and named" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
freed = [x for x in r["records"] if x["free"] is not None]
ok = freed and all(x["alloc"]["pcs"] and x["alloc"]["frames"] and
                   x["free"]["pcs"] and x["free"]["frames"] for x in freed)
ok = ok and any(f["func"].startswith(("_sds", "sds"))
                for x in r["records"] for f in x["alloc"]["frames"])
sys.exit(0 if ok else 1)' "$T/recent.json"
assert_cmd "redis still answers PING" test "$(redis-cli -p "$RPORT" ping)" = PONG
stop_host "redis-server with the agent" "$RPID" "$RDIR/err"
finish

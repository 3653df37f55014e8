#!/bin/bash
# /metrics against its real consumers: promtool check metrics (the
# exposition format's parser and linter) on jm4lwd's and on the agent's
# inside Debian's redis-server, then a real Prometheus server scraping
# both every second: after a few scrapes its HTTP API says up == 1 and
# holds a jemalloc_allocated_bytes sample for each target, redis's the
# size of the values written into it.
#
#	bash prometheus.sh   (JM4LWD, JM4LW_RUN from ctest)
. "$(dirname "$0")/../lib.sh"

need prometheus promtool curl python3 redis-server redis-cli timeout
[ -x "$JM4LW_RUN" ] || die "$JM4LW_RUN is not executable"

start_daemon -- -l 127.0.0.1:0 || finish
[ -n "$HTTP_PORT" ] || die "jm4lwd logged its HTTP port" "$(show_tail "$DLOG")"
start_redis_agent redis || finish
# ~20 MB of redis's own heap: 64 values of 300000 bytes.
head -c 300000 /dev/zero | tr '\0' x >"$T/value"
for i in $(seq 1 64); do
	redis-cli -p "$RPORT" -x set "key$i" <"$T/value" >/dev/null
done

# promtool check metrics: exit 0 and nothing said (it prints each lint
# problem, naming or type, and a parse error, on stderr).
for t in "jm4lwd $HTTP_PORT" "redis-agent $AHTTP"; do
	read -r name port <<<"$t"
	if ! http_get "http://127.0.0.1:$port/metrics" "$T/$name.metrics"; then
		fail "$name: GET /metrics is 200" "$(cat "$T/$name.metrics.err")"
		continue
	fi
	promtool check metrics <"$T/$name.metrics" >"$T/$name.lint" 2>&1
	rc=$?
	if [ $rc = 0 ] && [ ! -s "$T/$name.lint" ]; then
		pass "$name: promtool check metrics: no problem ($(grep -c '^[a-z]' "$T/$name.metrics") samples)"
	else
		fail "$name: promtool check metrics finds no problem" "exit status $rc" \
			"$(head -20 "$T/$name.lint")"
	fi
done

# Prometheus on a free port, its storage in the scratch directory.
PP=$(free_port)
mkdir -p "$T/prom"
cat >"$T/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: jm4lwd
    static_configs:
      - targets: ['127.0.0.1:$HTTP_PORT']
  - job_name: redis-agent
    static_configs:
      - targets: ['127.0.0.1:$AHTTP']
EOF
assert_cmd "promtool check config" promtool check config "$T/prom/prometheus.yml"
# docs/FLEET.md: its Prometheus config, between its markers, must be
# one promtool accepts, so the page cannot drift from it.
sed -n '/^<!-- fleet:prometheus -->$/,/^<!-- \/fleet:prometheus -->$/p' \
	"$ROOT/docs/FLEET.md" | sed '/^<!--/d; /^```/d' >"$T/prom/readme.yml"
assert_grep "docs/FLEET.md has its Prometheus config" \
	'^  - job_name: jm4lwd$' "$T/prom/readme.yml" &&
	assert_cmd "promtool check config on docs/FLEET.md's config" \
		promtool check config "$T/prom/readme.yml"
prometheus --config.file="$T/prom/prometheus.yml" \
	--storage.tsdb.path="$T/prom/data" --web.listen-address="127.0.0.1:$PP" \
	--log.level=warn </dev/null >"$T/prom/log" 2>&1 &
PROM=$!
track "$PROM"

# query EXPR OUT: the instant query's JSON result as "job value" lines.
query() {
	curl -sS --max-time 5 -G "http://127.0.0.1:$PP/api/v1/query" \
		--data-urlencode "query=$1" 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["status"] == "success", r
for s in r["data"]["result"]:
    print(s["metric"].get("job", "?"), s["value"][1])' >"$2" 2>/dev/null
}

# Both targets up, each with an allocated figure, within 25 s of start
# (Prometheus takes a few seconds to open its storage; scrapes are 1 s).
ok=0
for i in $(seq 125); do
	_alive "$PROM" || break
	if query up "$T/up" && query jemalloc_allocated_bytes "$T/allocated" &&
		[ "$(grep -c ' 1$' "$T/up")" = 2 ] && [ "$(wc -l <"$T/allocated")" = 2 ]; then
		ok=1
		break
	fi
	sleep 0.2
done
if [ $ok = 0 ]; then
	fail "Prometheus scraped both targets within 25 s" \
		"up: $(cat "$T/up" 2>/dev/null)" "allocated: $(cat "$T/allocated" 2>/dev/null)" \
		"$(tail -5 "$T/prom/log")"
	finish
fi
pass "Prometheus is up on 127.0.0.1:$PP and scraped both targets"
# A few more scrape intervals: every one of them must succeed.
sleep 3
query up "$T/up"
assert_eq "up == 1 for jm4lwd" 1 "$(awk '$1 == "jm4lwd" { print $2 }' "$T/up")"
assert_eq "up == 1 for the agent in redis-server" 1 \
	"$(awk '$1 == "redis-agent" { print $2 }' "$T/up")"
query 'min_over_time(up[4s])' "$T/up4"
assert_eq "no failed scrape over the last 4 s, either target" \
	"jm4lwd 1 redis-agent 1" "$(sort "$T/up4" | tr '\n' ' ' | sed 's/ $//')"
query jemalloc_allocated_bytes "$T/allocated"
v=$(awk '$1 == "jm4lwd" { print $2 }' "$T/allocated")
assert_cmd "jemalloc_allocated_bytes of jm4lwd: a sample ($v)" test "${v:-0}" -gt 0
v=$(awk '$1 == "redis-agent" { print $2 }' "$T/allocated")
assert_cmd "jemalloc_allocated_bytes of redis-server: its values are in it ($v > 19200000)" \
	test "${v:-0}" -gt 19200000
# Every metric /metrics lists, and only those, made it in (a sample the
# parser dropped would be missing here).
query 'scrape_samples_scraped' "$T/scraped"
for name in jm4lwd redis-agent; do
	assert_eq "$name: Prometheus took every sample of /metrics" \
		"$(grep -c '^[a-z]' "$T/$name.metrics")" \
		"$(awk -v j="$name" '$1 == j { print $2 }' "$T/scraped")"
done
query 'increase(jm4lw_http_requests_total{job="jm4lwd"}[4s])' "$T/reqs"
v=$(awk '{ printf "%d", $2 }' "$T/reqs")
assert_cmd "jm4lwd counted Prometheus's scrapes (~$v requests in 4 s)" \
	test "${v:-0}" -ge 2

kill -TERM "$PROM"
wait_exit "$PROM" 10
assert_eq "Prometheus exits 0 on SIGTERM" 0 "$EXIT_STATUS"
redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
wait_exit "$RPID" 10
stop_daemon
finish

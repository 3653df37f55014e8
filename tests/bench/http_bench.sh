#!/bin/bash
# tests/bench/http_bench.sh OUT.md — section 11: what the HTTP face costs.
#
#   a. /metrics against mntr on jm4lwd: latency (p50, p99) and the
#      daemon's CPU per request (utime + stime from /proc/PID/stat over N
#      requests). /metrics over one kept-alive connection, as Prometheus
#      scrapes, and over a connection each; mntr over a connection each,
#      as the words are (loadgen). Target: CPU per kept-alive scrape <= 1.5
#      mntr's. The cases alternate, ROUNDS rounds, the order reversed
#      every other round; a ratio is the median of the per-round ratios.
#   b. /debug/pprof/heap end to end (wall, curl) against jm4lw-prof -f
#      pprof of a raw dump of the same heap (/jemalloc/profile?format=raw):
#      bench_host -S -T over a HEAP_MB MiB heap sampled every 32 KiB, as
#      section 7 runs it. The URL dumps, parses, symbolizes and renders in
#      the process; jm4lw-prof does all but the dump from the file, so the
#      raw fetch's wall is shown too (the offline path is raw + jm4lw-prof).
#
# The HTTP client is httpget, written below and compiled here: sequential
# GETs, each reply read whole by its Content-Length, the latency of each
# from write() of the request to its last byte (with -C, from socket()).
#
# Called by run.sh (section "http"; run.sh --only http runs it alone), which sets:
#   MODE        smoke (a few hundred requests, one round) or full
#   ROUNDS      rounds of (a); DUMPS of (b) come from MODE
#   HEAP_MB     bench_host's heap for (b)
#   JM4LWD, LOADGEN, BENCH_HOST, JM4LW_PROF   the binaries
#   CLIENT_CPU, SERVER_CPU   pinning (taskset), when both are set
# bench_host serves HTTP on a free port (-W 127.0.0.1:0), read from the
# module's "HTTP listening on" line.
# Writes the report section (Markdown) to OUT.md; exit 1 when a server did
# not start or a request failed.
set -uo pipefail

OUT=$1
MODE=${MODE:-full}
ROUNDS=${ROUNDS:-5}
HEAP_MB=${HEAP_MB:-1024}
CC=${CC:-$(command -v gcc || command -v cc)}
HTTP_PORT_BH=
if [ "$MODE" = smoke ]; then N=500 DUMPS=2; else N=20000 DUMPS=7; fi
ON_CLIENT=() ON_SERVER=()
if [ -n "${CLIENT_CPU:-}" ] && [ -n "${SERVER_CPU:-}" ]; then
	ON_CLIENT=(taskset -c "$CLIENT_CPU")
	ON_SERVER=(taskset -c "$SERVER_CPU")
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/jm4lw-http-bench.XXXXXX") || exit 1
PIDS=()
rc=0
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

# The helpers the test harness shares: log (base.sh); rec, med, kv, fmt, o
# (figures.sh).
# shellcheck source=../lib/base.sh
. "$(dirname "$0")/../lib/base.sh"
# shellcheck source=../lib/figures.sh
. "$(dirname "$0")/../lib/figures.sh"
bad() {
	log "FAIL: $*"
	rc=1
}

: >"$OUT"
o "## 11. The HTTP face: /metrics against mntr, /debug/pprof/heap against jm4lw-prof"
o ""
o "\`tests/bench/http_bench.sh\` does the work."
o ""

cat >"$W/httpget.c" <<'EOF'
/* httpget: sequential GETs of PATH on HOST:PORT over one kept-alive
 * connection (a new one when a reply says "Connection: close": jm4lw's
 * http_keepalive_requests), or a connection each ("close"), each reply
 * read whole by its Content-Length; prints requests, p50_us, p99_us, max_us, reply_bytes
 * and the last reply's status. Exit 1 on any error or non-200. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int dial(const char *host, int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	sa.sin_port = htons((unsigned short)port);
	inet_pton(AF_INET, host, &sa.sin_addr);
	if (fd == -1 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char *argv[])
{
	static char buf[1 << 20];
	char req[512];
	const char *host, *path;
	int port, n, each, fd = -1, i, status = 0;
	double *lat, t0;
	long long bytes = 0;

	if (argc != 6) {
		fprintf(stderr, "usage: httpget HOST PORT PATH N keep|close\n");
		return 2;
	}
	host = argv[1];
	port = atoi(argv[2]);
	path = argv[3];
	n = atoi(argv[4]);
	each = strcmp(argv[5], "close") == 0;
	lat = calloc((size_t)n, sizeof(*lat));
	snprintf(req, sizeof(req),
	    "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: httpget\r\n"
	    "Accept: */*\r\n%s\r\n",
	    path, host, port, each ? "Connection: close\r\n" : "");
	for (i = 0; i < n; i++) {
		size_t have = 0, need = 0;
		char *eoh = NULL, *cl;
		int closing = each;
		ssize_t r;

		t0 = now_us();
		if (fd == -1 && (fd = dial(host, port)) == -1) {
			perror("connect");
			return 1;
		}
		if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
			perror("write");
			return 1;
		}
		for (;;) {
			if (have == sizeof(buf) - 1) {
				/* Past the headers, only the count matters. */
				if (eoh == NULL)
					return 1;
				need -= have;
				have = 0;
			}
			r = read(fd, buf + have, sizeof(buf) - 1 - have);
			if (r <= 0) {
				fprintf(stderr, "read: %s\n",
				    r == 0 ? "EOF" : "error");
				return 1;
			}
			have += (size_t)r;
			bytes += r;
			buf[have] = '\0';
			if (eoh == NULL && (eoh = strstr(buf, "\r\n\r\n"))) {
				status = atoi(buf + 9);
				cl = strcasestr(buf, "\r\nContent-Length:");
				if (cl == NULL || cl > eoh)
					return 1;
				need = (size_t)(eoh + 4 - buf) +
				    strtoul(cl + 17, NULL, 10);
				/* The server's keep-alive cap: reconnect,
				 * as Prometheus does. */
				cl = strcasestr(buf, "\r\nConnection: close\r\n");
				if (cl != NULL && cl < eoh)
					closing = 1;
			}
			if (eoh != NULL && have >= need)
				break;
		}
		if (closing) {
			close(fd);
			fd = -1;
		}
		lat[i] = now_us() - t0;
		if (status != 200) {
			fprintf(stderr, "status %d\n", status);
			return 1;
		}
	}
	qsort(lat, (size_t)n, sizeof(*lat), cmp);
	printf("requests=%d p50_us=%.1f p99_us=%.1f max_us=%.1f "
	       "reply_bytes=%lld status=%d\n",
	    n, lat[n / 2], lat[(n * 99) / 100], lat[n - 1], bytes / n, status);
	return 0;
}
EOF
"$CC" -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o "$W/httpget" "$W/httpget.c" ||
	{ o "Not measured: httpget did not compile."; exit 1; }
HTTPGET=$W/httpget

# CPU time (user + system) of a process and all its threads, in µs.
cpu_us() { sed 's/.*) //' "/proc/$1/stat" | awk -v t="$(getconf CLK_TCK)" '{ printf "%d", ($12 + $13) * 1000000 / t }'; }
declare -A R
# Median and range of the per-round ratios A/B.
ratios() {
	paste -d' ' <(printf '%s\n' ${R[$1]:-}) <(printf '%s\n' ${R[$2]:-}) |
		awk 'NF == 2 && $1 != "nan" && $2 + 0 > 0 { printf "%.4f\n", $1 / $2 }' | sort -g
}
rmed() { ratios "$@" | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) printf "%.2f", a[(NR + 1) / 2]; else printf "%.2f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
rrng() { ratios "$@" | awk '{ a[NR] = $1 } END { if (NR) printf "%.2f–%.2f", a[1], a[NR]; else print "—" }'; }

# measure KEY PID CMD...: run CMD (a client printing key=value), record
# its p50/p99 and the server's CPU per request.
measure() {
	local key=$1 pid=$2 c0 c1 line n
	shift 2
	c0=$(cpu_us "$pid")
	if ! line=$("${ON_CLIENT[@]}" "$@" 2>"$W/client.err"); then
		bad "$key: $* ($(head -2 "$W/client.err" | tr '\n' ' '))"
		for n in p50 p99 cpu bytes; do rec "$key.$n" nan; done
		return 1
	fi
	c1=$(cpu_us "$pid")
	n=$(kv "$line" requests)
	rec "$key.p50" "$(kv "$line" p50_us)"
	rec "$key.p99" "$(kv "$line" p99_us)"
	rec "$key.bytes" "$(kv "$line" reply_bytes)"
	rec "$key.cpu" "$(awk -v a="$c0" -v b="$c1" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }')"
	log "$key: p50 $(kv "$line" p50_us) µs p99 $(kv "$line" p99_us) µs, $(awk -v a="$c0" -v b="$c1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }') µs CPU each"
}

# wait_line FILE ERE: the port of the first line of FILE matching ERE
# (20 s, or 300 s for bench_host's heap), from its "127.0.0.1:PORT".
wait_line() {
	local p
	for _ in $(seq 1 "$(( ${3:-20} * 10 ))"); do
		p=$(grep -E "$2" "$1" | head -1 | sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p')
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
	return 1
}

# ---------------------------------------------------------------- a. /metrics
log "a. /metrics against mntr, $N requests a case, $ROUNDS round(s)"
env MALLOC_CONF=prof:true,prof_active:false "${ON_SERVER[@]}" "$JM4LWD" \
	-l 127.0.0.1:0 -W 127.0.0.1:0 >"$W/jm4lwd.log" 2>&1 &
JPID=$!
PIDS+=("$JPID")
if JPORT=$(wait_line "$W/jm4lwd.log" '^jm4lwd: listening on') &&
	JHTTP=$(wait_line "$W/jm4lwd.log" '^jm4lwd: HTTP listening on'); then
	# Warm both paths (first-touch page faults, the figures' first epoch).
	"$HTTPGET" 127.0.0.1 "$JHTTP" /metrics 200 keep >/dev/null ||
		bad "httpget /metrics (warm-up)"
	"$LOADGEN" -h 127.0.0.1 -p "$JPORT" -n 200 -w mntr >/dev/null ||
		bad "loadgen mntr (warm-up)"
	for r in $(seq 1 "$ROUNDS"); do
		cases="keep close mntr"
		[ $((r % 2)) = 0 ] && cases="mntr close keep"
		for c in $cases; do
			case $c in
			mntr) measure mntr "$JPID" "$LOADGEN" -h 127.0.0.1 -p "$JPORT" -c 1 -n "$N" -w mntr ;;
			*) measure "metrics.$c" "$JPID" "$HTTPGET" 127.0.0.1 "$JHTTP" /metrics "$N" "$c" ;;
			esac
		done
	done
else
	bad "jm4lwd did not start: $(tail -3 "$W/jm4lwd.log" | tr '\n' ' ')"
fi
kill -TERM "$JPID" 2>/dev/null
wait "$JPID" 2>/dev/null

o "### a. \`/metrics\` against \`mntr\` (jm4lwd, $N requests a case, $ROUNDS round(s))"
o ""
o "Sequential requests (one at a time); CPU is jm4lwd's utime + stime (\`/proc/PID/stat\`) over the case ÷ requests."
o "A kept-alive connection is closed by jm4lwd after \`http_keepalive_requests\` (100) replies, the last saying"
o "\`Connection: close\`; httpget then reconnects, as Prometheus does, and that request's latency includes the connect."
o "\`/metrics\` renders the same figures table as \`mntr\` (26 values), in Prometheus' text format with HELP and TYPE lines."
o ""
o "| request | reply bytes | p50 µs | p99 µs | server CPU µs/request | CPU ÷ mntr's |"
o "| --- | --- | --- | --- | --- | --- |"
o "| \`/metrics\`, one kept-alive connection (as Prometheus scrapes) | $(fmt "$(med metrics.keep.bytes)") | $(fmt "$(med metrics.keep.p50)" %.1f) | $(fmt "$(med metrics.keep.p99)" %.1f) | $(fmt "$(med metrics.keep.cpu)" %.1f) | **$(rmed metrics.keep.cpu mntr.cpu)** ($(rrng metrics.keep.cpu mntr.cpu)) |"
o "| \`/metrics\`, a connection each | $(fmt "$(med metrics.close.bytes)") | $(fmt "$(med metrics.close.p50)" %.1f) | $(fmt "$(med metrics.close.p99)" %.1f) | $(fmt "$(med metrics.close.cpu)" %.1f) | $(rmed metrics.close.cpu mntr.cpu) ($(rrng metrics.close.cpu mntr.cpu)) |"
o "| \`mntr\`, a connection each (loadgen -c 1) | $(fmt "$(med mntr.bytes)") | $(fmt "$(med mntr.p50)" %.1f) | $(fmt "$(med mntr.p99)" %.1f) | $(fmt "$(med mntr.cpu)" %.1f) | 1 |"
o ""
K=$(rmed metrics.keep.cpu mntr.cpu)
o "Target: CPU per kept-alive scrape ≤ 1.5 × mntr's: $(awk -v v="$K" 'BEGIN { if (v == "nan") print "not measured"; else if (v + 0 <= 1.5) print "**met**"; else print "**missed**" }') ($K)."
o "Latencies of \`mntr\` and \`/metrics\` with a connection each run from \`socket()\`; kept-alive ones from the request's \`write()\`."
o ""

# ---------------------------------------------------------------- b. pprof
log "b. /debug/pprof/heap against jm4lw-prof -f pprof over a $HEAP_MB MiB heap, $DUMPS dumps"
mkdir -p "$W/dumps"
env MALLOC_CONF=prof:true,lg_prof_sample:15 "${ON_SERVER[@]}" "$BENCH_HOST" -S -T \
	-W 127.0.0.1:0 -m "$HEAP_MB" "$W/dumps" >"$W/bench_host.log" 2>&1 &
HPID=$!
PIDS+=("$HPID")
if wait_line "$W/bench_host.log" 'bench_host: listening on' 300 >/dev/null &&
	HTTP_PORT_BH=$(sed -n 's/.*HTTP listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$W/bench_host.log" | head -1) &&
	[ -n "$HTTP_PORT_BH" ]; then
	U=http://127.0.0.1:$HTTP_PORT_BH
	HEAP=$(sed -n 's/^bench_host: \([0-9]*\) blocks, stats.allocated \([0-9]*\) MiB.*/\2 MiB, \1 blocks/p' "$W/bench_host.log")
	for _ in $(seq 1 "$DUMPS"); do
		t=$(curl -sS -o "$W/heap.pb.gz" -w '%{http_code} %{time_total}' "$U/debug/pprof/heap")
		[ "${t%% *}" = 200 ] || { bad "GET /debug/pprof/heap: $t"; break; }
		rec url "$(awk -v s="${t#* }" 'BEGIN { printf "%.0f", s * 1e6 }')"
		t=$(curl -sS -o "$W/raw.heap" -w '%{http_code} %{time_total}' "$U/jemalloc/profile?format=raw")
		[ "${t%% *}" = 200 ] || { bad "GET /jemalloc/profile?format=raw: $t"; break; }
		rec raw "$(awk -v s="${t#* }" 'BEGIN { printf "%.0f", s * 1e6 }')"
		s=$(date +%s%N)
		"${ON_SERVER[@]}" "$JM4LW_PROF" -f pprof -o "$W/file.pb.gz" "$W/raw.heap" ||
			{ bad "jm4lw-prof -f pprof"; break; }
		e=$(date +%s%N)
		rec prof "$(((e - s) / 1000))"
		rec off "$(( (e - s) / 1000 + $(awk -v s="${t#* }" 'BEGIN { printf "%.0f", s * 1e6 }') ))"
		rec pbsize "$(stat -c %s "$W/heap.pb.gz")"
		rec rawsize "$(stat -c %s "$W/raw.heap")"
		rec stacks "$(grep -c '^@' "$W/raw.heap")"
	done
	log "pprof: URL $(med url) µs, raw $(med raw) µs, jm4lw-prof $(med prof) µs"
	o "### b. \`/debug/pprof/heap\` against \`jm4lw-prof -f pprof\` (bench_host -S -T, $HEAP, one sample per 32 KiB, $DUMPS dumps)"
	o ""
	o "Wall times, medians. The URL dumps, parses, symbolizes (in the process, on the module's worker) and renders;"
	o "\`jm4lw-prof\` reads a raw dump of the same heap fetched right after (\`/jemalloc/profile?format=raw\`)."
	o ""
	o "| | wall ms | bytes |"
	o "| --- | --- | --- |"
	o "| \`GET /debug/pprof/heap\` (curl, end to end) | $(fmt "$(med url)" '%.0f' | awk '{ printf "%.1f", $1 / 1000 }') | $(fmt "$(med pbsize)") (gzipped pprof) |"
	o "| \`GET /jemalloc/profile?format=raw\` (the dump alone) | $(fmt "$(med raw)" | awk '{ printf "%.1f", $1 / 1000 }') | $(fmt "$(med rawsize)") ($(fmt "$(med stacks)") stacks) |"
	o "| \`jm4lw-prof -f pprof\` on that raw dump | $(fmt "$(med prof)" | awk '{ printf "%.1f", $1 / 1000 }') | |"
	o ""
	o "\`/debug/pprof/heap\` ÷ \`jm4lw-prof -f pprof\`: **$(rmed url prof)** ($(rrng url prof)); ÷ the offline path (raw fetch + \`jm4lw-prof\`): **$(rmed url off)** ($(rrng url off))."
	o ""
else
	bad "bench_host -T did not start with its HTTP: $(tail -3 "$W/bench_host.log" | tr '\n' ' ')"
	o "### b. \`/debug/pprof/heap\`: not measured (bench_host's HTTP did not bind)"
	o ""
fi
kill -TERM "$HPID" 2>/dev/null
wait "$HPID" 2>/dev/null

o "Commands:"
o ""
o '```'
o "MALLOC_CONF=prof:true,prof_active:false jm4lwd -l 127.0.0.1:0 -W 127.0.0.1:0"
o "httpget 127.0.0.1 \$HTTP_PORT /metrics $N keep|close    # written and compiled by http_bench.sh"
o "loadgen -p \$JM4LWD_PORT -c 1 -n $N -w mntr"
o "MALLOC_CONF=prof:true,lg_prof_sample:15 bench_host -S -T -W 127.0.0.1:9182 -m $HEAP_MB \$WORK/dumps"
o "curl -o heap.pb.gz -w '%{time_total}' http://127.0.0.1:9182/debug/pprof/heap"
o "curl -o raw.heap 'http://127.0.0.1:9182/jemalloc/profile?format=raw'; jm4lw-prof -f pprof -o file.pb.gz raw.heap"
o '```'
exit $rc

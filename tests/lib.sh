# shellcheck shell=bash source-path=SCRIPTDIR/..
# (SCRIPTDIR/..: the suites source this file from one directory down.)
# lib.sh — the one harness of the shell test suites (integration, abuse,
# agent). Source it, do not run it:
#
#	. "$(dirname "$0")/../lib.sh"
#
# It gives every test its own scratch directory ($T), a pass/fail counter
# whose last line is "N passed, M failed", and start_daemon/stop_daemon for
# real jm4lwd processes on ports the kernel picks, so tests can run in
# parallel. Everything started here is killed on exit.
#
# The helpers live by topic in tests/lib/ and this file sources them all:
#	base.sh      log, free_port, wait_port (no state; the benchmarks take it too)
#	core.sh      pass/fail/skip/finish, assert_*, need, track, wait_exit
#	daemon.sh    start_daemon/stop_daemon, wait_log, ask, alive, mntr_value
#	http.sh      hreq, assert_http, http_get, closed_after, run_page
#	profiles.sh  same_totals, table_by_name, as_jeprof, cut_libjemalloc,
#	             frag_vs_bins
#	hosts.sh     start_jeprof_host, start_leak_host, start_redis_agent,
#	             start_bench_host, stop_host, bench_dump, leak_dumps
# They only define functions; what has effects when sourced (set -u, $T,
# the counters, the exit trap) is here, so a script takes all of it by
# sourcing this one file.
#
# Binaries come from the environment (ctest sets them), else from build/:
#	JM4LWD        jm4lwd
#	JM4LW_CLIENT  the jm4lw client
#	JEPROF_HOST   tests/host/jeprof_host
#	JM4LW_RUN     jm4lw-run (the preload agent's wrapper)
#	LEAK_HOST     tests/host/leak_host
# KEEP_TMP=1 keeps the scratch directory for a post-mortem.
# JM4LWD_WRAP, if set, is a command prefix start_daemon puts before jm4lwd
# (split on white space, e.g. "valgrind --error-exitcode=99 --quiet"); the
# wrapper must exec jm4lwd in the same process and pass its exit status on,
# so stop_daemon's exit-status check catches what it reports. Under a
# wrapper the bounds below that wait on jm4lwd are $SLOW (5) times longer.
set -u

TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$TESTS_DIR/.." && pwd)
JM4LWD=${JM4LWD:-$ROOT/build/jm4lwd}
JM4LW_CLIENT=${JM4LW_CLIENT:-$ROOT/build/jm4lw}
JEPROF_HOST=${JEPROF_HOST:-$ROOT/build/tests/host/jeprof_host}
JM4LW_RUN=${JM4LW_RUN:-$ROOT/build/jm4lw-run}
LEAK_HOST=${LEAK_HOST:-$ROOT/build/tests/host/leak_host}
BENCH_HOST=${BENCH_HOST:-$ROOT/build/tests/bench/bench_host}
JM4LWD_WRAP=${JM4LWD_WRAP:-}
read -ra _wrap <<<"$JM4LWD_WRAP"
SLOW=1
[ -n "$JM4LWD_WRAP" ] && SLOW=5

# The documented way to run with profiling on but sampling off until jmep.
# shellcheck disable=SC2034 # used by the scripts sourcing this
PROF_ON=MALLOC_CONF=prof:true,prof_active:false
# The agent's HTTP on a free port (the default 9182 is one port for every
# suite running in parallel); a case that tests HTTP sets its own.
export JM4LW_HTTP_LISTEN=${JM4LW_HTTP_LISTEN-127.0.0.1:0}

T=$(mktemp -d "${TMPDIR:-/tmp}/jm4lw-test.XXXXXX") || exit 2
passed=0
failed=0
skipped=0
_pids=()  # every process track took, for the exit trap ("-PID": a group)
_at_exit=()  # commands at_exit registered, run after the processes are gone

# shellcheck source=lib/base.sh
. "$TESTS_DIR/lib/base.sh"
# shellcheck source=lib/core.sh
. "$TESTS_DIR/lib/core.sh"
# shellcheck source=lib/daemon.sh
. "$TESTS_DIR/lib/daemon.sh"
# shellcheck source=lib/http.sh
. "$TESTS_DIR/lib/http.sh"
# shellcheck source=lib/profiles.sh
. "$TESTS_DIR/lib/profiles.sh"
# shellcheck source=lib/hosts.sh
. "$TESTS_DIR/lib/hosts.sh"
trap _lib_cleanup EXIT
trap 'echo "interrupted"; exit 2' INT TERM HUP

#!/bin/sh
# Install the Debian packages jm4lw needs, only those that are missing.
#   scripts/deps.sh        build + run: compiler, cmake, libevent, jemalloc, inih,
#                          libdw, zlib; nc and redis-server for the README
#                          walkthrough; graphviz (dot, and libgvc6 the
#                          page's call graph loads) for its call graphs
#   scripts/deps.sh test   also the test suite's: cmocka, clang, valgrind, the
#                          real clients the integration tests drive, and
#                          redis-server for the preload agent's proof,
#                          xmllint and headless Chromium (with a monospace
#                          font) for the SVG flame graph and the /jemalloc
#                          page, firefox-esr for the page's other engine,
#                          go (go tool pprof) and elfutils (eu-readelf) for
#                          pprof.sh, google/pprof's Go source
#                          (golang-github-google-pprof-dev) for
#                          pprof_check.sh's parser, prometheus (with
#                          promtool) and curl for the HTTP face; abidiff
#                          (abigail-tools) for the ABI check, debuginfod
#                          for the symbolizer's debug-info tests, llvm-14
#                          for llvm-symbolizer, strace for the client's
#                          one-write error lines
set -eu

pkgs="cmake gcc g++ make pkg-config libevent-dev libjemalloc-dev libinih-dev libdw-dev \
zlib1g-dev libdebuginfod-dev libiberty-dev perl binutils netcat-openbsd redis-server redis-tools curl \
graphviz"
if [ "${1:-}" = test ]; then
	pkgs="$pkgs libcmocka-dev clang clang-format python3 procps netcat-openbsd \
netcat-traditional ncat busybox socat zookeeper redis-server redis-tools \
valgrind iproute2 libfuzzer-14-dev libxml2-utils chromium firefox-esr fonts-dejavu-core \
golang-go golang-github-google-pprof-dev elfutils prometheus curl abigail-tools debuginfod llvm-14 \
strace"
fi

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "deps.sh: installing:$missing" >&2
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing

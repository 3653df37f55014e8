#!/bin/sh
# Install what is missing, build, and run jm4lwd in the foreground on
# 127.0.0.1:9181 with heap profiling enabled (sampling off until jmep).
# Extra arguments go to jm4lwd, e.g. scripts/run.sh -v -D /var/tmp
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DJM4LW_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)"
MALLOC_CONF="${MALLOC_CONF:-prof:true,prof_active:false}"
export MALLOC_CONF
echo "run.sh: MALLOC_CONF=$MALLOC_CONF; try: echo ruok | nc localhost 9181" >&2
exec build/jm4lwd -l 127.0.0.1:9181 "$@"

#!/bin/bash
# Install what is missing, build, and run jm4lwd in the foreground on
# 127.0.0.1:9181 with heap profiling enabled (sampling off until jmep).
# Extra arguments go to jm4lwd, e.g. scripts/run.sh -v -D /var/tmp, or
# -l 127.0.0.1:9300 -W 127.0.0.1:9301 to move its ports: the commands to
# try are printed with the addresses jm4lwd really bound (its "listening
# on" lines), not the defaults.
# JM4LW_BUILD=DIR runs the jm4lwd already built in DIR, and installs and
# builds nothing.
set -eu
cd "$(dirname "$0")/.."
if [ -z "${JM4LW_BUILD:-}" ]; then
	scripts/deps.sh
	cmake -S . -B build -DJM4LW_TESTS=OFF >/dev/null
	cmake --build build -j"$(nproc)"
	JM4LW_BUILD=build
fi
MALLOC_CONF="${MALLOC_CONF:-prof:true,prof_active:false}"
export MALLOC_CONF
echo "run.sh: MALLOC_CONF=$MALLOC_CONF" >&2

# hint: jm4lwd's stderr passed through, and after its first words and
# HTTP listeners, how to reach them. It outlives a Ctrl-C (jm4lwd's last
# lines come after it) and ends when jm4lwd closes its stderr.
hint() {
	local l a host words='' http=''
	trap '' INT TERM HUP
	while IFS= read -r l; do
		printf '%s\n' "$l"
		case $l in
		"jm4lwd: listening on "*)
			[ -z "$words" ] || continue
			a=${l#jm4lwd: listening on }
			host=${a%:*}
			host=${host#[}
			words=${host%]}
			echo "run.sh: try: echo ruok | nc $words ${a##*:}"
			;;
		"jm4lwd: HTTP listening on "*)
			[ -z "$http" ] || continue
			http=${l#jm4lwd: HTTP listening on }
			echo "run.sh: the page: http://$http/jemalloc"
			;;
		esac
	done
}

# exec: jm4lwd is this process, and gets the signals sent to it.
exec "$JM4LW_BUILD/jm4lwd" -l 127.0.0.1:9181 "$@" 2> >(hint >&2)

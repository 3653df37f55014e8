#!/bin/bash
# identity.sh OLD_BUILD NEW_BUILD: the byte-identity harness. Asks every
# word of the word table and every GET route of the route table (each
# format and the main query parameters, and a few errors) of two builds'
# jm4lwd and of a deterministic host under each build's preload agent,
# and compares the answers, normalized for what differs between any two
# runs (identity.py says what). Prints "same: REQUEST" or "differ:
# REQUEST" and a unified diff per request, then "N same, M differ";
# exits 1 if anything differs, 2 if the harness could not run.
#
#	tests/tools/identity.sh [--keep DIR] [--max-diff N] OLD_BUILD NEW_BUILD
#
# --keep DIR keeps every answer, raw and normalized (DIR/old.raw,
# DIR/new.norm, ...), and DIR/answers.pickle for --replay DIR. Scratch
# files go under $TMPDIR, by default NEW_BUILD. Both builds need jm4lwd
# and jm4lw-run (any configuration; tests need not be built); a C
# compiler builds the host (tests/tools/identity_host.c).
set -u
here=$(cd "$(dirname "$0")" && pwd)
args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--keep | --max-diff | --replay) shift 2 ;;
	-h | --help)
		sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) break ;;
	esac
done
if [ $# -ne 2 ]; then
	echo "usage: identity.sh [--keep DIR] [--max-diff N] OLD_BUILD NEW_BUILD" >&2
	exit 2
fi
for b in "$1" "$2"; do
	if [ ! -x "$b/jm4lwd" ] || [ ! -x "$b/jm4lw-run" ]; then
		echo "identity.sh: $b has no jm4lwd and jm4lw-run: not a build directory" >&2
		exit 2
	fi
done
for tool in python3 curl nc.openbsd setarch "${CC:-cc}"; do
	if ! command -v "$tool" >/dev/null; then
		echo "identity.sh: needs $tool" >&2
		exit 2
	fi
done
export TMPDIR=${TMPDIR:-$(cd "$2" && pwd)}
exec python3 "$here/identity.py" "${args[@]}"

#!/bin/sh
# abi.sh check|update BUILD_DIR — libjm4lw.so's ABI against the committed
# baseline, abi/libjm4lw.abi (libabigail's abidw/abidiff; Debian:
# abigail-tools, which `scripts/deps.sh test` installs).
#
#   check   abidiff the built library against the baseline: exit 0 when
#           they match, 1 on any change (saying whether a program built
#           against the committed jm4lw.h would break, and what to do),
#           77 (ctest's skip) when abidiff is missing or the library has
#           no DWARF to read types from.
#   update  rewrite the baseline from the built library; commit it with
#           the change that moved the ABI (after a merge that added entry
#           points, this is the whole job).
#
# The baseline keeps only what jm4lw.h declares (--headers-dir,
# --drop-private-types), with hashed type ids and source paths relative
# to the tree, so it reads the same from any checkout. It keeps source
# locations: abidiff needs them to tell the header's types from private
# ones. It is made by gcc with debug info (CMake's default
# RelWithDebInfo), as CI's main build is.
set -u

usage() {
	echo "usage: scripts/abi.sh check|update BUILD_DIR" >&2
	exit 2
}

# Does abidiff's report @1 add functions or variables and nothing else?
additions_only() {
	printf '%s\n' "$1" | grep -q \
	    '^Functions changes summary: 0 Removed, 0 Changed' &&
	    printf '%s\n' "$1" | grep -q \
	        '^Variables changes summary: 0 Removed, 0 Changed' &&
	    ! printf '%s\n' "$1" | grep -q '^ELF SONAME changed'
}

[ $# -eq 2 ] || usage
mode=$1
build=$(cd "$2" 2>/dev/null && pwd) || {
	echo "abi.sh: no build directory $2" >&2
	exit 2
}
src=$(cd "$(dirname "$0")/.." && pwd)
base=$src/abi/libjm4lw.abi
lib=$build/libjm4lw.so
update_cmd="scripts/abi.sh update $2 && git add abi/libjm4lw.abi"

for tool in abidw abidiff; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool is not installed (Debian: apt-get install" \
		    "abigail-tools; scripts/deps.sh test installs it)"
		exit 77
	fi
done
if [ ! -e "$lib" ]; then
	echo "abi.sh: $lib is not built (cmake --build $2 --target jm4lw)" >&2
	exit 2
fi
lib=$(readlink -f "$lib")
if ! readelf -S "$lib" 2>/dev/null | grep -q '\.debug_info'; then
	echo "SKIP: $lib has no DWARF to read the ABI from (configure with" \
	    "-DCMAKE_BUILD_TYPE=RelWithDebInfo, the default, or Debug)"
	exit 77
fi

case $mode in
update)
	# Paths relative to the tree: the build dir's files first, since
	# it may lie inside the tree.
	mkdir -p "$src/abi"
	if ! abidw --headers-dir "$src/include" --drop-private-types \
	    --drop-undefined-syms --no-corpus-path --no-comp-dir-path \
	    --type-id-style hash "$lib" >"$base.tmp"; then
		rm -f "$base.tmp"
		echo "abi.sh: abidw failed on $lib" >&2
		exit 1
	fi
	sed -e "s|$build/|BUILD/|g" -e "s|$src/||g" "$base.tmp" >"$base"
	rm -f "$base.tmp"
	echo "abi.sh: wrote abi/libjm4lw.abi from $lib ($(grep -c \
	    "<elf-symbol " "$base") exported symbols); commit it"
	;;
check)
	if [ ! -f "$base" ]; then
		echo "abi.sh: no baseline abi/libjm4lw.abi: $update_cmd" >&2
		exit 1
	fi
	out=$(abidiff --headers-dir2 "$src/include" \
	    --suppressions "$src/abi/libjm4lw.suppr" "$base" "$lib" 2>&1)
	rc=$?
	# abidiff's status is a bit set: 1 error, 2 usage, 4 a change,
	# 8 a change it knows breaks programs (a symbol removed). A changed
	# type is only 4, though it breaks callers as surely: only a change
	# that adds and changes nothing is compatible.
	if [ "$rc" -eq 0 ]; then
		echo "abi.sh: libjm4lw.so matches abi/libjm4lw.abi"
		exit 0
	fi
	printf '%s\n' "$out"
	if [ $((rc & 3)) -ne 0 ]; then
		echo "abi.sh: abidiff failed (status $rc)" >&2
	elif [ $((rc & 8)) -ne 0 ] || ! additions_only "$out"; then
		echo "abi.sh: INCOMPATIBLE ABI change (above): a program" \
		    "built against the committed jm4lw.h would break. Undo it" \
		    "(make the struct opaque, add a new function instead), or" \
		    "bump JM4LW_SOVERSION in CMakeLists.txt and then" \
		    "$update_cmd" >&2
	else
		echo "abi.sh: the ABI changed compatibly (an addition) but" \
		    "abi/libjm4lw.abi does not record it: $update_cmd" >&2
	fi
	exit 1
	;;
*)
	usage
	;;
esac

#!/bin/bash
# readme.sh: the embedding walkthrough (docs/EMBEDDING.md) works pasted
# as one block. The block between the embedding-walkthrough markers
# is taken from docs/EMBEDDING.md as committed, run by bash in a fresh git clone
# of the repository with HOME in the scratch directory (it installs under
# $HOME/opt/jm4lw), and its output must hold the answers it promises: the
# host's word, mntr's figure and /metrics. The build it made must not have
# looked for cmocka or a C++ compiler (-DJM4LW_TESTS=OFF); the example
# host must not warn about SIGPIPE (a host ignores it before serving
# HTTP), and the clone must be left as clean as git found it.
#	SRC_DIR  the repository to clone (ctest sets it)
. "$(dirname "$0")/../lib.sh"

[ -n "${SRC_DIR:-}" ] || die "SRC_DIR not set"
need git cmake pkg-config nc curl

clone="$T/clone"
if git clone -q "$SRC_DIR" "$clone" 2>"$T/clone.err"; then
	pass "git clone of the repository"
else
	die "git clone of the repository" "$(cat "$T/clone.err")"
fi
# The committed page, as a reader of the clone sees it: the block between
# the markers, without them, its doc-test note and its fences.
sed -n '/^<!-- embedding-walkthrough:begin -->$/,/^<!-- embedding-walkthrough:end -->$/p' \
	"$clone/docs/EMBEDDING.md" | sed '/^<!--/d; /^```/d' >"$T/block.sh"
assert_grep "docs/EMBEDDING.md has the walkthrough block" '^cmake --install' "$T/block.sh"

mkdir -p "$T/home"
# nproc is the machine's here, at most 2 (the suite shares 2 cores).
(cd "$clone" && HOME="$T/home" OMP_NUM_THREADS=2 PKG_CONFIG_PATH='' \
	timeout 600 bash -e "$T/block.sh" >"$T/out" 2>"$T/err")
status=$?
if [ "$status" = 0 ]; then
	pass "the block runs to its end"
else
	fail "the block runs to its end" "status $status" "$(tail -20 "$T/err")"
fi
assert_grep "the host says where it listens" '^admin 127\.0\.0\.1:[1-9][0-9]*$' "$T/out"
assert_grep "its own word answers: hits 0" '^hits	0$' "$T/out"
assert_grep "mntr answers from the installed library" '^jemalloc_allocated	[0-9]+$' "$T/out"
assert_grep "/metrics answers" '^jemalloc_allocated_bytes [0-9]+' "$T/out"
assert_cmd "installed under \$HOME/opt/jm4lw" test -e "$T/home/opt/jm4lw/lib/libjm4lw.so.1"
assert_cmd "the counter it built loads libjm4lw from there (rpath)" \
	grep -q "$T/home/opt/jm4lw/lib/libjm4lw.so" <(ldd "$clone/build-lib/counter")
assert_no_grep "the example host does not warn that SIGPIPE is not ignored" \
	'SIGPIPE' "$T/err"
assert_eq "the clone is left clean (git status)" "" \
	"$(git -C "$clone" status --porcelain --ignored=no 2>&1)"
cache="$clone/build-lib/CMakeCache.txt"
assert_no_grep "-DJM4LW_TESTS=OFF: cmocka not looked for" '^CMOCKA_' "$cache"
assert_no_grep "-DJM4LW_TESTS=OFF: no C++ compiler looked for" '^CMAKE_CXX_COMPILER:' "$cache"
finish

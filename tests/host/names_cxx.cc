// names_cxx: static C++ functions inside namespaces, for
// tests/integration/names.sh [truth]. GCC gives a static
// function no DW_AT_linkage_name, so DWARF names it bare ("block"); its
// namespaces are the DIE's parents, and llvm-symbolizer prints
// "names::inner::block(unsigned long)". Writes a heap profile to its
// argument (prof.dump) with every allocation live.
#include <jemalloc/jemalloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace names {
static void *keep[4096];
static int nkeep;

namespace inner {
// Static, in a nested namespace: no linkage name in DWARF.
static __attribute__((noinline)) char *block(size_t n)
{
	char *p = static_cast<char *>(malloc(n));
	if (p != nullptr)
		memset(p, 1, n);
	return p;
}
} // namespace inner

namespace {
// In an anonymous namespace: a linkage name, demangled.
__attribute__((noinline)) char *anon_block(size_t n)
{
	char *p = inner::block(n + 16);
	keep[nkeep++] = p;
	return static_cast<char *>(malloc(n));
}
} // namespace

// Exported, calling both.
__attribute__((noinline)) void fill(int n)
{
	for (int i = 0; i < n && nkeep + 2 < 4096; i++) {
		keep[nkeep++] = inner::block(4096 + static_cast<size_t>(i));
		keep[nkeep++] = anon_block(8192 + static_cast<size_t>(i));
	}
}
} // namespace names

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : nullptr;

	names::fill(1000);
	if (path != nullptr &&
	    mallctl("prof.dump", nullptr, nullptr, &path, sizeof(path)) != 0) {
		fprintf(stderr, "names_cxx: prof.dump failed\n");
		return 1;
	}
	return 0;
}

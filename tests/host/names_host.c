/*
 * names_host: a C program as distributions ship them, for
 * tests/integration/names.sh: static helpers and GCC's
 * .constprop/.part clones of them, -O2, between small exported functions
 * (-rdynamic: in .dynsym, which `strip --strip-unneeded` keeps). Once
 * stripped, no symbol contains the static functions' addresses, and the
 * nearest one below them is an exported function they are not part of.
 *
 * Every allocation stays live. With a path argument it writes a heap
 * profile there (prof.dump) and exits; without, it waits (for the agent's
 * words) until its stdin closes or 300 s pass.
 */
#include <jemalloc/jemalloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What every path allocates stays here: live in the profile. */
static void *keep[1 << 16];
static size_t nkeep;

void *names_exported_first(size_t n);
void *names_exported_second(size_t n, int k);
void *names_exported_third(size_t n);
void *names_exported_last(size_t n);

/* Keep @p p live (the profile is of what is in use). */
static void names_keep(void *p)
{
	if (p != NULL && nkeep < sizeof(keep) / sizeof(keep[0]))
		keep[nkeep++] = p;
}

static void *names_static_fill(size_t n, int c);
static void *names_static_const(size_t n, int c);
static void *names_static_split(size_t n);

/* What names_static_split's fast path returns. */
static char small[16];

/* Exported: small, so the static code after it is far past its end. */
__attribute__((noinline)) void *names_exported_first(size_t n)
{
	return names_static_fill(n, 1);
}

__attribute__((noinline)) void *names_exported_second(size_t n, int k)
{
	void *p = names_static_const(4096, k);

	names_keep(names_static_const(4096, k + 1));
	names_keep(names_static_split(n));
	return p;
}

__attribute__((noinline)) void *names_exported_third(size_t n)
{
	names_keep(names_static_split(n + 1));
	names_keep(names_static_split(n & 7));
	return names_static_fill(n + 2, 3);
}

__attribute__((noinline)) void *names_exported_last(size_t n)
{
	return malloc(n);
}

/* A static helper: in no symbol table once stripped. */
static __attribute__((noinline)) void *names_static_fill(size_t n, int c)
{
	char *p = malloc(n);

	if (p != NULL)
		memset(p, c, n);
	return p;
}

/* Called with one constant size from every site: GCC clones it
 * (names_static_const.constprop.0). */
static __attribute__((noinline)) void *names_static_const(size_t n, int c)
{
	char *p = malloc(n);

	if (p != NULL)
		memset(p, c, n < 64 ? n : 64);
	return p;
}

/* A fast path GCC inlines into callers and a slow one it splits off
 * (names_static_split.part.0). */
static void *names_static_split(size_t n)
{
	char *p;
	size_t i;

	if (__builtin_expect(n < 16, 1))
		return small;
	p = malloc(n);
	for (i = 0; p != NULL && i < n; i += 4096)
		p[i] = (char)i;
	for (i = 0; p != NULL && i < 8; i++)
		names_keep(malloc(n / 8 + i));
	return p;
}

int main(int argc, char **argv)
{
	struct pollfd pfd = {.fd = 0, .events = POLLIN};
	const char *path = argc > 1 ? argv[1] : NULL;
	char buf[64];
	int i;

	for (i = 0; i < 256; i++) {
		names_keep(names_exported_first(65536));
		names_keep(names_exported_second(32768, i));
		names_keep(names_exported_third(16384));
		names_keep(names_exported_last(8192));
	}
	if (path != NULL) {
		if (mallctl("prof.dump", NULL, NULL, &path, sizeof(path)) !=
		    0) {
			fprintf(stderr, "names_host: prof.dump failed\n");
			return 1;
		}
		return 0;
	}
	printf("names_host: ready\n");
	fflush(stdout);
	while (poll(&pfd, 1, 300000) == 1 && read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}

/*
 * A program that allocates through a two-level wrapper of malloc, as C
 * services do (redis's zmalloc -> zmalloc_usable, git's xmalloc):
 * wrap_prog_alloc() -> wrap_prog_alloc_usable() -> malloc, called from
 * four sites of known sizes, for the allocation wrappers' test
 * (tests/agent/wrappers.sh) under jm4lw-run:
 *   - wrap_prog_site_big:    4 MiB (64 blocks of 64 KiB), at start;
 *   - wrap_prog_site_medium: 2 MiB (32 blocks), at start;
 *   - wrap_prog_site_small:  1 MiB (16 blocks), at start;
 *   - wrap_prog_site_leak:   one 64 KiB block more on each SIGUSR1,
 *     never freed; it prints "leaked N" when done.
 * Prints "ready" once the first three are in place; exits 0 on SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (64 * 1024)
#define LEAK_MAX 1024

static volatile sig_atomic_t done, leak_asked;

void *wrap_prog_alloc_usable(size_t n);
void *wrap_prog_alloc(size_t n);
void wrap_prog_site_big(void);
void wrap_prog_site_medium(void);
void wrap_prog_site_small(void);
void *wrap_prog_site_leak(void);

/* The stop signal. */
static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

/* One more leaked block, asked for. */
static void on_usr1(int sig)
{
	(void)sig;
	leak_asked++;
}

/* The inner wrapper: the only function that calls malloc. Its pages
 * touched, kept a frame of its own (noinline, no sibling calls). */
__attribute__((noinline)) void *wrap_prog_alloc_usable(size_t n)
{
	void *p = malloc(n);

	if (p == NULL)
		abort();
	memset(p, 1, n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* The outer wrapper, the one the program calls. */
__attribute__((noinline)) void *wrap_prog_alloc(size_t n)
{
	void *p = wrap_prog_alloc_usable(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static void *kept[64 + 32 + 16];
static size_t nkept;

/* @p blocks of BLOCK bytes, kept. */
#define SITE(fn, blocks)                                                       \
	__attribute__((noinline)) void fn(void)                                \
	{                                                                      \
		int i;                                                         \
		for (i = 0; i < (blocks); i++)                                 \
			kept[nkept++] = wrap_prog_alloc(BLOCK);                \
		__asm__ volatile("" : : : "memory");                           \
	}
SITE(wrap_prog_site_big, 64)
SITE(wrap_prog_site_medium, 32)
SITE(wrap_prog_site_small, 16)

/* The leak: one block nobody frees. */
__attribute__((noinline)) void *wrap_prog_site_leak(void)
{
	void *p = wrap_prog_alloc(BLOCK);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(void)
{
	static void *leaked[LEAK_MAX];
	struct sigaction sa = {0};
	sigset_t block, old;
	int nleaked = 0;

	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	wrap_prog_site_big();
	wrap_prog_site_medium();
	wrap_prog_site_small();
	printf("ready\n");
	fflush(stdout);
	while (!done) {
		while (leak_asked > 0 && nleaked < LEAK_MAX) {
			leak_asked--;
			leaked[nleaked++] = wrap_prog_site_leak();
			__asm__ volatile("" : : "r"(leaked) : "memory");
			printf("leaked %d\n", nleaked);
			fflush(stdout);
		}
		sigsuspend(&old); /* no signal lost between check and wait */
	}
	return 0;
}

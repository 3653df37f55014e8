/*
 * A program that knows nothing of jemalloc or jm4lw: plain libc malloc,
 * not linked with jemalloc. jm4lw-run must give it the admin port anyway.
 * It allocates through a distinctively named function until SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK (256 * 1024)
#define RING 256

static volatile sig_atomic_t done;

/* The stop signal. */
static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

void *glibc_prog_distinctive_alloc(size_t n);

/* The allocation site jeprof must name. */
__attribute__((noinline)) void *glibc_prog_distinctive_alloc(size_t n)
{
	char *p = malloc(n);

	if (p != NULL)
		memset(p, 0x5a, n);
	return p;
}

int main(void)
{
	static void *ring[RING];
	struct timespec ts = {.tv_nsec = 5 * 1000 * 1000};
	unsigned long i = 0;

	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	printf("glibc_prog running\n");
	fflush(stdout);
	while (!done) {
		free(ring[i % RING]);
		ring[i % RING] = glibc_prog_distinctive_alloc(BLOCK);
		i++;
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < RING; i++)
		free(ring[i]);
	return 0;
}

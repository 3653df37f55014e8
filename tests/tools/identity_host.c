/*
 * identity_host: the deterministic host of the identity harness
 * (tests/tools/identity.py). It allocates only when told, on stdin, so
 * that the harness turns sampling on (jmep) after the preload agent's own
 * start-up and every sampled allocation is one of these, at fixed sizes
 * from fixed functions, through a two-level wrapper as C services
 * allocate:
 *   sites   identity_site_big 32 x 64 KiB, identity_site_medium 16 x
 *           64 KiB, identity_site_small 64 x 80 B (every other one freed
 *           again: holes in the 80 B class), identity_site_temp 8 x
 *           4 KiB (all freed: records of freed allocations);
 *   thread  a thread named "idhost-worker" allocates 24 x 64 KiB in
 *           identity_site_thread and stays;
 *   leak    identity_site_leak: one 64 KiB block more, never freed.
 * Each command is answered "done COMMAND N" on stdout; EOF or SIGTERM
 * ends it (exit 0).
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (64 * 1024)

void *identity_alloc_usable(size_t n);
void *identity_alloc(size_t n);
void identity_site_big(void);
void identity_site_medium(void);
void identity_site_small(void);
void identity_site_temp(void);
void identity_site_thread(void);
void identity_site_leak(void);

static void *kept[4096];
static size_t nkept;

/* The inner wrapper, the only function that calls malloc; the pages
 * touched, kept a frame of its own. */
__attribute__((noinline)) void *identity_alloc_usable(size_t n)
{
	void *p = malloc(n);

	if (p == NULL)
		abort();
	memset(p, 1, n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* The outer wrapper, the one the sites call. */
__attribute__((noinline)) void *identity_alloc(size_t n)
{
	void *p = identity_alloc_usable(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* Keep @p p for the life of the process. */
static void keep(void *p)
{
	if (nkept < sizeof(kept) / sizeof(kept[0]))
		kept[nkept++] = p;
}

/* @p blocks of @p size bytes, kept. */
#define SITE(fn, blocks, size)                                                 \
	__attribute__((noinline)) void fn(void)                                \
	{                                                                      \
		int i;                                                         \
		for (i = 0; i < (blocks); i++)                                 \
			keep(identity_alloc(size));                            \
		__asm__ volatile("" : : : "memory");                           \
	}
SITE(identity_site_big, 32, BLOCK)
SITE(identity_site_medium, 16, BLOCK)
SITE(identity_site_thread, 24, BLOCK)
SITE(identity_site_leak, 1, BLOCK)

/* 64 objects of 80 B, every other one freed: holes in one class. */
__attribute__((noinline)) void identity_site_small(void)
{
	void *p[64];
	int i;

	for (i = 0; i < 64; i++)
		p[i] = identity_alloc(80);
	for (i = 0; i < 64; i++) {
		if (i % 2)
			free(p[i]);
		else
			keep(p[i]);
	}
}

/* 8 blocks of 4 KiB, all freed again. */
__attribute__((noinline)) void identity_site_temp(void)
{
	void *p[8];
	int i;

	for (i = 0; i < 8; i++)
		p[i] = identity_alloc(4096);
	for (i = 0; i < 8; i++)
		free(p[i]);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int thread_done;

/* The second thread: its site, then it waits for the process's end. */
static void *worker(void *arg)
{
	(void)arg;
	/* Named before its first allocation: each sampled one reads it. */
	pthread_setname_np(pthread_self(), "idhost-worker");
	identity_site_thread();
	pthread_mutex_lock(&lock);
	thread_done = 1;
	pthread_cond_broadcast(&cond);
	for (;;)
		pthread_cond_wait(&cond, &lock);
	return NULL;
}

/* Start the named thread and wait for its site. */
static void start_thread(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL) != 0)
		abort();
	pthread_mutex_lock(&lock);
	while (!thread_done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

int main(void)
{
	char line[64];
	int n = 0;

	signal(SIGTERM, SIG_DFL);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "sites") == 0) {
			identity_site_big();
			identity_site_medium();
			identity_site_small();
			identity_site_temp();
		} else if (strcmp(line, "thread") == 0) {
			start_thread();
		} else if (strcmp(line, "leak") == 0) {
			identity_site_leak();
		} else {
			printf("unknown %s\n", line);
			fflush(stdout);
			continue;
		}
		printf("done %s %d\n", line, ++n);
		fflush(stdout);
	}
	return 0;
}

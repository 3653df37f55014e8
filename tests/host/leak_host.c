/*
 * leak_host: a service with a steady leak among churn and a cache that
 * fills and then stops, embedding the module on its own loop (words and
 * HTTP), for the leak suspects' acceptance test
 *(tests/integration/leak_trend.sh) and the fork case (leak_fork.sh).
 *
 *	MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:12 \
 *	    leak_host DUMP_DIR
 *
 * JM4LW_CONF=FILE is the module's configuration (dump_interval ...).
 * On its loop, from the start:
 *   - the leak: every 50 ms, 16 KiB through leak_host_steady_leak(),
 *     never freed (~320 KiB/s);
 *   - the cache: 24 blocks of 256 KiB (6 MiB) through
 *     leak_host_cache_fill(), one every 125 ms, then nothing more: it
 *     fills in the first 3 s and stays;
 *   - churn: a ring of 256 blocks of 1-64 KiB through leak_host_churn(),
 *     one replaced every 5 ms with a random size, so its live bytes go up
 *     and down around ~8 MiB.
 * The word "frk1" forks: the child reinitialises the loop, listens on a
 * new port of its own and prints "child PID listening on ADDR" on stdout;
 * the parent answers "forked PID".
 * Prints "listening on ADDR" and "http on ADDR" once bound; exits 0 on
 * SIGTERM.
 */
#include <sys/types.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"

#define LEAK_SIZE (16 * 1024)
#define LEAK_MAX 4096 /* 64 MiB, then the leak stops */
#define CACHE_SIZE (256 * 1024)
#define CACHE_BLOCKS 24
#define CHURN_SLOTS 256

void *leak_host_steady_leak(size_t size);
void *leak_host_cache_fill(size_t size);
void *leak_host_churn(size_t size);

static void *leaked[LEAK_MAX], *cache[CACHE_BLOCKS], *churn[CHURN_SLOTS];
static size_t nleaked, ncache, churn_next;
static struct jm4lw *module;
static struct event_base *base;

/* One allocation site each, a frame of its own (host.h). */
HOST_SITE(leak_host_steady_leak)
HOST_SITE(leak_host_cache_fill)
HOST_SITE(leak_host_churn)

/* Every 50 ms: 16 KiB more that nobody frees. */
static void leak_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (nleaked < LEAK_MAX)
		leaked[nleaked++] = leak_host_steady_leak(LEAK_SIZE);
}

/* Every 125 ms until it is full: one more cache block. */
static void cache_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (ncache < CACHE_BLOCKS)
		cache[ncache++] = leak_host_cache_fill(CACHE_SIZE);
}

/* Every 5 ms: the oldest churn block replaced by one of a random size. */
static void churn_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	free(churn[churn_next]);
	churn[churn_next] =
	    leak_host_churn(1024 + (size_t)(random() % (64 * 1024)));
	churn_next = (churn_next + 1) % CHURN_SLOTS;
}

/* frk1: fork here, on the loop (while the worker may be dumping). The
 * child's module must serve, on a port of its own. */
static int word_fork(struct jm4lw_reply *r, void *arg)
{
	char addr[128];
	pid_t pid;
	int n;

	(void)arg;
	fflush(stdout);
	if ((pid = fork()) == -1) {
		return jm4lw_reply_error(r, "fork failed");
	}
	if (pid > 0) {
		jm4lw_reply_printf(r, "forked %ld\n", (long)pid);
		return 0;
	}
	if (event_reinit(base) == -1) {
		fprintf(stderr, "leak_host child: event_reinit failed\n");
		_exit(1);
	}
	n = 0;
	while (jm4lw_bound_addr(module, n, addr, sizeof(addr)) == 0)
		n++;
	if (jm4lw_listen(module, "127.0.0.1:0") == -1 ||
	    jm4lw_bound_addr(module, n, addr, sizeof(addr)) == -1) {
		fprintf(stderr, "leak_host child: cannot listen\n");
		_exit(1);
	}
	printf("child %ld listening on %s\n", (long)getpid(), addr);
	fflush(stdout);
	jm4lw_reply_printf(r, "child\n");
	return 0;
}

/* A persistent timer every @p usec on the loop, or NULL. */
static struct event *every(long usec, event_callback_fn fn)
{
	struct timeval tv = {.tv_sec = usec / 1000000,
	    .tv_usec = usec % 1000000};
	struct event *ev = event_new(base, -1, EV_PERSIST, fn, NULL);

	if (ev != NULL && event_add(ev, &tv) == -1) {
		event_free(ev);
		ev = NULL;
	}
	return ev;
}

int main(int argc, char *argv[])
{
	struct event *ev[4] = {NULL};
	char addr[128], haddr[128];
	int status = 1;
	size_t i;

	srandom(1);
	if ((module = host_start(argc, argv, "leak_host", &base, addr, haddr,
	         sizeof(addr))) == NULL ||
	    jm4lw_add_word(module, "frk1", word_fork, NULL, 0) == -1)
		goto done;
	ev[0] = every(50000, leak_tick);
	ev[1] = every(125000, cache_tick);
	ev[2] = every(5000, churn_tick);
	ev[3] = host_sigterm(base);
	if (ev[0] == NULL || ev[1] == NULL || ev[2] == NULL || ev[3] == NULL)
		goto done;
	status = host_serve(base, addr, haddr);
done:
	for (i = 0; i < 4; i++)
		if (ev[i] != NULL)
			event_free(ev[i]);
	jm4lw_free(module);
	if (base != NULL)
		event_base_free(base);
	for (i = 0; i < nleaked; i++)
		free(leaked[i]);
	for (i = 0; i < ncache; i++)
		free(cache[i]);
	for (i = 0; i < CHURN_SLOTS; i++)
		free(churn[i]);
	return status;
}

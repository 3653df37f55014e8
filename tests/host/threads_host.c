/*
 * threads_host: a host that names its threads for the heap profiles with
 * jm4lw_thread_name(), for tests/integration/threads.sh.
 *
 *	MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:12 \
 *	    threads_host DUMP_DIR
 *
 * Two threads, each named as it starts: "cache_fill" keeps 8 MiB in
 * 64 KiB blocks through threads_host_cache_fill(), "small_fill" 2 MiB
 * through threads_host_small_fill(); the main thread, unnamed, keeps
 * 1 MiB through threads_host_main_fill(). Then the module on the main
 * thread's loop. Prints, in this order: "name cache_fill: 0" and
 * "name small_fill: 0" (or the errno's name), "fifteen: ERRNO" and
 * "cleared: ERRNO" for a 15-byte name on the main thread and "" after
 * it, "refused long: ERRNO" and "refused bad: ERRNO" for a 16-byte name
 * and one with a newline,
 * "refused quote: ERRNO" and "refused backslash: ERRNO", "many named:
 * N of 200" for 200 threads each naming itself n000..n199 (and keeping
 * one 64 KiB block), "listening on ADDR", then "quoted done" once a
 * thread named by the kernel q"uo\te<TAB>x (pthread_setname_np, what
 * prof_sys_thread_name reads) kept 4 blocks; exits 0 on SIGTERM.
 * cache_fill's name comes from a buffer freed and overwritten right
 * after the call: jemalloc keeps its own copy.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "jm4lw.h"

#define BLOCK (64 * 1024)
#define NMANY 200

static void *kept[512];
static size_t nkept;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The errno's name, for the test to match. */
static const char *errname(int e)
{
	switch (e) {
	case 0:
		return "0";
	case EINVAL:
		return "EINVAL";
	case ENAMETOOLONG:
		return "ENAMETOOLONG";
	case ENOENT:
		return "ENOENT";
	case EBUSY:
		return "EBUSY";
	case ENOSYS:
		return "ENOSYS";
	default:
		return strerror(e);
	}
}

/* Keep block @p p until exit. */
static void keep(void *p)
{
	if (p == NULL)
		abort();
	memset(p, 1, BLOCK);
	pthread_mutex_lock(&lock);
	if (nkept < sizeof(kept) / sizeof(kept[0]))
		kept[nkept++] = p;
	pthread_mutex_unlock(&lock);
}

/* Distinct functions, kept out of line, each calling malloc itself so
 * it is the leaf of its stacks. */
__attribute__((noinline)) void threads_host_cache_fill(void);
__attribute__((noinline)) void threads_host_small_fill(void);
__attribute__((noinline)) void threads_host_main_fill(void);

void threads_host_cache_fill(void)
{
	int i;

	for (i = 0; i < (8 << 20) / BLOCK; i++)
		keep(malloc(BLOCK));
}

void threads_host_small_fill(void)
{
	int i;

	for (i = 0; i < (2 << 20) / BLOCK; i++)
		keep(malloc(BLOCK));
}

void threads_host_main_fill(void)
{
	int i;

	for (i = 0; i < (1 << 20) / BLOCK; i++)
		keep(malloc(BLOCK));
}

/* A thread: its name, then its fill. */
static void *filler(void *arg)
{
	const char *name = arg;
	char *copy = strdup(name);
	int r;

	if (copy == NULL)
		abort();
	/* The name from a buffer that is gone once the call returns. */
	r = jm4lw_thread_name(copy);
	memset(copy, 'X', strlen(copy));
	free(copy);

	printf("name %s: %s\n", name, errname(r == 0 ? 0 : errno));
	fflush(stdout);
	if (strcmp(name, "cache_fill") == 0)
		threads_host_cache_fill();
	else
		threads_host_small_fill();
	return NULL;
}

/* One of many threads: names itself n<NNN>, keeps one block. */
static void *many(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "n%03d", (int)(intptr_t)arg);
	if (jm4lw_thread_name(name) != 0)
		return NULL;
	keep(malloc(BLOCK));
	return (void *)1;
}

/* A thread the kernel names with a quote, a backslash and a tab (as
 * prof_sys_thread_name reads it); keeps 4 blocks. */
static void *quoted(void *arg)
{
	int i;

	(void)arg;
	pthread_setname_np(pthread_self(), "q\"uo\\te\tx");
	for (i = 0; i < 4; i++)
		keep(malloc(BLOCK));
	return NULL;
}

/* Once the loop runs: the quoted thread, then "quoted done". */
static void start_quoted(evutil_socket_t fd, short what, void *arg)
{
	pthread_t q;

	(void)fd;
	(void)what;
	(void)arg;
	if (pthread_create(&q, NULL, quoted, NULL) == 0 &&
	    pthread_join(q, NULL) == 0)
		printf("quoted done\n");
	fflush(stdout);
}

static void host_signal(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

int main(int argc, char *argv[])
{
	struct jm4lw_config *cfg;
	struct event_base *base;
	struct jm4lw *module = NULL;
	struct event *ev = NULL;
	pthread_t t[2], tm[NMANY];
	char err[256], addr[128];
	int status = 1, r;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: threads_host DUMP_DIR\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	/* One after the other: the lines come in a known order. */
	if (pthread_create(&t[0], NULL, filler, "cache_fill") != 0 ||
	    pthread_join(t[0], NULL) != 0 ||
	    pthread_create(&t[1], NULL, filler, "small_fill") != 0 ||
	    pthread_join(t[1], NULL) != 0)
		return 1;
	r = jm4lw_thread_name("fifteen_bytes_x");
	printf("fifteen: %s\n", errname(r == 0 ? 0 : errno));
	r = jm4lw_thread_name(""); /* the main thread stays unnamed */
	printf("cleared: %s\n", errname(r == 0 ? 0 : errno));
	r = jm4lw_thread_name("sixteen_bytes_xx");
	printf("refused long: %s\n", errname(r == 0 ? 0 : errno));
	r = jm4lw_thread_name("bad\nname");
	printf("refused bad: %s\n", errname(r == 0 ? 0 : errno));
	r = jm4lw_thread_name("io\"worker");
	printf("refused quote: %s\n", errname(r == 0 ? 0 : errno));
	r = jm4lw_thread_name("back\\slash");
	printf("refused backslash: %s\n", errname(r == 0 ? 0 : errno));
	for (i = 0; i < NMANY; i++)
		if (pthread_create(&tm[i], NULL, many, (void *)(intptr_t)i) !=
		    0)
			return 1;
	for (i = 0, r = 0; i < NMANY; i++) {
		void *ok = NULL;

		pthread_join(tm[i], &ok);
		r += ok != NULL;
	}
	printf("many named: %d of %d\n", r, NMANY);
	threads_host_main_fill();
	if ((cfg = jm4lw_config_new()) == NULL ||
	    jm4lw_config_set(cfg, "dump_dir", argv[1], err, sizeof(err)) ==
	        -1 ||
	    (base = event_base_new()) == NULL)
		return 2;
	module = jm4lw_new(base, cfg, err, sizeof(err));
	jm4lw_config_free(cfg);
	if (module == NULL) {
		fprintf(stderr, "threads_host: %s\n", err);
		goto done;
	}
	if (jm4lw_listen(module, "127.0.0.1:0") == -1 ||
	    jm4lw_bound_addr(module, 0, addr, sizeof(addr)) == -1 ||
	    (ev = evsignal_new(base, SIGTERM, host_signal, base)) == NULL ||
	    evsignal_add(ev, NULL) == -1)
		goto done;
	printf("listening on %s\n", addr);
	fflush(stdout);
	event_base_once(base, -1, EV_TIMEOUT, start_quoted, NULL, NULL);
	if (event_base_dispatch(base) == 0)
		status = 0;
done:
	if (ev != NULL)
		event_free(ev);
	jm4lw_free(module);
	event_base_free(base);
	for (i = 0; i < nkept; i++)
		free(kept[i]);
	return status;
}

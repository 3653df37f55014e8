/*
 * jeprof_host: a small service that embeds the module through jm4lw.h and
 * keeps allocating through one distinctively named function, so a heap
 * profile taken with sampling on must show that function and one taken
 * before jmep must not. tests/integration/jeprof.sh drives it; leak.sh and
 * schedule.sh use its leak mode.
 *
 *	MALLOC_CONF=prof:true,prof_active:false jeprof_host DUMP_DIR
 *
 * Environment:
 *	JM4LW_CONF=FILE      read the module's configuration from FILE
 *	                     (jm4lw_config_load; DUMP_DIR still wins); without
 *	                     it, the defaults
 *	JM4LW_TEST_LEAK=1    leak from the start (see below)
 *	JM4LW_TEST_THREAD_NAME=NAME
 *	                     a thread named NAME that holds 8 MiB allocated
 *	                     through jm4lw_test_distinctive_alloc(), made
 *	                     before the port is printed, living until exit.
 *	                     Named twice: the system's name first (its first
 *	                     15 bytes, pthread_setname_np: what jemalloc's
 *	                     prof_sys_thread_name reads at each sample), then
 *	                     thread.prof.name after its allocations (refused
 *	                     with ENOENT under prof_sys_thread_name)
 *
 * Two allocators run on the module's event loop:
 *   - the ring: every 5 ms, free the oldest 256 KiB block and allocate a
 *     new one through jm4lw_test_distinctive_alloc(). It is filled before
 *     the module starts, so the live heap is steady (~64 MiB) from the
 *     module's first look at it: lots of traffic, no growth.
 *   - the leak, when on: every 10 ms, 256 KiB through
 *     jm4lw_test_leaky_function() that is never freed while running
 *     (~25 MiB/s), until 256 MiB have leaked; then it stops by itself.
 * SIGUSR1 switches the leak on and off. Each change is a line on stdout:
 * "leak: on", "leak: off", "leak: cap reached (256 MiB)".
 *
 * Prints "listening on ADDR:PORT" on stdout once the port is bound; exits 0
 * on SIGTERM or SIGINT. The module logs (scheduled dumps, retention) go to
 * stderr as "jm4lw: ..." lines.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jemalloc/jemalloc.h>

#include "jm4lw.h"

#define BLOCK_SIZE (256 * 1024)
#define RING_BLOCKS 256 /* 64 MiB live at most */
#define TICK_USEC 5000
#define LEAK_SIZE (256 * 1024)
#define LEAK_BLOCKS 1024 /* 256 MiB, then the leak stops */
#define LEAK_TICK_USEC 10000

void *jm4lw_test_distinctive_alloc(size_t size, int fill);
void *jm4lw_test_leaky_function(size_t size, int fill);

static void *ring[RING_BLOCKS];
static size_t ring_next;
static void *leaked[LEAK_BLOCKS];
static size_t nleaked;
static int leaking;

#define NAMED_BLOCKS 32 /* 8 MiB through the named thread */
static void *named[NAMED_BLOCKS];
static pthread_mutex_t named_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t named_cv = PTHREAD_COND_INITIALIZER;
static int named_state; /* 1: named; 2: the host is done */

/*
 * The one allocation site the test looks for in jeprof's output. noinline
 * (and -O1, see CMakeLists.txt) keeps it a frame of its own in the sampled
 * backtraces; the memset touches every page so the block is really used.
 */
__attribute__((noinline)) void *jm4lw_test_distinctive_alloc(size_t size,
    int fill)
{
	void *p = malloc(size);

	if (p != NULL)
		memset(p, fill, size);
	/* Keep the call from becoming a tail call or being folded away. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* The leak's allocation site: leak.sh expects it at the top of the
 * growth between two dumps. Same precautions as above. */
__attribute__((noinline)) void *jm4lw_test_leaky_function(size_t size, int fill)
{
	void *p = malloc(size);

	if (p != NULL)
		memset(p, fill, size);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* Every tick: replace the oldest block, so the newest 64 MiB stay live. */
static void host_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	free(ring[ring_next]);
	ring[ring_next] = jm4lw_test_distinctive_alloc(BLOCK_SIZE,
	    (int)(ring_next & 0x7f) + 1);
	ring_next = (ring_next + 1) % RING_BLOCKS;
}

/* Say what the leak does now, at once (the tests read stdout). */
static void leak_say(const char *what)
{
	printf("leak: %s\n", what);
	fflush(stdout);
}

/* Every leak tick, while leaking: one more block nobody frees. */
static void leak_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (!leaking)
		return;
	if (nleaked == LEAK_BLOCKS) {
		leaking = 0;
		leak_say("cap reached (256 MiB)");
		return;
	}
	leaked[nleaked] =
	    jm4lw_test_leaky_function(LEAK_SIZE, (int)(nleaked & 0x7f) + 1);
	nleaked++;
}

/* JM4LW_TEST_THREAD_NAME's thread: allocate, take the name, wait. */
static void *named_thread(void *arg)
{
	const char *name = arg;
	size_t i;
	int e;

	char sys[16];

	snprintf(sys, sizeof(sys), "%s", name);
	(void)pthread_setname_np(pthread_self(), sys);
	for (i = 0; i < NAMED_BLOCKS; i++)
		named[i] = jm4lw_test_distinctive_alloc(BLOCK_SIZE, 7);
	if ((e = mallctl("thread.prof.name", NULL, NULL, (void *)&name,
	         sizeof(name))) != 0 &&
	    e != ENOENT)
		fprintf(stderr, "jeprof_host: thread.prof.name: error %d\n", e);
	pthread_mutex_lock(&named_mu);
	named_state = 1;
	pthread_cond_broadcast(&named_cv);
	while (named_state != 2)
		pthread_cond_wait(&named_cv, &named_mu);
	pthread_mutex_unlock(&named_mu);
	return NULL;
}

/* SIGUSR1: the leak on or off. */
static void leak_toggle(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	(void)arg;
	leaking = !leaking;
	leak_say(leaking ? "on" : "off");
}

/* SIGTERM/SIGINT: leave the loop; main frees everything. */
static void host_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	event_base_loopexit(arg, NULL);
}

int main(int argc, char *argv[])
{
	struct timeval tick = {.tv_sec = 0, .tv_usec = TICK_USEC};
	struct timeval ltick = {.tv_sec = 0, .tv_usec = LEAK_TICK_USEC};
	struct event_base *base = NULL;
	struct event *timer = NULL, *ltimer = NULL;
	struct event *sigterm = NULL, *sigint = NULL, *sigusr1 = NULL;
	struct jm4lw *m = NULL;
	struct jm4lw_config *cfg = NULL;
	const char *conf = getenv("JM4LW_CONF"),
	           *leak = getenv("JM4LW_TEST_LEAK"),
	           *tname = getenv("JM4LW_TEST_THREAD_NAME");
	pthread_t named_tid;
	int named_on = 0;
	char err[256], addr[128];
	int status = 1;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: jeprof_host DUMP_DIR\n");
		return 2;
	}
	if ((cfg = jm4lw_config_new()) == NULL) {
		fprintf(stderr, "jeprof_host: out of memory\n");
		return 2;
	}
	if (conf != NULL && *conf != '\0' &&
	    jm4lw_config_load(cfg, conf, err, sizeof(err)) == -1) {
		fprintf(stderr, "jeprof_host: %s\n", err);
		jm4lw_config_free(cfg);
		return 2;
	}
	if (jm4lw_config_set(cfg, "dump_dir", argv[1], err, sizeof(err)) ==
	    -1) {
		fprintf(stderr, "jeprof_host: dump_dir: %s\n", err);
		jm4lw_config_free(cfg);
		return 2;
	}
	leaking = leak != NULL && strcmp(leak, "1") == 0;
	/* The ring full before the module's first look at stats.allocated:
	 * dump_on_growth must see traffic, not growth. */
	for (i = 0; i < RING_BLOCKS; i++)
		host_tick(-1, 0, NULL);
	base = event_base_new();
	/* jm4lw_new copies the configuration. */
	m = base != NULL ? jm4lw_new(base, cfg, err, sizeof(err)) : NULL;
	jm4lw_config_free(cfg);
	if (base == NULL) {
		fprintf(stderr, "jeprof_host: cannot create event base\n");
		return 1;
	}
	if (m == NULL) {
		fprintf(stderr, "jeprof_host: %s\n", err);
		goto done;
	}
	if (jm4lw_listen(m, "127.0.0.1:0") == -1 ||
	    jm4lw_bound_addr(m, 0, addr, sizeof(addr)) == -1)
		goto done;

	timer = event_new(base, -1, EV_PERSIST, host_tick, NULL);
	ltimer = event_new(base, -1, EV_PERSIST, leak_tick, NULL);
	sigterm = evsignal_new(base, SIGTERM, host_signal, base);
	sigint = evsignal_new(base, SIGINT, host_signal, base);
	sigusr1 = evsignal_new(base, SIGUSR1, leak_toggle, NULL);
	if (timer == NULL || ltimer == NULL || sigterm == NULL ||
	    sigint == NULL || sigusr1 == NULL ||
	    event_add(timer, &tick) == -1 || event_add(ltimer, &ltick) == -1 ||
	    evsignal_add(sigterm, NULL) == -1 ||
	    evsignal_add(sigint, NULL) == -1 ||
	    evsignal_add(sigusr1, NULL) == -1) {
		fprintf(stderr, "jeprof_host: cannot set up events\n");
		goto done;
	}
	if (tname != NULL &&
	    pthread_create(&named_tid, NULL, named_thread, (void *)tname) ==
	        0) {
		named_on = 1;
		pthread_mutex_lock(&named_mu);
		while (named_state != 1)
			pthread_cond_wait(&named_cv, &named_mu);
		pthread_mutex_unlock(&named_mu);
	}
	printf("listening on %s\n", addr);
	if (leaking)
		printf("leak: on\n");
	fflush(stdout);
	if (event_base_dispatch(base) == -1) {
		fprintf(stderr, "jeprof_host: event loop failed\n");
		goto done;
	}
	status = 0;
done:
	if (named_on) {
		pthread_mutex_lock(&named_mu);
		named_state = 2;
		pthread_cond_broadcast(&named_cv);
		pthread_mutex_unlock(&named_mu);
		pthread_join(named_tid, NULL);
		for (i = 0; i < NAMED_BLOCKS; i++)
			free(named[i]);
	}
	if (timer != NULL)
		event_free(timer);
	if (ltimer != NULL)
		event_free(ltimer);
	if (sigterm != NULL)
		event_free(sigterm);
	if (sigint != NULL)
		event_free(sigint);
	if (sigusr1 != NULL)
		event_free(sigusr1);
	jm4lw_free(m);
	if (base != NULL)
		event_base_free(base);
	for (i = 0; i < RING_BLOCKS; i++)
		free(ring[i]);
	for (i = 0; i < nleaked; i++)
		free(leaked[i]);
	return status;
}

/*
 * jeprof_host: a small service that embeds the module through jm4lw.h and
 * keeps allocating through one distinctively named function, so a heap
 * profile taken with sampling on must show that function and one taken
 * before jmep must not. tests/integration/jeprof.sh drives it.
 *
 *	MALLOC_CONF=prof:true,prof_active:false jeprof_host DUMP_DIR
 *
 * Prints "listening on ADDR:PORT" on stdout once the port is bound; exits 0
 * on SIGTERM or SIGINT.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "jm4lw.h"

#define BLOCK_SIZE (256 * 1024)
#define RING_BLOCKS 256 /* 64 MiB live at most */
#define TICK_USEC 5000

void *jm4lw_test_distinctive_alloc(size_t size, int fill);

static void *ring[RING_BLOCKS];
static size_t ring_next;

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
	struct event_base *base = NULL;
	struct event *timer = NULL, *sigterm = NULL, *sigint = NULL;
	struct jm4lw *m = NULL;
	struct jm4lw_config cfg;
	char err[256], addr[128];
	int status = 1;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: jeprof_host DUMP_DIR\n");
		return 2;
	}
	jm4lw_config_init(&cfg);
	if (jm4lw_config_set(&cfg, "dump_dir", argv[1], err, sizeof(err)) ==
	    -1) {
		fprintf(stderr, "jeprof_host: dump_dir: %s\n", err);
		return 2;
	}
	if ((base = event_base_new()) == NULL) {
		fprintf(stderr, "jeprof_host: cannot create event base\n");
		return 1;
	}
	if ((m = jm4lw_new(base, &cfg, err, sizeof(err))) == NULL) {
		fprintf(stderr, "jeprof_host: %s\n", err);
		goto done;
	}
	if (jm4lw_listen(m, "127.0.0.1:0") == -1 ||
	    jm4lw_bound_addr(m, 0, addr, sizeof(addr)) == -1)
		goto done;

	timer = event_new(base, -1, EV_PERSIST, host_tick, NULL);
	sigterm = evsignal_new(base, SIGTERM, host_signal, base);
	sigint = evsignal_new(base, SIGINT, host_signal, base);
	if (timer == NULL || sigterm == NULL || sigint == NULL ||
	    event_add(timer, &tick) == -1 || evsignal_add(sigterm, NULL) == -1 ||
	    evsignal_add(sigint, NULL) == -1) {
		fprintf(stderr, "jeprof_host: cannot set up events\n");
		goto done;
	}
	printf("listening on %s\n", addr);
	fflush(stdout);
	if (event_base_dispatch(base) == -1) {
		fprintf(stderr, "jeprof_host: event loop failed\n");
		goto done;
	}
	status = 0;
done:
	if (timer != NULL)
		event_free(timer);
	if (sigterm != NULL)
		event_free(sigterm);
	if (sigint != NULL)
		event_free(sigint);
	jm4lw_free(m);
	event_base_free(base);
	for (i = 0; i < RING_BLOCKS; i++)
		free(ring[i]);
	return status;
}

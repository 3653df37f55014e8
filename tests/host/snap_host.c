/*
 * snap_host: a quiet service that allocates at two known sites when asked,
 * embedding the module on its own loop (words and HTTP), for the rolling
 * snapshots' test (tests/integration/snapshots.sh).
 *
 *	MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:12 \
 *	    snap_host DUMP_DIR
 *
 * JM4LW_CONF=FILE is the module's configuration (snapshot_interval ...).
 * The word "big1" allocates 8 MiB through snap_host_first (32 blocks of
 * 256 KiB), "big2" 4 MiB through snap_host_second (16 blocks), "fre1"
 * frees the first site's, each printing "done N" on stdout once done.
 * "spk1" allocates 32 MiB through snap_host_spike and frees it at once, a
 * peak no snapshot sees (jemalloc's prof_gdump does, where it is on).
 * Nothing else allocates. The word "frk1" forks: the child listens on a
 * port of its own and prints "child PID listening on ADDR"; the parent
 * answers "forked PID". Prints "listening on ADDR" and "http on ADDR"
 * once bound; exits 0 on SIGTERM.
 */
#include <sys/types.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "host.h"

#define BLOCK (256 * 1024)
/* spk1's 32 MiB: jemalloc maps more as it goes (a new high each time),
 * so its gdump dumps hold much of the spike. */
#define SPIKE_BLOCKS 128

void *snap_host_first(size_t size);
void *snap_host_second(size_t size);
void *snap_host_spike(size_t size);

static void *first[32], *second[16];
static struct event_base *base;
static struct jm4lw *module;

/* One allocation site each, a frame of its own (host.h). */
HOST_SITE(snap_host_first)
HOST_SITE(snap_host_second)
HOST_SITE(snap_host_spike)

/* What a word asks for, done on the loop after the word's callback: the
 * module keeps its host's thread unsampled while a callback of its own
 * (a word) runs, so an allocation made there would be in no profile. */
static void host_do(evutil_socket_t fd, short what, void *arg)
{
	int op = (int)(intptr_t)arg;
	size_t i;

	(void)fd;
	(void)what;
	for (i = 0; op == 1 && i < 32; i++)
		if (first[i] == NULL)
			first[i] = snap_host_first(BLOCK);
	for (i = 0; op == 2 && i < 16; i++)
		if (second[i] == NULL)
			second[i] = snap_host_second(BLOCK);
	for (i = 0; op == 3 && i < 32; i++) {
		free(first[i]);
		first[i] = NULL;
	}
	if (op == 4) { /* a spike: up and down within this callback */
		void *spike[SPIKE_BLOCKS];

		for (i = 0; i < SPIKE_BLOCKS; i++)
			spike[i] = snap_host_spike(BLOCK);
		for (i = 0; i < SPIKE_BLOCKS; i++)
			free(spike[i]);
	}
	printf("done %d\n", op);
	fflush(stdout);
}

/* big1 (8 MiB at the first site), big2 (4 MiB at the second), fre1 (the
 * first site's freed), spk1 (8 MiB up and down): done right after the
 * reply. */
static int word_do(struct jm4lw_reply *r, void *arg)
{
	struct timeval now = {0, 0};

	if (event_base_once(base, -1, EV_TIMEOUT, host_do, arg, &now) == -1)
		return jm4lw_reply_error(r, "cannot schedule it");
	jm4lw_reply_printf(r, "ok\n");
	return 0;
}

/* frk1: fork on the loop. The child's module serves on a port of its
 * own, and must not answer with its parent's snapshots. */
static int word_fork(struct jm4lw_reply *r, void *arg)
{
	char addr[128];
	pid_t pid;
	int n = 0;

	(void)arg;
	fflush(stdout);
	if ((pid = fork()) == -1)
		return jm4lw_reply_error(r, "fork failed");
	if (pid > 0) {
		jm4lw_reply_printf(r, "forked %ld\n", (long)pid);
		return 0;
	}
	if (event_reinit(base) == -1) {
		fprintf(stderr, "snap_host child: event_reinit failed\n");
		_exit(1);
	}
	while (jm4lw_bound_addr(module, n, addr, sizeof(addr)) == 0)
		n++;
	if (jm4lw_listen(module, "127.0.0.1:0") == -1 ||
	    jm4lw_bound_addr(module, n, addr, sizeof(addr)) == -1) {
		fprintf(stderr, "snap_host child: cannot listen\n");
		_exit(1);
	}
	printf("child %ld listening on %s\n", (long)getpid(), addr);
	fflush(stdout);
	jm4lw_reply_printf(r, "child\n");
	return 0;
}

int main(int argc, char *argv[])
{
	struct event *sig = NULL;
	char addr[128], haddr[128];
	int status = 1;
	size_t i;

	if ((module = host_start(argc, argv, "snap_host", &base, addr, haddr,
	         sizeof(addr))) == NULL ||
	    jm4lw_add_word(module, "big1", word_do, (void *)1, 0) == -1 ||
	    jm4lw_add_word(module, "big2", word_do, (void *)2, 0) == -1 ||
	    jm4lw_add_word(module, "fre1", word_do, (void *)3, 0) == -1 ||
	    jm4lw_add_word(module, "spk1", word_do, (void *)4, 0) == -1 ||
	    jm4lw_add_word(module, "frk1", word_fork, NULL, 0) == -1 ||
	    (sig = host_sigterm(base)) == NULL)
		goto done;
	status = host_serve(base, addr, haddr);
done:
	if (sig != NULL)
		event_free(sig);
	jm4lw_free(module);
	if (base != NULL)
		event_base_free(base);
	for (i = 0; i < 32; i++)
		free(first[i]);
	for (i = 0; i < 16; i++)
		free(second[i]);
	return status;
}

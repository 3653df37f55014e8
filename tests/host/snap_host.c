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
 * Nothing else allocates. Prints "listening on ADDR" and "http on ADDR"
 * once bound; exits 0 on SIGTERM.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

#define BLOCK (256 * 1024)

void *snap_host_first(size_t size);
void *snap_host_second(size_t size);

static void *first[32], *second[16];
static struct event_base *base;

/* One allocation site each, a frame of its own (host.h). */
HOST_SITE(snap_host_first)
HOST_SITE(snap_host_second)

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
	printf("done %d\n", op);
	fflush(stdout);
}

/* big1 (8 MiB at the first site), big2 (4 MiB at the second), fre1 (the
 * first site's freed): done right after the reply. */
static int word_do(struct jm4lw_reply *r, void *arg)
{
	struct timeval now = {0, 0};

	if (event_base_once(base, -1, EV_TIMEOUT, host_do, arg, &now) == -1)
		return jm4lw_reply_error(r, "cannot schedule it");
	jm4lw_reply_printf(r, "ok\n");
	return 0;
}

int main(int argc, char *argv[])
{
	struct jm4lw *module = NULL;
	struct event *sig = NULL;
	char addr[128], haddr[128];
	int status = 1;
	size_t i;

	if ((module = host_start(argc, argv, "snap_host", &base, addr, haddr,
	         sizeof(addr))) == NULL ||
	    jm4lw_add_word(module, "big1", word_do, (void *)1, 0) == -1 ||
	    jm4lw_add_word(module, "big2", word_do, (void *)2, 0) == -1 ||
	    jm4lw_add_word(module, "fre1", word_do, (void *)3, 0) == -1 ||
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

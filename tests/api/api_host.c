/*
 * api_host: a small embedding host, built with several link lines (see
 * CMakeLists.txt) so tests/api/allocator.sh can check which of them run on
 * jemalloc. It holds 32 MB from malloc(), then starts the module:
 *
 *	api_host new      jm4lw_new(); prints "new: ok" or "new: NULL: <err>"
 *	api_host thread   jm4lw_start_thread() on 127.0.0.1:0; prints
 *	                  "thread: ok" (then serves until stdin closes) or
 *	                  "thread: NULL: <err>"
 *
 * Exit status 0 when the module started, 1 when it refused.
 * "name": jm4lw_thread_name("api_host"), printing "name: 0" or
 * "name: <strerror>", exit 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "jm4lw.h"

enum { HELD = 32 << 20 };

/* jm4lw_new() on a base of our own, as a libevent host would. */
static int try_new(const struct jm4lw_config *cfg)
{
	struct event_base *base = event_base_new();
	struct jm4lw *m;
	char err[512] = "";

	if (base == NULL)
		return 2;
	m = jm4lw_new(base, cfg, err, sizeof(err));
	if (m == NULL)
		printf("new: NULL: %s\n", err);
	else
		printf("new: ok\n");
	jm4lw_free(m);
	event_base_free(base);
	return m == NULL;
}

/* jm4lw_start_thread(), serving until stdin closes so a test can ask. */
static int try_thread(const struct jm4lw_config *cfg)
{
	struct jm4lw_thread *t;
	char err[512] = "", buf[64];

	t = jm4lw_start_thread(cfg, err, sizeof(err));
	if (t == NULL) {
		printf("thread: NULL: %s\n", err);
		return 1;
	}
	printf("thread: ok\n");
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	jm4lw_stop_thread(t);
	return 0;
}

/* Hold HELD bytes from the process's malloc, then try the mode asked. */
int main(int argc, char **argv)
{
	struct jm4lw_config *cfg;
	char err[256];
	/* volatile: clang would otherwise drop a malloc nobody reads. */
	char *volatile held;
	int rc;

	if (argc != 2 ||
	    (strcmp(argv[1], "new") && strcmp(argv[1], "thread") &&
	        strcmp(argv[1], "name"))) {
		fprintf(stderr, "usage: api_host new|thread|name\n");
		return 2;
	}
	/* jm4lw_thread_name: its result and errno, nothing else. */
	if (strcmp(argv[1], "name") == 0) {
		rc = jm4lw_thread_name("api_host");
		printf("name: %s\n", rc == 0 ? "0" : strerror(errno));
		return 0;
	}
	/* Touched, so the bytes are the program's for any allocator. */
	if ((held = malloc(HELD)) == NULL)
		return 2;
	memset(held, 1, HELD);
	if ((cfg = jm4lw_config_new()) == NULL)
		return 2;
	if (jm4lw_config_set(cfg, "listen", "127.0.0.1:0", err, sizeof(err)) ||
	    jm4lw_config_set(cfg, "http_listen", "", err, sizeof(err))) {
		fprintf(stderr, "config: %s\n", err);
		return 2;
	}
	rc = strcmp(argv[1], "new") == 0 ? try_new(cfg) : try_thread(cfg);
	jm4lw_config_free(cfg);
	free(held);
	return rc;
}

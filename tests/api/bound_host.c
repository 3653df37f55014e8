/*
 * bound_host: an embedding host on its own event_base that says where the
 * module listens, for tests/api/bound.sh (what the
 * module reports is what it does). It keeps the configuration's defaults,
 * http_listen = 127.0.0.1:9182 included, and binds the words on
 * 127.0.0.1:0:
 *
 *	bound_host words   never calls jm4lw_http_listen()
 *	bound_host http    also jm4lw_http_listen(m, "127.0.0.1:0")
 *
 * It prints "words=ADDR" (jm4lw_bound_addr) and, for each HTTP listener
 * jm4lw_http_bound_addr() gives, "http=ADDR", then "ready", and serves
 * until stdin closes.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "jm4lw.h"

/* stdin closed (or failed): the test is done with us. */
static void on_stdin(evutil_socket_t fd, short what, void *arg)
{
	char buf[64];

	(void)what;
	if (read(fd, buf, sizeof(buf)) <= 0)
		event_base_loopbreak(arg);
}

/* Print every listener the module reports, one face after the other. */
static void print_bound(const struct jm4lw *m)
{
	char addr[128];
	int i;

	for (i = 0; jm4lw_bound_addr(m, i, addr, sizeof(addr)) == 0; i++)
		printf("words=%s\n", addr);
	for (i = 0; jm4lw_http_bound_addr(m, i, addr, sizeof(addr)) == 0; i++)
		printf("http=%s\n", addr);
	printf("ready\n");
	fflush(stdout);
}

/* Start the module as the mode asks, report, serve until stdin closes. */
int main(int argc, char **argv)
{
	struct event_base *base;
	struct jm4lw_config *cfg;
	struct event *in;
	struct jm4lw *m;
	char err[512] = "";
	int http, rc = 1;

	if (argc != 2 ||
	    (strcmp(argv[1], "words") && strcmp(argv[1], "http"))) {
		fprintf(stderr, "usage: bound_host words|http\n");
		return 2;
	}
	http = strcmp(argv[1], "http") == 0;
	if ((cfg = jm4lw_config_new()) == NULL ||
	    (base = event_base_new()) == NULL)
		return 2;
	m = jm4lw_new(base, cfg, err, sizeof(err));
	jm4lw_config_free(cfg); /* the module keeps a copy */
	if (m == NULL) {
		fprintf(stderr, "bound_host: %s\n", err);
		goto done;
	}
	if (jm4lw_listen(m, "127.0.0.1:0") == -1 ||
	    (http && jm4lw_http_listen(m, "127.0.0.1:0") == -1)) {
		fprintf(stderr, "bound_host: cannot listen\n");
		goto done;
	}
	in =
	    event_new(base, STDIN_FILENO, EV_READ | EV_PERSIST, on_stdin, base);
	if (in == NULL || event_add(in, NULL) == -1)
		goto done;
	print_bound(m);
	rc = event_base_dispatch(base) == -1;
	event_free(in);
done:
	jm4lw_free(m);
	event_base_free(base);
	return rc;
}

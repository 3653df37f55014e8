/*
 * What the test hosts that embed the module on a loop of their own do
 * alike (see host.h).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "host.h"

/* JM4LW_CONF's file, if set, then dump_dir. */
static struct jm4lw_config *host_config(const char *name, const char *dump_dir)
{
	const char *conf = getenv("JM4LW_CONF");
	struct jm4lw_config *cfg;
	char err[256];

	if ((cfg = jm4lw_config_new()) == NULL) {
		fprintf(stderr, "%s: no memory\n", name);
		return NULL;
	}
	if ((conf != NULL && *conf != '\0' &&
	        jm4lw_config_load(cfg, conf, err, sizeof(err)) == -1) ||
	    jm4lw_config_set(cfg, "dump_dir", dump_dir, err, sizeof(err)) ==
	        -1) {
		fprintf(stderr, "%s: %s\n", name, err);
		jm4lw_config_free(cfg);
		return NULL;
	}
	return cfg;
}

/* The module, bound for words and HTTP; freed again if it cannot listen. */
static struct jm4lw *host_module(struct event_base *base,
    struct jm4lw_config *cfg, const char *name, char *addr, char *haddr,
    size_t len)
{
	struct jm4lw *module;
	char err[256];

	module = jm4lw_new(base, cfg, err, sizeof(err));
	jm4lw_config_free(cfg);
	if (module == NULL) {
		fprintf(stderr, "%s: %s\n", name, err);
		return NULL;
	}
	if (jm4lw_listen(module, "127.0.0.1:0") == -1 ||
	    jm4lw_bound_addr(module, 0, addr, len) == -1 ||
	    jm4lw_http_listen(module, "127.0.0.1:0") == -1 ||
	    jm4lw_http_bound_addr(module, 0, haddr, len) == -1) {
		jm4lw_free(module);
		return NULL;
	}
	return module;
}

/* SIGTERM: leave the loop. */
static void host_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	event_base_loopexit(arg, NULL);
}

/* The SIGTERM event, added. */
struct event *host_sigterm(struct event_base *base)
{
	struct event *ev = evsignal_new(base, SIGTERM, host_signal, base);

	if (ev != NULL && evsignal_add(ev, NULL) == -1) {
		event_free(ev);
		ev = NULL;
	}
	return ev;
}

/* The command line, SIGPIPE, the configuration, the loop, the module. */
struct jm4lw *host_start(int argc, char *argv[], const char *name,
    struct event_base **base, char *addr, char *haddr, size_t len)
{
	struct jm4lw_config *cfg;

	*base = NULL;
	if (argc != 2) {
		fprintf(stderr, "usage: %s DUMP_DIR\n", name);
		exit(2);
	}
	/* A server's first line: a peer's reset must not end it (evhttp
	 * writes without MSG_NOSIGNAL; jm4lw_http_listen says so). */
	signal(SIGPIPE, SIG_IGN);
	if ((cfg = host_config(name, argv[1])) == NULL)
		exit(2);
	if ((*base = event_base_new()) == NULL) {
		jm4lw_config_free(cfg);
		return NULL;
	}
	return host_module(*base, cfg, name, addr, haddr, len);
}

/* The addresses, for the test to read, then the loop until SIGTERM. */
int host_serve(struct event_base *base, const char *addr, const char *haddr)
{
	printf("listening on %s\nhttp on %s\n", addr, haddr);
	fflush(stdout);
	return event_base_dispatch(base) == 0 ? 0 : 1;
}

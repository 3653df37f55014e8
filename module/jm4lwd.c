/*
 * jm4lwd: the module as a standalone daemon. Only this file does
 * process-level things: options, signals, exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "config_struct.h"
#include "http.h"
#include "jm4lw.h"
#include "module.h"
#include "ops.h"
#include "proto.h"
#include "reason.h"
#include "server.h"
#include "view.h"

struct daemon {
	struct event_base *base;
	struct jm4lw *m;
	const char *conf_file;  /* -f */
	const char *listen_opt; /* -l, wins over the file */
	const char *http_opt;   /* -W, likewise; "" turns HTTP off */
	const char *dir_opt;    /* -D, wins over the file */
	int verbose;
};

/* Log sink: "jm4lwd: msg" on stderr, debug lines only with -v. */
static void daemon_log(int level, const char *msg, void *arg)
{
	const struct daemon *d = arg;

	if (level <= JM4LW_LOG_INFO || d->verbose)
		fprintf(stderr, "jm4lwd: %s\n", msg);
}

/* Print usage to @p f. */
static void usage(FILE *f)
{
	fprintf(f,
	    "usage: jm4lwd [-nv] [-f file] [-l addr:port[,addr:port...]] "
	    "[-W addr:port] [-D dump_dir]\n"
	    "       jm4lwd -h | --help | -V | --version\n"
	    "  -f file   read the configuration from file (INI)\n"
	    "  -l addr   listen here instead of the configured addresses\n"
	    "  -W addr   serve HTTP here instead of http_listen (\"\": none)\n"
	    "  -D dir    write heap profiles here instead of dump_dir\n"
	    "  -n        check the configuration, print \"configuration OK\"\n"
	    "  -v        log every connection\n"
	    "  -h, --help     this help\n"
	    "  -V, --version  print \"jm4lwd VERSION\"\n"
	    "An address that cannot be bound is one line on stderr and exit "
	    "status 1.\n"
	    "Run with MALLOC_CONF=prof:true,prof_active:false so jmep/jmfp "
	    "work.\njm4lwd %s, jemalloc %s\n",
	    JM4LW_VERSION, core_jemalloc()->version);
}

/* Build the configuration: defaults, then the file, then -l and -D. */
static int daemon_config(const struct daemon *d, struct jm4lw_config *cfg,
    char *err, size_t errlen)
{
	char why[256];

	config_defaults(cfg);
	if (d->conf_file != NULL &&
	    jm4lw_config_load(cfg, d->conf_file, err, errlen) == -1)
		return -1;
	if (d->listen_opt != NULL &&
	    jm4lw_config_set(cfg, "listen", d->listen_opt, why, sizeof(why))) {
		snprintf(err, errlen, "-l %s: %s", d->listen_opt, why);
		return -1;
	}
	if (d->http_opt != NULL &&
	    jm4lw_config_set(cfg, "http_listen", d->http_opt, why,
	        sizeof(why))) {
		snprintf(err, errlen, "-W %s: %s", d->http_opt, why);
		return -1;
	}
	if (d->dir_opt != NULL &&
	    jm4lw_config_set(cfg, "dump_dir", d->dir_opt, why, sizeof(why))) {
		snprintf(err, errlen, "-D %s: %s", d->dir_opt, why);
		return -1;
	}
	return jm4lw_config_check(cfg, err, errlen);
}

/* SIGHUP: re-read the file; on any error keep what is running. */
static void daemon_reload(struct daemon *d)
{
	struct jm4lw_config cfg;
	char err[512];

	if (daemon_config(d, &cfg, err, sizeof(err)) == -1 ||
	    jm4lw_reconfigure(d->m, &cfg, err, sizeof(err)) == -1) {
		fprintf(stderr,
		    "jm4lwd: reload failed, configuration unchanged: %s\n",
		    err);
		return;
	}
	fprintf(stderr, "jm4lwd: configuration reloaded%s\n",
	    d->conf_file ? "" : " (no -f file: defaults and options)");
}

/* SIGTERM/SIGINT end the loop; SIGHUP reloads. */
static void daemon_signal(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	(void)what;
	if (sig == SIGHUP) {
		daemon_reload(d);
		return;
	}
	fprintf(stderr, "jm4lwd: %s, exiting\n", strsignal((int)sig));
	event_base_loopexit(d->base, NULL);
}

/* Say up front when jmfp/jmep cannot work, not at the first dump. */
static void daemon_check_prof(void)
{
	char why[256];
	enum prof_state s;
	int e;

	if ((s = core_prof_state(core_jemalloc(), &e)) != PROF_READY)
		fprintf(stderr,
		    "jm4lwd: %s; jmfp/jmep will answer with an "
		    "error\n",
		    core_prof_reason(s, e, &proto_hints, why, sizeof(why)));
}

/*
 * --list WHAT, not in the usage: the tables the docs must agree with, as
 * this build has them, for the docs' test (tests/docs/tables.sh) and
 * tests/fuzz/gen_corpus.py. "words": name, "mutates" or "readonly", help;
 * "routes": path, help ("-": none), as the index shows it; "formats":
 * name, file suffix, Content-Type. Tab-separated, in the tables' order.
 * 0, or 2 for an unknown WHAT.
 */
static int daemon_list(const char *what)
{
	const struct proto_word *w;
	const struct http_route *r;
	const char *h;
	char help[512];
	int v;

	if (strcmp(what, "words") == 0) {
		for (w = proto_words; w->name != NULL; w++)
			printf("%s\t%s\t%s\n", w->name,
			    (w->flags & PROTO_F_MUTATES) ? "mutates"
			                                 : "readonly",
			    w->help);
	} else if (strcmp(what, "routes") == 0) {
		for (r = http_routes; r->path != NULL; r++)
			printf("%s\t%s\n", r->path,
			    (h = http_route_help(r, help, sizeof(help))) != NULL
			        ? h
			        : "-");
	} else if (strcmp(what, "formats") == 0) {
		for (v = 0; v < DUMP_VIEW_COUNT; v++)
			if (views[v].name != NULL)
				printf("%s\t%s\t%s\n", views[v].name,
				    views[v].suffix, views[v].ctype);
	} else {
		fprintf(stderr,
		    "jm4lwd: --list takes words, routes or formats, not "
		    "\"%s\"\n",
		    what);
		return 2;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char *argv[])
{
	struct daemon d = {0};
	struct jm4lw_config cfg;
	struct event *sigs[3] = {NULL};
	const int signums[3] = {SIGTERM, SIGINT, SIGHUP};
	char err[512];
	bool check_only = false;
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"list", required_argument, NULL, 'L'},
	    {NULL, 0, NULL, 0},
	};
	int ch, i, status = 1;

	while ((ch = getopt_long(argc, argv, "f:l:W:D:nvhV", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'f':
			d.conf_file = optarg;
			break;
		case 'l':
			d.listen_opt = optarg;
			break;
		case 'W':
			d.http_opt = optarg;
			break;
		case 'D':
			d.dir_opt = optarg;
			break;
		case 'n':
			check_only = true;
			break;
		case 'v':
			d.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("jm4lwd %s\n", JM4LW_VERSION);
			return 0;
		case 'L':
			return daemon_list(optarg);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "jm4lwd: unexpected argument \"%s\"\n",
		    argv[optind]);
		usage(stderr);
		return 2;
	}
	if (daemon_config(&d, &cfg, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (check_only) {
		printf("configuration OK\n");
		return 0;
	}

	/* Belt and braces: the module never raises SIGPIPE anyway. */
	signal(SIGPIPE, SIG_IGN);
	if ((d.base = event_base_new()) == NULL) {
		fprintf(stderr, "jm4lwd: cannot create event base\n");
		return 1;
	}
	if ((d.m = jm4lw_new(d.base, &cfg, err, sizeof(err))) == NULL) {
		fprintf(stderr, "jm4lwd: %s\n", err);
		goto done;
	}
	/* jm4lwd is the reference host: it profiles itself, words and all. */
	server_keep_sampling(d.m);
	jm4lw_set_log(d.m, daemon_log, &d);
	jm4lw_set_log_level(d.m, d.verbose ? JM4LW_LOG_DEBUG : JM4LW_LOG_INFO);
	if (jm4lw_listen(d.m, NULL) == -1 || jm4lw_http_listen(d.m, NULL) == -1)
		goto done;
	for (i = 0; i < 3; i++) {
		sigs[i] = evsignal_new(d.base, signums[i], daemon_signal, &d);
		if (sigs[i] == NULL || evsignal_add(sigs[i], NULL) == -1) {
			fprintf(stderr, "jm4lwd: cannot handle signal %d\n",
			    signums[i]);
			goto done;
		}
	}
	daemon_check_prof();
	if (event_base_dispatch(d.base) == -1) {
		fprintf(stderr, "jm4lwd: event loop failed\n");
		goto done;
	}
	status = 0;
done:
	for (i = 0; i < 3; i++)
		if (sigs[i] != NULL)
			event_free(sigs[i]);
	jm4lw_free(d.m);
	event_base_free(d.base);
	return status;
}

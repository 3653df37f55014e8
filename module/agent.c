/*
 * libjm4lw_agent.so: LD_PRELOAD it into an unmodified program that runs on
 * jemalloc and the program answers the four-letter words on a port of its
 * own, served from a thread of the module's.
 *
 *	JM4LW_LISTEN   listen address(es), default 127.0.0.1:9181
 *	JM4LW_HTTP_LISTEN  HTTP address(es), default 127.0.0.1:9182; empty:
 *	               none. With JM4LW_LISTEN set and this not, no HTTP
 *	               unless JM4LW_CONF's file names http_listen: a port
 *	               moved is a port asked for, and the agent never binds
 *	               a second default one nobody asked for.
 *	JM4LW_CONF     a jm4lwd.conf-style file (the variables below win)
 *	JM4LW_DUMP_DIR where jmfp writes (default /tmp)
 *	JM4LW_QUIET    set: log only errors
 *	JM4LW_PROF_GDUMP  1: the user asked for prof_gdump and jm4lw-run held
 *	               it off; the agent turns prof.gdump on once the
 *	               module can rate-limit its dumps
 *
 * Every failure (no jemalloc in the process or a malloc that is not its, a
 * bad config, the port taken) is one line on stderr and then nothing: the
 * host program must keep working whatever happens here. We never exit()
 * and never touch signals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_struct.h"
#include "jedumps.h"
#include "jedumps_shell.h"
#include "jm4lw.h"
#include "module.h"
#include "ops.h"

static struct jm4lw_thread *agent;

/* Agent log lines: tagged, so they stand out in the host's stderr. */
static void agent_log(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= JM4LW_LOG_WARN ||
	    (level == JM4LW_LOG_INFO && getenv("JM4LW_QUIET") == NULL))
		fprintf(stderr, "jm4lw agent[%ld]: %s\n", (long)getpid(), msg);
}

/* Did the user ask for prof_gdump, which jm4lw-run held off? jemalloc
 * writes a dump at every new high of its mapped memory, and a program's
 * start is all new highs: under prof_gdump:true from the first malloc,
 * redis writes 30-odd dumps in its first 35 ms, before any constructor
 * of ours could hold them to dump_min_interval. */
static int agent_gdump_wanted(void)
{
	const char *want = getenv("JM4LW_PROF_GDUMP");

	return want != NULL && strcmp(want, "1") == 0;
}

/* The setup hook, before the module's thread runs: the module turns
 * prof.gdump on at its loop's first turn, when it watches dump_dir and
 * its rate limit takes the first dump and holds the rest. */
static void agent_setup(struct jm4lw *m, void *arg)
{
	(void)arg;
	if (agent_gdump_wanted())
		jedumps_gdump_handover(m);
}

/* Runs before the host's main(): start the thread or stay out of the way. */
__attribute__((constructor)) static void agent_start(void)
{
	struct jm4lw_config cfg;
	const char *conf = getenv("JM4LW_CONF");
	const char *listen = getenv("JM4LW_LISTEN");
	const char *dir = getenv("JM4LW_DUMP_DIR");
	const char *http = getenv("JM4LW_HTTP_LISTEN");
	struct jm4lw_thread_opts opts = {JM4LW_THREAD_OPTS_INIT,
	    .log = agent_log, .setup = agent_setup};
	const struct core_ops *ops;
	char err[512];

	/* No jemalloc, or one the program does not malloc from: serving it
	 * would report an idle heap as the program's. */
	if ((ops = core_allocator(err, sizeof(err))) == NULL) {
		agent_log(JM4LW_LOG_WARN, err, NULL);
		return;
	}
	config_defaults(&cfg);
	/* The words' port moved and HTTP not asked for: none (the file
	 * below may still name one). */
	if (listen != NULL && listen[0] != '\0' && http == NULL)
		cfg.http_listen[0] = '\0';
	if (conf != NULL && conf[0] != '\0' &&
	    jm4lw_config_load(&cfg, conf, err, sizeof(err)) == -1)
		goto fail;
	if (listen != NULL && listen[0] != '\0' &&
	    jm4lw_config_set(&cfg, "listen", listen, err, sizeof(err)) == -1)
		goto fail;
	if (dir != NULL && dir[0] != '\0' &&
	    jm4lw_config_set(&cfg, "dump_dir", dir, err, sizeof(err)) == -1)
		goto fail;
	/* Set and empty turns HTTP off. */
	if (http != NULL &&
	    jm4lw_config_set(&cfg, "http_listen", http, err, sizeof(err)) == -1)
		goto fail;
	agent = jm4lw_start_thread_ex(&cfg, &opts, err, sizeof(err));
	if (agent == NULL)
		goto fail;
	return;
fail:
	agent_log(JM4LW_LOG_ERR, err, NULL);
	agent_log(JM4LW_LOG_ERR,
	    "not starting; the program runs on without "
	    "the admin port",
	    NULL);
	/* Without the module, the prof_gdump the user asked for still. */
	if (agent_gdump_wanted())
		(void)core_jemalloc_gdump(ops, 1);
}

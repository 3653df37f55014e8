/*
 * The module's assembler: jm4lw_new() builds core, the four-letter-word
 * face, the job service, listeners and timers; jm4lw_reconfigure() and
 * jm4lw_free() change and take them down. It calls down into those files
 * and none of them calls it: the faces reach the jobs (jobs.c) and the log
 * (log.c) below them.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "config.h"
#include "config_struct.h"
#include "conn.h"
#include "core.h"
#include "dumps.h"
#include "sweep.h"
#include "http.h"
#include "jedumps_shell.h"
#include "jobs.h"
#include "life.h"
#include "listen.h"
#include "log.h"
#include "memwatch.h"
#include "module.h"
#include "ops.h"
#include "recentjob.h"
#include "server.h"
#include "snapown.h"
#include "timers.h"
#include "util.h"

/* srvr's Mode: line ("thread" in thread mode; "standalone" else). */
void server_set_mode(struct jm4lw *m, const char *mode)
{
	m->core.mode = mode;
}

/* jm4lwd: its loop's allocations stay sampled (they are the host's). */
void server_keep_sampling(struct jm4lw *m)
{
	m->sampled = 1;
}

/* The module's staging directory removed, and no dump staged after: the
 * process is exiting without jm4lw_free() (thread.c). */
void server_unstage(struct jm4lw *m)
{
	jobs_unstage(m);
}

/*
 * Every module not yet freed, so that jm4lw_free() and jm4lw_add_word()
 * on a handle already freed say so instead of touching freed memory (a
 * magic field would have to be read in the freed block, which is itself
 * the use-after-free ASan reports). A later module may get the same
 * address: this catches a double free, not every dangling pointer.
 */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct jm4lw *live;

/* @p m is a module now. */
static void live_add(struct jm4lw *m)
{
	pthread_mutex_lock(&live_lock);
	m->live_next = live;
	live = m;
	pthread_mutex_unlock(&live_lock);
}

/* Is @p m a live module? With @p take, it stops being one. Only live
 * modules' memory is read. */
static int live_find(const struct jm4lw *m, int take)
{
	struct jm4lw **pp;
	int found = 0;

	pthread_mutex_lock(&live_lock);
	for (pp = &live; *pp != NULL; pp = &(*pp)->live_next)
		if (*pp == m) {
			if (take)
				*pp = m->live_next;
			found = 1;
			break;
		}
	pthread_mutex_unlock(&live_lock);
	return found;
}

/* A handle that is not a live module: one line on stderr (there is no
 * module to log through), and the call does nothing. */
static void live_refuse(const char *call, const void *m)
{
	fprintf(stderr,
	    "jm4lw: %s(%p): not a live module (freed already?); ignored\n",
	    call, m);
}

/* @p word as a log line can show it: at most 8 bytes, each byte that is
 * not printable ASCII a '?', so a bad name never garbles the line. */
static void word_shown(const char *word, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len && i < 8 && word[i] != '\0'; i++)
		buf[i] = word[i] >= ' ' && word[i] <= '~' ? word[i] : '?';
	buf[i] = '\0';
}

/* A host's word on the four-letter-word face. Each refusal has its own
 * line in jm4lw_errmsg() (and the log); replacing a built-in succeeds,
 * logged at INFO and left in jm4lw_errmsg() so a host can tell. */
JM4LW_API int jm4lw_add_word(struct jm4lw *m, const char *word,
    jm4lw_word_fn fn, void *arg, int flags)
{
	char shown[16];
	int rv = -1;

	if (m == NULL)
		return -1;
	if (!live_find(m, 0)) {
		live_refuse("jm4lw_add_word", m);
		return -1;
	}
	module_clear_error(m);
	module_enter(m); /* the log may free the module: see life.c */
	if (word == NULL) {
		module_fail(m, "add_word: word is NULL");
		goto out;
	}
	word_shown(word, shown, sizeof(shown));
	if (!proto_word_valid(word)) {
		module_fail(m,
		    "add_word \"%s\": a word is exactly 4 printable ASCII "
		    "bytes, no space or comma",
		    shown);
		goto out;
	}
	if (fn == NULL) {
		module_fail(m,
		    "add_word %s: fn is NULL (a word needs a handler)", word);
		goto out;
	}
	if (!proto_host_known(&m->proto, word) &&
	    m->proto.nhost == PROTO_HOST_MAX) {
		module_fail(m, "add_word %s: the table is full (%d host words)",
		    word, PROTO_HOST_MAX);
		goto out;
	}
	if (proto_lookup(word) != NULL && !proto_host_known(&m->proto, word)) {
		snprintf(m->errmsg, sizeof(m->errmsg),
		    "add_word %s: replaces the built-in word", word);
		log_msg(m, JM4LW_LOG_INFO, "%s", m->errmsg);
	}
	if (proto_add_word(&m->proto, word, fn, arg, flags) == -1) {
		module_fail(m, "add_word %s: refused", word); /* not reached */
		goto out;
	}
	rv = 0;
out:
	module_leave(m);
	return rv;
}

/*
 * Take the module down: the job out ends (finished within the timeout,
 * else cancelled with its staging directory removed), its waiter and
 * every peer get what is theirs, then the faces, listeners, timers and
 * the worker. A free asked for from the host's log callback meanwhile is
 * this one. 0, or -1 if the worker still runs the cancelled job.
 */
static int module_destroy(struct jm4lw *m)
{
	int rv, was;

	m->depth = 1;
	m->free_requested = 1;
	if ((m->base_gone = jobs_base_gone(m)) != 0)
		log_msg(m, JM4LW_LOG_ERR,
		    "jm4lw_free: the event_base was freed before the module "
		    "(call jm4lw_free first: jm4lw.h); the module's events "
		    "are left unfreed rather than touch the freed base");
	was = module_unsampled_enter(m);
	rv = jobs_settle(m, m->free_timeout_ms);
	memwatch_free(m);
	while (!TAILQ_EMPTY(&m->conns))
		conn_finish(TAILQ_FIRST(&m->conns));
	jedumps_free(m);
	if (!m->base_gone) {
		http_free(m);
		listen_free(m);
		timers_free(m);
	}
	jobs_free(m);
	module_unsampled_leave(m, was);
	free(m);
	return rv;
}

/* life.c's way to module_destroy(), at the end of the last callback. */
static void module_destroy_deferred(struct jm4lw *m)
{
	(void)module_destroy(m);
}

/* jm4lw_new() with the caller's sampling off (module_unsampled_enter). */
/* The staging directories processes now gone left in dump_dir (killed
 * before they could remove theirs), swept at start rather than at this
 * process's first dump: dumps_sweep_stages' rules (ours, untouched for
 * minutes, of a pid that is gone), in a dump_dir that is ours. */
static void server_sweep_stages(struct jm4lw *m)
{
	char dir[PATH_MAX], why[512];

	if (core_dump_dir_safe(m->cfg.dump_dir, dir, sizeof(dir), why,
	        sizeof(why)) == 0)
		dumps_sweep_stages(m->cfg.dump_prefix, dir, &m->core.log);
}

/*
 * recent_max into jemalloc (experimental.prof_recent.alloc_max), at start
 * and on reload, when it differs. On the loop: a read, and a write only
 * when the value changes, whose cost is freeing the records past the new
 * cap under prof_recent_alloc_mtx, tens of microseconds for a thousand.
 * A failure is a log line, never a refused configuration: jmrc says what
 * it can show.
 */
static void module_recent_max(struct jm4lw *m)
{
	char why[256];

	if (core_recent_max(&m->core, m->cfg.recent_max, why, sizeof(why)) ==
	    -1)
		log_msg(m, JM4LW_LOG_WARN, "%s", why);
}

static struct jm4lw *module_new(struct event_base *base,
    const struct jm4lw_config *cfg, char *err, size_t errlen)
{
	const struct core_ops *ops;
	struct core_policy pol;
	struct jm4lw *m;

	if (base == NULL) {
		snprintf(err, errlen, "no event_base");
		return NULL;
	}
	if (config_check_module(cfg, err, errlen) == -1 ||
	    config_policy(cfg, &pol, err, errlen) == -1)
		return NULL;
	/* Figures of a jemalloc the program does not malloc from would be
	 * false: refuse instead. */
	if ((ops = core_allocator(err, errlen)) == NULL)
		return NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return NULL;
	}
	if (acl_parse(cfg->allow_from, m->acl, &m->nacl, err, errlen) == -1) {
		free(m);
		return NULL;
	}
	if ((m->jobs = jobs_new()) == NULL) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		free(m);
		return NULL;
	}
	m->base = base;
	m->destroy = module_destroy_deferred;
	m->cfg = *cfg;
	memcpy(m->listen_req, cfg->listen, sizeof(m->listen_req));
	m->cfg.listen[0] = '\0'; /* nothing bound yet */
	memcpy(m->http_listen_req, cfg->http_listen,
	    sizeof(m->http_listen_req));
	m->cfg.http_listen[0] = '\0'; /* a host may never serve HTTP */
	TAILQ_INIT(&m->conns);
	core_init(&m->core, ops, &m->cfg, &pol);
	log_init(m);
	proto_init(&m->proto, &m->core, jobs_dumper(m->jobs));
	m->proto.nconf = config_conf_keys(m->proto.conf, PROTO_CONF_MAX);
	if (jobs_init(m, ops) == -1 || listen_init(m) == -1) {
		snprintf(err, errlen, "cannot create the module's events");
		(void)module_destroy(m);
		return NULL;
	}
	{
		struct timers t;
		if (timers_build(m, &m->cfg, &pol, NULL, &t) == -1) {
			snprintf(err, errlen, "cannot create the dump timers");
			(void)module_destroy(m);
			return NULL;
		}
		timers_commit(m, &t);
	}
	module_recent_max(m);
	memwatch_apply(m);
	if (jedumps_apply(m, NULL) == -1) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		(void)module_destroy(m);
		return NULL;
	}
	server_sweep_stages(m);
	live_add(m);
	return m;
}

/* A module on @p base; the caller's thread samples none of its setup. */
JM4LW_API struct jm4lw *jm4lw_new(struct event_base *base,
    const struct jm4lw_config *cfg, char *err, size_t errlen)
{
	const struct core_ops *ops = core_jemalloc();
	struct ctl_mib mib = {.state = 0};
	struct jm4lw *m;
	int was = ops != NULL ? ctl_thread_sampling(ops, &mib, 0) : -1;

	m = module_new(base, cfg, err, errlen);
	if (was == 1)
		(void)ctl_thread_sampling(ops, &mib, 1);
	return m;
}

/* Build everything the new configuration needs, then commit it all: a
 * failure leaves the old configuration wholly in force. */
static int module_reconfigure(struct jm4lw *m, const struct jm4lw_config *cfg,
    char *err, size_t errlen)
{
	struct cidr acl[ACL_MAX];
	struct core_policy pol;
	struct jm4lw_config old;
	struct timers t;
	int nacl, was;

	if (config_check_module(cfg, err, errlen) == -1 ||
	    config_policy(cfg, &pol, err, errlen) == -1 ||
	    acl_parse(cfg->allow_from, acl, &nacl, err, errlen) == -1)
		return -1;
	was = module_unsampled_enter(m);
	if (timers_build(m, cfg, &pol, &m->cfg, &t) == -1) {
		module_unsampled_leave(m, was);
		snprintf(err, errlen, "cannot create the dump timers");
		return -1;
	}
	module_unsampled_leave(m, was);
	module_enter(m); /* the log may free the module: see life.c */
	old = m->cfg;
	m->cfg = *cfg;
	/* Listeners stay as they are; conf keeps showing what is bound. */
	memcpy(m->cfg.listen, old.listen, sizeof(m->cfg.listen));
	memcpy(m->cfg.http_listen, old.http_listen, sizeof(m->cfg.http_listen));
	/* Until HTTP is served, jm4lw_http_listen(m, NULL) binds the newest
	 * configuration's list, as it always has. */
	if (m->http == NULL)
		memcpy(m->http_listen_req, cfg->http_listen,
		    sizeof(m->http_listen_req));
	http_reconfigure(m);
	memcpy(m->acl, acl, sizeof(acl));
	m->nacl = nacl;
	m->core.pol = pol;
	timers_commit(m, &t);
	/* snapshot_count 0: the ring's memory goes now (with a job out,
	 * when it ends: core_job_done). */
	if (!core_job_busy(&m->core))
		dumper_snaps_apply(jobs_dumper(m->jobs), m->cfg.snapshot_count);
	was = module_unsampled_enter(m);
	memwatch_apply(m);
	module_unsampled_leave(m, was);
	(void)jedumps_apply(m, &old); /* its lines say what went wrong */
	listen_check_allow(m);
	module_recent_max(m);
	module_leave(m);
	return 0;
}

/* module_reconfigure(), its reason both in @p err and in jm4lw_errmsg(). */
JM4LW_API int jm4lw_reconfigure(struct jm4lw *m, const struct jm4lw_config *cfg,
    char *err, size_t errlen)
{
	char why[sizeof(m->errmsg)] = "";

	if (m == NULL) {
		snprintf(err, errlen, "no module");
		return -1;
	}
	module_clear_error(m);
	if (module_reconfigure(m, cfg, why, sizeof(why)) == 0)
		return 0;
	snprintf(err, errlen, "%s", why);
	module_fail(m, "reconfigure: %s", why);
	return -1;
}

/* Free the module now, or, inside one of its callbacks, when the
 * outermost returns (life.c). */
JM4LW_API int jm4lw_free_wait(struct jm4lw *m, int timeout_ms)
{
	if (m == NULL)
		return 0;
	if (!live_find(m, 1)) {
		live_refuse("jm4lw_free", m);
		return -1;
	}
	m->free_timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
	if (m->depth > 0) {
		m->free_requested = 1;
		return -1; /* not done yet: cannot say it finished */
	}
	return module_destroy(m);
}

/* Name the calling thread for heap profiles (ctl_thread_name). */
JM4LW_API int jm4lw_thread_name(const char *name)
{
	const struct core_ops *ops;
	char err[256];
	int e;

	if ((ops = core_allocator(err, sizeof(err))) == NULL)
		e = ENOSYS;
	else
		e = ctl_thread_name(ops, name);
	if (e == 0)
		return 0;
	errno = e;
	return -1;
}

/* jm4lw_free_wait() without waiting: a dump under way is cancelled. */
JM4LW_API void jm4lw_free(struct jm4lw *m)
{
	(void)jm4lw_free_wait(m, 0);
}

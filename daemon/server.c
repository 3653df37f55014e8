/*
 * The module: the public API over core and the four-letter-word face,
 * logging, and the dump jobs the worker runs. Connections are in conn.c,
 * listeners in listen.c, the schedule's timers in timers.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "config.h"
#include "http.h"
#include "module.h"
#include "worker.h"

/* Default log sink: one line on stderr, debug chatter left out. */
static void log_stderr(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= JM4LW_LOG_INFO)
		fprintf(stderr, "jm4lw: %s\n", msg);
}

/* Format a log line and hand it to the host's callback. */
void log_msg(struct jm4lw *m, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (level > m->log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	m->logfn(level, buf, m->logarg);
}

/*
 * A log line about a peer, "ADDR: ...". The address is formatted only
 * when the line is wanted: per connection, inet_ntop() and snprintf() cost
 * more instructions than the rest of a ruok in user space.
 */
static void vlog_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
    const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
static void vlog_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
    const char *fmt, va_list ap)
{
	char peer[64], buf[448];

	if (level > m->log_max)
		return;
	addr_format(sa, peer, sizeof(peer));
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_msg(m, level, "%s: %s", peer, buf);
}

/* A log line about the peer at @p sa. */
void log_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_peer(m, level, sa, fmt, ap);
	va_end(ap);
}

/* A log line about a connection's peer. */
void conn_log(struct conn *c, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_peer(c->m, level, (const struct sockaddr *)&c->sa, fmt, ap);
	va_end(ap);
}

/*
 * In embedded mode the loop is the host's thread, whose allocations
 * jemalloc samples: the module's own (a connection, a reply) would show up
 * in the profiles it writes, and a sampled one waits on jemalloc's
 * profiling locks while the worker dumps. So the thread's sampling is off
 * while a callback of ours runs, and back as the host had it after.
 * Thread mode's loop is ours and samples nothing anyway.
 */
int module_unsampled_enter(struct jm4lw *m)
{
	return m->own_loop || m->sampled ? -1
	                                 : core_thread_sampling(&m->core, 0);
}

/* Give the host's thread its sampling back. */
void module_unsampled_leave(struct jm4lw *m, int was)
{
	if (was == 1)
		(void)core_thread_sampling(&m->core, 1);
}

/* core's log sink: straight to the host's. */
static void module_core_log(void *arg, int level, const char *msg)
{
	struct jm4lw *m = arg;

	if (level <= m->log_max)
		m->logfn(level, msg, m->logarg);
}

/* A word's dump job ended: its peer gets the reply (a view's body
 * first, the file is the connection's now, then what the word says). */
void conn_answer_job(struct jm4lw *m, void *arg, struct dump_result *r)
{
	struct conn *c = arg;
	struct proto_out out = {.write = conn_write_cb, .arg = c};

	(void)m;
	if (r->status == DUMP_OK && r->body) {
		conn_write_file(c, r->body_fd, r->body_len);
		r->body = 0;
		r->body_fd = -1;
	}
	proto_render_dump(&out, r);
	conn_send(c);
}

/* A scheduled dump's outcome: the log. */
static void module_log_dump(struct jm4lw *m, const char *why,
    const struct dump_result *r)
{
	if (r->status == DUMP_OK) {
		m->core.st.dumps_scheduled++;
		log_msg(m, JM4LW_LOG_INFO, "%s dump: %s", why, r->path);
	} else
		log_msg(m, JM4LW_LOG_WARN, "%s dump: %s", why, r->reason);
}

/* On the loop: the worker finished the job. */
static void module_job_done(void *arg, void *job)
{
	struct jm4lw *m = arg;
	struct job *j = job;
	struct job_waiter w = m->waiter;
	int was = module_unsampled_enter(m);

	m->waiter.answer = NULL;
	core_dump_done(&m->core, &j->res);
	/* A peer that left meanwhile is not answered; the dump stays. */
	if (w.answer != NULL)
		w.answer(m, w.arg, &j->res);
	else if (j->scheduled)
		module_log_dump(m, m->job_why, &j->res);
	dump_result_release(&j->res);
	job_release(j);
	module_unsampled_leave(m, was);
}

void module_job_forget(struct jm4lw *m, void *arg)
{
	if (m->waiter.answer != NULL && m->waiter.arg == arg)
		m->waiter.answer = NULL; /* the job ends without a reader */
}

/* The worker's end of a job. */
static void module_job_run(void *job)
{
	job_run(job);
}

/* A job whose module is gone: the staging directory and the block. */
static void module_job_orphan(void *job)
{
	struct module_job *mj = job;

	dump_result_release(&mj->job.res);
	job_release(&mj->job);
	dumper_fini(&mj->dumper);
	free(mj);
}

/* Hand the prepared job to the worker, or run it here without one. */
static void module_submit(struct jm4lw *m, const struct job_waiter *w)
{
	struct job *j = &m->mj->job;

	m->waiter = w != NULL ? *w : (struct job_waiter){0};
	if (worker_submit(m->worker, module_job_run, j) == 0)
		return;
	/* No thread to be had: the job still happens, on the loop. */
	log_msg(m, JM4LW_LOG_WARN,
	    "worker thread unavailable (%s); working on the event loop",
	    strerror(errno));
	job_run(j);
	module_job_done(m, j);
}

/*
 * A dump for waiter @p w (a peer's word, an HTTP request), or with @p w
 * NULL for the schedule @p why. Admission happens here on the loop (one
 * at a time, dump_min_interval), the dump on the worker; a refusal is
 * answered at once.
 */
void module_dump(struct jm4lw *m, const struct job_waiter *w, const char *why,
    const char *word, enum dump_view view, int with_base)
{
	if (core_dump_admit(&m->core, w == NULL ? NULL : word, &m->refusal) ==
	    -1) {
		if (w != NULL)
			w->answer(m, w->arg, &m->refusal);
		else
			module_log_dump(m, why, &m->refusal);
		return;
	}
	core_dump_prepare(&m->core, &m->mj->job, &m->mj->dumper, w == NULL,
	    view, with_base);
	m->job_why = why;
	module_submit(m, w);
}

void module_render(struct jm4lw *m, const struct job_waiter *w,
    const char *name, const char *base, enum dump_view view)
{
	if (core_render_admit(&m->core, &m->mj->job, &m->mj->dumper, name, base,
	        view, &m->refusal) == -1) {
		w->answer(m, w->arg, &m->refusal);
		return;
	}
	module_submit(m, w);
}

void module_symbols(struct jm4lw *m, const struct job_waiter *w,
    const char *addrs, size_t len)
{
	if (core_symbols_admit(&m->core, &m->mj->job, &m->mj->dumper, addrs,
	        len, &m->refusal) == -1) {
		w->answer(m, w->arg, &m->refusal);
		return;
	}
	module_submit(m, w);
}

void server_set_mode(struct jm4lw *m, const char *mode)
{
	m->core.mode = mode;
}

void server_keep_sampling(struct jm4lw *m)
{
	m->sampled = 1;
}

JM4LW_API int jm4lw_add_word(struct jm4lw *m, const char *word,
    jm4lw_word_fn fn, void *arg, int flags)
{
	if (proto_add_word(&m->proto, word, fn, arg, flags) == -1) {
		log_msg(m, JM4LW_LOG_ERR, "add_word: %s",
		    fn == NULL ? "no handler"
		               : "want 4 printable bytes, at most 64 words");
		return -1;
	}
	return 0;
}

/* jm4lw_new() with the caller's sampling off (module_unsampled_enter). */
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
	if ((ops = core_jemalloc()) == NULL) {
		snprintf(err, errlen,
		    "this process does not run on jemalloc "
		    "(no mallctl symbol)");
		return NULL;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->mj = calloc(1, sizeof(*m->mj))) == NULL) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		free(m);
		return NULL;
	}
	if (acl_parse(cfg->allow_from, m->acl, &m->nacl, err, errlen) == -1) {
		free(m->mj);
		free(m);
		return NULL;
	}
	m->base = base;
	m->cfg = *cfg;
	memcpy(m->listen_req, cfg->listen, sizeof(m->listen_req));
	m->cfg.listen[0] = '\0'; /* nothing bound yet */
	m->logfn = log_stderr;
	m->log_max = JM4LW_LOG_INFO;
	TAILQ_INIT(&m->conns);
	core_init(&m->core, ops, &m->cfg, &pol);
	m->core.log.fn = module_core_log;
	m->core.log.arg = m;
	proto_init(&m->proto, &m->core, &m->mj->dumper);
	if ((m->worker = worker_new(base, ops, module_job_done, m)) == NULL ||
	    listen_init(m) == -1) {
		snprintf(err, errlen, "cannot create the module's events");
		jm4lw_free(m);
		return NULL;
	}
	{
		struct timers t;
		if (timers_build(m, &m->cfg, &pol, NULL, &t) == -1) {
			snprintf(err, errlen, "cannot create the dump timers");
			jm4lw_free(m);
			return NULL;
		}
		timers_commit(m, &t);
	}
	return m;
}

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

JM4LW_API void jm4lw_set_log(struct jm4lw *m, jm4lw_log_fn fn, void *arg)
{
	m->logfn = fn != NULL ? fn : log_stderr;
	m->logarg = fn != NULL ? arg : NULL;
	m->log_max = fn != NULL ? JM4LW_LOG_DEBUG : JM4LW_LOG_INFO;
}

JM4LW_API void jm4lw_set_log_level(struct jm4lw *m, int max_level)
{
	m->log_max = max_level;
}

/* Build everything the new configuration needs, then commit it all: a
 * failure leaves the old configuration wholly in force. */
JM4LW_API int jm4lw_reconfigure(struct jm4lw *m, const struct jm4lw_config *cfg,
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
	old = m->cfg;
	m->cfg = *cfg;
	/* Listeners stay as they are; conf keeps showing what is bound. */
	memcpy(m->cfg.listen, old.listen, sizeof(m->cfg.listen));
	if (m->http != NULL)
		memcpy(m->cfg.http_listen, old.http_listen,
		    sizeof(m->cfg.http_listen));
	http_reconfigure(m);
	memcpy(m->acl, acl, sizeof(acl));
	m->nacl = nacl;
	m->core.pol = pol;
	timers_commit(m, &t);
	listen_check_allow(m);
	return 0;
}

JM4LW_API void jm4lw_free(struct jm4lw *m)
{
	if (m == NULL)
		return;
	while (!TAILQ_EMPTY(&m->conns))
		conn_close(TAILQ_FIRST(&m->conns));
	http_free(m);
	listen_free(m);
	timers_free(m);
	/* A dump still running keeps its block until it ends. */
	if (!worker_free(m->worker, module_job_orphan) && m->mj != NULL)
		module_job_orphan(m->mj);
	free(m);
}

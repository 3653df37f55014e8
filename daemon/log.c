/*
 * The module's log: the host's sink (or stderr's), its level, and lines
 * about peers. Below every other file of the shell: the faces, listeners,
 * jobs and the assembler log through here, and it calls none of them.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"
#include "module.h"

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

/* A public call failed: keep its line for jm4lw_errmsg() whatever the log
 * level, and log it as an error. */
void module_fail(struct jm4lw *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->errmsg, sizeof(m->errmsg), fmt, ap);
	va_end(ap);
	log_msg(m, JM4LW_LOG_ERR, "%s", m->errmsg);
}

/* A public call starts afresh: "" until it fails. */
void module_clear_error(struct jm4lw *m)
{
	m->errmsg[0] = '\0';
}

/* The last failure's line, sqlite-style; "" when none, and for NULL. */
JM4LW_API const char *jm4lw_errmsg(const struct jm4lw *m)
{
	return m != NULL ? m->errmsg : "";
}

/*
 * A log line about a peer, "ADDR: ...". The address is formatted only
 * when the line is wanted: per connection, inet_ntop() and snprintf() cost
 * more instructions than the rest of a ruok in user space.
 */
void vlog_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
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

/* core's log sink: straight to the host's. */
static void log_core(void *arg, int level, const char *msg)
{
	struct jm4lw *m = arg;

	if (level <= m->log_max)
		m->logfn(level, msg, m->logarg);
}

/* A new module logs to stderr at INFO until the host says otherwise, and
 * core's lines go the same way (after core_init(), which clears them). */
void log_init(struct jm4lw *m)
{
	m->logfn = log_stderr;
	m->logarg = NULL;
	m->log_max = JM4LW_LOG_INFO;
	m->core.log.fn = log_core;
	m->core.log.arg = m;
}

/* The host's sink; NULL gives stderr back (at INFO). */
JM4LW_API void jm4lw_set_log(struct jm4lw *m, jm4lw_log_fn fn, void *arg)
{
	if (m == NULL)
		return;
	m->logfn = fn != NULL ? fn : log_stderr;
	m->logarg = fn != NULL ? arg : NULL;
	m->log_max = fn != NULL ? JM4LW_LOG_DEBUG : JM4LW_LOG_INFO;
}

/* Lines above @p max_level are not even formatted. */
JM4LW_API void jm4lw_set_log_level(struct jm4lw *m, int max_level)
{
	if (m == NULL)
		return;
	m->log_max = max_level;
}

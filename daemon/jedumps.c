/*
 * jemalloc's own dumps, the loop's side: prof.prefix pointed into
 * dump_dir at start and at each reload (core_jemalloc_prefix), each file
 * jemalloc closes there noticed and handed to the worker as a job_adopt
 * job, and prof_gdump held to one dump per dump_min_interval.
 *
 * Noticing: inotify on dump_dir, IN_CLOSE_WRITE. It costs one descriptor
 * and no wake-up while nothing happens (a periodic scan would wake an idle
 * module and still have to guess when a file is whole). jemalloc writes a
 * dump in place, creat() then write()s then close() (src/prof_sys.c,
 * prof_dump_open/prof_dump_close), so a reader could meet half a profile;
 * IN_CLOSE_WRITE comes after that close(), when the file is whole, so no
 * wait for a stable size is needed. Our own dumps come in by rename()
 * (IN_MOVED_TO) and are not seen here; nor are other processes' (another
 * pid in the name): jmls and retention count those, but they are theirs
 * to index.
 */
#include <sys/inotify.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cause.h"
#include "config_struct.h"
#include "core.h"
#include "dumps.h"
#include "jedumps.h"
#include "jedumps_shell.h"
#include "job.h"
#include "jobs.h"
#include "life.h"
#include "log.h"
#include "module.h"

/* Dumps noticed and not yet adopted at most; beyond, the oldest is left
 * to retention and jmlk, which index what is missing. */
#define JEDUMPS_PENDING_MAX 64

/* How soon to look again when the worker was busy with another job. */
#define JEDUMPS_RETRY_MS 250

struct jedumps {
	struct jm4lw *m;
	int set;             /* we pointed prof.prefix into dir */
	char dir[PATH_MAX];  /* dump_dir resolved, while set */
	int ifd, wd;         /* inotify and its watch on dir, or -1 */
	struct event *ev;    /* ifd readable */
	struct event *retry; /* the worker was busy */
	struct event *gdump; /* prof.gdump back on */
	int gdump_off;       /* we turned it off; gdump turns it on */
	int gdump_give;      /* turn prof.gdump on at the loop's first turn */
	struct event *say;   /* the start's line, on the loop's first turn */
	char line[CORE_PATH_MAX + 256];
	int line_level;
	char *path[JEDUMPS_PENDING_MAX];
	int cause[JEDUMPS_PENDING_MAX];
	unsigned n;
};

/* Forget the dumps noticed and not adopted. */
static void pending_clear(struct jedumps *j)
{
	while (j->n > 0)
		free(j->path[--j->n]);
}

/* The oldest dump noticed, off the list (the caller frees it). */
static char *pending_pop(struct jedumps *j, int *cause)
{
	char *p = j->path[0];

	*cause = j->cause[0];
	j->n--;
	memmove(j->path, j->path + 1, j->n * sizeof(j->path[0]));
	memmove(j->cause, j->cause + 1, j->n * sizeof(j->cause[0]));
	return p;
}

/* Hand the oldest dump noticed to the worker, or look again in a moment
 * if it is busy: adoption waits for nobody, so it never refuses a word. */
static void jedumps_next(struct jedumps *j)
{
	struct timeval tv = {.tv_usec = JEDUMPS_RETRY_MS * 1000};
	struct jm4lw *m = j->m;
	char *path;
	int cause;

	if (j->n == 0 || jobs_closing(m) || m->free_requested)
		return;
	if (!core_job_busy(&m->core)) {
		path = pending_pop(j, &cause);
		module_job(m, NULL,
		    &(struct job_req){.kind = &job_adopt,
		        .why = cause_name(cause),
		        .cause = (enum dump_cause)cause,
		        .name = path});
		free(path);
	}
	if (j->n > 0 && j->retry != NULL)
		evtimer_add(j->retry, &tv);
}

/* The retry timer fired. */
static void jedumps_retry(evutil_socket_t fd, short what, void *arg)
{
	struct jedumps *j = arg;

	(void)fd;
	(void)what;
	module_enter(j->m);
	jedumps_next(j);
	module_leave(j->m);
}

/* dump_min_interval after a prof_gdump dump: prof.gdump on again. */
static void jedumps_gdump_on(evutil_socket_t fd, short what, void *arg)
{
	struct jedumps *j = arg;

	(void)fd;
	(void)what;
	if (j->gdump_off)
		(void)core_jemalloc_gdump(j->m->core.ops, 1);
	j->gdump_off = 0;
}

/*
 * A prof_gdump dump appeared: a process whose peak grows in small steps
 * (a cache filling) writes one at every new high, a whole profile each.
 * Hold prof.gdump off for dump_min_interval, as our own dumps are held;
 * the next dump after that is the high reached by then. Only a prof.gdump
 * the host turned on is switched: it was on, or this file would not be.
 */
static void jedumps_gdump_seen(struct jedumps *j)
{
	struct timeval tv = {.tv_sec = j->m->cfg.dump_min_interval};

	if (j->gdump_off || j->m->cfg.dump_min_interval == 0 ||
	    j->gdump == NULL)
		return;
	if (core_jemalloc_gdump(j->m->core.ops, 0) != 1)
		return; /* the host turned it off itself meanwhile */
	j->gdump_off = 1;
	j->m->core.st.gdump_paused++;
	evtimer_add(j->gdump, &tv);
}

/* The line of jm4lw_new's apply, once the loop runs: by then the host
 * has set its log (jm4lw_set_log comes after jm4lw_new). */
static void jedumps_say(evutil_socket_t fd, short what, void *arg)
{
	struct jedumps *j = arg;

	(void)fd;
	(void)what;
	module_enter(j->m);
	if (j->line[0] != '\0')
		log_msg(j->m, j->line_level, "%s", j->line);
	j->line[0] = '\0';
	if (j->gdump_give) {
		j->gdump_give = 0;
		if (core_jemalloc_gdump(j->m->core.ops, 1) == -1)
			log_msg(j->m, JM4LW_LOG_WARN,
			    "prof_gdump: cannot turn prof.gdump on (is "
			    "profiling on, prof:true?)");
	}
	module_leave(j->m);
}

void jedumps_gdump_handover(struct jm4lw *m)
{
	struct jedumps *j = m->jedumps;

	if (j == NULL || j->say == NULL) {
		(void)core_jemalloc_gdump(m->core.ops, 1);
		return;
	}
	j->gdump_give = 1;
	event_active(j->say, EV_TIMEOUT, 0);
}

/* Is @p name one of jemalloc's dumps by this process? Its cause, or -1. */
static int jedumps_ours(const struct jm4lw *m, const char *name)
{
	size_t n = strlen(m->cfg.dump_prefix);
	int cause = dumps_cause(m->cfg.dump_prefix, name);

	if (cause < 0 || !causes[cause].jemalloc)
		return -1;
	/* dumps_cause checked "<prefix>.<digits>.": the pid. */
	return strtol(name + n + 1, NULL, 10) == (long)getpid() ? cause : -1;
}

/* A dump noticed: to adopt, after those before it. */
static void jedumps_notice(struct jedumps *j, const char *name, int cause)
{
	char path[PATH_MAX + NAME_MAX + 2];
	char *p;

	if (cause == CAUSE_GDUMP)
		jedumps_gdump_seen(j);
	if (snprintf(path, sizeof(path), "%s/%s", j->dir, name) >=
	        (int)sizeof(path) ||
	    (p = strdup(path)) == NULL)
		return;
	if (j->n == JEDUMPS_PENDING_MAX) {
		int c;
		free(pending_pop(j, &c));
	}
	j->path[j->n] = p;
	j->cause[j->n++] = cause;
}

/* inotify says something: every event it has, then the next adoption. */
static void jedumps_read(evutil_socket_t fd, short what, void *arg)
{
	char buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	struct jedumps *j = arg;
	ssize_t len;
	char *p;
	int cause;

	(void)what;
	module_enter(j->m);
	while ((len = read(fd, buf, sizeof(buf))) > 0)
		for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_Q_OVERFLOW)
				log_msg(j->m, JM4LW_LOG_WARN,
				    "jemalloc's dumps: the kernel dropped "
				    "events; some are not adopted (jmls and "
				    "retention still count them)");
			/* dump_dir removed (or unmounted): the watch is gone;
			 * a reload that names a dump_dir watches again. */
			if (ev->wd == j->wd && (ev->mask & IN_IGNORED)) {
				log_msg(j->m, JM4LW_LOG_WARN,
				    "%s is gone: jemalloc's dumps are not "
				    "watched until a reload",
				    j->dir);
				j->wd = -1;
				j->dir[0] = '\0';
				continue;
			}
			if (ev->wd != j->wd || !(ev->mask & IN_CLOSE_WRITE) ||
			    ev->len == 0)
				continue;
			if ((cause = jedumps_ours(j->m, ev->name)) >= 0)
				jedumps_notice(j, ev->name, cause);
		}
	jedumps_next(j);
	module_leave(j->m);
}

/* Stop watching (another dump_dir, or none). */
static void jedumps_unwatch(struct jedumps *j)
{
	if (j->wd != -1)
		(void)inotify_rm_watch(j->ifd, j->wd);
	j->wd = -1;
	j->dir[0] = '\0';
	pending_clear(j);
}

/* Watch @p dir for jemalloc's dumps; a failure is one line: they are
 * still written there, listed and rotated, only not indexed at once. */
static void jedumps_watch(struct jedumps *j, const char *dir)
{
	struct jm4lw *m = j->m;

	if (j->wd != -1 && strcmp(j->dir, dir) == 0)
		return;
	jedumps_unwatch(j);
	if (j->ifd == -1) {
		if ((j->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1 ||
		    (j->ev = event_new(m->base, j->ifd, EV_READ | EV_PERSIST,
		         jedumps_read, j)) == NULL ||
		    event_add(j->ev, NULL) == -1)
			goto fail;
	}
	if ((j->wd = inotify_add_watch(j->ifd, dir, IN_CLOSE_WRITE)) == -1)
		goto fail;
	snprintf(j->dir, sizeof(j->dir), "%s", dir);
	return;
fail:
	log_msg(m, JM4LW_LOG_WARN,
	    "jemalloc's dumps in %s are not watched (%s): jmls and retention "
	    "count them, jmlk indexes them when asked",
	    dir, strerror(errno));
}

int jedumps_apply(struct jm4lw *m, const struct jm4lw_config *old)
{
	char dir[PATH_MAX], line[CORE_PATH_MAX + 256];
	const struct jm4lw_config *cfg = &m->cfg;
	struct jedumps *j = m->jedumps;
	enum jedumps_prefix st;
	int level;

	if (j == NULL) {
		if ((j = calloc(1, sizeof(*j))) == NULL)
			return -1;
		j->m = m;
		j->ifd = j->wd = -1;
		if ((j->retry = evtimer_new(m->base, jedumps_retry, j)) ==
		        NULL ||
		    (j->gdump = evtimer_new(m->base, jedumps_gdump_on, j)) ==
		        NULL ||
		    (j->say = evtimer_new(m->base, jedumps_say, j)) == NULL) {
			m->jedumps = j;
			jedumps_free(m);
			return -1;
		}
		m->jedumps = j;
	}
	/* A reload that changes none of ours changes nothing, no line,
	 * unless the watch was lost (dump_dir removed). */
	if (old != NULL && strcmp(old->dump_dir, cfg->dump_dir) == 0 &&
	    strcmp(old->dump_prefix, cfg->dump_prefix) == 0 &&
	    old->jemalloc_dumps == cfg->jemalloc_dumps &&
	    (!j->set || j->wd != -1))
		return 0;
	st = core_jemalloc_prefix(m->core.ops, cfg, m->core.pol.jemalloc_dumps,
	    j->set, dir, sizeof(dir), line, sizeof(line));
	level = st == JEDUMPS_UNSAFE || st == JEDUMPS_FAILED ? JM4LW_LOG_WARN
	                                                     : JM4LW_LOG_INFO;
	if (old == NULL && line[0] != '\0') {
		snprintf(j->line, sizeof(j->line), "%s", line);
		j->line_level = level;
		event_active(j->say, EV_TIMEOUT, 0);
	} else if (line[0] != '\0')
		log_msg(m, level, "%s", line);
	j->set = st == JEDUMPS_SET;
	if (j->set)
		jedumps_watch(j, dir);
	else {
		jedumps_unwatch(j);
		/* Not ours any more: prof.gdump as the host had it. */
		if (j->gdump_off) {
			evtimer_del(j->gdump);
			jedumps_gdump_on(-1, 0, j);
		}
	}
	return 0;
}

void jedumps_free(struct jm4lw *m)
{
	struct jedumps *j = m->jedumps;

	if (j == NULL)
		return;
	/* prof.gdump as the host left it. prof.prefix stays in dump_dir:
	 * prof_final's dump at exit comes after the module is gone, and
	 * belongs there with the rest. */
	if (j->gdump_off)
		(void)core_jemalloc_gdump(m->core.ops, 1);
	if (!m->base_gone) {
		if (j->ev != NULL)
			event_free(j->ev);
		if (j->retry != NULL)
			event_free(j->retry);
		if (j->gdump != NULL)
			event_free(j->gdump);
		if (j->say != NULL)
			event_free(j->say);
	}
	if (j->ifd != -1)
		close(j->ifd);
	pending_clear(j);
	free(j);
	m->jedumps = NULL;
}

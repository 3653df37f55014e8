/*
 * The dump schedule's timers: dump_interval and the dump_on_growth check.
 * A timer exists only while its setting is on, so an unscheduled module
 * never wakes up; the dumps go through the same admission and worker as
 * jmfp (module_job()), the policy is core's.
 */
#include <errno.h>
#include <string.h>

#include <event2/event.h>

#include "config_struct.h"
#include "core.h"
#include "history.h"
#include "job.h"
#include "jobs.h"
#include "life.h"
#include "log.h"
#include "module.h"
#include "ops.h"
#include "schedule.h"
#include "timers.h"

/* dump_interval fired. */
static void timers_dump_tick(evutil_socket_t fd, short what, void *arg)
{
	int was;

	(void)fd;
	(void)what;
	module_enter(arg);
	was = module_unsampled_enter(arg);
	module_job(arg, NULL,
	    &(struct job_req){.kind = &job_dump,
	        .why = "interval",
	        .answer = DUMP_ANSWER_PATH,
	        .cause = CAUSE_SCHEDULE});
	module_unsampled_leave(arg, was);
	module_leave(arg);
}

/* growth_check_interval fired: look at stats.allocated. */
static void timers_growth_tick(evutil_socket_t fd, short what, void *arg)
{
	struct jm4lw *m = arg;
	int was;

	(void)fd;
	(void)what;
	module_enter(m);
	was = module_unsampled_enter(m);
	if (core_growth_due(&m->core))
		module_job(m, NULL,
		    &(struct job_req){.kind = &job_dump,
		        .why = "growth",
		        .answer = DUMP_ANSWER_PATH,
		        .cause = CAUSE_GROWTH});
	module_unsampled_leave(m, was);
	module_leave(m);
}

/* history_interval fired: one row of figures into the ring. A few
 * mallctls and an epoch, ~10 us (BENCHMARKS.md): cheap enough for the
 * loop, and a row read on the worker would be late by a dump. */
static void timers_history_tick(evutil_socket_t fd, short what, void *arg)
{
	struct jm4lw *m = arg;

	(void)fd;
	(void)what;
	core_history_sample(&m->core);
}

/* snapshot_interval fired: a profile snapshot into the worker's ring,
 * only while prof.active is true (one mallctl otherwise: inactive
 * profiling costs no dump) and the worker is free (a busy one skips a
 * snapshot rather than queue or log). */
static void timers_snap_tick(evutil_socket_t fd, short what, void *arg)
{
	struct jm4lw *m = arg;
	int was, on = 0;

	(void)fd;
	(void)what;
	if (core_job_busy(&m->core) ||
	    ctl_bool(m->core.ops, "prof.active", &on) != 0 || !on)
		return;
	module_enter(m);
	was = module_unsampled_enter(m);
	module_job(m, NULL,
	    &(struct job_req){.kind = &job_snap, .why = "snapshot"});
	module_unsampled_leave(m, was);
	module_leave(m);
}

/* A new persistent timer every @p seconds, or NULL. */
static struct event *timers_every(struct jm4lw *m, unsigned seconds,
    event_callback_fn fn)
{
	struct timeval tv = {.tv_sec = seconds};
	struct event *ev;

	if ((ev = event_new(m->base, -1, EV_PERSIST, fn, m)) == NULL)
		return NULL;
	if (event_add(ev, &tv) == -1) {
		event_free(ev);
		return NULL;
	}
	return ev;
}

/*
 * The timers @p cfg asks for, built but not yet in force. @p old is the
 * configuration running now (NULL at start): a timer whose setting did
 * not change keeps running, or reloading more often than dump_interval
 * would mean no dump ever comes. We are on the loop's thread, so a timer
 * built here cannot fire before timers_commit() or timers_discard().
 */
int timers_build(struct jm4lw *m, const struct jm4lw_config *cfg,
    const struct core_policy *pol, const struct jm4lw_config *old,
    struct timers *t)
{
	memset(t, 0, sizeof(*t));
	t->keep_dump = old != NULL && old->dump_interval == cfg->dump_interval;
	t->keep_growth = old != NULL &&
	    old->dump_on_growth.bytes == cfg->dump_on_growth.bytes &&
	    old->dump_on_growth.pct == cfg->dump_on_growth.pct &&
	    old->growth_check_interval == cfg->growth_check_interval;
	if (!t->keep_dump && cfg->dump_interval > 0 &&
	    (t->dump = timers_every(m, cfg->dump_interval, timers_dump_tick)) ==
	        NULL)
		return -1;
	if (!t->keep_growth && (pol->growth_bytes != 0 || pol->growth_pct) &&
	    (t->growth = timers_every(m, cfg->growth_check_interval,
	         timers_growth_tick)) == NULL) {
		timers_discard(t);
		return -1;
	}
	t->keep_snap = old != NULL &&
	    old->snapshot_interval == cfg->snapshot_interval &&
	    (old->snapshot_count == 0) == (cfg->snapshot_count == 0);
	if (!t->keep_snap && cfg->snapshot_count > 0 &&
	    cfg->snapshot_interval > 0 &&
	    (t->snap = timers_every(m, cfg->snapshot_interval,
	         timers_snap_tick)) == NULL) {
		timers_discard(t);
		return -1;
	}
	/* The history's ring is sized at commit; its timer is built here. */
	t->hist_points = cfg->history_points;
	t->hist_interval = cfg->history_interval;
	t->keep_hist = old != NULL &&
	    old->history_interval == cfg->history_interval &&
	    old->history_points == cfg->history_points;
	if (!t->keep_hist && cfg->history_points > 0 &&
	    cfg->history_interval > 0 &&
	    (t->hist = timers_every(m, cfg->history_interval,
	         timers_history_tick)) == NULL) {
		timers_discard(t);
		return -1;
	}
	return 0;
}

/* Put built timers in force, in place of the ones they replace. */
void timers_commit(struct jm4lw *m, struct timers *t)
{
	if (!t->keep_dump) {
		if (m->dump_timer != NULL)
			event_free(m->dump_timer);
		m->dump_timer = t->dump;
	}
	if (!t->keep_growth) {
		if (m->growth_timer != NULL)
			event_free(m->growth_timer);
		m->growth_timer = t->growth;
		if (t->growth != NULL)
			core_growth_baseline(&m->core);
	}
	if (!t->keep_snap) {
		if (m->snap_timer != NULL)
			event_free(m->snap_timer);
		m->snap_timer = t->snap;
		t->snap = NULL;
	}
	if (!t->keep_hist) {
		if (m->hist_timer != NULL)
			event_free(m->hist_timer);
		m->hist_timer = t->hist;
		t->hist = NULL;
		/* The ring is mapped once: a new size is a new ring. */
		if (history_setup(&m->core.hist, t->hist_points,
		        t->hist_interval) == -1) {
			log_msg(m, JM4LW_LOG_WARN,
			    "history off: cannot map %zu bytes: %s",
			    history_bytes(t->hist_points), strerror(errno));
			if (m->hist_timer != NULL)
				event_free(m->hist_timer);
			m->hist_timer = NULL;
		} else if (m->hist_timer != NULL)
			core_history_sample(&m->core); /* the first row now */
	}
}

/* Drop built timers that will not be used. */
void timers_discard(struct timers *t)
{
	if (t->dump != NULL)
		event_free(t->dump);
	if (t->growth != NULL)
		event_free(t->growth);
	if (t->hist != NULL)
		event_free(t->hist);
	if (t->snap != NULL)
		event_free(t->snap);
	t->dump = t->growth = t->hist = t->snap = NULL;
}

/* Stop every timer of the schedule. */
void timers_free(struct jm4lw *m)
{
	struct timers t = {.dump = m->dump_timer,
	    .growth = m->growth_timer,
	    .hist = m->hist_timer,
	    .snap = m->snap_timer};

	timers_discard(&t);
	m->dump_timer = m->growth_timer = m->hist_timer = m->snap_timer = NULL;
	history_free(&m->core.hist);
}

/*
 * The job service the faces and the schedule call down into: admission on
 * the loop, the hand-off to the worker, the waiters a job answers, and
 * the switch that keeps the module's own allocations on a host's thread
 * unsampled. It knows no face: a waiter is a callback and its argument.
 *
 * A kind that shares (job_kind.shares: the scrapers' pprof) is asked
 * the same question by many at once and again every interval, and a
 * scrape that is not 200 is a failed scrape. So a request of such a kind
 * gets, in this order: the newest body of its view when it is younger
 * than dump_min_interval (with its age); a place among the running job's
 * waiters when it asks the same (job_req_joins); a place in a queued
 * group of its question, started when the worker frees; or, past
 * scrape_waiters_max waiting or JOBS_QUEUED_MAX questions, a 503. A
 * thousand scrapers cost one dump per question and interval.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "ctl.h"
#include "dumper.h"
#include "job.h"
#include "jobs.h"
#include "life.h"
#include "log.h"
#include "module.h"
#include "ops.h"
#include "reason.h"
#include "result.h"
#include "util.h"
#include "worker.h"

/* A dump job and the state its dumps share, in one block the worker can
 * free on its own if the module goes first. */
struct module_job {
	struct job job; /* first: the worker hands back its address */
	struct dumper dumper;
};

/* Who wait for one job: a list that grows (scrapes share a job). */
struct job_waiters {
	struct job_waiter *w;
	unsigned n, cap;
};

/* Scrapes waiting for the worker behind another job: one group per
 * question (job_req_same), started in turn as the worker frees. */
#define JOBS_QUEUED_MAX 8
struct job_group {
	struct job_req req; /* its who, name and base point at the bufs */
	char who_buf[64];
	char name_buf[256], base_buf[256]; /* a kept dump's names */
	struct job_waiters ws;
};

/*
 * A difference over req.seconds (?seconds=N): its first dump as a job
 * (DUMP_ANSWER_DUMP, whose body is the dump), a timer on the loop for N s
 * while the worker serves others, then the second dump minus the first
 * as a job. Its own waiter stands in its jobs' lists; its requesters
 * wait here, and a request of the same question joins them.
 */
#define JOBS_DELTAS_MAX 4
struct job_delta {
	int used;
	int phase; /* 1 the first dump, 2 the wait, 3 the difference */
	struct job_req req;
	char who_buf[64];
	struct job_waiters ws;
	struct job_waiter self; /* in its jobs' waiters: jobs_delta_step */
	int base_fd;            /* the first dump, from phase 2 */
	struct event *timer;
	struct jm4lw *m;
};

/* A sharing kind's newest body per view (job_scrape's), for at most
 * dump_min_interval: the answer to the same request meanwhile. */
struct job_body {
	int have;
	int fd;
	size_t len;
	struct timespec at; /* CLOCK_MONOTONIC it was answered */
};

/* The kept bodies' slots: one a view, then a difference's first dump
 * (DUMP_ANSWER_DUMP); body_slot says which. */
#define JOBS_BODIES (DUMP_VIEW_COUNT + 1)

/* The service's state, m->jobs: no other file reads it. */
struct jobs {
	struct worker *worker;
	struct module_job *mj;      /* the one dump job */
	struct job_waiters waiters; /* who wait for the job, if anyone */
	struct job_group queued[JOBS_QUEUED_MAX]; /* sharing jobs to come */
	unsigned nqueued;
	struct job_body bodies[JOBS_BODIES];      /* newest shared bodies */
	struct job_delta deltas[JOBS_DELTAS_MAX]; /* ?seconds=N under way */
	struct event *bodies_timer; /* drops them at dump_min_interval */
	int jobs_closing;           /* jobs_settle: start nothing more */
	const char *job_why;        /* or the schedule that asked for it */
	struct dump_result refusal; /* a dump refused on the loop */
};

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

/* A scheduled dump's outcome: the log. */
static void module_log_dump(struct jm4lw *m, const char *why,
    const struct dump_result *r)
{
	if (r->status == DUMP_OK)
		m->core.st.dumps_scheduled++; /* its line is core_job_done's */
	else
		log_msg(m, JM4LW_LOG_WARN, "%s dump: %s", why, r->reason);
}

static void jobs_refuse(struct jm4lw *m, const struct job_waiter *w,
    enum core_reason why, int err, const char *line);

/* Seconds from @p a to now (CLOCK_MONOTONIC). */
static double jobs_age(const struct timespec *a)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - a->tv_sec) +
	    (double)(now.tv_nsec - a->tv_nsec) / 1e9;
}

/* Add @p w to @p ws: 0, or -1 when memory runs out. */
static int waiters_add(struct job_waiters *ws, const struct job_waiter *w)
{
	struct job_waiter *n;
	unsigned cap;

	if (ws->n == ws->cap) {
		cap = ws->cap != 0 ? ws->cap * 2 : 4;
		if ((n = realloc(ws->w, cap * sizeof(*n))) == NULL)
			return -1;
		ws->w = n;
		ws->cap = cap;
	}
	ws->w[ws->n++] = *w;
	return 0;
}

/* @p w waits in @p ws, or (no memory) is refused at once. */
static void waiters_join(struct jm4lw *m, struct job_waiters *ws,
    const struct job_waiter *w)
{
	if (waiters_add(ws, w) == -1)
		jobs_refuse(m, w, REASON_FAILED, ENOMEM, strerror(ENOMEM));
}

/* A request kept past its call (a queued group's, a delta's): @p src
 * into @p dst, its who copied into @p buf; no schedule's why. */
static void req_keep(struct job_req *dst, char *buf, size_t len,
    const struct job_req *src)
{
	*dst = *src;
	snprintf(buf, len, "%s", src->who != NULL ? src->who : "scrape");
	dst->who = buf;
	dst->why = NULL;
}

/* Take @p arg out of @p ws: it is gone and is not answered. */
static void waiters_forget(struct job_waiters *ws, void *arg)
{
	unsigned i;

	for (i = 0; i < ws->n; i++)
		if (ws->w[i].arg == arg)
			ws->w[i--] = ws->w[--ws->n];
}

/* Every request waiting: the running job's, the queued groups' and the
 * deltas'. */
static unsigned jobs_waiting(const struct jm4lw *m)
{
	unsigned n = m->jobs->waiters.n, i;

	for (i = 0; i < m->jobs->nqueued; i++)
		n += m->jobs->queued[i].ws.n;
	for (i = 0; i < JOBS_DELTAS_MAX; i++)
		n += m->jobs->deltas[i].used ? m->jobs->deltas[i].ws.n : 0;
	return n;
}

/* Drop the kept bodies dump_min_interval old (@p all: every one), and
 * the newest dump with them (core_last_dump_expire), and look again when
 * the next of them comes of age. */
static void bodies_drop(struct jm4lw *m, int all)
{
	double min = (double)m->cfg.dump_min_interval, age;
	double next = core_last_dump_expire(&m->core, all);
	struct timeval tv;
	unsigned v;

	for (v = 0; v < JOBS_BODIES; v++) {
		if (!m->jobs->bodies[v].have)
			continue;
		age = jobs_age(&m->jobs->bodies[v].at);
		if (all || age >= min) {
			close(m->jobs->bodies[v].fd);
			m->jobs->bodies[v].have = 0;
		} else if (next < 0 || min - age < next)
			next = min - age;
	}
	if (next >= 0 && m->jobs->bodies_timer != NULL) {
		tv.tv_sec = (time_t)next;
		tv.tv_usec =
		    (suseconds_t)((next - (double)tv.tv_sec) * 1e6) + 1;
		evtimer_add(m->jobs->bodies_timer, &tv);
	}
}

/* The timer: no body is kept past dump_min_interval. */
static void bodies_expire(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	bodies_drop(arg, 0);
}

/* The slot of bodies[] for answer @p a with view @p v, or -1: answers
 * of neither kind are never shared. */
static int body_slot(enum dump_answer a, enum dump_view v)
{
	if (a == DUMP_ANSWER_DUMP)
		return DUMP_VIEW_COUNT;
	if (a != DUMP_ANSWER_VIEW || (unsigned)v >= DUMP_VIEW_COUNT)
		return -1;
	return (int)v;
}

/* Keep @p r's body as its view's newest, when it may answer again. */
static void body_keep(struct jm4lw *m, const struct job *j,
    const struct dump_result *r)
{
	struct job_body *b;
	int fd, slot;

	if (m->cfg.dump_min_interval == 0 || !j->kind->shares ||
	    j->seconds != 0 || j->with_base || r->status != DUMP_OK ||
	    !r->body || r->body_fd == -1 ||
	    (slot = body_slot(r->answer, r->view)) == -1)
		return;
	if ((fd = fd_again(r->body_fd)) == -1)
		return; /* the next scrape makes a dump, no worse */
	b = &m->jobs->bodies[slot];
	if (b->have)
		close(b->fd);
	b->have = 1;
	b->fd = fd;
	b->len = r->body_len;
	clock_gettime(CLOCK_MONOTONIC, &b->at);
	bodies_drop(m, 0); /* arms the timer */
}

/* @p req's view's newest body, if it is young enough, to @p w with its
 * age: 1 if answered. */
static int body_serve(struct jm4lw *m, const struct job_waiter *w,
    const struct job_req *req)
{
	struct job_body *b;
	struct dump_result *r;
	double age;
	int fd, slot;

	if (req->seconds != 0 || req->with_base ||
	    (slot = body_slot(req->answer, req->view)) == -1)
		return 0;
	b = &m->jobs->bodies[slot];
	if (!b->have ||
	    (age = jobs_age(&b->at)) >= (double)m->cfg.dump_min_interval)
		return 0;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return 0;
	if ((fd = fd_again(b->fd)) == -1) {
		free(r);
		return 0;
	}
	r->status = DUMP_OK;
	r->answer = req->answer;
	r->view = req->view;
	r->body = 1;
	r->body_fd = fd;
	r->body_len = b->len;
	r->aged = 1;
	r->age = (long)(age < 0 ? 0 : age);
	w->answer(m, w->arg, r);
	dump_result_release(r);
	free(r);
	return 1;
}

/* A refusal of a sharing request, at once: @p why and its line. */
static void jobs_refuse(struct jm4lw *m, const struct job_waiter *w,
    enum core_reason why, int err, const char *line)
{
	struct dump_result *r = &m->jobs->refusal;

	memset(r, 0, sizeof(*r));
	r->status = why == REASON_FAILED ? DUMP_FAILED : DUMP_REFUSED;
	r->why = why;
	r->err = err;
	r->body_fd = -1;
	r->retry_after = 1;
	snprintf(r->reason, sizeof(r->reason), "%s", line);
	w->answer(m, w->arg, r);
}

/* The too-many line: what waits, and the key that bounds it. */
static void jobs_crowded(struct jm4lw *m, const struct job_waiter *w,
    const struct job_req *req)
{
	char line[256];

	snprintf(line, sizeof(line),
	    "%s refused: %u requests already wait for profiles "
	    "(scrape_waiters_max %u, %u questions queued); retry in 1 s",
	    req->who != NULL ? req->who : "scrape", jobs_waiting(m),
	    m->cfg.scrape_waiters_max, m->jobs->nqueued);
	jobs_refuse(m, w, REASON_CROWDED, EAGAIN, line);
}

static int jobs_queue(struct jm4lw *m, const struct job_waiter *w,
    const struct job_req *req);

/*
 * A sharing request @p req for @p w: the newest body, the running job's
 * waiters, or a queued group (the file's opening says why). 1 when it is
 * answered or waits; 0: nothing to share, admit it as a job of its own.
 */
static int jobs_share(struct jm4lw *m, const struct job_waiter *w,
    const struct job_req *req)
{
	if (body_serve(m, w, req))
		return 1;
	if (!core_job_busy(&m->core))
		return 0;
	if (jobs_waiting(m) >= m->cfg.scrape_waiters_max) {
		jobs_crowded(m, w, req);
		return 1;
	}
	if (job_req_joins(&m->jobs->mj->job, req)) {
		waiters_join(m, &m->jobs->waiters, w);
		return 1;
	}
	return jobs_queue(m, w, req);
}

/* Point @p g's request at its own copies (who, a kept dump's names),
 * after the group was copied or moved. */
static void group_point(struct job_group *g)
{
	g->req.who = g->who_buf;
	if (g->req.name != NULL)
		g->req.name = g->name_buf;
	if (g->req.base != NULL)
		g->req.base = g->base_buf;
}

/* @p req for @p w waits its turn: with the queued group that asks the
 * same, else in a new one; refused when the queue is full. 1: answered
 * or waiting. */
static int jobs_queue(struct jm4lw *m, const struct job_waiter *w,
    const struct job_req *req)
{
	struct job_group *g = NULL;
	unsigned i;

	for (i = 0; i < m->jobs->nqueued && g == NULL; i++)
		if (job_req_same(&m->jobs->queued[i].req, req))
			g = &m->jobs->queued[i];
	if (g == NULL) {
		if (m->jobs->nqueued == JOBS_QUEUED_MAX) {
			jobs_crowded(m, w, req);
			return 1;
		}
		g = &m->jobs->queued[m->jobs->nqueued++];
		req_keep(&g->req, g->who_buf, sizeof(g->who_buf), req);
		/* A kept dump's names (the page's downloads, its growth)
		 * are the caller's: the group keeps its own copies. */
		if (req->name != NULL)
			snprintf(g->name_buf, sizeof(g->name_buf), "%s",
			    req->name);
		if (req->base != NULL)
			snprintf(g->base_buf, sizeof(g->base_buf), "%s",
			    req->base);
		group_point(g);
		/* A fresh list: a slot left by jobs_next held one that is
		 * some job's now. */
		g->ws = (struct job_waiters){0};
	}
	waiters_join(m, &g->ws, w);
	return 1;
}

/* Answer every waiter of @p ws with @p r, each with a descriptor of its
 * own on the body; the last takes the job's. @p ws is emptied first: an
 * answer may queue a new request. */
static void waiters_answer(struct jm4lw *m, struct job_waiters *ws,
    struct dump_result *r)
{
	struct job_waiter *w = ws->w;
	unsigned n = ws->n, cap = ws->cap, i;
	struct dump_result *c = NULL;

	/* Answers may add waiters (a keep-alive's next request): they go
	 * to a fresh list. */
	ws->w = NULL;
	ws->n = ws->cap = 0;
	for (i = 0; i < n; i++) {
		if (i + 1 == n || !r->body || r->body_fd == -1) {
			w[i].answer(m, w[i].arg, r);
			continue;
		}
		if (c == NULL && (c = malloc(sizeof(*c))) == NULL) {
			w[i].answer(m, w[i].arg, r); /* it takes the body */
			continue;
		}
		*c = *r;
		if ((c->body_fd = fd_again(r->body_fd)) == -1) {
			c->status = DUMP_FAILED;
			c->why = REASON_FAILED;
			c->body = 0;
			snprintf(c->reason, sizeof(c->reason),
			    "cannot share the profile: %s", strerror(errno));
		}
		w[i].answer(m, w[i].arg, c);
		dump_result_release(c);
	}
	free(c);
	if (ws->w == NULL) { /* none came: keep the array for the next job */
		ws->w = w;
		ws->cap = cap;
	} else
		free(w);
}

static void module_submit(struct jm4lw *m);
static void module_job_cancelled(struct dump_result *r, const char *who);

/* The next queued group's job, when the worker is free: each group is
 * one question, answered by a body still young enough or a job. */
static void jobs_next(struct jm4lw *m)
{
	struct job_group g;
	unsigned i;

	while (m->jobs->nqueued > 0 && !m->jobs->jobs_closing &&
	    !m->free_requested && !core_job_busy(&m->core)) {
		g = m->jobs->queued[0];
		memmove(&m->jobs->queued[0], &m->jobs->queued[1],
		    (m->jobs->nqueued - 1) * sizeof(m->jobs->queued[0]));
		m->jobs->nqueued--;
		/* Its list is g's now: the slot keeps no copy of it. */
		m->jobs->queued[m->jobs->nqueued].ws = (struct job_waiters){0};
		/* Moved: each group's strings are in its own bufs again. */
		group_point(&g);
		for (i = 0; i < m->jobs->nqueued; i++)
			group_point(&m->jobs->queued[i]);
		for (i = 0; i < g.ws.n;)
			if (body_serve(m, &g.ws.w[i], &g.req))
				g.ws.w[i] = g.ws.w[--g.ws.n];
			else
				break; /* none kept: none of the rest either */
		if (g.ws.n == 0) {
			free(g.ws.w);
			continue;
		}
		if (core_job_admit(&m->core, &m->jobs->mj->job,
		        &m->jobs->mj->dumper, &g.req,
		        &m->jobs->refusal) == -1) {
			waiters_answer(m, &g.ws, &m->jobs->refusal);
			free(g.ws.w);
			continue;
		}
		free(m->jobs->waiters.w);
		m->jobs->waiters = g.ws;
		m->jobs->job_why = NULL;
		module_submit(m);
	}
}

/* A delta is over: its fd, its timer's schedule, its slot. */
static void delta_end(struct job_delta *d)
{
	if (d->base_fd != -1)
		close(d->base_fd);
	d->base_fd = -1;
	if (d->timer != NULL && !d->m->base_gone)
		evtimer_del(d->timer);
	free(d->ws.w);
	d->ws.w = NULL;
	d->ws.n = d->ws.cap = 0;
	d->used = 0;
}

/* Answer a delta's requesters with @p r and end it. */
static void delta_answer(struct job_delta *d, struct dump_result *r)
{
	struct job_waiters ws = d->ws;

	d->ws = (struct job_waiters){0};
	delta_end(d);
	waiters_answer(d->m, &ws, r);
	free(ws.w);
}

/* The wait is over: the second dump, minus the first, as a job. */
static void delta_second(evutil_socket_t fd, short what, void *arg)
{
	struct job_delta *d = arg;
	struct job_req req = d->req;

	(void)fd;
	(void)what;
	d->phase = 3;
	req.has_base_fd = 1;
	req.base_fd = d->base_fd;
	module_job(d->m, &d->self, &req);
}

/* A job of delta @p arg ended: its first dump (keep it and wait) or the
 * difference (every requester's answer). */
static void delta_step(struct jm4lw *m, void *arg, struct dump_result *r)
{
	struct job_delta *d = arg;
	struct timeval tv = {.tv_sec = (time_t)d->req.seconds};

	if (d->phase != 1 || r->status != DUMP_OK || !r->body ||
	    r->body_fd == -1 || m->jobs->jobs_closing) {
		if (d->phase == 1 && r->status == DUMP_OK) {
			dump_result_release(r); /* the first dump, unused */
			module_job_cancelled(r, "heap profile difference");
		}
		delta_answer(d, r);
		return;
	}
	d->base_fd = r->body_fd; /* the first dump, sealed: ours now */
	r->body_fd = -1;
	r->body = 0;
	d->phase = 2;
	/* The wait holds nothing: no lock, no worker; the loop's timer,
	 * freed with the module (jobs_settle answers its requesters). */
	if (d->timer == NULL &&
	    (d->timer = evtimer_new(m->base, delta_second, d)) == NULL) {
		module_job_cancelled(r, "heap profile difference");
		delta_answer(d, r);
		return;
	}
	evtimer_add(d->timer, &tv);
}

/*
 * A difference over req->seconds for @p w: joins the delta of the same
 * question under way, else starts one with its first dump (a sharing job
 * like any: it may join a running one or wait its turn).
 */
static void jobs_delta(struct jm4lw *m, const struct job_waiter *w,
    const struct job_req *req)
{
	struct job_delta *d = NULL;
	struct job_req first;
	unsigned i;

	for (i = 0; i < JOBS_DELTAS_MAX; i++)
		if (m->jobs->deltas[i].used && m->jobs->deltas[i].phase < 3 &&
		    job_req_same(&m->jobs->deltas[i].req, req))
			d = &m->jobs->deltas[i];
	if (jobs_waiting(m) >= m->cfg.scrape_waiters_max) {
		jobs_crowded(m, w, req);
		return;
	}
	if (d != NULL) {
		waiters_join(m, &d->ws, w);
		return;
	}
	for (i = 0; i < JOBS_DELTAS_MAX && d == NULL; i++)
		if (!m->jobs->deltas[i].used)
			d = &m->jobs->deltas[i];
	if (d == NULL) {
		jobs_crowded(m, w, req);
		return;
	}
	d->used = 1;
	d->phase = 1;
	d->m = m;
	d->base_fd = -1;
	req_keep(&d->req, d->who_buf, sizeof(d->who_buf), req);
	d->self.answer = delta_step;
	d->self.arg = d;
	if (waiters_add(&d->ws, w) == -1) {
		d->used = 0;
		jobs_refuse(m, w, REASON_FAILED, ENOMEM, strerror(ENOMEM));
		return;
	}
	first = d->req;
	first.answer = DUMP_ANSWER_DUMP;
	first.seconds = 0;
	module_job(m, &d->self, &first);
}

/* On the loop: the worker finished the job. */
static void module_job_done(void *arg, void *job)
{
	struct jm4lw *m = arg;
	struct job *j = job;
	int was;

	module_enter(m); /* an answer (the log) may free the module */
	was = module_unsampled_enter(m);
	core_job_done(&m->core, j);
	bodies_drop(m, 0); /* the timer, for the dump it may have lent */
	body_keep(m, j, &j->res);
	/* A peer that left meanwhile is not answered; the dump stays. */
	if (m->jobs->waiters.n > 0)
		waiters_answer(m, &m->jobs->waiters, &j->res);
	else if (j->scheduled)
		module_log_dump(m, m->jobs->job_why, &j->res);
	dump_result_release(&j->res);
	job_release(j);
	jobs_next(m);
	module_unsampled_leave(m, was);
	module_leave(m);
}

/* @p arg, a waiter (a connection, a request), is gone: no answer. */
void module_job_forget(struct jm4lw *m, void *arg)
{
	unsigned i;

	waiters_forget(&m->jobs->waiters, arg); /* the job ends without it */
	for (i = 0; i < m->jobs->nqueued; i++)
		waiters_forget(&m->jobs->queued[i].ws, arg);
	for (i = 0; i < JOBS_DELTAS_MAX; i++)
		if (m->jobs->deltas[i].used)
			waiters_forget(&m->jobs->deltas[i].ws, arg);
}

/* The worker's end of a job. */
static void module_job_run(void *job)
{
	job_run(job);
}

/* The worker between jobs: one leak index (the block is the jobs'). */
static int module_job_idle(void *arg)
{
	return dumper_idle(&((struct module_job *)arg)->dumper);
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

/* Hand the prepared job, its waiters in m->jobs->waiters, to the worker, or
 * run it here without one. */
static void module_submit(struct jm4lw *m)
{
	struct job *j = &m->jobs->mj->job;

	/* prof.dump on the worker's thread at the host's priority. */
	j->locked.run = worker_locked;
	j->locked.ctx = m->jobs->worker;
	/* A person may ask again in a moment: the idle work waits. */
	worker_idle_after(m->jobs->worker,
	    m->jobs->waiters.n > 0 ? WORKER_IDLE_DELAY_MS : 0);
	if (worker_submit(m->jobs->worker, module_job_run, j) == 0)
		return;
	/* No thread to be had: the job still happens, on the loop. */
	log_msg(m, JM4LW_LOG_WARN,
	    "worker thread unavailable (%s); working on the event loop",
	    strerror(errno));
	j->locked.run = NULL;
	job_run(j);
	module_job_done(m, j);
}

/*
 * Does @p req wait for the running job rather than be refused as busy?
 * When that job is one nobody asked for (job_kind.unasked: jemalloc's
 * own dump taken in, or a profile snapshot): a person's word is not turned away
 * for our housekeeping, it runs next. Only a request that owns nothing
 * but its kind, its numbers and a kept dump's names (the group copies
 * them) can be kept past this call: a body or a detail points into the
 * caller's.
 */
static int jobs_behind_nobody(struct jm4lw *m, const struct job_req *req)
{
	const size_t max = sizeof(m->jobs->queued[0].name_buf);

	return core_job_busy(&m->core) && m->jobs->waiters.n == 0 &&
	    m->jobs->mj->job.kind->unasked &&
	    (req->name == NULL || strlen(req->name) < max) &&
	    (req->base == NULL || strlen(req->base) < max) &&
	    req->addrs == NULL && req->detail == NULL && !req->has_base_fd;
}

/*
 * The job @p req asks for, for waiter @p w (a peer's word, an HTTP
 * request), or with @p w NULL for the schedule req->why. Admission
 * happens here on the loop (one job at a time; a dump's
 * dump_min_interval), the job on the worker; a refusal is answered at
 * once.
 */
void module_job(struct jm4lw *m, const struct job_waiter *w,
    const struct job_req *req)
{
	if (w != NULL && req->kind != NULL && req->kind->shares) {
		/* A span asked for and no first dump yet: a delta. */
		if (req->seconds != 0 && !req->has_base_fd) {
			jobs_delta(m, w, req);
			return;
		}
		if (jobs_share(m, w, req))
			return;
	}
	if (w != NULL && jobs_behind_nobody(m, req) && jobs_queue(m, w, req))
		return;
	if (core_job_admit(&m->core, &m->jobs->mj->job, &m->jobs->mj->dumper,
	        req, &m->jobs->refusal) == -1) {
		if (w != NULL)
			w->answer(m, w->arg, &m->jobs->refusal);
		else
			module_log_dump(m, req->why, &m->jobs->refusal);
		return;
	}
	m->jobs->job_why = req->why;
	m->jobs->waiters.n = 0;
	if (w != NULL && waiters_add(&m->jobs->waiters, w) == -1) {
		/* Reserved at jobs_init: cannot happen, but never unanswered. */
		m->core.dump_running = 0;
		jobs_refuse(m, w, REASON_FAILED, ENOMEM, strerror(ENOMEM));
		return;
	}
	module_submit(m);
}

/* The state and its job block, zeroed: nothing runs yet. */
struct jobs *jobs_new(void)
{
	struct jobs *js = calloc(1, sizeof(*js));

	if (js != NULL && (js->mj = calloc(1, sizeof(*js->mj))) == NULL) {
		free(js);
		js = NULL;
	}
	return js;
}

/* The job block's dumper, for the word face's jmfp path. */
struct dumper *jobs_dumper(struct jobs *js)
{
	return &js->mj->dumper;
}

/* jedumps.c asks before it hands the worker an adoption. */
int jobs_closing(const struct jm4lw *m)
{
	return m->jobs->jobs_closing;
}

/* thread.c's exit hook, through server_unstage. */
void jobs_unstage(struct jm4lw *m)
{
	if (m->jobs != NULL && m->jobs->mj != NULL)
		dumper_cancel(&m->jobs->mj->dumper);
}

/* The worker whose jobs end on the module's loop; -1 if it cannot be
 * made. */
int jobs_init(struct jm4lw *m, const struct core_ops *ops)
{
	struct job_waiter none = {0};

	m->jobs->worker = worker_new(m->base, ops, module_job_done, m);
	if (m->jobs->worker == NULL)
		return -1;
	/* A job's first waiter has its place already. */
	if (waiters_add(&m->jobs->waiters, &none) == -1)
		return -1;
	m->jobs->waiters.n = 0;
	if ((m->jobs->bodies_timer = evtimer_new(m->base, bodies_expire, m)) ==
	    NULL)
		return -1;
	/* Between jobs, the leak indexes of the dumps kept. */
	worker_set_idle(m->jobs->worker, module_job_idle, m->jobs->mj);
	return 0;
}

/* On the loop, under the worker's lock: the module is being freed while
 * @p job runs (worker_settle). */
static void module_job_cancel(void *job)
{
	dumper_cancel(&((struct module_job *)job)->dumper);
}

/* What the waiter of a cancelled job is told: one error line, not an
 * empty reply. */
static void module_job_cancelled(struct dump_result *r, const char *who)
{
	memset(r, 0, sizeof(*r));
	r->status = DUMP_FAILED;
	r->why = REASON_FAILED;
	r->err = ECANCELED;
	r->body_fd = -1;
	snprintf(r->reason, sizeof(r->reason),
	    "%s cancelled: the module is being freed (jm4lw_free) and "
	    "nothing was kept; retry when the service is back",
	    who);
}

int jobs_settle(struct jm4lw *m, int timeout_ms)
{
	struct dump_result r;
	void *done;
	unsigned i;
	int rv;

	m->jobs->jobs_closing = 1; /* no queued job starts now */
	if (m->base_gone) {        /* no answer can be sent through the loop */
		m->jobs->waiters.n = 0;
		for (i = 0; i < m->jobs->nqueued; i++)
			m->jobs->queued[i].ws.n = 0;
	}
	rv = worker_settle(m->jobs->worker, timeout_ms, module_job_cancel,
	    &done);
	if (done != NULL) /* it ended: its own answer */
		module_job_done(m, done);
	else if (rv != 0) {
		module_job_cancelled(&r, m->jobs->mj->job.kind->name);
		if (m->jobs->waiters.n > 0)
			waiters_answer(m, &m->jobs->waiters, &r);
		else if (m->jobs->mj->job.scheduled)
			module_log_dump(m, m->jobs->job_why, &r);
	}
	/* Deltas waiting between their dumps: their requesters get the
	 * line (or, with the base gone, nothing), the timers stop. */
	for (i = 0; i < JOBS_DELTAS_MAX; i++)
		if (m->jobs->deltas[i].used && m->jobs->deltas[i].phase == 2) {
			if (m->base_gone)
				m->jobs->deltas[i].ws.n = 0;
			module_job_cancelled(&r, "heap profile difference");
			delta_answer(&m->jobs->deltas[i], &r);
		}
	/* The queued never ran: each gets the same line. */
	for (i = 0; i < m->jobs->nqueued; i++) {
		module_job_cancelled(&r, m->jobs->queued[i].req.kind->name);
		waiters_answer(m, &m->jobs->queued[i].ws, &r);
		free(m->jobs->queued[i].ws.w);
		m->jobs->queued[i].ws.w = NULL;
	}
	m->jobs->nqueued = 0;
	return rv == 0 || done != NULL ? 0 : -1;
}

int jobs_base_gone(const struct jm4lw *m)
{
	return worker_base_gone(m->jobs->worker);
}

/* The worker and the job's block; a dump still running keeps its block
 * until it ends, and the worker's thread frees it. */
void jobs_free(struct jm4lw *m)
{
	unsigned i;

	if (m->base_gone)
		worker_forget_loop(m->jobs->worker);
	/* The work nobody waits for (a leak index) stops here and leaves
	 * nothing: its staging directory goes now. */
	if (m->jobs->mj != NULL)
		dumper_cancel(&m->jobs->mj->dumper);
	if (!worker_free(m->jobs->worker, module_job_orphan) &&
	    m->jobs->mj != NULL)
		module_job_orphan(m->jobs->mj);
	bodies_drop(m, 1);
	for (i = 0; i < JOBS_DELTAS_MAX; i++) {
		if (m->jobs->deltas[i].used)
			delta_end(&m->jobs->deltas[i]);
		if (m->jobs->deltas[i].timer != NULL && !m->base_gone)
			event_free(m->jobs->deltas[i].timer);
		m->jobs->deltas[i].timer = NULL;
	}
	if (m->jobs->bodies_timer != NULL && !m->base_gone)
		event_free(m->jobs->bodies_timer);
	m->jobs->bodies_timer = NULL;
	free(m->jobs->waiters.w);
	m->jobs->waiters.w = NULL;
	m->jobs->waiters.n = m->jobs->waiters.cap = 0;
	free(m->jobs);
	m->jobs = NULL;
}

/*
 * The job service the faces and the schedule call down into: admission on
 * the loop, the hand-off to the worker, the one waiter a job answers, and
 * the switch that keeps the module's own allocations on a host's thread
 * unsampled. It knows no face: a waiter is a callback and its argument.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "dumper.h"
#include "job.h"
#include "module.h"
#include "ops.h"
#include "reason.h"
#include "result.h"
#include "worker.h"

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
	int was;

	module_enter(m); /* an answer (the log) may free the module */
	was = module_unsampled_enter(m);
	m->waiter.answer = NULL;
	core_job_done(&m->core, j);
	/* A peer that left meanwhile is not answered; the dump stays. */
	if (w.answer != NULL)
		w.answer(m, w.arg, &j->res);
	else if (j->scheduled)
		module_log_dump(m, m->job_why, &j->res);
	dump_result_release(&j->res);
	job_release(j);
	module_unsampled_leave(m, was);
	module_leave(m);
}

/* @p arg, a waiter (a connection, a request), is gone: no answer. */
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

/* Hand the prepared job to the worker, or run it here without one. */
static void module_submit(struct jm4lw *m, const struct job_waiter *w)
{
	struct job *j = &m->mj->job;

	m->waiter = w != NULL ? *w : (struct job_waiter){0};
	/* prof.dump on the worker's thread at the host's priority. */
	j->locked.run = worker_locked;
	j->locked.ctx = m->worker;
	/* A person may ask again in a moment: the idle work waits. */
	worker_idle_after(m->worker, w != NULL ? WORKER_IDLE_DELAY_MS : 0);
	if (worker_submit(m->worker, module_job_run, j) == 0)
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
 * The job @p req asks for, for waiter @p w (a peer's word, an HTTP
 * request), or with @p w NULL for the schedule req->why. Admission
 * happens here on the loop (one job at a time; a dump's
 * dump_min_interval), the job on the worker; a refusal is answered at
 * once.
 */
void module_job(struct jm4lw *m, const struct job_waiter *w,
    const struct job_req *req)
{
	if (core_job_admit(&m->core, &m->mj->job, &m->mj->dumper, req,
	        &m->refusal) == -1) {
		if (w != NULL)
			w->answer(m, w->arg, &m->refusal);
		else
			module_log_dump(m, req->why, &m->refusal);
		return;
	}
	m->job_why = req->why;
	module_submit(m, w);
}

/* The worker whose jobs end on the module's loop; -1 if it cannot be
 * made. */
int jobs_init(struct jm4lw *m, const struct core_ops *ops)
{
	m->worker = worker_new(m->base, ops, module_job_done, m);
	if (m->worker == NULL)
		return -1;
	/* Between jobs, the leak indexes of the dumps kept. */
	worker_set_idle(m->worker, module_job_idle, m->mj);
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
	struct job_waiter w;
	struct dump_result r;
	void *done;
	int rv;

	if (m->base_gone) /* no answer can be sent through the loop */
		m->waiter.answer = NULL;
	rv = worker_settle(m->worker, timeout_ms, module_job_cancel, &done);
	if (done != NULL) { /* it ended: its own answer */
		module_job_done(m, done);
		return 0;
	}
	if (rv == 0)
		return 0;
	w = m->waiter;
	m->waiter.answer = NULL;
	module_job_cancelled(&r, job_kinds[m->mj->job.kind].name);
	if (w.answer != NULL)
		w.answer(m, w.arg, &r);
	else if (m->mj->job.scheduled)
		module_log_dump(m, m->job_why, &r);
	return -1;
}

int jobs_base_gone(const struct jm4lw *m)
{
	return worker_base_gone(m->worker);
}

/* The worker and the job's block; a dump still running keeps its block
 * until it ends, and the worker's thread frees it. */
void jobs_free(struct jm4lw *m)
{
	if (m->base_gone)
		worker_forget_loop(m->worker);
	/* The work nobody waits for (a leak index) stops here and leaves
	 * nothing: its staging directory goes now. */
	if (m->mj != NULL)
		dumper_cancel(&m->mj->dumper);
	if (!worker_free(m->worker, module_job_orphan) && m->mj != NULL)
		module_job_orphan(m->mj);
}

/*
 * job — one job of the worker's, whatever its kind (core/job_<kind>.c
 * holds each: its admission, its steps and which of them is the lock
 * window, the one that holds jemalloc's profiling locks, its rendering).
 * The lock window runs at the host's priority (job->locked, the shell's
 * jm4lw-dump thread) and the other steps yield to the host, so a busy
 * machine starves neither the job nor the host threads waiting on those
 * locks. job_run() touches nothing but the job, so the module's worker
 * thread runs it while the loop serves other peers; every kind answers
 * with the job's struct dump_result, a body and/or a kept dump's path,
 * the same in place (core_job_sync) as through the worker, back on the
 * loop (core_job_done).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cause.h"
#include "core.h"
#include "dumper.h"
#include "snapown.h"
#include "jm4lw.h"
#include "job.h"
#include "profile.h"
#include "reason.h"
#include "result.h"
#include "view.h"

/* Free what a job owns: its kind's state, a scrape's first dump, a lent
 * dump nobody took. */
void job_release(struct job *j)
{
	if (j->kind != NULL && j->kind->release != NULL)
		j->kind->release(j);
	if (j->has_base_fd)
		close(j->base_fd);
	j->has_base_fd = 0;
	j->base_fd = -1;
	if (j->lent) /* nobody took it: an orphaned job's */
		close(j->lent_fd);
	j->lent = 0;
}

/* Two requests are one question when their kind shares and says so. */
int job_req_same(const struct job_req *a, const struct job_req *b)
{
	return a->kind != NULL && a->kind->shares && a->kind == b->kind &&
	    a->kind->same != NULL && a->kind->same(a, b);
}

/* The running job as the request it answers, against @p req. */
int job_req_joins(const struct job *j, const struct job_req *req)
{
	struct job_req run = {.kind = j->kind,
	    .answer = j->res.answer,
	    .view = j->res.view,
	    .with_base = j->with_base && !j->has_base_fd,
	    .seconds = j->seconds,
	    .has_base_fd = j->has_base_fd};

	/* A difference is one delta's (its first dump): never joined here,
	 * the delta's own waiters share it. */
	if (j->has_base_fd)
		return 0;

	return job_req_same(&run, req);
}

/* Admit @p req by its kind's row; a kind without a job refuses. */
int core_job_admit(struct core *c, struct job *j, struct dumper *d,
    const struct job_req *req, struct dump_result *r)
{
	const struct job_kind *k = req->kind;

	memset(r, 0, sizeof(*r));
	r->body_fd = -1;
	if (k == NULL || k->admit == NULL) {
		dump_why(r, DUMP_FAILED, REASON_FAILED, EINVAL,
		    "%s has no job to run", req->who != NULL ? req->who : "");
		return -1;
	}
	if (k->admit(k, c, j, d, req, r) == -1)
		return -1;
	/* The kind admitted (a review, for a dump) says, or the request. */
	j->res.answer =
	    j->kind->answer != DUMP_ANSWER_VIEW ? j->kind->answer : req->answer;
	return 0;
}

/* The lock window's step, handed to the thread at the host's priority. */
struct job_window {
	struct job *j;
	job_step step;
	int rv;
};

static void job_window_run(void *arg)
{
	struct job_window *w = arg;

	w->rv = w->step(w->j);
}

/* Run one step of @p j: the lock window through j->locked, where the
 * shell gave one; every other step right here. */
static int job_step_run(struct job *j, job_step step)
{
	struct job_window w = {.j = j, .step = step, .rv = 0};

	if (step != j->kind->locked || j->locked.run == NULL)
		return step(j);
	j->locked.run(j->locked.ctx, job_window_run, &w);
	return w.rv;
}

/* opt.prof_accum of this process: 1, -1, or 0 when it cannot be read. */
static int job_accum(const struct job *j)
{
	bool on = 0;
	size_t len = sizeof(on);

	if (j->ops == NULL || j->ops->mallctl == NULL ||
	    j->ops->mallctl("opt.prof_accum", &on, &len, NULL, 0) != 0)
		return 0;
	return on ? 1 : -1;
}

/* Run @p j's steps in order, up to the first that fails. */
void job_run(struct job *j)
{
	const struct job_kind *k = j->kind;
	size_t i;

	profile_ctx_init(&j->prof, &j->cfg, &j->fold);
	j->prof.accum = job_accum(j);
	j->prof.sampling = j->sampling;
	j->prof.hints = j->hints;
	for (i = 0; i < JOB_STEPS_MAX && k->steps[i] != NULL; i++)
		if (job_step_run(j, k->steps[i]) == -1)
			break;
	/* The memfd, unless it became the body: a lending kind's dump
	 * that made its answer goes back to the loop (core_job_done). */
	if (j->dump_fd != -1 && k->lends && j->res.status == DUMP_OK) {
		j->lent = 1;
		j->lent_fd = j->dump_fd;
	} else if (j->dump_fd != -1)
		close(j->dump_fd);
	j->dump_fd = -1;
}

/* Keep @p j's lent dump as the core's newest (core_last_dump_*); with
 * no dump_min_interval nothing is ever drawn from it: let it go. */
static void job_take_lent(struct core *c, struct job *j)
{
	if (!j->lent)
		return;
	core_last_dump_forget(c);
	if (c->cfg->dump_min_interval == 0) {
		close(j->lent_fd);
		j->lent = 0;
		return;
	}
	c->have_last_fd = 1;
	c->last_fd = j->lent_fd;
	c->last_fd_at = j->began;
	j->lent = 0;
}

/* Back on the loop: what the job changed, and its log lines. */
void core_job_done(struct core *c, struct job *j)
{
	const struct dump_result *r = &j->res;
	const char *s = r->log, *nl;
	char line[512];
	size_t n;

	c->dump_running = 0;
	job_take_lent(c, j);
	/* A reload turned snapshots off while this job ran. */
	dumper_snaps_apply(j->dumper, c->cfg->snapshot_count);
	for (; *s != '\0' && (nl = strchr(s, '\n')) != NULL; s = nl + 1) {
		n = (size_t)(nl - s - 1);
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, s + 1, n);
		line[n] = '\0';
		if (c->log.fn != NULL)
			c->log.fn(c->log.arg, s[0] - '0', line);
	}
	c->st.dumps_deleted += r->deleted;
	if (r->kept && j->kind->done != NULL)
		j->kind->done(c, j);
	else if (r->kept) { /* jmfp, jmdf, the schedule: a dump in dump_dir */
		c->st.dumps_written++;
		/* Each kept dump's line says why it was taken, as its name
		 * does (core/cause.h), and what its asker added
		 * (dump_on_memory: the figures that fired). */
		if (r->status == DUMP_OK)
			core_logf(&c->log, JM4LW_LOG_INFO, "%s dump: %s%s%s%s",
			    cause_name(j->cause), r->path,
			    j->detail[0] != '\0' ? " (" : "", j->detail,
			    j->detail[0] != '\0' ? ")" : "");
		snprintf(c->last_dump, sizeof(c->last_dump), "%s", r->path);
		c->last_dump_time = time(NULL);
		/* An older baseline predates this dump; without growth, a
		 * later reload that turns it on takes its first look. */
		c->alloc_known = r->alloc_known;
		c->alloc_at_dump = r->alloc;
	}
	if (!j->kind->counted)
		return; /* a question about dumps: no dump, no profile */
	switch (r->status) {
	case DUMP_OK:
		if (r->answer != DUMP_ANSWER_PATH) /* the dump's own */
			c->st.profiles_served++;
		break;
	case DUMP_REFUSED:
		c->st.dumps_refused++;
		break;
	case DUMP_FAILED:
		c->st.dumps_failed++;
		break;
	}
}

/* Admit, run and finish one job on the calling thread. */
void core_job_sync(struct core *c, struct dumper *d, const struct job_req *req,
    struct dump_result *r)
{
	const struct job_kind *k = req->kind;
	struct job *j;

	/* The job holds a whole configuration: keep it off the stack. */
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		memset(r, 0, sizeof(*r));
		r->body_fd = -1;
		dump_why(r, DUMP_FAILED, REASON_FAILED, ENOMEM, "%s failed: %s",
		    k != NULL ? k->name : "nothing", strerror(ENOMEM));
		if (k != NULL && k->counted)
			c->st.dumps_failed++;
		return;
	}
	if (core_job_admit(c, j, d, req, r) == 0) {
		job_run(j);
		core_job_done(c, j);
		*r = j->res;
	}
	free(j);
}

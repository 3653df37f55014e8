/*
 * job — one job of the worker's, by its kind: a dump (stage, publish,
 * answer), a symbol lookup, a kept dump's view or the leak suspects.
 * job_run() touches nothing but the job, so the module's worker thread
 * runs it while the loop serves other peers; the result comes back to
 * the loop (core_job_done).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit.h"
#include "body.h"
#include "cause.h"
#include "core.h"
#include "dumper.h"
#include "jm4lw.h"
#include "jedumps.h"
#include "job.h"
#include "profile.h"
#include "publish.h"
#include "reason.h"
#include "recentjob.h"
#include "result.h"
#include "snaps.h"
#include "stage.h"
#include "view.h"

/* Free what a job owns: the symbol lookup's copy of its addresses. */
void job_release(struct job *j)
{
	if (j->has_base_fd)
		close(j->base_fd);
	j->has_base_fd = 0;
	j->base_fd = -1;
	free(j->addrs);
	j->addrs = NULL;
	j->addrs_len = 0;
	free(j->recent);
	j->recent = NULL;
	j->recent_len = j->recent_cap = 0;
	if (j->lent) /* nobody took it: an orphaned job's */
		close(j->lent_fd);
	j->lent = 0;
}

/*
 * The kinds of job, the master copy: a word's or a route's row names one
 * (enum job_kind), and what each layer does with it is here: the name its
 * failure and cancellation lines say, its admission on the loop, its
 * steps on the worker and which of them is the lock window, the one that
 * holds jemalloc's profiling locks. That step runs at the host's priority
 * (job->locked, the shell's jm4lw-dump thread) and the others yield to the
 * host, so a busy machine starves neither the job nor the host threads
 * waiting on those locks. Every kind answers with the job's struct
 * dump_result, a body and/or a kept dump's path, the same in place
 * (core_job_sync) as through the worker.
 */
const struct job_entry job_kinds[JOB_KINDS] = {
    [JOB_NONE] = {.name = "nothing"},
    [JOB_DUMP] =
        {
            .name = "heap profile dump",
            .admit = admit_dump,
            .steps = {stage_target, stage_prof_dump, stage_check, publish_dump,
                publish_answer},
            .locked = stage_prof_dump,
            .counted = 1,
            .lends = 1,
        },
    [JOB_SYMBOLS] =
        {
            .name = "symbol lookup",
            .admit = admit_symbols,
            .steps = {body_symbols},
            .counted = 1,
        },
    [JOB_RENDER] =
        {
            .name = "rendering",
            .admit = admit_render,
            .steps = {body_render},
            .counted = 1,
        },
    [JOB_LEAKS] =
        {
            .name = "leak suspects",
            .admit = admit_worker,
            .steps = {body_leaks},
        },
    /* A dump like JOB_DUMP's, whose rate is its body's age: scrapers
     * within dump_min_interval share the newest body, not a dump. */
    [JOB_SCRAPE] =
        {
            .name = "heap profile dump",
            .admit = admit_scrape,
            .steps = {stage_target, stage_prof_dump, stage_check, publish_dump,
                publish_answer},
            .locked = stage_prof_dump,
            .counted = 1,
            .shares = 1,
            .lends = 1,
        },
    /* jemalloc's last sampled allocations: the read (alloc_dump) is the
     * lock window; parsing, symbolizing and rendering come after. */
    [JOB_RECENT] =
        {
            .name = "recent allocations",
            .admit = admit_recent,
            .steps = {recent_read, body_recent},
            .locked = recent_read,
        },
    /* jemalloc's own dump, closed in dump_dir (daemon/jedumps.c saw
     * it): kept like ours, nobody waiting; no dump of ours, so it counts
     * in its own figures (jedumps_done), not in dumps_written. */
    [JOB_ADOPT] =
        {
            .name = "adopting jemalloc's dump",
            .admit = admit_adopt,
            .steps = {jedumps_adopt},
            .done = jedumps_done,
        },
    /* A view asked for within dump_min_interval of the last dump, drawn
     * from that dump (the memfd a lending kind left) instead of refused:
     * jmtp then jmfg, go tool pprof then jeprof. Admitted by JOB_DUMP's
     * admission in its stead (admit_dump); it dumps nothing. */
    [JOB_REVIEW] =
        {
            .name = "heap profile view",
            .steps = {body_review},
            .counted = 1,
        },
    /* A profile snapshot into the worker's ring (snapshot_interval):
     * a dump's lock window into a memfd, never on disk, counted in no
     * dump's figures. */
    [JOB_SNAP] =
        {
            .name = "snapshot",
            .admit = admit_snapshot,
            .steps = {snap_memfd, stage_prof_dump, snap_take},
            .locked = stage_prof_dump,
        },
    /* jmgr, ?since=: a fresh dump minus a snapshot of the ring. */
    [JOB_SINCE] =
        {
            .name = "heap growth since a snapshot",
            .admit = admit_snapview,
            .steps = {snap_pick, snap_memfd, stage_prof_dump, snap_body},
            .locked = stage_prof_dump,
            .counted = 1,
        },
    /* jmpk, ?at=peak: the snapshot at the highest stats.allocated. */
    [JOB_PEAK] =
        {
            .name = "the heap at the peak",
            .admit = admit_snapview,
            .steps = {snap_pick, snap_body},
            .counted = 1,
        },
};

int job_req_same(const struct job_req *a, const struct job_req *b)
{
	return (unsigned)a->kind < JOB_KINDS && job_kinds[a->kind].shares &&
	    a->kind == b->kind && a->view == b->view &&
	    a->with_base == b->with_base && a->seconds == b->seconds &&
	    a->has_base_fd == b->has_base_fd &&
	    (!a->has_base_fd || a->base_fd == b->base_fd);
}

int job_req_joins(const struct job *j, const struct job_req *req)
{
	struct job_req run = {.kind = j->kind,
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
	const struct job_entry *k;

	memset(r, 0, sizeof(*r));
	r->body_fd = -1;
	if ((unsigned)req->kind >= JOB_KINDS ||
	    (k = &job_kinds[req->kind])->admit == NULL) {
		dump_why(r, DUMP_FAILED, REASON_FAILED, EINVAL,
		    "%s has no job to run", req->who != NULL ? req->who : "");
		return -1;
	}
	return k->admit(k, c, j, d, req, r);
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

	if (step != job_kinds[j->kind].locked || j->locked.run == NULL)
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
	const struct job_entry *k = &job_kinds[j->kind];
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
	if (r->kept && job_kinds[j->kind].done != NULL)
		job_kinds[j->kind].done(c, j);
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
	if (!job_kinds[j->kind].counted)
		return; /* a question about dumps: no dump, no profile */
	switch (r->status) {
	case DUMP_OK:
		if (r->view != DUMP_VIEW_NONE)
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
	const struct job_entry *k =
	    &job_kinds[(unsigned)req->kind < JOB_KINDS ? req->kind : JOB_NONE];
	struct job *j;

	/* The job holds a whole configuration: keep it off the stack. */
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		memset(r, 0, sizeof(*r));
		r->body_fd = -1;
		dump_why(r, DUMP_FAILED, REASON_FAILED, ENOMEM, "%s failed: %s",
		    k->name, strerror(ENOMEM));
		if (k->counted)
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

/*
 * job_recent — jemalloc's last sampled allocations (jmrc,
 * /jemalloc/recent, prof_recent): the read (alloc_dump, core/recentjob.c)
 * is the lock window; parsing, symbolizing and rendering come after.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "body.h"
#include "core.h"
#include "ctl.h"
#include "job.h"
#include "profile.h"
#include "reason.h"
#include "recentjob.h"
#include "stage.h"

/* Profiling usable, jemalloc's prof_recent there and keeping records
 * (alloc_max not 0), a free worker; the job gets the filters. The reads
 * here are an atomic load in jemalloc, no lock. */
static int recent_admit(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r)
{
	ssize_t max = 0;
	size_t len = sizeof(max);
	int e;

	if (admit_prof_ready(c, r) == -1)
		return -1;
	if ((e = c->ops->mallctl("experimental.prof_recent.alloc_max", &max,
	         &len, NULL, 0)) != 0) {
		dump_why(r, DUMP_REFUSED, REASON_PROF_UNBUILT, e, "%s: %s",
		    k->name,
		    e == ENOENT ? "this jemalloc has no prof_recent (it came "
		                  "with jemalloc 5.3.0)"
		                : strerror(e));
		return -1;
	}
	if (max == 0) {
		dump_why(r, DUMP_REFUSED, REASON_NO_SAMPLES, ENODATA,
		    "%s are off: recent_max is 0 (set recent_max in the "
		    "configuration, then reload)",
		    k->name);
		return -1;
	}
	if (job_free_admit(k, c, j, d, r) == -1)
		return -1;
	j->state.recent.json = req->json;
	j->state.recent.live_only = req->live_only;
	j->state.recent.min_size = req->min_size;
	core_sampling(c, &j->sampling); /* why the records are few */
	dump_begin(c);
	return 0;
}

/* The records the lock window read, as text or JSON. */
static int recent_render(struct job *j, const char *dump, FILE *out, char *err,
    size_t errlen)
{
	const struct job_recent_state *s = &j->state.recent;

	(void)dump;
	return profile_recent(&j->prof, s->b.buf, s->b.len,
	    &(struct profile_recent_args){.cut = s->b.cut,
	        .json = s->json,
	        .live_only = s->live_only,
	        .min_size = s->min_size,
	        .now_ns = s->now},
	    out, err, errlen);
}

/* The records' buffer. */
static void recent_release(struct job *j)
{
	free(j->state.recent.b.buf);
	j->state.recent.b = (struct recent_buf){0};
}

/* What the lock window read, parsed, symbolized and rendered into a
 * body file; its buffer goes as soon as that is done. */
static int recent_step(struct job *j)
{
	char dir[PATH_MAX];
	int e = j->state.recent.err;
	int rv = -1;

	if (e != 0)
		/* Admission saw prof_recent there: ENOENT now is a race
		 * with nothing, but say it as plainly. */
		dump_why(&j->res, DUMP_FAILED,
		    e == ENOENT ? REASON_PROF_UNBUILT : REASON_FAILED, e,
		    "recent allocations failed: "
		    "experimental.prof_recent.alloc_dump: %s",
		    strerror(e));
	else if (job_stage(j, j->kind->name, dir, sizeof(dir)) == 0) {
		if (dump_render(j, NULL, dir) == 0)
			j->res.status = DUMP_OK;
		rv = 0;
	}
	recent_release(j);
	return rv;
}

const struct job_kind job_recent = {
    .name = "recent allocations",
    .admit = recent_admit,
    .steps = {recent_read, recent_step},
    .locked = recent_read,
    .render = recent_render,
    .answer = DUMP_ANSWER_RECENT,
    .release = recent_release,
};

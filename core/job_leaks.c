/*
 * job_leaks — leak suspects over this process's kept dumps (jmlk,
 * /jemalloc/leaks): functions that grew in nearly every interval. A
 * question about kept dumps: it makes no dump and counts in no dump's
 * figures.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit.h"
#include "body.h"
#include "ctl.h"
#include "dumps.h"
#include "job.h"
#include "profile.h"
#include "reason.h"
#include "stage.h"

/* No rate limit, a free worker; the job reads req->json. */
static int leaks_admit(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r)
{
	if (job_free_admit(k, c, j, d, r) == -1)
		return -1;
	j->state.leaks.json = req->json;
	j->state.leaks.pid = (long)getpid();
	/* Too few dumps in a process that cannot sample: say that. */
	core_sampling(c, &j->sampling);
	dump_begin(c);
	return 0;
}

/* The suspects over the dumps listed, as text or JSON. */
static int leaks_render(struct job *j, const char *dump, FILE *out, char *err,
    size_t errlen)
{
	const struct job_leaks_state *s = &j->state.leaks;

	(void)dump;
	return profile_leaks(&j->prof, s->paths, s->n, j->dumper->stage,
	    s->json, out, err, errlen);
}

/* The list of dumps, once rendered (or on a job's end). */
static void leaks_release(struct job *j)
{
	struct job_leaks_state *s = &j->state.leaks;
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->paths[i]);
	free(s->paths);
	s->paths = NULL;
	s->n = 0;
}

/* The suspects over this process's kept dumps (the newest
 * LEAKS_DUMPS_MAX), into a body file. */
static int leaks_step(struct job *j)
{
	struct job_leaks_state *s = &j->state.leaks;
	char dir[PATH_MAX];

	if (job_stage(j, j->kind->name, dir, sizeof(dir)) == -1)
		return -1;
	if (dumps_of_pid(j->cfg.dump_prefix, dir, s->pid, LEAKS_DUMPS_MAX,
	        &s->paths, &s->n) == -1) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, errno,
		    "leak suspects failed: cannot list %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (dump_render(j, NULL, dir) == 0)
		j->res.status = DUMP_OK;
	leaks_release(j);
	return 0;
}

const struct job_kind job_leaks = {
    .name = "leak suspects",
    .admit = leaks_admit,
    .steps = {leaks_step},
    .render = leaks_render,
    .answer = DUMP_ANSWER_LEAKS,
    .release = leaks_release,
};

/*
 * job_render — a view of a kept dump (minus another): /jemalloc/profile's
 * ?name= and ?base=, the history's dumps.
 */
#include <limits.h>
#include <string.h>

#include "admit.h"
#include "body.h"
#include "cause.h"
#include "dumps.h"
#include "job.h"
#include "stage.h"
#include "view.h"

/* A free worker, and both names those of our dumps in dump_dir
 * (REASON_NO_DUMP: no such dump of ours). */
static int render_admit(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r)
{
	const char *name = req->name != NULL ? req->name : "";

	if (job_free_admit(k, c, j, d, r) == -1 ||
	    kept_dump(c, name, j->path, sizeof(j->path), r) == -1 ||
	    (req->base != NULL &&
	        kept_dump(c, req->base, j->base, sizeof(j->base), r) == -1))
		return -1;
	j->with_base = req->base != NULL;
	j->res.view = req->view;
	dump_begin(c);
	return 0;
}

/* The view of the kept dump j->path, into a body file (raw: the dump,
 * its stacks cut by render_dump); a view with neither a renderer nor the
 * dump is the dump file itself. */
static int render_step(struct job *j)
{
	const char *name = strrchr(j->path, '/');
	char dir[PATH_MAX];

	if (job_stage(j, j->kind->name, dir, sizeof(dir)) == -1)
		return -1;
	if (views[j->res.view].render == NULL &&
	    !views[j->res.view].carries_dump)
		dump_raw_body(j, j->path, dir);
	else if (dump_render(j, j->path, dir) == 0)
		j->res.status = DUMP_OK;
	/* Fetched: a person has it, retention may have it (core/dumps.h). */
	if (j->res.status == DUMP_OK &&
	    dumps_cause(j->cfg.dump_prefix,
	        name != NULL ? name + 1 : j->path) == CAUSE_MEMORY)
		(void)dumps_pin(j->path, 0);
	return 0;
}

const struct job_kind job_render = {
    .name = "rendering",
    .admit = render_admit,
    .steps = {render_step},
    .render = dump_render_profile,
    .counted = 1,
    .folds = 1,
};

/*
 * job_example — the example job word, jmxx, built only with
 * -DJM4LW_EXAMPLE_WORD=ON: jemalloc's stats.allocated, read on the
 * module's worker after a fresh epoch, answered as one line of text on
 * the words port and as /4lw/jmxx over HTTP. A new job word is a file
 * like this one (its admission, steps, rendering) and one line in each
 * table: core/job_kinds.h names the kind, proto/words.c the word.
 * docs/ENGINE.md ("Adding things") walks through it.
 */
#include <stdio.h>

#include "admit.h"
#include "body.h"
#include "bytes.h"
#include "job.h"
#include "ops.h"

/* On the loop: a free worker, no rate (it reads a figure and dumps
 * nothing); the job answers with the word's view (its HTTP type). */
static int example_admit(const struct job_kind *k, struct core *c,
    struct job *j, struct dumper *d, const struct job_req *req,
    struct dump_result *r)
{
	if (job_free_admit(k, c, j, d, r) == -1)
		return -1;
	j->res.view = req->view;
	dump_begin(c);
	return 0;
}

/* On the worker, into the body file: the figure, refreshed first (the
 * statistics move only with an epoch), or one line saying why not. */
static int example_render(struct job *j, const char *dump, FILE *out, char *err,
    size_t errlen)
{
	size_t alloc = 0;
	char b[32];

	(void)dump;
	ctl_epoch(j->ops);
	if (ctl_size(j->ops, "stats.allocated", &alloc) != 0) {
		snprintf(err, errlen,
		    "%s: stats.allocated cannot be read (a jemalloc built "
		    "without --enable-stats?)",
		    j->kind->name);
		return -1;
	}
	fprintf(out, "allocated %s (%zu bytes)\n",
	    fmt_bytes(b, sizeof(b), alloc), alloc);
	return 0;
}

const struct job_kind job_example = {
    .name = "the example word",
    .admit = example_admit,
    .steps = {body_answer},
    .render = example_render,
};

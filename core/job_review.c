/*
 * job_review — a view asked for within dump_min_interval of the last
 * dump, drawn from that dump (the memfd a lending kind left) instead of
 * refused: jmtp then jmfg, go tool pprof then jeprof. A person's dump's
 * admission admits it in its stead (admit_dump); it dumps nothing.
 */
#include "body.h"
#include "job.h"
#include "stage.h"

/* The view of the newest dump (its memfd, j->dump_fd), its age said
 * (HTTP's Age and X-Jm4lw-Dump-Age, a comment line where the view has
 * them). */
static int review_step(struct job *j)
{
	j->res.aged = 1;
	j->res.age = j->state.review.age;
	if (job_stage(j, "rendering", j->dir, sizeof(j->dir)) == -1)
		return -1;
	j->tmp[0] = '\0';
	dump_answer_view(j, j->tmp, j->dir);
	return 0;
}

const struct job_kind job_review = {
    .name = "heap profile view",
    .steps = {review_step},
    .render = dump_render_profile,
    .counted = 1,
    .folds = 1,
};

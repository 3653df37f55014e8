/*
 * job_dump — a person's heap profile dump (jmfp, jmdf, the views jmtp,
 * jmcs, jmfg..., the schedule, growth, memory): staged, prof.dump in the
 * lock window, checked, published when kept, then the answer, a path or
 * a view. Its admission is the rate's (core/admit.c), which draws a view
 * asked within dump_min_interval from the newest dump (job_review).
 */
#include "admit.h"
#include "body.h"
#include "job.h"
#include "job_dump.h"

const struct job_kind job_dump = {
    .name = "heap profile dump",
    .admit = admit_dump,
    .steps = JOB_DUMP_STEPS,
    .locked = stage_prof_dump,
    .render = dump_render_profile,
    .counted = 1,
    .lends = 1,
    .folds = 1,
};

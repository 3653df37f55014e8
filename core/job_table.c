/*
 * job_table — every kind of job, one line each in core/job_kinds.h: for
 * what goes over all of them (the tests that check each is whole).
 */
#include <stddef.h>

#include "job.h"

const struct job_kind *const job_table[] = {
#define JOB_KIND(k) &k,
#include "job_kinds.h"
#undef JOB_KIND
    NULL,
};

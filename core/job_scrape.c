/*
 * job_scrape — a scraper's pprof (/debug/pprof/heap, /allocs): a dump
 * like job_dump's, whose rate is its body's age: scrapers within
 * dump_min_interval share the newest body, and those asking the same
 * meanwhile share the running job (the job service, daemon/jobs.c).
 */
#include "admit.h"
#include "body.h"
#include "job.h"
#include "job_dump.h"

/* Two scrapes are one question: the same answer and view (a difference's
 * first dump is one whatever view it is for), base and span, and, for a
 * difference's second dump, the same first. */
static int scrape_same(const struct job_req *a, const struct job_req *b)
{
	return a->answer == b->answer &&
	    (a->answer == DUMP_ANSWER_DUMP || a->view == b->view) &&
	    a->with_base == b->with_base && a->seconds == b->seconds &&
	    a->has_base_fd == b->has_base_fd &&
	    (!a->has_base_fd || a->base_fd == b->base_fd);
}

const struct job_kind job_scrape = {
    .name = "heap profile dump",
    .admit = admit_scrape,
    .steps = JOB_DUMP_STEPS,
    .locked = stage_prof_dump,
    .render = dump_render_profile,
    .counted = 1,
    .shares = 1,
    .same = scrape_same,
    .lends = 1,
    .folds = 1,
};

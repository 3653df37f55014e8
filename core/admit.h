/*
 * admit — what the kinds' admissions share, on the loop (core/admit.c):
 * a dump's (its rate, the job's copy of the configuration), a job that
 * makes no dump (a free worker), profiling usable. For core's job files
 * only.
 */
#ifndef JM4LW_ADMIT_H
#define JM4LW_ADMIT_H

#include <stddef.h>

#include "dumper.h"
#include "job.h"
#include "result.h"

struct core;

/* A person's dump (job_dump): profiling usable, no job running,
 * dump_min_interval, then the job's copy of the configuration, its view
 * and base; within dump_min_interval a view is drawn from the newest
 * dump instead (job_review). */
int admit_dump(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);
/* A scraper's dump (job_scrape): profiling usable and a free worker; the
 * job service keeps its rate. */
int admit_scrape(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);

/* For the kinds' admissions: mark a job out on the worker; is profiling
 * usable (-1 with @p r); a free worker and @p j cleared for kind @p k
 * (-1 with @p r). */
void dump_begin(struct core *c);
int admit_prof_ready(struct core *c, struct dump_result *r);
int job_free_admit(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, struct dump_result *r);

/* The path of our dump @p name in dump_dir into @p path, if it is one
 * and is there: 0, or -1 with @p r saying why (REASON_NO_DUMP). A name
 * from a peer never names anything but a dump of ours. */
int kept_dump(struct core *c, const char *name, char *path, size_t len,
    struct dump_result *r);

#endif /* JM4LW_ADMIT_H */

/*
 * admit — each job kind's admission, on the loop (core/admit.c): the rows
 * of job_kinds[] point here. For core's job files only.
 */
#ifndef JM4LW_ADMIT_H
#define JM4LW_ADMIT_H

#include "dumper.h"
#include "job.h"
#include "result.h"

struct core;

/* JOB_DUMP: profiling usable, no job running, dump_min_interval; then
 * the job's copy of the configuration, its view and base. */
int admit_dump(const struct job_entry *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);
/* JOB_SYMBOLS: a free worker; the job copies the addresses. */
int admit_scrape(const struct job_entry *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);
int admit_symbols(const struct job_entry *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);
/* JOB_RENDER: a free worker and kept dumps of ours by those names. */
int admit_render(const struct job_entry *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);
/* A kind that makes no dump and reads only req->view and req->json
 * (JOB_LEAKS): a free worker. */
int admit_worker(const struct job_entry *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);
/* JOB_RECENT: profiling usable, prof_recent there and on (alloc_max not
 * 0), a free worker; the job gets the filters. */
int admit_recent(const struct job_entry *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);

#endif /* JM4LW_ADMIT_H */

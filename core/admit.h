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
/* JOB_ADOPT: a free worker; the job gets the path (req->name) and cause
 * of the dump jemalloc wrote. */
int admit_adopt(const struct job_entry *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);
int admit_worker(const struct job_entry *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);
/* JOB_RECENT: profiling usable, prof_recent there and on (alloc_max not
 * 0), a free worker; the job gets the filters. */
int admit_recent(const struct job_entry *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);

/* For the other kinds' admissions (core/snaps.c): mark a job out on the
 * worker; is profiling usable (-1 with @p r); a free worker and @p j
 * cleared for @p kind (-1 with @p r). */
void dump_begin(struct core *c);
int admit_prof_ready(struct core *c, struct dump_result *r);
int job_free_admit(const struct job_entry *k, struct core *c, struct job *j,
    struct dumper *d, enum job_kind kind, struct dump_result *r);

#endif /* JM4LW_ADMIT_H */

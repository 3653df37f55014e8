/*
 * recentjob — jemalloc 5.3's recent sampled allocations
 * (experimental.prof_recent) for the engine: recent_max applied, and
 * job_recent's lock window (core/recentjob.c). For core's job files and the
 * module's start and reload.
 */
#ifndef JM4LW_RECENTJOB_H
#define JM4LW_RECENTJOB_H

#include <stddef.h>

#include "job.h"

struct core;

/* The most of alloc_dump's JSON one job reads: 1000 records with two
 * full stacks (128 frames, ~20 bytes each) fit several times over. */
#define RECENT_JSON_MAX (16u << 20)

/*
 * Set experimental.prof_recent.alloc_max to @p max (recent_max) unless it
 * is that already. 0 (also with no profiling or a jemalloc without
 * prof_recent: nothing to set, and jmrc says so), or -1 with one line in
 * @p err.
 */
int core_recent_max(struct core *c, unsigned max, char *err, size_t errlen);

/* jemalloc's clock for prof_recent's times (opt.prof_time_res: "high" is
 * the wall clock, else the coarse monotonic one), in ns: now. */
unsigned long long recent_clock(const struct core_ops *ops);

/* prof_recent's records as JSON into @p b (empty, or grown from before),
 * then jemalloc's clock into @p now: the mallctl's answer (0, ENOENT
 * without prof_recent). It takes prof_recent's own mutexes only: a lock
 * window (job_recent's) or a rendering step (the fragmentation ages). */
int recent_dump(const struct core_ops *ops, struct recent_buf *b,
    unsigned long long *now);

/* job_recent's lock window: alloc_dump into the job's buffer, then
 * jemalloc's clock. Always 0 (its next step reads the mallctl's answer,
 * j->state.recent.err). */
int recent_read(struct job *j);

#endif /* JM4LW_RECENTJOB_H */

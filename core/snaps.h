/*
 * snaps — the rolling profile snapshots as jobs (core/snaps.c): taking
 * one into the worker's ring (job_snap, the snapshot_interval timer),
 * growth since one (job_since: jmgr, ?since=) and the heap at the
 * peak (job_peak: jmpk, ?at=peak). For core's job files only.
 */
#ifndef JM4LW_SNAPS_H
#define JM4LW_SNAPS_H

#include <stdio.h>

#include "job.h"

struct core;

/* The window jmgr looks back over when asked no span: the oldest
 * snapshot within it is the base. */
#define SNAPS_GROW_DEFAULT 300

/* A snapshot: profiling usable and active, snapshots on, a free worker. */
int admit_snapshot(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r);
/* Growth since a snapshot (@p growth: a difference, with base) or the
 * peak: snapshots on, a free worker; the peak's job also gets the
 * history ring's highest stats.allocated. */
int admit_snapview(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, int growth,
    struct dump_result *r);

/* Steps on the worker. */
int snap_pick(struct job *j);  /* which snapshot answers, or refuse */
int snap_memfd(struct job *j); /* the memfd prof.dump writes to */
int snap_take(struct job *j);  /* the dump parsed into the ring */
int snap_body(struct job *j);  /* the answer, a body file */

/* Their rendering (job_kind.render): growth since the snapshot picked,
 * or the snapshot at the peak, into @p out. */
int snaps_render(struct job *j, const char *dump, FILE *out, char *err,
    size_t errlen);

#endif /* JM4LW_SNAPS_H */

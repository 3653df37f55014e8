/*
 * job_peak — jmpk, ?at=peak: the snapshot of the ring (core/snaps.c) at
 * the highest stats.allocated, and how near the true peak it is.
 */
#include "job.h"
#include "snaps.h"

/* Snapshots on, a free worker; the history's highest figure. */
static int peak_admit(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r)
{
	return admit_snapview(k, c, j, d, req, 0, r);
}

const struct job_kind job_peak = {
    .name = "the heap at the peak",
    .admit = peak_admit,
    .steps = {snap_pick, snap_body},
    .render = snaps_render,
    .counted = 1,
    .folds = 1,
};

/*
 * job_since — jmgr, ?since=: a fresh dump minus a snapshot of the ring
 * (core/snaps.c), the one about req.since seconds ago.
 */
#include "job.h"
#include "snaps.h"
#include "stage.h"

/* Snapshots on, a free worker, a view that can show a difference. */
static int since_admit(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r)
{
	return admit_snapview(k, c, j, d, req, 1, r);
}

const struct job_kind job_since = {
    .name = "heap growth since a snapshot",
    .admit = since_admit,
    .steps = {snap_pick, snap_memfd, stage_prof_dump, snap_body},
    .locked = stage_prof_dump,
    .render = snaps_render,
    .counted = 1,
    .folds = 1,
};

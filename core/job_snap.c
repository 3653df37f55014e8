/*
 * job_snap — a profile snapshot into the worker's ring (the
 * snapshot_interval timer, core/snaps.c): a dump's lock window into a
 * memfd, never on disk, counted in no dump's figures; nobody waits for
 * it.
 */
#include "job.h"
#include "snaps.h"
#include "stage.h"

const struct job_kind job_snap = {
    .name = "snapshot",
    .admit = admit_snapshot,
    .steps = {snap_memfd, stage_prof_dump, snap_take},
    .locked = stage_prof_dump,
    .unasked = 1,
    .answer = DUMP_ANSWER_PATH, /* its dump is its own: no view of it */
};

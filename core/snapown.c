/*
 * snapown — who owns the snapshots' ring (struct dumper's): this
 * process's worker, one job at a time. A fork child starts with none; a
 * reload that turns snapshots off, or the module's end, frees it. Below
 * the snapshot jobs (core/snaps.c) and the job service's end of a job
 * (core/job.c), which both let go of it.
 */
#include <unistd.h>

#include "dumper.h"
#include "snapown.h"
#include "snapring.h"

/* A job starts or ends a change of the ring: the flag is stored before
 * the first byte of the change and after the last, in that order, so a
 * fork child's copy never shows a change without it. */
void snaps_changing(struct dumper *d, int on)
{
	__atomic_store_n(&d->snaps_busy, on, __ATOMIC_SEQ_CST);
}

/* Let go of the ring: freed, unless this is a fork child whose fork met
 * a job changing it (its pointers may be half made: the copy is left,
 * never freed, rather than freed wrong). Empty after. */
static void snaps_let_go(struct dumper *d)
{
	if (d->snaps_pid != 0 && d->snaps_pid != (long)getpid() &&
	    __atomic_load_n(&d->snaps_busy, __ATOMIC_SEQ_CST))
		snapring_init(&d->snaps, 0, 0);
	else
		snapring_free(&d->snaps);
	d->snaps_busy = 0;
	d->snap_ns_last = d->snap_ns_total = 0;
}

/* The worker's ring, this process's: a fork child starts with none,
 * not with its parent's snapshots (of another heap from now on). */
struct snapring *snaps_ring(struct dumper *d)
{
	if (d->snaps_pid != (long)getpid()) {
		if (d->snaps_pid != 0)
			snaps_let_go(d);
		d->snaps_pid = (long)getpid();
	}
	return &d->snaps;
}

/* Free the ring, all of its memory (see snapown.h). */
void dumper_snaps_free(struct dumper *d)
{
	snaps_let_go(d);
}

/* snapshot_count 0: the ring's memory goes now (see snapown.h). */
void dumper_snaps_apply(struct dumper *d, unsigned count)
{
	if (count == 0 && (d->snaps.s != NULL || d->snaps.st != NULL))
		snaps_let_go(d);
}

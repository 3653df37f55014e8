/*
 * dumper — the worker's state that outlives one job: the staging
 * directory, the dump sequence and the kept dumps still to index
 * (core/stage.c, core/publish.c).
 */
#ifndef JM4LW_DUMPER_H
#define JM4LW_DUMPER_H

#include <stddef.h>

#include "fold.h"
#include "snapring.h"
#include "util.h"

/* Kept dumps waiting for their leak index at most; beyond, the oldest
 * wait for the first leak question (jmlk indexes what is missing). */
#define DUMPER_UNINDEXED_MAX 16

/* State that outlives one dump, touched only by whoever runs job_run(). */
struct dumper {
	unsigned long seq;
	char stage[CORE_PATH_MAX]; /* private dir jemalloc writes in, or "" */
	long stage_pid;            /* the process that made it */
	/* Set by dumper_cancel() from the loop's thread while a job may
	 * run on the worker (jm4lw_free): stage no more, stop at the next
	 * step. */
	int cancelled;
	/* Kept dumps whose leak index is still to be written,
	 * after their answer (dumper_idle), oldest first; the process
	 * that kept them. */
	char *unindexed[DUMPER_UNINDEXED_MAX];
	size_t nunindexed;
	long unindexed_pid;
	/* fold_wrappers of the job that kept the newest of them: the
	 * indexes are made under it, as the next leak question asks. */
	struct fold_list fold;
	/* jemalloc's lg_prof_interval dumps are indexed and symbolized only
	 * while that work allocates well under the interval: set once it
	 * did not (core/jedumps.c), with what it allocated. */
	int interval_heavy;
	unsigned long long interval_work;
	/* The rolling profile snapshots (core/snaps.c): allocated on the
	 * worker, whose sampling is off, so never in a profile. */
	struct snapring snaps;
	unsigned long long snap_ns_last, snap_ns_total; /* worker time */
	/* Whose ring it is (a fork child's copy is its parent's, dropped at
	 * its first use), and set while a job changes it, so a child whose
	 * fork met a change half made leaves the copy unfreed. */
	long snaps_pid;
	int snaps_busy;
};

/* Remove the staging directory this process made, if any, and forget
 * the dumps still to index. */
void dumper_fini(struct dumper *d);

/* On the worker, between jobs: write the leak index of one kept dump that
 * has none yet (dumper.unindexed), the oldest. 1 if more wait, 0 when none
 * does (or the dumper is cancelled). A failure is dropped: jmlk makes a
 * missing index. */
int dumper_idle(struct dumper *d);
/*
 * Cancel the job running on @p d, from another thread (jm4lw_free): its
 * staging directory and every file in it go now, and no new one is made,
 * so a process that exits next leaves nothing half-written. A prof.dump
 * under way cannot be stopped: it writes on into an unlinked file, and
 * the job then fails at its next step. Safe while the job runs; the job
 * block must outlive the call.
 */
void dumper_cancel(struct dumper *d);
/* Has dumper_cancel() been called on @p d? */
int dumper_cancelled(const struct dumper *d);

#endif /* JM4LW_DUMPER_H */

/*
 * peak — jemalloc's prof_gdump dumps as candidates for "what was in the
 * heap at the peak" beside the snapshots (core/peak.c): each is written at
 * a new high, so where one lies between two snapshots it saw more than
 * either. For core/snaps.c.
 */
#ifndef JM4LW_PEAK_H
#define JM4LW_PEAK_H

#include <time.h>

#include "util.h"

/* The best gdump dump found, and how many were looked at. */
struct peak_gdump {
	char path[CORE_PATH_MAX];
	time_t mtime;  /* when jemalloc wrote it */
	double bytes;  /* its sampled total, unsampled (jeprof's estimate) */
	unsigned seen; /* this process's gdump dumps in the window */
};

/* Most gdump dumps parsed for one question: the highest by their
 * header's sampled total (unsampling per stack can reorder close ones). */
#define PEAK_GDUMPS_PARSE 4

/*
 * Of this process's (@p pid) kept prof_gdump dumps in @p dir (resolved
 * dump_dir) under @p prefix, at most @p window seconds old at @p now (0:
 * any), the one of the highest sampled total, into @p best. 1 when there
 * is one, 0 when none (or none can be read: a listing that fails is no
 * candidate, the snapshots still answer).
 */
int peak_gdump_best(const char *prefix, const char *dir, long pid,
    unsigned window, time_t now, struct peak_gdump *best);

#endif /* JM4LW_PEAK_H */

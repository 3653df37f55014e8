/*
 * sweep — the staging directories of processes that are gone
 * (core/sweep.c).
 */
#ifndef JM4LW_SWEEP_H
#define JM4LW_SWEEP_H

#include <time.h>

struct core_log;

/* Is @p name a staging directory's: ".<prefix>.<pid>.XXXXXX"? */
int dumps_stage_match(const char *prefix, const char *name, long *pid);

/* Remove the staging directories in @p dir of processes that are gone. */
void dumps_sweep_stages(const char *prefix, const char *dir,
    const struct core_log *log);

#endif /* JM4LW_SWEEP_H */

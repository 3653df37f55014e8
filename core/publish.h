/*
 * publish — a kept dump's way into dump_dir (core/publish.c). For core's
 * job files only.
 */
#ifndef JM4LW_PUBLISH_H
#define JM4LW_PUBLISH_H

#include "job.h"
#include "util.h"

/* A dump's last steps (JOB_DUMP_STEPS, core/job_dump.h): the dump published
 * into dump_dir when it is kept, then the answer. 0, or -1 with the job's
 * result saying why. */
int publish_dump(struct job *j);
int publish_answer(struct job *j);

/* Write @p dump's symbolized companion (jeprof's file, symbolized under
 * @p c) to @p out, a new file (0600) the caller renames where it belongs:
 * 0, or -1 with a line logged that names @p shown, and @p out removed. */
int publish_symbolized(struct profile_ctx *c, const char *dump, const char *out,
    const char *shown, const struct core_log *log);

#endif /* JM4LW_PUBLISH_H */

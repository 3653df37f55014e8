/*
 * stage — a dump's way to disk before it is published (core/stage.c): the
 * staging directory, the dump's target and disk guard, prof.dump into a
 * sealed memfd, the completeness check. For core's job files only.
 */
#ifndef JM4LW_STAGE_H
#define JM4LW_STAGE_H

#include <stddef.h>

#include "dumper.h"
#include "job.h"

/* The completeness check reads a profile backwards in windows this big. */
#define DUMP_TAIL_CHUNK 16384

/* A dump's steps (JOB_DUMP_STEPS, core/job_dump.h): the target, the staging
 * directory and a memfd; prof.dump, the lock window; the memfd sealed,
 * the profile checked whole and a kept one staged. 0, or -1 with the
 * job's result saying why. */
int stage_target(struct job *j);
int stage_prof_dump(struct job *j);
int stage_check(struct job *j);

/* The staging directory of dump_dir for a job that makes no dump: its
 * rendering goes there, where the dumps' do. 0, or -1 with the job's
 * result saying why (@p what names the job). */
int job_stage(struct job *j, const char *what, char *dir, size_t len);

/* Remove the staging directory this process made, if any. */
void dumper_unstage(struct dumper *d);

/* The staging directory @p d keeps, into @p buf: "" when it is cancelled
 * or the directory is another process's. */
void dumper_stage_of(struct dumper *d, char *buf, size_t len);

#endif /* JM4LW_STAGE_H */

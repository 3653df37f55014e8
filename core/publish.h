/*
 * publish — a kept dump's way into dump_dir (core/publish.c). For core's
 * job files only.
 */
#ifndef JM4LW_PUBLISH_H
#define JM4LW_PUBLISH_H

#include "job.h"
#include "util.h"

/*
 * A kept dump's second step: rename it from the staging directory (@p tmp)
 * into dump_dir (@p dir), its symbolized companion after it. 0, or -1
 * with the job's result saying why.
 */
int dump_publish(struct job *j, const char *tmp, const char *dir,
    const struct core_log *log);

/* A kept dump's last step: its view when it has one, the growth baseline,
 * and retention. */
void dump_answer(struct job *j, const char *dir, const struct core_log *log);

#endif /* JM4LW_PUBLISH_H */

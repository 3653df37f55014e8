/*
 * body — what a job answers with besides a path (core/body.c): a
 * rendering in an unnamed body file, or the dump itself. For core's job
 * files only.
 */
#ifndef JM4LW_BODY_H
#define JM4LW_BODY_H

#include <stdio.h>

#include "job.h"

/* Render the job's view of the profile at @p dump (or in the job's sealed
 * memfd, when it has one) into a body file. 0, or -1 with the job's
 * result saying why. */
int dump_render(struct job *j, const char *dump, const char *dir);

/* The raw view: the dump itself as the body, the job's memfd (taken) when
 * it has one, else the file at @p path. */
void dump_raw_body(struct job *j, const char *path, const char *dir);

/* A view's dump, which is not kept: the answer is its rendering (or the
 * dump itself), and the staging file @p tmp goes. */
void dump_answer_view(struct job *j, const char *tmp, const char *dir);

/* A view of a profile, the render hook of the kinds that dump, review or
 * render a kept dump (job_kind.render): a delta's difference, the dump
 * in the job's sealed memfd, or the file at @p dump. */
int dump_render_profile(struct job *j, const char *dump, FILE *f, char *err,
    size_t errlen);

/* The one step of a kind that makes no dump and needs nothing before its
 * rendering (job_symbols, the example word): the staging directory, then
 * job_kind.render into a body file. 0, or -1 with the job's result saying
 * why. */
int body_answer(struct job *j);

#endif /* JM4LW_BODY_H */

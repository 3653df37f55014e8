/*
 * body — what a job answers with besides a path (core/body.c): a
 * rendering in an unnamed body file, or the dump itself; and the jobs
 * that make no dump. For core's job files only.
 */
#ifndef JM4LW_BODY_H
#define JM4LW_BODY_H

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

/* The one step of each job that makes no dump, in job_kinds[]: 0, or -1
 * with the job's result saying why. JOB_SYMBOLS: name the addresses of
 * j->addrs; JOB_RENDER: a view of the kept dump j->path; JOB_LEAKS: the
 * suspects over this process's kept dumps; each into a body file. */
int body_symbols(struct job *j);
int body_render(struct job *j);
int body_leaks(struct job *j);
/* JOB_REVIEW: the view of the newest dump (its memfd, j->dump_fd), with
 * its age (j->review_age) said. */
int body_review(struct job *j);
/* JOB_RECENT: the records the lock window read (j->recent), parsed,
 * symbolized and rendered as text or JSON into a body file. */
int body_recent(struct job *j);

#endif /* JM4LW_BODY_H */

/*
 * result — what one job came to: a dump kept, a body to send, or a
 * refusal or failure with its reason (core/result.c). The faces render it.
 */
#ifndef JM4LW_RESULT_H
#define JM4LW_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "reason.h"
#include "util.h"
#include "view.h"

enum dump_status {
	DUMP_OK,
	DUMP_REFUSED, /* not now: rate, disk guard, busy, no profiling */
	DUMP_FAILED,  /* tried and failed */
};

/* What a job answers with: a view of a profile (the result's view, a row
 * of views[]), or an answer that is no view of one, which its kind
 * (job_kind.answer) or its request (job_req.answer) says and each face
 * shows its own way. */
enum dump_answer {
	DUMP_ANSWER_VIEW,   /* views[view]'s rendering of the profile */
	DUMP_ANSWER_PATH,   /* the dump kept: its path (jmfp, the schedule) */
	DUMP_ANSWER_DUMP,   /* the dump as written, not kept: its sealed
	                       memfd, a difference's first (the job service's) */
	DUMP_ANSWER_LEAKS,  /* leak suspects over the kept dumps (jmlk) */
	DUMP_ANSWER_RECENT, /* recent sampled allocations (jmrc) */
};

/* Where log lines of a job wait for the loop (the host's log callback is
 * only ever called there). */
#define DUMP_LOG_MAX 2048

/* What one dump came to. */
struct dump_result {
	enum dump_status status;
	enum core_reason why;     /* when not DUMP_OK */
	enum dump_answer answer;  /* the kind's, or its request's */
	enum dump_view view;      /* with DUMP_ANSWER_VIEW: which */
	int err;                  /* errno behind a failure, or 0 */
	double retry_after;       /* seconds, when refused for the rate */
	char path[CORE_PATH_MAX]; /* the dump kept, when DUMP_OK; "" for a
	                             view's dump, which is not kept */
	int kept;                 /* path was kept, whatever the status */
	int body;                 /* a view: its rendering is in body_fd */
	int body_fd;              /* an unnamed file, rewound; the loop
	                             sends and closes it */
	size_t body_len;
	char reason[CORE_PATH_MAX + 256]; /* one line, when not DUMP_OK */
	uint64_t deleted;                 /* dumps retention removed */
	int alloc_known; /* stats.allocated right after the dump */
	size_t alloc;
	int aged;          /* the body is an earlier job's (shared within
	                      dump_min_interval): @c age says how old */
	long age;          /* seconds, HTTP's Age */
	char folded[1024]; /* a collapsed view's wrappers (profile_folded) */
	char snap[256];    /* the snapshot a since= or at=peak view was drawn
	                      from, in words ("" otherwise): HTTP's
	                      X-Jm4lw-Base, for views without a heading */
	char log[DUMP_LOG_MAX]; /* "<level><line>\n" lines, for the loop */
	size_t loglen;
};

/* Is @p r's dump kept in dump_dir: its path the answer (jmfp), or a view
 * that keeps its dump (jmdf)? */
int dump_keeps(const struct dump_result *r);

/* Close a result's body, if it has one. */
void dump_result_release(struct dump_result *r);

/* For core's job files: fill a refusal or failure, its reason, its
 * errno and its line. */
void dump_why(struct dump_result *r, enum dump_status s, enum core_reason why,
    int err, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A failure's reason: a disk that filled is one of its own (HTTP's 503,
 * as for the disk guard). */
enum core_reason dump_fail_why(int e);

/* A job's log sink (struct core_log's fn, @p arg the struct dump_result):
 * lines wait in the result for the loop. */
void dump_log(void *arg, int level, const char *msg);

#endif /* JM4LW_RESULT_H */

/*
 * job — the work a word or a route hands to the module's worker, as data:
 * one kind a file (core/job_<kind>.c, a struct job_kind), each with its
 * admission on the loop, its steps on the worker (job_run touches only
 * the job), which of them holds jemalloc's profiling locks, and its
 * rendering; the result comes back to the loop (core_job_done). A face
 * fills one struct job_req, naming the kind by its address, and never
 * tests it.
 */
#ifndef JM4LW_JOB_H
#define JM4LW_JOB_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "cause.h"
#include "config_struct.h"
#include "dumper.h"
#include "fold.h"
#include "ops.h"
#include "profile.h"
#include "result.h"
#include "util.h"
#include "view.h"

struct core;
struct core_hints;

struct job_kind;

/* A line of a table that is there only with the build option
 * JM4LW_EXAMPLE_WORD (the example job word, core/job_example.c): one
 * line in each table, none without the option. */
#ifdef JM4LW_EXAMPLE_WORD
#define JM4LW_IF_EXAMPLE(...) __VA_ARGS__
#else
#define JM4LW_IF_EXAMPLE(...)
#endif

/* The kinds, each a const struct job_kind defined in a file of its own
 * (core/job_<kind>.c) and named once in core/job_kinds.h: declared here
 * for the faces, listed in job_table[]. A face or the shell names a kind
 * by its address (&job_dump), and NULL is no job: the word or route
 * answers on the spot. */
#define JOB_KIND(k) extern const struct job_kind k;
#include "job_kinds.h"
#undef JOB_KIND

/* Every kind, NULL-terminated (core/job_table.c). */
extern const struct job_kind *const job_table[];

/*
 * One request for a job, whatever its kind: each kind's admission reads
 * the members it needs and copies them into the job. Nothing here is kept
 * past core_job_admit().
 */
struct job_req {
	const struct job_kind *kind; /* NULL: no job */
	/* Who asks, in a refusal line: a word or a path; NULL for the
	 * schedule, whose reason (interval, growth) is @c why. */
	const char *who;
	const char *why;
	/* Why a dump it keeps is taken (its name says it); CAUSE_NONE:
	 * CAUSE_WORD, the words' entry (a host's jm4lw_reply_builtin). */
	enum dump_cause cause;
	/* Said after a kept dump's path in its log line, in parentheses
	 * (dump_on_memory's figures); NULL: nothing. */
	const char *detail;
	/* What to answer with: a view (views[view]), or the dump's path
	 * (jmfp, the schedule) or the dump itself (a difference's first);
	 * a kind with an answer of its own (job_kind.answer) ignores it. */
	enum dump_answer answer;
	enum dump_view view;
	int with_base;     /* a dump: compare with the last kept dump */
	const char *name;  /* a kept dump's name (a view of it); the path
	                      of jemalloc's dump (adopting it) */
	const char *base;  /* a kept dump to compare with */
	const char *addrs; /* a symbol lookup's request body */
	size_t addrs_len;
	int json; /* JSON, not text */
	/* A scrape's difference over this many seconds (?seconds=N); 0: the
	 * heap now. Part of what makes two requests one job. */
	unsigned seconds;
	/* With seconds: the first dump (DUMP_ANSWER_DUMP's body) to subtract
	 * from a fresh one; the admission takes a descriptor of its own. */
	int has_base_fd;
	int base_fd;
	/* Recent allocations: only records not freed, and at least this
	 * big. */
	int live_only;
	unsigned long long min_size;
	/* Growth: the snapshot about this many seconds ago; the peak: the
	 * window looked at (0: every snapshot). */
	unsigned since;
};

/*
 * What one kind's job keeps for itself between admission and its end;
 * only the kind's own file (and the steps it names) reads its member of
 * union job_state. A new kind with state of its own adds its struct here.
 */
struct job_symbols_state {
	char *addrs; /* the request body, owned */
	size_t len;
};
struct job_leaks_state {
	int json;     /* JSON, not text */
	long pid;     /* whose dumps */
	char **paths; /* theirs, on the worker */
	size_t n;
};
/* alloc_dump's JSON as it is written, up to RECENT_JSON_MAX
 * (core/recentjob.c's recent_dump; cut says it stopped there, or that
 * memory ran out: nomem too). */
struct recent_buf {
	char *buf;
	size_t len, cap;
	int cut, nomem;
};
/* alloc_dump's JSON as the lock window read it (owned, at most
 * RECENT_JSON_MAX bytes: cut says it stopped there), the filters, and
 * jemalloc's clock right after. */
struct job_recent_state {
	struct recent_buf b; /* alloc_dump's JSON (recent_dump) */
	int err;             /* the mallctl's answer */
	int json;
	int live_only;
	unsigned long long min_size;
	unsigned long long now;
};
struct job_adopt_state {
	long long mtime; /* the dump's (j->path), seconds */
};
struct job_review_state {
	long age; /* the dump's age in seconds */
};
/* A snapshot taken, growth since one, the heap at the peak: req.since;
 * profiling was active at admission; the history ring's highest
 * stats.allocated in the window and when (the peak: how close the
 * snapshot is to the true peak). */
struct job_snap_state {
	unsigned since;
	long picked;  /* the snapshot that answers, snap_pick's */
	long long t0; /* CLOCK_MONOTONIC ns the job began */
	int prof_active;
	int hist_known;
	unsigned long long hist_max;
	long long hist_max_at;
	/* The peak: jemalloc's prof_gdump dumps in the window (core/peak.c):
	 * how many, the highest one's sampled total and time (its path in
	 * the job's path), and whether it answers rather than the snapshot
	 * picked. */
	unsigned gdumps;
	double gdump_bytes;
	long long gdump_at;
	int gdump_wins;
};
union job_state {
	struct job_symbols_state symbols;
	struct job_leaks_state leaks;
	struct job_recent_state recent;
	struct job_adopt_state adopt;
	struct job_review_state review;
	struct job_snap_state snap;
};

/* One job, as handed to the worker: inputs copied, so the loop may reload
 * its configuration meanwhile. */
struct job {
	const struct core_ops *ops;
	struct jm4lw_config cfg;
	struct fold_list fold; /* fold_wrappers, as the policy parsed it */
	int scheduled;
	enum dump_cause cause; /* its kept dump's, in the name */
	char detail[256];      /* its req's, for the log line, or "" */
	int want_alloc;        /* read stats.allocated after (dump_on_growth) */
	const struct job_kind *kind;
	int symbolized; /* also write <dump>.symbolized (dump_symbolized) */
	int with_base;  /* compare with base (jmdf; HTTP's base=previous) */
	char base[CORE_PATH_MAX]; /* the module's previous kept dump, or "" */
	char path[CORE_PATH_MAX]; /* a kept dump to render, or jemalloc's */
	struct dumper *dumper;
	const struct core_hints *hints; /* the face's, for the rendering */
	unsigned seconds;               /* a scrape's difference, its req's */
	int has_base_fd; /* with seconds: the first dump, owned */
	int base_fd;
	union job_state state; /* the kind's own */
	/* How the job runs its kind's lock window, the step that holds
	 * jemalloc's profiling locks (prof.dump): @c run(@c ctx, fn, arg)
	 * runs fn(arg) at the host's priority and returns when it has (the
	 * shell's worker_locked); NULL: right here. */
	struct job_locked {
		void (*run)(void *ctx, void (*fn)(void *), void *arg);
		void *ctx;
	} locked;
	/* What a dump's steps hand each other (core/stage.c). */
	char dir[PATH_MAX];            /* dump_dir, resolved */
	char tmp[CORE_PATH_MAX + 128]; /* the dump in the staging directory */
	char mpath[32];                /* the memfd's /proc path */
	const char *dump_to;           /* where prof.dump writes: one of them */
	int dump_err;                  /* prof.dump's answer */
	int dump_fd; /* the dump in a memfd (sealed after prof.dump), or -1 */
	/* A lending kind's memfd after its steps, for core_job_done to keep
	 * as the newest dump (lent set; job_release closes one not taken),
	 * and when the dump began (CLOCK_MONOTONIC, at admission). */
	int lent;
	int lent_fd;
	struct timespec began;
	/* Sampling when a fresh dump was asked for (core_sampling); a kept
	 * dump's is not known (zero). */
	struct view_sampling sampling;
	struct profile_ctx prof; /* what its profile_* calls read (job_run) */
	struct dump_result res;
};

/* A step of a job on the worker: 0 on to the next, or -1 to stop with the
 * job's result saying why. */
typedef int (*job_step)(struct job *j);

#define JOB_STEPS_MAX 6

/*
 * One kind of job, everything the layers do with it, in a file of its own
 * (core/job_<kind>.c), as tmux's cmd-*.c each export a cmd_entry. Nothing
 * outside that file tests which kind a job is: what differs is a member
 * here.
 */
struct job_kind {
	const char *name; /* in its failure and cancellation lines */
	/* On the loop: admit @p req (one job at a time; a dump, its rate;
	 * refusals name @p k) and fill the job, 0; or -1 with the refusal
	 * in @p r. */
	int (*admit)(const struct job_kind *k, struct core *c, struct job *j,
	    struct dumper *d, const struct job_req *req, struct dump_result *r);
	job_step steps[JOB_STEPS_MAX]; /* on the worker, in order; NULL ends */
	/* The lock window: the step that holds jemalloc's profiling locks,
	 * run through job->locked at the host's priority while the rest
	 * yields to the host; NULL: none. */
	job_step locked;
	/* The answer (dump_render, core/body.c): the job's view of the
	 * profile at @p dump (NULL: the job's own input) into @p out, 0 or
	 * -1 (or a PROFILE_* answer) with @p err; NULL: the kind renders
	 * nothing. */
	int (*render)(struct job *j, const char *dump, FILE *out, char *err,
	    size_t errlen);
	/* What the job answers with: DUMP_ANSWER_VIEW (0), what the request
	 * asks (job_req.answer), or an answer of its own that no row of
	 * views[] names. */
	enum dump_answer answer;
	/* Back on the loop, a kept dump's bookkeeping when it is not one of
	 * ours (its counters, its log line, jmdf's base); NULL: ours, in
	 * core_job_done. */
	void (*done)(struct core *c, const struct job *j);
	/* Free what the job's state owns (job_release); NULL: nothing. */
	void (*release)(struct job *j);
	/* Fleet scrapers ask the same question many at once and every
	 * interval: the job service answers every request that
	 * job_req_joins() the running job with its one body, queues one
	 * that does not behind it, and answers the same request within
	 * dump_min_interval with the newest body instead of a dump. A
	 * person's jmfp is not such a kind: it keeps its refusals. @c same
	 * says whether two requests of the kind are one question. */
	int shares;
	int (*same)(const struct job_req *a, const struct job_req *b);
	/* Its outcome counts in the dumps' and profiles' figures (a question
	 * about kept dumps makes no dump and counts in none). */
	int counted;
	/* Its dump (the sealed memfd) is kept on the loop as the newest,
	 * so a view asked for within dump_min_interval is drawn from it
	 * (job_review) instead of refused by the rate. */
	int lends;
	/* Nobody waits for it (housekeeping: a snapshot, jemalloc's own
	 * dump taken in): a person's word asked meanwhile waits behind it
	 * rather than being refused as busy. */
	int unasked;
	/* A rendering of a profile, whose collapsed view folds wrappers:
	 * the answer says which were folded (X-Jm4lw-Folded). */
	int folds;
};

/* A failed dump, with the directory it was for (core's job files). */
#define JOB_FAIL(j, dir, e, why)                                               \
	dump_why(&(j)->res, DUMP_FAILED, dump_fail_why(e), (e),                \
	    "heap profile dump to %s failed: %s", (dir), (why))
#define JOB_FAIL_E(j, dir, e) JOB_FAIL(j, dir, e, strerror(e))

/*
 * On the loop: admit @p req by its kind's rules and fill @p j (with the
 * worker's state @p d) for job_run(). 0: go ahead, the job is marked as
 * running; -1: @p r says why not, to be answered at once.
 */
int core_job_admit(struct core *c, struct job *j, struct dumper *d,
    const struct job_req *req, struct dump_result *r);

/* Does @p req ask what the running job @p j answers (a sharing kind, the
 * same view and span)? Then its requester waits for @p j's body. */
int job_req_joins(const struct job *j, const struct job_req *req);

/* Are two requests one question (job_req_joins, before either runs)? A
 * sharing kind's @c same says. */
int job_req_same(const struct job_req *a, const struct job_req *b);

/* Is a job of this process out on the worker? */
int core_job_busy(struct core *c);

/* On the loop: let go of the newest dump a lending job left (see
 * job_kind.lends) when it is dump_min_interval old (@p all: now). The
 * seconds until it is, to look again; -1: none kept. */
double core_last_dump_expire(struct core *c, int all);
/* core_last_dump_expire(c, 1). */
void core_last_dump_forget(struct core *c);

/* Free what a job owns (its kind's release, a scrape's first dump). */
void job_release(struct job *j);

/* The heavy part, on any thread: the steps of the job's kind, its lock
 * window through j->locked. */
void job_run(struct job *j);

/* On the loop, after job_run(): counters (as its kind counts), last
 * dump, growth baseline, the job's log lines; a lent dump is taken. */
void core_job_done(struct core *c, struct job *j);

/* core_job_admit, job_run and core_job_done in a row, for callers without
 * a worker (tests, the fuzzer, a host's jm4lw_reply_builtin). */
void core_job_sync(struct core *c, struct dumper *d, const struct job_req *req,
    struct dump_result *r);

#endif /* JM4LW_JOB_H */

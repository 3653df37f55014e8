/*
 * job — the work a word or a route hands to the module's worker, as data:
 * one kind per row of job_kinds[] (core/job.c), each with its admission
 * on the loop, its steps on the worker (job_run touches only the job) and
 * which of them holds jemalloc's profiling locks; the result comes back
 * to the loop (core_job_done). A face fills one struct job_req and never
 * looks at the kind.
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

/* What a word or a route asks of the worker: a row of job_kinds[]. */
enum job_kind {
	JOB_NONE,    /* no job: the word or route answers on the spot */
	JOB_DUMP,    /* a dump, and its view: stage, publish, answer */
	JOB_SYMBOLS, /* name the addresses of a request body (/pprof/symbol) */
	JOB_RENDER,  /* a view of a kept dump (minus another) */
	JOB_LEAKS,   /* leak suspects over this process's kept dumps */
	JOB_SCRAPE,  /* a scraper's pprof: a dump, shared (job_entry.shares) */
	JOB_RECENT,  /* recent sampled allocations (prof_recent) */
	JOB_ADOPT,   /* a dump jemalloc wrote in dump_dir, taken as ours */
	JOB_REVIEW,  /* a view of the newest dump, within dump_min_interval */
	JOB_SNAP,    /* a profile snapshot into the in-memory ring */
	JOB_SINCE,   /* a dump minus the snapshot of req.since ago */
	JOB_PEAK,    /* the snapshot at the highest stats.allocated */
	JOB_KINDS
};

/*
 * One request for a job, whatever its kind: each kind's admission reads
 * the members it needs and copies them into the job. Nothing here is kept
 * past core_job_admit().
 */
struct job_req {
	enum job_kind kind;
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
	enum dump_view view; /* JOB_DUMP, JOB_RENDER: what to answer with */
	int with_base;       /* JOB_DUMP: compare with the last kept dump */
	const char *name;    /* JOB_RENDER: a kept dump's name; JOB_ADOPT:
	                        the path of jemalloc's dump */
	const char *base;    /* JOB_RENDER: the kept dump to compare with */
	const char *addrs;   /* JOB_SYMBOLS: the request body */
	size_t addrs_len;
	int json; /* JOB_LEAKS: JSON, not text */
	/* JOB_SCRAPE: a difference over this many seconds (?seconds=N);
	 * 0: the heap now. Part of what makes two requests one job. */
	unsigned seconds;
	/* With seconds: the first dump (DUMP_VIEW_BASE's body) to subtract
	 * from a fresh one; the admission takes a descriptor of its own. */
	int has_base_fd;
	int base_fd;
	/* JOB_RECENT: only records not freed, and at least this big. */
	int live_only;
	unsigned long long min_size;
	/* JOB_SINCE: the snapshot about this many seconds ago;
	 * JOB_PEAK: the window looked at (0: every snapshot). */
	unsigned since;
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
	enum job_kind kind;
	int symbolized; /* also write <dump>.symbolized (dump_symbolized) */
	int with_base;  /* compare with base (jmdf; HTTP's base=previous) */
	char base[CORE_PATH_MAX]; /* the module's previous kept dump, or "" */
	char path[CORE_PATH_MAX]; /* JOB_RENDER: the dump to render */
	char *addrs;              /* JOB_SYMBOLS: the request body, owned */
	size_t addrs_len;
	struct dumper *dumper;
	const struct core_hints *hints; /* the face's, for the rendering */
	int json;                       /* JOB_LEAKS: JSON, not text */
	long pid;                       /* JOB_LEAKS: whose dumps */
	unsigned seconds;               /* JOB_SCRAPE: its req's */
	int has_base_fd; /* with seconds: the first dump, owned */
	int base_fd;
	char **leaks; /* JOB_LEAKS: their paths, on the worker */
	size_t nleaks;
	/* JOB_RECENT: alloc_dump's JSON as the lock window read it (owned,
	 * at most RECENT_JSON_MAX bytes: cut says it stopped there), the
	 * filters, and jemalloc's clock right after. */
	char *recent;
	size_t recent_len, recent_cap;
	int recent_cut;
	int recent_err; /* the mallctl's answer */
	int live_only;
	unsigned long long min_size;
	unsigned long long recent_now;
	long long mtime; /* JOB_ADOPT: the dump's (path), seconds */
	/* JOB_SNAP, JOB_SINCE, JOB_PEAK: req.since; profiling was active at
	 * admission; the history ring's highest stats.allocated in the window
	 * and when (JOB_PEAK: how close the snapshot is to the true peak). */
	unsigned since;
	long snap; /* the snapshot that answers, snap_pick's */
	/* dump_render's rendering, when the kind has its own: the view
	 * into @p out, 0 or -1 (or a PROFILE_* answer) with @p err. */
	int (*render)(struct job *j, FILE *out, char *err, size_t errlen);
	long long snap_t0; /* CLOCK_MONOTONIC ns the job began */
	int prof_active;
	int hist_known;
	unsigned long long hist_max;
	long long hist_max_at;
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
	long review_age; /* JOB_REVIEW: the dump's age in seconds */
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

/* One kind of job: the master copy of everything the layers do with it. */
struct job_entry {
	const char *name; /* in its failure and cancellation lines */
	/* On the loop: admit @p req (one job at a time; a dump, its rate;
	 * refusals name @p k) and fill the job, 0; or -1 with the refusal
	 * in @p r (core/admit.c). */
	int (*admit)(const struct job_entry *k, struct core *c, struct job *j,
	    struct dumper *d, const struct job_req *req, struct dump_result *r);
	job_step steps[JOB_STEPS_MAX]; /* on the worker, in order; NULL ends */
	/* The lock window: the step that holds jemalloc's profiling locks,
	 * run through job->locked at the host's priority while the rest
	 * yields to the host; NULL: none. */
	job_step locked;
	/* Its outcome counts in the dumps' and profiles' figures (a question
	 * about kept dumps makes no dump and counts in none). */
	int counted;
	/* Fleet scrapers ask the same question many at once and every
	 * interval: the job service answers every request that
	 * job_req_joins() the running job with its one body, queues one
	 * that does not behind it, and answers the same request within
	 * dump_min_interval with the newest body instead of a dump. A
	 * person's jmfp is not such a kind: it keeps its refusals. */
	int shares;
	/* Back on the loop, a kept dump's bookkeeping when it is not one of
	 * ours (its counters, its log line, jmdf's base); NULL: ours, in
	 * core_job_done. */
	void (*done)(struct core *c, const struct job *j);
	/* Its dump (the sealed memfd) is kept on the loop as the newest,
	 * so a view asked for within dump_min_interval is drawn from it
	 * (JOB_REVIEW) instead of refused by the rate. */
	int lends;
};

extern const struct job_entry job_kinds[JOB_KINDS];

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

/* Are two requests one question (job_req_joins, before either runs)? */
int job_req_same(const struct job_req *a, const struct job_req *b);

/* Is a job of this process out on the worker? */
int core_job_busy(struct core *c);

/* On the loop: let go of the newest dump a lending job left (see
 * job_entry.lends) when it is dump_min_interval old (@p all: now). The
 * seconds until it is, to look again; -1: none kept. */
double core_last_dump_expire(struct core *c, int all);
/* core_last_dump_expire(c, 1). */
void core_last_dump_forget(struct core *c);

/* Free what a job owns (the symbol lookup's addresses). */
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

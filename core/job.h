/*
 * job — one job of the worker's (a dump, a symbol lookup, a kept dump's
 * view, the leak suspects): its admission on the loop, its run anywhere
 * (job_run touches only the job) and its end back on the loop.
 */
#ifndef JM4LW_JOB_H
#define JM4LW_JOB_H

#include <stddef.h>

#include "config_struct.h"
#include "dumper.h"
#include "ops.h"
#include "result.h"
#include "util.h"
#include "view.h"

struct core;
struct core_hints;

/* What the worker does with a job (job_run's table in core/job.c). */
enum job_kind {
	JOB_DUMP,    /* a dump, and its view: stage, publish, answer */
	JOB_SYMBOLS, /* name the addresses of job->addrs (/pprof/symbol) */
	JOB_RENDER,  /* a view of a kept dump, job->path (minus job->base) */
	JOB_LEAKS,   /* leak suspects over this process's kept dumps */
};

/* One job (a dump, a symbol lookup, a kept dump's view), as handed to
 * the worker: inputs copied, so the loop may reload its configuration
 * meanwhile. */
struct job {
	const struct core_ops *ops;
	struct jm4lw_config cfg;
	int scheduled;
	int want_alloc; /* read stats.allocated after (dump_on_growth) */
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
	char **leaks; /* JOB_LEAKS: their paths, on the worker */
	size_t nleaks;
	/* How the job runs the part that holds jemalloc's
	 * profiling locks (prof.dump): @c run(@c ctx, fn, arg) runs fn(arg)
	 * at the host's priority and returns when it has (the shell's
	 * worker_locked); NULL: right here. */
	struct job_locked {
		void (*run)(void *ctx, void (*fn)(void *), void *arg);
		void *ctx;
	} locked;
	int dump_fd; /* a view's dump, in a sealed memfd, or -1 */
	struct dump_result res;
};

/* A failed dump, with the directory it was for (core's job files). */
#define JOB_FAIL(j, dir, e, why)                                               \
	dump_why(&(j)->res, DUMP_FAILED, dump_fail_why(e), (e),                \
	    "heap profile dump to %s failed: %s", (dir), (why))
#define JOB_FAIL_E(j, dir, e) JOB_FAIL(j, dir, e, strerror(e))

/*
 * On the loop, before a dump for word @p who (NULL: the schedule):
 * profiling usable, no dump running, not sooner than dump_min_interval.
 * 0: go ahead (the dump is marked as begun); -1: @p r says why not.
 */
int core_dump_admit(struct core *c, const char *who, struct dump_result *r);

/* Fill @p j for a dump core_dump_admit() let through; @p with_base: the
 * view compares with the module's last kept dump (always for
 * DUMP_VIEW_DIFF). */
void core_dump_prepare(struct core *c, struct job *j, struct dumper *d,
    int scheduled, enum dump_view view, int with_base);

/* A symbol lookup for the @p len bytes of @p addrs (0x<hex> separated by
 * '+' or white space, as jeprof and go tool pprof post them): admitted
 * when the worker is free (no rate limit: jeprof asks right after its
 * dump), or -1 with @p r saying why not. On 0, @p j owns a copy. */
int core_symbols_admit(struct core *c, struct job *j, struct dumper *d,
    const char *addrs, size_t len, struct dump_result *r);

/* A view of the kept dump @p name (and minus @p base_name, if not NULL),
 * both names of our dumps in dump_dir: admitted when the worker is free,
 * or -1 with @p r saying why not (ENOENT: no such dump of ours). */
int core_render_admit(struct core *c, struct job *j, struct dumper *d,
    const char *name, const char *base_name, enum dump_view view,
    struct dump_result *r);

/* jmlk, /jemalloc/leaks: the leak suspects over this process's kept
 * dumps, as text or (@p json) JSON, when the worker is free; or -1 with
 * @p r saying why not. */
int core_leaks_admit(struct core *c, struct job *j, struct dumper *d, int json,
    struct dump_result *r);

/* Free what a job owns (the symbol lookup's addresses). */
void job_release(struct job *j);

/* The heavy part, on any thread, by the job's kind: a dump (prof.dump,
 * checks, rename, retention, its view), a symbol lookup or a rendering. */
void job_run(struct job *j);

/* On the loop, after job_run(): counters, last dump, growth baseline,
 * the job's log lines. */
void core_dump_done(struct core *c, const struct dump_result *r);

/* All three in a row, for callers without a worker (tests, fuzzer, a
 * host's jm4lw_reply_builtin). */
void core_dump_sync(struct core *c, struct dumper *d, const char *who,
    enum dump_view view, struct dump_result *r);

/* core_leaks_admit, job_run and core_dump_done in a row (a host's
 * jm4lw_reply_builtin("jmlk")). */
void core_leaks_sync(struct core *c, struct dumper *d, int json,
    struct dump_result *r);

#endif /* JM4LW_JOB_H */

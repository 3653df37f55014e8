/*
 * core — the engine: the allocator behind one ops table, the figures, one
 * dump, the dumps as a collection and the schedule policy. No sockets, no
 * libevent, no reply text: every call answers with a struct, and each face
 * (the four-letter words in proto/, later HTTP) renders it.
 *
 * Threads: struct core belongs to the module's event loop. The heavy part
 * of a dump, a symbol lookup or a rendering (job_run()) touches only its
 * struct job, so the module's worker thread runs it while the loop serves
 * other peers.
 */
#ifndef JM4LW_CORE_H
#define JM4LW_CORE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "bytes.h"
#include "config_struct.h"
#include "jm4lw.h"
#include "view.h"

/* The allocator, behind a table (jemalloc's own signatures). */
struct core_ops {
	int (*mallctl)(const char *name, void *oldp, size_t *oldlenp,
	    void *newp, size_t newlen);
	void (*stats_print)(void (*write_cb)(void *, const char *),
	    void *cbopaque, const char *opts);
	const char *version; /* jemalloc's version string */
	/* Optional (NULL in a fake): the fast path for a name used often. */
	int (*nametomib)(const char *name, size_t *mibp, size_t *miblenp);
	int (*bymib)(const size_t *mib, size_t miblen, void *oldp,
	    size_t *oldlenp, void *newp, size_t newlen);
};

/* The real jemalloc the process runs on; NULL if it runs on another
 * allocator (only possible in the preload agent's build). */
const struct core_ops *core_jemalloc(void);
/* core_jemalloc() only if the process's malloc is that jemalloc (a program
 * linked without -ljemalloc loads it but mallocs from libc); else NULL and
 * one line in @p err saying how to link or preload it. */
const struct core_ops *core_allocator(char *err, size_t errlen);

/* Where core sends lines no result carries (retention, sweeps). */
struct core_log {
	void (*fn)(void *arg, int level, const char *msg);
	void *arg;
};

void core_logf(const struct core_log *log, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Counters kept by the module and reported by mntr/srvr. */
struct core_stats {
	uint64_t conns_open;
	uint64_t conns_total;
	uint64_t conns_rejected; /* every slot held a peer being answered */
	uint64_t conns_evicted;  /* idle peers closed to make room */
	uint64_t conns_denied;   /* outside allow_from */
	uint64_t words_served;   /* every dispatched word */
	uint64_t words_unknown;
	uint64_t words_refused; /* not in the allow list */
	uint64_t dumps_written;
	uint64_t dumps_failed;
	uint64_t dumps_refused;   /* dump_min_interval, dump_min_free, busy */
	uint64_t dumps_scheduled; /* written by dump_interval/on_growth */
	uint64_t dumps_deleted;   /* by dump_keep/dump_max_bytes */
	uint64_t profiles_served; /* jmtp, jmcs, jmfg, jmdf answered */
	uint64_t http_requests;   /* requests the HTTP face took */
};

/* The typed parts of the configuration, parsed once when it is loaded. */
struct core_policy {
	unsigned long long growth_bytes; /* dump_on_growth in bytes, or 0 */
	unsigned growth_pct;             /* dump_on_growth in %, or 0 */
	int reset_lg;                    /* prof_reset_lg_sample; -1: keep */
	int symbolized;                  /* dump_symbolized */
};

#define CORE_PATH_MAX (PATH_MAX + 128)

/* A mallctl name looked up once: 0 not yet, 1 ready, -1 not here. */
struct ctl_mib {
	int state;
	size_t mib[4], len;
};

/*
 * What a line of the engine's says a person can do next names a face's
 * words, and the engine knows none: the words' face hands these in
 * (proto_init). NULL, or a member NULL: the line says less.
 */
struct core_hints {
	const char *base_kept_by;   /* who keeps a dump to compare with */
	const char *base_next;      /* what a view without a base says next */
	const char *sampling_on;    /* how to turn sampling on */
	const char *sampling_start; /* the same, once profiling is enabled */
};

/* --- history: the figures remembered (core/history.c, issue 23) ---- */

#define HISTORY_COLS 12
#define HISTORY_ROW (HISTORY_COLS + 1) /* the time, then the columns */
#define HISTORY_NONE UINT64_MAX        /* a value this process lacks */

/* A ring of rows of HISTORY_ROW values, owned by the loop. */
struct history {
	uint64_t *ring;      /* an anonymous mapping, cap rows */
	size_t cap, n, head; /* head: the next row written */
	unsigned interval;   /* seconds between rows */
	struct ctl_mib mib[HISTORY_COLS];
};

struct core;

/* One column: a size_t mallctl, a counter of struct core_stats (offset
 * + 1), or a function. */
struct history_col {
	const char *name;
	const char *ctl;
	size_t stat;
	int (*fn)(struct core *c, struct ctl_mib *m, uint64_t *v);
};

extern const struct history_col history_cols[HISTORY_COLS];

/* Bytes the ring of @p points rows takes. */
size_t history_bytes(size_t points);
/* The ring for @p points rows (0: none), kept if the size is unchanged;
 * 0, or -1 with errno. */
int history_setup(struct history *h, size_t points, unsigned interval);
void history_free(struct history *h);
/* Row @p i, 0 the oldest of h->n; NULL past the end. */
const uint64_t *history_row(const struct history *h, size_t i);

/* The engine's state, owned by the module's event loop. */
struct core {
	const struct core_ops *ops;
	const struct jm4lw_config *cfg; /* owned by the module */
	struct core_policy pol;
	const char *mode; /* srvr's Mode: line */
	struct core_stats st;
	struct core_log log;
	const struct core_hints *hints; /* the words' face's */
	struct timespec started;        /* CLOCK_MONOTONIC */
	struct timespec stats_at;       /* of the last coalesced epoch */
	int stats_fresh;
	/* Dumps, as the loop sees them. */
	struct timespec last_dump_at; /* CLOCK_MONOTONIC a dump last began */
	int dumped;                   /* last_dump_at is set */
	int dump_running;             /* a dump job is out on the worker */
	time_t last_dump_time;        /* wall clock of the last written dump */
	char last_dump[CORE_PATH_MAX];
	size_t alloc_at_dump; /* stats.allocated then (growth) */
	int alloc_known;      /* growth has a baseline */
	struct ctl_mib tpa;   /* thread.prof.active */
	struct history hist;  /* history_points rows (issue 23) */
	long dump_pid;        /* the process dump_running is about */
};

/* Initialise @p c with the allocator ops, configuration and policy. */
void core_init(struct core *c, const struct core_ops *ops,
    const struct jm4lw_config *cfg, const struct core_policy *pol);

/* Seconds since core_init(). */
long long core_uptime(const struct core *c);

/* --- ctl: mallctl through the ops table ------------------------------ */

int ctl_bool(const struct core_ops *ops, const char *name, int *v);
int ctl_size(const struct core_ops *ops, const char *name, size_t *v);
/* Refresh jemalloc's statistics; stats.* are stale without it. */
void ctl_epoch(const struct core_ops *ops);
/* The same at most once a millisecond, for words that only read. */
void ctl_epoch_coalesced(struct core *c);

/*
 * Switch the calling thread's own sampling (thread.prof.active) to @p on,
 * for the module's work on a host's thread: what the module allocates for
 * itself must not show up in the profiles it writes. Returns the previous
 * state, or -1 when there is none to switch (no profiling).
 */
int ctl_thread_sampling(const struct core_ops *ops, struct ctl_mib *m, int on);
int core_thread_sampling(struct core *c, int on);

/* jemalloc's version string ("" if unknown). */
const char *core_version(const struct core *c);
/* jemalloc's statistics through @p cb, text or (@p json) JSON. */
void core_stats_print(struct core *c, void (*cb)(void *, const char *),
    void *arg, int json);

/*
 * Why a call was refused or failed, in every result: a face picks its
 * status from it (HTTP: one table in http/reply.c), never from the
 * errno or the text. The text a person reads is the result's reason.
 */
enum core_reason {
	REASON_NONE,         /* done */
	REASON_BUSY,         /* a dump or another job is running */
	REASON_RATE,         /* dump_min_interval: too soon after the last */
	REASON_NO_SPACE,     /* dump_min_free, or the disk filled */
	REASON_PROF_UNBUILT, /* jemalloc built without --enable-prof */
	REASON_PROF_OFF,     /* opt.prof is false */
	REASON_NOT_ALLOWED,  /* not in the allow list */
	REASON_UNKNOWN,      /* no such word */
	REASON_NO_DUMP,      /* no such kept dump */
	REASON_NO_BASE,      /* nothing kept to compare with */
	REASON_BAD_REQUEST,  /* what was asked for is malformed */
	REASON_FAILED,       /* tried and failed, or could not even ask */
	REASON_NO_STATS,     /* jemalloc built with --disable-stats (doctor) */
	REASON_NO_SAMPLES, /* a view that needs samples, of a profile without */
	REASON_COUNT
};

/* Is heap profiling usable here? */
enum prof_state {
	PROF_READY,
	PROF_UNBUILT,    /* jemalloc built without --enable-prof */
	PROF_OFF,        /* opt.prof is false */
	PROF_UNREADABLE, /* opt.prof could not be read: *err says why */
};
enum prof_state core_prof_state(const struct core_ops *ops, int *err);

/* What to tell a person for a state that is not PROF_READY (with
 * @p hints' words, if any). */
const char *core_prof_reason(enum prof_state s, int err,
    const struct core_hints *hints, char *buf, size_t len);

/* The reason a state that is not PROF_READY refuses with. */
enum core_reason core_prof_why(enum prof_state s);

/* The outcome of a call that changes allocator state (jmep, jmdp, jmpg,
 * jmrs): ok, or a one-line reason. */
struct ctl_result {
	int ok;
	enum core_reason why; /* when not ok */
	int was;              /* jmep/jmdp: prof.active before */
	size_t lg;     /* jmrs: the lg_prof_sample passed to prof.reset */
	int sizes;     /* jmpg: resident before/after are known */
	size_t before; /* jmpg: stats.resident before the purge */
	size_t after;  /* and after */
	char reason[256];
};

/* prof.active = @p on. */
void core_set_active(struct core *c, int on, struct ctl_result *r);
/* Purge every arena (MALLCTL_ARENAS_ALL). */
void core_purge(struct core *c, struct ctl_result *r);
/* prof.reset at prof_reset_lg_sample. */
void core_reset(struct core *c, struct ctl_result *r);

/* Add one row of figures to the history ring, if there is one (the
 * history_interval timer, on the loop: an epoch and a few mallctls). */
void core_history_sample(struct core *c);

/* --- figures: one table every face renders -------------------------- */

enum figure_type {
	FIG_TEXT,    /* a string */
	FIG_COUNTER, /* only grows */
	FIG_GAUGE,   /* goes up and down */
	FIG_BOOL,    /* true/false; 1/0 as a metric */
	FIG_TIME,    /* seconds since the epoch; mntr shows UTC ISO 8601 */
};

/* One named value: its mntr key, its metric name (NULL: not exported as
 * a metric), what it means and how it is read. */
struct figure {
	const char *key;
	const char *metric;
	const char *help;
	enum figure_type type;
	const char *ctl; /* read with mallctl, or NULL */
	size_t stat;     /* else offset into struct core_stats + 1, or 0 */
	int (*fn)(const struct core *c, uint64_t *v, const char **s);
};

struct figure_value {
	int have; /* 0: unavailable here (no stats, no profiling) */
	uint64_t u;
	const char *s;
};

/* At least figures_count: room for a face's array of values. */
#define FIGURES_MAX 40

extern const struct figure figures[];
extern const size_t figures_count;

/* Read every figure into @p v (figures_count entries). */
void figures_read(struct core *c, struct figure_value *v);

/* The value of figure @p key in @p v, or NULL. */
const struct figure_value *figure_find(const struct figure_value *v,
    const char *key);

/* --- dump: one heap profile ----------------------------------------- */

enum dump_status {
	DUMP_OK,
	DUMP_REFUSED, /* not now: rate, disk guard, busy, no profiling */
	DUMP_FAILED,  /* tried and failed */
};

/* Where log lines of a job wait for the loop (the host's log callback is
 * only ever called there). */
#define DUMP_LOG_MAX 2048

/* What a dump job makes of its dump besides the file: enum dump_view,
 * the index of the views' table (prof/view.h). */

/* What the worker does with a job (job_run's table in core/dump.c). */
enum job_kind {
	JOB_DUMP,    /* a dump, and its view: stage, publish, answer */
	JOB_SYMBOLS, /* name the addresses of job->addrs (/pprof/symbol) */
	JOB_RENDER,  /* a view of a kept dump, job->path (minus job->base) */
	JOB_LEAKS,   /* leak suspects over this process's kept dumps */
};

/* Addresses one symbol lookup may ask about. */
#define PROFILE_ADDRS_MAX (1 << 20)

/* Dumps a leak question looks at, the newest (trend.h's
 * TREND_POINTS_MAX). */
#define LEAKS_DUMPS_MAX 1000

/* Rows of the text views (jmtp, jmdf): the top, at a glance. */
#define PROFILE_TOP_ROWS 30

/* What one dump came to. */
struct dump_result {
	enum dump_status status;
	enum core_reason why; /* when not DUMP_OK */
	enum dump_view view;
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
	char log[DUMP_LOG_MAX]; /* "<level><line>\n" lines, for the loop */
	size_t loglen;
};

/* Kept dumps waiting for their leak index at most; beyond, the oldest
 * wait for the first leak question (jmlk indexes what is missing). */
#define DUMPER_UNINDEXED_MAX 16

/* State that outlives one dump, touched only by whoever runs job_run(). */
struct dumper {
	unsigned long seq;
	char stage[CORE_PATH_MAX]; /* private dir jemalloc writes in, or "" */
	long stage_pid;            /* the process that made it */
	/* Issue 20: set by dumper_cancel() from the loop's thread while a
	 * job may run on the worker: stage no more, stop at the next step. */
	int cancelled;
	/* Kept dumps whose leak index is still to be written,
	 * after their answer (dumper_idle), oldest first; the process
	 * that kept them. */
	char *unindexed[DUMPER_UNINDEXED_MAX];
	size_t nunindexed;
	long unindexed_pid;
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

/* The completeness check reads a profile backwards in windows this big. */
#define DUMP_TAIL_CHUNK 16384

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

/* Close a result's body, if it has one. */
void dump_result_release(struct dump_result *r);

/* --- profile: a dump made readable (heapprof, symbolize, render) ---- */

/* Render @p view of the profile at @p dump into @p out with the view's
 * renderer (views[]), symbolized in this process; with @p with_base,
 * minus the one at @p base (for a view that always compares, "" is the
 * live heap with a line saying there is no earlier dump, and @p hints'
 * words; for the others, an error). 0, or -1 with one line in @p err.
 * On the worker: it reads files and allocates. */
int profile_render(enum dump_view view, const char *dump, int with_base,
    const char *base, const struct core_hints *hints, FILE *out, char *err,
    size_t errlen);

/* profile_render of the profile open at @p fd (@p name in messages),
 * which stays open: the worker's fresh dump in its sealed memfd. */
int profile_render_fd(enum dump_view view, int fd, const char *name,
    int with_base, const char *base, const struct core_hints *hints, FILE *out,
    char *err, size_t errlen);

/* profile_render's answer when there is no base to compare with: not a
 * failure of the dump, a request that cannot be met (REASON_NO_BASE). */
#define PROFILE_NO_BASE (-2)

/* profile_symbols' answer to a body that is no list of addresses
 * (REASON_BAD_REQUEST). */
#define PROFILE_BAD_ADDRS (-3)

/* profile_render's answer when a view that needs samples (collapsed
 * stacks) meets a profile with none: sampling was off, or just reset
 * (REASON_NO_SAMPLES). */
#define PROFILE_NO_SAMPLES (-4)

/* /pprof/symbol: "0x<addr> <names>" for each address of @p addrs (@p len
 * bytes, see core_symbols_admit), looked up in this process as call
 * addresses (callers' addresses come already adjusted), an inline chain
 * outermost first joined by "--", jeprof's reading. 0, or -1 with @p err,
 * or PROFILE_BAD_ADDRS (a token that is not an address, too many). */
int profile_symbols(const char *addrs, size_t len, FILE *out, char *err,
    size_t errlen);

/* Parse @p len bytes of addresses into @p out (at most @p max): how many,
 * or -1 with @p err. Pure, for the fuzzer. */
long profile_parse_addrs(const char *addrs, size_t len, uint64_t *out,
    size_t max, char *err, size_t errlen);

/* Write jeprof's symbolized profile of @p dump to @p out: the symbols
 * of every address, then the dump itself. 0, or -1 with @p err. */
int profile_symbolized(const char *dump, FILE *out, char *err, size_t errlen);

/* Where the profile_* calls on this thread (the worker's) find debug
 * info from now on: @p cfg's debug_dirs, symbolize_debuginfod and
 * symbolize_timeout (issue 21). A job's copy of the configuration, so
 * a reload meanwhile changes the next job only. */
void profile_debug_from(const struct jm4lw_config *cfg);

/* What the last profile_* call on this thread could not get for its
 * symbols (debuginfod's objects), one line, or NULL: for the formats
 * with no room for a remark, the worker logs it. */
const char *profile_debug_warning(void);

/* The leak index "<dump>.trend" of the kept dump at @p dump, written if it
 * is missing (taken at the dump's mtime; made in the staging directory
 * @p stage, then renamed in). 0 if it was there, 1 if written now, or -1
 * with @p err. On the worker. */
int profile_index_kept(const char *dump, const char *stage, char *err,
    size_t errlen);

/* jmlk, /jemalloc/leaks: the leak suspects over the kept dumps @p dumps
 * of one process (their indexes, made where missing through the staging
 * directory @p stage), as text or (@p json) JSON. 0; PROFILE_NO_BASE with
 * @p err when there are fewer than 3; -1 with @p err. On the worker. */
int profile_leaks(char *const *dumps, size_t n, const char *stage, int json,
    FILE *out, char *err, size_t errlen);

/* Which symbolizer this build has ("libdw" or "elf"), for conf/mntr. */
const char *profile_symbolizer(void);

/* Remove the staging directory this process made, if any, and forget
 * the dumps still to index. */
void dumper_fini(struct dumper *d);

/* On the worker, between jobs: write the leak index of one kept dump that
 * has none yet (dumper.unindexed), the oldest. 1 if more wait, 0 when none
 * does (or the dumper is cancelled). A failure is dropped: jmlk makes a
 * missing index. */
int dumper_idle(struct dumper *d);
/*
 * Cancel the job running on @p d, from another thread (jm4lw_free): its
 * staging directory and every file in it go now, and no new one is made,
 * so a process that exits next leaves nothing half-written. A prof.dump
 * under way cannot be stopped: it writes on into an unlinked file, and
 * the job then fails at its next step. Safe while the job runs; the job
 * block must outlive the call.
 */
void dumper_cancel(struct dumper *d);
/* Has dumper_cancel() been called on @p d? */
int dumper_cancelled(const struct dumper *d);

/* --- dumps: the collection ------------------------------------------ */

/* One of our dumps in dump_dir. */
struct dump_entry {
	char *name;
	long long size;
	struct timespec mtime;
};

/* jmls: our dumps, newest first. */
struct dump_list {
	char dir[PATH_MAX];
	size_t n;
	unsigned long long total;
	struct dump_entry *d;
	int err;       /* listing failed: errno, and dir says where */
	char why[512]; /* or, when dump_dir is not trusted, why */
};

/* Why listing failed, one line: l->why, or l->err's text. */
const char *dump_list_error(const struct dump_list *l);

/* Fill @p l; 0, or -1 with l->err. Free with dump_list_free(). */
int core_dump_list(const struct core *c, struct dump_list *l);
void dump_list_free(struct dump_list *l);

/* Apply dump_keep/dump_max_bytes in @p dir; @p newest always stays.
 * Returns how many dumps were deleted. */
uint64_t dumps_retain(const struct jm4lw_config *cfg, const char *dir,
    const char *newest, const struct core_log *log);

/* The paths of our dumps in @p dir by process @p pid, the newest @p max,
 * oldest first: 0 with *@p paths (free each and the array), or -1 with
 * errno. */
int dumps_of_pid(const char *prefix, const char *dir, long pid, size_t max,
    char ***paths, size_t *n);

/* Is @p name one of ours: "<prefix>.<pid>.<seq>.heap"? */
int dumps_match(const char *prefix, const char *name);

/* Is @p name a staging directory's: ".<prefix>.<pid>.XXXXXX"? */
int dumps_stage_match(const char *prefix, const char *name, long *pid);

/* Whether the process that wrote a file at @p since as pid @p pid is
 * gone: no such pid, or one that started later (the pid was reused). */
int dumps_pid_gone(long pid, time_t since);

/* Remove the staging directories in @p dir of processes that are gone. */
void dumps_sweep_stages(const char *prefix, const char *dir,
    const struct core_log *log);

/* dump_dir as an absolute path without trailing slashes, "%u" as the
 * effective uid; with @p real, resolved through realpath() when it exists.
 * -1 and errno on error. */
int core_dump_dir(const char *dump_dir, int real, char *buf, size_t len);

/* dump_dir where dumps may go: canonical, made (0700) if it names "%u"
 * and is missing, and trusted (core_dump_dir_trusted). 0; -1 with errno;
 * -2 when not trusted, with a one-line @p why. */
int core_dump_dir_safe(const char *dump_dir, char *buf, size_t len, char *why,
    size_t whylen);

/* Is the absolute directory @p dump_dir, and every directory and symlink
 * on the way to it, owned by us or root and not writable by others unless
 * sticky? 0, or -1 with a one-line @p why. */
int core_dump_dir_trusted(const char *dump_dir, char *why, size_t len);

/* --- schedule policy ------------------------------------------------ */

/* Is a dump_on_growth dump due? 1 yes, 0 no (or growth is off). */
int core_growth_due(struct core *c);

/* Take a new baseline for growth (a reload turned it on). */
void core_growth_baseline(struct core *c);

/* --- small shared helpers ------------------------------------------- */

/* Is @p c white space (as inih strips it)? */
int is_blank(int c);

/* Cut the white space around s[0..*n); returns the new start. */
const char *trim(const char *s, size_t *n);

/* The next item of a comma-separated list, blanks around it trimmed.
 * Returns its start (length in *n) and moves *s past the comma; *s is
 * NULL after the last item. */
const char *list_next(const char **s, size_t *n);

/* @p s (@p n bytes) in double quotes for a message: bytes that are not
 * printable ASCII as \xNN and a long value cut with "...". */
const char *quote(char *buf, size_t len, const char *s, size_t n);

/* --- doctor: where resident memory goes (issue 22) ------------------- */

/* Arenas read one by one; the rest are summed as one "other" row. */
#define DOCTOR_ARENAS_MAX 64
/* Small size classes read (jemalloc has 36 with 4 KiB pages, 39 with 64
 * KiB); classes beyond are left out of the table, not of the totals. */
#define DOCTOR_BINS_MAX 64
/* The worst size classes and arenas shown. */
#define DOCTOR_WORST 5
#define DOCTOR_ADVICE_MAX 12
/* The arena index of the "other" row. */
#define DOCTOR_OTHER UINT_MAX

/* The parts resident memory is split into; they add up to resident. */
enum doctor_part {
	DOCTOR_PROGRAM,    /* allocated, less the two below */
	DOCTOR_PROFILING,  /* sampled small objects promoted to 16 KiB */
	DOCTOR_TCACHE,     /* allocated, but idle in thread caches */
	DOCTOR_SMALL_FRAG, /* free regions inside small-class slabs */
	DOCTOR_LARGE_PAD,  /* large extents past what was allocated */
	DOCTOR_DIRTY,      /* freed pages not yet given back (pdirty) */
	DOCTOR_METADATA,   /* jemalloc's base allocator */
	DOCTOR_RESIDUE,    /* what the figures do not explain */
	DOCTOR_PARTS
};

/* A part's name for every face: its JSON/metric key and a label. */
struct doctor_part_name {
	const char *key;
	const char *label;
};
extern const struct doctor_part_name doctor_parts[DOCTOR_PARTS];

/* One small size class (merged over arenas, or of one arena). */
struct doctor_bin {
	unsigned index;
	size_t size;       /* arenas.bin.<j>.size */
	unsigned nregs;    /* regions per slab */
	size_t slab_size;  /* bytes per slab */
	uint64_t curregs;  /* regions in use */
	uint64_t curslabs; /* slabs */
	uint64_t waste;    /* curslabs * slab_size - curregs * size */
	double util;       /* curregs / (curslabs * nregs); 1 when empty */
};

/* One arena (or the sum of those past DOCTOR_ARENAS_MAX). */
struct doctor_arena {
	unsigned index;   /* DOCTOR_OTHER for the sum */
	unsigned narenas; /* arenas in this row: 1, or the others' count */
	unsigned nthreads;
	long dirty_decay_ms; /* -1: never decays; (other: the max) */
	long muzzy_decay_ms;
	uint64_t allocated; /* small + large */
	uint64_t active;
	uint64_t resident;
	uint64_t dirty;
	uint64_t muzzy;
	uint64_t frag; /* active - allocated: slabs' free regions and
	                  large padding */
	uint64_t tcache;
	uint64_t waste; /* frag + dirty: what ranks arenas */
};

/* What an advice line says; faces word it (proto_doctor_advice). */
enum doctor_advice_kind {
	ADVICE_PURGE,      /* jmpg returns ~gain now */
	ADVICE_DECAY,      /* dirty_decay_ms is long: value ms */
	ADVICE_BACKGROUND, /* background_thread:true */
	ADVICE_NARENAS,    /* value arenas of count are idle */
	ADVICE_SIZE_CLASS, /* size class @size at @util */
	ADVICE_TCACHE,     /* thread caches hold much */
	ADVICE_SAMPLING,   /* lg_prof_sample value -> value2 */
	ADVICE_KINDS
};

/* One advice line: what, the figure that justifies it, the gain. */
struct doctor_advice {
	enum doctor_advice_kind kind;
	uint64_t figure; /* the bytes that justify it */
	uint64_t gain;   /* expected bytes back */
	long value;      /* decay ms, lg_prof_sample, arenas... */
	long value2;     /* the value advised */
	size_t size;     /* ADVICE_SIZE_CLASS: the class */
	double util;     /* ADVICE_SIZE_CLASS: its utilization */
	uint64_t count;  /* regions, arenas */
};

/* The diagnosis: figures in bytes, read after one epoch. */
struct doctor {
	int ok;
	enum core_reason why; /* when not ok */
	char reason[256];
	size_t page;
	uint64_t allocated, active, resident, mapped, retained;
	uint64_t metadata, base, internal, metadata_thp;
	uint64_t tcache, dirty, muzzy, small_frag, large_pad;
	int64_t residue;             /* resident minus every part explained */
	uint64_t part[DOCTOR_PARTS]; /* add up to resident (residue >= 0) */
	uint64_t purge_gain;         /* what jmpg would return now: dirty */
	int background_thread;       /* background_thread is on */
	unsigned narenas;            /* initialized arenas */
	unsigned narenas_opt;        /* opt.narenas */
	/* Profiling's own cost. */
	int prof; /* opt.prof */
	int prof_active;
	int prof_exact; /* from prof.stats (opt.prof_stats) */
	size_t lg_sample;
	uint64_t prof_samples; /* small objects sampled, live */
	uint64_t prof_cost;    /* bytes they hold beyond their size */
	/* Size classes, merged over every arena. */
	struct doctor_bin bins[DOCTOR_BINS_MAX];
	unsigned nbins;
	unsigned worst_bins[DOCTOR_WORST]; /* indexes into bins, by waste */
	unsigned nworst_bins;
	/* Arenas: the first DOCTOR_ARENAS_MAX, then "other". */
	struct doctor_arena arenas[DOCTOR_ARENAS_MAX + 1];
	unsigned narena_rows;
	unsigned worst_arenas[DOCTOR_WORST]; /* indexes into arenas */
	unsigned nworst_arenas;
	struct doctor_advice advice[DOCTOR_ADVICE_MAX];
	unsigned nadvice;
};

/* The diagnosis of the allocator behind @p ops, after an epoch (@p
 * epoch: refresh first). Bounded: DOCTOR_ARENAS_MAX arenas x
 * DOCTOR_BINS_MAX classes at most. d->ok, or d->why and d->reason. */
void doctor_diagnose(const struct core_ops *ops, int epoch, struct doctor *d);

/* The same for the module's allocator (a coalesced epoch: jmdr, the
 * route and /metrics read one snapshot at most once a millisecond). */
void core_doctor(struct core *c, struct doctor *d);

#endif /* JM4LW_CORE_H */

/*
 * profile — a dump made readable, for the jobs (core/profile.c): the
 * pipeline (heapprof, symbolize, render) chained, on the worker.
 */
#ifndef JM4LW_PROFILE_H
#define JM4LW_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config_struct.h"
#include "fold.h"
#include "reason.h"
#include "view.h"

/* Addresses one symbol lookup may ask about. */
#define PROFILE_ADDRS_MAX (1 << 20)

/* Dumps a leak question looks at, the newest (trend.h's
 * TREND_POINTS_MAX). */
#define LEAKS_DUMPS_MAX 1000

/* Rows of the text views (jmtp, jmdf): the top, at a glance. */
#define PROFILE_TOP_ROWS 30

/* The allocation wrappers the last collapsed view would have folded
 * (its raw stacks do not), as HTTP's X-Jm4lw-Folded carries them: ';'
 * between names, '%' and bytes outside printable ASCII as %XX; "" for
 * none or another view. */
#define PROFILE_FOLDED_MAX 1024

struct frag_stats;

/*
 * What the profile_* calls of one job read, and what they leave for it:
 * built by the caller from the job's copy of the configuration (so a
 * reload meanwhile changes the next job only) and carried by the job.
 * Self-contained (no pointer into itself), used by one thread at a time.
 */
struct profile_ctx {
	/* Where debug info is looked for: debug_dirs, symbolize_debuginfod
	 * and symbolize_timeout; with debug unset, sym_new_self's own. */
	int debug;
	char dirs[sizeof(((struct jm4lw_config *)0)->debug_dirs)];
	int debuginfod;
	unsigned timeout;
	struct fold_list fold; /* fold_wrappers: what the ranked views fold */
	/* opt.prof_accum: 1 on, -1 off, 0 not known; without it pprof says
	 * so rather than serve zeros as allocations. */
	int accum;
	/* The state of sampling (core_sampling), so an empty or partial
	 * profile says why in every format. */
	struct view_sampling sampling;
	const struct core_hints *hints; /* the face's words, or NULL */
	/* The bins the fragmentation views render with (core_frag_begin),
	 * read beside the dump, or NULL. */
	const struct frag_stats *frag;
	/* Left by the last call: what the symbolizer could not get
	 * (debuginfod's objects), one line or "", for the formats with no
	 * room for a remark (the worker logs it); the wrappers a collapsed
	 * view would have folded. */
	char warn[512];
	char folded[PROFILE_FOLDED_MAX];
};

/* @p c for a job: @p cfg's places for debug info (NULL: none set), the
 * fold list @p fold (NULL: the defaults); accum, sampling, hints and
 * frag zero, for the caller to fill. */
void profile_ctx_init(struct profile_ctx *c, const struct jm4lw_config *cfg,
    const struct fold_list *fold);

/* Which profile a rendering reads and what it compares with; callers
 * fill it in this order. */
struct profile_src {
	enum dump_view view;
	/* The dump: open on fd (it stays open; dump names it in messages),
	 * or with fd -1 the file at the path dump. */
	const char *dump;
	int fd;
	/* Minus a base: open on base_fd (base, if any, names it in the
	 * heading), or with base_fd -1 the file at the path base; for a
	 * view that always compares, "" is the live heap with a line saying
	 * there is no earlier dump (and the hints' words). */
	int with_base;
	const char *base;
	int base_fd;
};

/* Render @p s's view of its profile into @p out with the view's renderer
 * (views[]), symbolized in this process. 0, or -1 with one line in
 * @p err, or PROFILE_NO_BASE, PROFILE_NO_SAMPLES. On the worker: it reads
 * files and allocates. */
int profile_render(struct profile_ctx *c, const struct profile_src *s,
    FILE *out, char *err, size_t errlen);

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
 * bytes, as admit_symbols takes them), looked up in this process as call
 * addresses (callers' addresses come already adjusted), an inline chain
 * outermost first joined by "--", jeprof's reading. 0, or -1 with @p err,
 * or PROFILE_BAD_ADDRS (a token that is not an address, too many). */
int profile_symbols(struct profile_ctx *c, const char *addrs, size_t len,
    FILE *out, char *err, size_t errlen);

/* Parse @p len bytes of addresses into @p out (at most @p max): how many,
 * or -1 with @p err. Pure, for the fuzzer. */
long profile_parse_addrs(const char *addrs, size_t len, uint64_t *out,
    size_t max, char *err, size_t errlen);

/* Write jeprof's symbolized profile of @p dump to @p out: the symbols
 * of every address, then the dump itself. 0, or -1 with @p err. */
int profile_symbolized(struct profile_ctx *c, const char *dump, FILE *out,
    char *err, size_t errlen);

/* What profile_recent shows: the reader's state, the filters, the clock. */
struct profile_recent_args {
	int cut;  /* the reader stopped at RECENT_JSON_MAX */
	int json; /* /jemalloc/recent's JSON, not jmrc's text */
	int live_only;
	unsigned long long min_size;
	unsigned long long now_ns; /* jemalloc's clock when it was read */
};

/* alloc_dump's @p len bytes of JSON at @p buf, parsed, symbolized in
 * this process (its mappings now) and rendered (prof/recent.h) to
 * @p out. 0, or -1 with one line in @p err. */
int profile_recent(struct profile_ctx *c, const char *buf, size_t len,
    const struct profile_recent_args *a, FILE *out, char *err, size_t errlen);

/* The leak index "<dump>.trend" of the kept dump at @p dump, written if it
 * is missing or made under another fold list than @p fold (taken at the
 * dump's mtime; made in the staging directory @p stage, then renamed in).
 * 0 if it was there, 1 if written now, or -1 with @p err. On the worker. */
int profile_index_kept(const struct fold_list *fold, const char *dump,
    const char *stage, char *err, size_t errlen);

/* jmlk, /jemalloc/leaks: the leak suspects over the kept dumps @p dumps
 * of one process (their indexes, made where missing through the staging
 * directory @p stage, under @p c's fold list), as text or (@p json)
 * JSON. 0; PROFILE_NO_BASE with @p err when there are fewer than 3; -1
 * with @p err. On the worker. */
int profile_leaks(struct profile_ctx *c, char *const *dumps, size_t n,
    const char *stage, int json, FILE *out, char *err, size_t errlen);

/* Which symbolizer this build has ("libdw" or "elf"), for conf/mntr. */
const char *profile_symbolizer(void);

#endif /* JM4LW_PROFILE_H */

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

/* profile_render_fd minus the dump open at @p base_fd (a delta's first,
 * in its memfd), not a file by name. */
int profile_render_delta(enum dump_view view, int fd, int base_fd,
    const struct core_hints *hints, FILE *out, char *err, size_t errlen);

/* profile_render_delta with the base named @p base_name in the heading
 * (an in-memory snapshot's profile, its mtime the snapshot's time). */
int profile_render_since(enum dump_view view, int fd, int base_fd,
    const char *base_name, const struct core_hints *hints, FILE *out, char *err,
    size_t errlen);

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
int profile_symbols(const char *addrs, size_t len, FILE *out, char *err,
    size_t errlen);

/* Parse @p len bytes of addresses into @p out (at most @p max): how many,
 * or -1 with @p err. Pure, for the fuzzer. */
long profile_parse_addrs(const char *addrs, size_t len, uint64_t *out,
    size_t max, char *err, size_t errlen);

/* Write jeprof's symbolized profile of @p dump to @p out: the symbols
 * of every address, then the dump itself. 0, or -1 with @p err. */
int profile_symbolized(const char *dump, FILE *out, char *err, size_t errlen);

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
int profile_recent(const char *buf, size_t len,
    const struct profile_recent_args *a, FILE *out, char *err, size_t errlen);

/* Where the profile_* calls on this thread (the worker's) find debug
 * info from now on: @p cfg's debug_dirs, symbolize_debuginfod and
 * symbolize_timeout. A job's copy of the configuration, so
 * a reload meanwhile changes the next job only. */
void profile_debug_from(const struct jm4lw_config *cfg);

/* The allocator's wrappers the ranked views on this thread fold into
 * their callers from now on (fold_wrappers, fold.h): a job's copy. */
void profile_fold_from(const struct fold_list *fold);

/* The allocation wrappers the last collapsed view on this thread would
 * have folded (its raw stacks do not), as HTTP's X-Jm4lw-Folded carries
 * them: ';' between names, '%' and bytes outside printable ASCII as
 * %XX; "" for none or another view. */
#define PROFILE_FOLDED_MAX 1024
const char *profile_folded(void);

/* Whether the process accumulates allocation totals (opt.prof_accum: 1
 * on, -1 off, 0 not known), for the pprof views on this thread: without
 * them pprof says so rather than serve zeros as allocations. */
void profile_accum_from(int accum);

/* The state of sampling for the profile_* calls on this thread from now
 * on (the job's, core_sampling), so an empty or partial profile says why
 * in every format. */
void profile_sampling_from(const struct view_sampling *s);

/* The bin statistics the fragmentation views on this thread render with
 * (core/frag.c reads them beside the dump), or NULL after. */
struct frag_stats;
void profile_frag_from(const struct frag_stats *st);

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

#endif /* JM4LW_PROFILE_H */

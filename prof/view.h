/*
 * view — what a profile is shown as, one const table: each view's format
 * name, content type, the word whose allow-list entry governs it, whether
 * its dump is kept, whether it compares with an earlier dump, and the
 * renderer that draws it. A new output format is a renderer of its own
 * (prof/render*.c) and a row here; the words, the HTTP face, the engine
 * and jm4lw-prof each look it up.
 *
 * Only types and the table: core/ (the engine) and the faces include it,
 * and the renderers it names sit below it, so nothing here calls back up.
 */
#ifndef JM4LW_VIEW_H
#define JM4LW_VIEW_H

#include <stddef.h>
#include <stdio.h>

struct frag_stats;
struct heap_profile;
struct symbolizer;
struct fold_list;

/* The views, the index of views[]. */
enum dump_view {
	DUMP_VIEW_COLLAPSED,    /* jmcs: collapsed stacks */
	DUMP_VIEW_RAW,          /* the heap_v2 dump itself (HTTP, jeprof) */
	DUMP_VIEW_SVG,          /* jmfg: a flame graph */
	DUMP_VIEW_PPROF,        /* gzipped pprof, thread labels (HTTP) */
	DUMP_VIEW_TEXT,         /* jmtp: the top of the heap, jeprof --text */
	DUMP_VIEW_SYMBOLIZED,   /* jeprof's symbolized profile (HTTP) */
	DUMP_VIEW_DIFF,         /* jmdf: kept, and its growth since the last */
	DUMP_VIEW_PPROF_ALLOCS, /* /debug/pprof/allocs: pprof, alloc_space
	                           first in the tools' eyes, as Go's */
	DUMP_VIEW_DOT,          /* jmcg: the call graph in Graphviz's dot */
	DUMP_VIEW_CALLGRAPH,    /* the call graph laid out by libgvc, SVG */
	DUMP_VIEW_THREADS,      /* jmth: the live heap by thread */
	DUMP_VIEW_PPROF_HEAP,   /* /debug/pprof/heap: pprof without thread
	                           labels, for fleet scrapers */
	DUMP_VIEW_FRAG,         /* jmfr: fragmentation by site (prof/frag.c) */
	DUMP_VIEW_FRAG_JSON,    /* the same as JSON */
	DUMP_VIEW_FRAG_FLAME,   /* its waste as collapsed stacks */
	DUMP_VIEW_COUNT
};

/* Does a view compare with an earlier dump? */
enum view_base {
	VIEW_BASE_NEVER,  /* it carries a dump as it is */
	VIEW_BASE_MAY,    /* when asked (base=previous, --base) */
	VIEW_BASE_ALWAYS, /* jmdf: with the last kept dump, or says why not */
};

/* Whether the process was sampling when it dumped: what an empty or
 * partial profile says about itself (render_sampling_note). */
enum sampling_state {
	SAMPLING_UNKNOWN,  /* offline: only the dump's own numbers speak */
	SAMPLING_OFF,      /* opt.prof is false: nothing can be sampled */
	SAMPLING_INACTIVE, /* prof.active is false: nothing is sampled */
	SAMPLING_ACTIVE,   /* prof.active is true */
};

/* The state of sampling when a profile was taken, one struct every
 * renderer gets, so each format says the same thing its own way. */
struct view_sampling {
	enum sampling_state state;
	/* Wall clock (ns since the epoch) of the last change of
	 * prof.active or of the last prof.reset, whichever came later: no
	 * allocation before it is in the profile. 0: not known. */
	long long since_ns;
	int since_reset; /* since_ns is a prof.reset's, not a switch */
	int from_start;  /* as it has been since the process started */
	unsigned long long interval; /* 2^lg_prof_sample bytes; 0: unknown */
	const char *turn_on;    /* how to turn sampling on ("jmep"), or NULL */
	const char *start_with; /* how to start sampling once profiling is
	                           on ("send jmep ..."), or NULL */
	/* The profile is a difference from another process's dump (the
	 * base's pid is not the dump's): a set flag adds a warning. */
	int other_base;
};

/* What a renderer is told besides the profile and its symbolizer. */
struct view_args {
	int objects;        /* count objects instead of bytes */
	size_t limit;       /* rows of a table; 0: all */
	const char *title;  /* a flame graph's heading; NULL: its default */
	const char *binary; /* the main program; NULL: as the profile says */
	const char *raw;    /* the profile's own text after the symbols */
	size_t rawlen;
	/* opt.prof_accum of the process that dumped: 1 on, -1 off, 0 not
	 * known (offline: the dump's own numbers say). */
	int accum;
	/* Wall clock of the dump (ns since the epoch; 0: not known), and
	 * for a difference the span since its base's (0: none). */
	long long time_ns, duration_ns;
	/* The allocator's wrappers to fold in the ranked views (text,
	 * threads); NULL: the defaults (fold.h). */
	const struct fold_list *fold;
	/* Was the process sampling, since when, at what interval. */
	struct view_sampling sampling;
	/* The process's own name (its argv[0]'s), when the profile is this
	 * process's and the name is not its mapped file's (Debian's
	 * redis-server is a link to redis-check-rdb); NULL: the file's
	 * (offline, a dump has no name). */
	const char *process;
	/* A path that started it and is the mapped file (the link), for
	 * pprof's main Mapping; NULL: none found. */
	const char *process_path;
	/* The fragmentation views' bin statistics (core/frag.c), read
	 * beside the dump; NULL elsewhere. */
	const struct frag_stats *frag;
};

/*
 * Why profile @p hp (rendered with @p a) is empty or partial, as one line
 * a person can act on, into @p buf: profiling off, sampling inactive
 * (since when), no sample yet (the heap is below one sample interval),
 * sampling active only since a time (what came before is not in it), a
 * base of another process, or for an offline dump without samples "no
 * samples in this dump". NULL when there is nothing to say. Every format
 * shows it its own way (view.c's renderers). @p hp NULL: about no profile
 * in particular (/jemalloc/status), so never "no sample yet".
 */
const char *view_sampling_note(const struct heap_profile *hp,
    const struct view_args *a, char *buf, size_t len);

/* Is @p hp empty: no bytes (objects) in use, and for a difference no
 * change? */
int view_profile_empty(const struct heap_profile *hp);

/* The expected relative error (95%) of @p hp's unsampled total: about
 * u_bytes / period samples, 1.96 / sqrt(n); 0 when not known (a
 * difference, no samples, no period). */
double view_sampling_error(const struct heap_profile *hp);

/* "sampled estimate, ±N% at 95%", what a profile's total is beside an
 * exact figure, into @p buf; NULL when view_sampling_error has none. */
const char *view_estimate_of(const struct heap_profile *hp, char *buf,
    size_t len);

/* The longest view_program's name. */
#define VIEW_PROGRAM_MAX 4400

/* The main program as a view names it: "NAME (FILE)" with the
 * process's own name, else the file the profile maps (or @p a's
 * binary, or a symbolized file's own); NULL if none. In @p buf. */
const char *view_program(const struct heap_profile *hp,
    const struct view_args *a, char *buf, size_t len);

/* A view's renderer: one of prof/render*.c's, in one shape. 0, or -1
 * with errno. */
typedef int (*view_render_fn)(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a);

/* A view's heading line, what the table below is, for a profile
 * rendered with @p a (its limit: the rows), minus the base named @p base
 * when @p have_base. */
typedef void (*view_heading_fn)(FILE *out, const struct view_args *a,
    int have_base, const char *base);

struct view {
	const char *name;  /* format=NAME, -f NAME; NULL: a word's own */
	const char *ctype; /* its HTTP Content-Type */
	const char *word;  /* whose allow-list entry governs it on HTTP */
	int keeps;         /* its dump is kept in dump_dir */
	enum view_base base;
	int comments;          /* may carry "# " lines above the rendering */
	int needs_samples;     /* an empty profile is an error, not an answer */
	int carries_dump;      /* the dump itself follows the rendering,
	                          its stacks cut as render_dump cuts them */
	view_render_fn render; /* NULL: no rendering, only the dump (if it
	                          carries it) */
	const char *suffix;    /* a download's file name ends so (the page) */
	int one_process;       /* its rows are one process's (threads): a
	                          merge of many would name nobody */
	view_heading_fn heading; /* with comments: its first line; NULL:
	                            none */
};

extern const struct view views[DUMP_VIEW_COUNT];

/* The view named @p name (format=, -f), or -1. */
int view_by_name(const char *name);

/* "a, b or c": the names of the views that @p with_render (1: only those
 * drawn from a parsed profile) into @p buf. */
const char *view_names(char *buf, size_t len, int with_render);

/* Can a merge of many processes' dumps (jm4lw-prof --merge) draw view
 * @p v: a rendering that carries no one dump and is no one process's. */
int view_merges(int v);

/* The names of the views @p pick takes (NULL: every named one) into
 * @p buf, view @p first's first when taken (-1: none), then the table's
 * order, joined by @p sep, the last by @p last: what usage texts, route
 * help and error lines list, so a new row shows in each. */
const char *view_join(char *buf, size_t len, int (*pick)(int v), int first,
    const char *sep, const char *last);

#endif

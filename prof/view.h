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

/* The views, the index of views[]. */
enum dump_view {
	DUMP_VIEW_NONE,         /* jmfp, the schedule: the dump is the answer */
	DUMP_VIEW_COLLAPSED,    /* jmcs: collapsed stacks */
	DUMP_VIEW_RAW,          /* the heap_v2 dump itself (HTTP, jeprof) */
	DUMP_VIEW_SVG,          /* jmfg: a flame graph */
	DUMP_VIEW_PPROF,        /* gzipped pprof, thread labels (HTTP) */
	DUMP_VIEW_TEXT,         /* jmtp: the top of the heap, jeprof --text */
	DUMP_VIEW_SYMBOLIZED,   /* jeprof's symbolized profile (HTTP) */
	DUMP_VIEW_DIFF,         /* jmdf: kept, and its growth since the last */
	DUMP_VIEW_LEAKS,        /* jmlk: leak suspects over the kept dumps */
	DUMP_VIEW_PPROF_ALLOCS, /* /debug/pprof/allocs: pprof, alloc_space
	                           first in the tools' eyes, as Go's */
	DUMP_VIEW_BASE,         /* the dump as written, a difference's first */
	DUMP_VIEW_DOT,          /* jmcg: the call graph in Graphviz's dot */
	DUMP_VIEW_CALLGRAPH,    /* the call graph laid out by libgvc, SVG */
	DUMP_VIEW_RECENT,       /* jmrc: recent sampled allocations */
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
	/* The fragmentation views' bin statistics (core/frag.c), read
	 * beside the dump; NULL elsewhere. */
	const struct frag_stats *frag;
};

/* A view's renderer: one of prof/render*.c's, in one shape. 0, or -1
 * with errno. */
typedef int (*view_render_fn)(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a);

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
};

extern const struct view views[DUMP_VIEW_COUNT];

/* The view named @p name (format=, -f), or -1. */
int view_by_name(const char *name);

/* "a, b or c": the names of the views that @p with_render (1: only those
 * drawn from a parsed profile) into @p buf. */
const char *view_names(char *buf, size_t len, int with_render);

#endif

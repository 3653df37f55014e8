/*
 * frag — fragmentation by allocation site, offline from two things the
 * stock allocator gives: its bin statistics (per arena and small size
 * class: slabs, regions in use, slabs not full) and a heap profile. Each
 * stack's sampled bytes divided by its sampled objects is its mean
 * object size; a stack whose every sample is one size has a mean that is
 * exactly a size class, and its objects are that class's. For the classes
 * with the most free regions, the sites whose objects they are, with
 * their share of the class's live bytes (and so, assumed spread alike,
 * of its free regions). Pure: core/frag.c reads the statistics, the job
 * symbolizes, this attributes and renders (text, JSON, collapsed stacks
 * weighted by waste).
 */
#ifndef JM4LW_FRAG_H
#define JM4LW_FRAG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heapprof.h"
#include "recent.h"
#include "symbolize.h"

struct fold_list;

/* Small classes read (jemalloc 5.3: 36 with 4 KiB pages, 39 with 64). */
#define FRAG_BINS_MAX 64
/* Large classes kept for the mapping of a mean to a class. */
#define FRAG_LARGE_MAX 256
/* The classes shown with their sites. */
#define FRAG_WORST 5
/* Sites shown per class. */
#define FRAG_SITES_SHOWN 5
/* frag_class_of's answers that are no class. */
#define FRAG_MIXED (-1) /* samples of more than one size */
#define FRAG_EMPTY (-2) /* no objects */

/* One small size class: its shape and its counts (merged, or one
 * arena's), as stats.arenas.<i>.bins.<j> and arenas.bin.<j> say. */
struct frag_class {
	size_t size;       /* arenas.bin.<j>.size */
	uint32_t nregs;    /* regions per slab */
	size_t slab_size;  /* bytes per slab */
	uint64_t curregs;  /* regions in use */
	uint64_t curslabs; /* slabs */
	uint64_t nonfull;  /* slabs with a free region (nonfull_slabs) */
	uint64_t free_regs;
	uint64_t free_bytes; /* (curslabs x nregs - curregs) x size */
	/* opt.prof_stats' prof.stats.bins.<j>.live: the sampled objects'
	 * requested bytes and count (0: not known). */
	uint64_t req_sum, req_count;
	uint64_t internal; /* estimated bytes between requested and size in
	                      the live regions (frag_stats_derive) */
};

/* One arena's share of one class, where it has free regions. */
struct frag_cell {
	unsigned arena, bin;
	uint64_t curregs, curslabs, nonfull, free_bytes;
};

/* frag_recent's states. */
#define FRAG_RECENT_NONE 0   /* not read: nothing said of it */
#define FRAG_RECENT_OK 1     /* read: rec holds its records */
#define FRAG_RECENT_FAILED 2 /* could not be read: why says so */

/* What prof_recent (jemalloc 5.3's last recent_max sampled allocations)
 * said beside the statistics: the ages of the sites' live objects, where
 * its ring still holds them. */
struct frag_recent {
	int state;
	struct recent rec; /* FRAG_RECENT_OK: owned */
	uint64_t now_ns;   /* jemalloc's clock when read (recent_read's) */
	char why[160];     /* FRAG_RECENT_FAILED: one line */
};

/* What the allocator says, read by core/frag.c. */
struct frag_stats {
	size_t page;
	struct frag_class bins[FRAG_BINS_MAX]; /* merged over arenas */
	unsigned nbins;
	size_t large[FRAG_LARGE_MAX]; /* arenas.lextent.<j>.size */
	unsigned nlarge;
	struct frag_cell *cells; /* per arena, free_bytes > 0; owned */
	size_t ncells;
	unsigned narenas;
	uint64_t resident, allocated, active;
	uint64_t dirty, muzzy; /* what jmpg gives back (pdirty, pmuzzy) */
	uint64_t small_free;   /* the sum of the classes' free_bytes */
	int prof, prof_active;
	size_t lg_sample;
	/* opt.prof_unbias (jemalloc 5.3): the dump's counts are solved back
	 * from unbiased ones, so a class's stacks have a mean near, not at,
	 * its size: frag_stats_derive computes that mean per class. */
	int unbias;
	int prof_stats; /* opt.prof_stats: req_sum is known */
	double mean[FRAG_BINS_MAX + FRAG_LARGE_MAX]; /* by frag_class_of's
	                                                 index */
	struct frag_recent recent; /* prof_recent's records, read beside */
};

/* The mean a stack whose every object is of size @p size shows in a dump
 * taken at lg_prof_sample @p lg: the size itself, or with @p unbias,
 * jemalloc 5.3's integer unbiasing (its counts kept shifted by the
 * smallest class, @p tiny bytes) solved back as prof_do_unbias does. */
double frag_dumped_mean(size_t size, size_t lg, size_t tiny, int unbias);

/* Derive each class's free regions and the total from its counts, and
 * each class's dumped mean (frag_dumped_mean). */
void frag_stats_derive(struct frag_stats *st);

/* Free what @p st owns (its cells, prof_recent's records). */
void frag_stats_free(struct frag_stats *st);

/*
 * The class of a stack of @p objs sampled objects of @p bytes in all: the
 * index of the small class (0 .. nbins-1) or nbins + the large class's
 * index whose dumped mean the stack's mean is (exactly, or within the
 * dump's integer rounding with unbias, and no other class's);
 * FRAG_MIXED when it is none or more than one (objects of several
 * sizes, or too few samples to tell), FRAG_EMPTY with no objects. Never
 * the nearest class: a mixed stack is not forced into one.
 */
int frag_class_of(const struct frag_stats *st, uint64_t objs, uint64_t bytes);

/* An allocation site of one class: the innermost frame above the
 * allocator, its live bytes there (unsampled) and its heaviest stack. */
struct frag_site {
	const char *name; /* the symbolizer's (interned) */
	double bytes, objs;
	double top_bytes; /* its heaviest stack's */
	char *stack;      /* that stack, root first, ';' between: owned */
	/* prof_recent's live records of its class's size whose stack is one
	 * of the site's (the same addresses past the allocator's frames),
	 * and the oldest one's alloc time (jemalloc's clock). */
	size_t recent_live;
	uint64_t recent_oldest_ns;
};

/* One of the worst classes and its sites, heaviest first. */
struct frag_worst {
	unsigned bin;
	struct frag_site *sites;
	size_t nsites;
	double attributed; /* the sites' live bytes together */
};

/* One stack of a worst class, for the flame graph of the waste. */
struct frag_line {
	unsigned slot; /* into frag_report.worst */
	char *stack;   /* root first, ';' between: owned */
	double bytes;  /* its live bytes (unsampled) */
};

/* The answer: the statistics, the worst classes with their sites. */
struct frag_report {
	const struct frag_stats *st;
	struct frag_worst worst[FRAG_WORST];
	unsigned nworst;
	uint64_t period;     /* the profile's mean bytes between samples */
	double mixed_bytes;  /* live bytes of stacks of mixed sizes */
	size_t mixed_stacks; /* how many */
	/* Their sites, heaviest first (.bin unused): where to look when a
	 * class has no stack of its own. */
	struct frag_worst mixed;
	double live_bytes; /* the profile's, unsampled */
	int has_samples;
	struct frag_line *lines; /* every stack of the worst classes */
	size_t nlines, cap;
	size_t recent_matched; /* prof_recent's records given to a site */
};

/* Attribute @p hp's stacks (symbolized by @p sym) to @p st's worst
 * classes into @p r, and with st->recent read, each site's live records
 * of prof_recent. 0, or -1 with errno (ENOMEM). */
int frag_attribute(const struct frag_stats *st, const struct heap_profile *hp,
    struct symbolizer *sym, const struct fold_list *l, struct frag_report *r);

void frag_report_free(struct frag_report *r);

/* The report as text (jmfr), JSON (/jemalloc/fragmentation), or
 * collapsed stacks each weighted by its share of its class's free bytes
 * (format=fragflame, for flamegraph.pl). 0, or -1 with errno. */
int frag_render_text(FILE *out, const struct frag_report *r);
int frag_render_json(FILE *out, const struct frag_report *r);
int frag_render_flame(FILE *out, const struct frag_report *r);

#endif

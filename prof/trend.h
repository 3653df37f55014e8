/*
 * trend — a series of heap profiles of one process read as a whole: which
 * functions' live bytes grew in nearly every interval (leak suspects), at
 * what rate, and which did not (a cache that filled once, churn that goes
 * up and down). The module's jmlk and /jemalloc/leaks (over the kept
 * dumps' indexes) and jm4lw-prof --trend (over any dumps) share it.
 *
 * A point is one profile reduced to what the analysis needs: its time,
 * and per function (the stack's leaf once the allocator and its wrappers
 * are cut off, fold.h) the
 * unsampled live bytes and its heaviest stack. The module keeps one beside
 * each kept dump ("<dump>.trend", trend_index_write), so a question over a
 * hundred dumps reads a hundred small files instead of parsing and
 * symbolizing a hundred profiles.
 */
#ifndef JM4LW_TREND_H
#define JM4LW_TREND_H

#include <stddef.h>
#include <stdio.h>

#include "heapprof.h"
#include "symbolize.h"

/* Functions a point keeps: the heaviest, by live bytes. */
#define TREND_FNS_MAX 256
/* Points one analysis takes (the newest). */
#define TREND_POINTS_MAX 1000
/* An index file larger than this is not ours. */
#define TREND_INDEX_MAX (1 << 20)
/* The fewest dumps an analysis answers over (two intervals). */
#define TREND_MIN_POINTS 3

struct trend_fn {
	char *name;
	double bytes;
	char *stack; /* "outer;...;leaf", its heaviest; may be "" */
};

struct trend_point {
	char *name;   /* the dump's file name, for links */
	char *folded; /* the wrappers folded (fold.h), ", " between; or NULL */
	char *fold_cfg; /* the fold_list it was made under (fold_format) */
	double t;       /* seconds since the epoch */
	double total;
	struct trend_fn *fn;
	size_t nfn;
};

/* A function that grew in nearly every interval. */
struct trend_suspect {
	const char *name, *stack; /* into the points */
	double rate;              /* bytes per minute over its growth */
	double growth;            /* bytes from its first to its last growth */
	double now;               /* bytes in the newest point */
	size_t grown, intervals;  /* intervals it grew in, of all */
	size_t from, to;          /* points its growth spans */
	double *series;           /* its bytes at each point */
};

struct trend {
	struct trend_point *pt; /* oldest first */
	size_t n;
	struct trend_suspect *s; /* by rate, fastest first */
	size_t ns;
	size_t considered;  /* functions looked at */
	size_t indexed;     /* dumps whose index was made for this question */
	size_t skipped;     /* dumps left out: neither index nor dump read */
	char skip_why[256]; /* the first one's reason */
	/* Why the newest dumps hold little or nothing (sampling inactive:
	 * view_sampling_note), or "". */
	char note[512];
};

struct fold_list;

/* Reduce @p hp (symbolized by @p sym) to a point at time @p t named
 * @p name, each stack's bytes going to its frame past the allocator's
 * wrappers under @p fold (NULL: the defaults; fold.h). 0, or -1 with
 * errno. */
int trend_point_of(const struct heap_profile *hp, struct symbolizer *sym,
    double t, const char *name, const struct fold_list *fold,
    struct trend_point *p);

/* Write @p p as an index file. 0, or -1 with errno. */
int trend_index_write(FILE *out, const struct trend_point *p);

/* Read the index at @p fd (@p name: its dump's name). 0, or -1 with
 * @p err. */
int trend_index_read(int fd, const char *name, struct trend_point *p, char *err,
    size_t errlen);

void trend_point_free(struct trend_point *p);

/* Add @p p (moved: the trend owns it) to @p t. 0, or -1 with errno. */
int trend_add(struct trend *t, struct trend_point *p);

/* Sort the points by time and find the suspects. 0, or -1 with errno. */
int trend_analyze(struct trend *t);

/* The answer as text (jmlk) or JSON (/jemalloc/leaks, --trend -f json). */
int trend_render_text(FILE *out, const struct trend *t);
int trend_render_json(FILE *out, const struct trend *t);

/* The line a series too short gets (fewer than TREND_MIN_POINTS). */
const char *trend_too_few(const struct trend *t, char *buf, size_t len);

void trend_free(struct trend *t);

#endif

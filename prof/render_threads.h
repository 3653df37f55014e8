/*
 * render_threads — the live heap split by the thread that allocated it,
 * from jemalloc 5.3's per-thread lines (each stack's tN: lines, the
 * header's tN: lines with the threads' names): each thread's unsampled
 * bytes and objects, its share, and its top functions.
 *
 * A thread's part of a stack is unsampled with the stack's own scale
 * (heapprof_scale of the stack's t* counts), as jeprof unsamples the
 * stack: so the parts of a stack add up to the stack, and the threads to
 * the profile's total. What a stack's tN: lines do not cover (a
 * hand-made dump, a jemalloc fork) is one row of its own, so the sum
 * still holds.
 */
#ifndef JM4LW_RENDER_THREADS_H
#define JM4LW_RENDER_THREADS_H

#include <stdio.h>

#include "render.h"

/* Functions shown under each thread. */
#define THREADS_TOP 5

/* A function's part of one thread (its leaf frames after the
 * allocator's are cut). */
struct thread_fn {
	const char *name; /* the symbolizer's */
	double value;     /* in the split's unit */
};

/* One thread, or one of the rows that are not a thread. */
struct thread_row {
	uint64_t tid;     /* jemalloc's thr_uid */
	const char *name; /* the dump's name for it; NULL: none */
	int kind;         /* THREAD_ROW_* */
	size_t nmore;     /* THREAD_ROW_MORE: how many threads it holds */
	double u_objs, u_bytes;
	long long objs, bytes; /* rounded so the rows add up (see below) */
	struct thread_fn top[THREADS_TOP]; /* biggest first */
	size_t ntop;
};

enum {
	THREAD_ROW_THREAD, /* a thread of the dump */
	THREAD_ROW_NONE,   /* what no tN: line under a stack holds */
	THREAD_ROW_MORE,   /* the threads past the limit, together */
};

/* The profile split by thread. */
struct thread_split {
	struct thread_row *rows; /* biggest first, by the split's unit */
	size_t n;
	size_t nthreads;         /* threads holding some of the heap, the
	                            folded ones included */
	double u_objs, u_bytes;  /* the profile's unsampled totals */
	long long objs, bytes;   /* those rounded: each is the sum of the
	                            rows' */
	size_t folded;           /* wrappers folded into their callers */
	char folded_names[1024]; /* their names, ", " between them */
};

/*
 * Split @p hp by thread, biggest first by @p v; the rows past @p limit
 * (0: none) fold into one THREAD_ROW_MORE row; threads holding nothing
 * (their lines all zero) have none. With @p sym each row gets
 * its top functions; NULL: none. The rows' objs and bytes are their
 * unsampled values rounded by largest remainder: each within 1 of its
 * own value and their sum exactly the rounded total. 0, or -1 with
 * errno (ENOMEM; EINVAL for a difference, whose per-thread lines are
 * not subtracted). Free with threads_split_free().
 */
int threads_split(const struct heap_profile *hp, struct symbolizer *sym,
    enum render_value v, size_t limit, const struct fold_list *fold,
    struct thread_split *out);

void threads_split_free(struct thread_split *s);

/* The split as text: "Total:", a line per thread (bytes, objects, %,
 * t<N> and its name) with its top functions under it, and the sum. */
int render_threads(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v, size_t limit,
    const struct fold_list *fold);

#endif

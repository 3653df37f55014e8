/*
 * render_pprof — a heap profile as pprof's profile.proto, gzipped, in the
 * layout Go's runtime/pprof gives heap profiles, so `go tool pprof`,
 * Parca, Pyroscope and every other pprof reader take it as they take a
 * Go heap profile:
 *
 *	sample_type  [alloc_objects/count alloc_space/bytes] (prof_accum)
 *	             inuse_objects/count inuse_space/bytes
 *	default_sample_type inuse_space (alloc_space: /allocs);
 *	period_type space/bytes; time_nanos, duration_nanos (a difference);
 *	period       the sampling interval (heap_v2/<period>)
 *
 * Values are the unsampled counts; for a difference (hp->diff) they are
 * the growth, negative where the heap shrank (pprof sums them as they
 * are). Every executable mapping of the profile is a Mapping with the
 * object's GNU build ID, so a server can symbolize what we could not.
 */
#ifndef JM4LW_RENDER_PPROF_H
#define JM4LW_RENDER_PPROF_H

#include <stdio.h>

#include "heapprof.h"
#include "symbolize.h"

/* What the profile itself does not say. */
struct pprof_opts {
	/* The type tools show first if the profile has it (Go: nothing
	 * for /heap, which tools read as the last, inuse_space;
	 * "alloc_space" for /allocs); NULL: inuse_space. */
	const char *default_type;
	/* opt.prof_accum: 1 on (the alloc pair, zeros included, is data),
	 * -1 off (no alloc pair, and a comment says why), 0 not known
	 * (the alloc pair when the dump has accumulated counts). */
	int accum;
	long long time_ns;     /* time_nanos: when it was dumped; 0: unset */
	long long duration_ns; /* duration_nanos: a difference's span */
	/* A string label "thread" (its name in the dump, else t<N>) on
	 * each sample: a stack several threads hold is a sample per
	 * thread, its values split as render_threads splits them, so
	 * `go tool pprof -tagfocus=thread=NAME` shows one thread's heap.
	 * Not on a difference (its thread lines are not subtracted). */
	int thread_labels;
	/* Why the profile is empty or partial, a comment (pprof
	 * -comments); NULL: none. */
	const char *note;
	/* The main program's Mapping's file instead of the path the
	 * profile maps: a link to it by the process's own name (pprof's
	 * "File:" is its base name); NULL: the mapped path. */
	const char *main_file;
	/* A comment naming the program, "NAME (FILE)"; NULL: none. */
	const char *program;
};

/* @p hp as gzipped pprof protobuf in Go's heap layout, written to @p out
 * as it is encoded (no second copy of the profile in memory); @p o may
 * be NULL. 0, or -1 with errno. */
int render_pprof(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct pprof_opts *o);

#endif

/*
 * render_pprof — a heap profile as pprof's profile.proto, gzipped, in the
 * layout Go's runtime/pprof gives heap profiles, so `go tool pprof`,
 * Parca, Pyroscope and every other pprof reader take it as they take a
 * Go heap profile:
 *
 *	sample_type  [alloc_objects/count alloc_space/bytes] (prof_accum)
 *	             inuse_objects/count inuse_space/bytes
 *	default_sample_type inuse_space; period_type space/bytes;
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

/* @p hp as gzipped pprof protobuf in Go's heap layout, written to @p out
 * as it is encoded (no second copy of the profile in memory). 0, or -1
 * with errno. */
int render_pprof(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym);

#endif

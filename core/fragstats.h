/*
 * fragstats — the allocator's side of fragmentation by site: the bin
 * statistics per arena and size class and the size classes themselves,
 * read through the doctor's lookups into prof/frag.h's struct, for the
 * fragmentation views a dump job renders (jmfr, /jemalloc/fragmentation).
 */
#ifndef JM4LW_FRAGSTATS_H
#define JM4LW_FRAGSTATS_H

#include <stddef.h>

#include "frag.h"
#include "ops.h"
#include "profile.h"
#include "view.h"

/* Read @p ops's statistics into @p st (after an epoch). 0, or -1 with one
 * line in @p err (no statistics in this jemalloc, no memory). Free with
 * frag_stats_free. */
int core_frag_read(const struct core_ops *ops, struct frag_stats *st, char *err,
    size_t errlen);

/* For a job rendering @p view: when it is a fragmentation view, read the
 * statistics into *@p st (allocated) and hand them to the renderers in
 * @p c (its frag): 1; 0 for any other view; -1 with @p err. */
int core_frag_begin(struct profile_ctx *c, enum dump_view view,
    const struct core_ops *ops, struct frag_stats **st, char *err,
    size_t errlen);

/* Undo core_frag_begin's 1 (@p began): take them back from @p c, free
 * *@p st. */
void core_frag_end(struct profile_ctx *c, int began, struct frag_stats *st);

#endif

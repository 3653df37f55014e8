/*
 * snapring — rolling snapshots of the heap profile, kept in memory so that
 * "what grew in the last minutes" and "what was in the heap at the peak"
 * are answered after the fact (prof/snapring.c).
 *
 * A snapshot is compact: its stacks live once in a table the snapshots
 * share (frames interned, counted by the snapshots that name them, swept
 * when none does), and a snapshot is only (stack, unsampled bytes,
 * objects) triples with its time and stats.allocated. The ring is bounded
 * by a count and by bytes: past either, the oldest go first.
 *
 * Touched by one thread at a time (the module's worker); pure, no I/O.
 */
#ifndef JM4LW_SNAPRING_H
#define JM4LW_SNAPRING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heapprof.h"
#include "prof_util.h"

/* One stack of a snapshot: an index into the shared table and its
 * counts then, sampled as dumped (unsampled again when read back, as
 * jeprof does, with the snapshot's period). */
struct snap_entry {
	uint32_t stack;
	uint64_t objs, bytes;
};

/* One snapshot. */
struct snapshot {
	long long time_ns;  /* CLOCK_REALTIME when it was taken */
	uint64_t allocated; /* stats.allocated right after it */
	int alloc_known;
	uint64_t period; /* the profile's sample period */
	double bytes;    /* the unsampled total of its stacks */
	double objs;
	struct snap_entry *e;
	size_t n;
	size_t cost; /* bytes it holds: its entries and the stacks only it
	                names are counted in the ring's total */
};

/* One interned stack: its frames, and how many snapshots name it. */
struct snap_stack {
	uint64_t *pc; /* NULL: a free slot */
	uint32_t depth;
	uint32_t refs;
};

struct snapring {
	struct snapshot *s; /* cap slots, a ring: the oldest at head */
	size_t cap, n, head;
	size_t max_bytes; /* 0: no byte cap */
	size_t bytes;     /* entries plus stacks, as counted */
	struct snap_stack *st;
	size_t nst, stcap; /* slots used (free ones included), allocated */
	size_t live_stacks;
	size_t free_from; /* no free slot of st below this */
	struct hmap tab;  /* stack hash -> index into st */
	unsigned long long taken, dropped;
};

/* A ring of at most @p count snapshots and @p max_bytes (0: no cap). */
void snapring_init(struct snapring *r, size_t count, size_t max_bytes);

/* Free every snapshot and stack; @p r is empty (and keeps its limits). */
void snapring_free(struct snapring *r);

/* New limits: the oldest snapshots beyond them go at once; @p count 0
 * frees every snapshot and stack and the table, as snapring_free. 0, or
 * -1 when memory runs out (the ring is left as it was). */
int snapring_limits(struct snapring *r, size_t count, size_t max_bytes);

/* Add @p hp (a parsed heap_v2 profile, not a difference) as the newest
 * snapshot, taken at @p time_ns with @p allocated (@p alloc_known 0: not
 * known), then drop the oldest beyond the count and bytes. 0; -1 when
 * memory runs out or the snapshot alone passes max_bytes (the ring is left
 * as it was; @p err says which). */
int snapring_add(struct snapring *r, const struct heap_profile *hp,
    long long time_ns, uint64_t allocated, int alloc_known, char *err,
    size_t errlen);

/* Snapshot @p i, 0 the oldest of r->n; NULL past the end. */
const struct snapshot *snapring_at(const struct snapring *r, size_t i);

/* The snapshot for "since @p seconds ago" at @p now_ns: the youngest at
 * least @p seconds - @p slack old. Its index, or -1 when none is. */
long snapring_since(const struct snapring *r, long long now_ns,
    unsigned seconds, unsigned slack);

/* The snapshot of the highest known stats.allocated among those at most
 * @p window seconds old at @p now_ns (0: all). Its index, or -1. */
long snapring_peak(const struct snapring *r, long long now_ns, unsigned window);

/* Snapshot @p i written to @p out as the heap_v2 profile it was read
 * from, its stacks' totals only (no threads, no accumulated counts, no
 * MAPPED_LIBRARIES: the caller appends the mappings). 0, or -1 with
 * errno. */
int snapring_write(const struct snapring *r, size_t i, FILE *out);

#endif /* JM4LW_SNAPRING_H */

/*
 * snapring — rolling snapshots of the heap profile sharing one table of
 * stacks (prof/snapring.h). A redis heap has a few thousand sampled
 * stacks that barely change from minute to minute: interned, a snapshot
 * costs its triples, 24 bytes a stack, and the frames are paid once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapring.h"

/* What one interned stack of @p depth frames is counted as. */
static size_t stack_cost(size_t depth)
{
	return sizeof(struct snap_stack) + depth * sizeof(uint64_t) +
	    2 * sizeof(struct hmap_slot);
}

/* The hash of @p depth frames at @p pc (heapprof's own). */
static uint64_t frames_hash(const uint64_t *pc, size_t depth)
{
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < depth; i++)
		h = hash_int(h ^ pc[i]);
	return h;
}

/* A stack sought in the table. */
struct snap_key {
	const struct snapring *r;
	const uint64_t *pc;
	size_t depth;
};

/* Is interned stack @p val the frames of @p arg (a struct snap_key)? */
static int snap_same(const void *arg, uint64_t val)
{
	const struct snap_key *k = arg;
	const struct snap_stack *s = &k->r->st[val];

	return s->pc != NULL && s->depth == k->depth &&
	    memcmp(s->pc, k->pc, k->depth * sizeof(uint64_t)) == 0;
}

void snapring_init(struct snapring *r, size_t count, size_t max_bytes)
{
	memset(r, 0, sizeof(*r));
	r->cap = count;
	r->max_bytes = max_bytes;
}

/* Snapshot slot of the i-th oldest. */
static struct snapshot *snap_slot(const struct snapring *r, size_t i)
{
	return &r->s[(r->head + i) % r->cap];
}

const struct snapshot *snapring_at(const struct snapring *r, size_t i)
{
	return i < r->n ? snap_slot(r, i) : NULL;
}

/* Release stack @p id once; its frames go when no snapshot names it. The
 * table is rebuilt by the caller (snap_rehash) after a sweep. */
static int stack_unref(struct snapring *r, uint32_t id)
{
	struct snap_stack *s = &r->st[id];

	if (--s->refs != 0)
		return 0;
	r->bytes -= stack_cost(s->depth);
	free(s->pc);
	s->pc = NULL;
	s->depth = 0;
	r->live_stacks--;
	if (id < r->free_from)
		r->free_from = id;
	return 1;
}

/* The table of the stacks still named, after a sweep freed some. 0, or
 * -1 when memory runs out (cannot: it only shrinks, in place). */
static int snap_rehash(struct snapring *r)
{
	struct snap_key k = {r, NULL, 0};
	uint64_t *v;
	size_t i;
	int added;

	hmap_clear(&r->tab);
	for (i = 0; i < r->nst; i++) {
		if (r->st[i].pc == NULL)
			continue;
		k.pc = r->st[i].pc;
		k.depth = r->st[i].depth;
		if ((v = hmap_add(&r->tab, frames_hash(k.pc, k.depth),
		         snap_same, &k, &added)) == NULL)
			return -1;
		*v = i;
	}
	return 0;
}

/* Drop the oldest snapshot; 1 if a stack went with it. */
static int snap_drop_oldest(struct snapring *r)
{
	struct snapshot *s = snap_slot(r, 0);
	int swept = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		swept |= stack_unref(r, s->e[i].stack);
	r->bytes -= s->cost;
	free(s->e);
	memset(s, 0, sizeof(*s));
	r->head = (r->head + 1) % r->cap;
	r->n--;
	r->dropped++;
	return swept;
}

/* Drop the oldest while the ring is past its count or (keeping the
 * newest) its bytes. */
static void snap_trim(struct snapring *r, size_t count)
{
	int swept = 0;

	while (r->n > count ||
	    (r->max_bytes != 0 && r->bytes > r->max_bytes && r->n > 1))
		swept |= snap_drop_oldest(r);
	if (swept)
		(void)snap_rehash(r);
}

void snapring_free(struct snapring *r)
{
	size_t i;

	while (r->n > 0)
		(void)snap_drop_oldest(r);
	for (i = 0; i < r->nst; i++)
		free(r->st[i].pc);
	free(r->st);
	free(r->s);
	hmap_free(&r->tab);
	snapring_init(r, r->cap, r->max_bytes);
}

int snapring_limits(struct snapring *r, size_t count, size_t max_bytes)
{
	struct snapshot *ns = NULL;
	size_t i, n;

	r->max_bytes = max_bytes;
	if (count == 0) {
		/* Off: every byte back (the table of stacks too), the
		 * counts of what was taken and dropped kept. */
		unsigned long long taken = r->taken,
		                   dropped = r->dropped + r->n;

		snapring_free(r);
		r->cap = 0;
		r->taken = taken;
		r->dropped = dropped;
		return 0;
	}
	if (count == r->cap) {
		snap_trim(r, count);
		return 0;
	}
	if (count > 0 && (ns = calloc(count, sizeof(*ns))) == NULL)
		return -1;
	snap_trim(r, count);
	n = r->n;
	for (i = 0; i < n; i++)
		ns[i] = *snap_slot(r, i);
	free(r->s);
	r->s = ns;
	r->cap = count;
	r->head = 0;
	return 0;
}

/* The index of @p pc's frames in the table, interned if new; its count
 * of snapshots not raised. UINT32_MAX when memory runs out. */
static uint32_t stack_intern(struct snapring *r, const uint64_t *pc,
    size_t depth)
{
	struct snap_key k = {r, pc, depth};
	struct snap_stack *s;
	uint64_t *v;
	size_t id;
	int added;

	if ((v = hmap_find(&r->tab, frames_hash(pc, depth), snap_same, &k)) !=
	    NULL)
		return (uint32_t)*v;
	/* A free slot, else a new one; none is free below free_from. */
	for (id = r->free_from; id < r->nst && r->st[id].pc != NULL; id++)
		;
	r->free_from = id + 1;
	if (id == r->nst) {
		if (r->nst >= UINT32_MAX - 1 ||
		    hp_grow((void **)&r->st, &r->stcap, r->nst + 1,
		        sizeof(*r->st)) == -1)
			return UINT32_MAX;
	}
	s = &r->st[id];
	if ((s->pc = malloc((depth ? depth : 1) * sizeof(uint64_t))) == NULL)
		return UINT32_MAX;
	memcpy(s->pc, pc, depth * sizeof(uint64_t));
	s->depth = (uint32_t)depth;
	s->refs = 0;
	if ((v = hmap_add(&r->tab, frames_hash(pc, depth), snap_same, &k,
	         &added)) == NULL) {
		free(s->pc);
		s->pc = NULL;
		r->free_from = id;
		return UINT32_MAX;
	}
	*v = id;
	if (id == r->nst)
		r->nst++;
	r->live_stacks++;
	r->bytes += stack_cost(depth);
	return (uint32_t)id;
}

int snapring_add(struct snapring *r, const struct heap_profile *hp,
    long long time_ns, uint64_t allocated, int alloc_known, char *err,
    size_t errlen)
{
	struct snapshot s = {.time_ns = time_ns,
	    .allocated = allocated,
	    .alloc_known = alloc_known,
	    .period = hp->period};
	size_t i, n = 0;
	uint32_t id;

	if (r->cap == 0) {
		snprintf(err, errlen, "snapshots are off (snapshot_count 0)");
		return -1;
	}
	if (r->s == NULL && (r->s = calloc(r->cap, sizeof(*r->s))) == NULL)
		goto nomem;
	/* Only the stacks with something live: a freed one is no growth's
	 * base and no peak's content. */
	for (i = 0; i < hp->nstacks; i++)
		n += hp->stacks[i].u_bytes > 0 || hp->stacks[i].u_objs > 0;
	if (n > 0 && (s.e = malloc(n * sizeof(*s.e))) == NULL)
		goto nomem;
	for (i = 0; i < hp->nstacks; i++) {
		const struct hp_stack *st = &hp->stacks[i];

		if (!(st->u_bytes > 0 || st->u_objs > 0))
			continue;
		if ((id = stack_intern(r, st->pc, st->depth)) == UINT32_MAX) {
			/* Undo the references taken so far. */
			int swept = 0;
			while (s.n > 0)
				swept |= stack_unref(r, s.e[--s.n].stack);
			free(s.e);
			if (swept)
				(void)snap_rehash(r);
			goto nomem;
		}
		r->st[id].refs++;
		s.e[s.n].stack = id;
		s.e[s.n].bytes = st->bytes;
		s.e[s.n].objs = st->objs;
		s.bytes += st->u_bytes;
		s.objs += st->u_objs;
		s.n++;
	}
	s.cost = sizeof(s) + s.n * sizeof(*s.e);
	if (r->n == r->cap && snap_drop_oldest(r)) /* its slot: the new one's */
		(void)snap_rehash(r);
	*snap_slot(r, r->n) = s;
	r->n++;
	r->bytes += s.cost;
	r->taken++;
	snap_trim(r, r->cap);
	if (r->max_bytes != 0 && r->bytes > r->max_bytes) {
		/* Alone it passes the cap: not kept. */
		size_t was = r->bytes;
		snap_drop_oldest(r);
		(void)snap_rehash(r);
		snprintf(err, errlen,
		    "a snapshot takes %zu bytes, more than snapshot_max_bytes "
		    "%zu",
		    was, r->max_bytes);
		r->taken--;
		return -1;
	}
	return 0;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
	return -1;
}

long snapring_since(const struct snapring *r, long long now_ns,
    unsigned seconds, unsigned slack)
{
	long long want = ((long long)seconds - (long long)slack) * 1000000000LL;
	size_t i;

	/* Newest first: the youngest old enough. */
	for (i = r->n; i-- > 0;)
		if (now_ns - snap_slot(r, i)->time_ns >= want)
			return (long)i;
	return -1;
}

long snapring_peak(const struct snapring *r, long long now_ns, unsigned window)
{
	long best = -1;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct snapshot *s = snap_slot(r, i);

		if (!s->alloc_known ||
		    (window != 0 &&
		        now_ns - s->time_ns > (long long)window * 1000000000LL))
			continue;
		/* The newest of equals: closest to now. */
		if (best == -1 ||
		    s->allocated >= snap_slot(r, (size_t)best)->allocated)
			best = (long)i;
	}
	return best;
}

int snapring_write(const struct snapring *r, size_t i, FILE *out)
{
	const struct snapshot *s;
	uint64_t objs = 0, bytes = 0;
	size_t k, f;

	if ((s = snapring_at(r, i)) == NULL) {
		errno = EINVAL;
		return -1;
	}
	for (k = 0; k < s->n; k++) {
		objs += s->e[k].objs;
		bytes += s->e[k].bytes;
	}
	fprintf(out, "heap_v2/%llu\n  t*: %llu: %llu [0: 0]\n",
	    (unsigned long long)s->period, (unsigned long long)objs,
	    (unsigned long long)bytes);
	for (k = 0; k < s->n; k++) {
		const struct snap_stack *ss = &r->st[s->e[k].stack];

		fputc('@', out);
		for (f = 0; f < ss->depth; f++)
			fprintf(out, " 0x%llx", (unsigned long long)ss->pc[f]);
		fprintf(out, "\n  t*: %llu: %llu [0: 0]\n",
		    (unsigned long long)s->e[k].objs,
		    (unsigned long long)s->e[k].bytes);
	}
	return ferror(out) ? -1 : 0;
}

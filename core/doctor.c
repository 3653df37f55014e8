/*
 * doctor — where resident memory goes, from mallctl alone: the
 * program's bytes, thread caches, free regions inside small-class slabs,
 * large extents' padding, dirty pages, metadata and what is left over,
 * each in bytes, adding up to stats.resident; profiling's own cost; the
 * worst size classes and arenas; advice lines, each with the figure that
 * justifies it and the gain expected. A typed result: faces word it.
 *
 * Bounded: DOCTOR_ARENAS_MAX arenas are read one by one (the rest are
 * the merged figures minus those), DOCTOR_BINS_MAX classes each.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "core.h"
#include "ctl.h"
#include "doctor.h"
#include "ops.h"
#include "reason.h"

/* MALLCTL_ARENAS_ALL: the merged statistics of every live arena (not
 * taken from jemalloc.h: the unit tests' fake has no jemalloc). */
#define ARENAS_ALL 4096

const struct doctor_part_name doctor_parts[DOCTOR_PARTS] = {
    [DOCTOR_PROGRAM] = {"program", "allocated by the program"},
    [DOCTOR_PROFILING] = {"profiling", "profiling's sampled objects"},
    [DOCTOR_TCACHE] = {"tcache", "thread caches"},
    [DOCTOR_SMALL_FRAG] = {"small_frag", "free regions in small slabs"},
    [DOCTOR_LARGE_PAD] = {"large_pad", "large extents' padding"},
    [DOCTOR_DIRTY] = {"dirty", "dirty pages (jmpg returns them)"},
    [DOCTOR_METADATA] = {"metadata", "metadata (base)"},
    [DOCTOR_RESIDUE] = {"residue", "not explained by the figures"},
};

/* jemalloc's prof_stats_t: what prof.stats.{bins,lextents}.<j>.live
 * answer with. */
struct prof_live {
	uint64_t req_sum;
	uint64_t count;
};

/*
 * A mallctl name read again and again with other indexes (arena, bin):
 * looked up once as a MIB where the ops have the fast path, else the
 * name is rebuilt. Rebuilt by hand, component by component, because
 * -Wformat=2 (rightly) allows no format string that is not a literal.
 */
struct drq {
	const struct core_ops *ops;
	char name[96]; /* with 0 at the index components */
	size_t mib[8], len;
	int pos[2]; /* the index components; pos[1] -1: one index */
	int mib_ok;
};

/* Prepare @p q for @p name, whose components @p p0 and @p p1 vary. */
static void drq_init(struct drq *q, const struct core_ops *ops,
    const char *name, int p0, int p1)
{
	memset(q, 0, sizeof(*q));
	q->ops = ops;
	snprintf(q->name, sizeof(q->name), "%s", name);
	q->pos[0] = p0;
	q->pos[1] = p1;
	q->len = sizeof(q->mib) / sizeof(q->mib[0]);
	q->mib_ok = ops->nametomib != NULL && ops->bymib != NULL &&
	    ops->nametomib(q->name, q->mib, &q->len) == 0;
}

/* @p q's name with @p a and @p b at its index components. */
static void drq_name(const struct drq *q, size_t a, size_t b, char *out,
    size_t outlen)
{
	const char *s = q->name, *dot;
	size_t n, o = 0;
	int comp = 0, w;

	while (*s != '\0' && o < outlen) {
		dot = strchr(s, '.');
		n = dot != NULL ? (size_t)(dot - s) : strlen(s);
		if (comp == q->pos[0] || comp == q->pos[1])
			w = snprintf(out + o, outlen - o, "%zu%s",
			    comp == q->pos[0] ? a : b, dot != NULL ? "." : "");
		else
			w = snprintf(out + o, outlen - o, "%.*s%s", (int)n, s,
			    dot != NULL ? "." : "");
		o += (size_t)w;
		s += n + (dot != NULL);
		comp++;
	}
	out[outlen - 1] = '\0';
}

/* Read @p q at indexes @p a, @p b into @p v (exactly @p len bytes). */
static int drq_read(const struct drq *q, size_t a, size_t b, void *v,
    size_t len)
{
	size_t mib[8], l = len;
	char name[128];
	int e;

	if (q->mib_ok) {
		memcpy(mib, q->mib, sizeof(mib));
		mib[q->pos[0]] = a;
		if (q->pos[1] >= 0)
			mib[q->pos[1]] = b;
		e = q->ops->bymib(mib, q->len, v, &l, NULL, 0);
	} else {
		drq_name(q, a, b, name, sizeof(name));
		e = q->ops->mallctl(name, v, &l, NULL, 0);
	}
	return e == 0 && l != len ? EINVAL : e;
}

/* A size_t through @p q, 0 when it cannot be read. */
static uint64_t drq_size(const struct drq *q, size_t a, size_t b)
{
	size_t v = 0;

	return drq_read(q, a, b, &v, sizeof(v)) == 0 ? v : 0;
}

/* A plain read of @p name, exactly @p len bytes. */
static int rd(const struct core_ops *ops, const char *name, void *v, size_t len)
{
	size_t l = len;
	int e = ops->mallctl(name, v, &l, NULL, 0);

	return e == 0 && l != len ? EINVAL : e;
}

/* A bool mallctl, @p dflt when it cannot be read. */
static int rd_bool(const struct core_ops *ops, const char *name, int dflt)
{
	bool b = false;

	return rd(ops, name, &b, sizeof(b)) == 0 ? b : dflt;
}

/* x - y, or 0. */
static uint64_t sub0(uint64_t x, uint64_t y)
{
	return x > y ? x - y : 0;
}

/* The lookups the per-arena loop repeats. */
struct arena_q {
	struct drq init, nthreads, ddecay, mdecay, pactive, pdirty, pmuzzy,
	    resident, small, large, tcache, curregs, curslabs;
};

/* Look each up once. */
static void arena_q_init(struct arena_q *q, const struct core_ops *ops)
{
	drq_init(&q->init, ops, "arena.0.initialized", 1, -1);
	drq_init(&q->nthreads, ops, "stats.arenas.0.nthreads", 2, -1);
	drq_init(&q->ddecay, ops, "stats.arenas.0.dirty_decay_ms", 2, -1);
	drq_init(&q->mdecay, ops, "stats.arenas.0.muzzy_decay_ms", 2, -1);
	drq_init(&q->pactive, ops, "stats.arenas.0.pactive", 2, -1);
	drq_init(&q->pdirty, ops, "stats.arenas.0.pdirty", 2, -1);
	drq_init(&q->pmuzzy, ops, "stats.arenas.0.pmuzzy", 2, -1);
	drq_init(&q->resident, ops, "stats.arenas.0.resident", 2, -1);
	drq_init(&q->small, ops, "stats.arenas.0.small.allocated", 2, -1);
	drq_init(&q->large, ops, "stats.arenas.0.large.allocated", 2, -1);
	drq_init(&q->tcache, ops, "stats.arenas.0.tcache_bytes", 2, -1);
	drq_init(&q->curregs, ops, "stats.arenas.0.bins.0.curregs", 2, 4);
	drq_init(&q->curslabs, ops, "stats.arenas.0.bins.0.curslabs", 2, 4);
}

/*
 * Arena @p i's figures into @p a: a dozen scalars. Its fragmentation is
 * active - allocated (slabs' free regions and large padding, Redis's
 * allocator_frag_bytes per arena), not summed per class: 72 more reads an
 * arena would make /metrics cost several times what it did (BENCHMARKS.md).
 * The merged row (ARENAS_ALL) also fills the classes' counts.
 */
static void arena_read(const struct arena_q *q, struct doctor *d, size_t i,
    struct doctor_arena *a)
{
	ssize_t decay;
	unsigned nt = 0, j;

	memset(a, 0, sizeof(*a));
	a->index = (unsigned)i;
	a->narenas = 1;
	if (drq_read(&q->nthreads, i, 0, &nt, sizeof(nt)) == 0)
		a->nthreads = nt;
	a->dirty_decay_ms = a->muzzy_decay_ms = -2; /* unknown */
	if (drq_read(&q->ddecay, i, 0, &decay, sizeof(decay)) == 0)
		a->dirty_decay_ms = (long)decay;
	if (drq_read(&q->mdecay, i, 0, &decay, sizeof(decay)) == 0)
		a->muzzy_decay_ms = (long)decay;
	a->active = drq_size(&q->pactive, i, 0) * d->page;
	a->dirty = drq_size(&q->pdirty, i, 0) * d->page;
	a->muzzy = drq_size(&q->pmuzzy, i, 0) * d->page;
	a->resident = drq_size(&q->resident, i, 0);
	a->allocated = drq_size(&q->small, i, 0) + drq_size(&q->large, i, 0);
	a->tcache = drq_size(&q->tcache, i, 0);
	a->frag = sub0(a->active, a->allocated);
	a->waste = a->frag + a->dirty;
	if (i != ARENAS_ALL)
		return;
	for (j = 0; j < d->nbins; j++) {
		d->bins[j].curregs = drq_size(&q->curregs, i, j);
		d->bins[j].curslabs = drq_size(&q->curslabs, i, j);
	}
}

/* "other": the merged figures less every arena read one by one. */
static void arena_other(const struct doctor_arena *all,
    const struct doctor_arena *rows, unsigned n, unsigned count,
    struct doctor_arena *o)
{
	unsigned k;

	*o = *all;
	o->index = DOCTOR_OTHER;
	o->narenas = count;
	o->dirty_decay_ms = o->muzzy_decay_ms = -2;
	for (k = 0; k < n; k++) {
		o->nthreads = (unsigned)sub0(o->nthreads, rows[k].nthreads);
		o->allocated = sub0(o->allocated, rows[k].allocated);
		o->active = sub0(o->active, rows[k].active);
		o->resident = sub0(o->resident, rows[k].resident);
		o->dirty = sub0(o->dirty, rows[k].dirty);
		o->muzzy = sub0(o->muzzy, rows[k].muzzy);
		o->frag = sub0(o->frag, rows[k].frag);
		o->tcache = sub0(o->tcache, rows[k].tcache);
	}
	o->waste = o->frag + o->dirty;
}

/*
 * What never changes in a process: the classes' shapes (size, regions per
 * slab, slab size) and the MIBs of the names read per arena. Looked up
 * once per allocator table and kept: ~150 of the reads a diagnosis made,
 * half its time with 16 arenas (BENCHMARKS.md). A mutex, as two modules
 * on two threads may ask at once; the copy out is ~3 KB.
 */
struct doctor_fixed {
	const struct core_ops *ops; /* whose, or NULL */
	unsigned nbins;
	struct doctor_bin shape[DOCTOR_BINS_MAX];
	struct arena_q q;
};

static struct doctor_fixed fixed;
static pthread_mutex_t fixed_lock = PTHREAD_MUTEX_INITIALIZER;

/* Fill @p f for @p ops; -1 when the classes cannot be read. */
static int fixed_fill(const struct core_ops *ops, struct doctor_fixed *f)
{
	struct drq qs, qn, qsl;
	unsigned nbins = 0, j;
	uint32_t nregs;

	memset(f, 0, sizeof(*f));
	if (rd(ops, "arenas.nbins", &nbins, sizeof(nbins)) != 0)
		return -1;
	f->nbins = nbins < DOCTOR_BINS_MAX ? nbins : DOCTOR_BINS_MAX;
	drq_init(&qs, ops, "arenas.bin.0.size", 2, -1);
	drq_init(&qn, ops, "arenas.bin.0.nregs", 2, -1);
	drq_init(&qsl, ops, "arenas.bin.0.slab_size", 2, -1);
	for (j = 0; j < f->nbins; j++) {
		f->shape[j].index = j;
		f->shape[j].size = (size_t)drq_size(&qs, j, 0);
		nregs = 0;
		(void)drq_read(&qn, j, 0, &nregs, sizeof(nregs));
		f->shape[j].nregs = nregs;
		f->shape[j].slab_size = (size_t)drq_size(&qsl, j, 0);
	}
	arena_q_init(&f->q, ops);
	f->ops = ops;
	return 0;
}

/* The classes' shapes into @p d and the per-arena lookups into @p q. */
static int bins_shape(const struct core_ops *ops, struct doctor *d,
    struct arena_q *q)
{
	int rv = 0;

	pthread_mutex_lock(&fixed_lock);
	if (fixed.ops != ops)
		rv = fixed_fill(ops, &fixed);
	if (rv == 0) {
		d->nbins = fixed.nbins;
		memcpy(d->bins, fixed.shape, sizeof(d->bins));
		*q = fixed.q;
	}
	pthread_mutex_unlock(&fixed_lock);
	return rv;
}

/* One arena's class counts, through the lookups kept in fixed. */
int doctor_bins_of(const struct core_ops *ops, size_t arena,
    struct doctor_bin *bins, unsigned nbins)
{
	struct arena_q q;
	struct drq nf;
	unsigned j;
	int rv = 0;

	pthread_mutex_lock(&fixed_lock);
	if (fixed.ops != ops)
		rv = fixed_fill(ops, &fixed);
	if (rv == 0)
		q = fixed.q;
	pthread_mutex_unlock(&fixed_lock);
	if (rv != 0)
		return -1;
	drq_init(&nf, ops, "stats.arenas.0.bins.0.nonfull_slabs", 2, 4);
	for (j = 0; j < nbins; j++) {
		bins[j].curregs = drq_size(&q.curregs, arena, j);
		bins[j].curslabs = drq_size(&q.curslabs, arena, j);
		bins[j].nonfull = drq_size(&nf, arena, j);
	}
	return 0;
}

/* Each class's waste and utilization, and the worst few by waste. */
static void bins_rank(struct doctor *d)
{
	struct doctor_bin *b;
	unsigned j, k, m;
	uint64_t cap;

	for (j = 0; j < d->nbins; j++) {
		b = &d->bins[j];
		cap = b->curslabs * b->nregs;
		b->waste =
		    sub0(b->curslabs * b->slab_size, b->curregs * b->size);
		b->util = cap > 0 ? (double)b->curregs / (double)cap : 1.0;
		d->small_frag += b->waste;
		if (b->waste == 0)
			continue;
		/* Insertion into the few worst: DOCTOR_WORST is tiny. */
		for (k = 0; k < d->nworst_bins; k++)
			if (b->waste > d->bins[d->worst_bins[k]].waste)
				break;
		if (k == DOCTOR_WORST)
			continue;
		m = d->nworst_bins < DOCTOR_WORST ? d->nworst_bins++
		                                  : DOCTOR_WORST - 1;
		for (; m > k; m--)
			d->worst_bins[m] = d->worst_bins[m - 1];
		d->worst_bins[k] = j;
	}
}

/* The worst arenas by waste, where there is more than one to compare. */
static void arenas_rank(struct doctor *d)
{
	unsigned i, k, m;

	if (d->narena_rows < 2)
		return;
	for (i = 0; i < d->narena_rows; i++) {
		if (d->arenas[i].waste == 0)
			continue;
		for (k = 0; k < d->nworst_arenas; k++)
			if (d->arenas[i].waste >
			    d->arenas[d->worst_arenas[k]].waste)
				break;
		if (k == DOCTOR_WORST)
			continue;
		m = d->nworst_arenas < DOCTOR_WORST ? d->nworst_arenas++
		                                    : DOCTOR_WORST - 1;
		for (; m > k; m--)
			d->worst_arenas[m] = d->worst_arenas[m - 1];
		d->worst_arenas[k] = i;
	}
}

/*
 * Every arena: the first DOCTOR_ARENAS_MAX initialized ones one by one,
 * the rest as "other". An index that is not initialized (never made, or
 * destroyed with arena.<i>.destroy) is skipped.
 */
static void arenas_read(const struct core_ops *ops, struct doctor *d,
    const struct arena_q *q)
{
	struct doctor_arena all;
	unsigned n = 0, i, live = 0;
	bool init;

	if (rd(ops, "arenas.narenas", &n, sizeof(n)) != 0)
		n = 0;
	for (i = 0; i < n; i++) {
		init = false;
		if (drq_read(&q->init, i, 0, &init, sizeof(init)) != 0 || !init)
			continue;
		live++;
		if (d->narena_rows < DOCTOR_ARENAS_MAX)
			arena_read(q, d, i, &d->arenas[d->narena_rows++]);
	}
	d->narenas = live;
	/* The merged row fills the classes' counts. */
	arena_read(q, d, ARENAS_ALL, &all);
	if (live > d->narena_rows) {
		arena_other(&all, d->arenas, d->narena_rows,
		    live - d->narena_rows, &d->arenas[d->narena_rows]);
		d->narena_rows++;
	}
}

/*
 * Profiling's own cost. jemalloc 5.3 backs every sampled small object
 * with a large extent (the smallest large class, 16 KiB with 4 KiB
 * pages, plus a page of padding when cache_oblivious): exact from
 * prof.stats when opt.prof_stats is on, else estimated from the live
 * small objects and the sampling rate (a class of size s is sampled with
 * p = 1 - exp(-s/period), so p/(1-p) sampled objects live beside each
 * one in a slab), at most as many as the smallest large class holds.
 */
static void prof_cost(const struct core_ops *ops, struct doctor *d,
    uint64_t *in_allocated)
{
	struct prof_live live;
	struct drq ql, qc;
	size_t lmin = 0, lg = 0;
	uint64_t pad, req = 0, n = 0, cap;
	double period, p, est, cost = 0, size_sum = 0;
	unsigned j;

	*in_allocated = 0;
	if (!(d->prof = rd_bool(ops, "opt.prof", 0)))
		return;
	d->prof_active = rd_bool(ops, "prof.active", 0);
	if (rd(ops, "prof.lg_sample", &lg, sizeof(lg)) == 0)
		d->lg_sample = lg;
	if (rd(ops, "arenas.lextent.0.size", &lmin, sizeof(lmin)) != 0)
		return;
	pad = rd_bool(ops, "opt.cache_oblivious", 1) ? d->page : 0;
	if (rd_bool(ops, "opt.prof_stats", 0)) {
		drq_init(&ql, ops, "prof.stats.bins.0.live", 3, -1);
		for (j = 0; j < d->nbins; j++) {
			if (drq_read(&ql, j, 0, &live, sizeof(live)) != 0)
				break;
			n += live.count;
			req += live.req_sum;
			size_sum +=
			    (double)live.count * (double)d->bins[j].size;
		}
		if (j == d->nbins) {
			d->prof_exact = 1;
			d->prof_samples = n;
			d->prof_cost = sub0(n * (lmin + pad), req);
			*in_allocated = sub0(n * lmin, (uint64_t)size_sum);
			return;
		}
	}
	period = ldexp(1.0, (int)(lg > 62 ? 62 : lg));
	for (j = 0; j < d->nbins; j++) {
		p = 1.0 - exp(-(double)d->bins[j].size / period);
		if (p >= 1.0)
			continue;
		est = (double)d->bins[j].curregs * p / (1.0 - p);
		size_sum += est * (double)d->bins[j].size;
		cost += est;
	}
	/* No more samples than live extents of the smallest large class. */
	drq_init(&qc, ops, "stats.arenas.0.lextents.0.curlextents", 2, 4);
	cap = drq_size(&qc, ARENAS_ALL, 0);
	if (cost > (double)cap && cost > 0) {
		size_sum *= (double)cap / cost;
		cost = (double)cap;
	}
	d->prof_samples = (uint64_t)(cost + 0.5);
	d->prof_cost =
	    sub0((uint64_t)(cost * (double)(lmin + pad)), (uint64_t)size_sum);
	*in_allocated =
	    sub0((uint64_t)(cost * (double)lmin), (uint64_t)size_sum);
}

/* Split resident into parts that add up to it. */
static void split(struct doctor *d, uint64_t prof_alloc)
{
	uint64_t *p = d->part, sum = 0;
	int k;

	d->large_pad = sub0(d->active, d->allocated + d->small_frag);
	p[DOCTOR_TCACHE] = d->tcache < d->allocated ? d->tcache : d->allocated;
	p[DOCTOR_PROFILING] = prof_alloc < d->allocated - p[DOCTOR_TCACHE]
	    ? prof_alloc
	    : d->allocated - p[DOCTOR_TCACHE];
	p[DOCTOR_PROGRAM] =
	    d->allocated - p[DOCTOR_TCACHE] - p[DOCTOR_PROFILING];
	p[DOCTOR_SMALL_FRAG] = d->small_frag;
	p[DOCTOR_LARGE_PAD] = d->large_pad;
	p[DOCTOR_DIRTY] = d->dirty;
	p[DOCTOR_METADATA] = d->base;
	for (k = 0; k < DOCTOR_RESIDUE; k++)
		sum += p[k];
	d->residue = (int64_t)d->resident - (int64_t)sum;
	/* Figures a snapshot apart can overshoot resident: take it back from
	 * metadata, then the padding, so the parts still add up. */
	if (d->residue < 0) {
		uint64_t over = (uint64_t)-d->residue, t;

		t = over < p[DOCTOR_METADATA] ? over : p[DOCTOR_METADATA];
		p[DOCTOR_METADATA] -= t;
		over -= t;
		t = over < p[DOCTOR_LARGE_PAD] ? over : p[DOCTOR_LARGE_PAD];
		p[DOCTOR_LARGE_PAD] -= t;
		over -= t;
		p[DOCTOR_PROGRAM] -=
		    over < p[DOCTOR_PROGRAM] ? over : p[DOCTOR_PROGRAM];
	} else
		p[DOCTOR_RESIDUE] = (uint64_t)d->residue;
}

/* A figure of stats.* or of the merged arenas, 0 if missing. */
static uint64_t stat_of(const struct core_ops *ops, const char *name)
{
	size_t v = 0;

	return rd(ops, name, &v, sizeof(v)) == 0 ? v : 0;
}

/* The whole diagnosis: figures, classes, arenas, cost, parts, advice. */
void doctor_diagnose(const struct core_ops *ops, int epoch, struct doctor *d)
{
	struct arena_q q;
	uint64_t prof_alloc;
	unsigned narenas = 0;
	size_t page = 0, res = 0;

	memset(d, 0, sizeof(*d));
	/* --disable-stats: every stats.* figure is missing, and jemalloc
	 * answers config.stats false. Refuse in one line. */
	if (epoch)
		ctl_epoch(ops);
	if (!rd_bool(ops, "config.stats", 1) ||
	    rd(ops, "arenas.page", &page, sizeof(page)) != 0 || page == 0 ||
	    rd(ops, "stats.resident", &res, sizeof(res)) != 0) {
		d->why = REASON_NO_STATS;
		snprintf(d->reason, sizeof(d->reason),
		    "this jemalloc keeps no statistics (config.stats is false: "
		    "built with --disable-stats); the doctor needs them: run on "
		    "a jemalloc built with stats, such as Debian's "
		    "libjemalloc2");
		return;
	}
	d->page = page;
	d->allocated = stat_of(ops, "stats.allocated");
	d->active = stat_of(ops, "stats.active");
	d->resident = stat_of(ops, "stats.resident");
	d->mapped = stat_of(ops, "stats.mapped");
	d->retained = stat_of(ops, "stats.retained");
	d->metadata = stat_of(ops, "stats.metadata");
	d->metadata_thp = stat_of(ops, "stats.metadata_thp");
	d->base = stat_of(ops, "stats.arenas.4096.base");
	d->internal = stat_of(ops, "stats.arenas.4096.internal");
	d->tcache = stat_of(ops, "stats.arenas.4096.tcache_bytes");
	d->dirty = stat_of(ops, "stats.arenas.4096.pdirty") * page;
	d->muzzy = stat_of(ops, "stats.arenas.4096.pmuzzy") * page;
	d->purge_gain = d->dirty;
	d->background_thread = rd_bool(ops, "background_thread", 0);
	if (rd(ops, "opt.narenas", &narenas, sizeof(narenas)) == 0)
		d->narenas_opt = narenas;
	if (bins_shape(ops, d, &q) == -1) {
		d->why = REASON_FAILED;
		snprintf(d->reason, sizeof(d->reason),
		    "cannot read arenas.nbins: jemalloc's size classes are "
		    "unknown");
		return;
	}
	arenas_read(ops, d, &q);
	bins_rank(d);
	arenas_rank(d);
	prof_cost(ops, d, &prof_alloc);
	split(d, prof_alloc);
	doctor_advise(d);
	d->ok = 1;
}

/* The module's allocator, one coalesced epoch first. */
void core_doctor(struct core *c, struct doctor *d)
{
	ctl_epoch_coalesced(c);
	doctor_diagnose(c->ops, 0, d);
}

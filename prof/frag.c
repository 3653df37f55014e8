/*
 * frag — fragmentation by allocation site (see frag.h): the mapping of a
 * stack's mean object size to a size class, the attribution of the worst
 * classes' live bytes to their sites, and the answer in text, JSON and
 * collapsed stacks weighted by waste.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "fold.h"
#include "frag.h"
#include "json.h"
#include "out.h"
#include "prof_util.h"
#include "render.h"
#include "when.h"

/* The method and its limits, said in every output. */
static const char *const frag_limits[] = {
    "free regions = (curslabs x nregs - curregs) x size per arena and "
    "small size class, from jemalloc's own bin statistics: exact",
    "sites come from a heap profile: its figures are estimates from "
    "samples (sampling error, larger for sites with few samples)",
    "a stack's class is inferred from its mean sampled size (bytes / "
    "objects): only a stack whose mean is exactly a class size is "
    "attributed; others are counted as mixed, never forced into a class",
    "live objects only, and only those allocated while sampling was on "
    "(prof.active): what was freed leaves no stack, and a site's share "
    "of the free regions assumes its objects are spread over the class's "
    "slabs alike",
    "jemalloc keeps each sampled small object outside the slabs (in a "
    "large extent): a class's estimated live bytes run above curregs x "
    "size by about the sampled fraction",
};
#define FRAG_NLIMITS (sizeof(frag_limits) / sizeof(frag_limits[0]))

/* As frag.h says: prof_unbias_map_init's integers, solved back. */
double frag_dumped_mean(size_t size, size_t lg, size_t tiny, int unbias)
{
	double sz = (double)size, div, usz, cnt;

	if (!unbias || lg > 62 || tiny == 0)
		return sz;
	div = 1.0 - exp(-sz / ldexp(1.0, (int)lg));
	if (div <= 0)
		return sz;
	usz = round(sz / div);
	cnt = round((double)tiny / div) / (double)tiny;
	return cnt > 0 ? usz / cnt : sz;
}

/* Free regions per class and arena, internal waste, dumped means. */
void frag_stats_derive(struct frag_stats *st)
{
	struct frag_class *b;
	struct frag_cell *c;
	uint64_t cap;
	unsigned j;
	size_t k;

	st->small_free = 0;
	for (j = 0; j < st->nbins + st->nlarge; j++)
		st->mean[j] =
		    frag_dumped_mean(j < st->nbins ? st->bins[j].size
		                                   : st->large[j - st->nbins],
		        st->lg_sample, st->nbins > 0 ? st->bins[0].size : 0,
		        st->unbias);
	for (j = 0; j < st->nbins; j++) {
		b = &st->bins[j];
		cap = b->curslabs * b->nregs;
		b->free_regs = cap > b->curregs ? cap - b->curregs : 0;
		b->free_bytes = b->free_regs * b->size;
		st->small_free += b->free_bytes;
		/* The sampled objects' mean request, for every live one. */
		b->internal = 0;
		if (b->req_count > 0 && b->req_sum < b->req_count * b->size)
			b->internal =
			    (uint64_t)((double)(b->req_count * b->size -
			                   b->req_sum) /
			        (double)b->req_count * (double)b->curregs);
	}
	for (k = 0; k < st->ncells; k++) {
		c = &st->cells[k];
		if (c->bin >= st->nbins)
			continue;
		b = &st->bins[c->bin];
		cap = c->curslabs * b->nregs;
		c->free_bytes =
		    cap > c->curregs ? (cap - c->curregs) * b->size : 0;
	}
}

/* The cells and prof_recent's records are what is allocated. */
void frag_stats_free(struct frag_stats *st)
{
	free(st->cells);
	st->cells = NULL;
	st->ncells = 0;
	recent_free(&st->recent.rec);
	st->recent.state = FRAG_RECENT_NONE;
}

/* A stack's class from its mean, or mixed (frag.h). */
int frag_class_of(const struct frag_stats *st, uint64_t objs, uint64_t bytes)
{
	double m, lo, hi, x, tol;
	unsigned j, n = st->nbins + st->nlarge;
	int found = FRAG_MIXED;

	if (objs == 0)
		return FRAG_EMPTY;
	if (!st->unbias) { /* the dump's own sizes: exactly a class's */
		if (bytes % objs != 0)
			return FRAG_MIXED;
		for (j = 0; j < n; j++)
			if (st->mean[j] == (double)(bytes / objs))
				return (int)j;
		return FRAG_MIXED;
	}
	/* Unbiased: the dump rounds y and y / x to integers, each within
	 * 1/2, so with n objects the mean is within (x + 1) / (2n - 1) of
	 * the class's x. */
	m = (double)bytes / (double)objs;
	for (j = 0; j < n; j++) {
		x = st->mean[j];
		tol = (x + 1.0) / (2.0 * (double)objs - 1.0) + 1e-9 * x;
		lo = x - tol;
		hi = x + tol;
		if (m < lo || m > hi)
			continue;
		if (found != FRAG_MIXED)
			return FRAG_MIXED; /* two classes fit: cannot tell */
		found = (int)j;
	}
	return found;
}

/* The frames of @p v as one string, root first, ';' between (a ';' in a
 * name as ':'), or NULL when memory runs out. */
static char *frag_stack_str(const struct render_view *v)
{
	size_t len = 1, i, o = 0;
	const char *s;
	char *buf;

	for (i = 0; i < v->n; i++)
		len += strlen(v->f[i].f.func) + 1;
	if ((buf = malloc(len)) == NULL)
		return NULL;
	for (i = v->n; i-- > 0;) {
		for (s = v->f[i].f.func; *s != '\0'; s++)
			buf[o++] = *s == ';' ? ':' : *s;
		if (i > 0)
			buf[o++] = ';';
	}
	buf[o] = '\0';
	return buf;
}

/* The worst classes by free bytes, most first, into @p r. */
static void frag_rank(const struct frag_stats *st, struct frag_report *r)
{
	unsigned j, k, m;

	for (j = 0; j < st->nbins; j++) {
		if (st->bins[j].free_bytes == 0)
			continue;
		for (k = 0; k < r->nworst; k++)
			if (st->bins[j].free_bytes >
			    st->bins[r->worst[k].bin].free_bytes)
				break;
		if (k == FRAG_WORST)
			continue;
		m = r->nworst < FRAG_WORST ? r->nworst++ : FRAG_WORST - 1;
		for (; m > k; m--)
			r->worst[m].bin = r->worst[m - 1].bin;
		r->worst[k].bin = j;
	}
}

/* Heaviest first. */
static int frag_site_cmp(const void *a, const void *b)
{
	const struct frag_site *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* Add stack @p st (its view @p v) to worst class @p w's site of its
 * innermost frame, its index kept in @p m. 0, or -1 (ENOMEM). */
static int frag_add(struct frag_worst *w, struct hmap *m,
    const struct render_view *v, const struct hp_stack *st, size_t *cap,
    const struct fold *fold, struct frag_site **site)
{
	/* The code that asked, past the allocator's wrappers (fold.h), as
	 * the ranked views name it; the leaf without a fold. */
	const char *name = v->n == 0 ? "(the allocator)"
	    : fold != NULL           ? v->f[fold_self(fold, v)].f.func
	                             : v->f[0].f.func;
	struct frag_site *s;
	uint64_t *slot;
	char *str;
	int added;

	if ((slot = hmap_put(m, (uint64_t)(uintptr_t)name, &added)) == NULL)
		return -1;
	if (added) {
		if (hp_grow((void **)&w->sites, cap, w->nsites + 1,
		        sizeof(*w->sites)) == -1)
			return -1;
		*slot = w->nsites;
		w->sites[w->nsites++] = (struct frag_site){.name = name};
	}
	s = &w->sites[*slot];
	s->bytes += st->u_bytes;
	s->objs += st->u_objs;
	w->attributed += st->u_bytes;
	if (s->stack == NULL || st->u_bytes > s->top_bytes) {
		if ((str = frag_stack_str(v)) == NULL)
			return -1;
		free(s->stack);
		s->stack = str;
		s->top_bytes = st->u_bytes;
	}
	if (site != NULL)
		*site = s;
	return 0;
}

/* Keep stack @p v of worst class @p slot for the flame graph. */
static int frag_keep_line(struct frag_report *r, unsigned slot,
    const struct render_view *v, double bytes)
{
	char *str;

	if (hp_grow((void **)&r->lines, &r->cap, r->nlines + 1,
	        sizeof(*r->lines)) == -1 ||
	    (str = frag_stack_str(v)) == NULL)
		return -1;
	r->lines[r->nlines++] =
	    (struct frag_line){.slot = slot, .stack = str, .bytes = bytes};
	return 0;
}

/* prof_recent's live records that may be a worst class's objects,
 * indexed by their frames past the allocator's and their usize. */
struct frag_recent_index {
	const struct recent *rec;
	size_t *cut;  /* per record: its first frame kept (render_view_stack) */
	size_t *next; /* per record: the next of the same key, + 1 (0: none) */
	unsigned char *taken; /* per record: given to a site already */
	struct hmap heads;    /* key -> the first record of that key, + 1 */
};

/* Where render_view_stack's kept frames of a stack of @p depth begin:
 * the allocator's frames before it are cut, as the profile's views cut
 * them; all of it when nothing is kept. */
static size_t frag_cut(const struct render_view *v, size_t depth)
{
	return v->n > 0 ? v->f[0].depth : depth;
}

/* A key for frames @p pc[0 .. n) of objects of @p usize (FNV-1a over
 * the addresses). */
static uint64_t frag_frames_key(const uint64_t *pc, size_t n, uint64_t usize)
{
	uint64_t h = 14695981039346656037ull ^ usize;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= pc[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* Does @p size belong to one of @p r's worst classes? */
static int frag_is_worst(const struct frag_stats *st,
    const struct frag_report *r, uint64_t size)
{
	unsigned j;

	for (j = 0; j < r->nworst; j++)
		if (st->bins[r->worst[j].bin].size == size)
			return 1;
	return 0;
}

/* Index st->recent's live records of the worst classes' sizes into
 * @p ri (left empty when prof_recent was not read). 0, or -1 (ENOMEM). */
static int frag_recent_index(struct frag_recent_index *ri,
    const struct frag_stats *st, const struct frag_report *r,
    struct symbolizer *sym)
{
	const struct recent *rec = &st->recent.rec;
	const struct recent_rec *x;
	struct render_view v = {0};
	struct hp_stack hs;
	uint64_t *head;
	size_t i;
	int added, rv = -1;

	if (st->recent.state != FRAG_RECENT_OK || rec->n == 0)
		return 0;
	ri->rec = rec;
	if ((ri->cut = calloc(rec->n, sizeof(*ri->cut))) == NULL ||
	    (ri->next = calloc(rec->n, sizeof(*ri->next))) == NULL ||
	    (ri->taken = calloc(rec->n, 1)) == NULL)
		goto out;
	/* Newest first, so each chain runs oldest first: a record is given
	 * to the first stack of its frames, whatever the order. */
	for (i = rec->n; i-- > 0;) {
		x = &rec->rec[i];
		if (x->released || !frag_is_worst(st, r, x->usize))
			continue;
		hs = (struct hp_stack){.pc = x->alloc.n != 0
		        ? rec->pcs + x->alloc.off
		        : NULL,
		    .depth = x->alloc.n};
		if (render_view_stack(&v, &hs, sym) == -1)
			goto out;
		ri->cut[i] = frag_cut(&v, x->alloc.n);
		if ((head = hmap_put(&ri->heads,
		         frag_frames_key(hs.pc != NULL ? hs.pc + ri->cut[i]
		                                       : NULL,
		             x->alloc.n - ri->cut[i], x->usize),
		         &added)) == NULL)
			goto out;
		ri->next[i] = added ? 0 : (size_t)*head;
		*head = i + 1;
	}
	rv = 0;
out:
	render_view_free(&v);
	return rv;
}

/* Give @p site the records of @p ri whose frames past the allocator's
 * are stack @p s's (its view @p v) and whose usize is @p size, each
 * record once. */
static void frag_recent_match(struct frag_recent_index *ri,
    struct frag_report *r, struct frag_site *site, uint64_t size,
    const struct render_view *v, const struct hp_stack *s)
{
	size_t cut = frag_cut(v, s->depth), n = s->depth - cut, i;
	const uint64_t *pc = s->depth != 0 ? s->pc + cut : NULL;
	const struct recent_rec *x;
	uint64_t *head;

	if (ri->rec == NULL ||
	    (head = hmap_get(&ri->heads, frag_frames_key(pc, n, size))) == NULL)
		return;
	for (i = (size_t)*head; i != 0; i = ri->next[i - 1]) {
		x = &ri->rec->rec[i - 1];
		if (ri->taken[i - 1] || x->usize != size ||
		    x->alloc.n - ri->cut[i - 1] != n ||
		    (n > 0 &&
		        memcmp(ri->rec->pcs + x->alloc.off + ri->cut[i - 1], pc,
		            n * sizeof(*pc)) != 0))
			continue;
		ri->taken[i - 1] = 1;
		if (site->recent_live++ == 0 ||
		    x->alloc.time_ns < site->recent_oldest_ns)
			site->recent_oldest_ns = x->alloc.time_ns;
		r->recent_matched++;
	}
}

/* What frag_recent_index allocated. */
static void frag_recent_index_free(struct frag_recent_index *ri)
{
	free(ri->cut);
	free(ri->next);
	free(ri->taken);
	hmap_free(&ri->heads);
	memset(ri, 0, sizeof(*ri));
}

/* Rank the classes, then walk the stacks once. */
int frag_attribute(const struct frag_stats *st, const struct heap_profile *hp,
    struct symbolizer *sym, const struct fold_list *l, struct frag_report *r)
{
	struct fold fold = {0};
	int folded = 0;
	struct hmap maps[FRAG_WORST], mixed = {0};
	size_t caps[FRAG_WORST] = {0}, mcap = 0, k;
	int slot_of[FRAG_BINS_MAX], c, rv = -1;
	struct render_view v = {0};
	struct frag_recent_index ri = {0};
	struct frag_site *site = NULL;
	const struct hp_stack *s;
	unsigned j;

	memset(r, 0, sizeof(*r));
	memset(maps, 0, sizeof(maps));
	if (sym != NULL) {
		if (fold_find(&fold, hp, sym, l) == -1)
			return -1;
		folded = 1;
	}
	r->st = st;
	r->period = hp->period;
	frag_rank(st, r);
	for (j = 0; j < FRAG_BINS_MAX; j++)
		slot_of[j] = -1;
	for (j = 0; j < r->nworst; j++)
		slot_of[r->worst[j].bin] = (int)j;
	if (frag_recent_index(&ri, st, r, sym) == -1)
		goto out;
	for (k = 0; k < hp->nstacks; k++) {
		s = &hp->stacks[k];
		if ((c = frag_class_of(st, s->objs, s->bytes)) == FRAG_EMPTY)
			continue;
		r->has_samples = 1;
		r->live_bytes += s->u_bytes;
		if (c == FRAG_MIXED) {
			r->mixed_bytes += s->u_bytes;
			r->mixed_stacks++;
			if (render_view_stack(&v, s, sym) == -1 ||
			    frag_add(&r->mixed, &mixed, &v, s, &mcap,
			        folded ? &fold : NULL, NULL) == -1)
				goto out;
			continue;
		}
		if (c >= (int)st->nbins || slot_of[c] < 0)
			continue;
		if (render_view_stack(&v, s, sym) == -1 ||
		    frag_add(&r->worst[slot_of[c]], &maps[slot_of[c]], &v, s,
		        &caps[slot_of[c]], folded ? &fold : NULL,
		        &site) == -1 ||
		    frag_keep_line(r, (unsigned)slot_of[c], &v, s->u_bytes) ==
		        -1)
			goto out;
		frag_recent_match(&ri, r, site, st->bins[c].size, &v, s);
	}
	/* qsort must not get a NULL array, even of no elements. */
	for (j = 0; j < r->nworst; j++)
		if (r->worst[j].nsites > 1)
			qsort(r->worst[j].sites, r->worst[j].nsites,
			    sizeof(*r->worst[j].sites), frag_site_cmp);
	if (r->mixed.nsites > 1)
		qsort(r->mixed.sites, r->mixed.nsites, sizeof(*r->mixed.sites),
		    frag_site_cmp);
	rv = 0;
out:
	for (j = 0; j < FRAG_WORST; j++)
		hmap_free(&maps[j]);
	hmap_free(&mixed);
	frag_recent_index_free(&ri);
	render_view_free(&v);
	if (folded)
		fold_free(&fold);
	if (rv == -1)
		errno = ENOMEM;
	return rv;
}

/* Every site's stack, every line, the arrays. */
void frag_report_free(struct frag_report *r)
{
	unsigned j;
	size_t k;

	for (j = 0; j < r->nworst; j++) {
		for (k = 0; k < r->worst[j].nsites; k++)
			free(r->worst[j].sites[k].stack);
		free(r->worst[j].sites);
	}
	for (k = 0; k < r->mixed.nsites; k++)
		free(r->mixed.sites[k].stack);
	free(r->mixed.sites);
	for (k = 0; k < r->nlines; k++)
		free(r->lines[k].stack);
	free(r->lines);
	memset(r, 0, sizeof(*r));
}

/* A site's share of its class's sampled live bytes, 0..1. */
static double frag_share(const struct frag_worst *w, double bytes)
{
	return w->attributed > 0 ? bytes / w->attributed : 0;
}

/* A class's live bytes, as the allocator counts them. */
static uint64_t frag_live(const struct frag_class *b)
{
	return b->curregs * b->size;
}

/* A class's regions in use, 0..1 (1 when it has no slab). */
static double frag_util(const struct frag_class *b)
{
	uint64_t cap = b->curslabs * b->nregs;

	return cap > 0 ? (double)b->curregs / (double)cap : 1.0;
}

/* Mean use of the slabs not full, 0..1, or -1 when not known: the full
 * ones hold nregs each, the rest hold what is left. */
static double frag_nonfull_util(const struct frag_class *b)
{
	uint64_t full, in_full;

	if (b->nonfull == 0 || b->nonfull > b->curslabs || b->nregs == 0)
		return -1;
	full = b->curslabs - b->nonfull;
	in_full = full * b->nregs;
	if (in_full > b->curregs)
		return -1;
	return (double)(b->curregs - in_full) / (double)(b->nonfull * b->nregs);
}

/* frag_advice's lines: whom each is for and its text. */
struct advice {
	const char *who[8];
	char txt[8][1024];
	int n;
};

/* One more line of advice, for @p who. */
static void advice_add(struct advice *a, const char *who, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void advice_add(struct advice *a, const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->txt[a->n], sizeof(a->txt[a->n]), fmt, ap);
	va_end(ap);
	a->who[a->n++] = who;
}

/* The advice, one line each, to @p out as text (@p json 0) or as JSON
 * objects {"for","text"} comma-separated. */
static void frag_advice(struct out *out, const struct frag_report *r, int json)
{
	const struct frag_stats *st = r->st;
	const struct frag_worst *w = r->nworst > 0 ? &r->worst[0] : NULL;
	const struct frag_class *b = w != NULL ? &st->bins[w->bin] : NULL;
	char l[1024], x[32], y[32];
	struct advice a = {.n = 0};
	int i;

	(void)l;
	fmt_bytes(x, sizeof(x), st->dirty + st->muzzy);
	if (st->dirty + st->muzzy >= ((uint64_t)1 << 20)) {
		advice_add(&a, "operator",
		    "jmpg (a purge) gives back ~%s now: the dirty and muzzy "
		    "pages freed but not yet returned",
		    x);
	}
	if (b != NULL) {
		fmt_bytes(y, sizeof(y), st->small_free);
		advice_add(&a, "operator",
		    "the %s of free regions inside live slabs are not returned "
		    "by jmpg or by decay: a slab goes back only when its last "
		    "object is freed",
		    y);
		advice_add(&a, "redis",
		    "redis on stock jemalloc (Debian's): activedefrag needs "
		    "jemalloc's defrag hint, which stock jemalloc lacks "
		    "(CONFIG SET activedefrag yes is refused), so the way to get "
		    "these slabs back is a restart (with its RDB/AOF) or a "
		    "failover to a replica, which loads the data compactly");
		advice_add(&a, "developer",
		    "C: objects of one lifetime in their own arena empty its "
		    "slabs together: unsigned a; size_t sz = sizeof(a); "
		    "mallctl(\"arenas.create\", &a, &sz, NULL, 0); then "
		    "mallocx(size, MALLOCX_ARENA(a) | MALLOCX_TCACHE_NONE) for "
		    "%s (class %zu B), and the long-lived ones apart from the "
		    "short-lived",
		    w->nsites > 0 ? w->sites[0].name
		                  : "the objects of the class",
		    b->size);
	}
	for (i = 0; i < a.n; i++) {
		if (!json) {
			out_printf(out, "  - %s\n", a.txt[i]);
			continue;
		}
		out_printf(out, "%s{\"for\":\"%s\",\"text\":", i ? "," : "",
		    a.who[i]);
		json_string(out, a.txt[i]);
		out_puts(out, "}");
	}
}

/* Seconds from alloc time @p t to when prof_recent was read, never
 * negative (jemalloc's coarse clock). */
static double frag_age(const struct frag_report *r, uint64_t t)
{
	uint64_t now = r->st->recent.now_ns;

	return now > t ? (double)(now - t) / 1e9 : 0.0;
}

/* The one line under the sites on what prof_recent covers (the ages'
 * honest limit), or why it said nothing; none when it was not read. */
static void frag_recent_text(struct out *out, const struct frag_report *r)
{
	const struct frag_recent *fr = &r->st->recent;

	if (fr->state == FRAG_RECENT_FAILED)
		out_printf(out,
		    "\nprof_recent could not be read (%s): no ages for the "
		    "sites\n",
		    fr->why);
	else if (fr->state == FRAG_RECENT_OK && fr->rec.max == 0)
		out_puts(out,
		    "\nprof_recent keeps no sampled allocations (recent_max "
		    "is 0): no ages for the sites\n");
	else if (fr->state == FRAG_RECENT_OK && fr->rec.max < 0)
		out_printf(out,
		    "\nprof_recent keeps every sampled allocation since "
		    "recent_max became unlimited: older objects are not in "
		    "it (%zu records read, %zu live ones of the sites "
		    "above)\n",
		    fr->rec.n, r->recent_matched);
	else if (fr->state == FRAG_RECENT_OK)
		out_printf(out,
		    "\nprof_recent keeps the last %lld sampled allocations "
		    "(recent_max): older objects, which are the ones that pin "
		    "slabs, are not in it (%zu records read, %zu live ones of "
		    "the sites above)\n",
		    fr->rec.max, fr->rec.n, r->recent_matched);
}

/* The text answer onto @p out. */
static void frag_text(struct out *out, const struct frag_report *r)
{
	const struct frag_stats *st = r->st;
	const struct frag_class *b;
	const struct frag_worst *w;
	const struct frag_site *s;
	char a1[32], a2[32], a3[32], a4[32];
	unsigned j, shown;
	size_t k, i;
	double nf;

	out_puts(out, "# fragmentation by size class and allocation site\n");
	for (i = 0; i < FRAG_NLIMITS; i++)
		out_printf(out, "# %s\n", frag_limits[i]);
	out_printf(out,
	    "resident %s, allocated %s; free regions in small slabs %s "
	    "(%.1f%% of resident)\n",
	    fmt_bytes(a1, sizeof(a1), st->resident),
	    fmt_bytes(a2, sizeof(a2), st->allocated),
	    fmt_bytes(a3, sizeof(a3), st->small_free),
	    st->resident ? 100.0 * (double)st->small_free / (double)st->resident
	                 : 0.0);
	out_printf(out,
	    "a purge (jmpg) would give back %s (dirty %s, muzzy %s); of the "
	    "free regions inside live slabs, nothing\n",
	    fmt_bytes(a1, sizeof(a1), st->dirty + st->muzzy),
	    fmt_bytes(a2, sizeof(a2), st->dirty),
	    fmt_bytes(a3, sizeof(a3), st->muzzy));
	if (r->nworst == 0) {
		out_puts(out, "no small size class has free regions\n");
		return;
	}
	out_puts(out, "\nworst size classes (merged over arenas):\n");
	out_printf(out, "  %10s %10s %8s %9s %6s %12s %12s\n", "class", "slabs",
	    "nonfull", "nf-used", "used", "live", "free");
	for (j = 0; j < r->nworst; j++) {
		b = &st->bins[r->worst[j].bin];
		nf = frag_nonfull_util(b);
		snprintf(a4, sizeof(a4), nf < 0 ? "-" : "%.0f%%", nf * 100.0);
		out_printf(out,
		    "  %8zu B %10" PRIu64 " %8" PRIu64
		    " %9s %5.0f%% %12s %12s\n",
		    b->size, b->curslabs, b->nonfull, a4, frag_util(b) * 100.0,
		    fmt_bytes(a1, sizeof(a1), frag_live(b)),
		    fmt_bytes(a2, sizeof(a2), b->free_bytes));
	}
	out_puts(out,
	    "  (nf-used: how full the slabs not full are, on "
	    "average)\n");
	if (!st->prof_stats)
		out_puts(out,
		    "  (internal waste, requested vs usable size: "
		    "MALLOC_CONF=prof_stats:true shows it)\n");
	for (j = 0; j < r->nworst; j++) {
		w = &r->worst[j];
		b = &st->bins[w->bin];
		out_printf(out,
		    "\nsize class %zu B: %s free in %" PRIu64
		    " slabs (%.0f%% used); live %s by the profile's "
		    "estimate, %s in its slabs\n",
		    b->size, fmt_bytes(a1, sizeof(a1), b->free_bytes),
		    b->curslabs, frag_util(b) * 100.0,
		    fmt_bytes(a2, sizeof(a2), (uint64_t)w->attributed),
		    fmt_bytes(a3, sizeof(a3), frag_live(b)));
		if (st->prof_stats && b->req_count > 0)
			out_printf(out,
			    "  requests average %.0f B of its %zu: ~%s of its "
			    "live regions is internal waste\n",
			    (double)b->req_sum / (double)b->req_count, b->size,
			    fmt_bytes(a1, sizeof(a1), b->internal));
		for (k = 0, shown = 0; k < st->ncells && shown < 3; k++)
			if (st->cells[k].bin == w->bin &&
			    st->cells[k].free_bytes > 0) {
				out_printf(out, "%s arena %u %s",
				    shown ? "," : "  by arena:",
				    st->cells[k].arena,
				    fmt_bytes(a1, sizeof(a1),
				        st->cells[k].free_bytes));
				shown++;
			}
		if (shown)
			out_puts(out, "\n");
		if (w->nsites == 0) {
			out_puts(out,
			    "  no sampled stack is of this class "
			    "alone (see mixed below)\n");
			continue;
		}
		out_printf(out, "  %6s %12s %12s  %s\n", "share", "live",
		    "its free", "site; heaviest stack");
		for (k = 0; k < w->nsites && k < FRAG_SITES_SHOWN; k++) {
			s = &w->sites[k];
			out_printf(out, "  %5.1f%% %12s %12s  %s",
			    100.0 * frag_share(w, s->bytes),
			    fmt_bytes(a1, sizeof(a1), (uint64_t)s->bytes),
			    fmt_bytes(a2, sizeof(a2),
			        (uint64_t)(frag_share(w, s->bytes) *
			            (double)b->free_bytes)),
			    s->name);
			if (s->recent_live > 0)
				out_printf(out,
				    "  oldest live sampled object %s old "
				    "(prof_recent, %zu of its records)",
				    fmt_age(a3, sizeof(a3),
				        frag_age(r, s->recent_oldest_ns), 0),
				    s->recent_live);
			out_printf(out, "\n    %s\n", s->stack ? s->stack : "");
		}
		if (w->nsites > FRAG_SITES_SHOWN)
			out_printf(out, "  ... and %zu more sites\n",
			    w->nsites - FRAG_SITES_SHOWN);
	}
	frag_recent_text(out, r);
	out_printf(out,
	    "\nmixed: %zu stacks with %s live hold objects of more than one "
	    "size and are in no class above\n",
	    r->mixed_stacks,
	    fmt_bytes(a1, sizeof(a1), (uint64_t)r->mixed_bytes));
	for (k = 0; k < r->mixed.nsites && k < FRAG_SITES_SHOWN; k++) {
		s = &r->mixed.sites[k];
		out_printf(out, "  %12s  mean %.0f B  %s\n    %s\n",
		    fmt_bytes(a1, sizeof(a1), (uint64_t)s->bytes),
		    s->objs > 0 ? s->bytes / s->objs : 0.0, s->name,
		    s->stack ? s->stack : "");
	}
	if (!r->has_samples)
		out_puts(out,
		    "the heap profile has no samples: is prof.active "
		    "false? (jmep turns it on)\n");
	out_puts(out, "\nadvice:\n");
	frag_advice(out, r, 0);
}

/* jmfr's text onto a FILE (the job's body). */
int frag_render_text(FILE *f, const struct frag_report *r)
{
	struct out out = out_file(f);

	frag_text(&out, r);
	return ferror(f) ? -1 : 0;
}

/* One class's counts as JSON members (no braces). */
static void frag_json_class(struct out *out, unsigned j,
    const struct frag_class *b)
{
	out_printf(out,
	    "\"bin\":%u,\"size\":%zu,\"nregs\":%" PRIu32
	    ",\"slab_size\":%zu,\"curregs\":%" PRIu64 ",\"curslabs\":%" PRIu64
	    ",\"nonfull_slabs\":%" PRIu64 ",\"free_regions\":%" PRIu64
	    ",\"free_bytes\":%" PRIu64 ",\"live_bytes\":%" PRIu64
	    ",\"util\":%.4f",
	    j, b->size, b->nregs, b->slab_size, b->curregs, b->curslabs,
	    b->nonfull, b->free_regs, b->free_bytes, frag_live(b),
	    frag_util(b));
	if (b->req_count > 0)
		out_printf(out,
		    ",\"req_mean\":%.1f,\"internal_bytes\":%" PRIu64,
		    (double)b->req_sum / (double)b->req_count, b->internal);
}

/* A site's "recent" member: its live records in prof_recent and the
 * oldest one's age, or null; none when prof_recent was not read. */
static void frag_recent_json_site(struct out *out, const struct frag_report *r,
    const struct frag_site *s)
{
	if (r->st->recent.state == FRAG_RECENT_NONE)
		return;
	if (s->recent_live == 0) {
		out_puts(out, ",\"recent\":null");
		return;
	}
	out_printf(out, ",\"recent\":{\"live\":%zu,\"oldest_age_s\":%.3f}",
	    s->recent_live, frag_age(r, s->recent_oldest_ns));
}

/* The top-level "recent" member: what prof_recent holds and what of it
 * was given to sites, or why it could not be read. */
static void frag_recent_json(struct out *out, const struct frag_report *r)
{
	const struct frag_recent *fr = &r->st->recent;

	if (fr->state == FRAG_RECENT_NONE)
		return;
	if (fr->state == FRAG_RECENT_FAILED) {
		out_puts(out,
		    ",\"recent\":{\"recent_max\":null,\"records\":0,"
		    "\"matched\":0,\"cut\":false,\"error\":");
		json_string(out, fr->why);
		out_puts(out, "}");
		return;
	}
	out_printf(out,
	    ",\"recent\":{\"recent_max\":%lld,\"records\":%zu,"
	    "\"matched\":%zu,\"cut\":%s,\"error\":null}",
	    fr->rec.max, fr->rec.n, r->recent_matched,
	    fr->rec.cut ? "true" : "false");
}

/* The route's JSON, every figure in bytes. */
int frag_render_json(FILE *f, const struct frag_report *r)
{
	struct out o = out_file(f), *out = &o;
	const struct frag_stats *st = r->st;
	const struct frag_worst *w;
	const struct frag_site *s;
	const struct frag_class *b;
	unsigned j, n;
	size_t k;

	out_puts(out, "{\"method\":");
	json_string(out,
	    "free regions from jemalloc's bin statistics; "
	    "allocation sites from a fresh heap profile, each "
	    "stack's class its mean sampled size");
	out_puts(out, ",\"limits\":[");
	for (k = 0; k < FRAG_NLIMITS; k++) {
		out_puts(out, k ? "," : "");
		json_string(out, frag_limits[k]);
	}
	out_printf(out,
	    "],\"resident\":%" PRIu64 ",\"allocated\":%" PRIu64
	    ",\"active\":%" PRIu64 ",\"small_free\":%" PRIu64
	    ",\"dirty\":%" PRIu64 ",\"muzzy\":%" PRIu64
	    ",\"purge_gain\":%" PRIu64 ",\"narenas\":%u,\"period\":%" PRIu64
	    ",\"live_bytes\":%.0f,\"mixed_bytes\":%.0f,\"mixed_stacks\":%zu"
	    ",\"has_samples\":%s,\"prof_stats\":%s",
	    st->resident, st->allocated, st->active, st->small_free, st->dirty,
	    st->muzzy, st->dirty + st->muzzy, st->narenas, r->period,
	    r->live_bytes, r->mixed_bytes, r->mixed_stacks,
	    r->has_samples ? "true" : "false",
	    st->prof_stats ? "true" : "false");
	frag_recent_json(out, r);
	out_puts(out, ",\"classes\":[");
	for (j = 0, n = 0; j < st->nbins; j++) {
		if (st->bins[j].curslabs == 0)
			continue;
		out_puts(out, n++ ? ",{" : "{");
		frag_json_class(out, j, &st->bins[j]);
		out_puts(out, "}");
	}
	out_puts(out, "],\"arenas\":[");
	for (k = 0; k < st->ncells; k++)
		out_printf(out,
		    "%s{\"arena\":%u,\"bin\":%u,\"size\":%zu,\"curregs\":%" PRIu64
		    ",\"curslabs\":%" PRIu64 ",\"nonfull_slabs\":%" PRIu64
		    ",\"free_bytes\":%" PRIu64 "}",
		    k ? "," : "", st->cells[k].arena, st->cells[k].bin,
		    st->cells[k].bin < st->nbins
		        ? st->bins[st->cells[k].bin].size
		        : 0,
		    st->cells[k].curregs, st->cells[k].curslabs,
		    st->cells[k].nonfull, st->cells[k].free_bytes);
	out_puts(out, "],\"worst\":[");
	for (j = 0; j < r->nworst; j++) {
		w = &r->worst[j];
		b = &st->bins[w->bin];
		out_puts(out, j ? ",{" : "{");
		frag_json_class(out, w->bin, b);
		out_printf(out, ",\"attributed_bytes\":%.0f,\"sites\":[",
		    w->attributed);
		for (k = 0; k < w->nsites; k++) {
			s = &w->sites[k];
			out_puts(out, k ? ",{\"site\":" : "{\"site\":");
			json_string(out, s->name);
			out_printf(out,
			    ",\"bytes\":%.0f,\"objects\":%.0f,\"share\":%.4f,"
			    "\"free_bytes\":%.0f,\"stack\":",
			    s->bytes, s->objs, frag_share(w, s->bytes),
			    frag_share(w, s->bytes) * (double)b->free_bytes);
			json_string(out, s->stack ? s->stack : "");
			frag_recent_json_site(out, r, s);
			out_puts(out, "}");
		}
		out_puts(out, "]}");
	}
	out_puts(out, "],\"mixed_sites\":[");
	for (k = 0; k < r->mixed.nsites; k++) {
		s = &r->mixed.sites[k];
		out_puts(out, k ? ",{\"site\":" : "{\"site\":");
		json_string(out, s->name);
		out_printf(out,
		    ",\"bytes\":%.0f,\"objects\":%.0f,\"stack\":", s->bytes,
		    s->objs);
		json_string(out, s->stack ? s->stack : "");
		out_puts(out, "}");
	}
	out_puts(out, "],\"advice\":[");
	frag_advice(out, r, 1);
	out_puts(out, "]}\n");
	return ferror(f) ? -1 : 0;
}

/* One collapsed line per stack, weighted by its share of the waste. */
int frag_render_flame(FILE *f, const struct frag_report *r)
{
	const struct frag_worst *w;
	const struct frag_line *l;
	long long x;
	size_t k;

	for (k = 0; k < r->nlines; k++) {
		l = &r->lines[k];
		w = &r->worst[l->slot];
		x = render_round(frag_share(w, l->bytes) *
		    (double)r->st->bins[w->bin].free_bytes);
		if (x <= 0)
			continue;
		fprintf(f, "size class %zu B;%s %lld\n",
		    r->st->bins[w->bin].size, l->stack, x);
	}
	return ferror(f) ? -1 : 0;
}

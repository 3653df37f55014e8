/*
 * Rendering. Every format walks the same view of a stack
 * (render_view_stack): its frames expanded through inline chains, leaf
 * first, with the allocator's own frames cut off as jeprof does
 * (everything up to and including the last malloc-family frame), then
 * each format sums what it needs.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

/* jeprof's list of allocator entry points (RemoveUninterestingFrames). */
static const char *const skip_names[] = {"calloc", "cfree", "malloc", "newImpl",
    "void* newImpl", "free", "memalign", "posix_memalign", "aligned_alloc",
    "pvalloc", "valloc", "realloc", "mallocx", "rallocx", "xallocx", "dallocx",
    "sdallocx", "sdallocx_noflags", "tc_calloc", "tc_cfree", "tc_malloc",
    "tc_free", "tc_memalign", "tc_posix_memalign", "tc_pvalloc", "tc_valloc",
    "tc_realloc", "tc_new", "tc_delete", "tc_newarray", "tc_deletearray",
    "tc_new_nothrow", "tc_newarray_nothrow", "do_malloc", "::do_malloc",
    "::do_malloc_or_cpp_alloc", "DoSampledAllocation", "simple_alloc::allocate",
    "__malloc_alloc_template::allocate", "__builtin_delete", "__builtin_new",
    "__builtin_vec_delete", "__builtin_vec_new", "operator new",
    "operator new[]", "malloc_zone_malloc", "malloc_zone_calloc",
    "malloc_zone_valloc", "malloc_zone_realloc", "malloc_zone_memalign",
    "malloc_zone_free", "__start_google_malloc", "__stop_google_malloc",
    "__start_malloc_hook", "__stop_malloc_hook"};

/* Is @p f the allocator's own entry point? */
static int skipped(const char *f)
{
	size_t i;

	for (i = 0; i < sizeof(skip_names) / sizeof(skip_names[0]); i++)
		if (strcmp(f, skip_names[i]) == 0)
			return 1;
	return strstr(f, "TCMalloc") != NULL ||
	    strncmp(f, "tcmalloc::", 10) == 0;
}

/* skipped(@p f), remembered in @p v by the name's pointer. */
static int view_skipped(struct render_view *v, const char *f)
{
	struct render_seen *t, *e;
	size_t i, h, cap;

	if ((v->nseen + 1) * 2 > v->cap_seen) {
		cap = v->cap_seen ? v->cap_seen * 2 : 1024;
		if ((t = calloc(cap, sizeof(*t))) == NULL)
			return skipped(f); /* no memory to remember: ask */
		for (i = 0; i < v->cap_seen; i++) {
			if (v->seen[i].name == NULL)
				continue;
			for (h = ((uintptr_t)v->seen[i].name >> 3) *
			             0x9e3779b97f4a7c15ull >>
			         20;
			     t[h & (cap - 1)].name != NULL; h++)
				;
			t[h & (cap - 1)] = v->seen[i];
		}
		free(v->seen);
		v->seen = t;
		v->cap_seen = cap;
	}
	for (h = ((uintptr_t)f >> 3) * 0x9e3779b97f4a7c15ull >> 20;
	     (e = &v->seen[h & (v->cap_seen - 1)])->name != NULL; h++)
		if (e->name == f)
			return e->skip;
	e->name = f;
	e->skip = skipped(f);
	v->nseen++;
	return e->skip;
}

int render_view_stack(struct render_view *v, const struct hp_stack *st,
    struct symbolizer *sym)
{
	struct sym_frame fr[SYM_INLINE_MAX];
	size_t d;
	int n, i;

	v->n = 0;
	/* The allocator's library first: jemalloc's own frames, whatever
	 * a stripped library calls them. */
	for (d = 0; d < st->depth && sym_in_allocator(sym, st->pc[d]); d++)
		;
	for (; d < st->depth; d++) {
		n = sym_lookup(sym, st->pc[d], d == 0, fr, SYM_INLINE_MAX);
		for (i = 0; i < n; i++) {
			if (view_skipped(v, fr[i].func)) {
				v->n = 0; /* the allocator and what it called */
				continue;
			}
			if (hp_grow((void **)&v->f, &v->cap, v->n + 1,
			        sizeof(*v->f)) == -1)
				return -1;
			v->f[v->n].f = fr[i];
			v->f[v->n].pc = st->pc[d];
			v->f[v->n].depth = d;
			v->n++;
		}
	}
	return 0;
}

void render_view_free(struct render_view *v)
{
	free(v->f);
	free(v->seen);
	memset(v, 0, sizeof(*v));
}

double render_value_of(const struct hp_stack *st, enum render_value v)
{
	return v == RENDER_OBJECTS ? st->u_objs : st->u_bytes;
}

double render_base_of(const struct hp_stack *st, enum render_value v)
{
	return v == RENDER_OBJECTS ? st->b_objs : st->b_bytes;
}

/* One function's sums for the text table. */
struct fn_row {
	const char *name;
	double flat, cum;
	size_t seen; /* the last stack counted in cum, + 1 */
};

/* Rows by name: a sorted array would do, but profiles have 10^4-10^5
 * distinct names over 10^5-10^6 frames: a hash table. */
struct fn_table {
	struct fn_row *rows;
	size_t cap, n;
};

static unsigned long fn_hash(const char *s)
{
	unsigned long h = 5381;

	while (*s != '\0')
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* The row of @p name, made if new; NULL if memory runs out. */
static struct fn_row *fn_get(struct fn_table *t, const char *name)
{
	struct fn_row *r;
	size_t i, h;

	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct fn_row *nr = calloc(cap, sizeof(*nr));
		if (nr == NULL)
			return NULL;
		for (i = 0; i < t->cap; i++) {
			if (t->rows[i].name == NULL)
				continue;
			for (h = fn_hash(t->rows[i].name);
			     nr[h & (cap - 1)].name != NULL; h++)
				;
			nr[h & (cap - 1)] = t->rows[i];
		}
		free(t->rows);
		t->rows = nr;
		t->cap = cap;
	}
	for (h = fn_hash(name); (r = &t->rows[h & (t->cap - 1)])->name != NULL;
	     h++)
		if (strcmp(r->name, name) == 0)
			return r;
	r->name = name;
	t->n++;
	return r;
}

/* Largest flat first, then cum, then by name: a stable order. */
static int row_cmp(const void *a, const void *b)
{
	const struct fn_row *x = a, *y = b;

	if (x->flat != y->flat)
		return x->flat < y->flat ? 1 : -1;
	if (x->cum != y->cum)
		return x->cum < y->cum ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* jeprof's units: MB with one decimal, or whole objects. */
static void unparse(char *buf, size_t len, double x, enum render_value v)
{
	if (v == RENDER_OBJECTS)
		snprintf(buf, len, "%lld", (long long)x);
	else
		snprintf(buf, len, "%.1f", x / 1048576.0);
}

/* "12.3%" of @p total. */
static void percent(char *buf, size_t len, double x, double total)
{
	snprintf(buf, len, "%.1f%%", total != 0 ? x * 100 / total : 0.0);
}

int render_text(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v, size_t limit)
{
	struct fn_table t = {0};
	struct render_view vw = {0};
	struct fn_row *r, *rows;
	char a[32], b[16], c[16], d[32], e[16];
	double total = 0, sum = 0, x;
	size_t k, i, n;
	int rv = -1;

	for (k = 0; k < hp->nstacks; k++) {
		if (render_view_stack(&vw, &hp->stacks[k], sym) == -1)
			goto out;
		x = render_value_of(&hp->stacks[k], v);
		total += x;
		for (i = 0; i < vw.n; i++) {
			if ((r = fn_get(&t, vw.f[i].f.func)) == NULL)
				goto out;
			if (i == 0)
				r->flat += x;
			if (r->seen != k + 1) { /* once per stack */
				r->cum += x;
				r->seen = k + 1;
			}
		}
	}
	if ((rows = malloc((t.n ? t.n : 1) * sizeof(*rows))) == NULL)
		goto out;
	for (i = 0, n = 0; i < t.cap; i++)
		if (t.rows[i].name != NULL)
			rows[n++] = t.rows[i];
	qsort(rows, n, sizeof(*rows), row_cmp);
	unparse(a, sizeof(a), total, v);
	fprintf(out, "Total: %s %s\n", a,
	    v == RENDER_OBJECTS ? "objects" : "MB");
	if (limit != 0 && limit < n)
		n = limit;
	for (i = 0; i < n; i++) {
		sum += rows[i].flat;
		unparse(a, sizeof(a), rows[i].flat, v);
		percent(b, sizeof(b), rows[i].flat, total);
		percent(c, sizeof(c), sum, total);
		unparse(d, sizeof(d), rows[i].cum, v);
		percent(e, sizeof(e), rows[i].cum, total);
		fprintf(out, "%8s %6s %6s %8s %6s %s\n", a, b, c, d, e,
		    rows[i].name);
	}
	free(rows);
	rv = ferror(out) ? -1 : 0;
out:
	if (rv == -1 && errno == 0)
		errno = ENOMEM;
	free(t.rows);
	render_view_free(&vw);
	return rv;
}

/* Write @p f with any ';' as ':' (';' separates frames). */
static void put_frame(FILE *out, const char *f)
{
	const char *semi;

	while ((semi = strchr(f, ';')) != NULL) {
		fwrite(f, 1, (size_t)(semi - f), out);
		fputc(':', out);
		f = semi + 1;
	}
	fputs(f, out);
}

int render_collapsed(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v)
{
	struct render_view vw = {0};
	long long x, old;
	size_t k, i;

	/* Stacks that symbolize alike are separate lines here: the tools
	 * that read collapsed stacks (flamegraph.pl, speedscope, inferno)
	 * add them up. */
	for (k = 0; k < hp->nstacks; k++) {
		if (render_view_stack(&vw, &hp->stacks[k], sym) == -1) {
			render_view_free(&vw);
			errno = ENOMEM;
			return -1;
		}
		x = llround(render_value_of(&hp->stacks[k], v));
		old = llround(render_base_of(&hp->stacks[k], v));
		if (vw.n == 0 || (x == 0 && (!hp->diff || old == 0)))
			continue;
		for (i = vw.n; i-- > 0;) {
			put_frame(out, vw.f[i].f.func);
			fputc(i > 0 ? ';' : ' ', out);
		}
		if (hp->diff) /* difffolded.pl's "old new" */
			fprintf(out, "%lld %lld\n", old, old + x);
		else
			fprintf(out, "%lld\n", x);
	}
	render_view_free(&vw);
	return ferror(out) ? -1 : 0;
}

/* Has @p key been written? A set of addresses, open addressing. */
struct pc_set {
	uint64_t *keys; /* 0 is free: no address 0 is ever looked up */
	size_t cap, n;
};

/* Add @p key; 1 if it is new, 0 if it was there, -1 out of memory. */
static int pc_add(struct pc_set *set, uint64_t key)
{
	size_t i, h;

	if ((set->n + 1) * 2 > set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 4096;
		uint64_t *nk = calloc(cap, sizeof(*nk));
		if (nk == NULL)
			return -1;
		for (i = 0; i < set->cap; i++) {
			if (set->keys[i] == 0)
				continue;
			for (h = set->keys[i] * 0x9e3779b97f4a7c15ull;
			     nk[(h >> 20) & (cap - 1)] != 0; h += 1ull << 20)
				;
			nk[(h >> 20) & (cap - 1)] = set->keys[i];
		}
		free(set->keys);
		set->keys = nk;
		set->cap = cap;
	}
	for (h = key * 0x9e3779b97f4a7c15ull;
	     set->keys[(h >> 20) & (set->cap - 1)] != 0; h += 1ull << 20)
		if (set->keys[(h >> 20) & (set->cap - 1)] == key)
			return 0;
	set->keys[(h >> 20) & (set->cap - 1)] = key;
	set->n++;
	return 1;
}

int render_symbolized(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const char *binary, const char *raw, size_t rawlen)
{
	struct sym_frame fr[SYM_INLINE_MAX];
	struct pc_set set = {0};
	uint64_t addr;
	size_t k, d;
	int n, i, r;

	fprintf(out, "--- symbol\n");
	if (binary != NULL)
		fprintf(out, "binary=%s\n", binary);
	for (k = 0; k < hp->nstacks; k++)
		for (d = 0; d < hp->stacks[k].depth; d++) {
			/* jeprof looks callers up at pc - 1 (a return
			 * address points past its call). */
			addr = hp->stacks[k].pc[d] - (d > 0);
			if (addr == 0 || (r = pc_add(&set, addr)) == 0)
				continue;
			if (r == -1) {
				free(set.keys);
				errno = ENOMEM;
				return -1;
			}
			n = sym_lookup(sym, hp->stacks[k].pc[d], d == 0, fr,
			    SYM_INLINE_MAX);
			/* Callers first, "--" between: jeprof's order. */
			fprintf(out, "0x%llx ", (unsigned long long)addr);
			for (i = n; i-- > 0;)
				fprintf(out, "%s%s", fr[i].name,
				    i ? "--" : "\n");
		}
	free(set.keys);
	fprintf(out, "---\n--- heap\n");
	fwrite(raw, 1, rawlen, out);
	return ferror(out) ? -1 : 0;
}

/*
 * jeprof --text: every function's flat and cumulative value over the
 * stacks' views, sorted by flat.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "render.h"

/* One function's sums for the text table. */
struct fn_row {
	const char *name;
	double flat, cum;
	size_t seen; /* the last stack counted in cum, + 1 */
};

/* Rows by name: a sorted array would do, but profiles have 10^4-10^5
 * distinct names over 10^5-10^6 frames: a hash table over the rows. */
struct fn_table {
	struct fn_row *rows; /* in the order first met */
	size_t cap, n;
	struct hmap ix; /* hash of a name -> index in rows */
};

/* What fn_get looks for. */
struct fn_key {
	const struct fn_table *t;
	const char *name;
};

/* Is row @p i the one of the name in @p arg? */
static int fn_eq(const void *arg, uint64_t i)
{
	const struct fn_key *k = arg;

	return strcmp(k->t->rows[i].name, k->name) == 0;
}

/* The row of @p name, made if new; NULL if memory runs out. */
static struct fn_row *fn_get(struct fn_table *t, const char *name)
{
	struct fn_key k = {t, name};
	struct fn_row *r;
	uint64_t *i;
	int added;

	if (hp_grow((void **)&t->rows, &t->cap, t->n + 1, sizeof(*t->rows)) ==
	        -1 ||
	    (i = hmap_add(&t->ix, hash_str(name), fn_eq, &k, &added)) == NULL)
		return NULL;
	if (!added)
		return &t->rows[*i];
	*i = t->n;
	r = &t->rows[t->n++];
	memset(r, 0, sizeof(*r));
	r->name = name;
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

/* jeprof's units, named as ours are: MiB (what jeprof calls MB: it
 * divides by 2^20) with one decimal, or whole objects (truncated, as
 * jeprof's int() does). A sum of many stacks may pass what one holds:
 * clamped again here, so the cast is defined. */
static void unparse(char *buf, size_t len, double x, enum render_value v)
{
	x = render_clamp(x);
	if (v == RENDER_OBJECTS)
		snprintf(buf, len, "%lld", (long long)x);
	else
		snprintf(buf, len, "%.1f", x / 1048576.0);
}

/* "12.3%" of @p total (a share of a difference can be far past 100%,
 * never inf: both are clamped and finite). */
static void percent(char *buf, size_t len, double x, double total)
{
	snprintf(buf, len, "%.1f%%",
	    total != 0 ? render_clamp(x * 100 / total) : 0.0);
}

/* jeprof --text's table, largest flat first (see render.h). */
int render_text(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v, size_t limit,
    const struct fold_list *fl)
{
	struct fold fold = {0};
	struct fn_table t = {0};
	struct render_view vw = {0};
	struct fn_row *r, *rows;
	char a[32], b[32], c[32], d[32], e[32];
	double total = 0, sum = 0, x;
	size_t k, i, n, self;
	int rv = -1;

	/* Self bytes go past the allocator's wrappers (fold.h). */
	if (fold_find(&fold, hp, sym, fl) == -1)
		goto out;
	for (k = 0; k < hp->nstacks; k++) {
		if (render_view_stack(&vw, &hp->stacks[k], sym) == -1)
			goto out;
		x = render_value_of(&hp->stacks[k], v);
		total += x;
		self = fold_self(&fold, &vw);
		for (i = 0; i < vw.n; i++) {
			if ((r = fn_get(&t, vw.f[i].f.func)) == NULL)
				goto out;
			if (i == self)
				r->flat += x;
			if (r->seen != k + 1) { /* once per stack */
				r->cum += x;
				r->seen = k + 1;
			}
		}
	}
	rows = t.rows;
	n = t.n;
	if (n > 0) /* no rows is no array: qsort wants one */
		qsort(rows, n, sizeof(*rows), row_cmp);
	unparse(a, sizeof(a), total, v);
	/* Every column in MiB, as the Total says: the table's numbers are
	 * jeprof's (its "MB" is MiB), its unit is named as the rest of
	 * our views name theirs. */
	fprintf(out, "Total: %s %s\n", a,
	    v == RENDER_OBJECTS ? "objects" : "MiB");
	fold_note(out, &fold, "");
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
	rv = ferror(out) ? -1 : 0;
out:
	if (rv == -1 && errno == 0)
		errno = ENOMEM;
	fold_free(&fold);
	free(t.rows);
	hmap_free(&t.ix);
	render_view_free(&vw);
	return rv;
}

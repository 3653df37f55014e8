/*
 * jeprof --text: every function's flat and cumulative value over the
 * stacks' views, sorted by flat.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

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

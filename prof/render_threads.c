/*
 * The live heap by thread (render_threads.h): each stack's tN: lines
 * unsampled with the stack's scale, summed per thread, with each
 * thread's leaf functions.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "bytes.h"
#include "render_threads.h"

/* A (row, function) pair's sum while the stacks are walked. */
struct tf_entry {
	size_t row;
	const char *name;
	double value;
};

/* What the walk builds. */
struct tsplit {
	struct thread_row *rows;
	size_t n, cap;
	struct hmap by_tid; /* tid -> index in rows */
	size_t none;        /* the THREAD_ROW_NONE row's index + 1 */
	struct tf_entry *fn;
	size_t nfn, cap_fn;
	struct hmap fn_ix; /* (row, name) -> index in fn */
};

/* What tf_eq looks for. */
struct tf_key {
	const struct tsplit *t;
	size_t row;
	const char *name;
};

/* Is entry @p i the one of @p arg? Names by pointer: the symbolizer
 * interns them. */
static int tf_eq(const void *arg, uint64_t i)
{
	const struct tf_key *k = arg;

	return k->t->fn[i].row == k->row && k->t->fn[i].name == k->name;
}

/* Add @p x to function @p name of row @p row. -1 when memory runs out. */
static int tf_add(struct tsplit *t, size_t row, const char *name, double x)
{
	struct tf_key k = {t, row, name};
	uint64_t *i;
	int added;

	if (hp_grow((void **)&t->fn, &t->cap_fn, t->nfn + 1, sizeof(*t->fn)) ==
	        -1 ||
	    (i = hmap_add(&t->fn_ix,
	         hash_int((uint64_t)row ^ hash_int((uintptr_t)name)), tf_eq, &k,
	         &added)) == NULL)
		return -1;
	if (added) {
		*i = t->nfn;
		t->fn[t->nfn++] = (struct tf_entry){row, name, 0};
	}
	t->fn[*i].value += x;
	return 0;
}

/* A new row; its index, or -1 when memory runs out. */
static long row_new(struct tsplit *t, uint64_t tid, const char *name, int kind)
{
	if (hp_grow((void **)&t->rows, &t->cap, t->n + 1, sizeof(*t->rows)) ==
	    -1)
		return -1;
	memset(&t->rows[t->n], 0, sizeof(t->rows[t->n]));
	t->rows[t->n].tid = tid;
	t->rows[t->n].name = name;
	t->rows[t->n].kind = kind;
	return (long)t->n++;
}

/* The row of thread @p tid, made (unnamed) if the header had no line
 * for it (a thread that ended before the dump). -1: no memory. */
static long row_of(struct tsplit *t, uint64_t tid)
{
	uint64_t *i;
	long r;
	int added;

	if ((i = hmap_put(&t->by_tid, tid, &added)) == NULL)
		return -1;
	if (!added)
		return (long)*i;
	if ((r = row_new(t, tid, NULL, THREAD_ROW_THREAD)) == -1)
		return -1;
	/* hmap_put's slot may have moved: set it again. */
	if ((i = hmap_put(&t->by_tid, tid, NULL)) == NULL)
		return -1;
	*i = (uint64_t)r;
	return r;
}

/* The unit a split sorts by. */
static double value_of(const struct thread_row *r, enum render_value v)
{
	return v == RENDER_OBJECTS ? r->u_objs : r->u_bytes;
}

/* Biggest bytes first; then objects, the threads before the other
 * rows, and by tid: a stable order. */
static int row_cmp_bytes(const void *a, const void *b)
{
	const struct thread_row *x = a, *y = b;

	if (x->u_bytes != y->u_bytes)
		return x->u_bytes < y->u_bytes ? 1 : -1;
	if (x->u_objs != y->u_objs)
		return x->u_objs < y->u_objs ? 1 : -1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Biggest objects first, then as row_cmp_bytes. */
static int row_cmp_objs(const void *a, const void *b)
{
	const struct thread_row *x = a, *y = b;

	if (x->u_objs != y->u_objs)
		return x->u_objs < y->u_objs ? 1 : -1;
	return row_cmp_bytes(a, b);
}

/* Function @p e into its row's top, biggest first (insertion into a
 * list of THREADS_TOP: the list is short, a heap would not pay). */
static void top_add(struct thread_row *r, const struct tf_entry *e)
{
	size_t j;

	if (e->value == 0)
		return;
	for (j = r->ntop; j > 0 &&
	     (r->top[j - 1].value < e->value ||
	         (r->top[j - 1].value == e->value &&
	             strcmp(r->top[j - 1].name, e->name) > 0));
	     j--)
		if (j < THREADS_TOP)
			r->top[j] = r->top[j - 1];
	if (j < THREADS_TOP) {
		r->top[j] = (struct thread_fn){e->name, e->value};
		if (r->ntop < THREADS_TOP)
			r->ntop++;
	}
}

/* The unsampled value of row @p r that round_rows rounds, and where
 * it puts it. */
static double *unrounded(struct thread_row *r, int objs)
{
	return objs ? &r->u_objs : &r->u_bytes;
}

static long long *rounded(struct thread_row *r, int objs)
{
	return objs ? &r->objs : &r->bytes;
}

/* A row's index and what flooring lost of its value. */
struct frac {
	size_t i;
	double lost;
};

/* Most lost first, then by index: a stable order. */
static int frac_cmp(const void *a, const void *b)
{
	const struct frac *x = a, *y = b;

	if (x->lost != y->lost)
		return x->lost < y->lost ? 1 : -1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Round the @p n rows' objects (@p objs) or bytes so they add up to the
 * rounding of their sum: each floored, and the units missing given to
 * the largest remainders (Hamilton's method), each within 1 of its own
 * value. The sum into *@p total. */
static void round_rows(struct thread_row *rows, size_t n, int objs,
    long long *total)
{
	struct frac *f;
	double sum = 0, x;
	long long got = 0, want;
	size_t i;

	f = calloc(n ? n : 1, sizeof(*f));
	for (i = 0; i < n; i++) {
		x = render_clamp(*unrounded(&rows[i], objs));
		*rounded(&rows[i], objs) = render_round(floor(x));
		/* Values stay within the profile's total (< 2^62), and so
		 * does their sum: no overflow. */
		got += *rounded(&rows[i], objs);
		sum += x;
		if (f != NULL)
			f[i] = (struct frac){i, x - floor(x)};
	}
	want = render_round(sum);
	/* At most n units are missing (each floor loses less than one). */
	if (f != NULL && n > 0 && got < want) {
		qsort(f, n, sizeof(*f), frac_cmp);
		for (i = 0; i < n && got < want; i++, got++)
			(*rounded(&rows[f[i].i], objs))++;
	}
	/* No memory to pick with: the sum of the floors, still the sum. */
	*total = got;
	free(f);
}

/* Split the profile by thread (render_threads.h). */
int threads_split(const struct heap_profile *hp, struct symbolizer *sym,
    enum render_value v, size_t limit, const struct fold_list *fl,
    struct thread_split *out)
{
	struct fold fold = {0};
	struct tsplit t = {0};
	struct render_view vw = {0};
	const struct hp_stack *st;
	uint64_t sum_objs, sum_bytes;
	double sc, po, pb, in_o, in_b;
	size_t k, i, j, self = 0;
	long r;
	int rv = -1, fit;

	memset(out, 0, sizeof(*out));
	if (hp->diff) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	/* A thread's functions: past the allocator's wrappers (fold.h). */
	if (sym != NULL && fold_find(&fold, hp, sym, fl) == -1)
		return -1;
	out->folded = fold.n;
	fold_names(&fold, out->folded_names, sizeof(out->folded_names));
	for (i = 0; i < hp->nthreads; i++) {
		if ((r = row_of(&t, hp->threads[i].c.tid)) == -1)
			goto out;
		if (t.rows[r].name == NULL) /* the first line's, if twice */
			t.rows[r].name = hp->threads[i].name;
	}
	for (k = 0; k < hp->nstacks; k++) {
		st = &hp->stacks[k];
		/* jeprof's scale for the stack, on each thread's part. */
		sc = heapprof_scale(st->objs, st->bytes, hp->period);
		if (sym != NULL && render_view_stack(&vw, st, sym) == -1)
			goto out;
		if (sym != NULL)
			self = fold_self(&fold, &vw);
		sum_objs = sum_bytes = 0;
		in_o = in_b = 0;
		/* Lines that claim more than the stack: all of it is
		 * nobody's (the row below), not a thread's. */
		fit = render_threads_fit(st);
		for (i = 0; fit && i < st->ntc; i++) {
			const struct hp_tcount *c = &st->tc[i];
			if ((r = row_of(&t, c->tid)) == -1)
				goto out;
			po = (double)c->objs * sc;
			pb = (double)c->bytes * sc;
			t.rows[r].u_objs += po;
			t.rows[r].u_bytes += pb;
			in_o += po;
			in_b += pb;
			sum_objs += c->objs;
			sum_bytes += c->bytes;
			if (sym != NULL && vw.n > 0 &&
			    tf_add(&t, (size_t)r, vw.f[self].f.func,
			        v == RENDER_OBJECTS ? po : pb) == -1)
				goto out;
		}
		/* jemalloc's t* is the sum of its tN: lines; where it is
		 * not, the rest is nobody's, and still counts. */
		if (sum_objs == st->objs && sum_bytes == st->bytes)
			continue;
		if (t.none == 0) {
			if ((r = row_new(&t, 0, NULL, THREAD_ROW_NONE)) == -1)
				goto out;
			t.none = (size_t)r + 1;
		}
		t.rows[t.none - 1].u_objs += st->u_objs - in_o;
		t.rows[t.none - 1].u_bytes += st->u_bytes - in_b;
		if (sym != NULL && vw.n > 0 &&
		    tf_add(&t, t.none - 1, vw.f[self].f.func,
		        v == RENDER_OBJECTS ? st->u_objs - in_o
		                            : st->u_bytes - in_b) == -1)
			goto out;
	}
	/* One pass over the functions: rows times functions would be
	 * 10^8 steps for a thousand threads over a big profile. */
	for (i = 0; i < t.nfn; i++)
		top_add(&t.rows[t.fn[i].row], &t.fn[i]);
	/* Threads holding nothing (a thread's lines all zero, as jemalloc
	 * writes them for one whose samples were freed) go. */
	for (i = j = 0; i < t.n; i++)
		if (t.rows[i].u_objs != 0 || t.rows[i].u_bytes != 0) {
			out->nthreads += t.rows[i].kind == THREAD_ROW_THREAD;
			t.rows[j++] = t.rows[i];
		}
	t.n = j;
	if (t.n > 0)
		qsort(t.rows, t.n, sizeof(*t.rows),
		    v == RENDER_OBJECTS ? row_cmp_objs : row_cmp_bytes);
	/* The rows past the limit as one. */
	if (limit != 0 && t.n > limit + 1) {
		struct thread_row more = {.kind = THREAD_ROW_MORE};
		for (j = limit; j < t.n; j++) {
			more.u_objs += t.rows[j].u_objs;
			more.u_bytes += t.rows[j].u_bytes;
			more.nmore += t.rows[j].kind == THREAD_ROW_THREAD;
		}
		t.rows[limit] = more;
		t.n = limit + 1;
	}
	round_rows(t.rows, t.n, 1, &out->objs);
	round_rows(t.rows, t.n, 0, &out->bytes);
	out->u_objs = hp->u_objs;
	out->u_bytes = hp->u_bytes;
	out->rows = t.rows;
	out->n = t.n;
	t.rows = NULL;
	rv = 0;
out:
	if (rv == -1 && errno == 0)
		errno = ENOMEM;
	free(t.rows);
	free(t.fn);
	hmap_free(&t.by_tid);
	hmap_free(&t.fn_ix);
	render_view_free(&vw);
	fold_free(&fold);
	return rv;
}

void threads_split_free(struct thread_split *s)
{
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

/* "12.34%" of @p total. */
static void share(char *buf, size_t len, double x, double total)
{
	snprintf(buf, len, "%.2f%%",
	    total != 0 ? render_clamp(x * 100 / total) : 0.0);
}

/* The split as text (render_threads.h). */
int render_threads(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v, size_t limit,
    const struct fold_list *fold)
{
	struct thread_split s;
	const struct thread_row *r;
	double total;
	char pct[32], human[32];
	size_t i, j;

	if (threads_split(hp, sym, v, limit, fold, &s) == -1)
		return -1;
	total = v == RENDER_OBJECTS ? s.u_objs : s.u_bytes;
	fprintf(out,
	    "# each row rounded to a whole byte and object so the rows add "
	    "up to Total exactly; functions: leaf (past allocation wrappers), "
	    "by %s\n",
	    v == RENDER_OBJECTS ? "objects" : "bytes");
	/* Whole bytes, so the rows add up; and the size as every view
	 * says one, at the end where field-counting readers do not look. */
	fprintf(out, "Total: %lld bytes, %lld objects, in %zu threads (%s)\n",
	    s.bytes, s.objs, s.nthreads,
	    fmt_bytes_as(human, sizeof(human), (double)s.bytes, 0));
	if (s.folded > 0)
		fprintf(out,
		    "Folded allocation wrappers into their callers: %s "
		    "(fold_wrappers to change)\n",
		    s.folded_names);
	fprintf(out, "%14s %10s %8s  %s\n", "bytes", "objects", "%", "thread");
	for (i = 0; i < s.n; i++) {
		r = &s.rows[i];
		share(pct, sizeof(pct), value_of(r, v), total);
		fprintf(out, "%14lld %10lld %8s  ", r->bytes, r->objs, pct);
		if (r->kind == THREAD_ROW_MORE)
			fprintf(out, "(%zu more threads)\n", r->nmore);
		else if (r->kind == THREAD_ROW_NONE)
			fprintf(out, "(no thread line)\n");
		else {
			fprintf(out, "t%llu%s", (unsigned long long)r->tid,
			    r->name != NULL ? " " : "");
			if (r->name != NULL) /* the dump's: any bytes */
				render_line(out, r->name);
			fputc('\n', out);
		}
		for (j = 0; j < r->ntop; j++) {
			share(pct, sizeof(pct), r->top[j].value, total);
			/* In the column of the unit it is counted in. */
			if (v == RENDER_OBJECTS)
				fprintf(out, "%14s %10lld %8s    ", "",
				    render_round(r->top[j].value), pct);
			else
				fprintf(out, "%14lld %10s %8s    ",
				    render_round(r->top[j].value), "", pct);
			render_line(out, r->top[j].name);
			fputc('\n', out);
		}
	}
	share(pct, sizeof(pct), total, total);
	fprintf(out, "%14lld %10lld %8s  (sum)\n", s.bytes, s.objs, pct);
	threads_split_free(&s);
	return ferror(out) ? -1 : 0;
}

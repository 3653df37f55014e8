/*
 * trend — leak suspects from a series of heap profiles (see trend.h).
 *
 * A function is a suspect when its live bytes grew in nearly every
 * interval of the series (TREND_GROWN_PCT of them), and are more at the
 * end than at the start. A cache that filled in the first interval and
 * then stayed flat grew in one; churn goes up as often as down: neither
 * passes, however many bytes they hold. Its rate is its growth from the
 * first to the last point it grew to, per minute of that span.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"
#include "fold.h"
#include "json.h"
#include "out.h"
#include "prof_util.h"
#include "render.h"
#include "trend.h"
#include "when.h"

/* "Nearly every interval": this share of them, rounded up. */
#define TREND_GROWN_PCT 80
/* Frames of a heaviest stack kept in an index. */
#define TREND_STACK_FRAMES 48
/* Bytes of a line of an index. */
#define TREND_LINE_MAX 8192

/* An index's "fold" line says under which fold_wrappers its functions
 * were found (fold.h); one without it, or of another list, is made
 * again (profile.c). */
static const char index_magic[] = "jm4lw-trend 1";

/* An index's times lie in [0, this]: the year 9999 (a time_t and
 * gmtime's year stay in range; a dump is never older than 1970). */
#define TREND_TIME_MAX 253402300799.0
/* Its byte counts lie in [0, this]: 2^62, heapprof's bound on a
 * profile's totals (HP_TOTAL_MAX). */
#define TREND_BYTES_MAX 0x1p62

/* The number that is all of @p s, in [0, @p max]: 0 with it in *@p v,
 * or -1 (not a number, trailing bytes, NaN, infinite, out of range). */
static int index_number(const char *s, double max, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(*v) || *v < 0 ||
	    *v > max)
		return -1;
	return 0;
}

/* One function while a profile is reduced: its bytes, and its heaviest
 * stack's index and bytes. */
struct fn_acc {
	const char *name; /* the symbolizer's, interned */
	double bytes;
	size_t heavy;
	double heavy_bytes;
};

/* What acc_eq compares with. */
struct acc_key {
	const struct fn_acc *a;
	const char *name;
};

/* Is accumulator @p i the one named in @p arg? */
static int acc_eq(const void *arg, uint64_t i)
{
	const struct acc_key *k = arg;

	return strcmp(k->a[i].name, k->name) == 0;
}

/* Heaviest first, then by name: the same order for the same profile. */
static int acc_cmp(const void *x, const void *y)
{
	const struct fn_acc *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* The frames of @p v as "outer;...;leaf", at most TREND_STACK_FRAMES of
 * the leaf's side. A string to free, or NULL. */
static char *stack_string(const struct render_view *v)
{
	size_t n = v->n < TREND_STACK_FRAMES ? v->n : TREND_STACK_FRAMES;
	size_t len = 1, i, at = 0, l;
	char *s, *c;

	for (i = 0; i < n; i++)
		len += strlen(v->f[i].f.func) + 1;
	if ((s = malloc(len)) == NULL)
		return NULL;
	for (i = n; i-- > 0;) {
		l = strlen(v->f[i].f.func);
		memcpy(s + at, v->f[i].f.func, l);
		at += l;
		if (i > 0)
			s[at++] = ';';
	}
	s[at] = '\0';
	/* An index line is tab-separated: no tab or newline in a name. */
	for (c = s; *c != '\0'; c++)
		if (*c == '\t' || *c == '\n' || *c == '\r')
			*c = ' ';
	return s;
}

/* A copy of @p s with tabs and newlines as spaces, or NULL. */
static char *field_dup(const char *s)
{
	char *d = strdup(s), *c;

	for (c = d; c != NULL && *c != '\0'; c++)
		if (*c == '\t' || *c == '\n' || *c == '\r')
			*c = ' ';
	return d;
}

/* Each function's live bytes in @p hp, by the stack's leaf past the
 * allocator's wrappers (fold.h), the top
 * TREND_FNS_MAX with their heaviest stacks (see trend.h). */
int trend_point_of(const struct heap_profile *hp, struct symbolizer *sym,
    double t, const char *name, const struct fold_list *fl,
    struct trend_point *p)
{
	struct fold fold = {0};
	struct fold_list dflt = {0};
	char buf[1024];
	struct render_view v = {0};
	struct fn_acc *a = NULL;
	struct acc_key k;
	struct hmap ix = {0};
	size_t cap = 0, n = 0, s, i, self;
	uint64_t *slot;
	double x;
	int added, r = -1;

	memset(p, 0, sizeof(*p));
	p->t = t;
	if ((p->name = strdup(name)) == NULL)
		return -1;
	fold_format(fl != NULL ? fl : &dflt, buf, sizeof(buf));
	if ((p->fold_cfg = field_dup(buf)) == NULL ||
	    fold_find(&fold, hp, sym, fl) == -1 ||
	    (fold.n > 0 &&
	        (p->folded = field_dup(fold_names(&fold, buf, sizeof(buf)))) ==
	            NULL))
		goto out;
	for (s = 0; s < hp->nstacks; s++) {
		if (render_view_stack(&v, &hp->stacks[s], sym) == -1)
			goto out;
		x = render_value_of(&hp->stacks[s], RENDER_SPACE);
		p->total += x;
		if (v.n == 0 || x <= 0)
			continue;
		self = fold_self(&fold, &v);
		k.a = a;
		k.name = v.f[self].f.func;
		if (hp_grow((void **)&a, &cap, n + 1, sizeof(*a)) == -1)
			goto out;
		k.a = a;
		slot = hmap_add(&ix, hash_str(k.name), acc_eq, &k, &added);
		if (slot == NULL)
			goto out;
		if (added) {
			*slot = n;
			a[n++] = (struct fn_acc){.name = k.name};
		}
		a[*slot].bytes += x;
		if (x > a[*slot].heavy_bytes) {
			a[*slot].heavy_bytes = x;
			a[*slot].heavy = s;
		}
	}
	if (n > 0)
		qsort(a, n, sizeof(*a), acc_cmp);
	if (n > TREND_FNS_MAX)
		n = TREND_FNS_MAX;
	if (n > 0 && (p->fn = calloc(n, sizeof(*p->fn))) == NULL)
		goto out;
	for (i = 0; i < n; i++, p->nfn++) {
		p->fn[i].bytes = a[i].bytes;
		if ((p->fn[i].name = field_dup(a[i].name)) == NULL ||
		    render_view_stack(&v, &hp->stacks[a[i].heavy], sym) == -1 ||
		    (p->fn[i].stack = stack_string(&v)) == NULL) {
			p->nfn++;
			goto out;
		}
	}
	r = 0;
out:
	if (r == -1 && errno == 0)
		errno = ENOMEM;
	free(a);
	hmap_free(&ix);
	render_view_free(&v);
	fold_free(&fold);
	if (r == -1)
		trend_point_free(p);
	return r;
}

/* @p s as a field of an index line: a tab or line break is a space. */
static void index_field(FILE *out, const char *s)
{
	for (; *s != '\0'; s++)
		fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, out);
}

/* An index: the magic line, time, total, a line per function. */
int trend_index_write(FILE *out, const struct trend_point *p)
{
	size_t i;

	fprintf(out, "%s\ntime %.3f\ntotal %.0f\n", index_magic, p->t,
	    render_clamp(p->total));
	fputs("fold ", out);
	index_field(out, p->fold_cfg != NULL ? p->fold_cfg : "");
	fputs("\nfolded ", out);
	index_field(out, p->folded != NULL ? p->folded : "");
	fputc('\n', out);
	for (i = 0; i < p->nfn; i++) {
		fprintf(out, "%.0f\t", render_clamp(p->fn[i].bytes));
		index_field(out, p->fn[i].name);
		fputc('\t', out);
		index_field(out, p->fn[i].stack ? p->fn[i].stack : "");
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}

/* One "bytes<TAB>name<TAB>stack" line into @p f; 0, or -1. */
static int index_fn(char *line, struct trend_fn *f)
{
	char *name, *stack;

	if ((name = strchr(line, '\t')) == NULL ||
	    (stack = strchr(name + 1, '\t')) == NULL)
		return -1;
	*name++ = '\0';
	*stack++ = '\0';
	if (index_number(line, TREND_BYTES_MAX, &f->bytes) == -1)
		return -1;
	f->name = strdup(name);
	f->stack = strdup(stack);
	return f->name != NULL && f->stack != NULL ? 0 : -1;
}

/* An index read back through @p fd (pread, at most TREND_INDEX_MAX):
 * anything else is one line in @p err. Strictly: one time and one total,
 * each a finite number in range (an index with "time nan" made JSON with
 * NaN in it and a time_t out of NaN); the caller then
 * makes the index again from its dump. */
int trend_index_read(int fd, const char *name, struct trend_point *p, char *err,
    size_t errlen)
{
	char *buf = NULL, *line, *next;
	size_t got = 0, cap;
	ssize_t r;
	int nl = 0, have_t = 0, have_total = 0;

	memset(p, 0, sizeof(*p));
	cap = 65536;
	if ((buf = malloc(cap + 1)) == NULL)
		goto nomem;
	while ((r = pread(fd, buf + got, cap - got, (off_t)got)) > 0) {
		got += (size_t)r;
		if (got == cap) {
			if (cap >= TREND_INDEX_MAX) {
				snprintf(err, errlen, "%s.trend: too big",
				    name);
				goto bad;
			}
			cap *= 2;
			if ((line = realloc(buf, cap + 1)) == NULL)
				goto nomem;
			buf = line;
		}
	}
	if (r == -1) {
		snprintf(err, errlen, "%s.trend: %s", name, strerror(errno));
		goto bad;
	}
	buf[got] = '\0';
	if ((p->name = strdup(name)) == NULL)
		goto nomem;
	for (line = buf; *line != '\0'; line = next, nl++) {
		if ((next = strchr(line, '\n')) == NULL) {
			snprintf(err, errlen, "%s.trend: cut short", name);
			goto bad;
		}
		*next++ = '\0';
		if (nl == 0) {
			if (strcmp(line, index_magic) != 0)
				break;
		} else if (strncmp(line, "time ", 5) == 0) {
			if (have_t++ ||
			    index_number(line + 5, TREND_TIME_MAX, &p->t) == -1)
				goto bad_line;
		} else if (strncmp(line, "fold ", 5) == 0) {
			free(p->fold_cfg);
			if ((p->fold_cfg = strdup(line + 5)) == NULL)
				goto nomem;
		} else if (strncmp(line, "folded ", 7) == 0) {
			free(p->folded);
			p->folded = NULL;
			if (line[7] != '\0' &&
			    (p->folded = strdup(line + 7)) == NULL)
				goto nomem;
		} else if (strncmp(line, "total ", 6) == 0) {
			if (have_total++ ||
			    index_number(line + 6, TREND_BYTES_MAX,
			        &p->total) == -1)
				goto bad_line;
		} else if (p->nfn < TREND_FNS_MAX) {
			if (p->fn == NULL &&
			    (p->fn = calloc(TREND_FNS_MAX, sizeof(*p->fn))) ==
			        NULL)
				goto nomem;
			if (index_fn(line, &p->fn[p->nfn++]) == -1)
				goto bad_line;
		}
	}
	if (nl == 0 || strncmp(buf, index_magic, sizeof(index_magic) - 1)) {
		snprintf(err, errlen, "%s.trend: not an index", name);
		goto bad;
	}
	if (!have_t || !have_total) {
		snprintf(err, errlen, "%s.trend: no %s line", name,
		    have_t ? "total" : "time");
		goto bad;
	}
	free(buf);
	return 0;
bad_line:
	snprintf(err, errlen, "%s.trend: line %d is bad", name, nl + 1);
	goto bad;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
bad:
	free(buf);
	trend_point_free(p);
	return -1;
}

/* Free a point's names and stacks. */
void trend_point_free(struct trend_point *p)
{
	size_t i;

	for (i = 0; i < p->nfn; i++) {
		free(p->fn[i].name);
		free(p->fn[i].stack);
	}
	free(p->fn);
	free(p->name);
	free(p->folded);
	free(p->fold_cfg);
	memset(p, 0, sizeof(*p));
}

/* One more point in the series; the series owns it now. */
int trend_add(struct trend *t, struct trend_point *p)
{
	size_t cap = t->n;

	/* Exactly as many as there are: a series is short. */
	if (hp_grow_more((void **)&t->pt, &cap, t->n + 1, sizeof(*t->pt)) == -1)
		return -1;
	t->pt[t->n++] = *p;
	memset(p, 0, sizeof(*p));
	return 0;
}

/* Oldest first; equal times by name. */
static int point_cmp(const void *x, const void *y)
{
	const struct trend_point *a = x, *b = y;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Fastest first, then the most bytes now, then by name. */
static int suspect_cmp(const void *x, const void *y)
{
	const struct trend_suspect *a = x, *b = y;

	if (a->rate != b->rate)
		return a->rate < b->rate ? 1 : -1;
	if (a->now != b->now)
		return a->now < b->now ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* What fn_eq compares with: a name among the series' functions. */
struct name_key {
	const char *const *names;
	const char *name;
};

/* Is function @p i the one named in @p arg? */
static int name_eq(const void *arg, uint64_t i)
{
	const struct name_key *k = arg;

	return strcmp(k->names[i], k->name) == 0;
}

/* The verdict on function @p f's series @p b: 1 and @p s filled if it
 * is a suspect. */
static int judge(const struct trend *t, const double *b,
    struct trend_suspect *s)
{
	size_t k = t->n - 1, grown = 0, i, from = SIZE_MAX, to = 0;
	double span;

	for (i = 0; i < k; i++)
		if (b[i + 1] > b[i]) {
			grown++;
			if (from == SIZE_MAX)
				from = i;
			to = i + 1;
		}
	/* Nearly every interval, rounded up: 2 of 2, 8 of 9, 80 of 99. */
	if (grown * 100 < k * TREND_GROWN_PCT || b[k] <= b[0] ||
	    from == SIZE_MAX)
		return 0;
	span = t->pt[to].t - t->pt[from].t;
	s->grown = grown;
	s->intervals = k;
	s->from = from;
	s->to = to;
	s->growth = b[to] - b[from];
	s->now = b[k];
	s->rate = span > 0 ? s->growth / span * 60 : 0;
	return s->growth > 0;
}

/* The points in time order, each function's series, the suspects. */
int trend_analyze(struct trend *t)
{
	const char **names = NULL, **stacks = NULL;
	struct name_key key;
	struct hmap ix = {0};
	double *b = NULL;
	size_t cap = 0, nn = 0, i, j, f, scap = 0;
	uint64_t *slot;
	int added, r = -1;

	if (t->n > 1)
		qsort(t->pt, t->n, sizeof(*t->pt), point_cmp);
	if (t->n < TREND_MIN_POINTS)
		return 0;
	/* Every function of the series, once, with its newest stack. */
	for (i = 0; i < t->n; i++)
		for (j = 0; j < t->pt[i].nfn; j++) {
			if (hp_grow((void **)&names, &cap, nn + 1,
			        sizeof(*names)) == -1 ||
			    hp_grow((void **)&stacks, &scap, nn + 1,
			        sizeof(*stacks)) == -1)
				goto out;
			key.names = names;
			key.name = t->pt[i].fn[j].name;
			slot = hmap_add(&ix, hash_str(key.name), name_eq, &key,
			    &added);
			if (slot == NULL)
				goto out;
			if (added) {
				*slot = nn;
				names[nn++] = key.name;
			}
			stacks[*slot] = t->pt[i].fn[j].stack;
		}
	t->considered = nn;
	/* Each function's bytes at each point: 0 where it is absent. */
	if (nn > 0 && (b = calloc(nn * t->n, sizeof(*b))) == NULL)
		goto out;
	for (i = 0; i < t->n; i++)
		for (j = 0; j < t->pt[i].nfn; j++) {
			key.names = names;
			key.name = t->pt[i].fn[j].name;
			slot =
			    hmap_find(&ix, hash_str(key.name), name_eq, &key);
			b[*slot * t->n + i] = t->pt[i].fn[j].bytes;
		}
	for (f = 0; f < nn; f++) {
		struct trend_suspect s = {0};
		if (!judge(t, b + f * t->n, &s))
			continue;
		if (hp_grow_more((void **)&t->s, &(size_t){t->ns}, t->ns + 1,
		        sizeof(*t->s)) == -1 ||
		    (s.series = malloc(t->n * sizeof(*s.series))) == NULL)
			goto out;
		memcpy(s.series, b + f * t->n, t->n * sizeof(*s.series));
		s.name = names[f];
		s.stack = stacks[f];
		t->s[t->ns++] = s;
	}
	if (t->ns > 1)
		qsort(t->s, t->ns, sizeof(*t->s), suspect_cmp);
	r = 0;
out:
	if (r == -1 && errno == 0)
		errno = ENOMEM;
	free(names);
	free(stacks);
	free(b);
	hmap_free(&ix);
	return r;
}

/* The refusal of a series under TREND_MIN_POINTS. */
const char *trend_too_few(const struct trend *t, char *buf, size_t len)
{
	snprintf(buf, len,
	    "leak suspects need at least %d dumps of one process, "
	    "and there %s %zu; keep more (dump_interval, jmfp)",
	    TREND_MIN_POINTS, t->n == 1 ? "is" : "are", t->n);
	return buf;
}

/* "12.1 MiB", signed, one decimal below 1 KiB too, up to TiB: lib's
 * formatter, clamped as every number of the report. */
static const char *human(char *buf, size_t len, double x)
{
	return fmt_bytes_as(buf, len, render_clamp(x),
	    BYTES_DECIMAL | BYTES_UPTO_TIB);
}

/* lib's time format; "?" for a time no index holds (converting NaN or
 * a huge double to time_t is undefined). */
static const char *when(char *buf, size_t len, double t)
{
	if (!(t >= 0 && t <= TREND_TIME_MAX)) {
		snprintf(buf, len, "?");
		return buf;
	}
	return fmt_time(buf, len, (time_t)t);
}

/* jmlk: a heading with the dumps and span, a row per suspect, onto @p
 * out. */
static void trend_text(struct out *out, const struct trend *t)
{
	char a[32], b[32], c[32], t0[32], t1[32];
	size_t i;

	out_printf(out,
	    "# %zu leak suspects over %zu dumps, %.1f s (%s to %s): functions "
	    "whose live bytes grew in nearly every interval, fastest first\n",
	    t->ns, t->n, t->pt[t->n - 1].t - t->pt[0].t,
	    when(t0, sizeof(t0), t->pt[0].t),
	    when(t1, sizeof(t1), t->pt[t->n - 1].t));
	if (t->indexed > 0) /* the first question after a busy spell */
		out_printf(out,
		    "# indexed %zu of the %zu dumps now (their index "
		    "was not written yet)\n",
		    t->indexed, t->n);
	if (t->skipped > 0)
		out_printf(out, "# skipped %zu dumps (the first: %s)\n",
		    t->skipped, t->skip_why);
	if (t->pt[t->n - 1].folded != NULL)
		out_printf(out,
		    "# Folded allocation wrappers into their callers: %s "
		    "(fold_wrappers to change)\n",
		    t->pt[t->n - 1].folded);
	if (t->note[0] != '\0')
		out_printf(out, "# note: %s\n", t->note);
	if (t->ns > 0)
		out_printf(out, "%12s %12s %7s %12s  %s\n", "rate/min",
		    "growth", "grew", "now", "function");
	for (i = 0; i < t->ns; i++) {
		const struct trend_suspect *s = &t->s[i];
		char grew[24];
		snprintf(grew, sizeof(grew), "%zu/%zu", s->grown, s->intervals);
		out_printf(out, "%12s %12s %7s %12s  %s\n",
		    human(a, sizeof(a), s->rate),
		    human(b, sizeof(b), s->growth), grew,
		    human(c, sizeof(c), s->now), s->name);
		if (s->stack != NULL && s->stack[0] != '\0')
			out_printf(out, "%12s stack: %s\n", "", s->stack);
		out_printf(out, "%12s from %s to %s\n", "", t->pt[s->from].name,
		    t->pt[s->to].name);
	}
}

/* /jemalloc/leaks, --trend -f json: the points and the suspects, onto
 * @p out. */
static void trend_json(struct out *out, const struct trend *t)
{
	size_t i, j;

	out_printf(out,
	    "{\"dumps\": %zu, \"first\": %.3f, \"last\": %.3f, "
	    "\"span\": %.3f, \"functions\": %zu, \"indexed\": %zu, "
	    "\"skipped\": %zu, \"skip_reason\": ",
	    t->n, t->pt[0].t, t->pt[t->n - 1].t, t->pt[t->n - 1].t - t->pt[0].t,
	    t->considered, t->indexed, t->skipped);
	json_string(out, t->skip_why);
	/* The newest dump's: the wrappers its functions are past. */
	out_printf(out, ", \"folded\": ");
	json_string(out,
	    t->pt[t->n - 1].folded != NULL ? t->pt[t->n - 1].folded : "");
	out_printf(out, ", \"note\": ");
	if (t->note[0] != '\0')
		json_string(out, t->note);
	else
		out_printf(out, "null");
	out_printf(out, ", \"points\": [");
	for (i = 0; i < t->n; i++) {
		out_printf(out, "%s{\"name\": ", i ? ", " : "");
		json_string(out, t->pt[i].name);
		out_printf(out, ", \"time\": %.3f, \"total\": %.0f}",
		    t->pt[i].t, render_clamp(t->pt[i].total));
	}
	out_printf(out, "], \"suspects\": [");
	for (i = 0; i < t->ns; i++) {
		const struct trend_suspect *s = &t->s[i];
		out_printf(out, "%s\n{\"function\": ", i ? "," : "");
		json_string(out, s->name);
		out_printf(out, ", \"stack\": ");
		json_string(out, s->stack != NULL ? s->stack : "");
		out_printf(out,
		    ", \"rate_per_min\": %.0f, \"growth\": %.0f, \"bytes\": "
		    "%.0f, \"grown\": %zu, \"intervals\": %zu, \"from\": ",
		    render_clamp(s->rate), render_clamp(s->growth),
		    render_clamp(s->now), s->grown, s->intervals);
		json_string(out, t->pt[s->from].name);
		out_printf(out, ", \"to\": ");
		json_string(out, t->pt[s->to].name);
		out_printf(out, ", \"series\": [");
		for (j = 0; j < t->n; j++)
			out_printf(out, "%s%.0f", j ? ", " : "",
			    render_clamp(s->series[j]));
		out_printf(out, "]}");
	}
	out_printf(out, "]}\n");
}

/* The report is written through lib's output interface, JSON strings
 * by lib's writer and sizes by lib's formatter, as every answer is; its
 * sink stays a FILE because the worker renders it into the job's file. */
int trend_render_text(FILE *f, const struct trend *t)
{
	struct out out = out_file(f);

	trend_text(&out, t);
	return ferror(f) ? -1 : 0;
}

int trend_render_json(FILE *f, const struct trend *t)
{
	struct out out = out_file(f);

	trend_json(&out, t);
	return ferror(f) ? -1 : 0;
}

/* Free the series and the suspects. */
void trend_free(struct trend *t)
{
	size_t i;

	for (i = 0; i < t->ns; i++)
		free(t->s[i].series);
	free(t->s);
	for (i = 0; i < t->n; i++)
		trend_point_free(&t->pt[i]);
	free(t->pt);
	memset(t, 0, sizeof(*t));
}

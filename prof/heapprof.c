/*
 * heap_v2 profiles read back and unsampled. jemalloc writes them and only
 * jeprof (Perl) reads them, so the reader is ours: a line scanner over the
 * bytes, no regular expressions, every number range-checked, every error
 * one line with its line number. The unsampling is jeprof's (and Go's
 * pprof's) per-stack formula, applied to each stack before any sum.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof.h"

/* 1 / (1 - exp(-(bytes/objs)/period)), jeprof's AdjustSamples(). */
double heapprof_scale(uint64_t objs, uint64_t bytes, uint64_t period)
{
	double ratio;

	/* No bytes for some objects: nothing jemalloc writes, and
	 * 1 / (1 - exp(0)) is infinite (jeprof dies on it): as dumped. */
	if (objs == 0 || bytes == 0 || period == 0)
		return 1;
	ratio = ((double)bytes / (double)objs) / (double)period;
	/* Small ratios cancel in 1 - exp(-ratio): digits are lost from
	 * 2^-20 down, and below 2^-53 it is 0 and the scale infinite (a
	 * period near 2^63: "Total: inf MB"). -expm1(-ratio) is the same
	 * quantity without the cancellation; ratio is at least 2^-128 (a
	 * byte over 2^64 objects, over a period of 2^64), so the scale
	 * stays under 2^129. Above 2^-20, jeprof's expression, so the
	 * numbers are jeprof's to the bit where real profiles live. */
	if (ratio < 0x1p-20)
		return 1 / -expm1(-ratio);
	return 1 / (1 - exp(-ratio));
}

/* A profile's unsampled totals stay under this: 2^62 bytes (4 EiB) is
 * more than any process can hold, so a profile past it is damaged or
 * forged, and under it every sum a format makes, a difference of two
 * profiles included, stays within int64 (pprof's values). */
#define HP_TOTAL_MAX 0x1p62

/* The parser's cursor and what it has built so far. */
struct hp_parse {
	const char *s, *end; /* the rest of the input */
	unsigned long line;  /* of the line just taken */
	int partial;         /* it was the last, with no newline: cut */
	struct heap_profile *hp;
	size_t cap_stacks, cap_first, cap_pcs, cap_maps, cap_text, used_text;
	size_t *first; /* each stack's first pc, as an index while pcs grows */
	size_t *sym_off, cap_syms, cap_sym_off; /* symbols' names in text */
	size_t binary_off;                      /* binary=, if hp->binary */
	size_t cap_threads, cap_tname, cap_tcounts;
	size_t *tname_off; /* each thread's name in text, or SIZE_MAX */
	double u_accum_objs, u_accum_bytes; /* totals, for HP_TOTAL_MAX */
	char *err;
	size_t errlen;
};

/* One line of error, with where; always -1. */
static int hp_err(struct hp_parse *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int hp_err(struct hp_parse *p, const char *fmt, ...)
{
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (p->line > 0)
		snprintf(p->err, p->errlen, "line %lu: %s", p->line, why);
	else
		snprintf(p->err, p->errlen, "%s", why);
	return -1;
}

/* The next line (without its newline or a trailing \r); 0 at the end. */
static int hp_line(struct hp_parse *p, const char **line, size_t *n)
{
	const char *nl;

	if (p->s >= p->end)
		return 0;
	*line = p->s;
	nl = memchr(p->s, '\n', (size_t)(p->end - p->s));
	*n = (size_t)((nl != NULL ? nl : p->end) - p->s);
	p->s = nl != NULL ? nl + 1 : p->end;
	p->partial = nl == NULL;
	if (*n > 0 && (*line)[*n - 1] == '\r')
		(*n)--;
	p->line++;
	return 1;
}

/* Skip blanks in s[*i..n). */
static void hp_blanks(const char *s, size_t n, size_t *i)
{
	while (*i < n && (s[*i] == ' ' || s[*i] == '\t'))
		(*i)++;
}

/* A decimal number at s[*i..n), 0 to UINT64_MAX; -1 if none or it
 * overflows. By hand, not strtoull: the input is a mapped file with no
 * NUL after it. The overflow checks are the compiler's, exact at the
 * top of the range. */
static int hp_dec(const char *s, size_t n, size_t *i, uint64_t *v)
{
	size_t start = *i;

	*v = 0;
	for (; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++)
		if (__builtin_mul_overflow(*v, 10, v) ||
		    __builtin_add_overflow(*v, (uint64_t)(s[*i] - '0'), v))
			return -1;
	return *i > start ? 0 : -1;
}

/* A hex number at s[*i..n), with or without 0x; -1 if none or too big. */
static int hp_hex(const char *s, size_t n, size_t *i, uint64_t *v)
{
	size_t start, digits = 0;
	int d;

	if (*i + 1 < n && s[*i] == '0' &&
	    (s[*i + 1] == 'x' || s[*i + 1] == 'X'))
		*i += 2;
	start = *i;
	*v = 0;
	for (; *i < n; (*i)++) {
		char c = s[*i];
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (digits > 0 || d != 0)
			digits++;
		if (digits > 16)
			return -1;
		*v = *v << 4 | (uint64_t)d;
	}
	return *i > start ? 0 : -1;
}

/* Count the stack lines ("@ ...") and the words on them (frames, at
 * most), and allocate the arrays for that many. */
static int hp_presize(struct hp_parse *p)
{
	const char *s = p->s, *end = p->end, *nl, *t;
	size_t stacks = 0, frames = 0, tlines = 0;
	int word;

	for (; s < end; s = nl + 1) {
		if ((nl = memchr(s, '\n', (size_t)(end - s))) == NULL)
			nl = end;
		if (*s != '@') {
			/* "  tN:", a thread's line: at most that many. */
			for (t = s; t < nl && (*t == ' ' || *t == '\t'); t++)
				;
			tlines += nl - t > 1 && t[0] == 't' && t[1] >= '0' &&
			    t[1] <= '9';
			continue;
		}
		stacks++;
		for (word = 0, s++; s < nl; s++) {
			if (*s == ' ' || *s == '\t')
				word = 0;
			else if (!word) {
				word = 1;
				frames++;
			}
		}
	}
	if (tlines > 0) {
		if ((p->hp->tcounts =
		            calloc(tlines, sizeof(*p->hp->tcounts))) == NULL)
			return -1;
		p->cap_tcounts = tlines;
	}
	if (stacks == 0)
		return 0;
	/* Exactly: hp_grow would round up to a power of two. */
	if ((p->hp->stacks = calloc(stacks, sizeof(*p->hp->stacks))) == NULL ||
	    (p->first = calloc(stacks, sizeof(*p->first))) == NULL ||
	    (p->hp->pcs = calloc(frames, sizeof(*p->hp->pcs))) == NULL)
		return -1;
	p->cap_stacks = p->cap_first = stacks;
	p->cap_pcs = frames;
	return 0;
}

/* "@ 0x... 0x...": a new stack. */
static int hp_stack(struct hp_parse *p, const char *s, size_t n)
{
	struct heap_profile *hp = p->hp;
	size_t i = 1, depth = 0;
	uint64_t pc;

	if (hp_grow((void **)&hp->stacks, &p->cap_stacks, hp->nstacks + 1,
	        sizeof(*hp->stacks)) == -1 ||
	    hp_grow((void **)&p->first, &p->cap_first, hp->nstacks + 1,
	        sizeof(*p->first)) == -1)
		return hp_err(p, "out of memory");
	for (;;) {
		hp_blanks(s, n, &i);
		if (i == n)
			break;
		if (hp_hex(s, n, &i, &pc) == -1 ||
		    (i < n && s[i] != ' ' && s[i] != '\t'))
			return hp_err(p, "a stack's frame is not an address");
		if (hp_grow((void **)&hp->pcs, &p->cap_pcs, hp->npcs + 1,
		        sizeof(*hp->pcs)) == -1)
			return hp_err(p, "out of memory");
		hp->pcs[hp->npcs++] = pc;
		depth++;
	}
	if (depth == 0)
		return hp_err(p, "a stack with no frame");
	memset(&hp->stacks[hp->nstacks], 0, sizeof(hp->stacks[0]));
	hp->stacks[hp->nstacks].depth = depth;
	p->first[hp->nstacks] = hp->npcs - depth;
	hp->nstacks++;
	return 0;
}

/*
 * "t*: N: B [N: B]" or "tK: ... [NAME]": the counts. *@p all is set for
 * t*, else *@p tid is K. jemalloc 5.3 writes a thread's name after the
 * header's tK: counts, one blank first (prof_tdata_dump_iter): any bytes
 * but a newline, blanks included. *@p name and *@p namelen say where it
 * is (0 bytes: no name). 0 and the four numbers, 1 when the line is not
 * a count line at all.
 */
static int hp_counts(struct hp_parse *p, const char *s, size_t n, int *all,
    uint64_t *tid, uint64_t v[4], const char **name, size_t *namelen)
{
	const char *shape;
	size_t i = 0, k;

	hp_blanks(s, n, &i);
	if (i + 1 >= n || s[i] != 't')
		return 1;
	i++;
	if (s[i] == '*') {
		*all = 1;
		i++;
	} else {
		*all = 0;
		if (hp_dec(s, n, &i, tid) == -1)
			return 1;
	}
	if (i >= n || s[i++] != ':')
		return 1;
	/* The rest, token by token: 'd' a number, anything else itself,
	 * blanks allowed between. */
	for (shape = "d:d[d:d]", k = 0; *shape != '\0'; shape++) {
		hp_blanks(s, n, &i);
		if (*shape == 'd' ? hp_dec(s, n, &i, &v[k++]) == -1
		                  : i >= n || s[i++] != *shape)
			return hp_err(p,
			    "bad counts (want N: BYTES [N: BYTES])");
	}
	*name = NULL;
	*namelen = 0;
	if (!*all && i < n && (s[i] == ' ' || s[i] == '\t')) {
		*name = s + i + 1;
		*namelen = n - i - 1;
	}
	hp_blanks(s, n, &i);
	if (i != n && *name == NULL)
		return hp_err(p, "bad counts (junk after ])");
	if (i == n) /* blanks only: no name */
		*namelen = 0;
	return 0;
}

/* The header's total from a dump's first bytes (heapprof.h). */
int heapprof_header_total(const char *buf, size_t len, uint64_t *objs,
    uint64_t *bytes)
{
	char err[200];
	struct hp_parse p = {.err = err, .errlen = sizeof(err)};
	const char *nl, *line, *name;
	size_t namelen;
	uint64_t tid, v[4];
	int all;

	if (len < 8 || memcmp(buf, "heap_v2/", 8) != 0 ||
	    (nl = memchr(buf, '\n', len)) == NULL)
		return -1;
	line = nl + 1;
	if ((nl = memchr(line, '\n', len - (size_t)(line - buf))) == NULL ||
	    hp_counts(&p, line, (size_t)(nl - line), &all, &tid, v, &name,
	        &namelen) != 0 ||
	    !all)
		return -1;
	*objs = v[0];
	*bytes = v[1];
	return 0;
}

/* Keep @p n bytes of @p s (a path) in the profile's text; its offset. */
static int hp_text(struct hp_parse *p, const char *s, size_t n, size_t *off);

/*
 * A tN: line: under a stack, its share of that stack (at most as many as
 * hp_presize counted); in the header, a thread with its name if any.
 */
static int hp_thread_line(struct hp_parse *p, uint64_t tid, const uint64_t v[4],
    const char *name, size_t namelen)
{
	struct heap_profile *hp = p->hp;
	struct hp_tcount c = {tid, v[0], v[1], v[2], v[3]};
	size_t off = SIZE_MAX;

	if (hp->nstacks > 0) {
		if (hp->ntcounts >= p->cap_tcounts) /* hp_presize counted */
			return hp_err(p, "more thread lines than counted");
		hp->tcounts[hp->ntcounts++] = c;
		hp->stacks[hp->nstacks - 1].ntc++;
		return 0;
	}
	if (hp_grow((void **)&hp->threads, &p->cap_threads, hp->nthreads + 1,
	        sizeof(*hp->threads)) == -1 ||
	    hp_grow((void **)&p->tname_off, &p->cap_tname, hp->nthreads + 1,
	        sizeof(*p->tname_off)) == -1 ||
	    (namelen > 0 && hp_text(p, name, namelen, &off) == -1))
		return hp_err(p, "out of memory");
	hp->threads[hp->nthreads].c = c;
	hp->threads[hp->nthreads].name = NULL;
	p->tname_off[hp->nthreads++] = off;
	return 0;
}

/* Keep @p n bytes of @p s (a path) in the profile's text; its offset. */
static int hp_text(struct hp_parse *p, const char *s, size_t n, size_t *off)
{
	struct heap_profile *hp = p->hp;

	if (hp_grow((void **)&hp->text, &p->cap_text, p->used_text + n + 1,
	        1) == -1)
		return -1;
	memcpy(hp->text + p->used_text, s, n);
	hp->text[p->used_text + n] = '\0';
	*off = p->used_text;
	p->used_text += n + 1;
	return 0;
}

/*
 * One line of the maps: "start-end perms offset dev inode [path]"; its
 * path's offset goes to path_off[nmaps] (room made by the caller). Lines
 * of another shape are skipped, as jeprof does.
 */
static int hp_map(struct hp_parse *p, const char *s, size_t n, size_t *path_off)
{
	struct heap_profile *hp = p->hp;
	struct hp_map m = {0};
	uint64_t ignored;
	size_t i = 0;

	if (hp_hex(s, n, &i, &m.start) == -1 || i >= n || s[i++] != '-' ||
	    hp_hex(s, n, &i, &m.end) == -1 || i >= n || s[i++] != ' ')
		return 0;
	if (i + 4 > n)
		return 0;
	m.exec = s[i + 2] == 'x';
	i += 4;
	hp_blanks(s, n, &i);
	if (hp_hex(s, n, &i, &m.offset) == -1)
		return 0;
	hp_blanks(s, n, &i); /* dev: hh:hh */
	while (i < n && s[i] != ' ' && s[i] != '\t')
		i++;
	hp_blanks(s, n, &i);
	if (hp_dec(s, n, &i, &ignored) == -1) /* inode */
		return 0;
	hp_blanks(s, n, &i);
	if (hp_grow((void **)&hp->maps, &p->cap_maps, hp->nmaps + 1,
	        sizeof(*hp->maps)) == -1)
		return hp_err(p, "out of memory");
	if (hp_text(p, s + i, n - i, &path_off[hp->nmaps]) == -1)
		return hp_err(p, "out of memory");
	hp->maps[hp->nmaps++] = m;
	return 0;
}

/* Does s[0..n) start with "---", blanks, then @p word (jeprof's
 * /^--- *word/)? */
static int hp_marker(const char *s, size_t n, const char *word)
{
	size_t i = 3, w = strlen(word);

	if (n < 3 || memcmp(s, "---", 3) != 0)
		return 0;
	while (i < n && s[i] == ' ')
		i++;
	return n - i >= w && memcmp(s + i, word, w) == 0;
}

/* The next line that is not one of jeprof's "%command" lines (it skips
 * them before a profile's header); 0 at the end. */
static int hp_header_line(struct hp_parse *p, const char **s, size_t *n)
{
	while (hp_line(p, s, n))
		if (*n == 0 || (*s)[0] != '%')
			return 1;
	return 0;
}

/* "0x<addr> <names>" of a symbol section. */
static int hp_symbol(struct hp_parse *p, const char *s, size_t n)
{
	struct heap_profile *hp = p->hp;
	size_t i = 0, start;
	uint64_t addr;

	if (hp_hex(s, n, &i, &addr) == -1 ||
	    (i < n && s[i] != ' ' && s[i] != '\t'))
		return hp_err(p, "a symbol's address is not an address");
	hp_blanks(s, n, &i);
	start = i;
	if (start == n)
		return hp_err(p, "a symbol's address with no name");
	if (hp_grow((void **)&hp->syms, &p->cap_syms, hp->nsyms + 1,
	        sizeof(*hp->syms)) == -1 ||
	    hp_grow((void **)&p->sym_off, &p->cap_sym_off, hp->nsyms + 1,
	        sizeof(*p->sym_off)) == -1 ||
	    hp_text(p, s + start, n - start, &p->sym_off[hp->nsyms]) == -1)
		return hp_err(p, "out of memory");
	hp->syms[hp->nsyms].addr = addr;
	hp->syms[hp->nsyms].names = NULL; /* text may move: at the end */
	hp->nsyms++;
	return 0;
}

/*
 * A symbolized profile's symbol section, as jeprof's ReadSymbols reads
 * it: "0x<addr> <names>" lines, "name=value" variables (binary= is the
 * program), anything else skipped, up to a line starting "---". Then the
 * "--- heap" (or "--- growth") line before the profile. Leaves the
 * cursor at the profile's header line; a file without a symbol section
 * is left as it was.
 */
static int hp_symbols(struct hp_parse *p)
{
	struct heap_profile *hp = p->hp;
	const char *s, *save = p->s, *eq;
	unsigned long line = p->line;
	size_t n = 0, i, j;
	int got;

	if (!(got = hp_header_line(p, &s, &n)) || !hp_marker(s, n, "symbol")) {
		/* jeprof also takes a bare "--- heap" before the header. */
		if (!got ||
		    !(hp_marker(s, n, "heap") || hp_marker(s, n, "growth"))) {
			p->s = save;
			p->line = line;
		}
		return 0;
	}
	hp->symbolized = 1;
	for (;;) {
		if (!hp_line(p, &s, &n)) {
			p->line = 0;
			return hp_err(p,
			    "the symbolized profile is cut short (its symbol "
			    "section has no --- line)");
		}
		if (n >= 3 && memcmp(s, "---", 3) == 0)
			break;
		if (n >= 2 && s[0] == '0' && s[1] == 'x') {
			if (hp_symbol(p, s, n) == -1)
				return -1;
		} else if (n > 0 && s[0] >= 'a' && s[0] <= 'z' &&
		    (eq = memchr(s, '=', n)) != NULL && (size_t)(eq - s) == 6 &&
		    memcmp(s, "binary", 6) == 0) {
			/* Blanks around the value are not the path's. */
			for (i = 7, j = n;
			     i < j && (s[i] == ' ' || s[i] == '\t'); i++)
				;
			while (j > i && (s[j - 1] == ' ' || s[j - 1] == '\t'))
				j--;
			if (hp_text(p, s + i, j - i, &p->binary_off) == -1)
				return hp_err(p, "out of memory");
			hp->binary = ""; /* resolved at the end */
		}
		/* Other variables and lines: jeprof ignores them too. */
	}
	/* The profile's own marker, if it has one: skipped as jeprof does. */
	save = p->s;
	line = p->line;
	if (!hp_header_line(p, &s, &n) ||
	    !(hp_marker(s, n, "heap") || hp_marker(s, n, "growth"))) {
		p->s = save;
		p->line = line;
	}
	return 0;
}

/* By address; among equal ones, the later line (jeprof keeps the last). */
static int hp_symbol_cmp(const void *a, const void *b)
{
	const struct hp_symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->names < y->names ? -1 : x->names > y->names;
}

/* Point the symbols into the final text; sort them, one per address. */
static void hp_finish_symbols(struct hp_parse *p)
{
	struct heap_profile *hp = p->hp;
	size_t k, n = 0;

	for (k = 0; k < hp->nsyms; k++)
		hp->syms[k].names = hp->text + p->sym_off[k];
	if (hp->nsyms > 0) /* qsort wants an array, even of none */
		qsort(hp->syms, hp->nsyms, sizeof(*hp->syms), hp_symbol_cmp);
	for (k = 0; k < hp->nsyms; k++) {
		if (n > 0 && hp->syms[n - 1].addr == hp->syms[k].addr)
			n--;
		hp->syms[n++] = hp->syms[k];
	}
	hp->nsyms = n;
	if (hp->binary != NULL)
		hp->binary = hp->text + p->binary_off;
}

/* Free what a profile holds; it is empty after. */
void heapprof_free(struct heap_profile *hp)
{
	free(hp->stacks);
	free(hp->pcs);
	free(hp->maps);
	free(hp->text);
	free(hp->syms);
	free(hp->threads);
	free(hp->tcounts);
	memset(hp, 0, sizeof(*hp));
}

/* Unsample stack @p st from its counts just read, and add it to the
 * totals: 0, or -1 when a total passes HP_TOTAL_MAX (refused, not
 * saturated: a number past it is no process's, and every format would
 * print it wrong). */
static int hp_unsample(struct hp_parse *p, struct hp_stack *st)
{
	struct heap_profile *hp = p->hp;
	double sc;

	sc = heapprof_scale(st->objs, st->bytes, hp->period);
	st->u_objs = (double)st->objs * sc;
	st->u_bytes = (double)st->bytes * sc;
	sc = heapprof_scale(st->accum_objs, st->accum_bytes, hp->period);
	st->u_accum_objs = (double)st->accum_objs * sc;
	st->u_accum_bytes = (double)st->accum_bytes * sc;
	hp->u_objs += st->u_objs;
	hp->u_bytes += st->u_bytes;
	p->u_accum_objs += st->u_accum_objs;
	p->u_accum_bytes += st->u_accum_bytes;
	if (hp->u_objs < HP_TOTAL_MAX && hp->u_bytes < HP_TOTAL_MAX &&
	    p->u_accum_objs < HP_TOTAL_MAX && p->u_accum_bytes < HP_TOTAL_MAX)
		return 0;
	return hp_err(p,
	    "the counts so far unsample to %.3g bytes, %.3g objects "
	    "(sampling period %llu), past 2^62: more than any process "
	    "holds; a damaged or forged profile",
	    fmax(hp->u_bytes, p->u_accum_bytes),
	    fmax(hp->u_objs, p->u_accum_objs), (unsigned long long)hp->period);
}

/* Point every stack's frames into the final pcs array (the stacks were
 * unsampled as their counts came, by hp_unsample). */
static void hp_finish(struct hp_parse *p, size_t *path_off)
{
	struct heap_profile *hp = p->hp;
	size_t k, tc = 0;

	for (k = 0; k < hp->nstacks; k++) {
		hp->stacks[k].pc = hp->pcs + p->first[k];
		/* NULL + 0 is undefined: no tN: line, no array. */
		hp->stacks[k].tc =
		    hp->tcounts != NULL ? hp->tcounts + tc : NULL;
		tc += hp->stacks[k].ntc;
	}
	for (k = 0; k < hp->nthreads; k++)
		hp->threads[k].name = p->tname_off[k] == SIZE_MAX
		    ? NULL
		    : hp->text + p->tname_off[k];
	for (k = 0; k < hp->nmaps; k++)
		hp->maps[k].path = hp->text + path_off[k];
	hp_finish_symbols(p);
}

/* Add warning @p w to @p hp, once. */
static void hp_warn(struct heap_profile *hp, const char *w)
{
	size_t i;

	for (i = 0; i < hp->nwarn; i++)
		if (hp->warn[i] == w)
			return;
	if (hp->nwarn < HP_WARN_MAX)
		hp->warn[hp->nwarn++] = w;
}

/* What a profile cut inside its mappings is told. */
static const char hp_cut_maps[] =
    "profile cut inside MAPPED_LIBRARIES: addresses past its last "
    "mapping cannot be named (they show as hex)";

/*
 * Could the @p n bytes at @p buf, a file's first bytes, start a profile
 * (jeprof's "%" lines, then heap_v2/ or a symbolized file's "---" line)?
 * Asked before anything scans the whole input: a 4 GB file of zeros is
 * refused at its first byte, not after a pass over all of it.
 */
static int hp_sniff(const char *buf, size_t n)
{
	const char *s = buf, *end = buf + n, *nl;
	size_t m;

	while (s < end && *s == '%') {
		if ((nl = memchr(s, '\n', (size_t)(end - s))) == NULL)
			return 1; /* the rest is past what we were shown */
		s = nl + 1;
	}
	m = (size_t)(end - s);
	if (m == 0)
		return 0;
	if (memcmp(s, "---", m < 3 ? m : 3) == 0)
		return 1;
	return memcmp(s, "heap_v2/", m < 8 ? m : 8) == 0;
}

/* Does a frame lie past every mapping? Then MAPPED_LIBRARIES was cut
 * before the objects holding it (maps are in address order). */
static int hp_frames_unmapped(const struct heap_profile *hp)
{
	uint64_t top = 0;
	size_t i;

	for (i = 0; i < hp->nmaps; i++)
		if (hp->maps[i].end > top)
			top = hp->maps[i].end;
	for (i = 0; i < hp->npcs; i++)
		if (hp->pcs[i] >= top)
			return 1;
	return 0;
}

int heapprof_parse(const char *buf, size_t len, struct heap_profile *hp,
    char *err, size_t errlen)
{
	struct hp_parse p = {.s = buf,
	    .end = buf + len,
	    .hp = hp,
	    .err = err,
	    .errlen = errlen};
	size_t n, i, *path_off = NULL, cap_off = 0;
	const char *s, *name = NULL;
	uint64_t v[4] = {0, 0, 0, 0}, tid = 0;
	size_t namelen = 0;
	int all, r, maps = 0, counted = 1;

	memset(hp, 0, sizeof(*hp));
	if (!hp_sniff(buf, len < 4096 ? len : 4096)) {
		r = hp_err(&p,
		    "not a jemalloc heap profile (no heap_v2/ "
		    "header)");
		goto fail;
	}
	/* Arrays sized once from a count, not doubled as they fill: on a
	 * profile of 33k stacks doubling left up to half of 16 MiB unused
	 * at the peak, and in a host's worker that peak is the host's. */
	if (hp_presize(&p) == -1) {
		r = hp_err(&p, "out of memory");
		goto fail;
	}
	if ((r = hp_symbols(&p)) != 0)
		goto fail;
	if (!hp_header_line(&p, &s, &n) || n < 8 ||
	    memcmp(s, "heap_v2/", 8) != 0) {
		if (hp->symbolized)
			r = hp_err(&p,
			    "the symbolized profile holds no jemalloc heap "
			    "profile (no heap_v2/ header after its symbols)");
		else {
			p.line = 0;
			r = hp_err(&p,
			    "not a jemalloc heap profile (no heap_v2/ "
			    "header)");
		}
		goto fail;
	}
	hp->profile_offset = (size_t)(s - buf);
	i = 8;
	if (hp_dec(s, n, &i, &hp->period) == -1 || i != n) {
		r = hp_err(&p, "bad sampling period in the heap_v2 header");
		goto fail;
	}
	while (hp_line(&p, &s, &n)) {
		if (maps) {
			if (hp_grow((void **)&path_off, &cap_off, hp->nmaps + 1,
			        sizeof(*path_off)) == -1) {
				r = hp_err(&p, "out of memory");
				goto fail;
			}
			if ((r = hp_map(&p, s, n, path_off)) != 0)
				goto fail;
			if (p.partial && n > 0)
				hp_warn(hp, hp_cut_maps);
			continue;
		}
		if (n == 17 && memcmp(s, "MAPPED_LIBRARIES:", 17) == 0) {
			maps = 1;
			continue;
		}
		if (n > 0 && s[0] == '@') {
			if ((r = hp_stack(&p, s, n)) != 0)
				goto fail;
			counted = 0;
			continue;
		}
		r = hp_counts(&p, s, n, &all, &tid, v, &name, &namelen);
		if (r == -1)
			goto fail;
		if (r == 0 && !all &&
		    (r = hp_thread_line(&p, tid, v, name, namelen)) != 0)
			goto fail;
		/* The header's totals: not the profile's (jeprof's
		 * reading, too); per-thread lines kept apart, above. */
		if (r == 0 && all && hp->nstacks > 0 && !counted) {
			struct hp_stack *st = &hp->stacks[hp->nstacks - 1];
			st->objs = v[0];
			st->bytes = v[1];
			st->accum_objs = v[2];
			st->accum_bytes = v[3];
			counted = 1;
			if ((r = hp_unsample(&p, st)) != 0)
				goto fail;
		}
		/* Anything else (a fork's "f:" lines, blanks) is skipped. */
	}
	if (!maps) {
		p.line = 0;
		r = hp_err(&p,
		    "the profile is cut short (no MAPPED_LIBRARIES "
		    "section at its end)");
		goto fail;
	}
	hp_finish(&p, path_off);
	if (hp_frames_unmapped(hp))
		hp_warn(hp, hp_cut_maps);
	free(p.first);
	free(p.sym_off);
	free(p.tname_off);
	free(path_off);
	return 0;
fail:
	/* A line that does not parse because the file ends inside it: the
	 * profile was cut, and that is what to say. */
	if (p.partial && p.line > 1) {
		p.line = 0;
		hp_err(&p,
		    "the profile is cut short (it ends inside a line, "
		    "with no MAPPED_LIBRARIES section)");
	}
	free(p.first);
	free(p.sym_off);
	free(p.tname_off);
	free(path_off);
	heapprof_free(hp);
	return -1;
}

int heapprof_load(const char *path, struct heap_profile *hp, char *err,
    size_t errlen)
{
	int fd, r;

	memset(hp, 0, sizeof(*hp));
	if ((fd = prof_open_file(path, 0, NULL, err, errlen)) == -1)
		return -1;
	r = heapprof_load_fd(fd, path, hp, err, errlen);
	close(fd);
	return r;
}

/* Up to @p len bytes at @p off of @p fd into @p buf, as far as the file
 * goes: how many, or -1 (errno). */
static ssize_t hp_pread(int fd, char *buf, size_t len, off_t off)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(fd, buf + got, len - got, off + (off_t)got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			break; /* it shrank: what there is */
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Can the file at @p fd neither shrink nor grow, whoever holds it (memfd
 * seals, F_SEAL_SHRINK and F_SEAL_GROW)? */
static int hp_sealed(int fd)
{
	int seals = fcntl(fd, F_GET_SEALS);

	return seals != -1 &&
	    (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) ==
	    (F_SEAL_SHRINK | F_SEAL_GROW);
}

int heapprof_load_fd(int fd, const char *path, struct heap_profile *hp,
    char *err, size_t errlen)
{
	char head[4096], why[256];
	struct stat sb;
	char *buf = NULL;
	size_t size = 0;
	ssize_t got = 0;
	int rv = -1, mapped = 0;

	memset(hp, 0, sizeof(*hp));
	if (fstat(fd, &sb) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -1;
	}
	if ((got = hp_pread(fd, head, sizeof(head), 0)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* The header first: a huge file of anything else is refused now. */
	if (!hp_sniff(head, (size_t)got)) {
		snprintf(err, errlen,
		    "%s: not a jemalloc heap profile (no heap_v2/ header)",
		    path);
		return -1;
	}
	if ((uint64_t)sb.st_size > HEAPPROF_MAX_BYTES) {
		snprintf(err, errlen,
		    "%s: too big for a heap profile (%lld bytes; at most "
		    "%zu)",
		    path, (long long)sb.st_size, HEAPPROF_MAX_BYTES);
		return -1;
	}
	size = (size_t)sb.st_size;
	/* Read, never mapped: a mapped file that anyone truncates meanwhile
	 * (another user in a shared dump_dir, or our own user or root in
	 * our 0700 one: retention, an operator's truncate) faults the next
	 * read of a page past its new end with SIGBUS, and that kills the
	 * process we live in (the host, under the agent), since the module
	 * installs no signal handler. A read() of a file that shrinks just
	 * returns less, and a profile cut short is one error line
	 * (BENCHMARKS.md has the memory it costs). */
	if (size > 0 && hp_sealed(fd)) {
		/* A file sealed against shrinking (the worker's fresh dump in
		 * its memfd) cannot fault: mapped, it costs no second copy. */
		if ((buf = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0)) ==
		    MAP_FAILED) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		mapped = 1;
		got = (ssize_t)size;
	} else if (size > 0) {
		if ((buf = malloc(size)) == NULL) {
			snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
			return -1;
		}
		if ((got = hp_pread(fd, buf, size, 0)) == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
	} else
		got = 0;
	if (heapprof_parse(buf, (size_t)got, hp, err, errlen) == -1) {
		/* Say which file. */
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", path, why);
		goto out;
	}
	rv = 0;
out:
	if (mapped)
		munmap(buf, size);
	else
		free(buf);
	return rv;
}

/* A hash of a stack's frames. */
static uint64_t hp_stack_hash(const struct hp_stack *st)
{
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < st->depth; i++)
		h = hash_int(h ^ st->pc[i]);
	return h;
}

/* A stack sought among @p hp's. */
struct hp_stack_key {
	const struct heap_profile *hp;
	const struct hp_stack *st;
};

/* Has stack @p i of the profile in @p arg the same frames in the same
 * order? */
static int hp_same_stack(const void *arg, uint64_t i)
{
	const struct hp_stack_key *k = arg;
	const struct hp_stack *a = &k->hp->stacks[i], *b = k->st;

	return a->depth == b->depth &&
	    memcmp(a->pc, b->pc, a->depth * sizeof(*a->pc)) == 0;
}

/* Add @p base's symbols for addresses @p hp has none for: the stacks only
 * in the base (what was freed) are named too. Both are sorted. */
static int hp_merge_symbols(struct heap_profile *hp,
    const struct heap_profile *base)
{
	struct hp_symbol *m;
	size_t i = 0, j = 0, n = 0;

	if (base->nsyms == 0)
		return 0;
	if ((m = calloc(hp->nsyms + base->nsyms, sizeof(*m))) == NULL)
		return -1;
	while (i < hp->nsyms || j < base->nsyms) {
		if (j == base->nsyms ||
		    (i < hp->nsyms && hp->syms[i].addr <= base->syms[j].addr)) {
			if (j < base->nsyms &&
			    hp->syms[i].addr == base->syms[j].addr)
				j++; /* hp's own name wins */
			m[n++] = hp->syms[i++];
		} else
			m[n++] = base->syms[j++];
	}
	free(hp->syms);
	hp->syms = m;
	hp->nsyms = n;
	return 0;
}

/* What a difference with another process's dump is told. */
static const char hp_other_process[] =
    "the base profile is of another process (its main program, or where "
    "it is mapped, differs): the difference mixes two heaps";

/* The first mapping with a path: jeprof's main program. */
static const char *hp_main_path(const struct heap_profile *hp)
{
	size_t i;

	for (i = 0; i < hp->nmaps; i++)
		if (hp->maps[i].path[0] == '/')
			return hp->maps[i].path;
	return NULL;
}

void heapprof_origin(const struct heap_profile *hp, struct hp_origin *o)
{
	const char *path = hp_main_path(hp);
	size_t i;

	memset(o, 0, sizeof(*o));
	if (path == NULL)
		return;
	o->known = 1;
	snprintf(o->main, sizeof(o->main), "%s", path);
	for (i = 0; i < hp->nmaps; i++) {
		if (o->main_start == 0 && strcmp(hp->maps[i].path, path) == 0)
			o->main_start = hp->maps[i].start;
		if (o->stack_end == 0 &&
		    strcmp(hp->maps[i].path, "[stack]") == 0)
			o->stack_end = hp->maps[i].end;
	}
}

int heapprof_origin_same(const struct hp_origin *a, const struct hp_origin *b)
{
	if (!a->known || !b->known)
		return 1;
	return strcmp(a->main, b->main) == 0 &&
	    a->main_start == b->main_start &&
	    (a->stack_end == 0 || b->stack_end == 0 ||
	        a->stack_end == b->stack_end);
}

/* Are @p a and @p b dumps of one process, as far as their mappings tell? */
static int hp_same_process(const struct heap_profile *a,
    const struct heap_profile *b)
{
	struct hp_origin oa, ob;

	heapprof_origin(a, &oa);
	heapprof_origin(b, &ob);
	return heapprof_origin_same(&oa, &ob);
}

int heapprof_subtract(struct heap_profile *hp, const struct heap_profile *base)
{
	struct hp_stack_key k = {hp, NULL};
	size_t i, n = hp->nstacks, extra = 0;
	struct hmap tab = {0}; /* hp's stacks, the first of any alike */
	struct hp_stack *st, *ns;
	uint64_t *v;
	char *matched;
	int added;

	if ((matched = calloc(base->nstacks + 1, 1)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		k.st = &hp->stacks[i];
		if ((v = hmap_add(&tab, hp_stack_hash(k.st), hp_same_stack, &k,
		         &added)) == NULL) {
			hmap_free(&tab);
			free(matched);
			return -1;
		}
		if (added)
			*v = i;
	}
	for (i = 0; i < base->nstacks; i++) {
		const struct hp_stack *b = &base->stacks[i];
		k.st = b;
		if ((v = hmap_find(&tab, hp_stack_hash(b), hp_same_stack,
		         &k)) != NULL) {
			st = &hp->stacks[*v];
			st->u_objs -= b->u_objs;
			st->u_bytes -= b->u_bytes;
			st->b_objs = b->u_objs;
			st->b_bytes = b->u_bytes;
			st->u_accum_objs -= b->u_accum_objs;
			st->u_accum_bytes -= b->u_accum_bytes;
			matched[i] = 1;
		}
		extra += !matched[i];
	}
	hmap_free(&tab);
	if (extra > 0) {
		if ((ns = realloc(hp->stacks, (n + extra) * sizeof(*ns))) ==
		    NULL) {
			free(matched);
			return -1;
		}
		hp->stacks = ns;
		for (i = 0; i < base->nstacks; i++) {
			if (matched[i])
				continue;
			st = &hp->stacks[hp->nstacks++];
			*st = base->stacks[i];
			st->b_objs = st->u_objs;
			st->b_bytes = st->u_bytes;
			st->u_objs = -st->u_objs;
			st->u_bytes = -st->u_bytes;
			st->u_accum_objs = -st->u_accum_objs;
			st->u_accum_bytes = -st->u_accum_bytes;
		}
	}
	free(matched);
	if (hp->symbolized && hp_merge_symbols(hp, base) == -1)
		return -1;
	hp->u_objs -= base->u_objs;
	hp->u_bytes -= base->u_bytes;
	hp->diff = 1;
	if (!hp_same_process(hp, base)) {
		hp->other_base = 1;
		hp_warn(hp, hp_other_process);
	}
	return 0;
}

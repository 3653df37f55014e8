/*
 * recent — experimental.prof_recent.alloc_dump's JSON to records, and the
 * records to jmrc's screen and /jemalloc/recent's JSON.
 *
 * The parser is hand-written: no JSON library is among the project's
 * dependencies, and the input is one known shape written by jemalloc's
 * emitter (src/prof_recent.c, 5.3.0):
 *
 *   {"sample_interval":N,"recent_alloc_max":N,"recent_alloc":[
 *    {"size":N,"usize":N,"released":B,"alloc_thread_uid":N,
 *     ["alloc_thread_name":"S",]"alloc_time":N,"alloc_trace":["0x..",..]
 *     [,"dalloc_thread_uid":N,["dalloc_thread_name":"S",]
 *      "dalloc_time":N,"dalloc_trace":[..]]},..]}
 *
 * It is strict and bounded: unsigned integers of at most 20 digits that
 * fit in 64 bits (no sign but recent_alloc_max's, no fraction, no
 * exponent, so nothing NaN-like), addresses of at most 16 hex digits,
 * RECENT_FRAMES_MAX of them a stack, unknown keys skipped to
 * RECENT_DEPTH_MAX levels, the required keys there. jemalloc's emitter
 * writes a string between quotes as it is, unescaped, so a string here
 * runs to the next quote and a backslash is a byte like any other; a
 * thread's name, which may hold a quote, runs to the quote jemalloc's
 * next keys follow (rp_name).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "json.h"
#include "out.h"
#include "prof_util.h"
#include "recent.h"
#include "render.h"
#include "symbolize.h"
#include "when.h"

/* The parser's state: where it is, and its first error. */
struct rp {
	const char *p, *end;
	int eof; /* the error is the input's end */
	char *err;
	size_t errlen;
	const char *base;
};

/* Fail with one line naming the offset; -1. */
static int rp_fail(struct rp *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int rp_fail(struct rp *s, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(s->err, s->errlen, "prof_recent JSON at byte %zu: %s",
	    (size_t)(s->p - s->base), what);
	return -1;
}

/* The input ended where more was due. */
static int rp_short(struct rp *s)
{
	s->eof = 1;
	return rp_fail(s, "ends early");
}

static void rp_ws(struct rp *s)
{
	while (s->p < s->end &&
	    (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' || *s->p == '\r'))
		s->p++;
}

/* The next byte, past white space, or -1 at the end. */
static int rp_peek(struct rp *s)
{
	rp_ws(s);
	return s->p < s->end ? (unsigned char)*s->p : -1;
}

/* Expect @p c next. */
static int rp_expect(struct rp *s, char c)
{
	int n = rp_peek(s);

	if (n == -1)
		return rp_short(s);
	if (n != c)
		return rp_fail(s, "want '%c', not '%c'", c,
		    n >= 0x20 && n < 0x7f ? n : '?');
	s->p++;
	return 0;
}

/* Open a list, @p open ('[' or '{') to @p close: 1 when an item comes, 0
 * when it is empty (its close taken too), or -1. */
static int rp_open(struct rp *s, char open, char close)
{
	if (rp_expect(s, open) == -1)
		return -1;
	if (rp_peek(s) != close)
		return 1;
	s->p++;
	return 0;
}

/* After a list's item: 1 when a ',' brings another, 0 when @p close ends
 * the list (taken), or -1. */
static int rp_next(struct rp *s, char close)
{
	if (rp_peek(s) == ',') {
		s->p++;
		return 1;
	}
	return rp_expect(s, close) == -1 ? -1 : 0;
}

/* A string, unescaped as jemalloc writes it: its bytes in [*@p v,
 * *@p v + *@p n). */
static int rp_string(struct rp *s, const char **v, size_t *n)
{
	const char *q;

	if (rp_expect(s, '"') == -1)
		return -1;
	if ((q = memchr(s->p, '"', (size_t)(s->end - s->p))) == NULL) {
		s->p = s->end;
		return rp_short(s);
	}
	*v = s->p;
	*n = (size_t)(q - s->p);
	s->p = q + 1;
	return 0;
}

/* An unsigned integer that fits in 64 bits. */
static int rp_uint(struct rp *s, uint64_t *v)
{
	uint64_t x = 0;
	int d = 0;

	if (rp_peek(s) == -1)
		return rp_short(s);
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		if (++d > 20 || x > (UINT64_MAX - (uint64_t)(*s->p - '0')) / 10)
			return rp_fail(s, "a number beyond 64 bits");
		x = x * 10 + (uint64_t)(*s->p++ - '0');
	}
	if (d == 0)
		return rp_fail(s, "want a number");
	if (s->p == s->end)
		return rp_short(s);
	if (*s->p == '.' || *s->p == 'e' || *s->p == 'E')
		return rp_fail(s, "want an integer");
	*v = x;
	return 0;
}

/* recent_alloc_max: -1 (unlimited) or a count. */
static int rp_max(struct rp *s, long long *v)
{
	uint64_t x;
	int neg = rp_peek(s) == '-';

	if (neg)
		s->p++;
	if (rp_uint(s, &x) == -1)
		return -1;
	if (x > (uint64_t)INT64_MAX || (neg && x != 1))
		return rp_fail(s, "recent_alloc_max out of range");
	*v = neg ? -1 : (long long)x;
	return 0;
}

static int rp_bool(struct rp *s, int *v)
{
	size_t left;

	if (rp_peek(s) == -1)
		return rp_short(s);
	left = (size_t)(s->end - s->p);
	if (left >= 4 && memcmp(s->p, "true", 4) == 0) {
		*v = 1;
		s->p += 4;
	} else if (left >= 5 && memcmp(s->p, "false", 5) == 0) {
		*v = 0;
		s->p += 5;
	} else if ((left < 4 && memcmp(s->p, "true", left) == 0) ||
	    (left < 5 && memcmp(s->p, "false", left) == 0)) {
		s->p = s->end;
		return rp_short(s);
	} else
		return rp_fail(s, "want true or false");
	return 0;
}

static int rp_key(struct rp *s, const char **k, size_t *n);

/* Skip one value of a key this parser does not know (a later jemalloc's),
 * nested at most RECENT_DEPTH_MAX deep. */
static int rp_skip(struct rp *s, int depth)
{
	int more;
	const char *v;
	uint64_t u;
	size_t n;
	int c = rp_peek(s), b;
	char close;

	if (depth > RECENT_DEPTH_MAX)
		return rp_fail(s, "nested too deep");
	if (c == -1)
		return rp_short(s);
	if (c == '"')
		return rp_string(s, &v, &n);
	if (c == 't' || c == 'f')
		return rp_bool(s, &b);
	if (c == '-') {
		s->p++;
		return rp_uint(s, &u);
	}
	if (c != '{' && c != '[')
		return rp_uint(s, &u);
	close = c == '{' ? '}' : ']';
	for (more = rp_open(s, (char)c, close); more == 1;
	     more = rp_next(s, close))
		if ((close == '}' && rp_key(s, &v, &n) == -1) ||
		    rp_skip(s, depth + 1) == -1)
			return -1;
	return more;
}

/* A key and its colon: the key's bytes in *@p k, *@p n. */
static int rp_key(struct rp *s, const char **k, size_t *n)
{
	return rp_string(s, k, n) == -1 || rp_expect(s, ':') == -1 ? -1 : 0;
}

static int key_is(const char *k, size_t n, const char *want)
{
	return strlen(want) == n && memcmp(k, want, n) == 0;
}

/* One hex digit's value, or -1. */
static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A stack: an array of "0x<hex>" strings, into r->pcs. */
static int rp_trace(struct rp *s, struct recent *r, struct recent_site *site)
{
	int more;
	const char *v;
	uint64_t pc;
	size_t n, i;
	int h;

	site->off = r->npcs;
	site->n = 0;
	for (more = rp_open(s, '[', ']'); more == 1; more = rp_next(s, ']')) {
		if (rp_string(s, &v, &n) == -1)
			return -1;
		if (n < 3 || n > 18 || v[0] != '0' ||
		    (v[1] != 'x' && v[1] != 'X'))
			return rp_fail(s, "a frame that is no address");
		for (pc = 0, i = 2; i < n; i++) {
			if ((h = hexval((unsigned char)v[i])) == -1)
				return rp_fail(s, "a frame that is no address");
			pc = pc << 4 | (uint64_t)h;
		}
		if (site->n >= RECENT_FRAMES_MAX)
			return rp_fail(s, "a stack of more than %d frames",
			    RECENT_FRAMES_MAX);
		if (hp_grow((void **)&r->pcs, &r->pcap, r->npcs + 1,
		        sizeof(*r->pcs)) == -1)
			return rp_fail(s, "%s", strerror(ENOMEM));
		r->pcs[r->npcs++] = pc;
		site->n++;
	}
	return more;
}

/* Does @p p, up to @p end, start with @p lit, white space before each of
 * its bytes allowed (the emitter's pretty form has some)? Past it in
 * *@p after. */
static int rp_lit(const char *p, const char *end, const char *lit,
    const char **after)
{
	for (; *lit != '\0'; lit++, p++) {
		while (p < end &&
		    (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
			p++;
		if (p == end || *p != *lit)
			return 0;
	}
	*after = p;
	return 1;
}

/* Is the quote at @p q the end of a name that jemalloc follows with
 * ,"<time>":N,"<trace>":[ ? */
static int rp_name_ends(const char *q, const char *end, const char *time,
    const char *trace)
{
	const char *p;

	if (!rp_lit(q, end, "\",\"", &p) || !rp_lit(p, end, time, &p) ||
	    !rp_lit(p, end, "\":", &p))
		return 0;
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	if (p == end || *p < '0' || *p > '9')
		return 0;
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return rp_lit(p, end, ",\"", &p) && rp_lit(p, end, trace, &p) &&
	    rp_lit(p, end, "\":[", &p);
}

/* How far past its opening quote a name's end is looked for. */
#define RECENT_NAME_SCAN 4096

/*
 * A thread's name, cut to what the record keeps. jemalloc writes it
 * unescaped, so a '"' in it (prof_sys_thread_name takes the kernel's
 * comm, any printable byte; thread.prof.name takes them too) would end
 * the string early. Where the name stands where jemalloc puts it
 * (@p in_place: after the thread's uid, before its time), the next keys
 * are known: the name runs to the first quote followed by
 * ,"<time>":N,"<trace>":[ within RECENT_NAME_SCAN bytes (so a cut
 * input costs no scan to its end per name); none before the input's
 * end is a cut inside the name. Elsewhere (another writer's order), or
 * past that bound, to the next quote.
 */
static int rp_name(struct rp *s, char *dst, int in_place, const char *time,
    const char *trace)
{
	const char *v, *q = NULL, *lim;
	size_t n;

	if (in_place) {
		if (rp_expect(s, '"') == -1)
			return -1;
		lim = (size_t)(s->end - s->p) < RECENT_NAME_SCAN
		    ? s->end
		    : s->p + RECENT_NAME_SCAN;
		for (q = s->p;
		     (q = memchr(q, '"', (size_t)(lim - q))) != NULL &&
		     !rp_name_ends(q, s->end, time, trace);
		     q++)
			;
		/* The input ends before the name does: cut inside it. */
		if (q == NULL && lim == s->end) {
			s->p = s->end;
			return rp_short(s);
		}
		s->p--; /* back to the opening quote */
	}
	if (q != NULL) {
		v = s->p + 1;
		n = (size_t)(q - v);
		s->p = q + 1;
	} else if (rp_string(s, &v, &n) == -1)
		return -1;
	if (n >= RECENT_NAME_MAX)
		n = RECENT_NAME_MAX - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
	return 0;
}

/* Which keys a record had. */
enum {
	K_SIZE = 1 << 0,
	K_USIZE = 1 << 1,
	K_RELEASED = 1 << 2,
	K_ATID = 1 << 3,
	K_ATIME = 1 << 4,
	K_ATRACE = 1 << 5,
	K_DTID = 1 << 6,
	K_DTIME = 1 << 7,
	K_DTRACE = 1 << 8,
};
#define K_NEEDED (K_SIZE | K_USIZE | K_RELEASED | K_ATID | K_ATIME | K_ATRACE)
#define K_FREE (K_DTID | K_DTIME | K_DTRACE)

/* One record's value of key @p k. */
static int rp_field(struct rp *s, struct recent *r, struct recent_rec *x,
    const char *k, size_t n, unsigned *seen)
{
	static const struct {
		const char *name;
		unsigned bit;
	} keys[] = {{"size", K_SIZE}, {"usize", K_USIZE},
	    {"released", K_RELEASED}, {"alloc_thread_uid", K_ATID},
	    {"alloc_time", K_ATIME}, {"alloc_trace", K_ATRACE},
	    {"dalloc_thread_uid", K_DTID}, {"dalloc_time", K_DTIME},
	    {"dalloc_trace", K_DTRACE}};
	unsigned bit = 0;
	size_t i;

	if (key_is(k, n, "alloc_thread_name"))
		return rp_name(s, x->alloc.thread,
		    *seen == (K_SIZE | K_USIZE | K_RELEASED | K_ATID),
		    "alloc_time", "alloc_trace");
	if (key_is(k, n, "dalloc_thread_name"))
		return rp_name(s, x->free.thread, (*seen & ~K_NEEDED) == K_DTID,
		    "dalloc_time", "dalloc_trace");
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (key_is(k, n, keys[i].name))
			bit = keys[i].bit;
	if (bit == 0)
		return rp_skip(s, 2);
	if (*seen & bit)
		return rp_fail(s, "a key twice in one record");
	*seen |= bit;
	switch (bit) {
	case K_SIZE:
		return rp_uint(s, &x->size);
	case K_USIZE:
		return rp_uint(s, &x->usize);
	case K_RELEASED:
		return rp_bool(s, &x->released);
	case K_ATID:
		return rp_uint(s, &x->alloc.tid);
	case K_ATIME:
		return rp_uint(s, &x->alloc.time_ns);
	case K_ATRACE:
		return rp_trace(s, r, &x->alloc);
	case K_DTID:
		return rp_uint(s, &x->free.tid);
	case K_DTIME:
		return rp_uint(s, &x->free.time_ns);
	default:
		return rp_trace(s, r, &x->free);
	}
}

/* One record, appended to @p r. */
static int rp_record(struct rp *s, struct recent *r)
{
	int more;
	struct recent_rec x;
	unsigned seen = 0;
	const char *k;
	size_t n;

	memset(&x, 0, sizeof(x));
	for (more = rp_open(s, '{', '}'); more == 1; more = rp_next(s, '}'))
		if (rp_key(s, &k, &n) == -1 ||
		    rp_field(s, r, &x, k, n, &seen) == -1)
			return -1;
	if (more == -1)
		return -1;
	if ((seen & K_NEEDED) != K_NEEDED)
		return rp_fail(s, "a record without %s",
		    !(seen & K_SIZE)           ? "size"
		        : !(seen & K_USIZE)    ? "usize"
		        : !(seen & K_RELEASED) ? "released"
		        : !(seen & K_ATID)     ? "alloc_thread_uid"
		        : !(seen & K_ATIME)    ? "alloc_time"
		                               : "alloc_trace");
	if ((seen & K_FREE) != 0 && (seen & K_FREE) != K_FREE)
		return rp_fail(s, "a record with part of its free");
	if ((seen & K_FREE) != 0 && !x.released)
		return rp_fail(s, "a free of a record not released");
	x.has_free = (seen & K_FREE) != 0;
	if (r->n >= RECENT_RECS_MAX)
		return rp_fail(s, "more than %u records", RECENT_RECS_MAX);
	if (hp_grow((void **)&r->rec, &r->cap, r->n + 1, sizeof(*r->rec)) == -1)
		return rp_fail(s, "%s", strerror(ENOMEM));
	r->rec[r->n++] = x;
	return 0;
}

/* The records' array. With @p cut, the end of the input ends it. */
static int rp_records(struct rp *s, struct recent *r, int cut)
{
	int more;
	size_t npcs;

	for (more = rp_open(s, '[', ']'); more == 1; more = rp_next(s, ']')) {
		npcs = r->npcs;
		if (rp_record(s, r) == -1) {
			if (cut && s->eof) { /* the cap: keep the whole ones */
				r->npcs = npcs;
				r->cut = 1;
				return 1;
			}
			return -1;
		}
		if (cut && rp_peek(s) == -1) {
			r->cut = 1;
			return 1;
		}
	}
	return more;
}

int recent_parse(const char *buf, size_t len, int cut, struct recent *r,
    char *err, size_t errlen)
{
	struct rp s = {.p = buf,
	    .end = buf + len,
	    .err = err,
	    .errlen = errlen,
	    .base = buf};
	unsigned seen = 0;
	const char *k;
	size_t n;
	int rv, more = -1;

	memset(r, 0, sizeof(*r));
	if (rp_expect(&s, '{') == -1)
		goto fail;
	for (;;) {
		if (rp_key(&s, &k, &n) == -1)
			goto fail;
		if (key_is(k, n, "sample_interval"))
			rv = rp_uint(&s, &r->sample_interval), seen |= 1;
		else if (key_is(k, n, "recent_alloc_max"))
			rv = rp_max(&s, &r->max), seen |= 2;
		else if (key_is(k, n, "recent_alloc")) {
			if (seen & 4) {
				rp_fail(&s, "recent_alloc twice");
				goto fail;
			}
			seen |= 4;
			if ((rv = rp_records(&s, r, cut)) == 1)
				return 0; /* cut: nothing after it to read */
		} else
			rv = rp_skip(&s, 1);
		if (rv == -1)
			goto fail;
		if ((more = rp_next(&s, '}')) != 1)
			break;
	}
	if (more == -1)
		goto fail;
	if (rp_peek(&s) != -1) {
		rp_fail(&s, "more after the object");
		goto fail;
	}
	if (!(seen & 4)) {
		rp_fail(&s, "no recent_alloc");
		goto fail;
	}
	return 0;
fail:
	if (cut && s.eof && (seen & 4)) { /* cut after the records */
		r->cut = 1;
		return 0;
	}
	recent_free(r);
	return -1;
}

void recent_free(struct recent *r)
{
	free(r->rec);
	free(r->pcs);
	memset(r, 0, sizeof(*r));
}

/* Does @p o show record @p x? */
static int shown(const struct recent_rec *x, const struct recent_opts *o)
{
	return (!o->live_only || !x->released) && x->size >= o->min_size;
}

/* Seconds from @p t to now, never negative (the clock is coarse). */
static double age_of(uint64_t t, const struct recent_opts *o)
{
	return o->now_ns > t ? (double)(o->now_ns - t) / 1e9 : 0.0;
}

/* @p site's frames as every view sees them, into @p v. */
static int site_view(struct render_view *v, const struct recent *r,
    const struct recent_site *site, struct symbolizer *sym)
{
	/* No record with a frame: no array to point into (NULL + 0 is
	 * undefined). */
	struct hp_stack st = {.pc = site->n != 0 ? r->pcs + site->off : NULL,
	    .depth = site->n};

	return render_view_stack(v, &st, sym);
}

/* The frames a line shows. */
#define RECENT_TEXT_FRAMES 3

/* The arrow between a caller and its callee, in every call chain we
 * show: outermost first, as the flame graph and the call graph read. */
#define CALLS " \xe2\x86\x92 " /* U+2192 */

/* "  ... → h → g → f": @p site's innermost interesting frames, callers
 * first, the leaf (where it allocated) last. */
static int text_frames(FILE *out, struct render_view *v, const struct recent *r,
    const struct recent_site *site, struct symbolizer *sym)
{
	size_t i, n;

	if (site_view(v, r, site, sym) == -1)
		return -1;
	if (v->n == 0)
		fputs(" (no frames)", out);
	n = v->n < RECENT_TEXT_FRAMES ? v->n : RECENT_TEXT_FRAMES;
	if (v->n > RECENT_TEXT_FRAMES)
		fputs("  ..." CALLS, out);
	else if (n > 0)
		fputs("  ", out);
	for (i = n; i-- > 0;)
		fprintf(out, "%s%s", v->f[i].f.func, i > 0 ? CALLS : "");
	return 0;
}

/* "t3" or "t3 (name)": a name is the program's (thread.prof.name), any
 * bytes, so it is shown as render_line shows it (control characters and
 * bytes that are not UTF-8 as '?') and each record stays one line. */
static const char *fmt_thread(char *buf, size_t len,
    const struct recent_site *s)
{
	char raw[RECENT_NAME_MAX + 32];

	if (s->thread[0] != '\0')
		snprintf(raw, sizeof(raw), "t%llu (%s)",
		    (unsigned long long)s->tid, s->thread);
	else
		snprintf(raw, sizeof(raw), "t%llu", (unsigned long long)s->tid);
	return render_line_to(buf, len, raw);
}

/* What the heading says of the records and the cap. */
static void heading(FILE *out, const struct recent *r, size_t n_shown,
    const struct recent_opts *o, const char *lead)
{
	char b[32], c[32];

	fprintf(out,
	    "%s%zu of %zu recent sampled allocations, newest first "
	    "(jemalloc keeps %lld%s; one sampled every %s on average)",
	    lead, n_shown, r->n, r->max, r->max == -1 ? ", no limit" : "",
	    fmt_bytes(b, sizeof(b), r->sample_interval));
	if (o->live_only)
		fputs("; only live ones", out);
	if (o->min_size > 0)
		fprintf(out, "; only of %s or more",
		    fmt_bytes(c, sizeof(c), o->min_size));
	fputc('\n', out);
	if (r->cut)
		fprintf(out,
		    "%sthe records were cut at %s: the newest are not "
		    "shown\n",
		    lead, fmt_bytes(b, sizeof(b), o->cap_bytes));
}

int recent_render_text(FILE *out, const struct recent *r,
    struct symbolizer *sym, const struct recent_opts *o)
{
	struct render_view v = {0};
	char sz[32], age[32], th[96];
	const struct recent_rec *x;
	size_t i, n_shown = 0;

	for (i = 0; i < r->n; i++)
		n_shown += shown(&r->rec[i], o);
	heading(out, r, n_shown, o, "# ");
	if (o->note != NULL)
		fprintf(out, "# note: %s\n", o->note);
	if (n_shown > 0)
		fprintf(out, "# %10s %7s  %-12s %-6s  %s\n", "size", "age",
		    "thread", "state", "allocated in");
	for (i = r->n; i-- > 0;) {
		x = &r->rec[i];
		if (!shown(x, o))
			continue;
		fprintf(out, "%12s %7s  %-12s %-6s",
		    fmt_bytes(sz, sizeof(sz), x->size),
		    fmt_age(age, sizeof(age), age_of(x->alloc.time_ns, o), 1),
		    fmt_thread(th, sizeof(th), &x->alloc),
		    x->released ? "freed" : "live");
		if (text_frames(out, &v, r, &x->alloc, sym) == -1)
			goto fail;
		fputc('\n', out);
		if (x->has_free) {
			fprintf(out, "%12s %7s  %-12s %-6s", "",
			    fmt_age(age, sizeof(age),
			        age_of(x->free.time_ns, o), 1),
			    fmt_thread(th, sizeof(th), &x->free), "free");
			if (text_frames(out, &v, r, &x->free, sym) == -1)
				goto fail;
			fputc('\n', out);
		}
	}
	render_view_free(&v);
	return ferror(out) ? -1 : 0;
fail:
	render_view_free(&v);
	errno = ENOMEM;
	return -1;
}

/* "alloc":{...}: a side of a record, its stack symbolized and raw. */
static int json_site(struct out *o, struct render_view *v,
    const struct recent *r, const struct recent_site *site,
    struct symbolizer *sym, const struct recent_opts *opt)
{
	size_t i;

	out_printf(o,
	    "{\"thread\":%llu,\"thread_name\":", (unsigned long long)site->tid);
	json_string(o, site->thread);
	out_printf(o, ",\"time_ns\":%llu,\"age_s\":%.3f,\"pcs\":[",
	    (unsigned long long)site->time_ns, age_of(site->time_ns, opt));
	for (i = 0; i < site->n; i++)
		out_printf(o, "%s\"0x%llx\"", i ? "," : "",
		    (unsigned long long)r->pcs[site->off + i]);
	out_puts(o, "],\"frames\":[");
	if (site_view(v, r, site, sym) == -1)
		return -1;
	for (i = 0; i < v->n; i++) {
		out_printf(o, "%s{\"pc\":\"0x%llx\",\"func\":", i ? "," : "",
		    (unsigned long long)v->f[i].pc);
		json_string(o, v->f[i].f.func);
		out_puts(o, "}");
	}
	out_puts(o, "]}");
	return 0;
}

int recent_render_json(FILE *out, const struct recent *r,
    struct symbolizer *sym, const struct recent_opts *opt)
{
	struct out o = out_file(out);
	struct render_view v = {0};
	const struct recent_rec *x;
	size_t i, n_shown = 0;
	int first = 1;

	for (i = 0; i < r->n; i++)
		n_shown += shown(&r->rec[i], opt);
	out_printf(&o,
	    "{\"sample_interval\":%llu,\"recent_max\":%lld,\"count\":%zu,"
	    "\"shown\":%zu,\"cut\":%s,\"live_only\":%s,\"min_size\":%llu,"
	    "\"note\":",
	    (unsigned long long)r->sample_interval, r->max, r->n, n_shown,
	    r->cut ? "true" : "false", opt->live_only ? "true" : "false",
	    (unsigned long long)opt->min_size);
	if (opt->note != NULL) /* why they are few or none */
		json_string(&o, opt->note);
	else
		out_printf(&o, "null");
	out_printf(&o, ",\"records\":[");
	for (i = r->n; i-- > 0;) {
		x = &r->rec[i];
		if (!shown(x, opt))
			continue;
		out_printf(&o,
		    "%s{\"size\":%llu,\"usize\":%llu,\"live\":%s,\"alloc\":",
		    first ? "" : ",", (unsigned long long)x->size,
		    (unsigned long long)x->usize,
		    x->released ? "false" : "true");
		first = 0;
		if (json_site(&o, &v, r, &x->alloc, sym, opt) == -1)
			goto fail;
		out_puts(&o, ",\"free\":");
		if (!x->has_free)
			out_puts(&o, "null");
		else if (json_site(&o, &v, r, &x->free, sym, opt) == -1)
			goto fail;
		out_puts(&o, "}");
	}
	out_puts(&o, "]}\n");
	render_view_free(&v);
	return ferror(out) ? -1 : 0;
fail:
	render_view_free(&v);
	errno = ENOMEM;
	return -1;
}

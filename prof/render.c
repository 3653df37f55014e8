/*
 * The view of a stack every format walks (render_view_stack): its frames
 * expanded through inline chains, leaf first, with the allocator's own
 * frames cut off as jeprof does (everything up to and including the last
 * malloc-family frame); each format (render_text.c, render_collapsed.c,
 * render_symbolized.c, render_svg.c, render_pprof.c) sums what it needs.
 */
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
	uint64_t *skip;
	int r;

	if ((skip = hmap_get(&v->seen, (uintptr_t)f)) != NULL)
		return (int)*skip;
	r = skipped(f);
	if ((skip = hmap_put(&v->seen, (uintptr_t)f, NULL)) != NULL)
		*skip = (uint64_t)r; /* else no memory to remember: ask again */
	return r;
}

/* Stack @p st as every format sees it (see render.h). */
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

/* What render_view_stack kept in @p v. */
void render_view_free(struct render_view *v)
{
	free(v->f);
	hmap_free(&v->seen);
	memset(v, 0, sizeof(*v));
}

/* Are the stack's thread lines within it? (See render.h.) */
int render_threads_fit(const struct hp_stack *st)
{
	uint64_t o = 0, b = 0, ao = 0, ab = 0;
	size_t i;

	for (i = 0; i < st->ntc; i++)
		if (__builtin_add_overflow(o, st->tc[i].objs, &o) ||
		    __builtin_add_overflow(b, st->tc[i].bytes, &b) ||
		    __builtin_add_overflow(ao, st->tc[i].accum_objs, &ao) ||
		    __builtin_add_overflow(ab, st->tc[i].accum_bytes, &ab))
			return 0;
	return o <= st->objs && b <= st->bytes && ao <= st->accum_objs &&
	    ab <= st->accum_bytes;
}

/* A stack's unsampled bytes or objects (its growth, for a diff). */
double render_value_of(const struct hp_stack *st, enum render_value v)
{
	return render_clamp(v == RENDER_OBJECTS ? st->u_objs : st->u_bytes);
}

/* The base's value of a stack, for a difference. */
double render_base_of(const struct hp_stack *st, enum render_value v)
{
	return render_clamp(v == RENDER_OBJECTS ? st->b_objs : st->b_bytes);
}

/* @p x within +-RENDER_MAX, NaN as 0 (see render.h). */
double render_clamp(double x)
{
	if (isnan(x))
		return 0;
	return fmin(fmax(x, -RENDER_MAX), RENDER_MAX);
}

/* render_clamp(@p x), rounded: always within long long. */
long long render_round(double x)
{
	return llround(render_clamp(x));
}

size_t render_utf8(const unsigned char *s, size_t n, long *cp)
{
	size_t len, i;
	long c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, c = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, c = s[0] & 0x0f, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, c = s[0] & 0x07, min = 0x10000;
	else
		len = 0, c = 0, min = 0;
	if (len > n)
		len = 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			break;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (len == 0 || i < len || c < min || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff)) {
		*cp = -1;
		return 1;
	}
	*cp = c;
	return len;
}

void render_xml(FILE *out, const char *s, size_t n, size_t max)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t i, len, count = 0;
	long cp;

	if (max == 0)
		return;
	for (i = 0; i < n && count <= max; count++)
		i += render_utf8(p + i, n - i, &cp);
	if (count > max) /* too long: leave room for ".." */
		max = max >= 2 ? max - 2 : 0;
	for (count = 0; p < end && count < max; count++, p += len) {
		len = render_utf8(p, (size_t)(end - p), &cp);
		/* What XML 1.0 cannot carry: control characters but the tab,
		 * U+FFFE and U+FFFF, and a broken sequence. */
		if (cp == -1 || (cp < 0x20 && cp != '\t') || cp == 0xfffe ||
		    cp == 0xffff)
			fputc('?', out);
		else if (cp == '&')
			fputs("&amp;", out);
		else if (cp == '<')
			fputs("&lt;", out);
		else if (cp == '>')
			fputs("&gt;", out);
		else if (cp == '"')
			fputs("&quot;", out);
		else if (cp == '\'')
			fputs("&apos;", out);
		else
			fwrite(p, 1, len, out);
	}
	if (p < end)
		fputs("..", out);
}

/* Is @p cp shown as it is by render_line (see render.h)? */
int render_line_shows(long cp)
{
	/* Not C0 (tab too: it shifts columns), DEL nor C1 (0x9b is an
	 * 8-bit CSI to some terminals), nor a broken sequence. */
	return cp >= 0x20 && (cp < 0x7f || cp >= 0xa0);
}

/* @p s as one line of terminal text (see render.h). */
void render_line(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i, len;
	long cp;

	for (i = 0; i < n; i += len) {
		len = render_utf8(p + i, n - i, &cp);
		if (render_line_shows(cp))
			fwrite(p + i, 1, len, out);
		else
			fputc('?', out);
	}
}

/* @p s as render_line writes it, into @p dst (see render.h). */
const char *render_line_to(char *dst, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i, k, o = 0;
	long cp;
	int shown;

	if (len == 0)
		return dst;
	for (i = 0; i < n; i += k) {
		k = render_utf8(p + i, n - i, &cp);
		shown = render_line_shows(cp);
		if (o + (shown ? k : 1) >= len)
			break; /* whole characters only */
		if (shown) {
			memcpy(dst + o, p + i, k);
			o += k;
		} else
			dst[o++] = '?';
	}
	dst[o] = '\0';
	return dst;
}

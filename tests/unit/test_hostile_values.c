/*
 * Hostile dumps through the whole profile pipeline:
 * a stack of 100,000 frames in every format, a sampling period of 2^63,
 * counts that sum past int64, counts of UINT64_MAX. Each test is named
 * after the defect it pins; run it under ASan+UBSan too, where the old
 * code crashed (a recursion per frame) or converted NaN and out-of-range
 * values to integers.
 *
 * The profiles are heap_v2 text written here and symbolized from their
 * own (empty) symbol table: every address is its hex, so each frame of a
 * deep stack is a distinct name and the flame graph as deep as the stack.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "heapprof.h"
#include "render.h"
#include "render_pprof.h"
#include "render_svg.h"
#include "symbolize.h"

#define DEEP 100000 /* frames of the deep stack */
#define MAPS "MAPPED_LIBRARIES:\n"

static char err[256];

/* The formats, each rendered by render_to. */
enum fmt { F_TEXT, F_COLLAPSED, F_SVG, F_PPROF, F_SYMBOLIZED, F_DOT, F_N };
static const char *const fmt_names[] = {"text", "collapsed", "svg", "pprof",
    "symbolized", "dot"};

/* Render @p hp as @p f into a string (its length in *@p len; free it):
 * what render_* returned must be 0. */
static char *render_to(const struct heap_profile *hp, enum fmt f,
    const char *raw, size_t *len)
{
	struct symbolizer *sym;
	char *buf = NULL;
	FILE *out;
	int r = -1;

	assert_non_null(sym = sym_new_table(hp, err, sizeof(err)));
	assert_non_null(out = open_memstream(&buf, len));
	switch (f) {
	case F_TEXT:
		r = render_text(out, hp, sym, RENDER_SPACE, 0, NULL);
		break;
	case F_COLLAPSED:
		r = render_collapsed(out, hp, sym, RENDER_SPACE);
		break;
	case F_SVG:
		r = render_svg(out, hp, sym, RENDER_SPACE, NULL, NULL);
		break;
	case F_PPROF:
		r = render_pprof(out, hp, sym, NULL);
		break;
	case F_SYMBOLIZED:
		r = render_symbolized(out, hp, sym, NULL, raw, strlen(raw));
		break;
	case F_DOT:
		r = render_dot(out, hp, sym, RENDER_SPACE, NULL);
		break;
	default:
		fail();
	}
	fclose(out);
	sym_free(sym);
	if (r != 0)
		fail_msg("render %s: %d", fmt_names[f], r);
	return buf;
}

/* How many times @p needle is in the @p len bytes at @p s. memmem, not
 * strstr: ASan's strstr measures the whole rest of the string at each
 * call, quadratic over a 100,000-line render. */
static size_t count(const char *s, size_t len, const char *needle)
{
	const char *end = s + len, *p;
	size_t n = 0, nl = strlen(needle);

	for (; (p = memmem(s, (size_t)(end - s), needle, nl)) != NULL;
	     s = p + nl)
		n++;
	return n;
}

/* A profile with period @p period and the stacks in @p stacks. */
static char *profile(const char *period, const char *stacks)
{
	char *p;

	assert_true(asprintf(&p, "heap_v2/%s\n  t*: 0: 0 [0: 0]\n%s" MAPS,
	                period, stacks) > 0);
	return p;
}

/* Parse @p text into @p hp: 0 or -1 (err says why). */
static int parse(const char *text, struct heap_profile *hp)
{
	return heapprof_parse(text, strlen(text), hp, err, sizeof(err));
}

/* --- a deep stack -------------------------------------------------- */

/* The name the deep stack's frame @p k (0: the leaf) is drawn with:
 * its address, a caller's minus 1 (sym_lookup's hex fallback). */
static const char *deep_name(size_t k)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "0x%zx", 0x100000 + 16 * k - (k > 0));
	return buf;
}

/* Does the flame graph @p svg have a frame named @p name? */
static int has_frame(const char *svg, const char *name)
{
	char key[128];

	snprintf(key, sizeof(key), "<g class=\"f\"><title>%s\n", name);
	return strstr(svg, key) != NULL;
}

/* A planted dump's stack of DEEP frames (and a short one beside it)
 * renders in every format: no recursion per frame, in the renderers or
 * on the way to them. The flame graph draws it 1024 levels deep, its
 * middle folded into one frame that says how many it holds. */
static void test_deep_stack_svg(void **state)
{
	struct heap_profile hp;
	char *text, *p, *buf;
	size_t len, k, cap = 64 + (size_t)DEEP * 16;
	enum fmt f;

	(void)state;
	assert_non_null(p = text = malloc(cap + 256));
	p += sprintf(p, "heap_v2/0\n@");
	for (k = 0; k < DEEP; k++)
		p += sprintf(p, " 0x%zx", 0x100000 + 16 * k);
	sprintf(p,
	    "\n  t*: 1: 1048576 [0: 0]\n@ 0x10 0x20\n"
	    "  t*: 1: 1048576 [0: 0]\n" MAPS);
	assert_int_equal(parse(text, &hp), 0);
	assert_int_equal(hp.stacks[0].depth, DEEP);
	for (f = 0; f < F_N; f++) {
		buf = render_to(&hp, f, text, &len);
		switch (f) {
		case F_TEXT: /* a row per function, each frame its own */
			assert_int_equal(count(buf, len, "\n"), 1 + DEEP + 2);
			break;
		case F_COLLAPSED: /* the deep stack whole, root first */
			assert_int_equal(count(buf, len, ";"), (DEEP - 1) + 1);
			assert_non_null(strstr(buf, "\n0x1f;0x10 1048576\n"));
			assert_int_equal(strncmp(buf, deep_name(DEEP - 1),
			                     strlen(deep_name(DEEP - 1))),
			    0);
			break;
		case F_SVG: /* all, 1024 levels, the short stack's two */
			assert_int_equal(count(buf, len, "<g class=\"f\">"),
			    1 + 1024 + 2);
			assert_int_equal(count(buf, len, "[98977 more frames]"),
			    2);
			/* the outermost 512 frames, then the fold, then
			 * the innermost 511 down to the leaf */
			assert_true(has_frame(buf, deep_name(DEEP - 1)));
			assert_true(has_frame(buf, deep_name(DEEP - 512)));
			assert_false(has_frame(buf, deep_name(DEEP - 513)));
			assert_false(has_frame(buf, deep_name(511)));
			assert_true(has_frame(buf, deep_name(510)));
			assert_true(has_frame(buf, deep_name(0)));
			/* 1024 levels over all: 72 + 1025 * 16 + 34 px */
			assert_non_null(strstr(buf, "height=\"16506\""));
			break;
		case F_PPROF:
			assert_true(len > 18);
			assert_int_equal((unsigned char)buf[0], 0x1f);
			break;
		case F_SYMBOLIZED: /* every address named once */
			assert_int_equal(count(buf, len, "\n0x"), DEEP + 2);
			break;
		case F_DOT: /* the 80 heaviest of every frame's function */
			assert_int_equal(count(buf, len, "\",shape=box,"), 80);
			assert_non_null(strstr(buf,
			    "\\lShowing top 80 nodes out of 100002\\l"));
			assert_non_null(strstr(buf,
			    "\\lDropped 99922 nodes (cum <= 1.0 MiB)\\l"));
			break;
		default:
			break;
		}
		free(buf);
	}
	heapprof_free(&hp);
	free(text);
}

/* --- extreme values ----------------------------------------------- */

/* Gunzip @p gz and return pprof's period field and the sum of every
 * sample's last value (inuse_space), as int64 as pprof reads them. */
static void pprof_fields(const char *gz, size_t gzlen, int64_t *period,
    int64_t *space, int *negative)
{
	size_t cap = 1 << 20;
	unsigned char *pb = malloc(cap), *p, *end, *q, *qe;
	uint64_t key, v, n, last = 0;
	z_stream z = {0};
	int shift;

	assert_non_null(pb);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)(uintptr_t)gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = pb;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	*period = *space = 0;
	*negative = 0;
#define VARINT(x, p)                                                           \
	for ((x) = 0, shift = 0; shift < 70; shift += 7) {                     \
		(x) |= (uint64_t)(*(p)&0x7f) << shift;                         \
		if (!(*(p)++ & 0x80))                                          \
			break;                                                 \
	}
	for (p = pb, end = pb + z.total_out; p < end;) {
		VARINT(key, p);
		if ((key & 7) == 0) {
			VARINT(v, p);
			if (key >> 3 == 12)
				*period = (int64_t)v;
			continue;
		}
		VARINT(n, p);
		if (key >> 3 == 2) { /* a Sample: its value field (2) */
			for (q = p, qe = p + n; q < qe;) {
				uint64_t k2, n2;
				VARINT(k2, q);
				VARINT(n2, q);
				if (k2 >> 3 == 2) {
					unsigned char *r = q;
					while (r < q + n2) {
						VARINT(last, r);
						*negative |= (int64_t)last < 0;
					}
					*space += (int64_t)last;
				}
				q += n2;
			}
		}
		p += n;
	}
#undef VARINT
	inflateEnd(&z);
	free(pb);
}

/* Does any format print inf, nan or a negative count for @p hp (not a
 * difference: every value is >= 0)? Fails the test if so. */
static void no_inf_nan_negative(const struct heap_profile *hp, const char *raw)
{
	int64_t period, space;
	int negative;
	char *buf, *cut;
	size_t len;
	enum fmt f;

	for (f = 0; f < F_N; f++) {
		buf = render_to(hp, f, raw, &len);
		if (f == F_PPROF) {
			pprof_fields(buf, len, &period, &space, &negative);
			assert_true(period >= 0);
			assert_false(negative);
			free(buf);
			continue;
		}
		/* the SVG's numbers, not its script */
		if (f == F_SVG && (cut = strstr(buf, "<script>")) != NULL)
			*cut = '\0';
		if (strstr(buf, "inf") != NULL || strstr(buf, "nan") != NULL ||
		    strstr(buf, " -") != NULL || strstr(buf, ">-") != NULL ||
		    strstr(buf, "(-") != NULL)
			fail_msg("%s prints inf, nan or a negative count:\n%.400s",
			    fmt_names[f], buf);
		free(buf);
	}
}

/* A sampling period of 2^63 (jemalloc's lg_prof_sample goes to 63): the
 * unsampling scale was 1 / (1 - exp(-tiny)) = 1/0, "Total: inf MB" and
 * a NaN cast to an integer in the flame graph. Now the scale is finite;
 * a sample there unsamples past what any process holds and the profile
 * is refused with a line saying so; a period of UINT64_MAX with nothing
 * sampled reads, and pprof's int64 period clamps. */
static void test_extreme_period(void **state)
{
	struct heap_profile hp;
	int64_t period, space;
	char *text, *buf;
	int negative;
	size_t len;

	(void)state;
	assert_true(isfinite(heapprof_scale(1, 100, 1ULL << 63)));
	assert_true(heapprof_scale(1, 100, 1ULL << 63) > 9e16);
	assert_true(isfinite(heapprof_scale(UINT64_MAX, 1, UINT64_MAX)));
	/* jeprof's own value where it has one */
	assert_true(
	    heapprof_scale(1, 512, 524288) == 1 / (1 - exp(-(512.0 / 524288))));

	text = profile("9223372036854775808", "@ 0x1\n  t*: 1: 100 [0: 0]\n");
	assert_int_equal(parse(text, &hp), -1);
	assert_non_null(strstr(err, "past 2^62"));
	assert_non_null(strstr(err, "line 4:"));
	free(text);

	/* 2^60: an estimate of 2^60 bytes, under the limit: every format
	 * prints it, finite and positive. */
	text = profile("1152921504606846976", "@ 0x1\n  t*: 1: 100 [0: 0]\n");
	assert_int_equal(parse(text, &hp), 0);
	assert_true(isfinite(hp.u_bytes) && hp.u_bytes > 1e18);
	no_inf_nan_negative(&hp, text);
	buf = render_to(&hp, F_TEXT, text, &len);
	assert_non_null(strstr(buf, "Total: 1099511627776.0 MiB\n"));
	free(buf);
	heapprof_free(&hp);
	free(text);

	text = profile("18446744073709551615", "@ 0x1\n  t*: 0: 0 [0: 0]\n");
	assert_int_equal(parse(text, &hp), 0);
	assert_true(hp.period == UINT64_MAX);
	no_inf_nan_negative(&hp, text);
	buf = render_to(&hp, F_PPROF, text, &len);
	pprof_fields(buf, len, &period, &space, &negative);
	assert_true(period == INT64_MAX);
	free(buf);
	heapprof_free(&hp);
	free(text);
}

/* Counts summing past 2^63: pprof's running sum overflowed int64
 * (signed overflow), the text's objects were cast from out of range,
 * and the values came out negative with exit 0. A parsed profile is
 * refused past 2^62 with its line; a profile built by other means with
 * such values renders saturated, never wrapped. */
static void test_counts_past_int64(void **state)
{
	struct heap_profile hp;
	char *text, *buf;
	size_t len;

	(void)state;
	/* heap_v2/0: no unsampling, the counts as they are. */
	text = profile("0",
	    "@ 0x1\n  t*: 1: 3000000000000000000 [0: 0]\n"
	    "@ 0x2\n  t*: 1: 3000000000000000000 [0: 0]\n"
	    "@ 0x3\n  t*: 1: 3000000000000000000 [0: 0]\n"
	    "@ 0x4\n  t*: 1: 3000000000000000000 [0: 0]\n");
	assert_int_equal(parse(text, &hp), -1);
	assert_non_null(strstr(err,
	    "line 6: the counts so far unsample to "
	    "6e+18 bytes"));
	free(text);

	/* The renderers' own guard: values no parse gives. */
	text = profile("0",
	    "@ 0x1\n  t*: 1: 1 [0: 0]\n"
	    "@ 0x2\n  t*: 1: 1 [0: 0]\n"
	    "@ 0x3\n  t*: 1: 1 [0: 0]\n");
	assert_int_equal(parse(text, &hp), 0);
	hp.stacks[0].u_bytes = hp.stacks[0].u_objs = 1e30;
	hp.stacks[1].u_bytes = hp.stacks[1].u_objs = 9e18;
	hp.stacks[2].u_bytes = hp.stacks[2].u_objs = 9e18;
	hp.stacks[2].u_accum_bytes = hp.stacks[2].u_accum_objs = 1e300;
	hp.u_bytes = hp.u_objs = 1e30 + 1.8e19;
	no_inf_nan_negative(&hp, text);
	buf = render_to(&hp, F_COLLAPSED, text, &len);
	assert_string_equal(buf,
	    "0x1 9223372036854774784\n"
	    "0x2 9000000000000000000\n"
	    "0x3 9000000000000000000\n");
	free(buf);
	/* NaN and inf: as 0 and saturated. */
	hp.stacks[1].u_bytes = NAN;
	hp.stacks[2].u_bytes = INFINITY;
	no_inf_nan_negative(&hp, text);
	heapprof_free(&hp);
	free(text);
}

/* A count of exactly UINT64_MAX was "bad counts": hp_dec's overflow
 * check was one short of the top. The whole uint64 range reads (a
 * per-thread line, a mapping's inode); one more is still refused; and
 * such a count on a stack's t* line unsamples past 2^62, refused for
 * that with its line. */
static void test_count_uint64_max(void **state)
{
	struct heap_profile hp;
	char *text;

	(void)state;
	text = profile("524288",
	    "@ 0x1\n  t*: 1: 64 [0: 0]\n"
	    "  t0: 18446744073709551615: "
	    "18446744073709551615 [0: 0]\n");
	assert_int_equal(parse(text, &hp), 0);
	assert_int_equal(hp.nstacks, 1);
	assert_true(hp.stacks[0].bytes == 64);
	heapprof_free(&hp);
	free(text);

	assert_int_equal(parse("heap_v2/0\n" MAPS "00400000-00401000 r-xp "
	                       "00000000 08:01 18446744073709551615 /bin/x\n",
	                     &hp),
	    0);
	assert_int_equal(hp.nmaps, 1);
	assert_string_equal(hp.maps[0].path, "/bin/x");
	heapprof_free(&hp);

	text = profile("524288",
	    "@ 0x1\n  t*: 1: 64 [0: 0]\n"
	    "  t0: 18446744073709551616: 1 [0: 0]\n");
	assert_int_equal(parse(text, &hp), -1);
	assert_non_null(strstr(err, "line 5: bad counts"));
	free(text);

	text = profile("524288",
	    "@ 0x1\n  t*: 1: 18446744073709551615 "
	    "[0: 0]\n");
	assert_int_equal(parse(text, &hp), -1);
	assert_non_null(strstr(err, "line 4: the counts so far unsample"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_deep_stack_svg),
	    cmocka_unit_test(test_extreme_period),
	    cmocka_unit_test(test_counts_past_int64),
	    cmocka_unit_test(test_count_uint64_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

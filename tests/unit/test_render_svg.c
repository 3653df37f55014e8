/*
 * Unit tests of prof/render_svg.c on small profiles written here, with a
 * stand-in symbolizer that names each address from a table: the tree
 * merge (by name, children sorted, widths from the values), frames too
 * narrow to draw left out while their parents keep the total, a
 * difference's colours, and names escaped for XML whatever bytes they
 * hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof.h"
#include "render_svg.h"
#include "sym_table.h"
#include "view.h"

/* What each address is called (0x1 .. 0xb). Two addresses, 0x3 and 0x5,
 * are the same function, as two call sites in one function are. */
static const char *const names[] = {
    NULL,
    "main",
    "b",
    "c",
    "d",
    "c",
    "std::map<int, A&>::operator<",
    "it's \"quoted\"",
    "bad\x01\xff utf-8 \xc3\xa9t\xc3\xa9",
    "big",
    "std::vector<std::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >, std::allocator<std::basic_string<char, "
    "std::char_traits<char>, std::allocator<char> > > >::_M_realloc_insert",
    "gone",
};

SYM_TABLE(names);

#define MAPS "\nMAPPED_LIBRARIES:\n"

/* heap_v2/0: no unsampling, so the bytes are the test's own figures. */
static const char profile[] = "heap_v2/0\n"
                              "@ 0x3 0x2 0x1\n  t*: 1: 1024 [0: 0]\n"
                              "@ 0x4 0x2 0x1\n  t*: 1: 2048 [0: 0]\n"
                              "@ 0x5 0x2 0x1\n  t*: 1: 4096 [0: 0]\n" MAPS;

static struct heap_profile hp, base;
static char err[256];

/* Render @p p (minus @p b, if not NULL) to a string (free it). */
static char *svg_of(const char *p, const char *b, enum render_value v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	assert_int_equal(heapprof_parse(p, strlen(p), &hp, err, sizeof(err)),
	    0);
	if (b != NULL) {
		assert_int_equal(heapprof_parse(b, strlen(b), &base, err,
		                     sizeof(err)),
		    0);
		assert_int_equal(heapprof_subtract(&hp, &base), 0);
	}
	assert_non_null(out = open_memstream(&buf, &len));
	assert_int_equal(render_svg(out, &hp, NULL, v, NULL, NULL), 0);
	fclose(out);
	heapprof_free(&hp);
	if (b != NULL)
		heapprof_free(&base);
	return buf;
}

/* How many frames are named @p name (a frame's line starts its group and
 * its tooltip's first line, the whole name). */
static int frames_named(const char *svg, const char *name)
{
	char key[512];
	const char *p;
	int n = 0;

	snprintf(key, sizeof(key), "<g class=\"f\"><title>%s\n", name);
	for (p = svg; (p = strstr(p, key)) != NULL; p++)
		n++;
	return n;
}

/* The rest of the line of frame @p name: its tooltip's second line and
 * its box, or NULL. */
static const char *frame(const char *svg, const char *name)
{
	char key[512];
	const char *p;

	snprintf(key, sizeof(key), "<g class=\"f\"><title>%s\n", name);
	p = strstr(svg, key);
	return p != NULL ? p + strlen(key) : NULL;
}

/* Stacks merge by name from the root out: c through 0x3 and 0x5 is one
 * frame of both stacks' bytes, under b, under main, under all. */
static void test_merges_by_name(void **state)
{
	char *svg = svg_of(profile, NULL, RENDER_SPACE);
	const char *f;

	(void)state;
	assert_int_equal(frames_named(svg, "all"), 1);
	assert_int_equal(frames_named(svg, "main"), 1);
	assert_int_equal(frames_named(svg, "b"), 1);
	assert_int_equal(frames_named(svg, "c"), 1);
	assert_int_equal(frames_named(svg, "d"), 1);
	assert_non_null(f = frame(svg, "all"));
	assert_true(
	    strncmp(f, "7.0 KiB (7168 bytes), 100.00% of all<", 37) == 0);
	assert_non_null(f = frame(svg, "c"));
	assert_true(
	    strncmp(f, "5.0 KiB (5120 bytes), 71.43% of all<", 36) == 0);
	/* c and d side by side from b's left edge, c first (by name), as
	 * wide as their share of 1180 px; deeper is higher up. */
	assert_non_null(
	    strstr(f, "<rect x=\"10.00\" y=\"72\" width=\"842.86\""));
	assert_non_null(f = frame(svg, "d"));
	assert_non_null(
	    strstr(f, "<rect x=\"852.86\" y=\"72\" width=\"337.14\""));
	assert_true(strstr(svg, "<title>c\n") < strstr(svg, "<title>d\n"));
	assert_non_null(strstr(svg, "In use 7.0 KiB (7168 bytes), 3 stacks"));
	free(svg);
}

/* The order of the stacks in the file changes nothing. */
static void test_deterministic(void **state)
{
	char *a = svg_of(profile, NULL, RENDER_SPACE);
	char *b = svg_of("heap_v2/0\n"
	                 "@ 0x5 0x2 0x1\n  t*: 1: 4096 [0: 0]\n"
	                 "@ 0x4 0x2 0x1\n  t*: 1: 2048 [0: 0]\n"
	                 "@ 0x3 0x2 0x1\n  t*: 1: 1024 [0: 0]\n" MAPS,
	    NULL, RENDER_SPACE);

	(void)state;
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* Frames under 0.1 px are left out, but their bytes stay in their
 * parents and in the total. */
static void test_drops_narrow_frames(void **state)
{
	char *svg = svg_of("heap_v2/0\n"
	                   "@ 0x3 0x2 0x1\n  t*: 1: 1024 [0: 0]\n"
	                   "@ 0x9 0x1\n  t*: 1: 1073741824 [0: 0]\n" MAPS,
	    NULL, RENDER_SPACE);
	const char *f;

	(void)state;
	assert_int_equal(frames_named(svg, "big"), 1);
	assert_int_equal(frames_named(svg, "b"), 0);
	assert_int_equal(frames_named(svg, "c"), 0);
	assert_non_null(f = frame(svg, "main"));
	assert_true(
	    strncmp(f, "1.0 GiB (1073742848 bytes), 100.00% of all<", 43) == 0);
	free(svg);
}

/* & < > " ' escaped; control characters and broken UTF-8 replaced, good
 * UTF-8 kept; a name too long for its frame cut in the box (".."), kept
 * whole in the tooltip. */
static void test_escapes_names(void **state)
{
	char *svg = svg_of("heap_v2/0\n"
	                   "@ 0x6 0x1\n  t*: 1: 1024 [0: 0]\n"
	                   "@ 0x7 0x1\n  t*: 1: 1024 [0: 0]\n"
	                   "@ 0x8 0x1\n  t*: 1: 1024 [0: 0]\n"
	                   "@ 0xa 0x1\n  t*: 1: 1024 [0: 0]\n" MAPS,
	    NULL, RENDER_SPACE);
	const char *p, *f;

	(void)state;
	assert_int_equal(frames_named(svg,
	                     "std::map&lt;int, A&amp;&gt;::operator&lt;"),
	    1);
	assert_int_equal(frames_named(svg, "it&apos;s &quot;quoted&quot;"), 1);
	assert_int_equal(frames_named(svg, "bad?? utf-8 \xc3\xa9t\xc3\xa9"), 1);
	for (p = svg; *p != '\0'; p++) /* nothing XML cannot carry */
		assert_false((unsigned char)*p < 0x20 && *p != '\n');
	assert_null(strstr(svg, "\xff"));
	assert_null(strstr(svg, "operator<"));
	/* The long name: 1180 / 4 px wide, so 39 characters fit: 37 and "..". */
	assert_non_null(f = frame(svg,
	                    "std::vector&lt;std::basic_string&lt;char, "
	                    "std::char_traits&lt;char&gt;, std::allocator&lt;"
	                    "char&gt; &gt;, std::allocator&lt;std::basic_string"
	                    "&lt;char, std::char_traits&lt;char&gt;, "
	                    "std::allocator&lt;char&gt; &gt; &gt; &gt;::"
	                    "_M_realloc_insert"));
	assert_non_null(
	    strstr(f, ">std::vector&lt;std::basic_string&lt;char, s..</text>"));
	free(svg);
}

/* A difference: what grew red, what shrank blue, what is the same grey,
 * and a stack freed entirely still drawn (as wide as it was). */
static void test_difference(void **state)
{
	char *svg = svg_of("heap_v2/0\n"
	                   "@ 0x3 0x2 0x1\n  t*: 1: 4096 [0: 0]\n"
	                   "@ 0x4 0x2 0x1\n  t*: 1: 1024 [0: 0]\n"
	                   "@ 0x9 0x1\n  t*: 1: 2048 [0: 0]\n" MAPS,
	    "heap_v2/0\n"
	    "@ 0x3 0x2 0x1\n  t*: 1: 1024 [0: 0]\n"
	    "@ 0x4 0x2 0x1\n  t*: 1: 1024 [0: 0]\n"
	    "@ 0x9 0x1\n  t*: 1: 2048 [0: 0]\n"
	    "@ 0xb 0x1\n  t*: 1: 2048 [0: 0]\n" MAPS,
	    RENDER_SPACE);
	const char *f;

	(void)state;
	assert_non_null(f = frame(svg, "c"));
	assert_true(strncmp(f,
	                "grew +3.0 KiB (+3072 bytes): from 1.0 KiB (1024 "
	                "bytes) to 4.0 KiB (4096 bytes)",
	                70) == 0);
	assert_non_null(strstr(f, "fill=\"rgb(255,20,20)\""));
	assert_non_null(f = frame(svg, "gone"));
	assert_true(
	    strncmp(f, "shrank -2.0 KiB (-2048 bytes): from 2.0 KiB", 43) == 0);
	assert_non_null(strstr(f,
	    "width=\"262.22\" height=\"15\" "
	    "fill=\"rgb(87,87,255)\""));
	assert_non_null(f = frame(svg, "d"));
	assert_non_null(strstr(f, "fill=\"rgb(228,228,228)\""));
	assert_non_null(strstr(svg, "Change +1.0 KiB (+1024 bytes)"));
	assert_non_null(strstr(svg, "Red: grew"));
	free(svg);
}

/* No stacks at all: still a graph, of the root alone. */
static void test_empty(void **state)
{
	char *svg = svg_of("heap_v2/0\n" MAPS, NULL, RENDER_OBJECTS);

	(void)state;
	assert_int_equal(frames_named(svg, "all"), 1);
	assert_non_null(strstr(svg, "In use 0 objects, 0 stacks"));
	free(svg);
}

/* The note of the empty profile of interval 512 KiB, or of the profile
 * above, for sampling state @p s. */
static const char *note_of(int empty, const struct view_sampling *s, char *buf,
    size_t len)
{
	static const char none[] = "heap_v2/524288\n" MAPS;
	struct view_args a = {.sampling = *s};
	const char *p = empty ? none : profile, *r;

	assert_int_equal(heapprof_parse(p, strlen(p), &hp, err, sizeof(err)),
	    0);
	r = view_sampling_note(&hp, &a, buf, len);
	heapprof_free(&hp);
	return r;
}

/* Every empty or partial profile says why, and what to do: profiling
 * off, sampling inactive since when, no sample yet (the interval), only
 * since a switch or a reset, a base of another process; offline, that
 * the dump has no samples; a whole profile says nothing. */
static void test_sampling_notes(void **state)
{
	struct view_sampling s = {.turn_on = "jmep turns it on",
	    .start_with = "send jmep to start sampling"};
	char buf[512], *svg = NULL, *svg_estimate;
	size_t len = 0;
	FILE *out;

	(void)state;
	s.state = SAMPLING_OFF;
	assert_string_equal(note_of(1, &s, buf, sizeof(buf)),
	    "heap profiling is off in this process (opt.prof is false), so "
	    "nothing is sampled: start it with "
	    "MALLOC_CONF=prof:true,prof_active:false and send jmep to start "
	    "sampling");
	s.state = SAMPLING_INACTIVE;
	s.from_start = 1;
	assert_string_equal(note_of(1, &s, buf, sizeof(buf)),
	    "sampling is inactive (prof.active is false) since the process "
	    "started: nothing allocated since then is sampled; jmep turns it "
	    "on");
	s.since_ns = 1795819113LL * 1000000000LL; /* 2026-11-27T22:38:33Z */
	assert_non_null(strstr(note_of(1, &s, buf, sizeof(buf)),
	    "(prof.active is false) since 2026-11-27T22:38:33Z: nothing"));
	s.state = SAMPLING_ACTIVE;
	assert_non_null(strstr(note_of(1, &s, buf, sizeof(buf)),
	    "no sample yet: jemalloc samples one allocation per 512.0 KiB "
	    "allocated on average (lg_prof_sample=19), and none sampled "
	    "since 2026-11-27T22:38:33Z is still live"));
	s.since_reset = 1;
	assert_string_equal(note_of(0, &s, buf, sizeof(buf)),
	    "sampling active since 2026-11-27T22:38:33Z (prof.reset): "
	    "allocations made before then are not in this profile");
	s.since_ns = 0;
	assert_null(note_of(0, &s, buf, sizeof(buf)));
	s.other_base = 1;
	assert_string_equal(note_of(0, &s, buf, sizeof(buf)),
	    "the base is another process's dump: this difference compares "
	    "two processes");
	memset(&s, 0, sizeof(s)); /* offline: only the dump speaks */
	assert_string_equal(note_of(1, &s, buf, sizeof(buf)),
	    "no samples in this dump (sampling was inactive, or none of the "
	    "allocations it sampled, one allocation per 512.0 KiB allocated "
	    "on average (lg_prof_sample=19), was still live)");
	assert_null(note_of(0, &s, buf, sizeof(buf)));
	/* The flame graph shows it in sight, under the legend. */
	assert_int_equal(heapprof_parse(profile, strlen(profile), &hp, err,
	                     sizeof(err)),
	    0);
	assert_non_null(out = open_memstream(&svg, &len));
	assert_int_equal(render_svg(out, &hp, NULL, RENDER_SPACE, NULL,
	                     "sampling is <off>"),
	    0);
	fclose(out);
	heapprof_free(&hp);
	assert_non_null(strstr(svg,
	    "<text id=\"note\" x=\"600\" y=\"80\">Note: sampling is "
	    "&lt;off&gt;</text>"));
	free(svg);
	/* A sampled total says it is one, with its error: 100 samples of
	 * 512 KiB unsample to 158.2 intervals, 1.96 / sqrt(158.2) = 16%. */
	svg_estimate = svg_of("heap_v2/524288\n@ 0x3 0x2 0x1\n"
	                      "  t*: 100: 52428800 [0: 0]\n" MAPS,
	    NULL, RENDER_SPACE);
	assert_non_null(strstr(svg_estimate,
	    "79.1 MiB (82941140 bytes), 1 stacks, unsampled: a sampled "
	    "estimate, \xc2\xb1"
	    "16% at 95%</text>"));
	free(svg_estimate);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_merges_by_name),
	    cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_drops_narrow_frames),
	    cmocka_unit_test(test_escapes_names),
	    cmocka_unit_test(test_difference),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_sampling_notes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

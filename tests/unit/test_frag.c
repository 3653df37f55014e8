/*
 * test_frag: fragmentation by site's mapping of a stack's dumped mean to
 * a size class (prof/frag.c): exact without unbiasing; within the dump's
 * integer rounding with jemalloc 5.3's unbiasing, whose numbers here are
 * a real dump's; a stack of two sizes is mixed, never the nearest class;
 * too few samples to tell is mixed too. The classes' free regions; the
 * attribution of a hand-built profile to its sites, and its text, JSON
 * and collapsed stacks, names from the test's own table (sym_table.c);
 * prof_recent's live records matched to the sites, and their ages.
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

#include "frag.h"
#include "heapprof.h"
#include "sym_table.h"
#include "symbolize.h"

/* jemalloc 5.3's small classes with 4 KiB pages, and its first large
 * ones: test data (the module reads them from the process). */
static const size_t small[] = {8, 16, 32, 48, 64, 80, 96, 112, 128, 160, 192,
    224, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 1792, 2048,
    2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 10240, 12288, 14336};
static const size_t large[] = {16384, 20480, 24576, 28672, 32768};
#define NSMALL (sizeof(small) / sizeof(small[0]))
#define BIN_320 13
#define BIN_384 14
#define BIN_48 3

/* Statistics with those classes at lg_prof_sample @p lg. */
static void stats(struct frag_stats *st, int unbias, size_t lg)
{
	size_t j;

	memset(st, 0, sizeof(*st));
	for (j = 0; j < NSMALL; j++)
		st->bins[j].size = small[j];
	st->nbins = NSMALL;
	for (j = 0; j < sizeof(large) / sizeof(large[0]); j++)
		st->large[j] = large[j];
	st->nlarge = (unsigned)(sizeof(large) / sizeof(large[0]));
	st->unbias = unbias;
	st->lg_sample = lg;
	frag_stats_derive(st);
}

/* What jemalloc 5.3 dumps for @p n1 objects of @p s1 and @p n2 of @p s2
 * (prof_unbias_map_init, then prof_do_unbias), at lg @p lg. */
static void dumped(size_t n1, size_t s1, size_t n2, size_t s2, size_t lg,
    uint64_t *objs, uint64_t *bytes)
{
	double R = ldexp(1.0, (int)lg), c = 0, s = 0, d, x, y;
	size_t sz[2] = {s1, s2}, n[2] = {n1, n2}, k;

	for (k = 0; k < 2; k++) {
		d = 1.0 - exp(-(double)sz[k] / R);
		c += (double)n[k] * round(8.0 / d);
		s += (double)n[k] * round((double)sz[k] / d);
	}
	c /= 8.0;
	x = s / c;
	y = s * (1.0 - exp(-x / R));
	*objs = (uint64_t)round(y / x);
	*bytes = (uint64_t)round(y);
}

/* Without unbiasing: the mean is exactly a class's size, or mixed. */
static void test_exact(void **state)
{
	struct frag_stats st;

	(void)state;
	stats(&st, 0, 19);
	assert_int_equal(frag_class_of(&st, 10, 3200), BIN_320);
	assert_int_equal(frag_class_of(&st, 1, 48), BIN_48);
	assert_int_equal(frag_class_of(&st, 2, 2 * 20480), (int)NSMALL + 1);
	assert_int_equal(frag_class_of(&st, 0, 0), FRAG_EMPTY);
	/* Half 320, half 384: a mean of 352 is no class, and not 320. */
	assert_int_equal(frag_class_of(&st, 10, 5 * 320 + 5 * 384), FRAG_MIXED);
	/* A mean that is not whole, or that is a size but no class's. */
	assert_int_equal(frag_class_of(&st, 3, 961), FRAG_MIXED);
	assert_int_equal(frag_class_of(&st, 2, 2 * 300), FRAG_MIXED);
}

/* jemalloc 5.3's unbiasing: the mean a class shows, solved back. */
static void test_unbias_mean(void **state)
{
	(void)state;
	/* 320 B at lg 12: 4258 B per 106/8 objects. */
	assert_true(
	    fabs(frag_dumped_mean(320, 12, 8, 1) - 4258.0 * 8 / 106) < 1e-9);
	assert_true(frag_dumped_mean(320, 12, 8, 0) == 320.0);
	/* At the default rate the mean is the size within a few parts in a
	 * thousand. */
	assert_true(fabs(frag_dumped_mean(48, 19, 8, 1) - 48) < 0.05);
}

/* With unbiasing: a real dump's stacks (frag_host at lg 12: 1479 objects
 * in 475202 B of 320 B, 485 in 23269 B of 48 B), and built ones. */
static void test_unbias(void **state)
{
	struct frag_stats st;
	uint64_t o, b;

	(void)state;
	stats(&st, 1, 12);
	assert_int_equal(frag_class_of(&st, 1479, 475202), BIN_320);
	assert_int_equal(frag_class_of(&st, 485, 23269), BIN_48);
	dumped(20000, 320, 0, 384, 12, &o, &b);
	assert_int_equal(frag_class_of(&st, o, b), BIN_320);
	dumped(300, 384, 0, 320, 12, &o, &b);
	assert_int_equal(frag_class_of(&st, o, b), BIN_384);
	/* Two sizes in one stack: mixed, whatever their weights. */
	dumped(500, 320, 500, 384, 12, &o, &b);
	assert_int_equal(frag_class_of(&st, o, b), FRAG_MIXED);
	dumped(900, 320, 100, 384, 12, &o, &b);
	assert_int_equal(frag_class_of(&st, o, b), FRAG_MIXED);
	/* A sample or two cannot tell 320 from its neighbours. */
	dumped(2, 320, 0, 384, 12, &o, &b);
	assert_int_equal(frag_class_of(&st, o, b), FRAG_MIXED);
	/* At the default rate too. */
	stats(&st, 1, 19);
	dumped(40, 320, 0, 384, 19, &o, &b);
	assert_int_equal(frag_class_of(&st, o, b), BIN_320);
	dumped(40, 320, 40, 384, 19, &o, &b);
	assert_int_equal(frag_class_of(&st, o, b), FRAG_MIXED);
}

/* Free regions: (curslabs x nregs - curregs) x size, summed. */
static void test_derive(void **state)
{
	struct frag_stats st;

	(void)state;
	stats(&st, 1, 12);
	st.bins[BIN_320].nregs = 64;
	st.bins[BIN_320].curslabs = 1446;
	st.bins[BIN_320].curregs = 18621;
	st.bins[BIN_48].nregs = 256;
	st.bins[BIN_48].curslabs = 155;
	st.bins[BIN_48].curregs = 155 * 256; /* full */
	frag_stats_derive(&st);
	assert_int_equal(st.bins[BIN_320].free_regs, 1446 * 64 - 18621);
	assert_int_equal(st.bins[BIN_320].free_bytes,
	    (1446 * 64 - 18621) * 320);
	assert_int_equal(st.bins[BIN_48].free_bytes, 0);
	assert_int_equal(st.small_free, (1446 * 64 - 18621) * 320);
	/* Sampled requests of 300 B on average: 20 B in each live region. */
	st.bins[BIN_320].req_count = 1000;
	st.bins[BIN_320].req_sum = 300000;
	frag_stats_derive(&st);
	assert_int_equal(st.bins[BIN_320].internal, 18621 * 20);
	assert_int_equal(st.bins[BIN_48].internal, 0);
}

/* What each address is called: 0x3 is site_a again, from another
 * caller; 0x8 is the allocator's entry point, cut as the views cut it. */
static const char *const names[] = {NULL, "main", "site_a", "site_a", "d",
    "site_c", "mixed_site", "small", "malloc"};

SYM_TABLE(names);

/* heap_v2/0: no unsampling, the test's own figures. 320 B: site_a 10
 * objects by main and 5 by d, site_c 5; a stack of 320 and 384 (mixed);
 * 48 B in full slabs. */
static const char profile[] = "heap_v2/0\n"
                              "@ 0x2 0x1\n  t*: 10: 3200 [0: 0]\n"
                              "@ 0x3 0x4 0x1\n  t*: 5: 1600 [0: 0]\n"
                              "@ 0x5 0x1\n  t*: 5: 1600 [0: 0]\n"
                              "@ 0x6 0x1\n  t*: 2: 704 [0: 0]\n"
                              "@ 0x7 0x1\n  t*: 4: 192 [0: 0]\n"
                              "\nMAPPED_LIBRARIES:\n";

/* @p render's output for @p r as a string (free it). */
static char *rendered(int (*render)(FILE *, const struct frag_report *),
    const struct frag_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	assert_non_null(out = open_memstream(&buf, &len));
	assert_int_equal(render(out, r), 0);
	fclose(out);
	return buf;
}

/* The worst class's sites, their shares of its live bytes and of its
 * free regions, the mixed stack apart, in every form. */
static void test_attribute(void **state)
{
	struct heap_profile hp;
	struct frag_report r;
	struct frag_stats st;
	char err[256], *t;

	(void)state;
	stats(&st, 0, 0);
	st.bins[BIN_320].nregs = 64;
	st.bins[BIN_320].curslabs = 10;
	st.bins[BIN_320].curregs = 20; /* 620 regions free */
	st.bins[BIN_48].nregs = 256;
	st.bins[BIN_48].curslabs = 1;
	st.bins[BIN_48].curregs = 256; /* full */
	frag_stats_derive(&st);
	assert_int_equal(heapprof_parse(profile, strlen(profile), &hp, err,
	                     sizeof(err)),
	    0);
	assert_int_equal(frag_attribute(&st, &hp, NULL, NULL, &r), 0);
	assert_int_equal(r.nworst, 1);
	assert_int_equal(r.worst[0].bin, BIN_320);
	assert_int_equal(r.worst[0].nsites, 2);
	assert_string_equal(r.worst[0].sites[0].name, "site_a");
	assert_true(r.worst[0].sites[0].bytes == 4800);
	assert_string_equal(r.worst[0].sites[0].stack, "main;site_a");
	assert_string_equal(r.worst[0].sites[1].name, "site_c");
	assert_true(r.worst[0].attributed == 6400);
	assert_int_equal(r.mixed_stacks, 1);
	assert_true(r.mixed_bytes == 704);

	t = rendered(frag_render_text, &r);
	assert_non_null(strstr(t, "   75.0% "));
	assert_non_null(strstr(t, "  site_a\n    main;site_a\n"));
	assert_non_null(strstr(t, "sampling error"));
	/* The mixed stack only under "mixed", with its mean. */
	assert_non_null(strstr(t, "\nmixed: 1 stacks with 704 B live"));
	assert_true(strstr(t, "mixed_site") > strstr(t, "\nmixed: "));
	assert_non_null(strstr(t, "  mean 352 B  mixed_site\n"));
	free(t);
	t = rendered(frag_render_json, &r);
	assert_non_null(strstr(t,
	    "\"site\":\"site_a\",\"bytes\":4800,"
	    "\"objects\":15,\"share\":0.7500,"
	    "\"free_bytes\":148800,"));
	assert_non_null(strstr(t, "\"mixed_bytes\":704,\"mixed_stacks\":1"));
	assert_non_null(strstr(t,
	    "\"mixed_sites\":[{\"site\":\"mixed_site\","
	    "\"bytes\":704,\"objects\":2,"));
	free(t);
	/* Each stack weighted by its share of the 198400 free bytes. */
	t = rendered(frag_render_flame, &r);
	assert_string_equal(t,
	    "size class 320 B;main;site_a 99200\n"
	    "size class 320 B;main;d;site_a 49600\n"
	    "size class 320 B;main;site_c 49600\n");
	free(t);
	frag_report_free(&r);
	heapprof_free(&hp);
}

/* prof_recent's records for the profile above, oldest first as jemalloc
 * keeps them; jemalloc's clock read at 10 s. */
static uint64_t recent_pcs[] = {
    0x2, 0x1,      /* 0: site_a by main */
    0x2, 0x1,      /* 1: the same */
    0x2, 0x1,      /* 2: the same, freed */
    0x2, 0x1,      /* 3: the same frames, 384 B */
    0x3, 0x4, 0x1, /* 4: site_a by d */
    0x8, 0x2, 0x1, /* 5: site_a by main, through malloc (cut) */
    0x5, 0x4, 0x1, /* 6: site_c by d: no stack of the profile */
    0x5, 0x1,      /* 7: site_c, 48 B: not a worst class */
};

/* A record of @p us B allocated at @p t s, freed or not, its frames
 * recent_pcs[@p at .. @p at + @p len). */
#define REC(us, t, freed, at, len)                                             \
	{                                                                      \
		(us) - 4, (us), (freed), 0,                                    \
		    {0, (uint64_t)(t)*1000000000u, "", (at), (len)},           \
		{                                                              \
			0, 0, "", 0, 0                                         \
		}                                                              \
	}

static struct recent_rec recent_recs[] =
    {REC(320, 2, 1, 4, 2), /* freed first: the oldest, never counted */
        REC(320, 5, 0, 0, 2), REC(320, 7, 0, 2, 2), REC(384, 1, 0, 6, 2),
        REC(320, 4, 0, 8, 3), REC(320, 6, 0, 11, 3), REC(320, 3, 0, 14, 3),
        REC(48, 1, 0, 17, 2)};

/* @p st's prof_recent: the records above (not owned: never freed). */
static void recent_in(struct frag_stats *st, size_t n)
{
	st->recent.state = FRAG_RECENT_OK;
	st->recent.rec = (struct recent){.max = 64,
	    .rec = recent_recs,
	    .n = n,
	    .pcs = recent_pcs,
	    .npcs = sizeof(recent_pcs) / sizeof(recent_pcs[0])};
	st->recent.now_ns = 10000000000u;
}

/* @p t without its line holding @p needle (whole, with its newline). */
static void cut_line(char *t, const char *needle)
{
	char *a = strstr(t, needle), *e;

	assert_non_null(a);
	while (a > t && a[-1] != '\n')
		a--;
	e = strchr(a, '\n');
	assert_non_null(e);
	/* The blank line before it goes with it. */
	if (a > t + 1 && a[-2] == '\n')
		a--;
	memmove(a, e + 1, strlen(e + 1) + 1);
}

/* prof_recent's live records matched to the sites by their frames past
 * the allocator's and their usize: freed records, records of another
 * size and records of other frames are not a site's; the oldest one's
 * age beside the site; the body as before but for one line otherwise. */
static void test_recent(void **state)
{
	struct heap_profile hp;
	struct frag_report r;
	struct frag_stats st;
	char err[256], *t, *before;

	(void)state;
	stats(&st, 0, 0);
	st.bins[BIN_320].nregs = 64;
	st.bins[BIN_320].curslabs = 10;
	st.bins[BIN_320].curregs = 20;
	frag_stats_derive(&st);
	assert_int_equal(heapprof_parse(profile, strlen(profile), &hp, err,
	                     sizeof(err)),
	    0);
	/* Not read: the body as it always was. */
	assert_int_equal(frag_attribute(&st, &hp, NULL, NULL, &r), 0);
	before = rendered(frag_render_text, &r);
	frag_report_free(&r);

	recent_in(&st, sizeof(recent_recs) / sizeof(recent_recs[0]));
	assert_int_equal(frag_attribute(&st, &hp, NULL, NULL, &r), 0);
	assert_string_equal(r.worst[0].sites[0].name, "site_a");
	/* 1, 2, 4 and 5 (through malloc); 0 is freed, 3 is 384 B. */
	assert_int_equal(r.worst[0].sites[0].recent_live, 4);
	assert_true(r.worst[0].sites[0].recent_oldest_ns == 4000000000u);
	assert_string_equal(r.worst[0].sites[1].name, "site_c");
	assert_int_equal(r.worst[0].sites[1].recent_live, 0); /* 6: frames */
	assert_int_equal(r.recent_matched, 4);
	t = rendered(frag_render_text, &r);
	assert_non_null(strstr(t,
	    "  site_a  oldest live sampled object 6.0 s old (prof_recent, 4 "
	    "of its records)\n    main;site_a\n"));
	assert_non_null(strstr(t, "  site_c\n    main;site_c\n"));
	assert_non_null(strstr(t,
	    "\nprof_recent keeps the last 64 sampled allocations "
	    "(recent_max): older objects, which are the ones that pin slabs, "
	    "are not in it (8 records read, 4 live ones of the sites "
	    "above)\n"));
	free(t);
	t = rendered(frag_render_json, &r);
	assert_non_null(strstr(t,
	    "\"stack\":\"main;site_a\",\"recent\":{\"live\":4,"
	    "\"oldest_age_s\":6.000}}"));
	assert_non_null(
	    strstr(t, "\"stack\":\"main;site_c\",\"recent\":null}"));
	assert_non_null(strstr(t,
	    "\"prof_stats\":false,\"recent\":{\"recent_max\":64,"
	    "\"records\":8,\"matched\":4,\"cut\":false,\"error\":null},"
	    "\"classes\":["));
	free(t);
	/* The flame graph is the waste's alone. */
	t = rendered(frag_render_flame, &r);
	assert_non_null(strstr(t, "size class 320 B;main;site_a 99200\n"));
	free(t);
	frag_report_free(&r);

	/* Only the freed record: nothing to add but the one line. */
	recent_in(&st, 1);
	assert_int_equal(frag_attribute(&st, &hp, NULL, NULL, &r), 0);
	assert_int_equal(r.recent_matched, 0);
	t = rendered(frag_render_text, &r);
	cut_line(t, "prof_recent keeps the last 64");
	assert_string_equal(t, before);
	free(t);
	frag_report_free(&r);

	/* recent_max 0, and a read that failed: said once, no ages. */
	st.recent.rec.max = 0;
	assert_int_equal(frag_attribute(&st, &hp, NULL, NULL, &r), 0);
	t = rendered(frag_render_text, &r);
	cut_line(t,
	    "prof_recent keeps no sampled allocations (recent_max "
	    "is 0): no ages for the sites");
	assert_string_equal(t, before);
	free(t);
	frag_report_free(&r);
	st.recent.state = FRAG_RECENT_FAILED;
	snprintf(st.recent.why, sizeof(st.recent.why), "EPERM");
	assert_int_equal(frag_attribute(&st, &hp, NULL, NULL, &r), 0);
	t = rendered(frag_render_text, &r);
	cut_line(t, "prof_recent could not be read (EPERM): no ages");
	assert_string_equal(t, before);
	free(t);
	t = rendered(frag_render_json, &r);
	assert_non_null(strstr(t,
	    "\"recent\":{\"recent_max\":null,"
	    "\"records\":0,\"matched\":0,\"cut\":false,"
	    "\"error\":\"EPERM\"}"));
	free(t);
	frag_report_free(&r);
	free(before);
	heapprof_free(&hp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exact),
	    cmocka_unit_test(test_unbias_mean),
	    cmocka_unit_test(test_unbias),
	    cmocka_unit_test(test_derive),
	    cmocka_unit_test(test_attribute),
	    cmocka_unit_test(test_recent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * prof/trend.c on hand-built series: a leak that grows in
 * every interval is the one suspect, with its rate; a cache that filled
 * once, churn going up and down and a function that grew and then shrank
 * are not; fewer than 3 points answer nothing; an index written is read
 * back the same, and a broken or foreign index is one error line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "trend.h"

/* A point at @p t of @p n functions "name", bytes. */
static void point(struct trend *t, double when, size_t n, ...)
{
	struct trend_point p = {0};
	char name[32];
	va_list ap;
	size_t i;

	snprintf(name, sizeof(name), "d.%.0f.heap", when);
	p.name = strdup(name);
	p.t = when;
	p.fn = calloc(n, sizeof(*p.fn));
	va_start(ap, n);
	for (i = 0; i < n; i++) {
		p.fn[i].name = strdup(va_arg(ap, const char *));
		p.fn[i].bytes = va_arg(ap, double);
		p.fn[i].stack = strdup("main;f");
		p.total += p.fn[i].bytes;
	}
	va_end(ap);
	p.nfn = n;
	assert_int_equal(trend_add(t, &p), 0);
}

/* Eleven points 2 s apart: leak +1000 B each, cache full after the
 * first interval, churn up and down, a burst that grew then shrank. */
static void test_leak_not_cache_nor_churn(void **state)
{
	struct trend t = {0};
	int i;

	(void)state;
	for (i = 10; i >= 0; i--) /* out of order: analyze sorts */
		point(&t, 100 + 2 * i, 4, "leak", 5000.0 + 1000 * i, "cache",
		    i == 0 ? 1000.0 : 900000.0, "churn",
		    i % 2 ? 50000.0 : 20000.0, "burst",
		    i < 6 ? 10000.0 * i : 60000.0 - 5000 * (i - 5));
	assert_int_equal(trend_analyze(&t), 0);
	assert_int_equal(t.n, 11);
	assert_true(t.pt[0].t < t.pt[10].t);
	assert_int_equal(t.considered, 4);
	assert_int_equal(t.ns, 1);
	assert_string_equal(t.s[0].name, "leak");
	assert_int_equal(t.s[0].grown, 10);
	assert_int_equal(t.s[0].intervals, 10);
	assert_true(t.s[0].rate > 29999 && t.s[0].rate < 30001); /* B/min */
	assert_true(t.s[0].growth == 10000);
	assert_true(t.s[0].now == 15000);
	trend_free(&t);
}

/* A suspect ranks by rate; one that grew in 8 of 10 intervals is one, in
 * 7 of 10 is not. */
static void test_nearly_every_interval(void **state)
{
	struct trend t = {0};
	int i;

	(void)state;
	for (i = 0; i <= 10; i++)
		point(&t, 2 * i, 3, "slow", 100.0 * i, "eight",
		    1000.0 * (i < 9 ? i : 8), "seven",
		    1000.0 * (i < 8 ? i : 7));
	assert_int_equal(trend_analyze(&t), 0);
	assert_int_equal(t.ns, 2);
	assert_string_equal(t.s[0].name, "eight");
	assert_string_equal(t.s[1].name, "slow");
	trend_free(&t);
}

/* Under 3 points: no suspect, and the line that says why. */
static void test_too_few(void **state)
{
	struct trend t = {0};
	char buf[256];

	(void)state;
	point(&t, 1, 1, "leak", 1.0);
	point(&t, 2, 1, "leak", 2.0);
	assert_int_equal(trend_analyze(&t), 0);
	assert_int_equal(t.ns, 0);
	assert_non_null(strstr(trend_too_few(&t, buf, sizeof(buf)),
	    "at least 3 dumps of one process, and there are 2"));
	trend_free(&t);
}

/* An index written and read back: the same point. */
static void test_index_roundtrip(void **state)
{
	struct trend t = {0};
	struct trend_point p;
	char err[256];
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	point(&t, 1795563738.5, 2, "a b\tc", 12345.0, "d", 7.0);
	assert_int_equal(trend_index_write(f, &t.pt[0]), 0);
	fflush(f);
	assert_int_equal(trend_index_read(fileno(f), "x.heap", &p, err,
	                     sizeof(err)),
	    0);
	assert_int_equal(p.nfn, 2);
	assert_true(p.t > 1795563738.4 && p.t < 1795563738.6);
	assert_string_equal(p.fn[0].name, "a b c"); /* no tab in a field */
	assert_true(p.fn[0].bytes == 12345);
	assert_string_equal(p.fn[1].stack, "main;f");
	assert_string_equal(p.name, "x.heap");
	trend_point_free(&p);
	fclose(f);
	trend_free(&t);
}

/* @p text as an index: the error, or "" when it reads. */
static const char *read_text(const char *text, char *err, size_t len)
{
	struct trend_point p;
	FILE *f = tmpfile();
	int r;

	fputs(text, f);
	fflush(f);
	err[0] = '\0';
	r = trend_index_read(fileno(f), "x.heap", &p, err, len);
	fclose(f);
	if (r == 0)
		trend_point_free(&p);
	return err;
}

/* What is no index is one line, never a crash. */
static void test_index_hostile(void **state)
{
	char err[256], *big;
	size_t n = (TREND_INDEX_MAX) + 10;

	(void)state;
	assert_string_equal(read_text("", err, sizeof(err)),
	    "x.heap.trend: not an index");
	assert_string_equal(read_text("heap_v2/524288\n", err, sizeof(err)),
	    "x.heap.trend: not an index");
	assert_string_equal(read_text("jm4lw-trend 1\ntime 1\n12\tf", err,
	                        sizeof(err)),
	    "x.heap.trend: cut short");
	assert_string_equal(read_text("jm4lw-trend 1\nnonsense\n", err,
	                        sizeof(err)),
	    "x.heap.trend: line 2 is bad");
	assert_string_equal(read_text("jm4lw-trend 1\n1e999\tf\ts\n", err,
	                        sizeof(err)),
	    "x.heap.trend: line 2 is bad");
	assert_string_equal(read_text("jm4lw-trend 1\ntime 5\ntotal 3\n3\tf\t\n",
	                        err, sizeof(err)),
	    "");
	/* Numbers no dump has, which made JSON with NaN
	 * in it and a time_t out of NaN, are a bad index (then made again
	 * from its dump); so is one without its time or total. */
	{
		static const char *const bad[] = {"time nan\ntotal 1\n",
		    "time inf\ntotal 1\n", "time 1e300\ntotal 1\n",
		    "time -5\ntotal 1\n", "time 5x\ntotal 1\n",
		    "time \ntotal 1\n", "time 5\ntotal nan\n",
		    "time 5\ntotal -inf\n", "time 5\ntotal 1e300\n",
		    "time 5\ntime 6\ntotal 1\n", "time 5\ntotal 1\nnan\tf\t\n",
		    "time 5\ntotal 1\n-3\tf\t\n"};
		char text[128];
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(text, sizeof(text), "jm4lw-trend 1\n%s",
			    bad[i]);
			read_text(text, err, sizeof(err));
			if (strstr(err, "is bad") == NULL)
				fail_msg("index %zu read: \"%s\"", i, err);
		}
	}
	assert_string_equal(read_text("jm4lw-trend 1\ntotal 3\n", err,
	                        sizeof(err)),
	    "x.heap.trend: no time line");
	assert_string_equal(read_text("jm4lw-trend 1\ntime 3\n", err,
	                        sizeof(err)),
	    "x.heap.trend: no total line");
	big = malloc(n + 1);
	memset(big, 'a', n);
	memcpy(big, "jm4lw-trend 1\n", 14);
	big[n] = '\0';
	assert_string_equal(read_text(big, err, sizeof(err)),
	    "x.heap.trend: too big");
	free(big);
}

/* lib/json.c's string writer: escapes, valid UTF-8 through, anything
 * else as U+FFFD (names once went into JSON raw). */
static void test_json_string(void **state)
{
	static const struct {
		const char *in, *out;
	} c[] = {
	    {"", "\"\""},
	    {"a\"b\\c", "\"a\\\"b\\\\c\""},
	    {"\n\t\r\x01\x1f\x7f", "\"\\n\\t\\r\\u0001\\u001f\x7f\""},
	    {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	        "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
	    {"a\xff"
	     "b",
	        "\"a\\ufffdb\""},
	    {"\x80", "\"\\ufffd\""},
	    {"\xc0\xaf", "\"\\ufffd\\ufffd\""},            /* overlong '/' */
	    {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""}, /* surrogate */
	    {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},
	    {"\xe2\x82", "\"\\ufffd\\ufffd\""}, /* cut short */
	    {"x\xe2\x80\xa8"
	     "y",
	        "\"x\\u2028y\""},
	};
	struct out o;
	char *buf;
	size_t i, len;
	FILE *f;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		buf = NULL;
		f = open_memstream(&buf, &len);
		o = out_file(f);
		json_string(&o, c[i].in);
		fclose(f);
		assert_string_equal(buf, c[i].out);
		free(buf);
	}
}

/* Text and JSON say the counts and name the suspect. */
static void test_render(void **state)
{
	struct trend t = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		point(&t, 60.0 * i, 1, "le\"ak", 1048576.0 * i);
	assert_int_equal(trend_analyze(&t), 0);
	f = open_memstream(&buf, &len);
	assert_int_equal(trend_render_text(f, &t), 0);
	fclose(f);
	assert_non_null(strstr(buf, "# 1 leak suspects over 4 dumps, 180.0 s"));
	assert_non_null(strstr(buf, "1.0 MiB      3.0 MiB     3/3"));
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(trend_render_json(f, &t), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"function\": \"le\\\"ak\""));
	assert_non_null(strstr(buf, "\"rate_per_min\": 1048576"));
	assert_non_null(
	    strstr(buf, "\"series\": [0, 1048576, 2097152, 3145728]"));
	free(buf);
	trend_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_leak_not_cache_nor_churn),
	    cmocka_unit_test(test_nearly_every_interval),
	    cmocka_unit_test(test_too_few),
	    cmocka_unit_test(test_index_roundtrip),
	    cmocka_unit_test(test_index_hostile),
	    cmocka_unit_test(test_json_string),
	    cmocka_unit_test(test_render),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

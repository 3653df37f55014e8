/*
 * Unit tests of prof/heapprof.c on small profiles written here: the
 * shapes jemalloc writes, jeprof's unsampling to the last digit, the
 * lines it must skip, and one clear error for each broken input.
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

#include "heapprof.h"
#include "render_threads.h"

#define MAPS                                                                   \
	"\nMAPPED_LIBRARIES:\n"                                                \
	"55d0c0a00000-55d0c0a20000 r-xp 00001000 fd:01 1234 /usr/bin/x\n"      \
	"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"

static struct heap_profile hp;
static char err[256];

/* Parse @p text; the result in hp and err. */
static int parse(const char *text)
{
	return heapprof_parse(text, strlen(text), &hp, err, sizeof(err));
}

/* A profile as jemalloc writes one: header totals, per-thread lines,
 * two stacks, the maps. */
static void test_reads_stacks_and_maps(void **state)
{
	(void)state;
	assert_int_equal(parse("heap_v2/524288\n"
	                       "  t*: 3: 1536 [0: 0]\n"
	                       "  t0: 3: 1536 [0: 0]\n"
	                       "@ 0x1 0x2 0x3\n"
	                       "  t*: 2: 1024 [5: 2560]\n"
	                       "  t0: 2: 1024 [5: 2560]\n"
	                       "@ 0xabcdef\n"
	                       "  t*: 1: 512 [1: 512]\n" MAPS),
	    0);
	assert_int_equal(hp.period, 524288);
	assert_int_equal(hp.nstacks, 2);
	assert_int_equal(hp.stacks[0].depth, 3);
	assert_int_equal(hp.stacks[0].pc[2], 3);
	assert_int_equal(hp.stacks[0].objs, 2);
	assert_int_equal(hp.stacks[0].bytes, 1024);
	assert_int_equal(hp.stacks[0].accum_objs, 5);
	assert_int_equal(hp.stacks[0].accum_bytes, 2560);
	assert_int_equal(hp.stacks[1].pc[0], 0xabcdef);
	assert_int_equal(hp.nmaps, 2);
	assert_int_equal(hp.maps[0].start, 0x55d0c0a00000);
	assert_int_equal(hp.maps[0].offset, 0x1000);
	assert_true(hp.maps[0].exec);
	assert_string_equal(hp.maps[0].path, "/usr/bin/x");
	assert_false(hp.maps[1].exec);
	assert_string_equal(hp.maps[1].path, "");
	heapprof_free(&hp);
}

/* jeprof's formula per stack: scale = 1 / (1 - exp(-(B/N)/period)). */
static void test_unsamples_as_jeprof(void **state)
{
	double s0 = 1 / (1 - exp(-(1024.0 / 2) / 524288));
	double s1 = 1 / (1 - exp(-(1048576.0 / 1) / 524288));

	(void)state;
	assert_int_equal(parse("heap_v2/524288\n"
	                       "@ 0x1\n  t*: 2: 1024 [0: 0]\n"
	                       "@ 0x2\n  t*: 1: 1048576 [0: 0]\n" MAPS),
	    0);
	assert_true(fabs(hp.stacks[0].u_bytes - 1024 * s0) < 1e-6);
	assert_true(fabs(hp.stacks[0].u_objs - 2 * s0) < 1e-9);
	assert_true(fabs(hp.stacks[1].u_bytes - 1048576 * s1) < 1e-6);
	/* Per stack, never on sums: the sum of the two, not a scaled sum. */
	assert_true(fabs(hp.u_bytes - (1024 * s0 + 1048576 * s1)) < 1e-6);
	assert_true(heapprof_scale(0, 0, 524288) == 1);
	assert_true(heapprof_scale(1, 4096, 0) == 1);
	/* Found by fuzz_heapprof: objects of no bytes, once infinite. */
	assert_true(heapprof_scale(2, 0, 524288) == 1);
	heapprof_free(&hp);
}

/* What jemalloc forks and editors add is skipped; CRLF is fine. */
static void test_skips_unknown_lines(void **state)
{
	(void)state;
	assert_int_equal(parse("heap_v2/4096\r\n"
	                       "@ 0x10 0x20\r\n"
	                       "  f: 0x1 0x2\r\n"
	                       "\r\n"
	                       "  t*: 1: 64 [0: 0]\r\n"
	                       "  t7: 1: 64 [0: 0]\r\n"
	                       "whatever this is\r\n"
	                       "\r\nMAPPED_LIBRARIES:\r\n"),
	    0);
	assert_int_equal(hp.nstacks, 1);
	assert_int_equal(hp.stacks[0].bytes, 64);
	assert_int_equal(hp.nmaps, 0);
	heapprof_free(&hp);
}

/* A stack with no t* line counts nothing (jeprof adds it nowhere). */
static void test_stack_without_counts(void **state)
{
	(void)state;
	assert_int_equal(parse("heap_v2/4096\n@ 0x1\n@ 0x2\n"
	                       "  t*: 1: 8 [0: 0]\n" MAPS),
	    0);
	assert_int_equal(hp.nstacks, 2);
	assert_int_equal(hp.stacks[0].bytes, 0);
	assert_int_equal(hp.stacks[1].bytes, 8);
	heapprof_free(&hp);
}

/* jemalloc 5.3 writes a thread's name after the header's
 * tN: counts (prof_sys_thread_name, thread.prof.name); jeprof reads such
 * a dump, and so must we, keeping each thread's name and each stack's
 * tN: lines. Names hold blanks and any byte but a newline. */
static void test_thread_names(void **state)
{
	(void)state;
	assert_int_equal(parse("heap_v2/524288\n"
	                       "  t*: 3: 1536 [0: 0]\n"
	                       "  t0: 2: 1024 [0: 0] redis-server\n"
	                       "  t1: 1: 512 [0: 0] io thr\xe9"
	                       "ad  2\n"
	                       "  t7: 0: 0 [0: 0]\n"
	                       "  t9: 0: 0 [0: 0]   \n"
	                       "@ 0x1 0x2\n"
	                       "  t*: 3: 1536 [3: 1536]\n"
	                       "  t0: 2: 1024 [2: 1024]\n"
	                       "  t1: 1: 512 [1: 512]\n"
	                       "@ 0x3\n"
	                       "  t*: 1: 8 [1: 8]\n"
	                       "@ 0x4\n"
	                       "  t*: 1: 8 [1: 8]\n"
	                       "  t7: 1: 8 [1: 8]\n" MAPS),
	    0);
	assert_int_equal(hp.nthreads, 4);
	assert_int_equal(hp.threads[0].c.tid, 0);
	assert_int_equal(hp.threads[0].c.bytes, 1024);
	assert_string_equal(hp.threads[0].name, "redis-server");
	assert_int_equal(hp.threads[1].c.tid, 1);
	assert_string_equal(hp.threads[1].name,
	    "io thr\xe9"
	    "ad  2");
	assert_int_equal(hp.threads[2].c.tid, 7);
	assert_null(hp.threads[2].name);
	assert_null(hp.threads[3].name); /* trailing blanks: none */
	assert_int_equal(hp.nstacks, 3);
	assert_int_equal(hp.stacks[0].bytes, 1536);
	assert_int_equal(hp.stacks[0].ntc, 2);
	assert_int_equal(hp.stacks[0].tc[1].tid, 1);
	assert_int_equal(hp.stacks[0].tc[1].objs, 1);
	assert_int_equal(hp.stacks[0].tc[1].accum_bytes, 512);
	assert_int_equal(hp.stacks[1].ntc, 0);
	assert_int_equal(hp.stacks[2].ntc, 1);
	assert_int_equal(hp.stacks[2].tc[0].tid, 7);
	assert_int_equal(hp.ntcounts, 3);
	heapprof_free(&hp);
}

/* Each broken input: -1, one line, the profile left empty. */
static void test_errors(void **state)
{
	static const struct {
		const char *in, *why;
	} bad[] = {
	    {"", "not a jemalloc heap profile (no heap_v2/ header)"},
	    {"heap profile: 1: 2 [3: 4]\n",
	        "not a jemalloc heap profile (no heap_v2/ header)"},
	    {"heap_v2/\n" MAPS,
	        "line 1: bad sampling period in the heap_v2 header"},
	    {"heap_v2/12x\n" MAPS,
	        "line 1: bad sampling period in the heap_v2 header"},
	    {"heap_v2/4096\n@ 0x1\n  t*: 1: 8 [0: 0]\n",
	        "the profile is cut short (no MAPPED_LIBRARIES section at "
	        "its end)"},
	    {"heap_v2/4096\n@ 0x1 0x",
	        "the profile is cut short (it ends inside a line, with no "
	        "MAPPED_LIBRARIES section)"},
	    {"heap_v2/4096\n@ 0x1\n  t*: 1: 8 [0: ",
	        "the profile is cut short (it ends inside a line, with no "
	        "MAPPED_LIBRARIES section)"},
	    {"heap_v2/4096\n@ 0x1 zz\n" MAPS,
	        "line 2: a stack's frame is not an address"},
	    {"heap_v2/4096\n@\n" MAPS, "line 2: a stack with no frame"},
	    {"heap_v2/4096\n@ 0x11112222333344445\n" MAPS,
	        "line 2: a stack's frame is not an address"},
	    {"heap_v2/4096\n@ 0x1\n  t*: 1: 99999999999999999999 [0: 0]\n" MAPS,
	        "line 3: bad counts (want N: BYTES [N: BYTES])"},
	    {"heap_v2/4096\n@ 0x1\n  t*: 1: 8 [0: 0] x\n" MAPS,
	        "line 3: bad counts (junk after ])"},
	    {"heap_v2/4096\n@ 0x1\n  t*: 1 8\n" MAPS,
	        "line 3: bad counts (want N: BYTES [N: BYTES])"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (parse(bad[i].in) != -1)
			fail_msg("case %zu parsed", i);
		assert_string_equal(err, bad[i].why);
		assert_null(hp.stacks);
		assert_int_equal(hp.nstacks, 0);
	}
}

/* A file that is not there, and a directory. */
static void test_load_errors(void **state)
{
	(void)state;
	assert_int_equal(heapprof_load("/nonexistent/x.heap", &hp, err,
	                     sizeof(err)),
	    -1);
	assert_string_equal(err,
	    "/nonexistent/x.heap: No such file or directory");
	assert_int_equal(heapprof_load("/", &hp, err, sizeof(err)), -1);
	assert_string_equal(err, "/: not a regular file");
}

/* The heap by thread (prof/render_threads.c): each thread's part of a
 * stack unsampled with the stack's scale, the threads named from the
 * header, one that ended (no header line) by its number, what no tN:
 * line holds in a row of its own; the rows add up to the total, before
 * rounding and after. */
static void test_split_by_thread(void **state)
{
	struct thread_split s;
	double sc1, sc2, sc3, sb = 0, so = 0;
	long long rb = 0, ro = 0;
	size_t i;

	(void)state;
	assert_int_equal(parse("heap_v2/524288\n"
	                       "  t*: 33: 104000 [0: 0]\n"
	                       "  t0: 20: 2000 [0: 0] redis-server\n"
	                       "  t1: 10: 1000 [0: 0] io_thd_1\n"
	                       "  t2: 0: 0 [0: 0] idle\n"
	                       "@ 0x1 0x2\n"
	                       "  t*: 20: 2000 [0: 0]\n"
	                       "  t0: 15: 1500 [0: 0]\n"
	                       "  t1: 5: 500 [0: 0]\n"
	                       "@ 0x3\n"
	                       "  t*: 10: 1000 [0: 0]\n"
	                       "  t0: 5: 500 [0: 0]\n"
	                       "  t1: 4: 400 [0: 0]\n"
	                       "  t7: 1: 100 [0: 0]\n"
	                       "@ 0x4\n"
	                       "  t*: 3: 101000 [0: 0]\n"
	                       "  t1: 1: 1000 [0: 0]\n" MAPS),
	    0);
	sc1 = heapprof_scale(20, 2000, 524288);
	sc2 = heapprof_scale(10, 1000, 524288);
	sc3 = heapprof_scale(3, 101000, 524288);
	assert_int_equal(threads_split(&hp, NULL, RENDER_SPACE, 0, NULL, &s),
	    0);
	/* t2 holds nothing and is left out; the "no thread" row is not
	 * a thread. */
	assert_int_equal(s.nthreads, 3);
	assert_int_equal(s.n, 4);
	/* Biggest first: t0, t1, then what no line holds (0x4's 100000
	 * sampled bytes, at its own small scale), then t7. */
	assert_int_equal(s.rows[0].kind, THREAD_ROW_THREAD);
	assert_int_equal(s.rows[0].tid, 0);
	assert_string_equal(s.rows[0].name, "redis-server");
	assert_true(fabs(s.rows[0].u_bytes - (1500 * sc1 + 500 * sc2)) < 1e-6);
	assert_true(fabs(s.rows[0].u_objs - (15 * sc1 + 5 * sc2)) < 1e-9);
	assert_int_equal(s.rows[1].tid, 1);
	assert_string_equal(s.rows[1].name, "io_thd_1");
	assert_true(fabs(s.rows[1].u_bytes -
	                (500 * sc1 + 400 * sc2 + 1000 * sc3)) < 1e-6);
	assert_int_equal(s.rows[2].kind, THREAD_ROW_NONE);
	assert_true(fabs(s.rows[2].u_bytes - 100000 * sc3) < 1e-6);
	assert_true(fabs(s.rows[2].u_objs - 2 * sc3) < 1e-9);
	assert_int_equal(s.rows[3].tid, 7);
	assert_null(s.rows[3].name); /* ended before the dump */
	assert_true(fabs(s.rows[3].u_bytes - 100 * sc2) < 1e-6);
	for (i = 0; i < s.n; i++) {
		sb += s.rows[i].u_bytes;
		so += s.rows[i].u_objs;
		rb += s.rows[i].bytes;
		ro += s.rows[i].objs;
		/* Each rounded within 1 of its own value. */
		assert_true(
		    fabs((double)s.rows[i].bytes - s.rows[i].u_bytes) < 1);
		assert_true(
		    fabs((double)s.rows[i].objs - s.rows[i].u_objs) < 1);
	}
	assert_true(fabs(sb - hp.u_bytes) < 1e-6 * hp.u_bytes);
	assert_true(fabs(so - hp.u_objs) < 1e-6 * hp.u_objs);
	assert_int_equal(rb, s.bytes);
	assert_int_equal(ro, s.objs);
	assert_int_equal(s.bytes, llround(hp.u_bytes));
	assert_int_equal(s.objs, llround(hp.u_objs));
	threads_split_free(&s);

	/* A limit of 1: the first row, the rest as one, the sums kept;
	 * by objects, t0 still first. */
	assert_int_equal(threads_split(&hp, NULL, RENDER_OBJECTS, 1, NULL, &s),
	    0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.rows[0].tid, 0);
	assert_int_equal(s.rows[1].kind, THREAD_ROW_MORE);
	assert_int_equal(s.rows[1].nmore, 2);
	assert_int_equal(s.rows[0].bytes + s.rows[1].bytes, s.bytes);
	assert_int_equal(s.rows[0].objs + s.rows[1].objs, s.objs);
	assert_int_equal(s.bytes, llround(hp.u_bytes));
	threads_split_free(&s);
	heapprof_free(&hp);

	/* No per-thread lines at all (jemalloc before 5, a merge): one
	 * row, all of it. */
	assert_int_equal(parse("heap_v2/524288\n"
	                       "  t*: 2: 1024 [0: 0]\n"
	                       "@ 0x1\n"
	                       "  t*: 2: 1024 [0: 0]\n" MAPS),
	    0);
	assert_int_equal(threads_split(&hp, NULL, RENDER_SPACE, 0, NULL, &s),
	    0);
	assert_int_equal(s.nthreads, 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.rows[0].kind, THREAD_ROW_NONE);
	assert_int_equal(s.rows[0].bytes, s.bytes);
	threads_split_free(&s);
	heapprof_free(&hp);
}

/* The threads view is text for a terminal: a thread's name from the
 * dump (any bytes but a newline) shows its control characters, C1 and
 * bytes that are not UTF-8 as '?', UTF-8 as it is, one row each. */
static void test_threads_names_escaped(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(parse("heap_v2/524288\n"
	                       "  t*: 2: 1024 [0: 0]\n"
	                       "  t0: 1: 512 [0: 0] a\x01"
	                       "b\xff\xfe"
	                       "c\td\x1b[2J\n"
	                       "  t1: 1: 512 [0: 0] caf\xc3\xa9\xc2\x9b"
	                       "x\x7f\n"
	                       "@ 0x1\n"
	                       "  t*: 2: 1024 [0: 0]\n"
	                       "  t0: 1: 512 [0: 0]\n"
	                       "  t1: 1: 512 [0: 0]\n" MAPS),
	    0);
	assert_non_null(f = open_memstream(&buf, &len));
	assert_int_equal(render_threads(f, &hp, NULL, RENDER_SPACE, 0, NULL),
	    0);
	fclose(f);
	assert_non_null(strstr(buf, " t0 a?b??c?d?[2J\n"));
	assert_non_null(strstr(buf, " t1 caf\xc3\xa9?x?\n"));
	assert_null(strchr(buf, '\t'));
	assert_null(strchr(buf, '\x1b'));
	free(buf);
	heapprof_free(&hp);
}

/* The header's total alone, from a dump's first bytes (the peak ranks
 * jemalloc's gdump dumps by it): the t*: line, whole; anything else is
 * no total. */
static void test_header_total(void **state)
{
	static const char dump[] = "heap_v2/524288\n  t*: 7: 3145728 [0: 0]\n"
	                           "  t0: 7: 3145728 [0: 0]\n";
	uint64_t objs = 0, bytes = 0;

	(void)state;
	assert_int_equal(heapprof_header_total(dump, sizeof(dump) - 1, &objs,
	                     &bytes),
	    0);
	assert_int_equal(objs, 7);
	assert_int_equal(bytes, 3145728);
	static const char v1[] = "heap_v1/1\n  t*: 1: 2 [0: 0]\n";
	static const char thread[] = "heap_v2/1\n  t0: 1: 2 [0: 0]\n";
	/* Cut inside the count line, another format, a thread's line first. */
	assert_int_equal(heapprof_header_total(dump, 30, &objs, &bytes), -1);
	assert_int_equal(heapprof_header_total(v1, sizeof(v1) - 1, &objs,
	                     &bytes),
	    -1);
	assert_int_equal(heapprof_header_total(thread, sizeof(thread) - 1,
	                     &objs, &bytes),
	    -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reads_stacks_and_maps),
	    cmocka_unit_test(test_threads_names_escaped),
	    cmocka_unit_test(test_unsamples_as_jeprof),
	    cmocka_unit_test(test_skips_unknown_lines),
	    cmocka_unit_test(test_stack_without_counts),
	    cmocka_unit_test(test_thread_names),
	    cmocka_unit_test(test_split_by_thread),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_load_errors),
	    cmocka_unit_test(test_header_total),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

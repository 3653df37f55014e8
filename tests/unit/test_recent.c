/*
 * test_recent — jemalloc 5.3's recent allocations: prof/recent.c's parser
 * on good, freed, cut and hostile records, and job_recent end to end on
 * the fake allocator (canned alloc_dump JSON): the word's screen, the
 * route's JSON, the filters, the refusals and recent_max.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_struct.h"
#include "core.h"
#include "dumper.h"
#include "fake_jemalloc.h"
#include "job.h"
#include "reason.h"
#include "recent.h"
#include "recentjob.h"
#include "result.h"
#include "symbolize.h"

static char err[512];

/* Parse @p s whole (not cut): 0 or -1, the records in @p r. */
static int parse(const char *s, struct recent *r)
{
	err[0] = '\0';
	return recent_parse(s, strlen(s), 0, r, err, sizeof(err));
}

/* @p s must fail to parse, with @p why in its line. */
static void bad(const char *s, const char *why)
{
	struct recent r;

	if (parse(s, &r) != -1)
		fail_msg("parsed: %s", s);
	if (strstr(err, why) == NULL)
		fail_msg("error \"%s\" does not say \"%s\" for %s", err, why,
		    s);
	assert_null(r.rec); /* freed */
	assert_true(strncmp(err, "prof_recent JSON at byte ", 25) == 0);
}

#define HEAD "{\"sample_interval\":524288,\"recent_alloc_max\":64,"
#define REC(extra)                                                             \
	"{\"size\":8,\"usize\":8,\"released\":false,\"alloc_thread_uid\":1,"   \
	"\"alloc_time\":5,\"alloc_trace\":[\"0x1\"]" extra "}"
#define DOC(recs) HEAD "\"recent_alloc\":[" recs "]}"

static void test_good_and_freed(void **state)
{
	struct recent r;

	(void)state;
	assert_int_equal(parse(FAKE_RECENT, &r), 0);
	assert_int_equal(r.sample_interval, 524288);
	assert_int_equal(r.max, 64);
	assert_int_equal(r.n, 2);
	assert_false(r.cut);
	/* The freed one: both sides and their stacks. */
	assert_int_equal(r.rec[0].size, 1000);
	assert_int_equal(r.rec[0].usize, 1024);
	assert_true(r.rec[0].released);
	assert_true(r.rec[0].has_free);
	assert_int_equal(r.rec[0].alloc.tid, 1);
	assert_int_equal(r.rec[0].alloc.time_ns, 1000000000);
	assert_int_equal(r.rec[0].alloc.n, 2);
	assert_int_equal(r.pcs[r.rec[0].alloc.off], 0x10);
	assert_int_equal(r.pcs[r.rec[0].alloc.off + 1], 0x20);
	assert_int_equal(r.rec[0].free.tid, 2);
	assert_string_equal(r.rec[0].free.thread, "worker");
	assert_int_equal(r.rec[0].free.time_ns, 2000000000);
	assert_int_equal(r.rec[0].free.n, 1);
	assert_int_equal(r.pcs[r.rec[0].free.off], 0x30);
	/* The live one. */
	assert_false(r.rec[1].released);
	assert_false(r.rec[1].has_free);
	assert_string_equal(r.rec[1].alloc.thread, "main");
	recent_free(&r);

	/* Empty, unlimited, white space, an unknown key at each level, a
	 * released record whose free jemalloc did not see. */
	assert_int_equal(parse(" { \"sample_interval\" : 1 , "
	                       "\"recent_alloc_max\" : -1 , \"later\":{\"a\":"
	                       "[1,\"x\",true,{}]}, \"recent_alloc\" : [ ] } ",
	                     &r),
	    0);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.max, -1);
	recent_free(&r);
	assert_int_equal(parse(DOC(REC(",\"new\":[[1]]") "," REC(
	                           ",\"released\":true") ""),
	                     &r),
	    -1); /* released twice */
	assert_int_equal(parse(DOC("{\"size\":8,\"usize\":8,\"released\":true,"
	                           "\"alloc_thread_uid\":1,\"alloc_time\":5,"
	                           "\"alloc_trace\":[],\"new\":[[1]]}"),
	                     &r),
	    0);
	assert_int_equal(r.n, 1);
	assert_true(r.rec[0].released);
	assert_false(r.rec[0].has_free);
	assert_int_equal(r.rec[0].alloc.n, 0);
	recent_free(&r);
}

/* What jemalloc 5.3.0 really wrote (the fuzzer's seed, from a program
 * with a named thread, another thread, and frees). */
static void test_real_dump(void **state)
{
	char buf[16384];
	struct recent r;
	size_t n, i, freed = 0;
	FILE *f;

	(void)state;
	f = fopen(JM4LW_SOURCE_DIR
	    "/tests/fuzz/corpus_recent/real-freed-and-threads",
	    "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_int_equal(recent_parse(buf, n, 0, &r, err, sizeof(err)), 0);
	assert_int_equal(r.n, 11);
	assert_int_equal(r.max, 20);
	assert_int_equal(r.sample_interval, 1);
	assert_string_equal(r.rec[0].alloc.thread, "named thread");
	assert_string_equal(r.rec[10].alloc.thread, "");
	for (i = 0; i < r.n; i++) {
		freed += r.rec[i].has_free;
		assert_true(r.rec[i].alloc.n > 0);
		if (r.rec[i].has_free)
			assert_true(
			    r.rec[i].free.time_ns >= r.rec[i].alloc.time_ns);
	}
	assert_int_equal(freed, 5);
	recent_free(&r);
}

/* jemalloc writes strings unescaped: a backslash is a byte, a long name
 * is cut to what a record keeps. */
static void test_names(void **state)
{
	char doc[1024], name[300];
	struct recent r;

	(void)state;
	assert_int_equal(parse(DOC(REC(",\"alloc_thread_name\":\"a\\\"")), &r),
	    0);
	assert_string_equal(r.rec[0].alloc.thread, "a\\");
	recent_free(&r);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(doc, sizeof(doc), DOC(REC(",\"alloc_thread_name\":\"%s\"")),
	    name);
	assert_int_equal(parse(doc, &r), 0);
	assert_int_equal(strlen(r.rec[0].alloc.thread), RECENT_NAME_MAX - 1);
	recent_free(&r);
}

/* A name with quotes where jemalloc writes it (after the uid, before the
 * time; it writes them unescaped, as it got them from the kernel's comm
 * or thread.prof.name): the name runs to the quote its next keys follow,
 * for the allocation and the free alike, and the records after it read
 * as well. */
static void test_names_quoted(void **state)
{
	static const char doc[] = HEAD
	    "\"recent_alloc\":["
	    "{\"size\":8,\"usize\":8,\"released\":true,"
	    "\"alloc_thread_uid\":1,\"alloc_thread_name\":\"q\"uo\",\"te\","
	    "\"alloc_time\":5,\"alloc_trace\":[\"0x1\"],"
	    "\"dalloc_thread_uid\":2,\"dalloc_thread_name\":\"\"\\\"\","
	    "\"dalloc_time\":6,\"dalloc_trace\":[\"0x2\"]},"
	    "{\"size\":16,\"usize\":16,\"released\":false,"
	    "\"alloc_thread_uid\":3,\"alloc_thread_name\":\"io\"worker\","
	    "\"alloc_time\":7,\"alloc_trace\":[\"0x3\"]}]}";
	size_t n = strlen(doc), len, first;
	struct recent r;

	(void)state;
	assert_int_equal(parse(doc, &r), 0);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.rec[0].alloc.thread, "q\"uo\",\"te");
	assert_int_equal(r.rec[0].alloc.time_ns, 5);
	assert_true(r.rec[0].has_free);
	assert_string_equal(r.rec[0].free.thread, "\"\\\"");
	assert_int_equal(r.rec[0].free.time_ns, 6);
	assert_string_equal(r.rec[1].alloc.thread, "io\"worker");
	assert_int_equal(r.rec[1].size, 16);
	recent_free(&r);
	/* Cut anywhere (the reader's cap), a name with quotes included:
	 * "ends early", and with the cut the whole records before it. */
	first = (size_t)(strstr(doc, "]},{") - doc) + 2;
	for (len = 0; len < n; len++) {
		assert_int_equal(recent_parse(doc, len, 0, &r, err,
		                     sizeof(err)),
		    -1);
		if (strstr(err, "ends early") == NULL)
			fail_msg("cut at %zu: %s", len, err);
		if (recent_parse(doc, len, 1, &r, err, sizeof(err)) == 0) {
			assert_true(r.cut);
			assert_int_equal(r.n,
			    len < first       ? 0
			        : len < n - 2 ? 1
			                      : 2);
			recent_free(&r);
		} else
			assert_true(len <= (size_t)(strstr(doc, "[{") - doc));
	}
}

/* A thread's name with a newline and an escape: the screen keeps one
 * line a record, the JSON escapes them. */
static void test_names_rendered(void **state)
{
	static const char doc[] =
	    DOC(REC(",\"alloc_thread_name\":\"a\nb\033[31m\""));
	char *buf = NULL;
	size_t len = 0;
	struct recent r;
	struct recent_opts o = {.now_ns = 10};
	struct heap_profile hp;
	struct symbolizer *s;
	FILE *f;

	(void)state;
	memset(&hp, 0, sizeof(hp));
	assert_int_equal(parse(doc, &r), 0);
	assert_non_null(s = sym_new(&hp, NULL, err, sizeof(err)));
	assert_non_null(f = open_memstream(&buf, &len));
	assert_int_equal(recent_render_text(f, &r, s, &o), 0);
	fclose(f);
	assert_non_null(strstr(buf, "t1 (a?b?[31m)"));
	free(buf);
	assert_non_null(f = open_memstream(&buf, &len));
	assert_int_equal(recent_render_json(f, &r, s, &o), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"thread_name\":\"a\\nb\\u001b[31m\""));
	free(buf);
	sym_free(s);
	recent_free(&r);
}

static void test_cut(void **state)
{
	const char *s = FAKE_RECENT;
	size_t n = strlen(s), len, first;
	struct recent r;

	(void)state;
	/* Where the second record starts: the cut keeps the first. */
	first = (size_t)(strstr(s, "]},{") - s) + 2;
	for (len = 0; len < n; len++) {
		/* Not cut: every prefix is an error saying it ends early. */
		assert_int_equal(recent_parse(s, len, 0, &r, err, sizeof(err)),
		    -1);
		assert_non_null(strstr(err, "ends early"));
		/* Cut: the whole records before the end, or an error before
		 * the records' array began. */
		if (recent_parse(s, len, 1, &r, err, sizeof(err)) == 0) {
			assert_true(r.cut);
			assert_int_equal(r.n,
			    len < first       ? 0
			        : len < n - 2 ? 1
			                      : 2);
			assert_int_equal(r.npcs,
			    r.n == 0       ? 0
			        : r.n == 1 ? 3
			                   : 4);
			recent_free(&r);
		} else
			assert_true(len <= (size_t)(strstr(s, "[{") - s));
	}
	assert_int_equal(recent_parse(s, n, 1, &r, err, sizeof(err)), 0);
	assert_int_equal(r.n, 2);
	recent_free(&r);
}

static void test_hostile(void **state)
{
	char deep[512];
	size_t i;
	struct recent r;
	char *big;

	(void)state;
	bad("", "ends early");
	bad("[]", "want '{'");
	bad(HEAD "\"recent_alloc\":[]} x", "more after the object");
	bad(HEAD "\"x\":1}", "no recent_alloc");
	bad(HEAD "\"recent_alloc\":[],\"recent_alloc\":[]}",
	    "recent_alloc twice");
	/* Numbers: too big, signed, fractions, NaN-ish, not numbers. */
	bad("{\"sample_interval\":18446744073709551616,\"recent_alloc\":[]}",
	    "beyond 64 bits");
	bad("{\"sample_interval\":000000000000000000001,\"recent_alloc\":[]}",
	    "beyond 64 bits");
	bad("{\"sample_interval\":1.5,\"recent_alloc\":[]}", "integer");
	bad("{\"sample_interval\":1e9,\"recent_alloc\":[]}", "integer");
	bad("{\"sample_interval\":NaN,\"recent_alloc\":[]}", "want a number");
	bad("{\"sample_interval\":-1,\"recent_alloc\":[]}", "want a number");
	bad("{\"sample_interval\":Infinity,\"recent_alloc\":[]}",
	    "want a number");
	bad("{\"recent_alloc_max\":-2,\"recent_alloc\":[]}", "out of range");
	bad("{\"recent_alloc_max\":9223372036854775808,\"recent_alloc\":[]}",
	    "out of range");
	bad(DOC(REC(",\"dalloc_time\":nan")), "want a number");
	bad(DOC("{\"size\":-8}"), "want a number");
	bad(DOC("{\"size\":\"8\"}"), "want a number");
	bad(DOC("{\"size\":8,\"size\":8}"), "twice");
	bad(DOC("{\"released\":maybe}"), "true or false");
	bad(DOC("{\"released\":tru}"), "true or false");
	/* Missing fields, half a free, a free of a live record. */
	bad(DOC("{}"), "without size");
	bad(DOC("{\"size\":8,\"usize\":8,\"released\":false,"
	        "\"alloc_thread_uid\":1,\"alloc_time\":5}"),
	    "without alloc_trace");
	bad(DOC("{\"size\":8,\"usize\":8,\"alloc_thread_uid\":1,"
	        "\"alloc_time\":5,\"alloc_trace\":[]}"),
	    "without released");
	bad(DOC(REC(",\"dalloc_time\":5")), "part of its free");
	bad(DOC(REC(",\"dalloc_time\":5,\"dalloc_thread_uid\":1,"
	            "\"dalloc_trace\":[]")),
	    "not released");
	/* Frames that are no addresses, too many of them. */
	bad(DOC("{\"alloc_trace\":[\"0x\"]}"), "no address");
	bad(DOC("{\"alloc_trace\":[\"12\"]}"), "no address");
	bad(DOC("{\"alloc_trace\":[\"0x12345678901234567\"]}"), "no address");
	bad(DOC("{\"alloc_trace\":[\"0xfg\"]}"), "no address");
	bad(DOC("{\"alloc_trace\":[1]}"), "want '\"'");
	big = malloc(RECENT_FRAMES_MAX * 6 + 256);
	assert_non_null(big);
	strcpy(big, DOC("{\"alloc_trace\":["));
	big[strlen(big) - 2] = '\0'; /* drop DOC's "]}" */
	for (i = 0; i <= RECENT_FRAMES_MAX; i++)
		strcat(big, i ? ",\"0x1\"" : "\"0x1\"");
	strcat(big, "]}]}");
	bad(big, "more than 256 frames");
	free(big);
	/* Nesting deep in a key nobody knows. */
	strcpy(deep, "{\"x\":");
	for (i = 0; i < 100; i++)
		strcat(deep, "[");
	bad(deep, "nested too deep");
	/* A string never closed, a key that is no string. */
	bad("{\"sample_interval", "ends early");
	bad("{sample_interval:1}", "want '\"'");
	/* None of these left anything allocated (ASan's leak check). */
	assert_int_equal(parse(DOC(REC("")), &r), 0);
	recent_free(&r);
}

/* --- job_recent on the fake allocator --------------------------------- */

static struct jm4lw_config cfg;
static struct core core;
static struct dumper dumper;
static struct dump_result D;
static char tmpdir[256];
static char body[1 << 16];

static void fake_broken(const char *file, int line, const char *what)
{
	fail_msg("%s:%d: the fake allocator was misused: %s", file, line, what);
}

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");
	struct core_policy pol;

	(void)state;
	fake_reset();
	fake.violation = fake_broken;
	config_defaults(&cfg);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_recent.XXXXXX",
	    t != NULL ? t : "/tmp");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", tmpdir);
	assert_int_equal(config_policy(&cfg, &pol, err, sizeof(err)), 0);
	memset(&dumper, 0, sizeof(dumper));
	core_init(&core, &fake_ops, &cfg, &pol);
	return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int type,
    struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path) == -1 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	dumper_fini(&dumper);
	assert_int_equal(nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS),
	    0);
	return 0;
}

/* Run one job_recent; its body (if any) in body[]. */
static void run(int json, int live_only, unsigned long long min_size)
{
	struct job_req req = {.kind = &job_recent,
	    .who = "jmrc",
	    .json = json,
	    .live_only = live_only,
	    .min_size = min_size};
	ssize_t n = 0;

	body[0] = '\0';
	core_job_sync(&core, &dumper, &req, &D);
	assert_int_equal(core.dump_running, 0);
	if (D.status == DUMP_OK) {
		assert_true(D.body);
		assert_true(D.body_len < sizeof(body));
		n = pread(D.body_fd, body, sizeof(body) - 1, 0);
		assert_int_equal(n, (ssize_t)D.body_len);
		body[n] = '\0';
	}
	dump_result_release(&D);
}

static void test_job_text_and_json(void **state)
{
	(void)state;
	fake.recent_piece = 7; /* jemalloc hands it over in pieces */
	run(0, 0, 0);
	assert_int_equal(D.status, DUMP_OK);
	assert_int_equal(fake.recent_dumps, 1);
	assert_non_null(strstr(body,
	    "# 2 of 2 recent sampled allocations, "
	    "newest first (jemalloc keeps 64; one "
	    "sampled every 512.0 KiB on average)\n"));
	/* Newest first: the live 4 KiB one, then the freed one and its
	 * free's line. */
	assert_true(strstr(body, "4.0 KiB") < strstr(body, "1000 B"));
	assert_non_null(strstr(body, "t3 (main)"));
	assert_non_null(strstr(body, " live "));
	assert_non_null(strstr(body, " freed "));
	assert_non_null(strstr(body, "t2 (worker)  free "));
	run(1, 0, 0);
	assert_int_equal(D.status, DUMP_OK);
	assert_true(strncmp(body,
	                "{\"sample_interval\":524288,\"recent_max\":64,"
	                "\"count\":2,\"shown\":2,\"cut\":false,",
	                60) == 0);
	assert_non_null(strstr(body, "\"pcs\":[\"0x10\",\"0x20\"]"));
	assert_non_null(strstr(body, "\"free\":null"));
	assert_non_null(strstr(body, "\"thread_name\":\"worker\""));
	assert_int_equal(body[strlen(body) - 1], '\n');
}

static void test_job_filters(void **state)
{
	(void)state;
	run(1, 1, 0); /* live only */
	assert_non_null(strstr(body, "\"shown\":1,"));
	assert_non_null(strstr(body, "\"size\":4096"));
	assert_null(strstr(body, "\"size\":1000"));
	run(1, 0, 2000); /* 2000 bytes or more */
	assert_non_null(strstr(body, "\"shown\":1,"));
	run(0, 1, 5000); /* nothing left */
	assert_non_null(strstr(body, "# 0 of 2 recent"));
	assert_non_null(strstr(body, "; only live ones; only of 4.9 KiB"));
}

static void test_job_refusals(void **state)
{
	(void)state;
	fake.recent_max = 0;
	run(0, 0, 0);
	assert_int_equal(D.status, DUMP_REFUSED);
	assert_int_equal(D.why, REASON_NO_SAMPLES);
	assert_string_equal(D.reason,
	    "recent allocations are off: recent_max is 0 (set recent_max in "
	    "the configuration, then reload)");
	assert_int_equal(fake.recent_dumps, 0);

	fake.recent_max = 64;
	fake.fail_name = "experimental.";
	fake.fail_errno = ENOENT; /* jemalloc before 5.3.0 */
	run(0, 0, 0);
	assert_int_equal(D.why, REASON_PROF_UNBUILT);
	assert_non_null(strstr(D.reason, "has no prof_recent"));
	fake.fail_name = NULL;

	fake.opt_prof = false;
	run(0, 0, 0);
	assert_int_equal(D.why, REASON_PROF_OFF);

	/* A dump's JSON that is not jemalloc's: one line, no body. */
	fake.opt_prof = true;
	fake.recent_json = "{\"recent_alloc\":[{\"size\":1e999}]}";
	run(0, 0, 0);
	assert_int_equal(D.status, DUMP_FAILED);
	assert_non_null(strstr(D.reason, "prof_recent JSON at byte "));
	assert_null(strchr(D.reason, '\n'));

	/* The window fails: its errno in the line. */
	fake.recent_json = NULL;
	fake.fail_name = "experimental.prof_recent.alloc_dump";
	fake.fail_errno = EAGAIN;
	run(0, 0, 0);
	assert_int_equal(D.status, DUMP_FAILED);
	assert_non_null(strstr(D.reason, "alloc_dump: "));
}

/* More than RECENT_JSON_MAX: the records before the cap, said so. */
static void test_job_cut(void **state)
{
	static const char rec[] = REC("") ",";
	size_t n = RECENT_JSON_MAX / (sizeof(rec) - 1) + 10, i, len;
	char *doc, *p;

	(void)state;
	len = strlen(HEAD "\"recent_alloc\":[") + n * (sizeof(rec) - 1) + 8;
	assert_non_null(doc = malloc(len));
	p = doc + sprintf(doc, HEAD "\"recent_alloc\":[");
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s", rec);
	strcpy(p - 1, "]}");
	fake.recent_json = doc;
	fake.recent_piece = 65536;
	run(1, 0, 1ull << 40); /* none shown: the body stays small */
	assert_int_equal(D.status, DUMP_OK);
	assert_non_null(strstr(body, "\"cut\":true"));
	assert_non_null(strstr(body, "\"shown\":0,"));
	assert_null(strstr(body, "\"count\":0,"));
	run(0, 0, 1ull << 40);
	free(doc);
	assert_non_null(strstr(body, "the records were cut at 16.0 MiB"));
}

static void test_recent_max(void **state)
{
	(void)state;
	assert_int_equal(core_recent_max(&core, 64, err, sizeof(err)), 0);
	assert_int_equal(fake.recent_max_writes, 0); /* already so */
	assert_int_equal(core_recent_max(&core, 0, err, sizeof(err)), 0);
	assert_int_equal(fake.recent_max, 0);
	assert_int_equal(core_recent_max(&core, 1000, err, sizeof(err)), 0);
	assert_int_equal(fake.recent_max, 1000);
	assert_int_equal(fake.recent_max_writes, 2);
	fake.opt_prof = false; /* nothing to set: not a failure */
	assert_int_equal(core_recent_max(&core, 5, err, sizeof(err)), 0);
	fake.opt_prof = true;
	fake.fail_name = "experimental.prof_recent.alloc_max";
	fake.fail_errno = EPERM;
	assert_int_equal(core_recent_max(&core, 5, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "recent_max: cannot read"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good_and_freed),
	    cmocka_unit_test(test_real_dump),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_names_rendered),
	    cmocka_unit_test(test_names_quoted),
	    cmocka_unit_test(test_cut),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test_setup_teardown(test_job_text_and_json, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_job_filters, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_job_refusals, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_job_cut, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_recent_max, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

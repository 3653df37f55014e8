/*
 * Unit tests of core/ and proto/: framing, the command table, every word's
 * reply and the engine under it, with the allocator faked
 * (fake_jemalloc.c) so each mallctl can fail with each errno.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "answer.h"
#include "bytes.h"
#include "config.h"
#include "config_struct.h"
#include "core.h"
#include "dumper.h"
#include "cause.h"
#include "dumps.h"
#include "sweep.h"
#include "fake_jemalloc.h"
#include "figures.h"
#include "http.h"
#include "job.h"
#include "ops.h"
#include "proto.h"
#include "reason.h"
#include "result.h"
#include "schedule.h"
#include "stage.h"
#include "util.h"
#include "view.h"

/* What this file's prof.dump hook writes; reset before every test. */
static struct {
	int truncate; /* "succeeds" with a cut-off file */
	/* A long profile: body bytes before MAPPED_LIBRARIES, map bytes
	 * after it (0 and 0: the short one), or no mark at all. */
	size_t body, maps;
	int no_mark;
	int fail; /* leave an empty file and fail with this errno */
} prof;

/* prof.dump's profile, as the test asked for. */
static int write_profile(FILE *f, const char *path)
{
	(void)path;
	if (prof.fail != 0)
		return prof.fail;
	if (prof.truncate)
		fputs("heap_v2/524288\n  t*: 1: 524288 [", f);
	else if (prof.body > 0 || prof.maps > 0 || prof.no_mark) {
		fake_fill(f, prof.body);
		if (!prof.no_mark)
			fputs("\nMAPPED_LIBRARIES:\n", f);
		fake_fill(f, prof.maps);
	} else
		fputs(FAKE_PROFILE, f);
	return 0;
}

/* The fake found core calling jemalloc wrongly: fail the test there. */
static void fake_broken(const char *file, int line, const char *what)
{
	print_error("fake_jemalloc: %s\n", what);
	_fail(file, line);
}

/* A reply collected in memory. */
struct reply {
	char buf[8192];
	size_t len;
};

/* struct out callback appending to a struct reply. */
static void collect(void *arg, const void *buf, size_t len)
{
	struct reply *r = arg;

	assert_true(r->len + len < sizeof(r->buf));
	memcpy(r->buf + r->len, buf, len);
	r->len += len;
	r->buf[r->len] = '\0';
}

static struct jm4lw_config cfg;
static struct core core;
static struct dumper dumper;
static struct proto P;
static struct reply R;
static struct dump_result D; /* the last jmfp's */
static char tmpdir[1024];

/* Is @p k a row of job_table[]? */
static int in_job_table(const struct job_kind *k)
{
	size_t i;

	for (i = 0; job_table[i] != NULL; i++)
		if (job_table[i] == k)
			return 1;
	return 0;
}

/*
 * Run one word as the module does; returns proto_dispatch's result, reply
 * in R. A jmfp comes back as a job, which runs here as the module's worker
 * would run it: admission, the dump, the result on the loop, the reply.
 */
static int run(const char *word)
{
	struct out out = {.write = collect, .arg = &R};
	struct proto_result res = {.req.kind = NULL};
	int r, busy = core.dump_running;

	memset(&R, 0, sizeof(R));
	r = proto_dispatch(&P, word, &out, &res);
	if (r != PROTO_JOB) {
		assert_null(res.req.kind);
		return r;
	}
	assert_int_equal(R.len, 0);              /* nothing written yet */
	assert_true(in_job_table(res.req.kind)); /* a whole kind */
	assert_string_equal(res.req.who, proto_lookup(word)->name);
	core_job_sync(&core, &dumper, &res.req, &D);
	assert_int_equal(core.dump_running, busy); /* done, or not begun */
	/* A view's body goes first, as the module sends it. */
	if (D.status == DUMP_OK && D.body) {
		char buf[4096];
		ssize_t n;
		while ((n = read(D.body_fd, buf, sizeof(buf))) > 0)
			collect(&R, buf, (size_t)n);
	}
	dump_result_release(&D);
	return answer_dump(&out, &D) == 0 ? PROTO_OK : PROTO_ERROR;
}

/* Set one key of the configuration as a host does, by its text. */
static void cfg_set(const char *key, const char *value)
{
	char err[256];

	if (jm4lw_config_set(&cfg, key, value, err, sizeof(err)) == -1)
		fail_msg("%s=%s: %s", key, value, err);
}

/* Take the configuration's policy again, as a reload does. */
static void reload_policy(void)
{
	char err[256];

	assert_int_equal(config_policy(&cfg, &core.pol, err, sizeof(err)), 0);
}

/* Fresh fake allocator, config, engine and a private dump directory. */
static int setup(void **state)
{
	const char *t = getenv("TMPDIR");
	struct core_policy pol;
	char err[256];

	(void)state;
	fake_reset();
	fake.violation = fake_broken;
	fake.profile = write_profile;
	fake.stage = dumper.stage;
	memset(&prof, 0, sizeof(prof));
	config_defaults(&cfg);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_proto.XXXXXX",
	    t != NULL ? t : "/tmp");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", tmpdir);
	cfg.dump_min_interval = 0; /* tests dump back to back */
	assert_int_equal(config_policy(&cfg, &pol, err, sizeof(err)), 0);
	memset(&dumper, 0, sizeof(dumper));
	core_init(&core, &fake_ops, &cfg, &pol);
	proto_init(&P, &core, &dumper);
	/* As jm4lw_new() does: conf shows the config's keys. */
	P.nconf = config_conf_keys(P.conf, PROTO_CONF_MAX);
	return 0;
}

/* nftw() callback: remove one entry, children before their directory. */
static int remove_entry(const char *path, const struct stat *sb, int type,
    struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path) == -1 ? -1 : 0;
}

/* Remove the dump directory and whatever a test left in it (symlinks are
 * removed, never followed). */
static int teardown(void **state)
{
	(void)state;
	dumper_fini(&dumper); /* as the module's end: the dumps to index */
	assert_int_equal(nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS),
	    0);
	return 0;
}

/* Does @p s start with @p prefix? */
static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Does @p s end with @p suffix? */
static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Entries in directory @p path, but "." and ".." and @p skip. */

static int count_entries(const char *path, const char *skip)
{
	struct dirent *de;
	DIR *d = opendir(path);
	int n = 0;

	assert_non_null(d);
	/* A kept dump's leak index ("<dump>.trend") goes with
	 * its dump: not an entry of its own here. */
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    (skip == NULL || strcmp(de->d_name, skip) != 0) &&
		    !ends_with(de->d_name, ".heap.trend"))
			n++;
	closedir(d);
	return n;
}

/*
 * How many entries does the dump directory hold, besides the staging
 * directory (which must be empty between dumps)?
 */
static int dir_entries(void)
{
	const char *stage = NULL;

	if (dumper.stage[0] != '\0') {
		assert_int_equal(count_entries(dumper.stage, NULL), 0);
		stage = strrchr(dumper.stage, '/') + 1;
	}
	return count_entries(tmpdir, stage);
}

/* Fewer than 4 bytes are no word yet: the server waits for more. */
static void test_frame_short(void **state)
{
	char w[4] = {0};

	(void)state;
	assert_int_equal(proto_frame("", 0, w), 0);
	assert_int_equal(proto_frame("r", 1, w), 0);
	assert_int_equal(proto_frame("ru", 2, w), 0);
	assert_int_equal(proto_frame("ruo", 3, w), 0);
}

/* The word is the first 4 bytes; what follows is never looked at. */
static void test_frame_exact_and_trailing(void **state)
{
	char w[4];

	(void)state;
	assert_int_equal(proto_frame("ruok", 4, w), 4);
	assert_memory_equal(w, "ruok", 4);
	assert_int_equal(proto_frame("mntr\r\n", 6, w), 4);
	assert_memory_equal(w, "mntr", 4);
	assert_int_equal(proto_frame("jmst\nand then some junk", 23, w), 4);
	assert_memory_equal(w, "jmst", 4);
}

/* Any 4 bytes frame as a word, NULs and quotes too: dispatch judges. */
static void test_frame_binary(void **state)
{
	const char junk[] = {'\0', '\xff', '\n', '"', 'x'};
	char w[4];

	(void)state;
	assert_int_equal(proto_frame(junk, sizeof(junk), w), 4);
	assert_memory_equal(w, junk, 4);
}

/* ruok answers imok with no newline, byte for byte as ZooKeeper. */
static void test_ruok_exact_bytes(void **state)
{
	(void)state;
	assert_int_equal(run("ruok"), PROTO_OK);
	assert_int_equal(R.len, 4);
	assert_memory_equal(R.buf, "imok", 4);
}

/* Words match exactly: RUOK is unknown, not ruok. */
static void test_case_sensitive(void **state)
{
	(void)state;
	assert_int_equal(run("RUOK"), PROTO_ERROR);
	assert_true(
	    starts(R.buf, "error: unknown word \"RUOK\"; known words:"));
	assert_int_equal(core.st.words_unknown, 1);
}

/* An unknown word is echoed escaped, on one printable line. */
static void test_unknown_binary_is_escaped(void **state)
{
	(void)state;
	assert_int_equal(run("\x00\xff\"\\"), PROTO_ERROR);
	assert_true(
	    starts(R.buf, "error: unknown word \"\\x00\\xff\\x22\\x5c\""));
	assert_non_null(strstr(R.buf, " ruok mntr"));
	assert_int_equal(R.buf[R.len - 1], '\n');
	assert_null(memchr(R.buf, '\0', R.len));
	/* One line only. */
	assert_ptr_equal(strchr(R.buf, '\n'), R.buf + R.len - 1);
}

/* No prefix matching: "ruo" is not ruok. */
static void test_no_prefix_matching(void **state)
{
	(void)state;
	assert_int_equal(run("ruo\n"), PROTO_ERROR);
	assert_null(proto_lookup("ruo\0"));
	assert_non_null(proto_lookup("jmfp"));
}

/* The allow list refuses with ZooKeeper's line and never dumps. */
static void test_allow_list(void **state)
{
	(void)state;
	snprintf(cfg.allow, sizeof(cfg.allow), "ruok, mntr");
	assert_int_equal(run("ruok"), PROTO_OK);
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_string_equal(R.buf,
	    "jmfp is not executed because it is not in the whitelist.\n");
	assert_int_equal(core.st.words_refused, 1);
	assert_int_equal(fake.dumps, 0);
	/* Unknown stays unknown, even with an allow list. */
	assert_int_equal(run("xxxx"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: unknown word"));
}

/* Allow-list items match whole, with blanks trimmed; readonly by flag. */
static void test_allowed_matching(void **state)
{
	(void)state;
	assert_true(proto_allowed("*", "jmfp", PROTO_F_MUTATES));
	assert_true(proto_allowed("ruok,jmfp", "jmfp", PROTO_F_MUTATES));
	assert_true(proto_allowed(" ruok , jmfp ", "jmfp", PROTO_F_MUTATES));
	assert_false(proto_allowed("ruokjmfp", "jmfp", 0));
	assert_false(proto_allowed("jmf", "jmfp", 0));
	assert_false(proto_allowed("jmfpx", "jmfp", 0));
	assert_false(proto_allowed("", "ruok", 0));
	assert_false(proto_allowed("**", "ruok", 0));
	/* readonly: every word that changes nothing, plus named extras. */
	assert_true(proto_allowed("readonly", "mntr", 0));
	assert_false(proto_allowed("readonly", "jmfp", PROTO_F_MUTATES));
	assert_true(proto_allowed("readonly,jmfp", "jmfp", PROTO_F_MUTATES));
	assert_false(proto_allowed("readonlyx", "mntr", 0));
}

/* A host word: plain text, printf, raw bytes. */
static int host_wchs(struct jm4lw_reply *r, void *arg)
{
	jm4lw_reply_printf(r, "watches: %d\n", *(int *)arg);
	jm4lw_reply_write(r, "\0raw", 4);
	return 0;
}

/* A host mntr: ours, then the host's figures. */
static int host_mntr(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	if (jm4lw_reply_builtin(r, "mntr") == -1)
		return -1;
	jm4lw_reply_printf(r, "host_queue_depth\t%d\n", 7);
	return 0;
}

/* A host word that fails, with a newline the module must fold. */
static int host_fail(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	return jm4lw_reply_error(r, "queue %s\nis gone", "q1");
}

/* A host word with a reply longer than the formatting buffer. */
static int host_long(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	jm4lw_reply_printf(r, "%3000s|\n", "x");
	return 0;
}

/* Host words answer with text, raw bytes, built-ins and errors. */
static void test_host_words(void **state)
{
	int n = 42;

	(void)state;
	assert_int_equal(proto_add_word(&P, "wchs", host_wchs, &n, 0), 0);
	assert_int_equal(run("wchs"), PROTO_OK);
	assert_int_equal(R.len, strlen("watches: 42\n") + 4);
	assert_memory_equal(R.buf, "watches: 42\n\0raw", R.len);

	assert_int_equal(proto_add_word(&P, "mntr", host_mntr, NULL, 0), 0);
	assert_int_equal(run("mntr"), PROTO_OK);
	assert_true(starts(R.buf, "jm4lw_version\t"));
	assert_non_null(strstr(R.buf, "\njemalloc_allocated\t12345\n"));
	assert_true(R.len > 20);
	assert_string_equal(R.buf + R.len - 19, "host_queue_depth\t7\n");

	assert_int_equal(proto_add_word(&P, "fail", host_fail, NULL, 0), 0);
	assert_int_equal(run("fail"), PROTO_ERROR);
	assert_string_equal(R.buf, "error: queue q1 is gone\n");

	assert_int_equal(proto_add_word(&P, "long", host_long, NULL, 0), 0);
	assert_int_equal(run("long"), PROTO_OK);
	assert_int_equal(R.len, 3002);

	/* Unknown lists host words once, the replaced mntr once. */
	assert_int_equal(run("xxxx"), PROTO_ERROR);
	assert_non_null(strstr(R.buf, " wchs"));
	assert_null(strstr(strstr(R.buf, " mntr") + 1, " mntr"));
}

/* A host word's MUTATES flag puts it outside readonly. */
static void test_host_word_flags_and_allow(void **state)
{
	int n = 1;

	(void)state;
	assert_int_equal(proto_add_word(&P, "wchs", host_wchs, &n, 0), 0);
	assert_int_equal(proto_add_word(&P, "kill", host_wchs, &n,
	                     JM4LW_WORD_MUTATES),
	    0);
	snprintf(cfg.allow, sizeof(cfg.allow), "readonly");
	assert_int_equal(run("wchs"), PROTO_OK);
	assert_int_equal(run("kill"), PROTO_ERROR);
	assert_string_equal(R.buf,
	    "kill is not executed because it is not in the whitelist.\n");
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_int_equal(run("jmst"), PROTO_OK);
	assert_int_equal(fake.dumps, 0);
}

/* Host words: 4 printable bytes, a handler, at most PROTO_HOST_MAX. */
static void test_host_word_validation(void **state)
{
	int i;
	char name[16];

	(void)state;
	assert_int_equal(proto_add_word(&P, "abc", host_wchs, NULL, 0), -1);
	assert_int_equal(proto_add_word(&P, "abcde", host_wchs, NULL, 0), -1);
	assert_int_equal(proto_add_word(&P, "ab c", host_wchs, NULL, 0), -1);
	assert_int_equal(proto_add_word(&P, "ab,c", host_wchs, NULL, 0), -1);
	assert_int_equal(proto_add_word(&P,
	                     "ab\xff"
	                     "c",
	                     host_wchs, NULL, 0),
	    -1);
	assert_int_equal(proto_add_word(&P, "abcd", NULL, NULL, 0), -1);
	assert_int_equal(proto_add_word(&P, NULL, host_wchs, NULL, 0), -1);
	for (i = 0; i < PROTO_HOST_MAX; i++) {
		snprintf(name, sizeof(name), "w%03d", i);
		assert_int_equal(proto_add_word(&P, name, host_wchs, &i, 0), 0);
	}
	assert_int_equal(proto_add_word(&P, "full", host_wchs, NULL, 0), -1);
	/* Replacing an existing one still works when full. */
	assert_int_equal(proto_add_word(&P, "w000", host_fail, NULL, 0), 0);
	assert_int_equal(run("w000"), PROTO_ERROR);
	assert_int_equal(jm4lw_reply_builtin(&(struct jm4lw_reply){&P, NULL},
	                     "nope"),
	    -1);
}

/* mntr: ZooKeeper's key<TAB>value lines, from the fake's figures. */
static void test_mntr(void **state)
{
	(void)state;
	core.st.conns_open = 3;
	assert_int_equal(run("mntr"), PROTO_OK);
	assert_true(starts(R.buf, "jm4lw_version\t" JM4LW_VERSION "\n"));
	assert_non_null(strstr(R.buf, "\njm4lw_open_connections\t3\n"));
	assert_non_null(strstr(R.buf, "\njm4lw_words_served\t1\n"));
	assert_non_null(strstr(R.buf, "\njm4lw_connections_evicted\t0\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_version\t5.3.0-fake\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_opt_prof\ttrue\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_prof_active\tfalse\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_lg_prof_sample\t19\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_allocated\t12345\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_retained\t19\n"));
	assert_null(strstr(R.buf, "jm4lw_last_dump"));
	assert_int_equal(fake.epochs, 1);
	assert_int_equal(R.buf[R.len - 1], '\n');
}

/* mntr refreshes jemalloc's statistics at most once a millisecond. */
static void test_mntr_coalesces_epochs(void **state)
{
	struct timespec ms2 = {.tv_nsec = 2000000}, t0, t1;
	int i;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 5; i++)
		assert_int_equal(run("mntr"), PROTO_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Five within a millisecond share one epoch (a stalled machine may
	 * have let the window pass: then each may refresh). */
	if ((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec <
	    1000000L)
		assert_int_equal(fake.epochs, 1);
	else
		assert_in_range(fake.epochs, 1, 5);
	fake.epochs = 0;
	nanosleep(&ms2, NULL);
	assert_int_equal(run("mntr"), PROTO_OK);
	assert_int_equal(fake.epochs, 1);
	assert_int_equal(run("mntr"), PROTO_OK);
	nanosleep(&ms2, NULL);
	assert_int_equal(run("mntr"), PROTO_OK);
	assert_in_range(fake.epochs, 2, 3);
}

/* Byte counts in replies keep a sane unit up to the largest size_t. */
static void test_fmt_bytes(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(fmt_bytes(b, sizeof(b), 0), "0 B");
	assert_string_equal(fmt_bytes(b, sizeof(b), 1023), "1023 B");
	assert_string_equal(fmt_bytes(b, sizeof(b), 1536), "1.5 KiB");
	assert_string_equal(fmt_bytes(b, sizeof(b), 64u << 20), "64.0 MiB");
	assert_string_equal(fmt_bytes(b, sizeof(b), (size_t)1 << 50),
	    "1.0 PiB");
	assert_string_equal(fmt_bytes(b, sizeof(b), SIZE_MAX), "16.0 EiB");
	/* The leak report's way: signed, a decimal in bytes, up to TiB. */
	assert_string_equal(fmt_bytes_as(b, sizeof(b), -5, BYTES_DECIMAL),
	    "-5.0 B");
	assert_string_equal(fmt_bytes_as(b, sizeof(b), 0x1p50,
	                        BYTES_DECIMAL | BYTES_UPTO_TIB),
	    "1024.0 TiB");
	/* The flame graph's: "+" before a growth, plain bytes. */
	assert_string_equal(fmt_bytes_as(b, sizeof(b), 12, BYTES_SIGN),
	    "+12 B");
	assert_string_equal(fmt_bytes_as(b, sizeof(b), 0, BYTES_SIGN), "0 B");
	assert_string_equal(fmt_bytes_as(b, sizeof(b), -1536, BYTES_SIGN),
	    "-1.5 KiB");
}

/* The answers' table: every answer has a text (a word shows it), a cell
 * that does not exist renders nothing and says so, and so does a format
 * past the table; a kind past it has no cells. */
static void test_answer_table(void **state)
{
	struct reply r = {0};
	struct out out = {.write = collect, .arg = &r};
	struct answer_history h = {0};
	int k;

	(void)state;
	for (k = 0; k < ANSWER_KINDS; k++) {
		assert_non_null(answers[k].name);
		assert_true(answer_has((enum answer_kind)k, ANSWER_TEXT));
	}
	assert_false(answer_has(ANSWER_KINDS, ANSWER_TEXT));
	assert_false(answer_has(ANSWER_DUMPS, ANSWER_PROMETHEUS));
	assert_int_equal(answer_history(&out, ANSWER_PROMETHEUS, &h), -1);
	assert_int_equal(answer_summary(&out, ANSWER_JSON, NULL), -1);
	assert_int_equal(answer_history(&out, ANSWER_FORMATS, &h), -1);
	assert_int_equal(r.len, 0);
}

/* A figure jemalloc cannot give is left out, not made up. */
static void test_mntr_leaves_out_what_fails(void **state)
{
	(void)state;
	fake.fail_name = "prof.active";
	fake.fail_errno = ENOENT;
	assert_int_equal(run("mntr"), PROTO_OK);
	assert_null(strstr(R.buf, "jemalloc_prof_active"));
	assert_non_null(strstr(R.buf, "jemalloc_allocated\t12345\n"));
}

/* srvr's summary and conf's effective configuration, key by key. */
static void test_srvr_and_conf(void **state)
{
	(void)state;
	fake.prof_active = true;
	assert_int_equal(run("srvr"), PROTO_OK);
	assert_true(starts(R.buf, "jm4lw version: " JM4LW_VERSION));
	assert_non_null(strstr(R.buf, "\nProfiling: active\n"));
	assert_non_null(strstr(R.buf, "\nMode: standalone\n"));
	fake.opt_prof = false;
	assert_int_equal(run("srvr"), PROTO_OK);
	assert_non_null(strstr(R.buf, "\nProfiling: off\n"));

	snprintf(cfg.dump_prefix, sizeof(cfg.dump_prefix), "svc");
	assert_int_equal(run("conf"), PROTO_OK);
	assert_non_null(strstr(R.buf, "listen=127.0.0.1:9181\n"));
	assert_non_null(strstr(R.buf, "\nallow=*\n"));
	assert_non_null(strstr(R.buf, "\ndump_prefix=svc\n"));
	assert_non_null(strstr(R.buf,
	    "\nmax_connections=64\n"
	    "max_connections_per_peer=48\n"));
	assert_non_null(strstr(R.buf, "\nread_timeout=5\n"));
	assert_non_null(strstr(R.buf, "\nwrite_timeout=30\n"));
	assert_non_null(strstr(R.buf, "\nallow_from=127.0.0.0/8,::1\n"));
	assert_non_null(strstr(R.buf, "\ndump_min_interval=0\n"));
	assert_non_null(strstr(R.buf, "\ndump_min_free=67108864\n"));

	/* Typed keys print as they were set: kept text where the value
	 * would not give it back, else the value's one form. */
	cfg_set("dump_on_growth", "0512m");
	cfg_set("prof_reset_lg_sample", "07");
	cfg_set("dump_symbolized", "YES");
	cfg_set("jemalloc_dumps", "Leave");
	cfg_set("fold_wrappers", "a  b");
	cfg_set("dump_on_memory", " 90% ");
	cfg_set("dump_on_memory_psi", "some  10");
	assert_int_equal(run("conf"), PROTO_OK);
	assert_non_null(strstr(R.buf, "\ndump_on_growth=0512m\n"));
	assert_non_null(strstr(R.buf, "\nprof_reset_lg_sample=07\n"));
	assert_non_null(
	    strstr(R.buf, "\ndump_symbolized=on\njemalloc_dumps=leave\n"));
	assert_non_null(strstr(R.buf, "\nsymbolize_debuginfod=off\n"));
	assert_non_null(strstr(R.buf, "\nfold_wrappers=a, b\n"));
	assert_non_null(strstr(R.buf,
	    "\ndump_on_memory=90%\ndump_on_memory_psi=some  10\n"));
}

/* jmst/jmsj pass jemalloc's text through, with no epoch of ours. */
static void test_jmst_jmsj(void **state)
{
	(void)state;
	assert_int_equal(run("jmst"), PROTO_OK);
	assert_string_equal(R.buf,
	    "___ Begin jemalloc statistics ___\n"
	    "--- End jemalloc statistics ---\n");
	assert_null(fake.stats_opts);
	/* malloc_stats_print refreshes the epoch itself: no second one. */
	assert_int_equal(fake.epochs, 0);
	assert_int_equal(run("jmsj"), PROTO_OK);
	assert_string_equal(fake.stats_opts, "J");
	assert_int_equal(R.buf[R.len - 1], '\n');
}

/* jmfp: staged in a 0700 directory, renamed into dump_dir, 0600. */
static void test_jmfp_writes_and_renames(void **state)
{
	char want[4200], stage[sizeof(dumper.stage)];
	struct stat sb;

	(void)state;
	assert_int_equal(run("jmfp"), PROTO_OK);
	snprintf(want, sizeof(want), "%s/jm4lw.%ld.0.w.heap\n", tmpdir,
	    (long)getpid());
	assert_string_equal(R.buf, want);
	want[strlen(want) - 1] = '\0';
	assert_int_equal(stat(want, &sb), 0);
	/* jemalloc wrote into our memfd (no disk under its
	 * locks), gone with it; the copy went through the staging
	 * directory: 0700, ours, empty again. */
	assert_int_equal(fake.dump_memfd, 1);
	assert_true(starts(fake.dump_path, "/proc/self/fd/"));
	assert_int_equal(stat(fake.dump_path, &sb), -1);
	snprintf(stage, sizeof(stage), "%s/.jm4lw.%ld.", tmpdir,
	    (long)getpid());
	assert_true(starts(dumper.stage, stage));
	assert_int_equal(strlen(dumper.stage), strlen(stage) + 6);
	assert_int_equal(lstat(dumper.stage, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0700);
	assert_int_equal(count_entries(dumper.stage, NULL), 0);
	assert_int_equal(dir_entries(), 1);
	assert_int_equal(core.st.dumps_written, 1);
	assert_string_equal(core.last_dump, want);
	/* Profiles show addresses: for our user only. */
	assert_int_equal(stat(want, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	/* The next dump stages in the same directory... */
	snprintf(stage, sizeof(stage), "%s", dumper.stage);
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_string_equal(dumper.stage, stage);
	assert_int_equal(dir_entries(), 2);
	/* ...and the module's end removes it. */
	dumper_fini(&dumper);
	assert_int_equal(stat(stage, &sb), -1);
	assert_int_equal(count_entries(tmpdir, NULL), 2);
	assert_int_equal(run("jmfp"), PROTO_OK); /* a new one, on demand */
	assert_int_equal(stat(dumper.stage, &sb), 0);
	assert_string_not_equal(dumper.stage, stage);
	assert_int_equal(dir_entries(), 3);

	assert_int_equal(run("mntr"), PROTO_OK);
	assert_non_null(strstr(R.buf, "jm4lw_dumps_written\t3\n"));
	assert_non_null(strstr(R.buf, "jm4lw_last_dump\t"));
}

/* Make directory @p name in the dump dir, with @p file in it (or none),
 * last modified @p age seconds ago. */
static void make_stage(const char *name, const char *file, int age)
{
	char path[4400], f[4600];
	struct timespec ts[2];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert_int_equal(mkdir(path, 0700), 0);
	if (file != NULL) {
		snprintf(f, sizeof(f), "%s/%s", path, file);
		fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0600);
		assert_true(fd != -1);
		close(fd);
	}
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* Does @p name exist in the dump dir (symlinks not followed)? */
static bool exists(const char *name)
{
	char path[8800];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return lstat(path, &sb) == 0;
}

/*
 * Staging directories left by processes that are gone are swept when a
 * process stages in the same dump dir; nothing else is.
 */
static void test_stage_sweep(void **state)
{
	char dead_stage[64], dead_file[64], young[64], foreign[64];
	char live[64], mine[64], link[64], odd[64], path[4400];
	long dead, pid;
	pid_t child;

	(void)state;
	child = fork();
	assert_true(child != -1);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	dead = (long)child;

	snprintf(dead_stage, sizeof(dead_stage), ".jm4lw.%ld.aB3dE9", dead);
	snprintf(dead_file, sizeof(dead_file), "jm4lw.%ld.7.heap", dead);
	make_stage(dead_stage, dead_file, 3600);
	snprintf(young, sizeof(young), ".jm4lw.%ld.young1", dead);
	make_stage(young, NULL, 5); /* may be mid-dump elsewhere */
	snprintf(foreign, sizeof(foreign), ".jm4lw.%ld.forgn1", dead);
	make_stage(foreign, "notes.txt", 3600);
	/* A live pid names the writer only if it started before the
	 * directory was last written: ctest, started seconds ago, cannot
	 * have written one an hour old (the pid was reused: swept). */
	snprintf(live, sizeof(live), ".jm4lw.%ld.alive1", (long)getppid());
	make_stage(live, NULL, 3600);
	snprintf(mine, sizeof(mine), ".jm4lw.%ld.mine01", (long)getpid());
	make_stage(mine, NULL, 3600);
	snprintf(odd, sizeof(odd), ".jm4lw.%ld.abc12", dead); /* 5 chars */
	make_stage(odd, NULL, 3600);
	snprintf(link, sizeof(link), ".jm4lw.%ld.link01", dead);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, link);
	assert_int_equal(symlink(tmpdir, path), 0);

	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_false(exists(dead_stage));
	assert_true(exists(young));
	assert_true(exists(foreign));
	snprintf(path, sizeof(path), "%s/notes.txt", foreign);
	assert_true(exists(path)); /* relative to the dump dir */
	assert_false(exists(live));
	assert_true(exists(mine));
	assert_true(exists(odd));
	assert_true(exists(link));

	assert_true(dumps_stage_match("jm4lw", dead_stage, &pid));
	assert_int_equal(pid, dead);
	assert_false(dumps_stage_match("jm4lw", odd, &pid));
	assert_false(dumps_stage_match("jm4lw", ".jm4lw.12.abcdefg", &pid));
	assert_false(dumps_stage_match("jm4lw", ".jm4lw..abcdef", &pid));
	assert_false(dumps_stage_match("jm4lw", ".jm4lw.x1.abcdef", &pid));
	assert_false(dumps_stage_match("jm4lw", "jm4lw.12.abcdef", &pid));
	assert_false(dumps_stage_match("jm4lw", ".other.12.abcdef", &pid));
	assert_false(dumps_stage_match("jm4lw", ".jm4lw.12.abc-ef", &pid));
}

/* Count the leak indexes in the dump directory. */
static int indexes(void)
{
	struct dirent *de;
	DIR *d = opendir(tmpdir);
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		n += ends_with(de->d_name, ".heap.trend");
	closedir(d);
	return n;
}

/*
 * jmfp answers once its dump is kept; the leak index is work
 * nobody waits for, left for the worker between jobs (dumper_idle) or
 * the first leak question, which says how many it made.
 */
static void test_jmfp_answers_before_its_index(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_int_equal(run("jmfp"), PROTO_OK);
		assert_int_equal(indexes(), 0);
	}
	assert_int_equal(dumper.nunindexed, 3);
	/* The worker's idle piece: one index, the oldest, at a time. */
	assert_int_equal(dumper_idle(&dumper), 1);
	assert_int_equal(indexes(), 1);
	assert_int_equal(dumper.nunindexed, 2);
	assert_int_equal(count_entries(dumper.stage, NULL), 0);
	/* jmlk makes the other two, and says so. */
	assert_int_equal(run("jmlk"), PROTO_OK);
	assert_non_null(strstr(R.buf, "# indexed 2 of the 3 dumps now"));
	assert_int_equal(indexes(), 3);
	assert_int_equal(run("jmlk"), PROTO_OK);
	assert_null(strstr(R.buf, "# indexed"));
	/* Those the worker still lists are there: nothing more to do. */
	assert_int_equal(dumper_idle(&dumper), 1);
	assert_int_equal(dumper_idle(&dumper), 0);
	assert_int_equal(indexes(), 3);
	assert_int_equal(count_entries(dumper.stage, NULL), 0);
	/* Past DUMPER_UNINDEXED_MAX the oldest wait for a question. */
	for (i = 0; i < DUMPER_UNINDEXED_MAX + 2; i++)
		assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(dumper.nunindexed, DUMPER_UNINDEXED_MAX);
	/* Cancelled (jm4lw_free): nothing more, and the list is let go. */
	dumper_cancel(&dumper);
	assert_int_equal(dumper_idle(&dumper), 0);
	assert_int_equal(dumper.nunindexed, 0);
	assert_int_equal(indexes(), 3);
}

/* A staging directory someone replaced (a symlink now) is not used. */
static void test_stage_replaced(void **state)
{
	char saved[sizeof(dumper.stage)], aside[sizeof(dumper.stage) + 8];
	struct stat sb;

	(void)state;
	assert_int_equal(run("jmfp"), PROTO_OK);
	snprintf(saved, sizeof(saved), "%s", dumper.stage);
	snprintf(aside, sizeof(aside), "%s.aside", saved);
	assert_int_equal(rename(saved, aside), 0);
	assert_int_equal(symlink(aside, saved), 0);
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_string_not_equal(dumper.stage, saved);
	assert_int_equal(fake.dump_memfd, 1);
	assert_int_equal(lstat(saved, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_int_equal(count_entries(aside, NULL), 0);
}

/* A profile cut short (the disk filled; jemalloc calls that a success) is
 * a failure, and its file is gone. */
static void test_jmfp_cut_short(void **state)
{
	(void)state;
	prof.truncate = 1;
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: heap profile dump to "));
	assert_non_null(strstr(R.buf, "cut short"));
	assert_int_equal(dir_entries(), 0);
	assert_int_equal(core.st.dumps_failed, 1);
	assert_int_equal(core.st.dumps_written, 0);
}

/*
 * The completeness check reads the profile from its end: a mark far from
 * the end, one split across two read windows, and none at all.
 */
static void test_jmfp_long_profiles(void **state)
{
	enum { W = DUMP_TAIL_CHUNK };
	static const struct {
		size_t body, maps;
		int no_mark, whole;
	} c[] = {
	    {300000, 100, 0, 1},    /* mark in the last window */
	    {300000, 200000, 0, 1}, /* many windows back */
	    {300000, W - 9, 0, 1},  /* mark split by a window's edge */
	    {300000, W - 19, 0, 1}, {300000, W - 1, 0, 1},
	    {W + 5000, W, 0, 1},  /* mark in the first, short window */
	    {0, 5, 0, 1},         /* the mark is the file's start */
	    {400000, 1000, 1, 0}, /* no mark anywhere */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		prof.body = c[i].body;
		prof.maps = c[i].maps;
		prof.no_mark = c[i].no_mark;
		if (c[i].whole) {
			assert_int_equal(run("jmfp"), PROTO_OK);
		} else {
			assert_int_equal(run("jmfp"), PROTO_ERROR);
			assert_non_null(strstr(R.buf, "cut short"));
		}
	}
	assert_int_equal(dir_entries(), 7);
}

/* A name an earlier process with our pid left is skipped. */
static void test_jmfp_skips_existing_names(void **state)
{
	char path[2048];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/jm4lw.%ld.0.w.heap", tmpdir,
	    (long)getpid());
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd != -1);
	close(fd);
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_non_null(strstr(R.buf, ".1.w.heap\n"));
	assert_int_equal(dir_entries(), 2);
}

/* A relative dump_dir is answered as an absolute path. */
static void test_jmfp_relative_dir_is_absolute(void **state)
{
	char cwd[4096];

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmpdir), 0);
	mkdir("sub", 0755);
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "sub/");
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(R.buf[0], '/');
	assert_non_null(strstr(R.buf, "/sub/jm4lw."));
	assert_null(strstr(R.buf, "//"));
}

/* A missing dump_dir is a failure that names it. */
static void test_jmfp_dir_missing(void **state)
{
	(void)state;
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s/nope", tmpdir);
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: heap profile dump to "));
	assert_non_null(
	    strstr(R.buf, "/nope failed: No such file or directory\n"));
	assert_int_equal(core.st.dumps_failed, 1);
	assert_int_equal(fake.dumps, 0);
}

/* A dump_dir that is a file is a failure: Not a directory. */
static void test_jmfp_dir_is_a_file(void **state)
{
	char path[2048];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/file", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd != -1);
	close(fd);
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", path);
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_non_null(strstr(R.buf, "failed: Not a directory\n"));
}

/* prof.dump failing with each errno: an error line, never a path or file. */
static void test_jmfp_dump_errnos(void **state)
{
	const int errs[] = {EFAULT, EPERM, EINVAL, EAGAIN, ENOENT};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		prof.fail = errs[i]; /* after a partial file */
		assert_int_equal(run("jmfp"), PROTO_ERROR);
		assert_int_equal(fake.dumps, (int)i + 1);
		assert_true(starts(R.buf, "error: heap profile dump to "));
		assert_non_null(strstr(R.buf, tmpdir));
		assert_null(strstr(R.buf, ".heap"));
		if (errs[i] == EFAULT)
			assert_non_null(
			    strstr(R.buf, "prof.dump returned EFAULT"));
		else
			assert_non_null(strstr(R.buf, strerror(errs[i])));
		assert_int_equal(dir_entries(), 0); /* partial file removed */
	}
	assert_int_equal(core.st.dumps_failed, 5);
	assert_int_equal(core.st.dumps_written, 0);
}

/* dump_min_interval refuses a storm, failed dumps included. */
static void test_jmfp_min_interval(void **state)
{
	(void)state;
	cfg.dump_min_interval = 3600;
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf,
	    "error: jmfp refused: the last dump was "
	    "0.0 s ago and dump_min_interval is 3600 s; retry in "));
	assert_int_equal(core.st.dumps_refused, 1);
	assert_int_equal(fake.dumps, 1);
	assert_int_equal(dir_entries(), 1);
	/* Failed dumps count as dumps: a storm of failures is a storm too. */
	cfg.dump_min_interval = 0;
	fake.fail_name = "prof.dump";
	fake.fail_errno = EFAULT;
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	cfg.dump_min_interval = 3600;
	fake.fail_name = NULL;
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: jmfp refused: "));
	cfg.dump_min_interval = 0;
	assert_int_equal(run("jmfp"), PROTO_OK);
}

/* dump_min_free refuses before the disk fills, and counts it. */
static void test_jmfp_min_free(void **state)
{
	(void)state;
	cfg.dump_min_free = ~0ULL >> 2; /* more than any disk here */
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: heap profile dump to "));
	assert_non_null(strstr(R.buf, " refused: "));
	assert_non_null(strstr(R.buf, " free, dump_min_free is "));
	assert_int_equal(fake.dumps, 0);
	assert_int_equal(dir_entries(), 0);
	assert_int_equal(core.st.dumps_refused, 1);
	cfg.dump_min_free = 1;
	assert_int_equal(run("jmfp"), PROTO_OK);
	cfg.dump_min_free = 0;
	assert_int_equal(run("jmfp"), PROTO_OK);
}

/* Create @p name in the dump dir with @p size bytes and mtime @p t. */
static void plant(const char *name, size_t size, time_t t)
{
	char path[2048];
	struct timespec ts[2] = {{.tv_sec = t}, {.tv_sec = t}};
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	while (size-- > 0)
		fputc('x', f);
	fclose(f);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* Does @p name exist in the dump dir? */
static bool present(const char *name)
{
	char path[2048];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return lstat(path, &sb) == 0;
}

/* Our dump names are exactly <prefix>.<digits>.<digits>.heap. */
static void test_dumps_match(void **state)
{
	(void)state;
	assert_true(dumps_match("jm4lw", "jm4lw.12.0.heap"));
	assert_true(dumps_match("svc-a", "svc-a.1.99999.heap"));
	assert_false(dumps_match("jm4lw", "jm4lw.12.0.heap.tmp"));
	assert_false(dumps_match("jm4lw", ".jm4lw.12.0.heap.Ab12Cd"));
	assert_false(dumps_match("jm4lw", "jm4lw.12.heap"));
	assert_false(dumps_match("jm4lw", "jm4lw.x.0.heap"));
	assert_false(dumps_match("jm4lw", "jm4lw.1.2.3.heap"));
	assert_false(dumps_match("jm4lw", "jm4lw..0.heap"));
	assert_false(dumps_match("jm4lwx", "jm4lw.1.0.heap"));
	assert_false(dumps_match("jm4lw", "jm4lwx.1.0.heap"));
	/* A cause's letter (core/cause.h): ours, and jemalloc's own. */
	assert_int_equal(dumps_cause("jm4lw", "jm4lw.12.0.heap"), CAUSE_NONE);
	assert_int_equal(dumps_cause("jm4lw", "jm4lw.12.0.w.heap"), CAUSE_WORD);
	assert_int_equal(dumps_cause("jm4lw", "jm4lw.12.0.h.heap"), CAUSE_HTTP);
	assert_int_equal(dumps_cause("jm4lw", "jm4lw.12.3.o.heap"),
	    CAUSE_MEMORY);
	assert_int_equal(dumps_cause("jm4lw", "jm4lw.12.3.i17.heap"),
	    CAUSE_INTERVAL);
	assert_int_equal(dumps_cause("jm4lw", "jm4lw.12.3.u0.heap"),
	    CAUSE_GDUMP);
	assert_int_equal(dumps_cause("jm4lw", "jm4lw.12.3.f.heap"),
	    CAUSE_FINAL);
	assert_int_equal(dumps_cause("jm4lw", "jm4lw.12.3.m2.heap"),
	    CAUSE_MANUAL);
	assert_false(dumps_match("jm4lw", "jm4lw.12.3.i.heap")); /* no n */
	assert_false(
	    dumps_match("jm4lw", "jm4lw.12.3.w1.heap")); /* ours: none */
	assert_false(dumps_match("jm4lw", "jm4lw.12.3.x.heap"));
	assert_false(dumps_match("jm4lw", "jm4lw.12.3.f.heap.tmp"));
	assert_false(dumps_match("jm4lw", "jm4lw.12.3.ww.heap"));
	assert_false(dumps_match("jm4lw", "jm4lw.12.3..heap"));
	assert_string_equal(cause_name(CAUSE_GDUMP), "gdump");
	assert_string_equal(cause_name(CAUSE_NONE), "-");
	assert_string_equal(cause_name(-1), "-");
	assert_false(dumps_match("jm4", "jm4lw.1.0.heap"));
	assert_false(dumps_match("jm4lw", "other.1.0.heap"));
	assert_false(dumps_match("jm4lw", "jm4lw.1.0.heapx"));
}

/* Retention deletes only our oldest regular files, never foreign ones. */
static void test_retention_keep(void **state)
{
	char path[2048], target[2048];

	(void)state;
	plant("jm4lw.100.0.heap", 10, 1000);
	plant("jm4lw.100.1.heap", 10, 2000);
	plant("jm4lw.200.0.heap", 10, 3000);
	plant("other.100.0.heap", 10, 10);     /* another prefix */
	plant("jm4lw.100.9.heap.tmp", 10, 10); /* not a dump name */
	plant("notes.txt", 10, 10);
	snprintf(path, sizeof(path), "%s/jm4lw.5.5.heap", tmpdir);
	assert_int_equal(mkdir(path, 0755), 0); /* a directory */
	snprintf(path, sizeof(path), "%s/jm4lw.6.6.heap", tmpdir);
	snprintf(target, sizeof(target), "%s/notes.txt", tmpdir);
	assert_int_equal(symlink(target, path), 0); /* a symlink */

	cfg.dump_keep = 2;
	assert_int_equal(run("jmfp"), PROTO_OK);
	/* The new dump and the newest old one stay. */
	assert_true(present("jm4lw.200.0.heap"));
	assert_false(present("jm4lw.100.1.heap"));
	assert_false(present("jm4lw.100.0.heap"));
	assert_int_equal(core.st.dumps_deleted, 2);
	assert_true(present("other.100.0.heap"));
	assert_true(present("jm4lw.100.9.heap.tmp"));
	assert_true(present("notes.txt"));
	assert_true(present("jm4lw.5.5.heap"));
	assert_true(present("jm4lw.6.6.heap"));
	assert_int_equal(dir_entries(), 2 + 5);
}

/* An old dump dated in the future (a clock stepped back, copied files)
 * must not take the new dump's slot. Found by the fuzzer. */
static void test_retention_future_mtime(void **state)
{
	(void)state;
	plant("jm4lw.1.0.heap", 10, 4000000000);
	cfg.dump_keep = 1;
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(dir_entries(), 1);
	assert_false(present("jm4lw.1.0.heap"));
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(dir_entries(), 1);
}

/* dump_max_bytes deletes the oldest, and every older one after. */
static void test_retention_bytes(void **state)
{
	(void)state;
	plant("jm4lw.1.0.heap", 400, 1000);
	plant("jm4lw.1.1.heap", 400, 2000);
	plant("jm4lw.1.2.heap", 400, 3000);
	/* The new dump is 46 bytes (the fake); 46+400+400 <= 1000. */
	cfg.dump_max_bytes = 1000;
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_true(present("jm4lw.1.2.heap"));
	assert_true(present("jm4lw.1.1.heap"));
	assert_false(present("jm4lw.1.0.heap"));
	/* Once one does not fit, older ones go too, even small ones. */
	plant("jm4lw.0.0.heap", 5, 500);
	cfg.dump_max_bytes = 500;
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_true(present("jm4lw.1.2.heap"));
	assert_false(present("jm4lw.1.1.heap"));
	assert_false(present("jm4lw.0.0.heap"));
	assert_int_equal(core.st.dumps_deleted, 3);
	/* A cap below one dump still keeps the newest. */
	cfg.dump_max_bytes = 1;
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(dir_entries(), 1);
	assert_int_equal(core.st.dumps_deleted, 6);
}

/* jmls: a summary line, then our dumps, this process's first, each part
 * newest first, in UTC; the pid and whose after the cause. */
static void test_jmls(void **state)
{
	char want[8192], mine[64], name[DUMPS_PROGRAM_MAX];
	long me = (long)getpid();

	(void)state;
	(void)dumps_proc_name(me, name, sizeof(name));
	assert_string_equal(name, "test_proto");
	assert_int_equal(run("jmls"), PROTO_OK);
	snprintf(want, sizeof(want),
	    "# 0 dumps, 0 bytes in %s (jm4lw.*.heap); 0 of this process "
	    "(pid %ld, test_proto) first\n",
	    tmpdir, me);
	assert_string_equal(R.buf, want);
	/* pid 7's dumps from 1970: a process running as pid 7 now
	 * started later, so their writer is gone ("-"). */
	plant("jm4lw.7.0.heap", 3, 86400);
	plant("jm4lw.7.1.heap", 5, 2 * 86400 + 61);
	plant("jm4lw.7.2.i0.heap", 1, 3 * 86400);
	plant("other.7.1.heap", 5, 5);
	snprintf(mine, sizeof(mine), "jm4lw.%ld.0.heap", me);
	plant(mine, 2, 3600);
	assert_int_equal(run("jmls"), PROTO_OK);
	snprintf(want, sizeof(want),
	    "# 4 dumps, 11 bytes in %s (jm4lw.*.heap); 1 of this process "
	    "(pid %ld, test_proto) first, 3 of other processes (pid 7)\n"
	    "%s/%s\t2\t1970-01-01T01:00:00Z\t-\t%ld\tthis\n"
	    "%s/jm4lw.7.2.i0.heap\t1\t1970-01-04T00:00:00Z\tinterval\t7\t-\n"
	    "%s/jm4lw.7.1.heap\t5\t1970-01-03T00:01:01Z\t-\t7\t-\n"
	    "%s/jm4lw.7.0.heap\t3\t1970-01-02T00:00:00Z\t-\t7\t-\n",
	    tmpdir, me, tmpdir, mine, me, tmpdir, tmpdir, tmpdir);
	assert_string_equal(R.buf, want);
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s/nope", tmpdir);
	assert_int_equal(run("jmls"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: cannot list "));
}

/* jmrs resets at the configured rate, or keeps the current one. */
static void test_jmrs(void **state)
{
	(void)state;
	assert_int_equal(run("jmrs"), PROTO_OK);
	assert_string_equal(R.buf,
	    "ok: profile reset (lg_prof_sample=19); every sample so far was "
	    "dropped: profiles now hold only allocations made from now on\n");
	assert_int_equal(fake.reset_lg, 19);
	cfg_set("prof_reset_lg_sample", "12");
	reload_policy();
	assert_int_equal(run("jmrs"), PROTO_OK);
	assert_int_equal(fake.reset_lg, 12);
	fake.fail_name = "prof.reset";
	fake.fail_errno = EFAULT;
	assert_int_equal(run("jmrs"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: prof.reset failed: "));
	fake.fail_name = NULL;
	fake.opt_prof = false;
	assert_int_equal(run("jmrs"), PROTO_ERROR);
	assert_non_null(strstr(R.buf, "MALLOC_CONF=prof:true"));
	assert_int_equal(fake.resets, 2);
}

/* dump_on_growth compares stats.allocated with the last dump's. */
static void test_growth(void **state)
{
	(void)state;
	assert_false(core_growth_due(&core)); /* off */
	/* Off, a dump reads no baseline: no epoch, the costly part. */
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(fake.epochs, 0);
	assert_false(core.alloc_known);
	cfg_set("dump_on_growth", "1K");
	reload_policy();
	fake.allocated = 10000;
	assert_false(core_growth_due(&core)); /* takes the baseline */
	fake.allocated = 10000 + 1023;
	assert_false(core_growth_due(&core));
	fake.allocated = 10000 + 1024;
	assert_true(core_growth_due(&core));
	/* A dump moves the baseline. */
	fake.epochs = 0;
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(fake.epochs, 1);
	assert_false(core_growth_due(&core));
	cfg_set("dump_on_growth", "50%");
	reload_policy();
	fake.allocated = 11024 + 5511; /* 50% of 11024 is 5512 */
	assert_false(core_growth_due(&core));
	fake.allocated = 11024 + 5512;
	assert_true(core_growth_due(&core));
	fake.allocated = 100; /* shrinking is never growth */
	assert_false(core_growth_due(&core));
}

/* Without config.prof, the profiling words say how to get it. */
static void test_prof_not_built(void **state)
{
	const char *words[] = {"jmfp", "jmep", "jmdp"};
	size_t i;

	(void)state;
	fake.fail_name = "opt.prof";
	fake.fail_errno = ENOENT;
	for (i = 0; i < 3; i++) {
		assert_int_equal(run(words[i]), PROTO_ERROR);
		assert_true(starts(R.buf,
		    "error: this jemalloc was built "
		    "without heap profiling"));
		assert_non_null(strstr(R.buf, "--enable-prof"));
	}
	fake.fail_errno = EPERM;
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: cannot read opt.prof: "));
}

/*
 * Regression: opt.prof that cannot be read (EAGAIN here) is a failure,
 * not the rate limit (HTTP answered 429 when it guessed from the errno);
 * the reason is typed, and one table turns it into a status.
 */
static void test_prof_unreadable_is_no_rate_limit(void **state)
{
	struct out out = {.write = collect, .arg = &R};
	struct proto_result res;

	(void)state;
	fake.fail_name = "opt.prof";
	fake.fail_errno = EAGAIN;
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: cannot read opt.prof: "));
	assert_int_equal(D.status, DUMP_REFUSED);
	assert_int_equal(D.why, REASON_FAILED);
	assert_int_equal(http_status_of(D.why), 500);
	memset(&R, 0, sizeof(R));
	assert_int_equal(proto_dispatch(&P, "jmep", &out, &res), PROTO_ERROR);
	assert_int_equal(res.why, REASON_FAILED);
	fake.fail_name = NULL;
	fake.fail_errno = 0;
	fake.opt_prof = false;
	memset(&R, 0, sizeof(R));
	assert_int_equal(proto_dispatch(&P, "jmep", &out, &res), PROTO_ERROR);
	assert_int_equal(res.why, REASON_PROF_OFF);
	assert_int_equal(http_status_of(res.why), 501);
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_int_equal(D.why, REASON_PROF_OFF);
	assert_int_equal(http_status_of(REASON_RATE), 429);
	assert_int_equal(http_status_of(REASON_NOT_ALLOWED), 403);
}

/* With opt.prof off, the words say what to set. */
static void test_prof_off_says_what_to_set(void **state)
{
	const char *words[] = {"jmfp", "jmep", "jmdp"};
	size_t i;

	(void)state;
	fake.opt_prof = false;
	for (i = 0; i < 3; i++) {
		assert_int_equal(run(words[i]), PROTO_ERROR);
		assert_true(
		    starts(R.buf, "error: heap profiling is not enabled"));
		assert_non_null(
		    strstr(R.buf, "MALLOC_CONF=prof:true,prof_active:false"));
	}
	assert_int_equal(fake.dumps, 0);
}

/* jmep/jmdp switch prof.active and say what it was. */
static void test_jmep_jmdp(void **state)
{
	(void)state;
	assert_int_equal(run("jmep"), PROTO_OK);
	assert_string_equal(R.buf,
	    "ok: profiling active (prof.active=true, was false); profiles hold "
	    "only allocations made from now on\n");
	assert_true(fake.prof_active);
	assert_int_equal(run("jmep"), PROTO_OK);
	assert_non_null(strstr(R.buf, "was true"));
	assert_int_equal(run("jmdp"), PROTO_OK);
	assert_string_equal(R.buf,
	    "ok: profiling inactive (prof.active=false, was true)\n");
	assert_false(fake.prof_active);
}

/* prof.active failing with each errno: an error line naming it. */
static void test_prof_active_errnos(void **state)
{
	const int errs[] = {EFAULT, EPERM, EINVAL, ENOENT};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		fake.fail_name = "prof.active";
		fake.fail_errno = errs[i];
		assert_int_equal(run(i % 2 ? "jmdp" : "jmep"), PROTO_ERROR);
		assert_true(starts(R.buf, "error: cannot set prof.active: "));
		assert_non_null(strstr(R.buf, strerror(errs[i])));
	}
}

/* jmpg purges every arena and reports resident before and after. */
static void test_jmpg(void **state)
{
	(void)state;
	assert_int_equal(run("mntr"), PROTO_OK);
	fake.epochs = 0;
	assert_int_equal(run("jmpg"), PROTO_OK);
	assert_true(
	    starts(R.buf, "ok: purged all arenas (resident 19 B -> 19 B)"));
	/* Before and after: never coalesced. */
	assert_int_equal(fake.epochs, 2);
	/* Without stats.resident, no made-up figures. */
	fake.fail_name = "stats.resident";
	fake.fail_errno = ENOENT;
	assert_int_equal(run("jmpg"), PROTO_OK);
	assert_string_equal(R.buf, "ok: purged all arenas\n");
	assert_int_equal(fake.purges, 2);
	fake.fail_name = "arena.4096.purge";
	fake.fail_errno = EFAULT;
	assert_int_equal(run("jmpg"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: purge failed: "));
}

/* Every built-in word is found by its name and answers something. */
static void test_every_word_is_one_reply(void **state)
{
	const struct proto_word *w;

	(void)state;
	for (w = proto_words; w->name != NULL; w++) {
		assert_int_equal(strlen(w->name), 4);
		assert_ptr_equal(proto_lookup(w->name), w);
		run(w->name);
		if (R.len == 0)
			fail_msg("%s: no reply", w->name);
	}
}

/* A host word that wants jmfp's reply now (the dump runs in place). */
static int host_jmfp(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	return jm4lw_reply_builtin(r, "jmfp");
}

/*
 * One dump at a time: while a dump is out on the worker, another jmfp, a
 * scheduled dump and a host word's jmfp are refused at once, not queued,
 * and each refusal is counted.
 */
static void test_dump_in_progress(void **state)
{
#define BUSY "refused: a dump is in progress; retry when it is done"
	static const char busy[] = "jmfp " BUSY;
	static struct job job;
	struct dump_result r;

	(void)state;
	assert_int_equal(proto_add_word(&P, "hjfp", host_jmfp, NULL, 0), 0);
	assert_int_equal(core_job_admit(&core, &job, &dumper,
	                     &(struct job_req){.kind = &job_dump,
	                         .who = "jmfp",
	                         .answer = DUMP_ANSWER_PATH},
	                     &r),
	    0);
	assert_true(core.dump_running);

	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_string_equal(R.buf, "error: jmfp " BUSY "\n");
	assert_int_equal(D.status, DUMP_REFUSED);
	assert_int_equal(D.err, EBUSY);
	assert_int_equal(D.why, REASON_BUSY);
	assert_true(D.retry_after > 0);
	assert_int_equal(core.st.dumps_refused, 1);
	assert_int_equal(core_job_admit(&core, &job, &dumper,
	                     &(struct job_req){.kind = &job_dump,
	                         .answer = DUMP_ANSWER_PATH},
	                     &r),
	    -1);
	assert_string_equal(r.reason, "dump " BUSY);
	assert_int_equal(core.st.dumps_refused, 2);
	assert_int_equal(run("hjfp"), PROTO_ERROR);
	assert_non_null(strstr(R.buf, busy));
	assert_int_equal(core.st.dumps_refused, 3);
	assert_int_equal(fake.dumps, 0);
	assert_true(core.dump_running);

	/* The worker's part, then the loop's: the next dump may go. */
	job_run(&job);
	assert_int_equal(job.res.status, DUMP_OK);
	assert_int_equal(fake.dumps, 1);
	core_job_done(&core, &job);
	assert_false(core.dump_running);
	assert_int_equal(core.st.dumps_written, 1);
	assert_string_equal(core.last_dump, job.res.path);
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(run("hjfp"), PROTO_OK);
	assert_int_equal(core.st.dumps_written, 3);
	assert_int_equal(core.st.dumps_refused, 3);
	assert_int_equal(dir_entries(), 3);
#undef BUSY
}

/*
 * @p got lists, joined by @p sep and the last by @p last, the named rows
 * of views[] that @p which takes (0 every one, 1 the rendered, 2 what a
 * merge draws), @p first's first (-1: none), the rest in the table's
 * order: a row is never left out, repeated or moved.
 */
static void expect_view_list(const char *got, int which, int first,
    const char *sep, const char *last)
{
	char want[256];
	size_t used = 0;
	int v, n = 0, total = 0, pass;

	for (v = 0; v < DUMP_VIEW_COUNT; v++)
		if (views[v].name != NULL &&
		    (which == 0 || (which == 1 && views[v].render != NULL) ||
		        (which == 2 && view_merges(v))))
			total++;
	assert_true(total >= 2);
	want[0] = '\0';
	for (pass = 0; pass < 2; pass++)
		for (v = 0; v < DUMP_VIEW_COUNT; v++) {
			if (views[v].name == NULL ||
			    (which == 1 && views[v].render == NULL) ||
			    (which == 2 && !view_merges(v)) ||
			    (pass == 0) != (v == first))
				continue;
			used += (size_t)snprintf(want + used,
			    sizeof(want) - used, "%s%s",
			    n == 0               ? ""
			        : n == total - 1 ? last
			                         : sep,
			    views[v].name);
			n++;
		}
	assert_int_equal(n, total);
	assert_string_equal(got, want);
	/* A merge takes neither a dump as written nor one process's rows. */
	for (v = 0; which == 2 && v < DUMP_VIEW_COUNT; v++)
		if (view_merges(v))
			assert_true(
			    !views[v].carries_dump && !views[v].one_process);
}

/*
 * The views' table: each format name finds its row, the kept views are
 * the ones of the words that keep a dump, and a word that answers with a
 * view is the word whose allow-list entry governs it on HTTP.
 */
static void test_views_table(void **state)
{
	const struct proto_word *w;
	char names[128];
	int v;

	(void)state;
	for (v = 0; v < DUMP_VIEW_COUNT; v++) {
		assert_non_null(views[v].ctype);
		/* A named view is downloadable: the page names its file. */
		assert_true(views[v].name == NULL || views[v].suffix != NULL);
		assert_non_null(views[v].word);
		if (views[v].name != NULL)
			assert_int_equal(view_by_name(views[v].name), v);
		assert_int_equal(views[v].keeps, v == DUMP_VIEW_DIFF);
	}
	assert_int_equal(view_by_name("gif"), -1);
	/* The lists usage texts and error lines show are the table's
	 * named rows, in its order, as a sentence. */
	expect_view_list(view_names(names, sizeof(names), 0), 0, -1, ", ",
	    " or ");
	expect_view_list(view_names(names, sizeof(names), 1), 1, -1, ", ",
	    " or ");
	/* The route help's, and --merge's with the default first. */
	expect_view_list(view_join(names, sizeof(names), NULL, -1, "|", "|"), 0,
	    -1, "|", "|");
	expect_view_list(view_join(names, sizeof(names), view_merges,
	                     DUMP_VIEW_TEXT, ", ", " or "),
	    2, DUMP_VIEW_TEXT, ", ", " or ");
	for (w = proto_words; w->name != NULL; w++)
		if (w->job == &job_dump && w->answer == DUMP_ANSWER_VIEW)
			assert_string_equal(views[w->view].word, w->name);
}

/*
 * Every kind in job_table[] is whole: a name for its lines, steps, a lock
 * window that is one of its steps, a sharing rule where it shares; a
 * kind nobody asks for (the schedule's housekeeping) answers no word.
 * Every word's kind is in the table and renders its answer.
 */
static void test_job_table(void **state)
{
	const struct proto_word *w;
	const struct job_kind *k;
	size_t i, n, s, locked;

	(void)state;
	for (n = 0; (k = job_table[n]) != NULL; n++) {
		assert_non_null(k->name);
		assert_true(k->name[0] != '\0');
		assert_non_null(k->steps[0]);
		for (s = 0, locked = 0; s < JOB_STEPS_MAX && k->steps[s]; s++)
			locked += k->steps[s] == k->locked;
		assert_int_equal(locked, k->locked != NULL);
		assert_int_equal(k->shares, k->same != NULL);
		assert_false(k->lends && !k->counted);
		for (i = 0; i < n; i++)
			assert_ptr_not_equal(job_table[i], k);
	}
	assert_true(n >= 11);
	for (w = proto_words; w->name != NULL; w++)
		if (w->job != NULL) {
			assert_true(in_job_table(w->job));
			assert_non_null(w->job->admit);
			assert_non_null(w->job->render);
			assert_false(w->job->unasked);
		}
	assert_true(in_job_table(&job_snap) && job_snap.unasked);
	assert_true(in_job_table(&job_adopt) && job_adopt.unasked);
}

/*
 * jmfp is the one built-in that answers later: dispatch hands back a
 * dump job and writes nothing; the allow list and a host's own jmfp are
 * answered at once, as before.
 */
static void test_jmfp_is_a_job(void **state)
{
	struct out out = {.write = collect, .arg = &R};
	const struct proto_word *w;
	struct proto_result res = {.req.kind = NULL};
	int n = 5;

	(void)state;
	for (w = proto_words; w->name != NULL; w++)
		if (strcmp(w->name, "jmfp") == 0 ||
		    strcmp(w->name, "jmdf") == 0) { /* they keep a dump */
			assert_ptr_equal(w->job, &job_dump);
			assert_true(w->flags & PROTO_F_MUTATES);
		} else if (strcmp(w->name, "jmlk") == 0) { /* reads dumps */
			assert_ptr_equal(w->job, &job_leaks);
			assert_false(w->flags & PROTO_F_MUTATES);
		} else if (strcmp(w->name, "jmrc") == 0) { /* reads records */
			assert_ptr_equal(w->job, &job_recent);
			assert_false(w->flags & PROTO_F_MUTATES);
		} else if (strcmp(w->name, "jmgr") == 0 ||
		    strcmp(w->name, "jmpk") == 0) { /* read snapshots */
			assert_true(
			    w->job == &job_since || w->job == &job_peak);
			assert_false(w->flags & PROTO_F_MUTATES);
		} else if (w->job == &job_dump) { /* they keep nothing */
			assert_ptr_equal(w->job, &job_dump);
			assert_false(w->flags & PROTO_F_MUTATES);
		} else if (w->job != NULL) { /* a kind of its own */
			assert_true(in_job_table(w->job));
		} else {
			assert_null(w->job);
			assert_non_null(w->fn);
		}
	memset(&R, 0, sizeof(R));
	assert_int_equal(proto_dispatch(&P, "jmfp", &out, &res), PROTO_JOB);
	assert_ptr_equal(res.req.kind, &job_dump);
	assert_int_equal(R.len, 0);
	assert_int_equal(core.st.words_served, 1);
	/* Nothing is admitted or begun until the module runs the job. */
	assert_false(core.dump_running);
	assert_false(core.dumped);
	assert_int_equal(fake.dumps, 0);
	assert_int_equal(dumper.stage[0], '\0');

	snprintf(cfg.allow, sizeof(cfg.allow), "ruok");
	res.req.kind = NULL;
	assert_int_equal(proto_dispatch(&P, "jmfp", &out, &res), PROTO_ERROR);
	assert_null(res.req.kind);
	assert_int_equal(res.why, REASON_NOT_ALLOWED);
	assert_string_equal(R.buf,
	    "jmfp is not executed because it is not in the whitelist.\n");

	snprintf(cfg.allow, sizeof(cfg.allow), "*");
	assert_int_equal(proto_add_word(&P, "jmfp", host_wchs, &n, 0), 0);
	memset(&R, 0, sizeof(R));
	assert_int_equal(proto_dispatch(&P, "jmfp", &out, &res), PROTO_OK);
	assert_null(res.req.kind);
	assert_memory_equal(R.buf, "watches: 5\n", 11);
	assert_int_equal(fake.dumps, 0);
}

/*
 * One table of figures: figures_read() gives every row a value here,
 * figure_find() finds each by key (and not one this process lacks), and
 * mntr renders every row, in the table's order.
 */
static void test_figures(void **state)
{
	struct figure_value v[FIGURES_MAX];
	const struct figure_value *f;
	const char *line;
	size_t i, n;

	(void)state;
	assert_true(figures_count <= FIGURES_MAX);
	assert_int_equal(run("jmfp"), PROTO_OK); /* jm4lw_last_dump* too */
	core.st.conns_evicted = 4;
	/* dump_on_memory's figures show once it has read a limit. */
	core.mem.have = 1;
	core.mem.last.source = MEMORY_CGROUP_V1;
	core.mem.threshold = 1;
	figures_read(&core, v);
	for (i = 0; i < figures_count; i++) {
		assert_true(v[i].have);
		assert_ptr_equal(figure_find(v, figures[i].key), &v[i]);
		if (figures[i].type == FIG_TEXT)
			assert_non_null(v[i].s);
		if (figures[i].metric == NULL)
			assert_int_equal(figures[i].type, FIG_TEXT);
	}
	assert_null(figure_find(v, "nope"));
	assert_null(figure_find(v, "jm4lw_connections_evicted_total"));
	assert_int_equal(figure_find(v, "jm4lw_connections_evicted")->u, 4);
	assert_int_equal(figure_find(v, "jm4lw_dumps_written")->u, 1);
	assert_int_equal(figure_find(v, "jemalloc_allocated")->u, 12345);
	assert_int_equal(figure_find(v, "jemalloc_opt_prof")->u, 1);
	assert_string_equal(figure_find(v, "jm4lw_last_dump")->s,
	    core.last_dump);
	assert_string_equal(figure_find(v, "jemalloc_version")->s,
	    "5.3.0-fake");
	fake.fail_name = "prof.active";
	fake.fail_errno = ENOENT;
	figures_read(&core, v);
	assert_null(figure_find(v, "jemalloc_prof_active"));
	assert_non_null(f = figure_find(v, "jemalloc_opt_prof"));
	assert_int_equal(f->u, 1);
	fake.fail_name = NULL;

	core.last_dump_time = 86400 + 61;
	assert_int_equal(run("mntr"), PROTO_OK);
	for (i = 0, line = R.buf; i < figures_count; i++) {
		n = strlen(figures[i].key);
		assert_memory_equal(line, figures[i].key, n);
		assert_int_equal(line[n], '\t');
		assert_non_null(line = strchr(line, '\n'));
		line++;
	}
	assert_int_equal(*line, '\0');
	assert_non_null(strstr(R.buf, "\njm4lw_connections_evicted\t4\n"));
	assert_non_null(
	    strstr(R.buf, "\njm4lw_last_dump_time\t1970-01-02T00:01:01Z\n"));
}

/*
 * The policy is typed, parsed once when each key is set: growth and
 * prof.reset follow core.pol, the values in force, until a reload takes
 * the configuration's again (config_policy()).
 */
static void test_policy(void **state)
{
	struct core_policy pol;
	char err[256];

	(void)state;
	assert_int_equal(config_policy(&cfg, &pol, err, sizeof(err)), 0);
	assert_int_equal(pol.growth_bytes, 0);
	assert_int_equal(pol.growth_pct, 0);
	assert_int_equal(pol.reset_lg, -1); /* keep */
	cfg_set("dump_on_growth", "1K");
	cfg_set("prof_reset_lg_sample", "0");
	assert_int_equal(config_policy(&cfg, &pol, err, sizeof(err)), 0);
	assert_int_equal(pol.growth_bytes, 1024);
	assert_int_equal(pol.growth_pct, 0);
	assert_int_equal(pol.reset_lg, 0); /* 0 is a rate, not "keep" */
	cfg_set("dump_on_growth", "50%");
	assert_int_equal(config_policy(&cfg, &pol, err, sizeof(err)), 0);
	assert_int_equal(pol.growth_bytes, 0);
	assert_int_equal(pol.growth_pct, 50);

	/* The configuration changed, the policy in force did not. */
	fake.allocated = 1;
	assert_false(core_growth_due(&core));
	assert_int_equal(fake.epochs, 0);
	assert_false(core.alloc_known);
	assert_int_equal(run("jmrs"), PROTO_OK);
	assert_int_equal(fake.reset_lg, 19);

	/* Reloaded: 50% of the first look's 1000. */
	core.pol = pol;
	fake.allocated = 1000;
	assert_false(core_growth_due(&core)); /* the baseline */
	assert_true(core.alloc_known);
	fake.allocated = 1499;
	assert_false(core_growth_due(&core));
	fake.allocated = 1500;
	assert_true(core_growth_due(&core));
	/* prof.reset at the typed rate, prof.lg_sample not even read. */
	fake.fail_name = "prof.lg_sample";
	fake.fail_errno = EIO;
	assert_int_equal(run("jmrs"), PROTO_OK);
	assert_string_equal(R.buf,
	    "ok: profile reset (lg_prof_sample=0); every sample so far was "
	    "dropped: profiles now hold only allocations made from now on\n");
	assert_int_equal(fake.reset_lg, 0);
	core.pol.reset_lg = -1;
	assert_int_equal(run("jmrs"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: cannot read prof.lg_sample: "));
	assert_int_equal(fake.resets, 2);
	/* Growth off again: no look at stats.allocated at all. */
	memset(&core.pol, 0, sizeof(core.pol));
	fake.epochs = 0;
	assert_false(core_growth_due(&core));
	assert_int_equal(fake.epochs, 0);
}

/* Naming a thread for the profiles (jm4lw_thread_name's core): the
 * name reaches thread.prof.name; each refusal is its own errno, and a
 * refused name never reaches jemalloc. */
static void test_thread_name(void **state)
{
	(void)state;
	assert_int_equal(ctl_thread_name(&fake_ops, "io_thd_1"), 0);
	assert_string_equal(fake.thread_name, "io_thd_1");
	assert_int_equal(ctl_thread_name(&fake_ops, "a b\tc"), 0);
	assert_int_equal(ctl_thread_name(&fake_ops, "123456789012345"), 0);
	assert_int_equal(ctl_thread_name(&fake_ops, ""), 0); /* clears */
	assert_string_equal(fake.thread_name, "");
	assert_int_equal(ctl_thread_name(&fake_ops, "1234567890123456"),
	    ENAMETOOLONG);
	assert_int_equal(ctl_thread_name(&fake_ops, NULL), EINVAL);
	assert_int_equal(ctl_thread_name(&fake_ops, "a\nb"), EINVAL);
	assert_int_equal(ctl_thread_name(&fake_ops, "caf\xc3\xa9"), EINVAL);
	assert_int_equal(ctl_thread_name(&fake_ops, "del\x7f"), EINVAL);
	/* What jemalloc would write unescaped into prof_recent's JSON. */
	assert_int_equal(ctl_thread_name(&fake_ops, "io\"worker"), EINVAL);
	assert_int_equal(ctl_thread_name(&fake_ops, "back\\slash"), EINVAL);
	assert_string_equal(fake.thread_name, "");
	fake.opt_prof_sys_thread_name = true;
	assert_int_equal(ctl_thread_name(&fake_ops, "x"), EBUSY);
	fake.opt_prof_sys_thread_name = false;
	fake.opt_prof = false;
	assert_int_equal(ctl_thread_name(&fake_ops, "x"), ENOENT);
	fake.opt_prof = true;
	/* jemalloc built without profiling: no opt.prof at all. */
	fake.fail_name = "opt.prof";
	fake.fail_errno = ENOENT;
	assert_int_equal(ctl_thread_name(&fake_ops, "x"), ENOENT);
	fake.fail_name = "thread.prof.name";
	fake.fail_errno = EAGAIN;
	assert_int_equal(ctl_thread_name(&fake_ops, "x"), EAGAIN);
	assert_string_equal(fake.thread_name, "");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_frame_short),
	    T(test_thread_name),
	    T(test_frame_exact_and_trailing),
	    T(test_frame_binary),
	    T(test_ruok_exact_bytes),
	    T(test_case_sensitive),
	    T(test_unknown_binary_is_escaped),
	    T(test_no_prefix_matching),
	    T(test_allow_list),
	    T(test_allowed_matching),
	    T(test_host_words),
	    T(test_host_word_flags_and_allow),
	    T(test_host_word_validation),
	    T(test_mntr),
	    T(test_mntr_coalesces_epochs),
	    T(test_fmt_bytes),
	    T(test_answer_table),
	    T(test_mntr_leaves_out_what_fails),
	    T(test_srvr_and_conf),
	    T(test_jmst_jmsj),
	    T(test_jmfp_answers_before_its_index),
	    T(test_jmfp_writes_and_renames),
	    T(test_jmfp_cut_short),
	    T(test_jmfp_long_profiles),
	    T(test_stage_sweep),
	    T(test_stage_replaced),
	    T(test_jmfp_skips_existing_names),
	    T(test_jmfp_relative_dir_is_absolute),
	    T(test_jmfp_dir_missing),
	    T(test_jmfp_dir_is_a_file),
	    T(test_jmfp_dump_errnos),
	    T(test_jmfp_min_interval),
	    T(test_jmfp_min_free),
	    T(test_dumps_match),
	    T(test_retention_keep),
	    T(test_retention_future_mtime),
	    T(test_retention_bytes),
	    T(test_jmls),
	    T(test_jmrs),
	    T(test_growth),
	    T(test_policy),
	    T(test_dump_in_progress),
	    T(test_jmfp_is_a_job),
	    T(test_job_table),
	    T(test_views_table),
	    T(test_figures),
	    T(test_prof_not_built),
	    T(test_prof_unreadable_is_no_rate_limit),
	    T(test_prof_off_says_what_to_set),
	    T(test_jmep_jmdp),
	    T(test_prof_active_errnos),
	    T(test_jmpg),
	    T(test_every_word_is_one_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

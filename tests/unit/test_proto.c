/*
 * Unit tests of proto/: framing, the command table and every word's reply,
 * with the allocator faked so each mallctl can fail with each errno.
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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

/* The fake allocator's state; reset before every test. */
static struct {
	bool opt_prof;
	bool prof_active;
	size_t allocated;
	const char *fail_name; /* this mallctl ... */
	int fail_errno;        /* ... returns this */
	int epochs;            /* epoch writes seen */
	int epoch_at_stats;    /* epochs seen when stats_print ran */
	const char *stats_opts;
	int dumps;
	int dump_leaves_file; /* a failing dump writes a partial file first */
	char dump_name[4096];
	size_t reset_lg;
	int resets;
	int truncate; /* prof.dump "succeeds" with a cut-off file */
	/* A long profile: body bytes before MAPPED_LIBRARIES, map bytes
	 * after it (0 and 0: the short one), or no mark at all. */
	size_t body, maps;
	int no_mark;
	const char *fail_stats; /* this stats.* read fails with ENOENT */
	mode_t dump_dir_mode; /* of the directory prof.dump wrote in */
} F;

/* Write @p n bytes of profile-like lines, the last ending in "\n". */
static void fill(FILE *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fputc(i + 1 == n || i % 60 == 59 ? '\n' : 'a' + (int)(i % 26), f);
}

/* mallctl with the signature jemalloc has, answering from F. */
static int fake_mallctl(const char *name, void *oldp, size_t *oldlenp,
    void *newp, size_t newlen)
{
	int fd;

	if (F.fail_name != NULL && strcmp(name, F.fail_name) == 0) {
		if (strcmp(name, "prof.dump") == 0 && F.dump_leaves_file) {
			const char *path = *(const char **)newp;
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd != -1)
				close(fd);
		}
		return F.fail_errno;
	}
	if (strcmp(name, "epoch") == 0) {
		F.epochs++;
		return 0;
	}
	if (strcmp(name, "opt.prof") == 0) {
		assert_int_equal(*oldlenp, sizeof(bool));
		*(bool *)oldp = F.opt_prof;
		return 0;
	}
	if (strcmp(name, "prof.active") == 0) {
		if (oldp != NULL)
			*(bool *)oldp = F.prof_active;
		if (newp != NULL) {
			assert_int_equal(newlen, sizeof(bool));
			F.prof_active = *(bool *)newp;
		}
		return 0;
	}
	if (strcmp(name, "prof.dump") == 0) {
		const char *path = *(const char **)newp;
		FILE *f;
		assert_int_equal(newlen, sizeof(char *));
		char dir[4096], *slash;
		struct stat sb;
		snprintf(F.dump_name, sizeof(F.dump_name), "%s", path);
		snprintf(dir, sizeof(dir), "%s", path);
		if ((slash = strrchr(dir, '/')) != NULL)
			*slash = '\0';
		F.dump_dir_mode = stat(dir, &sb) == 0 ? sb.st_mode & 07777 : 0;
		f = fopen(path, "w");
		if (f == NULL)
			return EFAULT;
		if (F.truncate)
			fputs("heap_v2/524288\n  t*: 1: 524288 [", f);
		else if (F.body > 0 || F.maps > 0 || F.no_mark) {
			fill(f, F.body);
			if (!F.no_mark)
				fputs("\nMAPPED_LIBRARIES:\n", f);
			fill(f, F.maps);
		} else
			fputs("heap_v2/524288\n\nMAPPED_LIBRARIES:\n00-01 r-xp "
			    "x\n", f);
		fclose(f);
		F.dumps++;
		return 0;
	}
	if (F.fail_stats != NULL && strcmp(name, F.fail_stats) == 0)
		return ENOENT;
	if (strncmp(name, "stats.", 6) == 0 ||
	    strcmp(name, "prof.lg_sample") == 0) {
		assert_int_equal(*oldlenp, sizeof(size_t));
		*(size_t *)oldp = strcmp(name, "stats.allocated") == 0
				      ? F.allocated
				      : 19;
		return 0;
	}
	if (strcmp(name, "arena.4096.purge") == 0)
		return 0;
	if (strcmp(name, "prof.reset") == 0) {
		assert_int_equal(newlen, sizeof(size_t));
		F.reset_lg = *(size_t *)newp;
		F.resets++;
		return 0;
	}
	return ENOENT;
}

/* malloc_stats_print stand-in: two pieces, so joining is tested. */
static void fake_stats(void (*cb)(void *, const char *), void *arg,
    const char *opts)
{
	F.stats_opts = opts;
	F.epoch_at_stats = F.epochs;
	cb(arg, "___ Begin jemalloc statistics ___\n");
	cb(arg, "--- End jemalloc statistics ---\n");
}

static const struct proto_ops fake_ops = {
	.mallctl = fake_mallctl,
	.stats_print = fake_stats,
	.version = "5.3.0-fake",
};

/* A reply collected in memory. */
struct reply {
	char buf[8192];
	size_t len;
};

/* proto_out callback appending to a struct reply. */
static void collect(void *arg, const void *buf, size_t len)
{
	struct reply *r = arg;

	assert_true(r->len + len < sizeof(r->buf));
	memcpy(r->buf + r->len, buf, len);
	r->len += len;
	r->buf[r->len] = '\0';
}

static struct jm4lw_config cfg;
static struct proto P;
static struct reply R;
static char tmpdir[1024];

/* Run one word; returns proto_dispatch's result, reply in R. */
static int run(const char *word)
{
	struct proto_out out = {.write = collect, .arg = &R};

	memset(&R, 0, sizeof(R));
	return proto_dispatch(&P, word, &out);
}

/* Fresh fake allocator, config and a private dump directory. */
static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	memset(&F, 0, sizeof(F));
	F.opt_prof = true;
	F.allocated = 12345;
	jm4lw_config_init(&cfg);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_proto.XXXXXX",
	    t != NULL ? t : "/tmp");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", tmpdir);
	cfg.dump_min_interval = 0; /* tests dump back to back */
	proto_init(&P, &fake_ops, &cfg);
	return 0;
}

/* Remove the dump directory and whatever a test left in it. */
static int teardown(void **state)
{
	char cmd[4200];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* Does @p s start with @p prefix? */
static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Entries in directory @p path, but "." and ".." and @p skip. */
static int count_entries(const char *path, const char *skip)
{
	struct dirent *de;
	DIR *d = opendir(path);
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    (skip == NULL || strcmp(de->d_name, skip) != 0))
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

	if (P.stage[0] != '\0') {
		assert_int_equal(count_entries(P.stage, NULL), 0);
		stage = strrchr(P.stage, '/') + 1;
	}
	return count_entries(tmpdir, stage);
}

static void test_frame_short(void **state)
{
	char w[4] = {0};

	(void)state;
	assert_int_equal(proto_frame("", 0, w), 0);
	assert_int_equal(proto_frame("r", 1, w), 0);
	assert_int_equal(proto_frame("ru", 2, w), 0);
	assert_int_equal(proto_frame("ruo", 3, w), 0);
}

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

static void test_frame_binary(void **state)
{
	const char junk[] = {'\0', '\xff', '\n', '"', 'x'};
	char w[4];

	(void)state;
	assert_int_equal(proto_frame(junk, sizeof(junk), w), 4);
	assert_memory_equal(w, junk, 4);
}

static void test_ruok_exact_bytes(void **state)
{
	(void)state;
	assert_int_equal(run("ruok"), PROTO_OK);
	assert_int_equal(R.len, 4);
	assert_memory_equal(R.buf, "imok", 4);
}

static void test_case_sensitive(void **state)
{
	(void)state;
	assert_int_equal(run("RUOK"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: unknown word \"RUOK\"; known words:"));
	assert_int_equal(P.st.words_unknown, 1);
}

static void test_unknown_binary_is_escaped(void **state)
{
	(void)state;
	assert_int_equal(run("\x00\xff\"\\"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: unknown word \"\\x00\\xff\\x22\\x5c\""));
	assert_non_null(strstr(R.buf, " ruok mntr"));
	assert_int_equal(R.buf[R.len - 1], '\n');
	assert_null(memchr(R.buf, '\0', R.len));
	/* One line only. */
	assert_ptr_equal(strchr(R.buf, '\n'), R.buf + R.len - 1);
}

static void test_no_prefix_matching(void **state)
{
	(void)state;
	assert_int_equal(run("ruo\n"), PROTO_ERROR);
	assert_null(proto_lookup("ruo\0"));
	assert_non_null(proto_lookup("jmfp"));
}

static void test_allow_list(void **state)
{
	(void)state;
	snprintf(cfg.allow, sizeof(cfg.allow), "ruok, mntr");
	assert_int_equal(run("ruok"), PROTO_OK);
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_string_equal(R.buf,
	    "jmfp is not executed because it is not in the whitelist.\n");
	assert_int_equal(P.st.words_refused, 1);
	assert_int_equal(F.dumps, 0);
	/* Unknown stays unknown, even with an allow list. */
	assert_int_equal(run("xxxx"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: unknown word"));
}

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

static void test_host_word_flags_and_allow(void **state)
{
	int n = 1;

	(void)state;
	assert_int_equal(proto_add_word(&P, "wchs", host_wchs, &n, 0), 0);
	assert_int_equal(proto_add_word(&P, "kill", host_wchs, &n,
	    JM4LW_WORD_MUTATES), 0);
	snprintf(cfg.allow, sizeof(cfg.allow), "readonly");
	assert_int_equal(run("wchs"), PROTO_OK);
	assert_int_equal(run("kill"), PROTO_ERROR);
	assert_string_equal(R.buf,
	    "kill is not executed because it is not in the whitelist.\n");
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_int_equal(run("jmst"), PROTO_OK);
	assert_int_equal(F.dumps, 0);
}

static void test_host_word_validation(void **state)
{
	int i;
	char name[16];

	(void)state;
	assert_int_equal(proto_add_word(&P, "abc", host_wchs, NULL, 0), -1);
	assert_int_equal(proto_add_word(&P, "abcde", host_wchs, NULL, 0), -1);
	assert_int_equal(proto_add_word(&P, "ab c", host_wchs, NULL, 0), -1);
	assert_int_equal(proto_add_word(&P, "ab,c", host_wchs, NULL, 0), -1);
	assert_int_equal(proto_add_word(&P, "ab\xff" "c", host_wchs, NULL, 0), -1);
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
	    "nope"), -1);
}

static void test_mntr(void **state)
{
	(void)state;
	P.st.conns_open = 3;
	assert_int_equal(run("mntr"), PROTO_OK);
	assert_true(starts(R.buf, "jm4lw_version\t" JM4LW_VERSION "\n"));
	assert_non_null(strstr(R.buf, "\njm4lw_open_connections\t3\n"));
	assert_non_null(strstr(R.buf, "\njm4lw_words_served\t1\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_version\t5.3.0-fake\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_opt_prof\ttrue\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_prof_active\tfalse\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_lg_prof_sample\t19\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_allocated\t12345\n"));
	assert_non_null(strstr(R.buf, "\njemalloc_retained\t19\n"));
	assert_null(strstr(R.buf, "jm4lw_last_dump"));
	assert_int_equal(F.epochs, 1);
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
		assert_int_equal(F.epochs, 1);
	else
		assert_in_range(F.epochs, 1, 5);
	F.epochs = 0;
	nanosleep(&ms2, NULL);
	assert_int_equal(run("mntr"), PROTO_OK);
	assert_int_equal(F.epochs, 1);
	assert_int_equal(run("mntr"), PROTO_OK);
	nanosleep(&ms2, NULL);
	assert_int_equal(run("mntr"), PROTO_OK);
	assert_in_range(F.epochs, 2, 3);
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
	assert_string_equal(fmt_bytes(b, sizeof(b), (size_t)1 << 50), "1.0 PiB");
	assert_string_equal(fmt_bytes(b, sizeof(b), SIZE_MAX), "16.0 EiB");
}

static void test_mntr_leaves_out_what_fails(void **state)
{
	(void)state;
	F.fail_name = "prof.active";
	F.fail_errno = ENOENT;
	assert_int_equal(run("mntr"), PROTO_OK);
	assert_null(strstr(R.buf, "jemalloc_prof_active"));
	assert_non_null(strstr(R.buf, "jemalloc_allocated\t12345\n"));
}

static void test_srvr_and_conf(void **state)
{
	(void)state;
	F.prof_active = true;
	assert_int_equal(run("srvr"), PROTO_OK);
	assert_true(starts(R.buf, "jm4lw version: " JM4LW_VERSION));
	assert_non_null(strstr(R.buf, "\nProfiling: active\n"));
	assert_non_null(strstr(R.buf, "\nMode: standalone\n"));
	F.opt_prof = false;
	assert_int_equal(run("srvr"), PROTO_OK);
	assert_non_null(strstr(R.buf, "\nProfiling: off\n"));

	snprintf(cfg.dump_prefix, sizeof(cfg.dump_prefix), "svc");
	assert_int_equal(run("conf"), PROTO_OK);
	assert_non_null(strstr(R.buf, "listen=127.0.0.1:9181\n"));
	assert_non_null(strstr(R.buf, "\nallow=*\n"));
	assert_non_null(strstr(R.buf, "\ndump_prefix=svc\n"));
	assert_non_null(strstr(R.buf, "\nmax_connections=64\n"));
	assert_non_null(strstr(R.buf, "\nread_timeout=5\n"));
	assert_non_null(strstr(R.buf, "\nwrite_timeout=30\n"));
	assert_non_null(strstr(R.buf, "\nallow_from=127.0.0.0/8,::1\n"));
	assert_non_null(strstr(R.buf, "\ndump_min_interval=0\n"));
	assert_non_null(strstr(R.buf, "\ndump_min_free=67108864\n"));
}

static void test_jmst_jmsj(void **state)
{
	(void)state;
	assert_int_equal(run("jmst"), PROTO_OK);
	assert_string_equal(R.buf, "___ Begin jemalloc statistics ___\n"
				   "--- End jemalloc statistics ---\n");
	assert_null(F.stats_opts);
	/* malloc_stats_print refreshes the epoch itself: no second one. */
	assert_int_equal(F.epochs, 0);
	assert_int_equal(run("jmsj"), PROTO_OK);
	assert_string_equal(F.stats_opts, "J");
	assert_int_equal(R.buf[R.len - 1], '\n');
}

static void test_jmfp_writes_and_renames(void **state)
{
	char want[4200], stage[sizeof(P.stage)];
	struct stat sb;

	(void)state;
	assert_int_equal(run("jmfp"), PROTO_OK);
	snprintf(want, sizeof(want), "%s/jm4lw.%ld.0.heap\n", tmpdir,
	    (long)getpid());
	assert_string_equal(R.buf, want);
	want[strlen(want) - 1] = '\0';
	assert_int_equal(stat(want, &sb), 0);
	/* jemalloc wrote in the staging directory: 0700, ours, empty again. */
	snprintf(stage, sizeof(stage), "%s/.jm4lw.%ld.", tmpdir,
	    (long)getpid());
	assert_true(starts(P.stage, stage));
	assert_int_equal(strlen(P.stage), strlen(stage) + 6);
	assert_true(starts(F.dump_name, P.stage));
	assert_string_equal(F.dump_name + strlen(P.stage), want +
	    strlen(tmpdir));
	assert_int_equal(F.dump_dir_mode, 0700);
	assert_int_equal(stat(F.dump_name, &sb), -1);
	assert_int_equal(dir_entries(), 1);
	assert_int_equal(P.st.dumps_written, 1);
	assert_string_equal(P.last_dump, want);
	/* Profiles show addresses: for our user only. */
	assert_int_equal(stat(want, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	/* The next dump stages in the same directory... */
	snprintf(stage, sizeof(stage), "%s", P.stage);
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_string_equal(P.stage, stage);
	assert_int_equal(dir_entries(), 2);
	/* ...and the module's end removes it. */
	proto_fini(&P);
	assert_int_equal(stat(stage, &sb), -1);
	assert_int_equal(count_entries(tmpdir, NULL), 2);
	assert_int_equal(run("jmfp"), PROTO_OK); /* a new one, on demand */
	assert_int_equal(stat(P.stage, &sb), 0);
	assert_string_not_equal(P.stage, stage);
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
	char live[64], link[64], odd[64], path[4400];
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
	snprintf(live, sizeof(live), ".jm4lw.%ld.alive1", (long)getppid());
	make_stage(live, NULL, 3600);
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
	assert_true(exists(live));
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

/* A staging directory someone replaced (a symlink now) is not used. */
static void test_stage_replaced(void **state)
{
	char saved[sizeof(P.stage)], aside[sizeof(P.stage) + 8];
	struct stat sb;

	(void)state;
	assert_int_equal(run("jmfp"), PROTO_OK);
	snprintf(saved, sizeof(saved), "%s", P.stage);
	snprintf(aside, sizeof(aside), "%s.aside", saved);
	assert_int_equal(rename(saved, aside), 0);
	assert_int_equal(symlink(aside, saved), 0);
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_string_not_equal(P.stage, saved);
	assert_true(starts(F.dump_name, P.stage));
	assert_int_equal(lstat(saved, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_int_equal(count_entries(aside, NULL), 0);
}

/* A profile cut short (the disk filled; jemalloc calls that a success) is
 * a failure, and its file is gone. */
static void test_jmfp_cut_short(void **state)
{
	(void)state;
	F.truncate = 1;
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: heap profile dump to "));
	assert_non_null(strstr(R.buf, "cut short"));
	assert_int_equal(dir_entries(), 0);
	assert_int_equal(P.st.dumps_failed, 1);
	assert_int_equal(P.st.dumps_written, 0);
}

/*
 * The completeness check reads the profile from its end: a mark far from
 * the end, one split across two read windows, and none at all.
 */
static void test_jmfp_long_profiles(void **state)
{
	enum { W = PROTO_DUMP_TAIL_CHUNK };
	static const struct {
		size_t body, maps;
		int no_mark, whole;
	} c[] = {
		{300000, 100, 0, 1},      /* mark in the last window */
		{300000, 200000, 0, 1},   /* many windows back */
		{300000, W - 9, 0, 1},    /* mark split by a window's edge */
		{300000, W - 19, 0, 1},
		{300000, W - 1, 0, 1},
		{W + 5000, W, 0, 1},      /* mark in the first, short window */
		{0, 5, 0, 1},             /* the mark is the file's start */
		{400000, 1000, 1, 0},     /* no mark anywhere */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		F.body = c[i].body;
		F.maps = c[i].maps;
		F.no_mark = c[i].no_mark;
		if (c[i].whole) {
			assert_int_equal(run("jmfp"), PROTO_OK);
		} else {
			assert_int_equal(run("jmfp"), PROTO_ERROR);
			assert_non_null(strstr(R.buf, "cut short"));
		}
	}
	assert_int_equal(dir_entries(), 7);
}

static void test_jmfp_skips_existing_names(void **state)
{
	char path[2048];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/jm4lw.%ld.0.heap", tmpdir,
	    (long)getpid());
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd != -1);
	close(fd);
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_non_null(strstr(R.buf, ".1.heap\n"));
	assert_int_equal(dir_entries(), 2);
}

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

static void test_jmfp_dir_missing(void **state)
{
	(void)state;
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s/nope", tmpdir);
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: heap profile dump to "));
	assert_non_null(strstr(R.buf, "/nope failed: No such file or directory\n"));
	assert_int_equal(P.st.dumps_failed, 1);
	assert_int_equal(F.dumps, 0);
}

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
		F.fail_name = "prof.dump";
		F.fail_errno = errs[i];
		F.dump_leaves_file = 1;
		assert_int_equal(run("jmfp"), PROTO_ERROR);
		assert_true(starts(R.buf, "error: heap profile dump to "));
		assert_non_null(strstr(R.buf, tmpdir));
		assert_null(strstr(R.buf, ".heap"));
		if (errs[i] == EFAULT)
			assert_non_null(strstr(R.buf, "prof.dump returned EFAULT"));
		else
			assert_non_null(strstr(R.buf, strerror(errs[i])));
		assert_int_equal(dir_entries(), 0); /* partial file removed */
	}
	assert_int_equal(P.st.dumps_failed, 5);
	assert_int_equal(P.st.dumps_written, 0);
}

static void test_jmfp_min_interval(void **state)
{
	(void)state;
	cfg.dump_min_interval = 3600;
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: jmfp refused: the last dump was 0.0 s "
				  "ago and dump_min_interval is 3600 s; retry in "));
	assert_int_equal(P.st.dumps_refused, 1);
	assert_int_equal(F.dumps, 1);
	assert_int_equal(dir_entries(), 1);
	/* Failed dumps count as dumps: a storm of failures is a storm too. */
	cfg.dump_min_interval = 0;
	F.fail_name = "prof.dump";
	F.fail_errno = EFAULT;
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	cfg.dump_min_interval = 3600;
	F.fail_name = NULL;
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: jmfp refused: "));
	cfg.dump_min_interval = 0;
	assert_int_equal(run("jmfp"), PROTO_OK);
}

static void test_jmfp_min_free(void **state)
{
	(void)state;
	cfg.dump_min_free = ~0ULL >> 2; /* more than any disk here */
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: heap profile dump to "));
	assert_non_null(strstr(R.buf, " refused: "));
	assert_non_null(strstr(R.buf, " free, dump_min_free is "));
	assert_int_equal(F.dumps, 0);
	assert_int_equal(dir_entries(), 0);
	assert_int_equal(P.st.dumps_refused, 1);
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
	assert_false(dumps_match("jm4lw", "jm4lwx.1.0.heap"));
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
	plant("other.100.0.heap", 10, 10);       /* another prefix */
	plant("jm4lw.100.9.heap.tmp", 10, 10);   /* not a dump name */
	plant("notes.txt", 10, 10);
	snprintf(path, sizeof(path), "%s/jm4lw.5.5.heap", tmpdir);
	assert_int_equal(mkdir(path, 0755), 0);  /* a directory */
	snprintf(path, sizeof(path), "%s/jm4lw.6.6.heap", tmpdir);
	snprintf(target, sizeof(target), "%s/notes.txt", tmpdir);
	assert_int_equal(symlink(target, path), 0); /* a symlink */

	cfg.dump_keep = 2;
	assert_int_equal(run("jmfp"), PROTO_OK);
	/* The new dump and the newest old one stay. */
	assert_true(present("jm4lw.200.0.heap"));
	assert_false(present("jm4lw.100.1.heap"));
	assert_false(present("jm4lw.100.0.heap"));
	assert_int_equal(P.st.dumps_deleted, 2);
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
	assert_int_equal(P.st.dumps_deleted, 3);
	/* A cap below one dump still keeps the newest. */
	cfg.dump_max_bytes = 1;
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(dir_entries(), 1);
	assert_int_equal(P.st.dumps_deleted, 6);
}

static void test_jmls(void **state)
{
	char want[8192];

	(void)state;
	assert_int_equal(run("jmls"), PROTO_OK);
	snprintf(want, sizeof(want), "# 0 dumps, 0 bytes in %s (jm4lw.*.heap)\n",
	    tmpdir);
	assert_string_equal(R.buf, want);
	plant("jm4lw.7.0.heap", 3, 86400);
	plant("jm4lw.7.1.heap", 5, 2 * 86400 + 61);
	plant("other.7.1.heap", 5, 5);
	assert_int_equal(run("jmls"), PROTO_OK);
	snprintf(want, sizeof(want),
	    "# 2 dumps, 8 bytes in %s (jm4lw.*.heap)\n"
	    "%s/jm4lw.7.1.heap\t5\t1970-01-03T00:01:01Z\n"
	    "%s/jm4lw.7.0.heap\t3\t1970-01-02T00:00:00Z\n",
	    tmpdir, tmpdir, tmpdir);
	assert_string_equal(R.buf, want);
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s/nope", tmpdir);
	assert_int_equal(run("jmls"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: cannot list "));
}

static void test_jmrs(void **state)
{
	(void)state;
	assert_int_equal(run("jmrs"), PROTO_OK);
	assert_string_equal(R.buf, "ok: profile reset (lg_prof_sample=19)\n");
	assert_int_equal(F.reset_lg, 19);
	snprintf(cfg.prof_reset_lg_sample, sizeof(cfg.prof_reset_lg_sample),
	    "12");
	assert_int_equal(run("jmrs"), PROTO_OK);
	assert_int_equal(F.reset_lg, 12);
	F.fail_name = "prof.reset";
	F.fail_errno = EFAULT;
	assert_int_equal(run("jmrs"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: prof.reset failed: "));
	F.fail_name = NULL;
	F.opt_prof = false;
	assert_int_equal(run("jmrs"), PROTO_ERROR);
	assert_non_null(strstr(R.buf, "MALLOC_CONF=prof:true"));
	assert_int_equal(F.resets, 2);
}

static void test_growth(void **state)
{
	(void)state;
	assert_false(proto_growth_due(&P)); /* off */
	/* Off, a dump reads no baseline: no epoch, the costly part. */
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(F.epochs, 0);
	assert_false(P.alloc_known);
	snprintf(cfg.dump_on_growth, sizeof(cfg.dump_on_growth), "1K");
	F.allocated = 10000;
	assert_false(proto_growth_due(&P)); /* takes the baseline */
	F.allocated = 10000 + 1023;
	assert_false(proto_growth_due(&P));
	F.allocated = 10000 + 1024;
	assert_true(proto_growth_due(&P));
	/* A dump moves the baseline. */
	F.epochs = 0;
	assert_int_equal(run("jmfp"), PROTO_OK);
	assert_int_equal(F.epochs, 1);
	assert_false(proto_growth_due(&P));
	snprintf(cfg.dump_on_growth, sizeof(cfg.dump_on_growth), "50%%");
	F.allocated = 11024 + 5511; /* 50% of 11024 is 5512 */
	assert_false(proto_growth_due(&P));
	F.allocated = 11024 + 5512;
	assert_true(proto_growth_due(&P));
	F.allocated = 100; /* shrinking is never growth */
	assert_false(proto_growth_due(&P));
}

static void test_prof_not_built(void **state)
{
	const char *words[] = {"jmfp", "jmep", "jmdp"};
	size_t i;

	(void)state;
	F.fail_name = "opt.prof";
	F.fail_errno = ENOENT;
	for (i = 0; i < 3; i++) {
		assert_int_equal(run(words[i]), PROTO_ERROR);
		assert_true(starts(R.buf, "error: this jemalloc was built "
					  "without heap profiling"));
		assert_non_null(strstr(R.buf, "--enable-prof"));
	}
	F.fail_errno = EPERM;
	assert_int_equal(run("jmfp"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: cannot read opt.prof: "));
}

static void test_prof_off_says_what_to_set(void **state)
{
	const char *words[] = {"jmfp", "jmep", "jmdp"};
	size_t i;

	(void)state;
	F.opt_prof = false;
	for (i = 0; i < 3; i++) {
		assert_int_equal(run(words[i]), PROTO_ERROR);
		assert_true(starts(R.buf, "error: heap profiling is not enabled"));
		assert_non_null(strstr(R.buf,
		    "MALLOC_CONF=prof:true,prof_active:false"));
	}
	assert_int_equal(F.dumps, 0);
}

static void test_jmep_jmdp(void **state)
{
	(void)state;
	assert_int_equal(run("jmep"), PROTO_OK);
	assert_string_equal(R.buf,
	    "ok: profiling active (prof.active=true, was false)\n");
	assert_true(F.prof_active);
	assert_int_equal(run("jmep"), PROTO_OK);
	assert_non_null(strstr(R.buf, "was true"));
	assert_int_equal(run("jmdp"), PROTO_OK);
	assert_string_equal(R.buf,
	    "ok: profiling inactive (prof.active=false, was true)\n");
	assert_false(F.prof_active);
}

static void test_prof_active_errnos(void **state)
{
	const int errs[] = {EFAULT, EPERM, EINVAL, ENOENT};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		F.fail_name = "prof.active";
		F.fail_errno = errs[i];
		assert_int_equal(run(i % 2 ? "jmdp" : "jmep"), PROTO_ERROR);
		assert_true(starts(R.buf, "error: cannot set prof.active: "));
		assert_non_null(strstr(R.buf, strerror(errs[i])));
	}
}

static void test_jmpg(void **state)
{
	(void)state;
	assert_int_equal(run("mntr"), PROTO_OK);
	F.epochs = 0;
	assert_int_equal(run("jmpg"), PROTO_OK);
	assert_true(starts(R.buf, "ok: purged all arenas (resident 19 B -> 19 B)"));
	assert_int_equal(F.epochs, 2); /* before and after: never coalesced */
	/* Without stats.resident, no made-up figures. */
	F.fail_stats = "stats.resident";
	assert_int_equal(run("jmpg"), PROTO_OK);
	assert_string_equal(R.buf, "ok: purged all arenas\n");
	F.fail_stats = NULL;
	F.fail_name = "arena.4096.purge";
	F.fail_errno = EFAULT;
	assert_int_equal(run("jmpg"), PROTO_ERROR);
	assert_true(starts(R.buf, "error: purge failed: "));
}

static void test_every_word_is_one_reply(void **state)
{
	const struct proto_word *w;

	(void)state;
	for (w = proto_words; w->name != NULL; w++) {
		assert_int_equal(strlen(w->name), 4);
		assert_ptr_equal(proto_lookup(w->name), w);
		run(w->name);
		assert_true(R.len > 0);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_frame_short),
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
		T(test_mntr_leaves_out_what_fails),
		T(test_srvr_and_conf),
		T(test_jmst_jmsj),
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
		T(test_prof_not_built),
		T(test_prof_off_says_what_to_set),
		T(test_jmep_jmdp),
		T(test_prof_active_errnos),
		T(test_jmpg),
		T(test_every_word_is_one_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

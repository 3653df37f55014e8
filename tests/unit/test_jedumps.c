/*
 * Unit tests of where jemalloc's own dumps go (core/jedumps.c): prof.prefix
 * pointed into dump_dir at start and at a reload, the host's own
 * prof_prefix left alone, nothing done without profiling or with an
 * untrusted dump_dir, jemalloc_dumps = leave putting jemalloc's prefix
 * back; and prof.gdump's switch. The allocator is a table of our own
 * (core_ops), so each of jemalloc's answers can be chosen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_struct.h"
#include "jedumps.h"
#include "jm4lw.h"
#include "ops.h"
#include "util.h"

/* What the fake jemalloc answers, and what it was told. */
static struct {
	const char *opt_prefix; /* opt.prof_prefix; NULL: ENOENT (no prof) */
	int prefix_errno;       /* prof.prefix's answer */
	char prefix[PATH_MAX + 64]; /* the last prof.prefix written */
	int prefix_writes;
	bool gdump; /* prof.gdump */
} je;

static int fake_mallctl(const char *name, void *oldp, size_t *oldlenp,
    void *newp, size_t newlen)
{
	if (strcmp(name, "opt.prof_prefix") == 0) {
		if (je.opt_prefix == NULL)
			return ENOENT;
		assert_int_equal(*oldlenp, sizeof(const char *));
		assert_null(newp);
		*(const char **)oldp = je.opt_prefix;
		return 0;
	}
	if (strcmp(name, "prof.prefix") == 0) {
		/* jemalloc's own rules: write-only, a const char *. */
		assert_null(oldp);
		assert_int_equal(newlen, sizeof(const char *));
		if (je.opt_prefix == NULL)
			return ENOENT;
		if (je.prefix_errno != 0)
			return je.prefix_errno;
		snprintf(je.prefix, sizeof(je.prefix), "%s",
		    *(const char **)newp);
		je.prefix_writes++;
		return 0;
	}
	if (strcmp(name, "prof.gdump") == 0) {
		if (je.opt_prefix == NULL)
			return ENOENT;
		assert_int_equal(*oldlenp, sizeof(bool));
		*(bool *)oldp = je.gdump;
		if (newp != NULL) {
			assert_int_equal(newlen, sizeof(bool));
			je.gdump = *(bool *)newp;
		}
		return 0;
	}
	fail_msg("unexpected mallctl %s", name);
	return EINVAL;
}

static const struct core_ops ops = {.mallctl = fake_mallctl,
    .version = "5.3.0-fake"};

static char dir[PATH_MAX], real[PATH_MAX], out[PATH_MAX], line[1024];
static struct jm4lw_config cfg;

/* A fresh private dump_dir, the defaults, and jemalloc's "jeprof". */
static int setup(void **state)
{
	const char *t = getenv("TMPDIR");
	char err[256];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_jedumps.XXXXXX",
	    t != NULL && t[0] != '\0' ? t : "/tmp");
	if (mkdtemp(dir) == NULL || realpath(dir, real) == NULL)
		return -1;
	config_defaults(&cfg);
	if (jm4lw_config_set(&cfg, "dump_dir", dir, err, sizeof(err)) == -1)
		return -1;
	memset(&je, 0, sizeof(je));
	je.opt_prefix = "jeprof";
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	(void)chmod(dir, 0700);
	return rmdir(dir);
}

/* The module's call with adopt and was_set as given. */
static enum jedumps_prefix prefix(int adopt, int was_set)
{
	return core_jemalloc_prefix(&ops, &cfg, adopt, was_set, out,
	    sizeof(out), line, sizeof(line));
}

/* At start: jemalloc's default prefix becomes <dump_dir>/<dump_prefix>,
 * dump_dir resolved, and the line says where. */
static void test_start_sets_prefix(void **state)
{
	char want[PATH_MAX + 64];

	(void)state;
	snprintf(want, sizeof(want), "%s/jm4lw", real);
	assert_int_equal(prefix(1, 0), JEDUMPS_SET);
	assert_int_equal(je.prefix_writes, 1);
	assert_string_equal(je.prefix, want);
	assert_string_equal(out, real);
	assert_non_null(strstr(line, want));
}

/* jm4lw-run's MALLOC_CONF put the same prefix in opt.prof_prefix: still
 * ours, not a host's choice. */
static void test_runs_prefix_is_ours(void **state)
{
	char want[PATH_MAX + 64];

	(void)state;
	snprintf(want, sizeof(want), "%s/jm4lw", real);
	je.opt_prefix = want;
	assert_int_equal(prefix(1, 0), JEDUMPS_SET);
	assert_string_equal(je.prefix, want);
}

/* A host that set its own prof_prefix keeps it, and is told where its
 * dumps go; an empty one (no dumps at all) too. */
static void test_host_prefix_respected(void **state)
{
	(void)state;
	je.opt_prefix = "/srv/prof/app";
	assert_int_equal(prefix(1, 0), JEDUMPS_HOST);
	assert_int_equal(je.prefix_writes, 0);
	assert_non_null(strstr(line, "/srv/prof/app.*"));
	assert_string_equal(out, "");
	je.opt_prefix = "";
	assert_int_equal(prefix(1, 0), JEDUMPS_HOST);
	assert_int_equal(je.prefix_writes, 0);
	assert_non_null(strstr(line, "empty"));
}

/* A reload to another dump_dir or dump_prefix points jemalloc there. */
static void test_reload_follows(void **state)
{
	char err[256], want[PATH_MAX + 64];

	(void)state;
	assert_int_equal(prefix(1, 0), JEDUMPS_SET);
	assert_int_equal(jm4lw_config_set(&cfg, "dump_prefix", "app", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(prefix(1, 1), JEDUMPS_SET);
	snprintf(want, sizeof(want), "%s/app", real);
	assert_string_equal(je.prefix, want);
	assert_int_equal(je.prefix_writes, 2);
}

/* jemalloc_dumps = leave: nothing at start; after a start that set it,
 * jemalloc's own prefix back, so its files do not land where nobody
 * adopts them. */
static void test_leave(void **state)
{
	(void)state;
	assert_int_equal(prefix(0, 0), JEDUMPS_LEAVE);
	assert_int_equal(je.prefix_writes, 0);
	assert_non_null(strstr(line, "jeprof.*"));
	assert_int_equal(prefix(1, 0), JEDUMPS_SET);
	assert_int_equal(prefix(0, 1), JEDUMPS_LEAVE);
	assert_int_equal(je.prefix_writes, 2);
	assert_string_equal(je.prefix, "jeprof");
}

/* No profiling (opt.prof off: prof.* answer ENOENT): nothing, no line. */
static void test_no_profiling(void **state)
{
	(void)state;
	je.opt_prefix = NULL;
	assert_int_equal(prefix(1, 0), JEDUMPS_OFF);
	assert_string_equal(line, "");
	assert_int_equal(je.prefix_writes, 0);
}

/* A dump_dir others may write is not trusted with jemalloc's dumps
 * either; one that was set before is put back. */
static void test_untrusted_dir(void **state)
{
	(void)state;
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(prefix(1, 0), JEDUMPS_UNSAFE);
	assert_int_equal(je.prefix_writes, 0);
	assert_non_null(strstr(line, "not trusted"));
	assert_int_equal(prefix(1, 1), JEDUMPS_UNSAFE);
	assert_int_equal(je.prefix_writes, 1);
	assert_string_equal(je.prefix, "jeprof");
}

/* prof.prefix refused (EFAULT: no memory in jemalloc): a line says so. */
static void test_prefix_refused(void **state)
{
	(void)state;
	je.prefix_errno = EFAULT;
	assert_int_equal(prefix(1, 0), JEDUMPS_FAILED);
	assert_non_null(strstr(line, "prof.prefix"));
}

/* prof.gdump: read, set, and -1 without profiling. */
static void test_gdump_switch(void **state)
{
	(void)state;
	je.gdump = true;
	assert_int_equal(core_jemalloc_gdump(&ops, -1), 1);
	assert_true(je.gdump);
	assert_int_equal(core_jemalloc_gdump(&ops, 0), 1);
	assert_false(je.gdump);
	assert_int_equal(core_jemalloc_gdump(&ops, 1), 0);
	assert_true(je.gdump);
	je.opt_prefix = NULL;
	assert_int_equal(core_jemalloc_gdump(&ops, 0), -1);
}

/* The key: adopt or leave, any case, nothing else. */
static void test_key(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(cfg.jemalloc_dumps, CONFIG_JEDUMPS_ADOPT);
	assert_int_equal(jm4lw_config_set(&cfg, "jemalloc_dumps", "LEAVE", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(cfg.jemalloc_dumps, CONFIG_JEDUMPS_LEAVE);
	assert_int_equal(jm4lw_config_set(&cfg, "jemalloc_dumps", "keep", err,
	                     sizeof(err)),
	    -1);
	assert_string_equal(err,
	    "jemalloc_dumps: \"keep\" is neither adopt nor leave");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_start_sets_prefix, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_runs_prefix_is_ours, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_host_prefix_respected, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_reload_follows, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_leave, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_profiling, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_untrusted_dir, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_prefix_refused, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_gdump_switch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_key, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

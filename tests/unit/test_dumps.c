/*
 * Unit tests of the dump directory's trust (core/util.c) and of which
 * files are ours (core/dumps.c), against files other users own. Making
 * those needs root (chown); elsewhere the cases that do are skipped.
 *
 * Named after the defects they pin:
 *   retention_foreign_owner  planted files with future mtimes made
 *                            dump_keep delete root's own dumps;
 *   dump_dir_foreign_symlink dump_dir a symlink (to /etc) another user
 *                            made: jmfp wrote there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "config_struct.h"
#include "dumps.h"
#include "sweep.h"
#include "util.h"

#define NOBODY 65534 /* Debian's nobody, and nogroup */

static char dir[PATH_MAX];
static char why[512];

/* A fresh private directory under $TMPDIR for each case. */
static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_dumps.XXXXXX",
	    t != NULL && t[0] != '\0' ? t : "/tmp");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

/* Remove the case's directory, whatever it holds. */
static int teardown(void **state)
{
	char cmd[PATH_MAX + 32];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write a file @p name in the case's directory, owned by @p uid (-1: us),
 * with modification time @p mtime (0: now). */
static void plant(const char *name, int uid, time_t mtime)
{
	char p[PATH_MAX + 64];
	struct timeval tv[2];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "heap_v2/524288\n", 15), 15);
	close(fd);
	if (uid >= 0)
		assert_int_equal(chown(p, (uid_t)uid, (gid_t)uid), 0);
	if (mtime != 0) {
		tv[0].tv_sec = tv[1].tv_sec = mtime;
		tv[0].tv_usec = tv[1].tv_usec = 0;
		assert_int_equal(utimes(p, tv), 0);
	}
}

/* Does the case's directory hold @p name? */
static int has(const char *name)
{
	char p[PATH_MAX + 64];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

/* Skip a case that must make files another user owns. */
#define NEED_ROOT()                                                            \
	do {                                                                   \
		if (geteuid() != 0)                                            \
			skip();                                                \
	} while (0)

/* A plain private directory, and what does not exist yet under it. */
static void test_trusted_plain(void **state)
{
	char p[PATH_MAX + 32];

	(void)state;
	assert_int_equal(core_dump_dir_trusted(dir, why, sizeof(why)), 0);
	snprintf(p, sizeof(p), "%s/not/yet", dir);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), 0);
	snprintf(p, sizeof(p), "%s/./x/../", dir);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), 0);
	/* /tmp: root's, and sticky. */
	assert_int_equal(core_dump_dir_trusted("/tmp", why, sizeof(why)), 0);
}

/* Our own symlink is followed, and its target checked. */
static void test_trusted_own_symlink(void **state)
{
	char p[PATH_MAX + 32];

	(void)state;
	snprintf(p, sizeof(p), "%s/link", dir);
	assert_int_equal(symlink("/etc", p), 0);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), 0);
	/* A relative target, resolved from the link's directory. */
	snprintf(p, sizeof(p), "%s/sub", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/rel", dir);
	assert_int_equal(symlink("sub", p), 0);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), 0);
	/* A loop ends. */
	snprintf(p, sizeof(p), "%s/loop", dir);
	assert_int_equal(symlink("loop", p), 0);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "symbolic links"));
}

/* dump_dir_foreign_symlink: a symlink another user made is not followed,
 * whether it is dump_dir or a step on the way. */
static void test_dump_dir_foreign_symlink(void **state)
{
	char p[PATH_MAX + 32], q[PATH_MAX + 64];

	(void)state;
	NEED_ROOT();
	snprintf(p, sizeof(p), "%s/dumps", dir);
	assert_int_equal(symlink("/etc", p), 0);
	assert_int_equal(lchown(p, NOBODY, NOBODY), 0);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "a symlink owned by uid 65534"));
	assert_non_null(strstr(why, "not trusted"));
	snprintf(q, sizeof(q), "%s/dumps/ssl", dir);
	assert_int_equal(core_dump_dir_trusted(q, why, sizeof(why)), -1);
}

/* A directory another user owns, or anyone may write to, is refused;
 * sticky (as /tmp) is fine. */
static void test_trusted_foreign_dir(void **state)
{
	char p[PATH_MAX + 32];

	(void)state;
	snprintf(p, sizeof(p), "%s/open", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chmod(p, 0777), 0);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "writable by others (mode 0777)"));
	assert_int_equal(chmod(p, 01777), 0);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), 0);
	NEED_ROOT();
	assert_int_equal(chmod(p, 0755), 0);
	assert_int_equal(chown(p, NOBODY, NOBODY), 0);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "a directory owned by uid 65534"));
}

/* Another user's regular file where dump_dir (or a step to
 * it) should be is "not a directory but a file"; it was "a directory owned
 * by uid N". Our own file passes here: the dump fails with the system's
 * "Not a directory" (test_proto's test_jmfp_dir_is_a_file). */
static void test_trusted_not_directory(void **state)
{
	char p[PATH_MAX + 32], q[3 * PATH_MAX + 256];
	int fd;

	(void)state;
	snprintf(p, sizeof(p), "%s/plain", dir);
	assert_true((fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600)) != -1);
	close(fd);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), 0);
	NEED_ROOT();
	assert_int_equal(chown(p, NOBODY, NOBODY), 0);
	assert_int_equal(core_dump_dir_trusted(p, why, sizeof(why)), -1);
	snprintf(q, sizeof(q),
	    "dump_dir %s: %s is not a directory but a file owned by uid %u, "
	    "neither us nor root: not trusted with dumps",
	    p, p, (unsigned)NOBODY);
	assert_string_equal(why, q);
	snprintf(q, sizeof(q), "%s/plain/below", dir);
	assert_int_equal(core_dump_dir_trusted(q, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "is not a directory but a file owned"));
}

/* retention_foreign_owner: files named like ours but another user's, with
 * mtimes in the future, are neither counted nor deleted; dump_keep keeps
 * our newest. */
static void test_retention_foreign_owner(void **state)
{
	struct jm4lw_config cfg;
	char newest[PATH_MAX + 64];
	time_t now = time(NULL);

	(void)state;
	NEED_ROOT();
	config_defaults(&cfg);
	cfg.dump_keep = 3;
	plant("jm4lw.1.1.heap", NOBODY, now + 86400);
	plant("jm4lw.1.2.heap", NOBODY, now + 86401);
	plant("jm4lw.1.3.heap", NOBODY, now + 86402);
	plant("jm4lw.1.3.heap.symbolized", NOBODY, now + 86402);
	plant("jm4lw.2.1.heap", -1, now - 40);
	plant("jm4lw.2.2.heap", -1, now - 30);
	plant("jm4lw.2.2.heap.symbolized", NOBODY, now - 30);
	plant("jm4lw.2.3.heap", -1, now - 20);
	plant("jm4lw.2.4.heap", -1, now - 10);
	snprintf(newest, sizeof(newest), "%s/jm4lw.2.4.heap", dir);
	assert_int_equal(dumps_retain(&cfg, dir, newest, NULL), 1);
	assert_false(has("jm4lw.2.1.heap"));
	assert_true(has("jm4lw.2.2.heap"));
	assert_true(has("jm4lw.2.3.heap"));
	assert_true(has("jm4lw.2.4.heap"));
	assert_true(has("jm4lw.1.1.heap"));
	assert_true(has("jm4lw.1.2.heap"));
	assert_true(has("jm4lw.1.3.heap"));
	assert_true(has("jm4lw.1.3.heap.symbolized"));
	/* Once ours goes, a companion that is not ours stays. */
	cfg.dump_keep = 1;
	assert_int_equal(dumps_retain(&cfg, dir, newest, NULL), 2);
	assert_false(has("jm4lw.2.2.heap"));
	assert_true(has("jm4lw.2.2.heap.symbolized"));
	assert_true(has("jm4lw.1.1.heap"));
}

/*
 * A dump's leak index goes with its dump, ours only; an index
 * whose dump and process are gone (killed between the two renames) is
 * swept; one of a live process, of another user, another prefix or a
 * symlink stays.
 */
static void test_index_retention_and_orphans(void **state)
{
	struct jm4lw_config cfg;
	char newest[PATH_MAX + 64], p[PATH_MAX + 64];
	time_t now = time(NULL);

	(void)state;
	config_defaults(&cfg);
	cfg.dump_keep = 1;
	plant("jm4lw.2.1.heap", -1, now - 20);
	plant("jm4lw.2.1.heap.trend", -1, now - 20);
	plant("jm4lw.2.2.heap", -1, now - 10);
	plant("jm4lw.2.2.heap.trend", -1, now - 10);
	snprintf(newest, sizeof(newest), "%s/jm4lw.2.2.heap", dir);
	assert_int_equal(dumps_retain(&cfg, dir, newest, NULL), 1);
	assert_false(has("jm4lw.2.1.heap"));
	assert_false(has("jm4lw.2.1.heap.trend"));
	assert_true(has("jm4lw.2.2.heap.trend"));
	/* Orphans: pid 999999 runs nowhere; pid 1 always does. */
	plant("jm4lw.999999.1.heap.trend", -1, 0);
	plant("jm4lw.1.7.heap.trend", -1, 0);
	plant("other.999999.1.heap.trend", -1, 0);
	snprintf(p, sizeof(p), "%s/jm4lw.999998.1.heap.trend", dir);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	dumps_sweep_stages("jm4lw", dir, NULL);
	assert_false(has("jm4lw.999999.1.heap.trend"));
	assert_true(has("jm4lw.1.7.heap.trend"));
	assert_true(has("other.999999.1.heap.trend"));
	assert_true(has("jm4lw.999998.1.heap.trend"));
	assert_true(has("jm4lw.2.2.heap.trend")); /* its dump is there */
	if (geteuid() == 0) {
		plant("jm4lw.999997.1.heap.trend", NOBODY, 0);
		dumps_sweep_stages("jm4lw", dir, NULL);
		assert_true(has("jm4lw.999997.1.heap.trend"));
	}
}

/*
 * A staging directory of a process killed mid-dump, with the dump's
 * symbolized companion or leak index half written in it, is swept once
 * stale (the soak found a SIGKILLed jm4lwd's kept for good);
 * one holding a file of anything else stays.
 */
static void test_sweep_stage_with_companions(void **state)
{
	char p[PATH_MAX + 64];
	struct timeval tv[2] = {{.tv_sec = time(NULL) - 3600},
	    {.tv_sec = time(NULL) - 3600}};

	(void)state;
	snprintf(p, sizeof(p), "%s/.jm4lw.999999.AbCdEf", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	plant(".jm4lw.999999.AbCdEf/jm4lw.999999.3.heap", -1, 0);
	plant(".jm4lw.999999.AbCdEf/jm4lw.999999.3.heap.symbolized", -1, 0);
	plant(".jm4lw.999999.AbCdEf/jm4lw.999999.3.heap.trend", -1, 0);
	assert_int_equal(utimes(p, tv), 0);
	snprintf(p, sizeof(p), "%s/.jm4lw.999998.XyZxYz", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	plant(".jm4lw.999998.XyZxYz/notes.txt", -1, 0);
	assert_int_equal(utimes(p, tv), 0);
	dumps_sweep_stages("jm4lw", dir, NULL);
	assert_false(has(".jm4lw.999999.AbCdEf"));
	assert_true(has(".jm4lw.999998.XyZxYz/notes.txt"));
}

/*
 * A pid names the process that wrote a file only if that process started
 * before the file was written: pids wrap (32768 by default), and a dead
 * jm4lwd's staging directory must not be kept for good by the stranger
 * that got its pid (the 60-minute soak met one).
 */
static void test_sweep_reused_pid(void **state)
{
	char p[PATH_MAX + 64], n[64];
	time_t old = time(NULL) - 3600;
	struct timeval tv[2] = {{.tv_sec = old}, {.tv_sec = old}};
	int status;
	pid_t kid;

	(void)state;
	assert_false(dumps_pid_gone((long)getpid(), old));
	assert_false(dumps_pid_gone((long)getppid(), time(NULL)));
	assert_true(dumps_pid_gone(999999999L, time(NULL)));
	/* A live process that started now, named by a directory (and a
	 * leak index) untouched for an hour: not their writer. */
	if ((kid = fork()) == 0) {
		alarm(30); /* gone even if a check below fails */
		pause();
		_exit(0);
	}
	assert_true(kid > 0);
	assert_true(dumps_pid_gone((long)kid, old));
	assert_false(dumps_pid_gone((long)kid, time(NULL)));
	snprintf(p, sizeof(p), "%s/.jm4lw.%ld.QwErTy", dir, (long)kid);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(utimes(p, tv), 0);
	snprintf(n, sizeof(n), "jm4lw.%ld.1.heap.trend", (long)kid);
	plant(n, -1, old);
	/* The same, fresh: the child may be writing them. */
	snprintf(p, sizeof(p), "%s/.jm4lw.%ld.AsDfGh", dir, (long)kid);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(n, sizeof(n), "jm4lw.%ld.2.heap.trend", (long)kid);
	plant(n, -1, 0);
	dumps_sweep_stages("jm4lw", dir, NULL);
	snprintf(n, sizeof(n), ".jm4lw.%ld.QwErTy", (long)kid);
	assert_false(has(n));
	snprintf(n, sizeof(n), "jm4lw.%ld.1.heap.trend", (long)kid);
	assert_false(has(n));
	snprintf(n, sizeof(n), ".jm4lw.%ld.AsDfGh", (long)kid);
	assert_true(has(n));
	snprintf(n, sizeof(n), "jm4lw.%ld.2.heap.trend", (long)kid);
	assert_true(has(n));
	kill(kid, SIGKILL);
	assert_int_equal(waitpid(kid, &status, 0), kid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_trusted_plain, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_trusted_own_symlink, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_dump_dir_foreign_symlink,
	        setup, teardown),
	    cmocka_unit_test_setup_teardown(test_trusted_not_directory, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_trusted_foreign_dir, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_retention_foreign_owner, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_index_retention_and_orphans,
	        setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sweep_stage_with_companions,
	        setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sweep_reused_pid, setup,
	        teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Unit tests of the profile pipeline's reading of files someone else
 * chose: a dump truncated while it is read (SIGBUS from a
 * mapping; in our own 0700 directory too), a FIFO as
 * the profile (open() blocked forever), what prof_open_file refuses,
 * and the header checked before the body is scanned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heapprof.h"
#include "prof_util.h"
#include "symbolize_impl.h"

static char dir[512];

/* A scratch directory under TMPDIR, mode @p mode. */
static void make_dir(mode_t mode)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/hostile.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, mode), 0);
}

/* Remove @p name in the scratch directory, then the directory. */
static void clean(const char *name)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	(void)unlink(p);
	(void)rmdir(dir);
}

/* Write a profile of @p nstacks stacks of 8 frames to @p path: its size. */
static size_t write_big_dump(const char *path, size_t nstacks)
{
	FILE *f = fopen(path, "w");
	size_t i;
	long n;

	assert_non_null(f);
	fprintf(f, "heap_v2/524288\n  t*: 1: 100 [0: 0]\n");
	for (i = 0; i < nstacks; i++)
		fprintf(f,
		    "@ 0x%zx 0x7f00000011 0x7f00000022 0x7f00000033 "
		    "0x7f00000044 0x7f00000055 0x7f00000066 0x7f00000077\n"
		    "  t*: 1: 100 [0: 0]\n  t0: 1: 100 [0: 0]\n",
		    0x7f00001000 + i);
	fprintf(f,
	    "\nMAPPED_LIBRARIES:\n"
	    "7f00000000-7f10000000 r-xp 00000000 08:01 1 /usr/bin/x\n");
	n = ftell(f);
	assert_int_equal(fclose(f), 0);
	return (size_t)n;
}

/*
 * A kept dump truncated by another process while heapprof_load reads
 * it: an error line or a whole profile, never SIGBUS. Looped, the
 * truncation at a different moment of the read each time. In a directory
 * others can write to (as dump_dir /tmp is), and in our
 * own 0700 dump_dir, where the same user or root may truncate it: a
 * mapping faulted there too.
 */
static void truncated_dump(mode_t mode)
{
	struct heap_profile hp;
	char path[600], err[512];
	int round, status, cut = 0;
	pid_t pid;

	make_dir(mode);
	snprintf(path, sizeof(path), "%s/jm4lw.1.0.heap", dir);
	for (round = 0; round < 12; round++) {
		write_big_dump(path, 120000);
		if ((pid = fork()) == 0) {
			struct timespec ts = {0, (round % 6) * 15000000L};
			nanosleep(&ts, NULL);
			(void)truncate(path, 4096);
			_exit(0);
		}
		assert_true(pid > 0);
		if (heapprof_load(path, &hp, err, sizeof(err)) == -1) {
			assert_non_null(strstr(err, "cut short"));
			cut++;
		}
		heapprof_free(&hp);
		assert_int_equal(waitpid(pid, &status, 0), pid);
	}
	print_message("# %04o: %d of 12 reads saw the file cut short\n",
	    (unsigned)mode, cut);
	clean("jm4lw.1.0.heap");
}

static void test_truncated_dump_sigbus(void **state)
{
	(void)state;
	truncated_dump(0755);
}

static void test_truncated_private_dump_sigbus(void **state)
{
	(void)state;
	truncated_dump(0700);
}

/* A FIFO as the profile: refused at once, not an open() that waits
 * for a writer forever (alarm: a hang kills the test). */
static void test_fifo_profile(void **state)
{
	struct heap_profile hp;
	char path[600], err[512];

	(void)state;
	make_dir(0700);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(10);
	assert_int_equal(heapprof_load(path, &hp, err, sizeof(err)), -1);
	alarm(0);
	assert_non_null(strstr(err, "not a regular file"));
	clean("fifo");
}

/* What prof_open_file makes of a file of ours, and what it refuses. */
static void test_open_file(void **state)
{
	char path[600], link[600], err[512];
	struct stat sb;
	int fd;

	(void)state;
	make_dir(0700);
	snprintf(path, sizeof(path), "%s/d.heap", dir);
	snprintf(link, sizeof(link), "%s/l.heap", dir);
	write_big_dump(path, 1);
	assert_int_equal(chmod(path, 0600), 0);
	fd = prof_open_file(path, PROF_OPEN_NOFOLLOW | PROF_OPEN_OURS, &sb, err,
	    sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	/* A symlink under O_NOFOLLOW: refused, saying so. */
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(prof_open_file(link, PROF_OPEN_NOFOLLOW, NULL, err,
	                     sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "symbolic link"));
	(void)unlink(link);
	/* A directory: not a regular file. */
	assert_int_equal(prof_open_file(dir, 0, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	clean("d.heap");
}

/* The header is checked on the first bytes: a buffer of zeros is
 * refused without a scan of all of it (the parse would count its lines
 * first), and a symbolized file's "---" start is still taken. */
static void test_sparse_zero_file(void **state)
{
	struct heap_profile hp;
	size_t n = (size_t)256 << 20;
	char *zeros, err[256];
	struct timespec t0, t1;
	double ms;

	(void)state;
	/* calloc of this size maps untouched zero pages: as sparse as the
	 * 4 GB file, so only what the parse reads costs anything. */
	assert_non_null(zeros = calloc(1, n));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(heapprof_parse(zeros, n, &hp, err, sizeof(err)), -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	free(zeros);
	assert_non_null(strstr(err, "not a jemalloc heap profile"));
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("# refused in %.2f ms\n", ms);
	assert_true(ms < 20);
}

/* A dump's MAPPED_LIBRARIES naming a FIFO, symbolized by both
 * object backends (this build's, through sym_new, and the ELF-only one):
 * the object is skipped, its addresses stay hex, nothing blocks. */
static void test_fifo_in_mapped_libraries(void **state)
{
	struct heap_profile hp;
	struct symbolizer *s;
	struct sym_frame fr[SYM_INLINE_MAX];
	char path[600], text[1024], err[512];

	(void)state;
	make_dir(0700);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(text, sizeof(text),
	    "heap_v2/524288\n@ 0x10001234\n  t*: 1: 100 [0: 0]\n"
	    "MAPPED_LIBRARIES:\n"
	    "10000000-10004000 r-xp 00000000 08:01 1 %s\n",
	    path);
	assert_int_equal(heapprof_parse(text, strlen(text), &hp, err,
	                     sizeof(err)),
	    0);
	alarm(10);
	assert_non_null(s = sym_new(&hp, NULL, err, sizeof(err)));
	assert_int_equal(sym_lookup(s, 0x10001234, 1, fr, SYM_INLINE_MAX), 1);
	assert_string_equal(fr[0].func, "0x10001234");
	sym_free(s);
	assert_non_null(s = sym_elf_open(&hp, NULL, 0, err, sizeof(err)));
	sym_free(s);
	/* And as --binary: refused, saying why. */
	assert_null(sym_new(&hp, path, err, sizeof(err)));
	assert_non_null(strstr(err, "not a regular file"));
	alarm(0);
	heapprof_free(&hp);
	clean("fifo");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_truncated_dump_sigbus),
	    cmocka_unit_test(test_truncated_private_dump_sigbus),
	    cmocka_unit_test(test_fifo_profile),
	    cmocka_unit_test(test_open_file),
	    cmocka_unit_test(test_sparse_zero_file),
	    cmocka_unit_test(test_fifo_in_mapped_libraries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

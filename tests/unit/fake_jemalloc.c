/*
 * The one fake allocator of the unit tests and the fuzzer (see
 * fake_jemalloc.h). It checks every call the way jemalloc would take it,
 * so core cannot pass a wrong length or a peer's bytes as a name, and
 * counts what it was asked.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_jemalloc.h"
#include "ops.h"
#include "util.h"

struct fake_jemalloc fake;

/* A broken expectation with no hook set: say where, and stop. */
static void fake_abort(const char *file, int line, const char *what)
{
	fprintf(stderr, "fake_jemalloc: %s:%d: %s\n", file, line, what);
	abort();
}

/* Report through the hook; a hook that returns is not trusted to stop. */
static void fake_violation(const char *file, int line, const char *what)
{
	if (fake.violation != NULL)
		fake.violation(file, line, what);
	fake_abort(file, line, what);
}

#define FAKE_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond))                                                   \
			fake_violation(__FILE__, __LINE__, #cond);             \
	} while (0)

/* Every test starts from the same allocator: profiling on, all working. */
void fake_reset(void)
{
	memset(&fake, 0, sizeof(fake));
	fake.opt_prof = true;
	fake.allocated = 12345;
	fake.stats = 19;
	fake.lg_sample = 19;
	fake.recent_max = 64;
}

/* Long profiles without a buffer: lines of letters, then a newline. */
void fake_fill(FILE *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fputc(i + 1 == n || i % 60 == 59 ? '\n' : 'a' + (int)(i % 26),
		    f);
}

/* A mallctl name is ours, never a peer's: [a-z0-9._] only. */
static void check_name(const char *name)
{
	const char *s;

	FAKE_CHECK(name != NULL && name[0] != '\0');
	for (s = name; *s != '\0'; s++)
		FAKE_CHECK((*s >= 'a' && *s <= 'z') ||
		    (*s >= '0' && *s <= '9') || *s == '.' || *s == '_');
}

/* The injected errno for @p name, or 0. */
static int fail_for(const char *name)
{
	const char *f = fake.fail_name;
	size_t n;

	if (f != NULL && fake.fail_errno != 0) {
		n = strlen(f);
		if (strcmp(f, "*") == 0 || strcmp(f, name) == 0 ||
		    (n > 0 && f[n - 1] == '.' && strncmp(f, name, n) == 0))
			return fake.fail_errno;
	}
	return fake.fail != NULL ? fake.fail(name) : 0;
}

/* Read-only size_t statistics: jemalloc takes exactly a size_t. */
static int read_size(void *oldp, size_t *oldlenp, void *newp, size_t v)
{
	FAKE_CHECK(
	    oldp != NULL && oldlenp != NULL && *oldlenp == sizeof(size_t));
	if (newp != NULL)
		return EPERM;
	*(size_t *)oldp = v;
	return 0;
}

/* Fill @p f with the profile (the hook's or the default). */
static int fake_profile_into(FILE *f, const char *path)
{
	int rv;

	fake.dumps++;
	snprintf(fake.dump_path, sizeof(fake.dump_path), "%s", path);
	if (fake.profile != NULL)
		rv = fake.profile(f, path);
	else
		rv = fputs(FAKE_PROFILE, f) == EOF ? EFAULT : 0;
	FAKE_CHECK(fclose(f) == 0);
	return rv;
}

/*
 * prof.dump into memory: a memfd of ours by its /proc path,
 * opened again as creat() opens it.
 */
static int fake_dump_memfd(const char *path)
{
	char target[64];
	ssize_t n;
	FILE *f;
	int fd;

	n = readlink(path, target, sizeof(target) - 1);
	FAKE_CHECK(n > 0);
	target[n] = '\0';
	FAKE_CHECK(strncmp(target, "/memfd:jm4lw-dump", 17) == 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FAKE_CHECK(fd != -1);
	FAKE_CHECK((f = fdopen(fd, "w")) != NULL);
	fake.dump_memfd = 1;
	return fake_profile_into(f, path);
}

/*
 * prof.dump: a new name directly in a 0700 directory of ours (the staging
 * directory, where jemalloc's creat() cannot be redirected), made as
 * creat() makes it and filled by the hook.
 */
static int fake_dump(void *newp, size_t newlen)
{
	char dir[CORE_PATH_MAX], *slash;
	const char *path, *st = fake.stage;
	struct stat sb;
	FILE *f;
	int fd;

	FAKE_CHECK(newp != NULL && newlen == sizeof(const char *));
	path = *(const char *const *)newp;
	FAKE_CHECK(
	    path != NULL && path[0] == '/' && strlen(path) < sizeof(dir));
	if (strncmp(path, "/proc/self/fd/", 14) == 0)
		return fake_dump_memfd(path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	FAKE_CHECK(slash[1] != '\0');
	*slash = '\0';
	FAKE_CHECK(lstat(dir, &sb) == 0 && S_ISDIR(sb.st_mode));
	FAKE_CHECK(sb.st_uid == geteuid() && (sb.st_mode & 077) == 0);
	fake.dump_dir_mode = sb.st_mode & 07777;
	if (st != NULL)
		FAKE_CHECK(st[0] != '\0' && strcmp(dir, st) == 0);
	FAKE_CHECK(lstat(path, &sb) == -1 && errno == ENOENT);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	FAKE_CHECK(fd != -1);
	FAKE_CHECK((f = fdopen(fd, "w")) != NULL);
	fake.dump_memfd = 0;
	return fake_profile_into(f, path);
}

/* experimental.prof_recent.alloc_dump: write-only, a packet of the
 * callback and its argument; the JSON handed over in pieces, each a
 * string as jemalloc's buffered writer hands it. */
static int fake_recent_dump(void *oldp, size_t *oldlenp, void *newp,
    size_t newlen)
{
	struct {
		void (*cb)(void *, const char *);
		void *arg;
	} pk;
	const char *s =
	    fake.recent_json != NULL ? fake.recent_json : FAKE_RECENT;
	size_t n = strlen(s), step, k;
	char *piece;

	FAKE_CHECK(oldp == NULL && oldlenp == NULL);
	FAKE_CHECK(newp != NULL && newlen == sizeof(pk));
	if (!fake.opt_prof)
		return ENOENT;
	memcpy(&pk, newp, sizeof(pk));
	FAKE_CHECK(pk.cb != NULL);
	fake.recent_dumps++;
	step = fake.recent_piece != 0 ? fake.recent_piece : n;
	FAKE_CHECK((piece = malloc(step + 1)) != NULL);
	for (k = 0; k < n; k += step) {
		size_t m = n - k < step ? n - k : step;
		memcpy(piece, s + k, m);
		piece[m] = '\0';
		pk.cb(pk.arg, piece);
	}
	free(piece);
	return 0;
}

/* mallctl with jemalloc's signature, answering from the state. */
static int fake_mallctl(const char *name, void *oldp, size_t *oldlenp,
    void *newp, size_t newlen)
{
	int e;

	check_name(name);
	if ((e = fail_for(name)) != 0)
		return e;
	if (strcmp(name, "epoch") == 0) {
		FAKE_CHECK(oldlenp == NULL || *oldlenp == sizeof(uint64_t));
		FAKE_CHECK(newp == NULL || newlen == sizeof(uint64_t));
		if (oldp != NULL)
			*(uint64_t *)oldp = 1;
		fake.epochs++;
		return 0;
	}
	if (strcmp(name, "opt.prof") == 0) {
		FAKE_CHECK(oldp != NULL && oldlenp != NULL &&
		    *oldlenp == sizeof(bool));
		if (newp != NULL)
			return EPERM; /* read-only, as in jemalloc */
		*(bool *)oldp = fake.opt_prof;
		return 0;
	}
	if (strcmp(name, "opt.prof_sys_thread_name") == 0) {
		FAKE_CHECK(oldp != NULL && oldlenp != NULL &&
		    *oldlenp == sizeof(bool) && newp == NULL);
		*(bool *)oldp = fake.opt_prof_sys_thread_name;
		return 0;
	}
	/* jemalloc 5.3's ctl.c and prof_data.c: ENOENT without opt.prof or
	 * with prof_sys_thread_name, a const char * written, EFAULT for a
	 * byte neither isgraph nor isblank. */
	if (strcmp(name, "thread.prof.name") == 0) {
		const char *nm;
		size_t i;
		if (!fake.opt_prof || fake.opt_prof_sys_thread_name)
			return ENOENT;
		FAKE_CHECK(oldp == NULL && oldlenp == NULL && newp != NULL &&
		    newlen == sizeof(const char *));
		nm = *(const char *const *)newp;
		FAKE_CHECK(nm != NULL);
		for (i = 0; nm[i] != '\0'; i++)
			if (!isgraph((unsigned char)nm[i]) &&
			    !isblank((unsigned char)nm[i]))
				return EFAULT;
		FAKE_CHECK(i < sizeof(fake.thread_name));
		memcpy(fake.thread_name, nm, i + 1);
		return 0;
	}
	if (strcmp(name, "prof.active") == 0) {
		FAKE_CHECK(oldp == NULL ||
		    (oldlenp != NULL && *oldlenp == sizeof(bool)));
		if (oldp != NULL)
			*(bool *)oldp = fake.prof_active;
		if (newp != NULL) {
			FAKE_CHECK(newlen == sizeof(bool));
			fake.prof_active = *(bool *)newp;
		}
		return 0;
	}
	if (strcmp(name, "prof.dump") == 0) {
		FAKE_CHECK(oldp == NULL && oldlenp == NULL);
		return fake_dump(newp, newlen);
	}
	if (strcmp(name, "prof.reset") == 0) {
		FAKE_CHECK(oldp == NULL && oldlenp == NULL);
		FAKE_CHECK(newp == NULL || newlen == sizeof(size_t));
		fake.reset_lg = newp != NULL ? *(size_t *)newp : fake.lg_sample;
		fake.resets++;
		return fake.reset_lg > 62 ? EINVAL : 0;
	}
	if (strcmp(name, "prof.lg_sample") == 0)
		return read_size(oldp, oldlenp, newp, fake.lg_sample);
	if (strcmp(name, "stats.allocated") == 0)
		return read_size(oldp, oldlenp, newp, fake.allocated);
	if (strncmp(name, "stats.", 6) == 0)
		return read_size(oldp, oldlenp, newp, fake.stats);
	if (strcmp(name, "arena.4096.purge") == 0) {
		FAKE_CHECK(oldp == NULL && oldlenp == NULL && newp == NULL);
		fake.purges++;
		return 0;
	}
	if (strcmp(name, "experimental.prof_recent.alloc_max") == 0) {
		FAKE_CHECK(oldp == NULL ||
		    (oldlenp != NULL && *oldlenp == sizeof(ssize_t)));
		if (!fake.opt_prof)
			return ENOENT; /* as 5.3.0 answers without opt.prof */
		if (oldp != NULL)
			*(ssize_t *)oldp = fake.recent_max;
		if (newp != NULL) {
			FAKE_CHECK(newlen == sizeof(ssize_t));
			if (*(ssize_t *)newp < -1)
				return EINVAL;
			fake.recent_max = *(ssize_t *)newp;
			fake.recent_max_writes++;
		}
		return 0;
	}
	if (strcmp(name, "experimental.prof_recent.alloc_dump") == 0)
		return fake_recent_dump(oldp, oldlenp, newp, newlen);
	if (strcmp(name, "opt.prof_time_res") == 0) {
		FAKE_CHECK(oldp != NULL && oldlenp != NULL &&
		    *oldlenp == sizeof(const char *));
		*(const char **)oldp = "default";
		return 0;
	}
	return ENOENT; /* a name this jemalloc does not have */
}

/* malloc_stats_print stand-in: the text in stats_pieces + 2 pieces, as
 * jemalloc hands it over (the real one is ~16 KB in ~300 pieces). */
static void fake_stats(void (*cb)(void *, const char *), void *arg,
    const char *opts)
{
	int i;

	FAKE_CHECK(cb != NULL);
	FAKE_CHECK(opts == NULL || strcmp(opts, "J") == 0);
	fake.stats_prints++;
	fake.stats_opts = opts;
	fake.epoch_at_stats = fake.epochs;
	if (opts != NULL) {
		/* jemalloc ends its JSON without a newline. */
		cb(arg, "{\"jemalloc\": {\"version\": \"5.3.0-fake\"");
		for (i = 0; i < fake.stats_pieces; i++)
			cb(arg, ", \"x\": 0");
		cb(arg, "}}");
		return;
	}
	cb(arg, "___ Begin jemalloc statistics ___\n");
	for (i = 0; i < fake.stats_pieces; i++)
		cb(arg, "Version: \"5.3.0-fake\"\n");
	cb(arg, "--- End jemalloc statistics ---\n");
}

const struct core_ops fake_ops = {
    .mallctl = fake_mallctl,
    .stats_print = fake_stats,
    .version = "5.3.0-fake",
};

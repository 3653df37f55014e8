/*
 * The dumps as a collection: which files are ours, jmls, retention, and
 * when growth calls for the next dump.
 *
 * Ours means exactly "<dump_prefix>.<digits>.<digits>.heap" in dump_dir:
 * any pid, so dumps of earlier runs are counted and cleaned up too, and
 * nothing else — a foreign file, another prefix, a temporary file, a
 * directory or a symlink is never listed and never deleted.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

#define DUMPS_MAX 100000 /* entries we look at in one directory */

struct dump {
	char *name;
	off_t size;
	struct timespec mtime;
};

/* Hand a line to the server's log, if it gave us one. */
void proto_log(struct proto *p, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (p->log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p->log(p->log_arg, level, buf);
}

/* "<prefix>.<digits>.<digits>.heap" and nothing else. */
int dumps_match(const char *prefix, const char *name)
{
	size_t n = strlen(prefix);
	const char *s;
	int part;

	if (strncmp(name, prefix, n) != 0 || name[n] != '.')
		return 0;
	s = name + n + 1;
	for (part = 0; part < 2; part++) {
		if (*s < '0' || *s > '9')
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
		if (*s++ != '.')
			return 0;
	}
	return strcmp(s, "heap") == 0;
}

int dumps_stage_match(const char *prefix, const char *name, long *pid)
{
	size_t n = strlen(prefix);
	const char *s;
	char *end;
	int i;

	if (name[0] != '.' || strncmp(name + 1, prefix, n) != 0 ||
	    name[n + 1] != '.')
		return 0;
	s = name + n + 2;
	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	*pid = strtol(s, &end, 10);
	if (errno != 0 || *end != '.')
		return 0;
	for (i = 1; i <= 6; i++) {
		char c = end[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
			(c >= 'A' && c <= 'Z')))
			return 0;
	}
	return end[7] == '\0';
}

/* A staging directory this young may be mid-dump (another pid namespace
 * can make a live process look gone): leave it. */
#define STAGE_STALE_SECONDS 600

/*
 * A process that ended without jm4lw_free() (killed, or a preloaded agent
 * at exit) leaves its empty staging directory behind; the next process to
 * stage in @p dir removes it. Only directories we own, of pids that do not
 * run, untouched for STAGE_STALE_SECONDS; only our dump files inside them
 * (a profile cut off by the crash); a directory holding anything else
 * stays.
 */
void dumps_sweep_stages(struct proto *p, const char *dir)
{
	const char *prefix = p->cfg->dump_prefix;
	struct dirent *de, *se;
	struct stat sb;
	DIR *d, *sd;
	time_t now = time(NULL);
	long pid;
	int fd;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!dumps_stage_match(prefix, de->d_name, &pid) ||
		    pid == (long)getpid() ||
		    (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) ==
			-1 ||
		    !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() ||
		    now - sb.st_mtime < STAGE_STALE_SECONDS)
			continue;
		fd = openat(dirfd(d), de->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1)
			continue;
		if ((sd = fdopendir(fd)) == NULL) {
			close(fd);
			continue;
		}
		while ((se = readdir(sd)) != NULL)
			if (dumps_match(prefix, se->d_name) &&
			    fstatat(fd, se->d_name, &sb,
				AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(sb.st_mode))
				(void)unlinkat(fd, se->d_name, 0);
		closedir(sd);
		if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
			proto_log(p, JM4LW_LOG_INFO,
			    "removed %s/%s, left by process %ld", dir,
			    de->d_name, pid);
	}
	closedir(d);
}

/* Newest first; equal times by name, so the order is total. */
static int dump_cmp(const void *a, const void *b)
{
	const struct dump *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : -1;
	return strcmp(y->name, x->name);
}

/* Free what dumps_scan() returned. */
static void dumps_free(struct dump *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(d[i].name);
	free(d);
}

/* Our regular files in @p dir, newest first; -1 with errno on error. */
static int dumps_scan(struct proto *p, const char *dir, struct dump **out,
    size_t *nout)
{
	struct dump *d = NULL, *nd;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat sb;
	DIR *dp;
	int dfd;

	if ((dp = opendir(dir)) == NULL)
		return -1;
	dfd = dirfd(dp);
	while ((de = readdir(dp)) != NULL && n < DUMPS_MAX) {
		if (!dumps_match(p->cfg->dump_prefix, de->d_name))
			continue;
		/* lstat: a symlink with our name is not ours to delete. */
		if (fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(sb.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nd = realloc(d, cap * sizeof(*d))) == NULL)
				goto nomem;
			d = nd;
		}
		if ((d[n].name = strdup(de->d_name)) == NULL)
			goto nomem;
		d[n].size = sb.st_size;
		d[n].mtime = sb.st_mtim;
		n++;
	}
	closedir(dp);
	if (n > 0)
		qsort(d, n, sizeof(*d), dump_cmp);
	*out = d;
	*nout = n;
	return 0;
nomem:
	closedir(dp);
	dumps_free(d, n);
	errno = ENOMEM;
	return -1;
}

/*
 * dump_keep and dump_max_bytes, newest first: a file goes when it is past
 * the count or would take the total over the cap. The dump just written
 * always stays, or a cap smaller than one dump would eat every dump.
 */
void dumps_retain(struct proto *p, const char *dir, const char *newest)
{
	const struct jm4lw_config *c = p->cfg;
	unsigned long long total = 0;
	const char *base = strrchr(newest, '/');
	char path[PATH_MAX + 256];
	struct dump *d;
	size_t n, i, kept = 0;
	int full = 0;

	if (c->dump_keep == 0 && c->dump_max_bytes == 0)
		return;
	base = base != NULL ? base + 1 : newest;
	if (dumps_scan(p, dir, &d, &n) == -1) {
		proto_log(p, JM4LW_LOG_WARN, "retention: cannot read %s: %s",
		    dir, strerror(errno));
		return;
	}
	/* The dump just written takes its slot first, whatever the clock
	 * says about the others (a clock stepped back, copied files). */
	for (i = 0; i < n; i++)
		if (strcmp(d[i].name, base) == 0) {
			kept++;
			total += (unsigned long long)d[i].size;
		}
	for (i = 0; i < n; i++) {
		int mine = strcmp(d[i].name, base) == 0;
		if (mine)
			continue;
		/* Once one does not fit, every older one goes too: a small
		 * old dump must not outlive bigger newer ones. */
		if (!full && (c->dump_keep != 0 && kept >= c->dump_keep))
			full = 1;
		if (!full && c->dump_max_bytes != 0 &&
		    total + (unsigned long long)d[i].size > c->dump_max_bytes)
			full = 1;
		if (!full) {
			kept++;
			total += (unsigned long long)d[i].size;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, d[i].name);
		if (unlink(path) == -1) {
			proto_log(p, JM4LW_LOG_WARN, "retention: cannot delete "
			    "%s: %s", path, strerror(errno));
			continue;
		}
		p->st.dumps_deleted++;
		proto_log(p, JM4LW_LOG_INFO, "retention: deleted %s (%lld "
		    "bytes; dump_keep=%u, dump_max_bytes=%llu)", path,
		    (long long)d[i].size, c->dump_keep, c->dump_max_bytes);
	}
	dumps_free(d, n);
}

/*
 * jmls: a "#" summary line, then "path<TAB>size<TAB>time" per dump, newest
 * first, time in UTC ISO 8601. The summary keeps the reply non-empty when
 * there is nothing, and scripts skip it with grep -v '^#'.
 */
int dumps_list(struct proto *p, struct proto_out *out)
{
	char dir[PATH_MAX], when[32];
	unsigned long long total = 0;
	const char *d0 = p->cfg->dump_dir;
	struct dump *d;
	struct tm tm;
	size_t n, i;

	if (d0[0] == '/')
		snprintf(dir, sizeof(dir), "%s", d0);
	else if (getcwd(dir, sizeof(dir)) == NULL ||
	    strlen(dir) + 1 + strlen(d0) >= sizeof(dir)) {
		out_printf(out, JM4LW_ERROR_PREFIX "cannot list %s: %s\n", d0,
		    strerror(errno ? errno : ENAMETOOLONG));
		return PROTO_ERROR;
	} else {
		strcat(dir, "/");
		strcat(dir, d0);
	}
	{
		char real[PATH_MAX];
		if (realpath(dir, real) != NULL)
			memcpy(dir, real, sizeof(dir));
	}
	if (dumps_scan(p, dir, &d, &n) == -1) {
		out_printf(out, JM4LW_ERROR_PREFIX "cannot list %s: %s\n", dir,
		    strerror(errno));
		return PROTO_ERROR;
	}
	for (i = 0; i < n; i++)
		total += (unsigned long long)d[i].size;
	out_printf(out, "# %zu dumps, %llu bytes in %s (%s.*.heap)\n", n, total,
	    dir, p->cfg->dump_prefix);
	for (i = 0; i < n; i++) {
		gmtime_r(&d[i].mtime.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		out_printf(out, "%s/%s\t%lld\t%s\n", dir, d[i].name,
		    (long long)d[i].size, when);
	}
	dumps_free(d, n);
	return PROTO_OK;
}

/*
 * dump_on_growth: compare stats.allocated with what it was at the last
 * dump (or at the first look, before any dump).
 */
int proto_growth_due(struct proto *p)
{
	const char *g = p->cfg->dump_on_growth;
	size_t now = 0, base, len = strlen(g);
	unsigned long long want;
	char *end;

	if (strcmp(g, "0") == 0 || len == 0)
		return 0;
	ctl_epoch(p);
	if (ctl_size(p, "stats.allocated", &now) != 0)
		return 0;
	if (!p->alloc_known) { /* no baseline yet (or growth was off) */
		p->alloc_at_dump = now;
		p->alloc_known = 1;
		return 0;
	}
	p->alloc_known = 1;
	base = p->alloc_at_dump;
	if (now <= base)
		return 0;
	if (g[len - 1] == '%')
		want = (unsigned long long)base * strtoull(g, NULL, 10) / 100;
	else {
		want = strtoull(g, &end, 10);
		switch (*end) {
		case 'K': case 'k': want <<= 10; break;
		case 'M': case 'm': want <<= 20; break;
		case 'G': case 'g': want <<= 30; break;
		case 'T': case 't': want <<= 40; break;
		}
	}
	return (unsigned long long)(now - base) >= want;
}

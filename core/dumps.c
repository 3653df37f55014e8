/*
 * The dumps as a collection: which files are ours, jmls and retention
 * (the sweep of staging directories left by processes that are gone is
 * core/sweep.c's).
 *
 * Ours means exactly "<dump_prefix>.<digits>.<digits>.[<cause>.]heap" in
 * dump_dir (core/cause.h: jemalloc's own dumps under our prefix too),
 * a regular file owned by our effective user: any pid, so dumps of earlier
 * runs are counted and cleaned up too, and nothing else — a foreign file,
 * another user's file with our name, another prefix, a temporary file, a
 * directory or a symlink is never listed, counted or deleted.
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

#include "cause.h"
#include "config_struct.h"
#include "core.h"
#include "dumps.h"
#include "jm4lw.h"
#include "util.h"

#define DUMPS_MAX 100000 /* entries we look at in one directory */

/* "<prefix>.<digits>.<digits>.[<tag>.]heap" (core/cause.h) and nothing
 * else: its cause, or -1. */
int dumps_cause(const char *prefix, const char *name)
{
	size_t n = strlen(prefix);
	const char *s;
	int part;

	if (strncmp(name, prefix, n) != 0 || name[n] != '.')
		return -1;
	s = name + n + 1;
	for (part = 0; part < 2; part++) {
		if (*s < '0' || *s > '9')
			return -1;
		while (*s >= '0' && *s <= '9')
			s++;
		if (*s++ != '.')
			return -1;
	}
	return cause_of_tag(s);
}

long dumps_pid(const char *prefix, const char *name)
{
	size_t n = strlen(prefix);
	char *end;
	long pid;

	if (!dumps_match(prefix, name))
		return -1;
	errno = 0;
	pid = strtol(name + n + 1, &end, 10);
	return errno != 0 || *end != '.' ? -1 : pid;
}

const char *dumps_proc_name(long pid, char *buf, size_t len)
{
	char path[64], arg[256], *s, *base;
	ssize_t n = -1;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, arg, sizeof(arg) - 1);
		close(fd);
	}
	if (n <= 0) { /* a kernel thread, or cmdline unreadable: comm */
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			return buf;
		n = read(fd, arg, sizeof(arg) - 1);
		close(fd);
		if (n <= 0)
			return buf;
	}
	arg[n] = '\0';
	arg[strcspn(arg, " \n")] = '\0';
	base = (s = strrchr(arg, '/')) != NULL ? s + 1 : arg;
	snprintf(buf, len, "%s", base);
	return buf;
}

/* When process @p pid started, in seconds since the epoch: field 22 of
 * /proc/PID/stat (clock ticks since boot) and /proc/stat's btime; -1 if
 * either cannot be read. */
static time_t pid_start_time(long pid)
{
	char path[64], buf[1024], *s;
	unsigned long long ticks, btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	size_t n;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name (field 2) may hold blanks and parentheses. */
	if ((s = strrchr(buf, ')')) == NULL)
		return -1;
	for (i = 2; i < 22 && s != NULL; i++)
		s = strchr(s + 1, ' ');
	if (s == NULL || sscanf(s + 1, "%llu", &ticks) != 1 || hz <= 0)
		return -1;
	if ((f = fopen("/proc/stat", "re")) == NULL)
		return -1;
	while (fgets(buf, sizeof(buf), f) != NULL)
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	if (btime == 0)
		return -1;
	return (time_t)(btime + ticks / (unsigned long long)hz);
}

/*
 * Whether the process that wrote something at @p since, as process @p pid,
 * is gone: no such pid, or the pid now names a process that started after
 * @p since (pids wrap at pid_max, 32768 by default, within an hour on a
 * busy host: the soak met a dead jm4lwd's staging directory kept by a
 * stranger with its pid). Two seconds of slack for btime's rounding; when
 * /proc cannot tell, the process is taken to be alive.
 */
int dumps_pid_gone(long pid, time_t since)
{
	time_t start;

	if (pid == (long)getpid())
		return 0;
	if (kill((pid_t)pid, 0) == -1 && errno == ESRCH)
		return 1;
	start = pid_start_time(pid);
	return start != -1 && start > since + 2;
}

int dumps_match(const char *prefix, const char *name)
{
	return dumps_cause(prefix, name) >= 0;
}

/* Newest first; equal times by name, so the order is total. */
static int dump_cmp(const void *a, const void *b)
{
	const struct dump_entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : -1;
	return strcmp(y->name, x->name);
}

/* This process's first, then as dump_cmp. */
static int dump_cmp_mine(const void *a, const void *b)
{
	const struct dump_entry *x = a, *y = b;

	if (x->mine != y->mine)
		return x->mine ? -1 : 1;
	return dump_cmp(a, b);
}

/* Whose each of @p l's dumps is: its pid, this process's or not, and the
 * name of a process still running (not a later one with its pid);
 * then this process's first. */
static void dumps_whose(const char *prefix, struct dump_list *l)
{
	long last = -1;
	const char *name = "";
	char buf[DUMPS_PROGRAM_MAX];
	size_t i;

	l->pid = (long)getpid();
	(void)dumps_proc_name(l->pid, l->program, sizeof(l->program));
	for (i = 0; i < l->n; i++) {
		struct dump_entry *d = &l->d[i];
		d->pid = dumps_pid(prefix, d->name);
		d->mine = d->pid == l->pid;
		l->nmine += (size_t)d->mine;
		if (d->mine)
			name = l->program;
		else if (d->pid != last)
			name = d->pid <= 0 ||
			        dumps_pid_gone(d->pid, d->mtime.tv_sec)
			    ? ""
			    : dumps_proc_name(d->pid, buf, sizeof(buf));
		last = d->mine ? -1 : d->pid;
		snprintf(d->program, sizeof(d->program), "%s", name);
	}
	if (l->n > 0)
		qsort(l->d, l->n, sizeof(*l->d), dump_cmp_mine);
}

/* Free what dumps_scan() returned. */
static void dumps_free(struct dump_entry *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(d[i].name);
	free(d);
}

/* What a dump may have beside it, deleted and counted with it:
 * dump_symbolized's file, and the leak index. */
static const char *const companions[] = {".symbolized", ".trend"};
#define NCOMPANIONS (sizeof(companions) / sizeof(companions[0]))

/* The stat of "<name><companions[i]>" in @p dfd, if it is a regular file
 * of ours. */
static int companion_at(int dfd, const char *name, size_t i, struct stat *sb)
{
	char sym[NAME_MAX + 16];

	snprintf(sym, sizeof(sym), "%s%s", name, companions[i]);
	if (fstatat(dfd, sym, sb, AT_SYMLINK_NOFOLLOW) == -1)
		return -1;
	return S_ISREG(sb->st_mode) && sb->st_uid == geteuid() ? 0 : -1;
}

/* Our regular files in @p dir, newest first (a dump's size counts its
 * .symbolized companion); -1 with errno on error. */
static int dumps_scan(const char *prefix, const char *dir,
    struct dump_entry **out, size_t *nout)
{
	struct dump_entry *d = NULL, *nd;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat sb;
	DIR *dp;
	int dfd;

	if ((dp = opendir(dir)) == NULL)
		return -1;
	dfd = dirfd(dp);
	while ((de = readdir(dp)) != NULL && n < DUMPS_MAX) {
		if (!dumps_match(prefix, de->d_name))
			continue;
		/* lstat: a symlink with our name is not ours to delete; nor
		 * is a file another user planted with our name (in a shared
		 * dump_dir, a future mtime would push ours out of dump_keep). */
		if (fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nd = realloc(d, cap * sizeof(*d))) == NULL)
				goto nomem;
			d = nd;
		}
		if ((d[n].name = strdup(de->d_name)) == NULL)
			goto nomem;
		d[n].size = (long long)sb.st_size;
		d[n].mtime = sb.st_mtim;
		d[n].cause = dumps_cause(prefix, de->d_name);
		d[n].pinned =
		    d[n].cause == CAUSE_MEMORY && !(sb.st_mode & S_IWUSR);
		/* dump_symbolized's companion counts with its dump; the leak
		 * index (a few KiB at most, TREND_FNS_MAX lines) does not. */
		if (companion_at(dfd, de->d_name, 0, &sb) == 0)
			d[n].size += (long long)sb.st_size;
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

int dumps_pin(const char *path, int pin)
{
	return chmod(path, pin ? 0400 : 0600);
}

/*
 * dump_keep and dump_max_bytes, newest first: a file goes when it is past
 * the count or would take the total over the cap. The dump just written
 * always stays, or a cap smaller than one dump would eat every dump. A
 * pinned memory dump is passed by and counts for neither cap: the
 * newest DUMPS_PINNED_MAX of them; older pins are released here.
 */
uint64_t dumps_retain(const struct jm4lw_config *c, const char *dir,
    const char *newest, const struct core_log *log)
{
	unsigned long long total = 0;
	uint64_t deleted = 0;
	const char *base = strrchr(newest, '/');
	char path[PATH_MAX + 256];
	struct dump_entry *d;
	struct stat sb;
	size_t n, i, k, kept = 0, pins = 0;
	int full = 0, pair;

	if (c->dump_keep == 0 && c->dump_max_bytes == 0)
		return 0;
	base = base != NULL ? base + 1 : newest;
	if (dumps_scan(c->dump_prefix, dir, &d, &n) == -1) {
		core_logf(log, JM4LW_LOG_WARN, "retention: cannot read %s: %s",
		    dir, strerror(errno));
		return 0;
	}
	/* The dump just written takes its slot first, whatever the clock
	 * says about the others (a clock stepped back, copied files). */
	for (i = 0; i < n; i++)
		if (strcmp(d[i].name, base) == 0 && !d[i].pinned) {
			kept++;
			total += (unsigned long long)d[i].size;
		}
	for (i = 0; i < n; i++) {
		int mine = strcmp(d[i].name, base) == 0;
		if (d[i].pinned && ++pins > DUMPS_PINNED_MAX) {
			snprintf(path, sizeof(path), "%s/%s", dir, d[i].name);
			if (dumps_pin(path, 0) == 0)
				core_logf(log, JM4LW_LOG_INFO,
				    "retention: %s unpinned (more than %d "
				    "memory dumps pinned)",
				    path, DUMPS_PINNED_MAX);
			d[i].pinned = 0;
		}
		if (mine || d[i].pinned)
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
			core_logf(log, JM4LW_LOG_WARN,
			    "retention: cannot delete "
			    "%s: %s",
			    path, strerror(errno));
			continue;
		}
		/* Its companions go with it, when they are ours. */
		for (k = 0; k < NCOMPANIONS; k++) {
			snprintf(path, sizeof(path), "%s/%s", dir, d[i].name);
			pair = companion_at(AT_FDCWD, path, k, &sb) == 0;
			snprintf(path, sizeof(path), "%s/%s%s", dir, d[i].name,
			    companions[k]);
			if (pair && unlink(path) == -1 && errno != ENOENT)
				core_logf(log, JM4LW_LOG_WARN,
				    "retention: cannot delete %s: %s", path,
				    strerror(errno));
		}
		snprintf(path, sizeof(path), "%s/%s", dir, d[i].name);
		deleted++;
		core_logf(log, JM4LW_LOG_INFO,
		    "retention: deleted %s (%lld "
		    "bytes; dump_keep=%u, dump_max_bytes=%llu)",
		    path, (long long)d[i].size, c->dump_keep,
		    c->dump_max_bytes);
	}
	dumps_free(d, n);
	return deleted;
}

/*
 * jmls: our dumps in dump_dir, this process's first, each part newest
 * first, with their total and whose they are. The dump
 * directory shown is the canonical one, as in jmfp's replies.
 */
int core_dump_list(const struct core *c, struct dump_list *l)
{
	char path[PATH_MAX + 256];
	size_t i;
	int r;

	memset(l, 0, sizeof(*l));
	r = core_dump_dir_safe(c->cfg->dump_dir, l->dir, sizeof(l->dir), l->why,
	    sizeof(l->why));
	if (r < 0) {
		l->err = r == -2 ? EPERM : errno ? errno : ENAMETOOLONG;
		if (r == -2 ||
		    core_dump_dir(c->cfg->dump_dir, 0, l->dir,
		        sizeof(l->dir)) == -1)
			snprintf(l->dir, sizeof(l->dir), "%s",
			    c->cfg->dump_dir);
		return -1;
	}
	if (dumps_scan(c->cfg->dump_prefix, l->dir, &l->d, &l->n) == -1) {
		l->err = errno;
		return -1;
	}
	dumps_whose(c->cfg->dump_prefix, l);
	for (i = 0; i < l->n; i++) {
		l->total += (unsigned long long)l->d[i].size;
		/* Listed: a person has seen it, retention may have it. */
		if (l->d[i].pinned) {
			snprintf(path, sizeof(path), "%s/%s", l->dir,
			    l->d[i].name);
			(void)dumps_pin(path, 0);
		}
	}
	return 0;
}

/* Why core_dump_list() failed, for a face to show. */
const char *dump_list_error(const struct dump_list *l)
{
	return l->why[0] != '\0' ? l->why : strerror(l->err);
}

/* Free what core_dump_list() found. */
void dump_list_free(struct dump_list *l)
{
	dumps_free(l->d, l->n);
	l->d = NULL;
	l->n = 0;
}

/* This process's dumps, the leak question's series. */
int dumps_of_pid(const char *prefix, const char *dir, long pid, size_t max,
    char ***paths, size_t *n)
{
	char mine[NAME_MAX + 32], **p = NULL;
	struct dump_entry *d;
	size_t nd, i, k = 0, len;

	*paths = NULL;
	*n = 0;
	if (dumps_scan(prefix, dir, &d, &nd) == -1)
		return -1;
	len = (size_t)snprintf(mine, sizeof(mine), "%s.%ld.", prefix, pid);
	if (nd > 0 && (p = calloc(nd < max ? nd : max, sizeof(*p))) == NULL)
		goto nomem;
	/* Newest first: the newest @p max, then turned oldest first. */
	for (i = 0; i < nd && k < max; i++) {
		if (strncmp(d[i].name, mine, len) != 0)
			continue;
		if (asprintf(&p[k], "%s/%s", dir, d[i].name) == -1)
			goto nomem;
		k++;
	}
	for (i = 0; i < k / 2; i++) {
		char *x = p[i];
		p[i] = p[k - 1 - i];
		p[k - 1 - i] = x;
	}
	dumps_free(d, nd);
	*paths = p;
	*n = k;
	return 0;
nomem:
	for (i = 0; i < k; i++)
		free(p[i]);
	free(p);
	dumps_free(d, nd);
	errno = ENOMEM;
	return -1;
}

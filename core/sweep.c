/*
 * sweep — staging directories left in dump_dir by processes that are
 * gone (killed mid-dump): found by their name and their writer's pid,
 * and removed with what a crash left in them, never while that process
 * may still live.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "dumps.h"
#include "jm4lw.h"
#include "sweep.h"
#include "util.h"

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

/* A file a dump cut off by a crash leaves in its staging directory: the
 * dump, or its companion (".symbolized", ".trend") half written. */
static int stage_leftover(const char *prefix, const char *name)
{
	static const char *const sfx[] = {".symbolized", ".trend"};
	char dump[NAME_MAX + 1];
	size_t n = strlen(name), i, l;

	if (dumps_match(prefix, name))
		return 1;
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		l = strlen(sfx[i]);
		if (n > l && n - l < sizeof(dump) &&
		    strcmp(name + n - l, sfx[i]) == 0) {
			memcpy(dump, name, n - l);
			dump[n - l] = '\0';
			if (dumps_match(prefix, dump))
				return 1;
		}
	}
	return 0;
}

/*
 * A leak index ("<dump>.trend", ours, a regular file) whose dump is gone
 * and whose process is too: a process killed between the index's rename
 * and its dump's left it (the index goes in first), and retention, which
 * deletes an index with its dump, never meets it.
 */
static int index_orphan(const char *prefix, int dfd, const char *name)
{
	char dump[NAME_MAX + 1];
	size_t n = strlen(name);
	struct stat sb;
	long pid;

	if (n <= 6 || n - 6 >= sizeof(dump) ||
	    strcmp(name + n - 6, ".trend") != 0)
		return 0;
	memcpy(dump, name, n - 6);
	dump[n - 6] = '\0';
	if (!dumps_match(prefix, dump))
		return 0;
	pid = strtol(dump + strlen(prefix) + 1, NULL, 10);
	return fstatat(dfd, dump, &sb, AT_SYMLINK_NOFOLLOW) == -1 &&
	    errno == ENOENT &&
	    fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
	    dumps_pid_gone(pid, sb.st_mtime);
}

/*
 * A process that ended without jm4lw_free() (killed, or a preloaded agent
 * at exit) leaves its empty staging directory behind; the next process to
 * stage in @p dir removes it. Only directories we own, of pids that do not
 * run (dumps_pid_gone), untouched for STAGE_STALE_SECONDS; only our dump
 * files inside them (a profile cut off by the crash) and their companions
 * half written (stage_leftover: the soak found one of a SIGKILLed jm4lwd's
 * .symbolized kept every such directory); a directory holding anything
 * else stays. The leak indexes such a process left without their dumps go
 * too (index_orphan).
 */
void dumps_sweep_stages(const char *prefix, const char *dir,
    const struct core_log *log)
{
	struct dirent *de, *se;
	struct stat sb;
	DIR *d, *sd;
	time_t now = time(NULL);
	long pid;
	int fd;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (index_orphan(prefix, dirfd(d), de->d_name)) {
			(void)unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (!dumps_stage_match(prefix, de->d_name, &pid) ||
		    fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) ==
		        -1 ||
		    !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() ||
		    now - sb.st_mtime < STAGE_STALE_SECONDS ||
		    !dumps_pid_gone(pid, sb.st_mtime))
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
			if (stage_leftover(prefix, se->d_name) &&
			    fstatat(fd, se->d_name, &sb, AT_SYMLINK_NOFOLLOW) ==
			        0 &&
			    S_ISREG(sb.st_mode))
				(void)unlinkat(fd, se->d_name, 0);
		closedir(sd);
		if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
			core_logf(log, JM4LW_LOG_INFO,
			    "removed %s/%s, left by process %ld", dir,
			    de->d_name, pid);
	}
	closedir(d);
}

/*
 * stage — a dump's way to disk before it is published: the staging
 * directory (and the fork handlers that keep its lock usable in a child),
 * the dump's target and disk guard, prof.dump into a sealed memfd at the
 * host's priority, and the check that the profile is whole.
 */
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "cause.h"
#include "dumper.h"
#include "dumps.h"
#include "sweep.h"
#include "job.h"
#include "reason.h"
#include "result.h"
#include "stage.h"
#include "util.h"
#include "view.h"

/*
 * Did jemalloc write the whole profile? It flags a failed write(), but not
 * a short one, which is what a filling disk gives: a cut-off profile that
 * prof.dump calls a success. A whole one ends with the MAPPED_LIBRARIES
 * section (the maps, ending in a newline), and a disk that filled during
 * the dump has no room left after it. The section is last, so the search
 * runs from the end backwards: a few pages read, not the whole profile.
 */
static int dump_whole(int fd, const char *dir)
{
	static const char mark[] = "\nMAPPED_LIBRARIES:\n";
	const size_t mlen = sizeof(mark) - 1;
	char buf[DUMP_TAIL_CHUNK + sizeof(mark)];
	struct statvfs fs;
	struct stat sb;
	off_t end, start;
	size_t want, got;
	ssize_t r;
	int found = 0;

	if (fstat(fd, &sb) == -1 || sb.st_size == 0)
		return 0;
	/* Windows [start, end + mlen - 1), overlapping so no mark is split. */
	for (end = sb.st_size; end > 0 && !found; end = start) {
		start = end > DUMP_TAIL_CHUNK ? end - DUMP_TAIL_CHUNK : 0;
		want = (size_t)(end - start) + mlen - 1;
		if ((off_t)want > sb.st_size - start)
			want = (size_t)(sb.st_size - start);
		for (got = 0; got < want; got += (size_t)r) {
			r = pread(fd, buf + got, want - got,
			    start + (off_t)got);
			if (r == -1 && errno == EINTR) {
				r = 0;
				continue;
			}
			if (r <= 0)
				return 0;
		}
		if (end == sb.st_size && buf[got - 1] != '\n')
			return 0; /* cut inside a line */
		found = memmem(buf, got, mark, mlen) != NULL;
	}
	return found &&
	    !(dir != NULL && statvfs(dir, &fs) == 0 && fs.f_bavail == 0);
}

/* dump_min_free: never be the one that fills the disk. */
static int dump_no_room(struct job *j, const char *dir)
{
	unsigned long long avail;
	struct statvfs fs;
	char b1[32], b2[32];

	if (j->cfg.dump_min_free == 0 || statvfs(dir, &fs) == -1)
		return 0; /* the dump itself will say what is wrong */
	avail = (unsigned long long)fs.f_bavail * fs.f_frsize;
	if (avail >= j->cfg.dump_min_free)
		return 0;
	dump_why(&j->res, DUMP_REFUSED, REASON_NO_SPACE, ENOSPC,
	    "heap profile dump to %s "
	    "refused: %s free, dump_min_free is %s",
	    dir, fmt_bytes(b1, sizeof(b1), avail),
	    fmt_bytes(b2, sizeof(b2), j->cfg.dump_min_free));
	return 1;
}

/*
 * A staging directory is made on the worker and may be removed by a
 * cancel on the loop's thread (jm4lw_free): one lock for every dumper of
 * the process, held around the making and the removal only (both rare),
 * so no directory is made after its cancel has swept.
 */
static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t stage_once = PTHREAD_ONCE_INIT;

/* fork() while the worker holds stage_lock would leave the child a lock
 * nobody unlocks, and its first dump waiting on it for good (a host may
 * fork on its loop while the worker dumps: leak_host's frk1, the soak).
 * The fork waits for the lock instead; registered after jemalloc's own
 * handlers, so it is taken before them, while the worker can still
 * allocate. */
static void stage_prefork(void)
{
	pthread_mutex_lock(&stage_lock);
}

static void stage_postfork(void)
{
	pthread_mutex_unlock(&stage_lock);
}

static void stage_atfork(void)
{
	(void)pthread_atfork(stage_prefork, stage_postfork, stage_postfork);
}

/* dumper_fini() under stage_lock. */
static void dumper_fini_locked(struct dumper *d)
{
	if (d->stage[0] != '\0' && d->stage_pid == (long)getpid())
		(void)rmdir(d->stage);
	d->stage[0] = '\0';
}

/* Remove the staging directory, under stage_lock; a forked child's copy
 * of the path is its parent's to remove. */
void dumper_unstage(struct dumper *d)
{
	pthread_mutex_lock(&stage_lock);
	dumper_fini_locked(d);
	pthread_mutex_unlock(&stage_lock);
}

/* The staging directory @p d keeps, copied under stage_lock into @p buf:
 * "" when it is cancelled or the directory is another process's. */
void dumper_stage_of(struct dumper *d, char *buf, size_t len)
{
	pthread_mutex_lock(&stage_lock);
	snprintf(buf, len, "%s",
	    d->cancelled || d->stage_pid != (long)getpid() ? "" : d->stage);
	pthread_mutex_unlock(&stage_lock);
}

/*
 * Empty and remove our staging directory @p stage. Every file in it is
 * ours (the directory is 0700 and made by mkdtemp); a worker may still
 * create one meanwhile (jemalloc's creat() of the profile), so empty and
 * rmdir again until the directory is gone, a few rounds at most.
 */
static void stage_remove(const char *stage)
{
	struct dirent *de;
	DIR *dir;
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if ((dir = opendir(stage)) != NULL) {
			while ((de = readdir(dir)) != NULL)
				if (strcmp(de->d_name, ".") != 0 &&
				    strcmp(de->d_name, "..") != 0)
					(void)unlinkat(dirfd(dir), de->d_name,
					    0);
			closedir(dir);
		}
		if (rmdir(stage) == 0 || errno != ENOTEMPTY)
			return;
	}
}

void dumper_cancel(struct dumper *d)
{
	pthread_mutex_lock(&stage_lock);
	__atomic_store_n(&d->cancelled, 1, __ATOMIC_RELEASE);
	if (d->stage[0] != '\0' && d->stage_pid == (long)getpid())
		stage_remove(d->stage);
	pthread_mutex_unlock(&stage_lock);
}

int dumper_cancelled(const struct dumper *d)
{
	return __atomic_load_n(&d->cancelled, __ATOMIC_ACQUIRE);
}

/*
 * The staging directory for dumps into @p dir: the one this process made
 * there, if it still is a 0700 directory of ours, or a new one
 * "<dir>/.<prefix>.<pid>.XXXXXX" (and the stale ones of processes that
 * are gone, swept first). -1 and errno if none can be made.
 */
static int stage_ready(struct job *j, const char *dir,
    const struct core_log *log)
{
	struct dumper *d = j->dumper;
	size_t n = strlen(dir);
	struct stat sb;
	int e, rv = 0;

	pthread_once(&stage_once, stage_atfork);
	pthread_mutex_lock(&stage_lock);
	if (d->cancelled) { /* the module is being freed: stage nothing */
		pthread_mutex_unlock(&stage_lock);
		errno = ECANCELED;
		return -1;
	}
	if (d->stage[0] != '\0' && d->stage_pid == (long)getpid() &&
	    strncmp(d->stage, dir, n) == 0 && d->stage[n] == '/' &&
	    strchr(d->stage + n + 1, '/') == NULL &&
	    lstat(d->stage, &sb) == 0 && S_ISDIR(sb.st_mode) &&
	    sb.st_uid == geteuid() && (sb.st_mode & 077) == 0)
		goto out;
	dumper_fini_locked(d); /* another dump_dir now, or it was removed */
	dumps_sweep_stages(j->cfg.dump_prefix, dir, log);
	snprintf(d->stage, sizeof(d->stage), "%s/.%s.%ld.XXXXXX", dir,
	    j->cfg.dump_prefix, (long)getpid());
	if (mkdtemp(d->stage) == NULL) {
		e = errno;
		d->stage[0] = '\0';
		errno = e;
		rv = -1;
		goto out;
	}
	d->stage_pid = (long)getpid();
out:
	e = errno;
	pthread_mutex_unlock(&stage_lock);
	errno = e;
	return rv;
}

/* The staging directory of dump_dir for a job that makes no dump: its
 * rendering goes there, where the dumps' do. 0, or -1 with the job's
 * result saying why (@p what names the job). */
int job_stage(struct job *j, const char *what, char *dir, size_t len)
{
	struct core_log log = {.fn = dump_log, .arg = &j->res};
	char why[512];
	int r = core_dump_dir_safe(j->cfg.dump_dir, dir, len, why, sizeof(why));

	if (r == -2) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, EPERM,
		    "%s refused: %s", what, why);
		return -1;
	}
	if (r == -1 || stage_ready(j, dir, &log) == -1) {
		dump_why(&j->res, DUMP_FAILED, dump_fail_why(errno), errno,
		    "%s failed: cannot stage in %s: %s", what, j->cfg.dump_dir,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Where a dump goes: dump_dir checked (a directory, dump_min_free) and
 * resolved into @p dir, and a free name in j->res.path, its sequence
 * number in *@p seq. The name is built here from the configuration and
 * our pid, never from anything a peer sent. 0, or -1 with the job's
 * result saying why.
 */
static int dump_target(struct job *j, char *dir, size_t dirlen,
    unsigned long *seq)
{
	char *path = j->res.path;
	struct stat sb;
	long pid = (long)getpid();
	int tries;

	char why[512];
	int e;

	switch (core_dump_dir_safe(j->cfg.dump_dir, dir, dirlen, why,
	    sizeof(why))) {
	case -2:
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, EPERM,
		    "heap profile dump refused: %s", why);
		return -1;
	case -1:
		e = errno;
		if (core_dump_dir(j->cfg.dump_dir, 0, dir, dirlen) == -1)
			JOB_FAIL(j, j->cfg.dump_dir, e, strerror(e));
		else
			JOB_FAIL(j, dir, e, strerror(e));
		return -1;
	}
	if (stat(dir, &sb) == -1) {
		JOB_FAIL(j, dir, errno, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		JOB_FAIL(j, dir, ENOTDIR, strerror(ENOTDIR));
		return -1;
	}
	if (dump_no_room(j, dir))
		return -1;

	/* Skip names an earlier process with our pid left behind. */
	for (tries = 0;; tries++) {
		*seq = j->dumper->seq++;
		snprintf(path, sizeof(j->res.path), "%s/%s.%ld.%lu.%c.heap",
		    dir, j->cfg.dump_prefix, pid, *seq,
		    causes[j->cause].letter);
		if (lstat(path, &sb) == -1 && errno == ENOENT)
			return 0;
		if (tries == 1000) {
			JOB_FAIL(j, dir, EEXIST,
			    "no free file name after 1000 "
			    "tries");
			return -1;
		}
	}
}

/* Copy the @p fd (a memfd, at its start) into the new file @p path, ours
 * only. 0, or -1 with errno (ENOSPC for a disk that filled) and no file. */
static int dump_copy(int fd, const char *path)
{
	struct stat sb;
	off_t off = 0;
	ssize_t n;
	int out, e;

	if (fstat(fd, &sb) == -1)
		return -1;
	if ((out = open(path,
	         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) ==
	    -1)
		return -1;
	while (off < sb.st_size) {
		/* sendfile: in the kernel, memfd pages to page cache. */
		n = sendfile(out, fd, &off, (size_t)(sb.st_size - off));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n == 0 ? ENOSPC : errno;
			goto fail;
		}
	}
	if (close(out) == -1) {
		e = errno;
		out = -1;
		goto fail;
	}
	return 0;
fail:
	if (out != -1)
		close(out);
	(void)unlink(path);
	errno = e;
	return -1;
}

/*
 * A dump's first step: its target (dump_target), the staging directory
 * jemalloc writes in (@c j->tmp), and a memfd for prof.dump where there
 * is one. 0, or -1 with the job's result saying why.
 */
int stage_target(struct job *j)
{
	struct core_log log = {.fn = dump_log, .arg = &j->res};
	struct dumper *d = j->dumper;
	unsigned long seq;
	long pid = (long)getpid();
	int fd;

	if (dump_target(j, j->dir, sizeof(j->dir), &seq) == -1)
		return -1;
	/*
	 * jemalloc opens the profile with creat(), which follows symlinks: at
	 * a guessable name in a shared directory like /tmp, another user could
	 * point our dump at a file of their choosing, or open the 0644 file
	 * creat() makes and read the profile. So jemalloc writes in our
	 * staging directory (mkdtemp, 0700, kept for the process's next
	 * dumps), where nobody else can enter. The file is new there: an
	 * empty one made first with O_EXCL would be truncated by creat(),
	 * and a truncate makes ext4 (auto_da_alloc) start writeback of the
	 * whole profile in close(); a fresh directory per dump would cost an
	 * rmdir, 100-400 us on ext4 here. Both were measured (BENCHMARKS.md).
	 */
	if (stage_ready(j, j->dir, &log) == -1) {
		JOB_FAIL(j, j->dir, errno, strerror(errno));
		return -1;
	}
	snprintf(j->tmp, sizeof(j->tmp), "%s/%s.%ld.%lu.%c.heap", d->stage,
	    j->cfg.dump_prefix, pid, seq, causes[j->cause].letter);
	/*
	 * The lock window (stage_prof_dump) writes into memory, a memfd
	 * jemalloc opens by its /proc path, so no disk (a full page cache,
	 * writeback throttling) sits under jemalloc's profiling locks. Where
	 * there is no memfd or no /proc, jemalloc writes j->tmp itself.
	 */
	j->dump_to = j->tmp;
	j->dump_fd = -1;
	if ((fd = memfd_create("jm4lw-dump",
	         MFD_CLOEXEC | MFD_ALLOW_SEALING)) == -1)
		return 0;
	snprintf(j->mpath, sizeof(j->mpath), "/proc/self/fd/%d", fd);
	if (access(j->mpath, W_OK) == -1) { /* no /proc here */
		close(fd);
		return 0;
	}
	j->dump_fd = fd;
	j->dump_to = j->mpath;
	return 0;
}

/*
 * A dump's lock window: prof.dump, and nothing else. It holds
 * jemalloc's profiling locks, and every host thread that samples, frees a
 * sampled object or starts a thread waits on them (docs/ENGINE.md), so
 * job_run runs it on the thread at the host's priority (job->locked) and
 * the steps around it yield to the host. prof.dump's answer (0 or an
 * errno) waits in j->dump_err for stage_check.
 */
int stage_prof_dump(struct job *j)
{
	const char *path = j->dump_to;

	j->dump_err =
	    j->ops->mallctl("prof.dump", NULL, NULL, &path, sizeof(path));
	return 0;
}

/*
 * A dump's step after the lock window: the memfd sealed (nobody, not
 * even through /proc, can shrink it, so a view is parsed from a mapping
 * of it that cannot fault, with no second copy), the profile checked
 * whole, a kept one copied into the staging directory (j->tmp) and made
 * ours only; a view's dump stays in its memfd (j->dump_fd). 0, or -1
 * with the job's result saying why and nothing left behind.
 */
int stage_check(struct job *j)
{
	const char *dir = j->dir, *tmp = j->tmp;
	int e = j->dump_err, fd, whole, mfd = j->dump_fd;

	j->dump_fd = -1;
	if (mfd != -1 && e != 0) {
		close(mfd);
		mfd = -1;
	}
	if (mfd != -1)
		(void)fcntl(mfd, F_ADD_SEALS,
		    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	if (e == 0 && mfd != -1 && !dump_keeps(&j->res)) {
		/* A view's dump never goes to disk: parsed from memory. */
		if (!dump_whole(mfd, NULL)) {
			close(mfd);
			JOB_FAIL(j, dir, EIO, "the profile was cut short");
			return -1;
		}
		j->dump_fd = mfd;
		return 0;
	}
	if (e == 0 && mfd != -1) { /* kept: into the staging directory */
		if (dump_copy(mfd, tmp) == -1) {
			e = errno;
			close(mfd);
			JOB_FAIL(j, dir, e, strerror(e));
			return -1;
		}
		j->dump_fd = mfd; /* for its view (jmdf); job_run closes it */
	}
	if (e != 0) {
		/* jemalloc says only EFAULT; ask the directory why. */
		int why = e;
		(void)unlink(tmp);
		if (e == EFAULT)
			why = access(dir, W_OK | X_OK) == -1 ? errno : 0;
		JOB_FAIL(j, dir, why != 0 ? why : e,
		    why != 0 ? strerror(why)
		             : "jemalloc could not write the profile "
		               "(prof.dump returned EFAULT)");
		return -1;
	}
	/* Profiles show addresses and the maps: for our user only. */
	fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	whole = fd != -1 && dump_whole(fd, dir);
	e = fd == -1 ? errno : fchmod(fd, 0600) == -1 ? errno : 0;
	if (fd != -1)
		close(fd);
	if (!whole) {
		(void)unlink(tmp);
		JOB_FAIL(j, dir, EIO,
		    "the profile was cut short (is the disk "
		    "full?)");
		return -1;
	}
	if (e != 0) {
		(void)unlink(tmp);
		JOB_FAIL(j, dir, e, strerror(e));
		return -1;
	}
	return 0;
}

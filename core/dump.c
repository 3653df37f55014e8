/*
 * dump — one heap profile: admission on the loop (profiling usable, one at
 * a time, dump_min_interval), then the heavy part anywhere (disk guard,
 * staging, prof.dump, completeness, rename, retention), then the result
 * back on the loop. A job (a dump, a symbol lookup, a kept dump's view)
 * is run by job_run(), which touches nothing but the job, so the
 * module's worker thread can run it while the loop serves other peers.
 */
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

/* A failed dump, with the directory it was for. */
#define FAIL(j, dir, e, why)                                                   \
	dump_why(&(j)->res, DUMP_FAILED, fail_why(e), (e),                     \
	    "heap profile dump to %s failed: %s", (dir), (why))
#define FAIL_E(j, dir, e) FAIL(j, dir, e, strerror(e))

/* A failure's reason: a disk that filled is one of its own (HTTP's 503,
 * as for the disk guard). */
static enum core_reason fail_why(int e)
{
	return e == ENOSPC ? REASON_NO_SPACE : REASON_FAILED;
}

/* Fill a refusal or failure: its reason, its errno and its line. */
static void dump_why(struct dump_result *r, enum dump_status s,
    enum core_reason why, int err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void dump_why(struct dump_result *r, enum dump_status s,
    enum core_reason why, int err, const char *fmt, ...)
{
	va_list ap;

	r->status = s;
	r->why = why;
	r->err = err;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* Seconds from @p a to @p b. */
static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	    (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/*
 * Is a job out on the worker? Only one of this process: a host that forks
 * while its worker dumps leaves the child a copy of dump_running = 1, and
 * the child has no worker to end that job, so without the pid its jmfp
 * would say "in progress" forever.
 */
static int dump_busy(struct core *c)
{
	if (c->dump_running && c->dump_pid != (long)getpid())
		c->dump_running = 0; /* the parent's job, not ours */
	return c->dump_running;
}

/* Mark a job out on the worker, by this process. */
static void dump_begin(struct core *c)
{
	c->dump_running = 1;
	c->dump_pid = (long)getpid();
}

/*
 * dump_min_interval: a dump costs the process a pause and the disk a file,
 * so a storm of jmfp (a script in a loop, many operators) gets one dump
 * and then a line saying when the next one may come. One dump at a time:
 * a second request while one runs is refused at once, not queued, so no
 * peer waits on a dump it did not ask for.
 */
int core_dump_admit(struct core *c, const char *who, struct dump_result *r)
{
	double ago, min = (double)c->cfg->dump_min_interval;
	int scheduled = who == NULL;
	struct timespec now;
	enum prof_state s;
	int e;

	memset(r, 0, sizeof(*r));
	r->body_fd = -1;
	if (scheduled)
		who = "dump";
	if ((s = core_prof_state(c->ops, &e)) != PROF_READY) {
		r->status = DUMP_REFUSED;
		r->why = core_prof_why(s);
		r->err = e;
		core_prof_reason(s, e, c->hints, r->reason, sizeof(r->reason));
		return -1;
	}
	if (dump_busy(c)) {
		c->st.dumps_refused++;
		dump_why(r, DUMP_REFUSED, REASON_BUSY, EBUSY,
		    "%s refused: a dump is in "
		    "progress; retry when it is done",
		    who);
		r->retry_after = 1;
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (c->cfg->dump_min_interval != 0 && c->dumped) {
		ago = elapsed(&c->last_dump_at, &now);
		/* A timer fires one interval after its last tick, and the
		 * last dump began a little after that tick: let a schedule
		 * of exactly dump_min_interval through. */
		if (scheduled)
			min *= 0.9;
		if (ago < min) {
			c->st.dumps_refused++;
			r->retry_after =
			    (double)c->cfg->dump_min_interval - ago + 0.05;
			dump_why(r, DUMP_REFUSED, REASON_RATE, EAGAIN,
			    "%s refused: the last "
			    "dump was %.1f s ago and dump_min_interval is %u "
			    "s; retry in %.1f s",
			    who, ago, c->cfg->dump_min_interval,
			    r->retry_after);
			return -1;
		}
	}
	c->last_dump_at = now;
	c->dumped = 1;
	dump_begin(c);
	return 0;
}

/* Copy what the heavy part needs: the loop may reload meanwhile. */
void core_dump_prepare(struct core *c, struct job *j, struct dumper *d,
    int scheduled, enum dump_view view, int with_base)
{
	j->ops = c->ops;
	j->cfg = *c->cfg;
	j->kind = JOB_DUMP;
	j->scheduled = scheduled;
	j->want_alloc = c->pol.growth_bytes != 0 || c->pol.growth_pct != 0;
	j->symbolized = c->pol.symbolized;
	/* jmdf compares with the module's last kept dump. */
	j->with_base = with_base || views[view].base == VIEW_BASE_ALWAYS;
	snprintf(j->base, sizeof(j->base), "%s",
	    j->with_base && c->last_dump_time != 0 ? c->last_dump : "");
	j->addrs = NULL;
	j->addrs_len = 0;
	j->dumper = d;
	j->hints = c->hints;
	j->locked = (struct job_locked){0}; /* here, unless the shell says */
	j->dump_fd = -1;
	memset(&j->res, 0, sizeof(j->res));
	j->res.view = view;
	j->res.body_fd = -1;
}

/*
 * A job that makes no dump (a symbol lookup, a kept dump's view): no rate
 * limit, only a free worker. 0 with @p j cleared for @p kind, or -1 with
 * @p r saying why not.
 */
static int core_job_admit(struct core *c, struct job *j, struct dumper *d,
    enum job_kind kind, const char *what, struct dump_result *r)
{
	memset(r, 0, sizeof(*r));
	r->body_fd = -1;
	if (dump_busy(c)) {
		dump_why(r, DUMP_REFUSED, REASON_BUSY, EBUSY,
		    "%s refused: a dump is in progress; retry when it is done",
		    what);
		r->retry_after = 1;
		return -1;
	}
	memset(j, 0, sizeof(*j));
	j->dump_fd = -1;
	j->ops = c->ops;
	j->cfg = *c->cfg;
	j->kind = kind;
	j->dumper = d;
	j->hints = c->hints;
	j->res.body_fd = -1;
	return 0;
}

int core_symbols_admit(struct core *c, struct job *j, struct dumper *d,
    const char *addrs, size_t len, struct dump_result *r)
{
	if (core_job_admit(c, j, d, JOB_SYMBOLS, "symbol lookup", r) == -1)
		return -1;
	if ((j->addrs = malloc(len + 1)) == NULL) {
		dump_why(r, DUMP_FAILED, REASON_FAILED, ENOMEM,
		    "symbol lookup failed: %s", strerror(ENOMEM));
		return -1;
	}
	memcpy(j->addrs, addrs, len);
	j->addrs_len = len;
	dump_begin(c);
	return 0;
}

/* The path of our dump @p name in dump_dir, if it is one and is there:
 * 0, or -1 with @p r saying why. A name from a peer never names anything
 * but a dump of ours in the directory (dumps_match: no '/', no '..'). */
static int kept_dump(struct core *c, const char *name, char *path, size_t len,
    struct dump_result *r)
{
	char dir[PATH_MAX], q[80], why[512];
	struct stat sb;
	int d = -1;

	if (dumps_match(c->cfg->dump_prefix, name))
		d = core_dump_dir_safe(c->cfg->dump_dir, dir, sizeof(dir), why,
		    sizeof(why));
	if (d == -2) {
		dump_why(r, DUMP_FAILED, REASON_FAILED, EPERM, "%s", why);
		return -1;
	}
	if (d == -1 || (size_t)snprintf(path, len, "%s/%s", dir, name) >= len ||
	    lstat(path, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		dump_why(r, DUMP_REFUSED, REASON_NO_DUMP, ENOENT,
		    "no dump %s in dump_dir",
		    quote(q, sizeof(q), name, strlen(name)));
		return -1;
	}
	return 0;
}

int core_render_admit(struct core *c, struct job *j, struct dumper *d,
    const char *name, const char *base_name, enum dump_view view,
    struct dump_result *r)
{
	if (core_job_admit(c, j, d, JOB_RENDER, "rendering", r) == -1 ||
	    kept_dump(c, name, j->path, sizeof(j->path), r) == -1 ||
	    (base_name != NULL &&
	        kept_dump(c, base_name, j->base, sizeof(j->base), r) == -1))
		return -1;
	j->with_base = base_name != NULL;
	j->res.view = view;
	dump_begin(c);
	return 0;
}

/* The leak question: no dump made, so no rate limit; a free worker. */
int core_leaks_admit(struct core *c, struct job *j, struct dumper *d, int json,
    struct dump_result *r)
{
	if (core_job_admit(c, j, d, JOB_LEAKS, "leak suspects", r) == -1)
		return -1;
	j->json = json;
	j->pid = (long)getpid();
	j->res.view = DUMP_VIEW_LEAKS;
	dump_begin(c);
	return 0;
}

void job_release(struct job *j)
{
	free(j->addrs);
	j->addrs = NULL;
	j->addrs_len = 0;
}

void dump_result_release(struct dump_result *r)
{
	if (r->body && r->body_fd != -1)
		close(r->body_fd);
	r->body = 0;
	r->body_fd = -1;
}

/*
 * An unnamed file in the staging directory for a rendering: O_TMPFILE
 * where the filesystem has it, so nothing is ever left behind; else a
 * name unlinked at once. Not memory: a flame graph of a big heap runs to
 * megabytes, and the host's anonymous memory is not ours to take. -1
 * and errno on failure.
 */
static int body_open(const char *stage)
{
	char path[CORE_PATH_MAX + 16];
	int fd;

#ifdef O_TMPFILE
	if ((fd = open(stage, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) != -1)
		return fd;
#endif
	snprintf(path, sizeof(path), "%s/body.XXXXXX", stage);
	if ((fd = mkostemp(path, O_CLOEXEC)) != -1)
		(void)unlink(path);
	return fd;
}

static void job_log(void *arg, int level, const char *msg);

/* What the symbolizer could not get (issue 21), in the host's log: the
 * text views say it in their reply, the others have no room for it. */
static void dump_debug_note(struct job *j)
{
	struct core_log log = {.fn = job_log, .arg = &j->res};
	const char *w = profile_debug_warning();

	if (w != NULL)
		core_logf(&log, JM4LW_LOG_WARN, "symbolizing: %s", w);
}

/*
 * Render the job's view of the profile at @p dump (or in the job's sealed
 * memfd, when it has one) into a body file (or,
 * with @p symbolized, write "<path>.symbolized" next to @p path). 0, or
 * -1 with the job's result saying why.
 */
static int dump_render(struct job *j, const char *dump, const char *dir)
{
	char err[CORE_PATH_MAX + 128];
	FILE *f;
	int fd, r;
	off_t len;

	if ((fd = body_open(j->dumper->stage)) == -1 ||
	    (f = fdopen(dup(fd), "w+")) == NULL) {
		FAIL_E(j, dir, errno);
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (j->kind == JOB_SYMBOLS)
		r = profile_symbols(j->addrs, j->addrs_len, f, err,
		    sizeof(err));
	else if (j->kind == JOB_LEAKS)
		r = profile_leaks(j->leaks, j->nleaks, j->dumper->stage,
		    j->json, f, err, sizeof(err));
	else if (j->dump_fd != -1) /* the dump in its sealed memfd */
		r = profile_render_fd(j->res.view, j->dump_fd,
		    "the heap profile", j->with_base, j->base, j->hints, f, err,
		    sizeof(err));
	else
		r = profile_render(j->res.view, dump, j->with_base, j->base,
		    j->hints, f, err, sizeof(err));
	if (fflush(f) != 0 && r == 0) {
		snprintf(err, sizeof(err), "cannot write the reply: %s",
		    strerror(errno));
		r = -1;
	}
	fclose(f);
	if (r != 0 || (len = lseek(fd, 0, SEEK_END)) == -1 ||
	    lseek(fd, 0, SEEK_SET) == -1) {
		close(fd);
		if (r == PROFILE_NO_BASE) /* nothing kept to compare with */
			dump_why(&j->res, DUMP_REFUSED, REASON_NO_BASE, ENODATA,
			    "%s", err);
		else if (r == PROFILE_NO_SAMPLES) /* a state, not a failure */
			dump_why(&j->res, DUMP_REFUSED, REASON_NO_SAMPLES,
			    ENODATA, "%s", err);
		else if (r == PROFILE_BAD_ADDRS)
			dump_why(&j->res, DUMP_FAILED, REASON_BAD_REQUEST,
			    EINVAL, "%s", err);
		else
			dump_why(&j->res, DUMP_FAILED, REASON_FAILED, EIO, "%s",
			    err);
		return -1;
	}
	j->res.body = 1;
	j->res.body_fd = fd;
	j->res.body_len = (size_t)len;
	dump_debug_note(j);
	return 0;
}

static int stage_ready(struct job *j, const char *dir,
    const struct core_log *log);
static void job_log(void *arg, int level, const char *msg);
static void dumper_unindexed(struct dumper *d, const char *path);

/* The raw view: the dump itself as the body, the job's memfd (taken) when
 * it has one, else the file at @p path. */
static void dump_raw_body(struct job *j, const char *path, const char *dir)
{
	struct stat sb;
	int fd = j->dump_fd;

	j->dump_fd = -1;
	if ((fd == -1 &&
	        (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) ||
	    fstat(fd, &sb) == -1) {
		FAIL_E(j, dir, errno);
		if (fd != -1)
			close(fd);
		return;
	}
	j->res.body = 1;
	j->res.body_fd = fd;
	j->res.body_len = (size_t)sb.st_size;
	j->res.status = DUMP_OK;
}

/* The staging directory of dump_dir for a job that makes no dump: its
 * rendering goes there, where the dumps' do. 0, or -1 with the job's
 * result saying why (@p what names the job). */
static int job_stage(struct job *j, const char *what, char *dir, size_t len)
{
	struct core_log log = {.fn = job_log, .arg = &j->res};
	char why[512];
	int r = core_dump_dir_safe(j->cfg.dump_dir, dir, len, why, sizeof(why));

	if (r == -2) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, EPERM,
		    "%s refused: %s", what, why);
		return -1;
	}
	if (r == -1 || stage_ready(j, dir, &log) == -1) {
		dump_why(&j->res, DUMP_FAILED, fail_why(errno), errno,
		    "%s failed: cannot stage in %s: %s", what, j->cfg.dump_dir,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* JOB_SYMBOLS: name the addresses of j->addrs, into a body file. */
static void symbols_run(struct job *j)
{
	char dir[PATH_MAX];

	if (job_stage(j, "symbol lookup", dir, sizeof(dir)) == 0 &&
	    dump_render(j, NULL, dir) == 0)
		j->res.status = DUMP_OK;
}

/* JOB_RENDER: a view of the kept dump j->path, into a body file (raw:
 * the dump, its stacks cut by render_dump); a view with neither a
 * renderer nor the dump is the dump file itself. */
static void render_run(struct job *j)
{
	char dir[PATH_MAX];

	if (job_stage(j, "rendering", dir, sizeof(dir)) == -1)
		return;
	if (views[j->res.view].render == NULL &&
	    !views[j->res.view].carries_dump)
		dump_raw_body(j, j->path, dir);
	else if (dump_render(j, j->path, dir) == 0)
		j->res.status = DUMP_OK;
}

/* JOB_LEAKS: the suspects over this process's kept dumps (the newest
 * TREND_POINTS_MAX), into a body file. */
static void leaks_run(struct job *j)
{
	char dir[PATH_MAX];
	size_t i;

	if (job_stage(j, "leak suspects", dir, sizeof(dir)) == -1)
		return;
	if (dumps_of_pid(j->cfg.dump_prefix, dir, j->pid, LEAKS_DUMPS_MAX,
	        &j->leaks, &j->nleaks) == -1) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, errno,
		    "leak suspects failed: cannot list %s: %s", dir,
		    strerror(errno));
		return;
	}
	if (dump_render(j, NULL, dir) == 0)
		j->res.status = DUMP_OK;
	for (i = 0; i < j->nleaks; i++)
		free(j->leaks[i]);
	free(j->leaks);
	j->leaks = NULL;
	j->nleaks = 0;
}

/*
 * dump_symbolized: "<tmp>.symbolized" beside the dump in the staging
 * directory, renamed in after the dump. A failure is logged, never the
 * dump's failure: the dump itself is there.
 */
static void dump_write_symbolized(const char *tmp, const struct core_log *log)
{
	char err[CORE_PATH_MAX + 128], out[CORE_PATH_MAX + 160];
	FILE *f = NULL;
	int r, fd;

	snprintf(out, sizeof(out), "%s.symbolized", tmp);
	if ((fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) ==
	        -1 ||
	    (f = fdopen(fd, "w")) == NULL) {
		core_logf(log, JM4LW_LOG_WARN, "cannot write %s: %s", out,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	r = profile_symbolized(tmp, f, err, sizeof(err));
	if (fclose(f) != 0 && r == 0) {
		snprintf(err, sizeof(err), "%s", strerror(errno));
		r = -1;
	}
	if (r == -1) {
		(void)unlink(out);
		core_logf(log, JM4LW_LOG_WARN, "cannot write %s: %s", out, err);
	}
}

/* A job's log sink: lines wait in the result for the loop. */
static void job_log(void *arg, int level, const char *msg)
{
	struct dump_result *r = arg;
	size_t n = strlen(msg);

	if (r->loglen + n + 2 >= sizeof(r->log))
		return; /* the first lines say enough */
	r->log[r->loglen++] = (char)('0' + level);
	memcpy(r->log + r->loglen, msg, n);
	r->loglen += n;
	r->log[r->loglen++] = '\n';
	r->log[r->loglen] = '\0';
}

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

/* Forget the dumps still to index. */
static void dumper_unindexed_clear(struct dumper *d)
{
	while (d->nunindexed > 0)
		free(d->unindexed[--d->nunindexed]);
}

/* Remove the staging directory; a forked child's copy of the path is its
 * parent's to remove. */
void dumper_fini(struct dumper *d)
{
	pthread_mutex_lock(&stage_lock);
	dumper_fini_locked(d);
	pthread_mutex_unlock(&stage_lock);
	dumper_unindexed_clear(d);
}

/* The list of dumps to index is this process's: a fork child's copy
 * (the parent's dumps, its strings) is dropped, not freed. */
static void dumper_unindexed_ours(struct dumper *d)
{
	if (d->unindexed_pid != (long)getpid()) {
		d->nunindexed = 0;
		d->unindexed_pid = (long)getpid();
	}
}

/* The oldest dump to index, taken off the list (the caller frees it). */
static char *dumper_unindexed_pop(struct dumper *d)
{
	char *path = d->unindexed[0];

	memmove(d->unindexed, d->unindexed + 1,
	    (d->nunindexed - 1) * sizeof(d->unindexed[0]));
	d->nunindexed--;
	return path;
}

/* The kept dump @p path waits for its leak index (dumper_idle); past
 * DUMPER_UNINDEXED_MAX the oldest waits for the first leak question. */
static void dumper_unindexed(struct dumper *d, const char *path)
{
	char *p;

	dumper_unindexed_ours(d);
	if ((p = strdup(path)) == NULL)
		return;
	if (d->nunindexed == DUMPER_UNINDEXED_MAX)
		free(dumper_unindexed_pop(d));
	d->unindexed[d->nunindexed++] = p;
}

int dumper_idle(struct dumper *d)
{
	char err[CORE_PATH_MAX + 128], stage[sizeof(d->stage)];
	char *path;

	dumper_unindexed_ours(d);
	if (d->nunindexed == 0)
		return 0;
	/* The staging directory the dumps were kept through: the index is
	 * made there, so a dumper_cancel (jm4lw_free) meanwhile takes it
	 * with the directory and nothing is left half written. */
	pthread_mutex_lock(&stage_lock);
	snprintf(stage, sizeof(stage), "%s",
	    d->cancelled || d->stage_pid != (long)getpid() ? "" : d->stage);
	pthread_mutex_unlock(&stage_lock);
	if (stage[0] == '\0') {
		dumper_unindexed_clear(d);
		return 0;
	}
	path = dumper_unindexed_pop(d);
	/* Gone (retention) or unreadable: jmlk says so if it matters. */
	(void)profile_index_kept(path, stage, err, sizeof(err));
	free(path);
	return d->nunindexed > 0;
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
			FAIL(j, j->cfg.dump_dir, e, strerror(e));
		else
			FAIL(j, dir, e, strerror(e));
		return -1;
	}
	if (stat(dir, &sb) == -1) {
		FAIL(j, dir, errno, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		FAIL(j, dir, ENOTDIR, strerror(ENOTDIR));
		return -1;
	}
	if (dump_no_room(j, dir))
		return -1;

	/* Skip names an earlier process with our pid left behind. */
	for (tries = 0;; tries++) {
		*seq = j->dumper->seq++;
		snprintf(path, sizeof(j->res.path), "%s/%s.%ld.%lu.heap", dir,
		    j->cfg.dump_prefix, pid, *seq);
		if (lstat(path, &sb) == -1 && errno == ENOENT)
			return 0;
		if (tries == 1000) {
			FAIL(j, dir, EEXIST,
			    "no free file name after 1000 "
			    "tries");
			return -1;
		}
	}
}

/* prof.dump's call, for the thread at the host's priority. */
struct locked_dump {
	const struct core_ops *ops;
	const char *path;
	int e;
};

static void locked_dump_run(void *arg)
{
	struct locked_dump *ld = arg;

	ld->e = ld->ops->mallctl("prof.dump", NULL, NULL, &ld->path,
	    sizeof(ld->path));
}

/* prof.dump of the heap to @p path, as the job runs its locked part. */
static int job_prof_dump(struct job *j, const char *path)
{
	struct locked_dump ld = {.ops = j->ops, .path = path, .e = 0};

	if (j->locked.run != NULL)
		j->locked.run(j->locked.ctx, locked_dump_run, &ld);
	else
		locked_dump_run(&ld);
	return ld.e;
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
 * prof.dump for the job: the one step that holds jemalloc's profiling
 * locks, and every host thread that samples, frees a sampled object or
 * starts a thread waits on them (docs/ENGINE.md). So it runs on the
 * thread at the host's priority (job->locked), and into memory, a memfd
 * jemalloc opens by its /proc path, so no disk (a full page cache,
 * writeback throttling) sits under the locks. The memfd is then sealed:
 * nobody, not even through /proc, can shrink it, so the view is parsed
 * from a mapping of it that cannot fault, with no second copy. Where
 * there is no memfd or no /proc, jemalloc writes @p tmp itself.
 * prof.dump's answer (0 or an errno); *@p mfd is the memfd on 0, or -1
 * when the dump is in @p tmp.
 */
static int dump_locked(struct job *j, const char *tmp, int *mfd)
{
	char mpath[64];
	int fd, e;

	*mfd = -1;
	if ((fd = memfd_create("jm4lw-dump",
	         MFD_CLOEXEC | MFD_ALLOW_SEALING)) == -1)
		return job_prof_dump(j, tmp);
	snprintf(mpath, sizeof(mpath), "/proc/self/fd/%d", fd);
	if (access(mpath, W_OK) == -1) { /* no /proc here */
		close(fd);
		return job_prof_dump(j, tmp);
	}
	if ((e = job_prof_dump(j, mpath)) != 0) {
		close(fd);
		return e;
	}
	(void)fcntl(fd, F_ADD_SEALS,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	*mfd = fd;
	return 0;
}

/*
 * A dump's first step: its target (dump_target), then prof.dump to a
 * file in the staging directory (@p tmp), checked whole and made ours
 * only. 0, or -1 with the job's result saying why and nothing left
 * behind.
 */
static int dump_stage(struct job *j, char *dir, size_t dirlen, char *tmp,
    size_t tmplen)
{
	struct core_log log = {.fn = job_log, .arg = &j->res};
	struct dumper *d = j->dumper;
	unsigned long seq;
	long pid = (long)getpid();
	int e, fd, whole, mfd;

	if (dump_target(j, dir, dirlen, &seq) == -1)
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
	if (stage_ready(j, dir, &log) == -1) {
		FAIL(j, dir, errno, strerror(errno));
		return -1;
	}
	snprintf(tmp, tmplen, "%s/%s.%ld.%lu.heap", d->stage,
	    j->cfg.dump_prefix, pid, seq);

	e = dump_locked(j, tmp, &mfd);
	if (e == 0 && mfd != -1 && !views[j->res.view].keeps) {
		/* A view's dump never goes to disk: parsed from memory. */
		if (!dump_whole(mfd, NULL)) {
			close(mfd);
			FAIL(j, dir, EIO, "the profile was cut short");
			return -1;
		}
		j->dump_fd = mfd;
		return 0;
	}
	if (e == 0 && mfd != -1) { /* kept: into the staging directory */
		if (dump_copy(mfd, tmp) == -1) {
			e = errno;
			close(mfd);
			FAIL(j, dir, e, strerror(e));
			return -1;
		}
		j->dump_fd = mfd; /* for its view (jmdf); dump_run closes it */
	}
	if (e != 0) {
		/* jemalloc says only EFAULT; ask the directory why. */
		int why = e;
		(void)unlink(tmp);
		if (e == EFAULT)
			why = access(dir, W_OK | X_OK) == -1 ? errno : 0;
		FAIL(j, dir, why != 0 ? why : e,
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
		FAIL(j, dir, EIO,
		    "the profile was cut short (is the disk "
		    "full?)");
		return -1;
	}
	if (e != 0) {
		(void)unlink(tmp);
		FAIL(j, dir, e, strerror(e));
		return -1;
	}
	return 0;
}

/*
 * jmtp, jmcs, jmfg, HTTP's views: the dump is only the way to the
 * answer, read where it was written (its memfd, or the staging file where
 * there is none) and never shown in dump_dir (raw
 * is the dump with its stacks cut, render_dump); a view with neither a
 * renderer nor the dump answers with the dump itself, unlinked but open.
 */
static void dump_answer_view(struct job *j, const char *tmp, const char *dir)
{
	j->res.path[0] = '\0';
	if (views[j->res.view].render == NULL &&
	    !views[j->res.view].carries_dump)
		dump_raw_body(j, tmp, dir);
	else if (dump_render(j, tmp, dir) == 0)
		j->res.status = DUMP_OK;
	(void)unlink(tmp); /* if the dump went there: no memfd here */
}

/*
 * A kept dump's second step: rename it from the staging directory into
 * dump_dir, so no reader ever sees half a profile (rename replaces a
 * planted symlink at the final name rather than following it), its
 * symbolized companion (dump_symbolized) after it. 0, or -1 with the
 * job's result saying why.
 */
static int dump_publish(struct job *j, const char *tmp, const char *dir,
    const struct core_log *log)
{
	char sym[CORE_PATH_MAX + 160], symto[CORE_PATH_MAX + 16];
	const char *path = j->res.path;
	int e;

	if (j->symbolized)
		dump_write_symbolized(tmp, log);
	if (rename(tmp, path) == -1) {
		e = errno;
		(void)unlink(tmp);
		FAIL(j, dir, e, strerror(e));
		return -1;
	}
	/* Its leak index is work nobody waits for: after the answer
	 * (dumper_idle), or at the first leak question. */
	dumper_unindexed(j->dumper, path);
	if (j->symbolized) { /* its companion follows it in */
		snprintf(sym, sizeof(sym), "%s.symbolized", tmp);
		snprintf(symto, sizeof(symto), "%s.symbolized", path);
		if (access(sym, F_OK) == 0 && rename(sym, symto) == -1) {
			core_logf(log, JM4LW_LOG_WARN, "cannot write %s: %s",
			    symto, strerror(errno));
			(void)unlink(sym);
		}
	}
	return 0;
}

/*
 * A kept dump's last step: its view when it has one (jmdf's growth), the
 * growth baseline, and retention. A view that fails keeps the dump all
 * the same, and says where it is.
 */
static void dump_answer(struct job *j, const char *dir,
    const struct core_log *log)
{
	const char *path = j->res.path;
	size_t n;

	j->res.kept = 1;
	/* jmdf's view, from the sealed memfd where there is one (the kept
	 * file would be read into memory: dump_render). */
	if (views[j->res.view].render != NULL &&
	    dump_render(j, path, dir) == -1) {
		n = strlen(j->res.reason);
		snprintf(j->res.reason + n, sizeof(j->res.reason) - n,
		    " (the dump is kept: %s)", path);
		j->res.deleted = dumps_retain(&j->cfg, dir, path, log);
		return;
	}
	j->res.status = DUMP_OK;
	/* dump_on_growth's new baseline; an epoch costs tens of us under
	 * load, so only when growth is watched. */
	if (j->want_alloc) {
		ctl_epoch(j->ops);
		j->res.alloc_known =
		    ctl_size(j->ops, "stats.allocated", &j->res.alloc) == 0;
	}
	j->res.deleted = dumps_retain(&j->cfg, dir, path, log);
}

/* JOB_DUMP: stage, then answer with the view, or publish and answer. */
static void dump_run(struct job *j)
{
	struct core_log log = {.fn = job_log, .arg = &j->res};
	char dir[PATH_MAX], tmp[sizeof(j->dumper->stage) + 128];

	if (dump_stage(j, dir, sizeof(dir), tmp, sizeof(tmp)) == -1)
		goto out;
	/* Cancelled during prof.dump (jm4lw_free): no rendering, which
	 * can take seconds, and no new file in dump_dir. */
	if (dumper_cancelled(j->dumper)) {
		(void)unlink(tmp);
		FAIL(j, dir, ECANCELED, "cancelled: the module was freed");
		goto out;
	}
	if (!views[j->res.view].keeps)
		dump_answer_view(j, tmp, dir);
	else if (dump_publish(j, tmp, dir, &log) == 0)
		dump_answer(j, dir, &log);
out:
	if (j->dump_fd != -1) /* the memfd, unless it became the body */
		close(j->dump_fd);
	j->dump_fd = -1;
}

/* What the worker runs for each kind of job. */
static void (*const job_runs[])(struct job *) = {
    [JOB_DUMP] = dump_run,
    [JOB_SYMBOLS] = symbols_run,
    [JOB_RENDER] = render_run,
    [JOB_LEAKS] = leaks_run,
};

/* Run @p j by its kind. */
void job_run(struct job *j)
{
	profile_debug_from(&j->cfg);
	job_runs[j->kind](j);
}

/* Back on the loop: what the dump changed, and its log lines. */
void core_dump_done(struct core *c, const struct dump_result *r)
{
	const char *s = r->log, *nl;
	char line[512];
	size_t n;

	c->dump_running = 0;
	for (; *s != '\0' && (nl = strchr(s, '\n')) != NULL; s = nl + 1) {
		n = (size_t)(nl - s - 1);
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, s + 1, n);
		line[n] = '\0';
		if (c->log.fn != NULL)
			c->log.fn(c->log.arg, s[0] - '0', line);
	}
	c->st.dumps_deleted += r->deleted;
	if (r->kept) { /* jmfp, jmdf, the schedule: a dump in dump_dir */
		c->st.dumps_written++;
		snprintf(c->last_dump, sizeof(c->last_dump), "%s", r->path);
		c->last_dump_time = time(NULL);
		/* An older baseline predates this dump; without growth, a
		 * later reload that turns it on takes its first look. */
		c->alloc_known = r->alloc_known;
		c->alloc_at_dump = r->alloc;
	}
	if (r->view == DUMP_VIEW_LEAKS)
		return; /* a question about dumps: no dump, no profile */
	switch (r->status) {
	case DUMP_OK:
		if (r->view != DUMP_VIEW_NONE)
			c->st.profiles_served++;
		break;
	case DUMP_REFUSED:
		c->st.dumps_refused++;
		break;
	case DUMP_FAILED:
		c->st.dumps_failed++;
		break;
	}
}

/* Admit, run and finish one dump on the calling thread. */
void core_dump_sync(struct core *c, struct dumper *d, const char *who,
    enum dump_view view, struct dump_result *r)
{
	struct job *j;

	if (core_dump_admit(c, who, r) == -1)
		return;
	/* The job holds a whole configuration: keep it off the stack. */
	if ((j = malloc(sizeof(*j))) == NULL) {
		c->dump_running = 0;
		dump_why(r, DUMP_FAILED, REASON_FAILED, ENOMEM,
		    "heap profile dump failed: %s", strerror(ENOMEM));
		c->st.dumps_failed++;
		return;
	}
	core_dump_prepare(c, j, d, who == NULL, view, 0);
	job_run(j);
	core_dump_done(c, &j->res);
	*r = j->res;
	free(j);
}

/* The leak question on the calling thread, for callers without a
 * worker. */
void core_leaks_sync(struct core *c, struct dumper *d, int json,
    struct dump_result *r)
{
	struct job *j;

	if ((j = malloc(sizeof(*j))) == NULL) {
		memset(r, 0, sizeof(*r));
		r->body_fd = -1;
		dump_why(r, DUMP_FAILED, REASON_FAILED, ENOMEM,
		    "leak suspects failed: %s", strerror(ENOMEM));
		return;
	}
	if (core_leaks_admit(c, j, d, json, r) == 0) {
		job_run(j);
		core_dump_done(c, &j->res);
		*r = j->res;
	}
	free(j);
}

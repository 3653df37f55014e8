/*
 * jemalloc's own dumps made ours: where jemalloc writes them (prof.prefix),
 * prof.gdump for the rate limit, and job_adopt's step and its end on the
 * loop. The loop's side (noticing a file, the gdump timer) is the shell's
 * (daemon/jedumps.c).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cause.h"
#include "core.h"
#include "dumps.h"
#include "jedumps.h"
#include "jm4lw.h"
#include "job.h"
#include "profile.h"
#include "publish.h"
#include "result.h"
#include "stage.h"
#include "util.h"

/* jemalloc's opt.prof_prefix when nobody set one (src/jemalloc.c). */
#define JEMALLOC_DEFAULT_PREFIX "jeprof"

/* Put prof.prefix back to what the host started with (opt.prof_prefix). */
static void prefix_restore(const struct core_ops *ops)
{
	const char *opt = NULL;
	size_t len = sizeof(opt);

	if (ops->mallctl("opt.prof_prefix", &opt, &len, NULL, 0) == 0 &&
	    opt != NULL)
		(void)ops->mallctl("prof.prefix", NULL, NULL, &opt,
		    sizeof(opt));
}

/* A case that does not set: undo an earlier set, and say @p st. */
static enum jedumps_prefix prefix_left(const struct core_ops *ops, int was_set,
    enum jedumps_prefix st)
{
	if (was_set)
		prefix_restore(ops);
	return st;
}

enum jedumps_prefix core_jemalloc_prefix(const struct core_ops *ops,
    const struct jm4lw_config *cfg, int adopt, int was_set, char *dir,
    size_t dirlen, char *line, size_t linelen)
{
	char why[512], want[CORE_PATH_MAX];
	const char *opt = NULL, *p;
	size_t len = sizeof(opt);
	int e;

	dir[0] = line[0] = '\0';
	/* prof.prefix answers ENOENT when opt.prof is off (or is not
	 * built in); then jemalloc writes no dumps of its own. */
	if (ops->mallctl("opt.prof_prefix", &opt, &len, NULL, 0) != 0 ||
	    opt == NULL)
		return JEDUMPS_OFF;
	if (!adopt) {
		snprintf(line, linelen,
		    "jemalloc's own dumps go to %s.* (jemalloc_dumps = leave)",
		    opt[0] != '\0' ? opt : "nowhere: prof_prefix is empty,");
		return prefix_left(ops, was_set, JEDUMPS_LEAVE);
	}
	e = core_dump_dir_safe(cfg->dump_dir, dir, dirlen, why, sizeof(why));
	if (e != 0) {
		dir[0] = '\0';
		snprintf(line, linelen,
		    "jemalloc's own dumps are not taken into dump_dir: %s",
		    e == -2 ? why : strerror(errno));
		return prefix_left(ops, was_set, JEDUMPS_UNSAFE);
	}
	snprintf(want, sizeof(want), "%s/%s", dir, cfg->dump_prefix);
	/* The host chose where its dumps go (MALLOC_CONF's prof_prefix,
	 * an empty one meaning none): its choice, said once. */
	if (strcmp(opt, JEMALLOC_DEFAULT_PREFIX) != 0 &&
	    strcmp(opt, want) != 0) {
		if (opt[0] == '\0')
			snprintf(line, linelen,
			    "jemalloc writes no dumps of its own: the "
			    "host's prof_prefix is empty");
		else
			snprintf(line, linelen,
			    "jemalloc's own dumps go to the host's "
			    "prof_prefix %s.*, not into %s (unset "
			    "prof_prefix to have them there)",
			    opt, dir);
		dir[0] = '\0';
		return prefix_left(ops, was_set, JEDUMPS_HOST);
	}
	p = want;
	if ((e = ops->mallctl("prof.prefix", NULL, NULL, &p, sizeof(p))) != 0) {
		snprintf(line, linelen,
		    "jemalloc's own dumps are not taken into dump_dir: "
		    "prof.prefix: %s",
		    strerror(e));
		dir[0] = '\0';
		return e == ENOENT ? JEDUMPS_OFF : JEDUMPS_FAILED;
	}
	snprintf(line, linelen,
	    "jemalloc's own dumps (lg_prof_interval, prof_gdump, prof_final) "
	    "go to %s.*",
	    want);
	return JEDUMPS_SET;
}

int core_jemalloc_gdump(const struct core_ops *ops, int on)
{
	bool v = on == 1, old = false;
	size_t len = sizeof(old);

	if (ops->mallctl("prof.gdump", &old, &len, on == -1 ? NULL : &v,
	        on == -1 ? 0 : sizeof(v)) != 0)
		return -1;
	return old ? 1 : 0;
}

/*
 * dump_symbolized for a dump jemalloc wrote: "<name>.symbolized" made in
 * the staging directory @p stage and renamed in beside it, so no reader
 * sees half of it (publish.c's does the same for ours, whose dump is in
 * the staging directory too). A failure is a log line, never the dump's.
 */
static void adopt_symbolized(struct profile_ctx *c, const char *path,
    const char *stage, const struct core_log *log)
{
	char tmp[2 * CORE_PATH_MAX + 16], to[CORE_PATH_MAX + 16];
	const char *name = strrchr(path, '/');

	name = name != NULL ? name + 1 : path;
	if (snprintf(tmp, sizeof(tmp), "%s/%s.symbolized", stage, name) >=
	        (int)sizeof(tmp) ||
	    snprintf(to, sizeof(to), "%s.symbolized", path) >= (int)sizeof(to))
		return; /* not reached: both fit PATH_MAX */
	(void)unlink(tmp);
	if (publish_symbolized(c, path, tmp, to, log) == 0 &&
	    rename(tmp, to) == -1) {
		core_logf(log, JM4LW_LOG_WARN, "cannot write %s: %s", to,
		    strerror(errno));
		(void)unlink(tmp);
	}
}

/*
 * Make jemalloc's dump at @p path 0600, as ours are (stage.c): jemalloc
 * writes it with open(..., 0644) under the host's umask, and a heap
 * profile names the program's functions and maps, which only its owner
 * should read. Through an fd opened without following a link, so a name
 * swapped since the lstat() changes nothing but that file. A failure is
 * a warning; the dump is still kept.
 */
static void adopt_private(const char *path, const struct core_log *log)
{
	const char *why = NULL;
	struct stat sb;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &sb) == -1)
		why = strerror(errno);
	else if (!S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
		why = "not a regular file of ours";
	else if ((sb.st_mode & 07777) != (S_IRUSR | S_IWUSR) &&
	    fchmod(fd, S_IRUSR | S_IWUSR) == -1)
		why = strerror(errno);
	if (why != NULL)
		core_logf(log, JM4LW_LOG_WARN,
		    "cannot make jemalloc's dump %s readable by its owner "
		    "only: %s",
		    path, why);
	if (fd != -1)
		(void)close(fd);
}

/* What this thread has allocated so far (thread.allocated), or 0. */
static uint64_t thread_allocated(const struct core_ops *ops)
{
	uint64_t v = 0;
	size_t len = sizeof(v);

	if (ops == NULL ||
	    ops->mallctl("thread.allocated", &v, &len, NULL, 0) != 0)
		return 0;
	return v;
}

/* 2^opt.lg_prof_interval, or 0 when interval dumps are off (-1). */
static uint64_t prof_interval(const struct core_ops *ops)
{
	ssize_t lg = -1;
	size_t len = sizeof(lg);

	if (ops == NULL ||
	    ops->mallctl("opt.lg_prof_interval", &lg, &len, NULL, 0) != 0 ||
	    lg < 0 || lg > 62)
		return 0;
	return (uint64_t)1 << lg;
}

/*
 * A dump's companion and leak index, made now. Both parse the dump and
 * symbolize it in the process, which allocates megabytes, and
 * lg_prof_interval counts every thread's allocations, ours too (jemalloc
 * 5.3's prof_sample_event_handler feeds one process-wide counter): with
 * an interval near that cost, each dump we index sets off the next one,
 * without end (redis at lg_prof_interval:23 went from 6 dumps to 800 in
 * 20 s). So the work's cost is measured (thread.allocated) on an interval
 * dump, and past half the interval (under it, the dumps we set off are
 * at most as many as jemalloc's own: 1/2 + 1/4 + ...), later interval
 * dumps are kept and rotated but not indexed (jmlk indexes them when
 * asked) nor symbolized.
 */
static void adopt_work(struct job *j, const char *stage,
    const struct core_log *log)
{
	struct dumper *d = j->dumper;
	char err[CORE_PATH_MAX + 128];
	uint64_t at, interval;
	int interval_dump = j->cause == CAUSE_INTERVAL;

	if (interval_dump && d->interval_heavy)
		return;
	at = thread_allocated(j->ops);
	if (j->symbolized)
		adopt_symbolized(&j->prof, j->path, stage, log);
	/* Made now, not left to the idle worker: its cost is measured
	 * with the companion's. A failure is jmlk's to say. */
	(void)profile_index_kept(&j->prof.fold, j->path, stage, err,
	    sizeof(err));
	if (!interval_dump || at == 0 ||
	    (interval = prof_interval(j->ops)) == 0)
		return;
	d->interval_work = thread_allocated(j->ops) - at;
	if (d->interval_work > interval / 2) {
		d->interval_heavy = 1;
		core_logf(log, JM4LW_LOG_WARN,
		    "jemalloc's interval dumps come every %llu KiB allocated "
		    "and indexing one allocates %llu KiB, which would set off "
		    "the next: from now on they are kept and rotated but not "
		    "indexed or symbolized (raise lg_prof_interval)",
		    (unsigned long long)(interval >> 10),
		    d->interval_work >> 10);
	}
}

int jedumps_adopt(struct job *j)
{
	struct core_log log = {.fn = dump_log, .arg = &j->res};
	char dir[PATH_MAX], stage[CORE_PATH_MAX];
	struct stat sb;

	if (dumper_cancelled(j->dumper)) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, ECANCELED,
		    "jemalloc's dump %s: cancelled: the module was freed",
		    j->path);
		return -1;
	}
	/* jmls's rule: a regular file of ours. A name planted by another
	 * user in a sticky dump_dir is not adopted, nor followed. */
	if (lstat(j->path, &sb) == -1) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, errno,
		    "jemalloc's dump %s is not adopted: %s", j->path,
		    strerror(errno));
		/* Gone already (retention, an operator): nothing to say. */
		if (j->res.err != ENOENT)
			core_logf(&log, JM4LW_LOG_WARN, "%s", j->res.reason);
		return -1;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_uid != geteuid()) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, EPERM,
		    "jemalloc's dump %s is not adopted: not a regular file "
		    "of ours",
		    j->path);
		core_logf(&log, JM4LW_LOG_WARN, "%s", j->res.reason);
		return -1;
	}
	j->state.adopt.mtime = (long long)sb.st_mtim.tv_sec;
	adopt_private(j->path, &log);
	snprintf(j->res.path, sizeof(j->res.path), "%s", j->path);
	/* The staging directory, where the companion and the index are
	 * made and renamed in from. */
	if (job_stage(j, "adopting jemalloc's dump", dir, sizeof(dir)) == -1) {
		core_logf(&log, JM4LW_LOG_WARN, "%s", j->res.reason);
		return -1;
	}
	dumper_stage_of(j->dumper, stage, sizeof(stage));
	if (stage[0] != '\0')
		adopt_work(j, stage, &log);
	j->res.kept = 1;
	j->res.status = DUMP_OK;
	j->res.deleted = dumps_retain(&j->cfg, dir, j->path, &log);
	return 0;
}

void jedumps_done(struct core *c, const struct job *j)
{
	const struct dump_result *r = &j->res;

	switch (j->cause) {
	case CAUSE_INTERVAL:
		c->st.jemalloc_interval_dumps++;
		break;
	case CAUSE_GDUMP:
		c->st.jemalloc_gdumps++;
		break;
	default: /* prof.dump without a name; prof_final is at exit */
		c->st.jemalloc_manual_dumps++;
		break;
	}
	core_logf(&c->log, JM4LW_LOG_INFO, "%s dump: %s", cause_name(j->cause),
	    r->path);
	/* jmdf compares with the newest kept dump, whoever wrote it; one of
	 * ours that ended while this waited is newer. */
	if (c->last_dump[0] == '\0' ||
	    (time_t)j->state.adopt.mtime >= c->last_dump_time) {
		snprintf(c->last_dump, sizeof(c->last_dump), "%s", r->path);
		c->last_dump_time = (time_t)j->state.adopt.mtime;
	}
}

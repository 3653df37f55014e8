/*
 * publish — a kept dump's way into dump_dir: its symbolized companion,
 * the rename, its view and retention; and the kept dumps whose leak index
 * is still to be written, between jobs (dumper_idle).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "body.h"
#include "cause.h"
#include "dumper.h"
#include "snapown.h"
#include "dumps.h"
#include "jm4lw.h"
#include "job.h"
#include "ops.h"
#include "profile.h"
#include "publish.h"
#include "result.h"
#include "stage.h"
#include "util.h"
#include "view.h"

int publish_symbolized(struct profile_ctx *c, const char *dump, const char *out,
    const char *shown, const struct core_log *log)
{
	char err[CORE_PATH_MAX + 128];
	FILE *f = NULL;
	int r, fd;

	if ((fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) ==
	        -1 ||
	    (f = fdopen(fd, "w")) == NULL) {
		core_logf(log, JM4LW_LOG_WARN, "cannot write %s: %s", shown,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	r = profile_symbolized(c, dump, f, err, sizeof(err));
	if (fclose(f) != 0 && r == 0) {
		snprintf(err, sizeof(err), "%s", strerror(errno));
		r = -1;
	}
	if (r == -1) {
		(void)unlink(out);
		core_logf(log, JM4LW_LOG_WARN, "cannot write %s: %s", shown,
		    err);
	}
	return r;
}

/*
 * dump_symbolized: "<tmp>.symbolized" beside the dump in the staging
 * directory, renamed in after the dump. A failure is logged, never the
 * dump's failure: the dump itself is there.
 */
static void dump_write_symbolized(struct profile_ctx *c, const char *tmp,
    const struct core_log *log)
{
	char out[CORE_PATH_MAX + 160];

	snprintf(out, sizeof(out), "%s.symbolized", tmp);
	(void)publish_symbolized(c, tmp, out, out, log);
}

/* Forget the dumps still to index. */
static void dumper_unindexed_clear(struct dumper *d)
{
	while (d->nunindexed > 0)
		free(d->unindexed[--d->nunindexed]);
}

/* Remove the staging directory and forget the dumps still to index. */
void dumper_fini(struct dumper *d)
{
	dumper_unstage(d);
	dumper_unindexed_clear(d);
	dumper_snaps_free(d);
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

/* The kept dump @p path waits for its leak index (dumper_idle), made
 * under @p fold; past DUMPER_UNINDEXED_MAX the oldest waits for the first
 * leak question. */
static void dumper_unindexed(struct dumper *d, const char *path,
    const struct fold_list *fold)
{
	char *p;

	dumper_unindexed_ours(d);
	d->fold = *fold;
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
	dumper_stage_of(d, stage, sizeof(stage));
	if (stage[0] == '\0') {
		dumper_unindexed_clear(d);
		return 0;
	}
	path = dumper_unindexed_pop(d);
	/* Gone (retention) or unreadable: jmlk says so if it matters. */
	(void)profile_index_kept(&d->fold, path, stage, err, sizeof(err));
	free(path);
	return d->nunindexed > 0;
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
		dump_write_symbolized(&j->prof, tmp, log);
	if (rename(tmp, path) == -1) {
		e = errno;
		(void)unlink(tmp);
		JOB_FAIL(j, dir, e, strerror(e));
		return -1;
	}
	/* Its leak index is work nobody waits for: after the answer
	 * (dumper_idle), or at the first leak question. */
	dumper_unindexed(j->dumper, path, &j->prof.fold);
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
	/* The dump before an OOM kill outlives the flood after it until a
	 * person lists or fetches it (core/dumps.h). */
	if (j->cause == CAUSE_MEMORY && dumps_pin(path, 1) == -1)
		core_logf(log, JM4LW_LOG_WARN, "cannot pin %s: %s", path,
		    strerror(errno));
	/* jmdf's view, from the sealed memfd where there is one (the kept
	 * file would be read into memory: dump_render). */
	if (j->res.answer == DUMP_ANSWER_VIEW &&
	    views[j->res.view].render != NULL &&
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

/*
 * A dump's step after the check: a kept dump published (dump_publish);
 * a view's dump never is. Cancelled during prof.dump (jm4lw_free): no
 * rendering, which can take seconds, and no new file in dump_dir.
 */
int publish_dump(struct job *j)
{
	struct core_log log = {.fn = dump_log, .arg = &j->res};

	if (dumper_cancelled(j->dumper)) {
		(void)unlink(j->tmp);
		JOB_FAIL(j, j->dir, ECANCELED,
		    "cancelled: the module was freed");
		return -1;
	}
	if (!dump_keeps(&j->res))
		return 0;
	return dump_publish(j, j->tmp, j->dir, &log);
}

/* A dump's last step: the answer, a view of a dump that is not kept
 * (dump_answer_view), or a kept dump's view, growth baseline and
 * retention (dump_answer). */
int publish_answer(struct job *j)
{
	struct core_log log = {.fn = dump_log, .arg = &j->res};

	if (!dump_keeps(&j->res))
		dump_answer_view(j, j->tmp, j->dir);
	else
		dump_answer(j, j->dir, &log);
	return 0;
}

/*
 * body — what a job answers with besides a path: its kind's rendering
 * (a view, a symbol lookup, the leak suspects) into an unnamed body
 * file, or the dump itself.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "body.h"
#include "cause.h"
#include "dumps.h"
#include "fragstats.h"
#include "jm4lw.h"
#include "job.h"
#include "profile.h"
#include "recentjob.h"
#include "reason.h"
#include "result.h"
#include "stage.h"
#include "util.h"
#include "view.h"

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

/* What the symbolizer could not get (debuginfod, libdw), in the host's log: the
 * text views say it in their reply, the others have no room for it. */
static void dump_debug_note(struct job *j)
{
	struct core_log log = {.fn = dump_log, .arg = &j->res};

	if (j->prof.warn[0] != '\0')
		core_logf(&log, JM4LW_LOG_WARN, "symbolizing: %s",
		    j->prof.warn);
}

/*
 * Render the job's view of the profile at @p dump (or in the job's sealed
 * memfd, when it has one) into a body file (or,
 * with @p symbolized, write "<path>.symbolized" next to @p path). 0, or
 * -1 with the job's result saying why.
 */
int dump_render(struct job *j, const char *dump, const char *dir)
{
	char err[CORE_PATH_MAX + 128];
	struct frag_stats *fs = NULL;
	FILE *f;
	int fd, r, frag;
	off_t len;

	if ((fd = body_open(j->dumper->stage)) == -1 ||
	    (f = fdopen(dup(fd), "w+")) == NULL) {
		JOB_FAIL_E(j, dir, errno);
		if (fd != -1)
			close(fd);
		return -1;
	}
	/* The fragmentation views: the bins beside the fresh dump. */
	if ((frag = core_frag_begin(&j->prof, j->res.view, j->ops, &fs, err,
	         sizeof(err))) == -1)
		r = -1;
	else if (j->kind->render == NULL) {
		snprintf(err, sizeof(err), "%s renders nothing", j->kind->name);
		r = -1;
	} else
		r = j->kind->render(j, dump, f, err, sizeof(err));
	core_frag_end(&j->prof, frag, fs);
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
	if (j->kind->folds && j->res.view == DUMP_VIEW_COLLAPSED)
		snprintf(j->res.folded, sizeof(j->res.folded), "%s",
		    j->prof.folded);
	dump_debug_note(j);
	return 0;
}

/* A view of a profile (the kinds that dump, review or render a kept
 * dump): the difference of a delta, the dump in the job's sealed memfd,
 * or the file at @p dump. */
int dump_render_profile(struct job *j, const char *dump, FILE *f, char *err,
    size_t errlen)
{
	if (j->dump_fd != -1 && j->has_base_fd) /* a delta's second */
		return profile_render(&j->prof,
		    &(struct profile_src){j->res.view, "the heap profile",
		        j->dump_fd, 1, NULL, j->base_fd},
		    f, err, errlen);
	if (j->dump_fd != -1) { /* the dump in its sealed memfd */
		/* An earlier dump's (job_review): the first line says so, in
		 * the views that have comment lines. */
		if (j->res.aged && views[j->res.view].comments)
			fprintf(f,
			    "# from a dump taken %ld s ago "
			    "(dump_min_interval)\n",
			    j->res.age);
		return profile_render(&j->prof,
		    &(struct profile_src){j->res.view, "the heap profile",
		        j->dump_fd, j->with_base, j->base, -1},
		    f, err, errlen);
	}
	return profile_render(&j->prof,
	    &(struct profile_src){j->res.view, dump, -1, j->with_base, j->base,
	        -1},
	    f, err, errlen);
}

/* The raw view: the dump itself as the body, the job's memfd (taken) when
 * it has one, else the file at @p path. */
void dump_raw_body(struct job *j, const char *path, const char *dir)
{
	struct stat sb;
	int fd = j->dump_fd;

	j->dump_fd = -1;
	if ((fd == -1 &&
	        (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) ||
	    fstat(fd, &sb) == -1) {
		JOB_FAIL_E(j, dir, errno);
		if (fd != -1)
			close(fd);
		return;
	}
	j->res.body = 1;
	j->res.body_fd = fd;
	j->res.body_len = (size_t)sb.st_size;
	j->res.status = DUMP_OK;
}

/* A kind's one step when it makes no dump: stage, then its rendering
 * (job_kind.render) into a body file. */
int body_answer(struct job *j)
{
	char dir[PATH_MAX];

	if (job_stage(j, j->kind->name, dir, sizeof(dir)) == -1 ||
	    dump_render(j, NULL, dir) == -1)
		return -1;
	j->res.status = DUMP_OK;
	return 0;
}

/*
 * jmtp, jmcs, jmfg, HTTP's views: the dump is only the way to the
 * answer, read where it was written (its memfd, or the staging file where
 * there is none) and never shown in dump_dir (raw
 * is the dump with its stacks cut, render_dump); a view with neither a
 * renderer nor the dump answers with the dump itself, unlinked but open.
 */
void dump_answer_view(struct job *j, const char *tmp, const char *dir)
{
	j->res.path[0] = '\0';
	if (j->res.answer == DUMP_ANSWER_DUMP)
		dump_raw_body(j, tmp, dir);
	else if (dump_render(j, tmp, dir) == 0)
		j->res.status = DUMP_OK;
	if (tmp[0] != '\0') /* if the dump went there: no memfd here */
		(void)unlink(tmp);
}

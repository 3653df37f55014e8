/*
 * profile_leaks — the leak suspects over a process's kept dumps: each
 * dump's point (its index "<dump>.trend", made where missing), the
 * series analyzed (prof/trend.c), on the worker.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof.h"
#include "prof_util.h"
#include "profile.h"
#include "profile_int.h"
#include "symbolize.h"
#include "trend.h"
#include "util.h"
#include "view.h"

/* The point of the dump at @p dump, read again (parse, symbolize in this
 * process), at time @p t. 0, or -1 with @p err. */
static int profile_point(const struct fold_list *fold, const char *dump,
    double t, struct trend_point *p, char *err, size_t errlen)
{
	struct heap_profile hp;
	struct symbolizer *sym;
	const char *name = strrchr(dump, '/');
	int r = -1;

	if (profile_load(dump, &hp, err, errlen) == -1)
		return -1;
	if ((sym = sym_new_self(&hp, err, errlen)) != NULL &&
	    (r = trend_point_of(&hp, sym, t, name ? name + 1 : dump, fold,
	         p)) == -1)
		snprintf(err, errlen, "%s", strerror(errno));
	sym_free(sym);
	heapprof_free(&hp);
	return r;
}

/* Write @p p to a new file @p out (O_EXCL, ours only). 0, or -1 with
 * @p err and no file left. */
static int profile_index_file(const struct trend_point *p, const char *out,
    char *err, size_t errlen)
{
	FILE *f = NULL;
	int fd, r;

	if ((fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) ==
	        -1 ||
	    (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "cannot write %s: %s", out,
		    strerror(errno));
		if (fd != -1) {
			close(fd);
			(void)unlink(out);
		}
		return -1;
	}
	r = trend_index_write(f, p);
	if (fclose(f) != 0)
		r = -1;
	if (r == -1) {
		snprintf(err, errlen, "cannot write %s: %s", out,
		    strerror(errno ? errno : EIO));
		(void)unlink(out);
	}
	return r;
}

/*
 * The point of kept dump @p dump: its index "<dump>.trend" when there is
 * one, else the dump read again and the index written for the next
 * question, first in the staging directory @p stage (a reader never sees
 * half of one, and a module freed meanwhile removes it with the
 * directory), then renamed in. 0 if read from its index, 1 if the index
 * was made now, or -1 with @p err.
 */
static int profile_kept_point(const struct fold_list *fold, const char *dump,
    const char *stage, struct trend_point *p, char *err, size_t errlen)
{
	char ix[CORE_PATH_MAX + 16], tmp[2 * CORE_PATH_MAX + 32], cur[1024];
	const char *name = strrchr(dump, '/');
	struct stat sb;
	int fd, r;

	name = name != NULL ? name + 1 : dump;
	snprintf(ix, sizeof(ix), "%s.trend", dump);
	if ((fd = prof_open_file(ix, PROF_OPEN_NOFOLLOW | PROF_OPEN_OURS, NULL,
	         err, errlen)) != -1) {
		r = trend_index_read(fd, name, p, err, errlen);
		close(fd);
		/* Made under another fold_wrappers: made again. */
		fold_format(fold, cur, sizeof(cur));
		if (r == 0 && p->fold_cfg != NULL &&
		    strcmp(p->fold_cfg, cur) == 0)
			return 0;
		if (r == 0)
			trend_point_free(p);
	}
	if (stat(dump, &sb) == -1) {
		snprintf(err, errlen, "%s: %s", dump, strerror(errno));
		return -1;
	}
	if (profile_point(fold, dump,
	        (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec / 1e9, p,
	        err, errlen) == -1)
		return -1;
	/* The thread: the worker's idle indexing and a host's own jmlk
	 * (jm4lw_reply_builtin) may write the same one at once. */
	snprintf(tmp, sizeof(tmp), "%s/%s.trend.%ld", stage, name,
	    (long)syscall(SYS_gettid));
	(void)unlink(tmp);
	if (profile_index_file(p, tmp, err, errlen) == 0 &&
	    rename(tmp, ix) == -1)
		(void)unlink(tmp);
	return 1;
}

int profile_index_kept(const struct fold_list *fold, const char *dump,
    const char *stage, char *err, size_t errlen)
{
	struct trend_point p;
	int r;

	if ((r = profile_kept_point(fold, dump, stage, &p, err, errlen)) != -1)
		trend_point_free(&p);
	return r;
}

/* jmlk's refusal of too few dumps: where the process cannot sample
 * (profiling off, sampling inactive), that first, since more dumps
 * (jmfp) would not help. */
static void profile_too_few(const struct profile_ctx *c, const struct trend *t,
    char *err, size_t errlen)
{
	static const struct heap_profile none = {0};
	struct view_args a = {.sampling = c->sampling};
	char note[512], few[256];

	trend_too_few(t, few, sizeof(few));
	if (a.sampling.state == SAMPLING_OFF)
		snprintf(err, errlen, "no leak suspects: %s",
		    view_sampling_note(&none, &a, note, sizeof(note)));
	else if (a.sampling.state == SAMPLING_INACTIVE)
		snprintf(err, errlen, "%s; but %s", few,
		    view_sampling_note(&none, &a, note, sizeof(note)));
	else
		snprintf(err, errlen, "%s", few);
}

/* jmlk over @p dumps: their points, the analysis, the answer. */
int profile_leaks(struct profile_ctx *c, char *const *dumps, size_t n,
    const char *stage, int json, FILE *out, char *err, size_t errlen)
{
	struct trend t = {0};
	struct trend_point p;
	char why[CORE_PATH_MAX + 128];
	size_t i;
	int k, r = -1;

	for (i = 0; i < n; i++) {
		/* A dump retention took meanwhile is not in the series;
		 * neither is one whose index and dump both fail to read
		 * (the answer counts it and says the first reason). */
		if ((k = profile_kept_point(&c->fold, dumps[i], stage, &p, why,
		         sizeof(why))) == -1) {
			if (access(dumps[i], F_OK) == 0 && t.skipped++ == 0)
				snprintf(t.skip_why, sizeof(t.skip_why), "%.*s",
				    (int)sizeof(t.skip_why) - 1, why);
			continue;
		}
		t.indexed += (size_t)k; /* made now: the answer says so */
		if (trend_add(&t, &p) == -1) {
			trend_point_free(&p);
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			goto out;
		}
	}
	if (trend_analyze(&t) == -1) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto out;
	}
	/* Sampling off now: the next dumps will hold nothing. */
	if (c->sampling.state == SAMPLING_INACTIVE)
		(void)view_sampling_note(NULL,
		    &(struct view_args){.sampling = c->sampling}, t.note,
		    sizeof(t.note));
	if (t.n < TREND_MIN_POINTS) {
		profile_too_few(c, &t, err, errlen);
		r = PROFILE_NO_BASE;
		goto out;
	}
	r = json ? trend_render_json(out, &t) : trend_render_text(out, &t);
	if (r == -1)
		snprintf(err, errlen, "cannot write the answer: %s",
		    strerror(errno));
out:
	trend_free(&t);
	return r;
}

/*
 * job — one job of the worker's, by its kind: a dump (stage, publish,
 * answer), a symbol lookup, a kept dump's view or the leak suspects.
 * job_run() touches nothing but the job, so the module's worker thread
 * runs it while the loop serves other peers; the result comes back to
 * the loop (core_dump_done).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "answer.h"
#include "core.h"
#include "dumper.h"
#include "job.h"
#include "profile.h"
#include "publish.h"
#include "reason.h"
#include "result.h"
#include "stage.h"
#include "util.h"
#include "view.h"

void job_release(struct job *j)
{
	free(j->addrs);
	j->addrs = NULL;
	j->addrs_len = 0;
}

/* JOB_DUMP: stage, then answer with the view, or publish and answer. */
static void dump_run(struct job *j)
{
	struct core_log log = {.fn = dump_log, .arg = &j->res};
	char dir[PATH_MAX], tmp[sizeof(j->dumper->stage) + 128];

	if (dump_stage(j, dir, sizeof(dir), tmp, sizeof(tmp)) == -1)
		goto out;
	/* Cancelled during prof.dump (jm4lw_free): no rendering, which
	 * can take seconds, and no new file in dump_dir. */
	if (dumper_cancelled(j->dumper)) {
		(void)unlink(tmp);
		JOB_FAIL(j, dir, ECANCELED, "cancelled: the module was freed");
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

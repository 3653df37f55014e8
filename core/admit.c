/*
 * admit — a job's admission, on the loop: profiling usable, one job at a
 * time, dump_min_interval for a dump; a refusal is a result at once. The
 * job then gets a copy of what it needs, so a reload meanwhile changes
 * nothing under it.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit.h"
#include "cause.h"
#include "core.h"
#include "ctl.h"
#include "dumper.h"
#include "dumps.h"
#include "job.h"
#include "reason.h"
#include "result.h"
#include "util.h"
#include "view.h"

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
void dump_begin(struct core *c)
{
	c->dump_running = 1;
	c->dump_pid = (long)getpid();
}

/* Is heap profiling usable? 0, or -1 with the refusal in @p r that says
 * why not and what to do. */
int admit_prof_ready(struct core *c, struct dump_result *r)
{
	enum prof_state s;
	int e;

	if ((s = core_prof_state(c->ops, &e)) == PROF_READY)
		return 0;
	r->status = DUMP_REFUSED;
	r->why = core_prof_why(s);
	r->err = e;
	core_prof_reason(s, e, c->hints, r->reason, sizeof(r->reason));
	return -1;
}

/*
 * dump_min_interval: a dump costs the process a pause and the disk a file,
 * so a storm of jmfp (a script in a loop, many operators) gets one dump
 * and then a line saying when the next one may come. One dump at a time:
 * a second request while one runs is refused at once, not queued, so no
 * peer waits on a dump it did not ask for.
 */
static int dump_rate(struct core *c, const char *who, int rate,
    struct dump_result *r)
{
	double ago, min = (double)c->cfg->dump_min_interval;
	int scheduled = who == NULL;
	struct timespec now;

	if (scheduled)
		who = "dump";
	if (admit_prof_ready(c, r) == -1)
		return -1;
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
	if (rate && c->cfg->dump_min_interval != 0 && c->dumped) {
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

/* A job's copy of what the heavy part of a dump needs (the loop may
 * reload meanwhile); with_base compares with the module's last kept dump
 * (always for a view that always compares). */
static void job_fill(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req)
{
	enum dump_view view = req->view;

	j->seconds = 0;
	j->has_base_fd = 0;
	j->base_fd = -1;
	j->ops = c->ops;
	j->cfg = *c->cfg;
	j->fold = c->pol.fold;
	j->kind = k;
	j->scheduled = req->who == NULL;
	j->cause = req->cause != CAUSE_NONE ? req->cause : CAUSE_WORD;
	snprintf(j->detail, sizeof(j->detail), "%s",
	    req->detail != NULL ? req->detail : "");
	j->want_alloc = c->pol.growth_bytes != 0 || c->pol.growth_pct != 0;
	j->symbolized = c->pol.symbolized;
	/* jmdf compares with the module's last kept dump. */
	j->with_base = req->with_base ||
	    (req->answer == DUMP_ANSWER_VIEW &&
	        views[view].base == VIEW_BASE_ALWAYS);
	snprintf(j->base, sizeof(j->base), "%s",
	    j->with_base && c->last_dump_time != 0 ? c->last_dump : "");
	memset(&j->state, 0, sizeof(j->state)); /* a reused job's */
	j->dumper = d;
	j->hints = c->hints;
	core_sampling(c, &j->sampling);
	j->locked = (struct job_locked){0}; /* here, unless the shell says */
	j->dump_fd = -1;
	j->lent = 0;
	memset(&j->res, 0, sizeof(j->res));
	j->res.view = view;
	j->res.body_fd = -1;
}

/* A dump's admission: dump_rate, then the job's copy (job_fill). */
static int admit_dump_rate(const struct job_kind *k, struct core *c,
    struct job *j, struct dumper *d, const struct job_req *req, int rate,
    struct dump_result *r)
{
	if (dump_rate(c, req->who, rate, r) == -1)
		return -1;
	job_fill(k, c, j, d, req);
	j->began = c->last_dump_at;
	return 0;
}

double core_last_dump_expire(struct core *c, int all)
{
	double age, min = (double)c->cfg->dump_min_interval;
	struct timespec now;

	if (!c->have_last_fd)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	age = elapsed(&c->last_fd_at, &now);
	if (all || age >= min) {
		close(c->last_fd);
		c->have_last_fd = 0;
		return -1;
	}
	return min - age;
}

void core_last_dump_forget(struct core *c)
{
	(void)core_last_dump_expire(c, 1);
}

/*
 * May @p req be drawn from the newest dump rather than refused by
 * dump_min_interval? A view that keeps nothing (not jmfp, jmdf: they
 * promise a new dump) and compares with nothing, asked while the rate
 * would refuse a dump, of a dump younger than dump_min_interval. Its
 * age in @p age.
 */
static int review_fits(struct core *c, const struct job_req *req, double *age)
{
	double min = (double)c->cfg->dump_min_interval;
	const struct view *v;
	struct timespec now;

	if (req->answer != DUMP_ANSWER_VIEW ||
	    (unsigned)req->view >= DUMP_VIEW_COUNT || !c->have_last_fd ||
	    min == 0 || !c->dumped || dump_busy(c))
		return 0;
	v = &views[req->view];
	if (v->keeps || v->base == VIEW_BASE_ALWAYS || req->with_base ||
	    req->seconds != 0 || (v->render == NULL && !v->carries_dump))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (elapsed(&c->last_dump_at, &now) >= min)
		return 0; /* the rate lets a new dump through */
	*age = elapsed(&c->last_fd_at, &now);
	return *age < min;
}

/* A person's dump: a new dump; or, within dump_min_interval of the last
 * one, a view drawn from that (job_review) where review_fits; else the
 * rate's refusal. */
int admit_dump(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r)
{
	double age;
	int fd;

	if (!review_fits(c, req, &age) || (fd = fd_again(c->last_fd)) == -1)
		return admit_dump_rate(k, c, j, d, req, 1, r);
	job_fill(&job_review, c, j, d, req);
	j->dump_fd = fd;
	j->state.review.age = (long)age;
	dump_begin(c);
	return 0;
}

/* A scrape: a dump whose rate the job service keeps (the newest body
 * answers within dump_min_interval; requests meanwhile share the job),
 * so here only profiling usable and the worker free. A scrape still
 * moves the rate's clock: a person's jmfp right after it gets its 429. */
int admit_scrape(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r)
{
	if (req->seconds != 0 && !req->has_base_fd) {
		dump_why(r, DUMP_FAILED, REASON_FAILED, EINVAL,
		    "%s: a difference without its first dump",
		    req->who != NULL ? req->who : "scrape");
		return -1;
	}
	if (admit_dump_rate(k, c, j, d, req, 0, r) == -1)
		return -1;
	j->seconds = req->seconds;
	if (req->seconds != 0) {
		/* Its own descriptor: a job orphaned by jm4lw_free still
		 * reads it after the module closed its own. */
		if ((j->base_fd = fcntl(req->base_fd, F_DUPFD_CLOEXEC, 0)) ==
		    -1) {
			c->dump_running = 0;
			dump_why(r, DUMP_FAILED, REASON_FAILED, errno,
			    "%s failed: %s", k->name, strerror(errno));
			return -1;
		}
		j->has_base_fd = 1;
		j->with_base = 1;
		j->base[0] = '\0';
	}
	return 0;
}

int core_job_busy(struct core *c)
{
	return dump_busy(c);
}

/*
 * A job that makes no dump (a symbol lookup, a kept dump's view): no rate
 * limit, only a free worker. 0 with @p j cleared for kind @p k, or -1
 * with @p r saying why not.
 */
int job_free_admit(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, struct dump_result *r)
{
	if (dump_busy(c)) {
		dump_why(r, DUMP_REFUSED, REASON_BUSY, EBUSY,
		    "%s refused: a dump is in progress; retry when it is done",
		    k->name);
		r->retry_after = 1;
		return -1;
	}
	memset(j, 0, sizeof(*j));
	j->dump_fd = -1;
	j->base_fd = -1;
	j->ops = c->ops;
	j->cfg = *c->cfg;
	j->fold = c->pol.fold;
	j->kind = k;
	j->dumper = d;
	j->hints = c->hints;
	j->res.body_fd = -1;
	return 0;
}

/* The path of our dump @p name in dump_dir, if it is one and is there:
 * 0, or -1 with @p r saying why. A name from a peer never names anything
 * but a dump of ours in the directory (dumps_match: no '/', no '..'). */
int kept_dump(struct core *c, const char *name, char *path, size_t len,
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

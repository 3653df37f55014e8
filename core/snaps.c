/*
 * snaps — "what grew in the last minutes" and "what was in the heap at
 * the peak", answered after the fact. While prof.active is true the
 * snapshot_interval timer hands the worker a snapshot job: prof.dump into
 * a memfd (the same lock window as any dump), parsed and kept in the
 * worker's ring (prof/snapring.c), never on disk. A question then takes
 * one snapshot back out as a heap_v2 profile in a memfd, with this
 * process's mappings, and the pipeline renders it as it renders a kept
 * dump: the base of a difference (jmgr, ?since=), or the profile itself
 * (jmpk, ?at=peak). The ring is the worker's: only job_run touches it,
 * one job at a time. The answers' renderings are core/snaps_view.c's.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "admit.h"
#include "body.h"
#include "bytes.h"
#include "core.h"
#include "dumper.h"
#include "heapprof.h"
#include "history.h"
#include "job.h"
#include "ops.h"
#include "peak.h"
#include "profile.h"
#include "reason.h"
#include "result.h"
#include "snapring.h"
#include "snaps.h"
#include "snaps_int.h"
#include "snapown.h"
#include "when.h"
#include "stage.h"
#include "view.h"

/* The kind's name in its lines. */
static const char *snaps_name(const struct job *j)
{
	return j->kind->name;
}

/* A clock's now in ns. */
long long snaps_now(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The keys that bound the ring, for refusals. */
#define SNAPS_KEYS                                                             \
	"snapshot_interval %u s, snapshot_count %u, snapshot_max_bytes %llu"
#define SNAPS_KEY_ARGS(cfg)                                                    \
	(cfg)->snapshot_interval, (cfg)->snapshot_count,                       \
	    (cfg)->snapshot_max_bytes

int admit_snapshot(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r)
{
	int on = 0;

	(void)req;
	if (admit_prof_ready(c, r) == -1)
		return -1;
	if (ctl_bool(c->ops, "prof.active", &on) != 0 || !on) {
		dump_why(r, DUMP_REFUSED, REASON_NO_SAMPLES, ENODATA,
		    "%s: profiling is inactive", k->name);
		return -1;
	}
	if (c->cfg->snapshot_count == 0) {
		dump_why(r, DUMP_REFUSED, REASON_BAD_REQUEST, ENODATA,
		    "%s: snapshots are off (snapshot_count 0)", k->name);
		return -1;
	}
	if (job_free_admit(k, c, j, d, r) == -1)
		return -1;
	j->state.snap.t0 = snaps_now(CLOCK_MONOTONIC);
	dump_begin(c);
	return 0;
}

/* The history ring's highest stats.allocated (its first column) in the
 * last @p window seconds (0: all), into the job. */
static void snaps_hist_max(struct core *c, struct job *j, unsigned window)
{
	const struct history *h = &c->hist;
	const uint64_t *row;
	uint64_t now = (uint64_t)time(NULL);
	size_t i;

	for (i = 0; (row = history_row(h, i)) != NULL; i++) {
		if (row[1] == HISTORY_NONE ||
		    (window != 0 && row[0] + window < now))
			continue;
		if (!j->state.snap.hist_known ||
		    row[1] >= j->state.snap.hist_max) {
			j->state.snap.hist_known = 1;
			j->state.snap.hist_max = row[1];
			j->state.snap.hist_max_at = (long long)row[0];
		}
	}
}

int admit_snapview(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, int growth,
    struct dump_result *r)
{
	int on = 0;

	if (c->cfg->snapshot_count == 0) {
		dump_why(r, DUMP_REFUSED, REASON_BAD_REQUEST, ENODATA,
		    "%s: snapshots are off: snapshot_count is 0 (set "
		    "snapshot_count and snapshot_interval, then reload)",
		    k->name);
		return -1;
	}
	if (admit_prof_ready(c, r) == -1)
		return -1;
	if (req->view >= DUMP_VIEW_COUNT ||
	    (growth && views[req->view].base == VIEW_BASE_NEVER)) {
		dump_why(r, DUMP_REFUSED, REASON_BAD_REQUEST, EINVAL,
		    "%s: this format shows one profile as it is: no base",
		    k->name);
		return -1;
	}
	if (job_free_admit(k, c, j, d, r) == -1)
		return -1;
	j->state.snap.prof_active =
	    ctl_bool(c->ops, "prof.active", &on) == 0 && on;
	j->state.snap.since = req->since;
	j->res.view = req->view;
	j->with_base = growth;
	j->state.snap.picked = -1;
	j->state.snap.gdumps = 0;
	j->state.snap.gdump_wins = 0;
	if (!growth)
		snaps_hist_max(c, j, req->since);
	dump_begin(c);
	return 0;
}

/* "12 s", "5.0 min" or "2.0 h": a snapshot's age. */
const char *snaps_age(char *buf, size_t len, long long ns)
{
	double s = (double)ns / 1e9;

	if (s < 120)
		snprintf(buf, len, "%.0f s", s < 0 ? 0 : s);
	else if (s < 7200)
		snprintf(buf, len, "%.1f min", s / 60);
	else
		snprintf(buf, len, "%.1f h", s / 3600);
	return buf;
}

/* A snapshot's age as a refusal says it: to a tenth of a second under
 * two minutes, then as snaps_age. */
static const char *snaps_age_exact(char *buf, size_t len, long long ns)
{
	double s = (double)ns / 1e9;

	if (s < 120) {
		snprintf(buf, len, "%.1f s", s < 0 ? 0 : s);
		return buf;
	}
	return snaps_age(buf, len, ns);
}

/* The ages of the snapshots kept, oldest first, "58.6 s, 0.4 s" (the
 * three oldest, "...", the newest, when there are more than five), in a
 * static buffer: for one refusal line. */
static const char *snaps_ages(const struct snapring *ring, long long now)
{
	static char buf[192];
	char one[32];
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < ring->n && len < sizeof(buf); i++) {
		if (ring->n > 5 && i == 3) {
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
			    ", ...");
			i = ring->n - 1;
		}
		if (len >= sizeof(buf))
			break;
		snaps_age_exact(one, sizeof(one),
		    now - snapring_at(ring, i)->time_ns);
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
		    i == 0 ? "" : ", ", one);
	}
	return buf;
}

/*
 * The peak: jemalloc's prof_gdump dumps of this process in the window,
 * each written at a new high, beside the snapshots: the highest one's
 * sampled total against the best snapshot's stats.allocated. 1 when
 * the question is answered (by either; j->state.snap.gdump_wins says which), 0
 * to go on as with no gdump dump (the snapshots' own refusals).
 */
static int snaps_pick_gdump(struct job *j, const struct snapring *ring,
    long long now)
{
	const struct snapshot *s;
	struct peak_gdump g;
	char dir[PATH_MAX], why[256];

	j->path[0] = '\0';
	if (core_dump_dir_safe(j->cfg.dump_dir, dir, sizeof(dir), why,
	        sizeof(why)) != 0 ||
	    !peak_gdump_best(j->cfg.dump_prefix, dir, (long)getpid(),
	        j->state.snap.since, (time_t)(now / 1000000000LL), &g))
		return 0;
	snprintf(j->path, sizeof(j->path), "%s", g.path);
	j->state.snap.gdumps = g.seen;
	j->state.snap.gdump_bytes = g.bytes;
	j->state.snap.gdump_at = (long long)g.mtime;
	j->state.snap.picked =
	    ring->n > 0 ? snapring_peak(ring, now, j->state.snap.since) : -1;
	s = j->state.snap.picked >= 0
	    ? snapring_at(ring, (size_t)j->state.snap.picked)
	    : NULL;
	j->state.snap.gdump_wins = s == NULL || g.bytes > (double)s->allocated;
	return 1;
}

/* Refuse the question with @p why (REASON_BAD_REQUEST: a 400). */
#define SNAP_REFUSE(j, ...)                                                    \
	dump_why(&(j)->res, DUMP_REFUSED, REASON_BAD_REQUEST, ENODATA,         \
	    __VA_ARGS__)

int snap_pick(struct job *j)
{
	struct snapring *ring = snaps_ring(j->dumper);
	const struct jm4lw_config *cfg = &j->cfg;
	const char *what = snaps_name(j);
	long long now = snaps_now(CLOCK_REALTIME);
	char a[256];
	unsigned slack = cfg->snapshot_interval / 2;
	size_t i;

	snaps_changing(j->dumper, 1);
	(void)snapring_limits(ring, cfg->snapshot_count,
	    (size_t)cfg->snapshot_max_bytes);
	snaps_changing(j->dumper, 0);
	if (!j->with_base && snaps_pick_gdump(j, ring, now))
		return 0;
	if (ring->n == 0) {
		SNAP_REFUSE(j, "%s: no snapshot yet: %s (" SNAPS_KEYS ")", what,
		    j->state.snap.prof_active
		        ? "the first comes snapshot_interval "
		          "after profiling became active"
		        : "profiling is inactive (prof.active "
		          "false), and snapshots are taken only "
		          "while it is active",
		    SNAPS_KEY_ARGS(cfg));
		return -1;
	}
	if (!j->with_base) {
		j->state.snap.picked =
		    snapring_peak(ring, now, j->state.snap.since);
		if (j->state.snap.picked == -1) {
			SNAP_REFUSE(j,
			    "%s: no snapshot with stats.allocated in the last "
			    "%u s (" SNAPS_KEYS ")",
			    what, j->state.snap.since, SNAPS_KEY_ARGS(cfg));
			return -1;
		}
		return 0;
	}
	if (j->state.snap.since == 0) {
		/* jmgr: the oldest within the last few minutes. */
		for (i = 0; i < ring->n; i++)
			if (now - snapring_at(ring, i)->time_ns <=
			    (long long)SNAPS_GROW_DEFAULT * 1000000000LL)
				break;
		j->state.snap.picked =
		    i < ring->n ? (long)i : (long)ring->n - 1;
		return 0;
	}
	if ((j->state.snap.picked = snapring_since(ring, now,
	         j->state.snap.since, slack)) == -1) {
		/* The ages to a tenth: "59 s" both asked and kept reads
		 * as a contradiction when the snapshot is 58.6 s old. */
		char near[64] = "";

		if (slack > 0)
			snprintf(near, sizeof(near),
			    " (one at least %u s old would do)",
			    j->state.snap.since - slack);
		SNAP_REFUSE(j,
		    "%s: no snapshot is %u s old%s: the oldest is %s old; %zu "
		    "kept, %s old (" SNAPS_KEYS ")",
		    what, j->state.snap.since, near,
		    snaps_age_exact(a, sizeof(a),
		        now - snapring_at(ring, 0)->time_ns),
		    ring->n, snaps_ages(ring, now), SNAPS_KEY_ARGS(cfg));
		return -1;
	}
	return 0;
}

/* A memfd for a profile, and its /proc path in @p path: -1 with errno. */
int snaps_memfd_open(char *path, size_t len)
{
	int fd;

	if ((fd = memfd_create("jm4lw-snapshot", MFD_CLOEXEC)) == -1)
		return -1;
	snprintf(path, len, "/proc/self/fd/%d", fd);
	if (access(path, W_OK) == -1) { /* no /proc here */
		close(fd);
		errno = ENOSYS;
		return -1;
	}
	return fd;
}

int snap_memfd(struct job *j)
{
	const char *what = snaps_name(j);
	int fd;

	/* A growth's body goes where every rendering goes. */
	if (j->with_base && job_stage(j, what, j->dir, sizeof(j->dir)) == -1)
		return -1;
	if ((fd = snaps_memfd_open(j->mpath, sizeof(j->mpath))) == -1) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, errno,
		    "%s failed: snapshots need memfd_create and /proc: %s",
		    what, strerror(errno));
		return -1;
	}
	j->dump_fd = fd;
	j->dump_to = j->mpath;
	return 0;
}

int snap_take(struct job *j)
{
	struct snapring *ring = snaps_ring(j->dumper);
	struct heap_profile hp;
	char err[256];
	size_t alloc = 0;
	int known, rv;

	if (j->dump_err != 0) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, j->dump_err,
		    "snapshot: prof.dump failed: %s", strerror(j->dump_err));
		return -1;
	}
	/* The heap's size as near the dump as can be. */
	ctl_epoch(j->ops);
	known = ctl_size(j->ops, "stats.allocated", &alloc) == 0;
	if (heapprof_load_fd(j->dump_fd, "the snapshot", &hp, err,
	        sizeof(err)) == -1) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, EIO,
		    "snapshot: %s", err);
		return -1;
	}
	snaps_changing(j->dumper, 1);
	(void)snapring_limits(ring, j->cfg.snapshot_count,
	    (size_t)j->cfg.snapshot_max_bytes);
	rv = snapring_add(ring, &hp, snaps_now(CLOCK_REALTIME), alloc, known,
	    err, sizeof(err));
	snaps_changing(j->dumper, 0);
	if (rv == -1) {
		heapprof_free(&hp);
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, ENOMEM,
		    "snapshot not kept: %s", err);
		return -1;
	}
	heapprof_free(&hp);
	j->dumper->snap_ns_last =
	    (unsigned long long)(snaps_now(CLOCK_MONOTONIC) - j->state.snap.t0);
	j->dumper->snap_ns_total += j->dumper->snap_ns_last;
	j->res.status = DUMP_OK;
	return 0;
}

int snap_body(struct job *j)
{
	if (!j->with_base &&
	    job_stage(j, snaps_name(j), j->dir, sizeof(j->dir)) == -1)
		return -1;
	if (j->with_base && j->dump_err != 0) {
		dump_why(&j->res, DUMP_FAILED, REASON_FAILED, j->dump_err,
		    "%s: prof.dump failed: %s", snaps_name(j),
		    strerror(j->dump_err));
		return -1;
	}
	if (dump_render(j, NULL, j->dir) == -1)
		return -1;
	j->res.status = DUMP_OK;
	return 0;
}

/*
 * snaps_view — the snapshots' answers rendered (core/snaps.c picks the
 * snapshot): a snapshot taken back out as a heap_v2 profile in a memfd,
 * then the growth since it or the heap at the peak (or jemalloc's gdump
 * dump, when that is higher), with the lines that say which snapshot,
 * what the ring costs and how near the true peak it is.
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

#include "bytes.h"
#include "core.h"
#include "dumper.h"
#include "heapprof.h"
#include "job.h"
#include "profile.h"
#include "snapring.h"
#include "snaps.h"
#include "snaps_int.h"
#include "view.h"
#include "when.h"

/* Snapshot @p i as a heap_v2 profile with this process's mappings, in a
 * memfd whose mtime is the snapshot's time (a difference's span reads
 * it). The descriptor, or -1 with @p err. */
static int snaps_profile_fd(const struct snapring *ring, size_t i, char *err,
    size_t errlen)
{
	const struct snapshot *s = snapring_at(ring, i);
	struct timespec ts[2];
	char path[32], buf[8192];
	FILE *f = NULL;
	size_t n;
	int fd, dfd = -1, maps = -1;

	if ((fd = snaps_memfd_open(path, sizeof(path))) == -1 ||
	    (dfd = dup(fd)) == -1 || (f = fdopen(dfd, "w")) == NULL)
		goto fail;
	dfd = -1;
	if (snapring_write(ring, i, f) == -1 ||
	    fputs("\nMAPPED_LIBRARIES:\n", f) == EOF ||
	    (maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)) == -1)
		goto fail;
	while (
	    (n = (size_t)read(maps, buf, sizeof(buf))) > 0 && n != (size_t)-1)
		if (fwrite(buf, 1, n, f) != n)
			goto fail;
	close(maps);
	maps = -1;
	if (fclose(f) != 0) {
		f = NULL;
		goto fail;
	}
	f = NULL;
	ts[0].tv_sec = ts[1].tv_sec = (time_t)(s->time_ns / 1000000000LL);
	ts[0].tv_nsec = ts[1].tv_nsec = (long)(s->time_ns % 1000000000LL);
	(void)futimens(fd, ts);
	return fd;
fail:
	snprintf(err, errlen, "cannot write the snapshot's profile: %s",
	    strerror(errno ? errno : EIO));
	if (f != NULL)
		fclose(f);
	if (dfd != -1)
		close(dfd);
	if (maps != -1)
		close(maps);
	if (fd != -1)
		close(fd);
	return -1;
}

/* The file name of @p path. */
static const char *snaps_base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b != NULL ? b + 1 : path;
}

/* What the ring costs, the figures its keys bound, and whether profiling
 * is active now: the first lines of every answer of these kinds. */
static void snaps_ring_lines(const struct job *j, FILE *out)
{
	const struct snapring *ring = &j->dumper->snaps;

	fprintf(out,
	    "# snapshots: %zu kept (%llu taken, %llu dropped) in %zu bytes "
	    "(snapshot_max_bytes %llu), %zu stacks shared; the last took "
	    "%.1f ms on the worker\n",
	    ring->n, ring->taken, ring->dropped, ring->bytes,
	    j->cfg.snapshot_max_bytes, ring->live_stacks,
	    (double)j->dumper->snap_ns_last / 1e6);
	if (!j->state.snap.prof_active)
		fprintf(out,
		    "# profiling is inactive now (prof.active false): no "
		    "snapshot is taken and nothing new is sampled until it "
		    "is active again\n");
}

/* How near the history's highest stats.allocated in the window the
 * answer (a "snapshot" or a "dump") of @p bytes is (@p known 0: not
 * known). */
static void snaps_true_peak(const struct job *j, FILE *out, const char *what,
    int known, unsigned long long bytes)
{
	char when[32], b[32];

	if (j->state.snap.hist_known && known && j->state.snap.hist_max > 0 &&
	    j->state.snap.hist_max < bytes)
		/* The history is read every history_interval: it can miss
		 * what a snapshot or a gdump dump saw. Never above 100 %. */
		fprintf(out,
		    "# the history's highest figure in that time (every "
		    "history_interval) is %s, below this %s's: this %s is "
		    "the highest seen\n",
		    fmt_bytes(b, sizeof(b), j->state.snap.hist_max), what,
		    what);
	else if (j->state.snap.hist_known && known &&
	    j->state.snap.hist_max > 0) {
		fmt_time(when, sizeof(when), (time_t)j->state.snap.hist_max_at);
		fprintf(out,
		    "# the true peak in that time (history, every "
		    "history_interval): %s at %s; this %s holds %.1f %% of "
		    "it\n",
		    fmt_bytes(b, sizeof(b), j->state.snap.hist_max), when, what,
		    100.0 * (double)bytes / (double)j->state.snap.hist_max);
	} else
		fprintf(out,
		    "# the true peak is not known (no history: "
		    "history_points 0)\n");
}

/* The heap at the peak when jemalloc's gdump dump (j->path) is higher
 * than every snapshot in the window: that dump's profile, said to be it,
 * with the figure it is judged by. */
static int snaps_render_gdump(struct job *j, FILE *out, char *err,
    size_t errlen)
{
	const struct snapring *ring = &j->dumper->snaps;
	const struct snapshot *s = j->state.snap.picked >= 0
	    ? snapring_at(ring, (size_t)j->state.snap.picked)
	    : NULL;
	int comments = views[j->res.view].comments, fd, r;
	long long now = snaps_now(CLOCK_REALTIME);
	char when[32], age[32], b1[32], b2[32], other[128];

	if ((fd = open(j->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "jemalloc's gdump dump %s: %s", j->path,
		    strerror(errno));
		return -1;
	}
	fmt_time(when, sizeof(when), (time_t)j->state.snap.gdump_at);
	snaps_age(age, sizeof(age),
	    now - j->state.snap.gdump_at * 1000000000LL);
	snprintf(j->res.snap, sizeof(j->res.snap),
	    "jemalloc's gdump dump %.160s (%s, %s ago)", snaps_base(j->path),
	    when, age);
	if (comments) {
		snaps_ring_lines(j, out);
		if (s != NULL)
			snprintf(other, sizeof(other),
			    "the highest snapshot's stats.allocated is %s",
			    s->alloc_known
			        ? fmt_bytes(b2, sizeof(b2), s->allocated)
			        : "not known");
		else
			snprintf(other, sizeof(other),
			    "no snapshot with stats.allocated in that time");
		/* A gdump dump has no stats.allocated of its own: it is
		 * judged by what its profile holds. */
		fprintf(out,
		    "# the heap at the peak: jemalloc's gdump dump %s of %s "
		    "(%s ago; a new high, %u in that time), its sampled total "
		    "%s (the dump's own estimate: jemalloc writes no "
		    "stats.allocated in it); %s\n",
		    snaps_base(j->path), when, age, j->state.snap.gdumps,
		    fmt_bytes(b1, sizeof(b1),
		        (unsigned long long)j->state.snap.gdump_bytes),
		    other);
		snaps_true_peak(j, out, "dump", 1,
		    (unsigned long long)j->state.snap.gdump_bytes);
		fprintf(out,
		    "# snapshots are snapshot_interval %u s apart; gdump "
		    "dumps come at new highs (prof_gdump), one per "
		    "dump_min_interval\n",
		    j->cfg.snapshot_interval);
	}
	r = profile_render(&j->prof,
	    &(struct profile_src){j->res.view, snaps_base(j->path), fd, 0, NULL,
	        -1},
	    out, err, errlen);
	close(fd);
	return r;
}

/* dump_render's part for these kinds (job_kind.render): the view into @p out.
 * 0, or -1 (or a PROFILE_* answer) with @p err. */
int snaps_render(struct job *j, const char *dump, FILE *out, char *err,
    size_t errlen)
{
	const struct snapring *ring = &j->dumper->snaps;
	const struct snapshot *s =
	    snapring_at(ring, (size_t)j->state.snap.picked);
	long long now = snaps_now(CLOCK_REALTIME);
	int comments = views[j->res.view].comments, fd, r;
	char when[32], age[32], label[160], b1[32], b2[32];

	(void)dump;

	if (!j->with_base && j->state.snap.gdump_wins)
		return snaps_render_gdump(j, out, err, errlen);
	if (s == NULL) {
		snprintf(err, errlen, "the snapshot is gone");
		return -1;
	}
	/* One time format everywhere (lib/when.h): ISO 8601 in UTC. */
	fmt_time(when, sizeof(when), (time_t)(s->time_ns / 1000000000LL));
	snaps_age(age, sizeof(age), now - s->time_ns);
	if ((fd = snaps_profile_fd(ring, (size_t)j->state.snap.picked, err,
	         errlen)) == -1)
		return -1;
	if (comments)
		snaps_ring_lines(j, out);
	snprintf(label, sizeof(label),
	    "the snapshot of %s (%s ago, %zu of %zu kept)", when, age,
	    (size_t)j->state.snap.picked + 1, ring->n);
	/* The same words beside the body: collapsed has no heading. */
	snprintf(j->res.snap, sizeof(j->res.snap), "%s", label);
	if (j->with_base) {
		r = profile_render(&j->prof,
		    &(struct profile_src){j->res.view, "the heap profile",
		        j->dump_fd, 1, label, fd},
		    out, err, errlen);
		close(fd);
		return r;
	}
	if (comments) {
		fprintf(out,
		    "# the heap at the peak: the snapshot of %s (%s ago, %zu "
		    "of %zu kept), stats.allocated %s\n",
		    when, age, (size_t)j->state.snap.picked + 1, ring->n,
		    s->alloc_known ? fmt_bytes(b1, sizeof(b1), s->allocated)
		                   : "not known");
		if (j->state.snap.gdumps > 0)
			fprintf(out,
			    "# the heap at the peak: of jemalloc's %u gdump "
			    "dumps in that time the highest, %s, holds %s (its "
			    "sampled total), not above this snapshot's\n",
			    j->state.snap.gdumps, snaps_base(j->path),
			    fmt_bytes(b2, sizeof(b2),
			        (unsigned long long)j->state.snap.gdump_bytes));
		snaps_true_peak(j, out, "snapshot", s->alloc_known,
		    s->allocated);
		fprintf(out,
		    "# snapshots are snapshot_interval %u s apart: a peak "
		    "between two is not seen\n",
		    j->cfg.snapshot_interval);
	}
	r = profile_render(&j->prof,
	    &(struct profile_src){j->res.view, "the snapshot", fd, 0, NULL, -1},
	    out, err, errlen);
	close(fd);
	return r;
}

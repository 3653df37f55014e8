/*
 * fragstats — the bin statistics fragmentation by site needs, read
 * through the doctor (core/doctor.c: the classes' shapes and merged
 * counts, and per arena doctor_bins_of), plus the large classes a stack's
 * mean may be. On the worker, right after the dump the job took.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "frag.h"
#include "fragstats.h"
#include "profile.h"
#include "recent.h"
#include "recentjob.h"

/* Are the dump's counts unbiased (opt.prof_unbias)? jemalloc 5.3.0 has
 * the option (on by default) but no mallctl for it: where it cannot be
 * read, by the version, 5.3 and later. */
static int frag_unbias(const struct core_ops *ops)
{
	unsigned major = 0, minor = 0;
	bool b = false;
	size_t len = sizeof(b);

	if (ops->mallctl("opt.prof_unbias", &b, &len, NULL, 0) == 0)
		return b;
	if (ops->version == NULL ||
	    sscanf(ops->version, "%u.%u", &major, &minor) != 2)
		return 1;
	return major > 5 || (major == 5 && minor >= 3);
}

/* jemalloc's prof_stats_t: prof.stats.bins.<j>.live's answer. */
struct frag_live {
	uint64_t req_sum;
	uint64_t count;
};

/* The sampled objects' requested bytes per class, where the host turned
 * opt.prof_stats on. */
static void frag_req(const struct core_ops *ops, struct frag_stats *st)
{
	struct frag_live live;
	char name[64];
	size_t len;
	bool on = false;
	unsigned j;

	len = sizeof(on);
	if (ops->mallctl("opt.prof_stats", &on, &len, NULL, 0) != 0 || !on)
		return;
	st->prof_stats = 1;
	for (j = 0; j < st->nbins; j++) {
		snprintf(name, sizeof(name), "prof.stats.bins.%u.live", j);
		len = sizeof(live);
		if (ops->mallctl(name, &live, &len, NULL, 0) == 0 &&
		    len == sizeof(live)) {
			st->bins[j].req_sum = live.req_sum;
			st->bins[j].req_count = live.count;
		}
	}
}

/* The large classes' sizes (arenas.lextent.<j>.size) into @p st. */
static void frag_large(const struct core_ops *ops, struct frag_stats *st)
{
	unsigned n = 0, j;
	size_t len, v;
	char name[64];

	len = sizeof(n);
	if (ops->mallctl("arenas.nlextents", &n, &len, NULL, 0) != 0)
		n = 0;
	for (j = 0; j < n && st->nlarge < FRAG_LARGE_MAX; j++) {
		snprintf(name, sizeof(name), "arenas.lextent.%u.size", j);
		len = sizeof(v);
		if (ops->mallctl(name, &v, &len, NULL, 0) == 0 &&
		    len == sizeof(v))
			st->large[st->nlarge++] = v;
	}
}

/* Each arena's classes with free regions into @p st's cells. */
static int frag_cells(const struct core_ops *ops, const struct doctor *d,
    struct frag_stats *st, struct doctor_bin *tmp)
{
	size_t cap = 0;
	unsigned i, j;
	void *grown;

	for (i = 0; i < d->narena_rows; i++) {
		if (d->arenas[i].index == DOCTOR_OTHER)
			continue;
		if (doctor_bins_of(ops, d->arenas[i].index, tmp, st->nbins) ==
		    -1)
			return 0;
		for (j = 0; j < st->nbins; j++) {
			if (tmp[j].curslabs * st->bins[j].nregs <=
			    tmp[j].curregs)
				continue;
			if (st->ncells == cap) {
				cap = cap ? cap * 2 : 64;
				if ((grown = realloc(st->cells,
				         cap * sizeof(*st->cells))) == NULL)
					return -1;
				st->cells = grown;
			}
			st->cells[st->ncells++] =
			    (struct frag_cell){.arena = d->arenas[i].index,
			        .bin = j,
			        .curregs = tmp[j].curregs,
			        .curslabs = tmp[j].curslabs,
			        .nonfull = tmp[j].nonfull};
		}
	}
	return 0;
}

/* The doctor's diagnosis, its classes per arena, the large classes. */
int core_frag_read(const struct core_ops *ops, struct frag_stats *st, char *err,
    size_t errlen)
{
	struct doctor_bin *tmp;
	struct doctor *d;
	unsigned j;
	int rv = -1;

	/* Both off the stack: a host's thread answers through here too
	 * (jm4lw_reply_builtin), its stack of unknown size. */
	memset(st, 0, sizeof(*st));
	d = malloc(sizeof(*d));
	tmp = calloc(DOCTOR_BINS_MAX, sizeof(*tmp));
	if (d == NULL || tmp == NULL) {
		free(d);
		free(tmp);
		snprintf(err, errlen, "no memory for the statistics");
		return -1;
	}
	doctor_diagnose(ops, 1, d);
	if (!d->ok) {
		snprintf(err, errlen, "%s", d->reason);
		goto out;
	}
	st->page = d->page;
	st->resident = d->resident;
	st->allocated = d->allocated;
	st->active = d->active;
	st->dirty = d->dirty;
	st->muzzy = d->muzzy;
	st->narenas = d->narenas;
	st->prof = d->prof;
	st->prof_active = d->prof_active;
	st->lg_sample = d->lg_sample;
	st->unbias = frag_unbias(ops);
	st->nbins = d->nbins < FRAG_BINS_MAX ? d->nbins : FRAG_BINS_MAX;
	if (doctor_bins_of(ops, DOCTOR_MERGED, tmp, st->nbins) == -1)
		memset(tmp, 0, DOCTOR_BINS_MAX * sizeof(*tmp));
	for (j = 0; j < st->nbins; j++)
		st->bins[j] = (struct frag_class){.size = d->bins[j].size,
		    .nregs = d->bins[j].nregs,
		    .slab_size = d->bins[j].slab_size,
		    .curregs = d->bins[j].curregs,
		    .curslabs = d->bins[j].curslabs,
		    .nonfull = tmp[j].nonfull};
	frag_req(ops, st);
	frag_large(ops, st);
	if (frag_cells(ops, d, st, tmp) == -1) {
		snprintf(err, errlen, "no memory for the statistics");
		frag_stats_free(st);
		goto out;
	}
	frag_stats_derive(st);
	rv = 0;
out:
	free(tmp);
	free(d);
	return rv;
}

/* prof_recent's records into @p fr, through job_recent's reader
 * (recent_dump: prof_recent's own mutexes only, so the rendering step
 * may), with jemalloc's clock after; or why not. Never fails the view:
 * the ages are an addition. */
static void frag_recent_read(const struct core_ops *ops, struct frag_recent *fr)
{
	struct recent_buf b = {0};
	unsigned long long now;
	int e;

	memset(fr, 0, sizeof(*fr));
	e = recent_dump(ops, &b, &now);
	fr->now_ns = now;
	fr->state = FRAG_RECENT_FAILED;
	if (e == ENOENT)
		snprintf(fr->why, sizeof(fr->why),
		    "experimental.prof_recent.alloc_dump is not in this "
		    "jemalloc (5.3 has it, with prof:true)");
	else if (e != 0)
		snprintf(fr->why, sizeof(fr->why),
		    "experimental.prof_recent.alloc_dump: %s", strerror(e));
	else if (b.nomem)
		snprintf(fr->why, sizeof(fr->why), "no memory for its records");
	else if (b.buf == NULL)
		snprintf(fr->why, sizeof(fr->why), "it wrote nothing");
	else if (recent_parse(b.buf, b.len, b.cut, &fr->rec, fr->why,
	             sizeof(fr->why)) == 0)
		fr->state = FRAG_RECENT_OK;
	free(b.buf);
}

/* Read and hand over the statistics for a fragmentation view. */
int core_frag_begin(struct profile_ctx *c, enum dump_view view,
    const struct core_ops *ops, struct frag_stats **st, char *err,
    size_t errlen)
{
	*st = NULL;
	if (view != DUMP_VIEW_FRAG && view != DUMP_VIEW_FRAG_JSON &&
	    view != DUMP_VIEW_FRAG_FLAME)
		return 0;
	if (ops == NULL) {
		snprintf(err, errlen, "no allocator to read statistics from");
		return -1;
	}
	if ((*st = malloc(sizeof(**st))) == NULL) {
		snprintf(err, errlen, "no memory for the statistics");
		return -1;
	}
	if (core_frag_read(ops, *st, err, errlen) == -1) {
		free(*st);
		*st = NULL;
		return -1;
	}
	/* The ages are the text's and the JSON's; the flame graph is the
	 * waste's alone. */
	if (view != DUMP_VIEW_FRAG_FLAME)
		frag_recent_read(ops, &(*st)->recent);
	c->frag = *st;
	return 1;
}

/* Take them back and free them. */
void core_frag_end(struct profile_ctx *c, int began, struct frag_stats *st)
{
	if (began != 1)
		return;
	c->frag = NULL;
	frag_stats_free(st);
	free(st);
}

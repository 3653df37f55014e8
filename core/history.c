/*
 * history — the figures remembered: a fixed ring of rows (the time, then
 * one value per column of history_cols[]) sampled on the loop every
 * history_interval seconds, history_points rows deep. The ring is one
 * anonymous mapping made when the setting is read, never resized while it
 * runs and never malloc'd: it is not in jemalloc's heap, so it is neither
 * sampled into the profiles nor counted in the allocated bytes it charts.
 */
#include <sys/mman.h>

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "ctl.h"
#include "history.h"
#include "ops.h"

#define STAT(f) (offsetof(struct core_stats, f) + 1)

/* jemalloc's MALLCTL_ARENAS_ALL, for the merged arenas' statistics. */
#define ARENAS_ALL "4096"

/* dirty: pages of every arena that are dirty (purgeable), in bytes. */
static int col_dirty(struct core *c, struct ctl_mib *m, uint64_t *v)
{
	size_t pages = 0, page = 0;

	(void)m;
	if (ctl_size(c->ops, "stats.arenas." ARENAS_ALL ".pdirty", &pages) !=
	        0 ||
	    ctl_size(c->ops, "arenas.page", &page) != 0)
		return -1;
	*v = (uint64_t)pages * page;
	return 0;
}

/* The columns, in the order /jemalloc/history and jmhi show them. */
const struct history_col history_cols[HISTORY_COLS] = {
    {"allocated", "stats.allocated", 0, NULL},
    {"active", "stats.active", 0, NULL},
    {"resident", "stats.resident", 0, NULL},
    {"mapped", "stats.mapped", 0, NULL},
    {"retained", "stats.retained", 0, NULL},
    {"metadata", "stats.metadata", 0, NULL},
    {"dirty", NULL, 0, col_dirty},
    {"connections", NULL, STAT(conns_open), NULL},
    {"words", NULL, STAT(words_served), NULL},
    {"http_requests", NULL, STAT(http_requests), NULL},
    {"dumps", NULL, STAT(dumps_written), NULL},
    {"dumps_failed", NULL, STAT(dumps_failed), NULL},
};

/* A size_t mallctl through a MIB looked up once: the sample runs on the
 * host's loop, and a name lookup walks jemalloc's ctl tree each time. */
static int mib_size(const struct core_ops *ops, struct ctl_mib *m,
    const char *name, uint64_t *v)
{
	size_t x = 0, len = sizeof(x);

	if (m->state == 0) {
		m->len = sizeof(m->mib) / sizeof(m->mib[0]);
		m->state = ops->nametomib != NULL && ops->bymib != NULL &&
		        ops->nametomib(name, m->mib, &m->len) == 0
		    ? 1
		    : -1;
	}
	if (m->state < 0) { /* a fake allocator: by name */
		if (ctl_size(ops, name, &x) != 0)
			return -1;
	} else if (ops->bymib(m->mib, m->len, &x, &len, NULL, 0) != 0)
		return -1;
	*v = x;
	return 0;
}

/* The ring's bytes for @p points rows: the README states it. */
size_t history_bytes(size_t points)
{
	return points * HISTORY_ROW * sizeof(uint64_t);
}

/*
 * The ring for @p points rows (0: none). Kept when the size is the same,
 * so a reload that changes only the interval loses nothing; another size
 * starts a new ring. 0, or -1 with errno (no ring then).
 */
int history_setup(struct history *h, size_t points, unsigned interval)
{
	void *p;

	h->interval = interval;
	if (points == h->cap && (h->ring != NULL || points == 0))
		return 0;
	history_free(h);
	if (points == 0)
		return 0;
	p = mmap(NULL, history_bytes(points), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	h->ring = p;
	h->cap = points;
	h->interval = interval;
	return 0;
}

/* Unmap the ring (a reload to another size, jm4lw_free). */
void history_free(struct history *h)
{
	if (h->ring != NULL)
		(void)munmap(h->ring, history_bytes(h->cap));
	h->ring = NULL;
	h->cap = h->n = h->head = 0;
	memset(h->mib, 0, sizeof(h->mib));
}

/* One row now: the time, then each column (a value missing here, as
 * with a jemalloc without stats, is HISTORY_NONE). */
void core_history_sample(struct core *c)
{
	struct history *h = &c->hist;
	const struct history_col *col;
	uint64_t *row;
	size_t i;

	if (h->ring == NULL)
		return;
	row = h->ring + h->head * HISTORY_ROW;
	ctl_epoch_coalesced(c);
	row[0] = (uint64_t)time(NULL);
	for (i = 0; i < HISTORY_COLS; i++) {
		col = &history_cols[i];
		row[i + 1] = HISTORY_NONE;
		if (col->fn != NULL)
			(void)col->fn(c, &h->mib[i], &row[i + 1]);
		else if (col->stat != 0)
			memcpy(&row[i + 1],
			    (const char *)&c->st + col->stat - 1,
			    sizeof(uint64_t));
		else if (mib_size(c->ops, &h->mib[i], col->ctl, &row[i + 1]) !=
		    0)
			row[i + 1] = HISTORY_NONE;
	}
	h->head = (h->head + 1) % h->cap;
	if (h->n < h->cap)
		h->n++;
}

/* Row @p i, oldest first, under the ring's wrap. */
const uint64_t *history_row(const struct history *h, size_t i)
{
	size_t first = (h->head + h->cap - h->n) % (h->cap ? h->cap : 1);

	if (i >= h->n)
		return NULL;
	return h->ring + ((first + i) % h->cap) * HISTORY_ROW;
}

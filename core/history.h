/*
 * history — the figures remembered: a fixed ring of rows in the process,
 * owned by the loop (core/history.c).
 */
#ifndef JM4LW_HISTORY_H
#define JM4LW_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "ops.h"

#define HISTORY_COLS 12
#define HISTORY_ROW (HISTORY_COLS + 1) /* the time, then the columns */
#define HISTORY_NONE UINT64_MAX        /* a value this process lacks */

/* A ring of rows of HISTORY_ROW values, owned by the loop. */
struct history {
	uint64_t *ring;      /* an anonymous mapping, cap rows */
	size_t cap, n, head; /* head: the next row written */
	unsigned interval;   /* seconds between rows */
	struct ctl_mib mib[HISTORY_COLS];
};

struct core;

/* One column: a size_t mallctl, a counter of struct core_stats (offset
 * + 1), or a function. */
struct history_col {
	const char *name;
	const char *ctl;
	size_t stat;
	int (*fn)(struct core *c, struct ctl_mib *m, uint64_t *v);
};

extern const struct history_col history_cols[HISTORY_COLS];

/* Bytes the ring of @p points rows takes. */
size_t history_bytes(size_t points);
/* The ring for @p points rows (0: none), kept if the size is unchanged;
 * 0, or -1 with errno. */
int history_setup(struct history *h, size_t points, unsigned interval);
void history_free(struct history *h);
/* Row @p i, 0 the oldest of h->n; NULL past the end. */
const uint64_t *history_row(const struct history *h, size_t i);

/* Add one row of figures to the history ring, if there is one (the
 * history_interval timer, on the loop: an epoch and a few mallctls). */
void core_history_sample(struct core *c);

#endif /* JM4LW_HISTORY_H */

/*
 * figures — one table every face renders: each row the mntr key, the
 * metric name, the help and where the value comes from (core/figures.c).
 */
#ifndef JM4LW_FIGURES_H
#define JM4LW_FIGURES_H

#include <stddef.h>
#include <stdint.h>

struct core;

enum figure_type {
	FIG_TEXT,    /* a string */
	FIG_COUNTER, /* only grows */
	FIG_GAUGE,   /* goes up and down */
	FIG_BOOL,    /* true/false; 1/0 as a metric */
	FIG_TIME,    /* seconds since the epoch; mntr shows UTC ISO 8601 */
};

/* One named value: its mntr key, its metric name (NULL: not exported as
 * a metric), what it means and how it is read. */
struct figure {
	const char *key;
	const char *metric;
	const char *help;
	enum figure_type type;
	const char *ctl; /* read with mallctl, or NULL */
	size_t stat;     /* else offset into struct core_stats + 1, or 0 */
	int (*fn)(const struct core *c, uint64_t *v, const char **s);
	/* A sample of a labelled family: its labels (`trigger="psi"`);
	 * consecutive rows of one metric name are one family. */
	const char *labels;
};

struct figure_value {
	int have; /* 0: unavailable here (no stats, no profiling) */
	uint64_t u;
	const char *s;
};

/* At least figures_count: room for a face's array of values. */
#define FIGURES_MAX 48

extern const struct figure figures[];
extern const size_t figures_count;

/* Read every figure into @p v (figures_count entries). */
void figures_read(struct core *c, struct figure_value *v);

/* The value of figure @p key in @p v, or NULL. */
const struct figure_value *figure_find(const struct figure_value *v,
    const char *key);

#endif /* JM4LW_FIGURES_H */

/*
 * doctor's advice: from the diagnosis's figures, what to do about
 * resident memory, each line only with the figure that justifies it and
 * the gain expected. Thresholds are a share of resident with a floor, so
 * they mean something in a small process and in a big one.
 */
#include <stdint.h>
#include <string.h>

#include "doctor.h"

#define MiB (1024ULL * 1024)
/* jemalloc's default dirty_decay_ms: what "long" is measured against. */
#define DECAY_DEFAULT_MS 10000
/* jemalloc's default lg_prof_sample (512 KiB between samples). */
#define LG_SAMPLE_DEFAULT 19

/* x - y, or 0. */
static uint64_t sub0(uint64_t x, uint64_t y)
{
	return x > y ? x - y : 0;
}

/* Append an advice line, if there is room. */
static struct doctor_advice *advise(struct doctor *d,
    enum doctor_advice_kind kind, uint64_t figure, uint64_t gain)
{
	struct doctor_advice *a;

	if (d->nadvice == DOCTOR_ADVICE_MAX)
		return NULL;
	a = &d->advice[d->nadvice++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->figure = figure;
	a->gain = gain;
	return a;
}

/* The larger of @p floor and @p share of @p of: a threshold that means
 * something in a small process and in a big one. */
static uint64_t at_least(uint64_t floor, uint64_t of, unsigned div)
{
	return of / div > floor ? of / div : floor;
}

/* The advice, each line only with the figure that justifies it. */
void doctor_advise(struct doctor *d)
{
	const struct doctor_arena *a;
	struct doctor_advice *x;
	const struct doctor_bin *b;
	uint64_t long_dirty = 0, idle_gain = 0, share;
	long worst_decay = -2;
	unsigned i, idle = 0, rows;

	/* Dirty pages: 1 MiB and a twentieth of resident are worth a word. */
	if (d->dirty >= at_least(MiB, d->resident, 20)) {
		advise(d, ADVICE_PURGE, d->dirty, d->purge_gain);
		for (i = 0; i < d->narena_rows; i++) {
			a = &d->arenas[i];
			if (a->dirty_decay_ms == -1 ||
			    a->dirty_decay_ms > DECAY_DEFAULT_MS) {
				long_dirty += a->dirty;
				if (worst_decay != -1 &&
				    (a->dirty_decay_ms == -1 ||
				        a->dirty_decay_ms > worst_decay))
					worst_decay = a->dirty_decay_ms;
			}
		}
		if (long_dirty > 0 &&
		    (x = advise(d, ADVICE_DECAY, long_dirty, long_dirty)) !=
		        NULL) {
			x->value = worst_decay;
			x->value2 = DECAY_DEFAULT_MS;
		}
		if (!d->background_thread)
			advise(d, ADVICE_BACKGROUND, d->dirty, d->dirty);
	}
	/* Many arenas, most holding next to nothing: each keeps its own
	 * dirty pages, slabs and metadata. "Idle": under a quarter of its
	 * fair share of allocated. */
	rows = d->narena_rows;
	if (d->narenas >= 4 && rows > 0) {
		share = d->allocated / d->narenas / 4;
		for (i = 0; i < rows; i++) {
			a = &d->arenas[i];
			if (a->index == DOCTOR_OTHER || a->allocated >= share)
				continue;
			idle++;
			idle_gain += sub0(a->resident, a->allocated);
		}
		if (idle * 2 >= d->narenas && idle_gain >= MiB &&
		    (x = advise(d, ADVICE_NARENAS, idle_gain, idle_gain)) !=
		        NULL) {
			x->value = idle;
			x->count = d->narenas;
			x->value2 =
			    (long)(d->narenas - idle > 0 ? d->narenas - idle
			                                 : 1);
		}
	}
	/* Size classes: half their regions free, and worth 1 MiB and a
	 * fiftieth of resident. */
	for (i = 0; i < d->nworst_bins; i++) {
		b = &d->bins[d->worst_bins[i]];
		if (b->util >= 0.5 || b->waste < at_least(MiB, d->resident, 50))
			continue;
		if ((x = advise(d, ADVICE_SIZE_CLASS, b->waste, b->waste)) ==
		    NULL)
			break;
		x->size = b->size;
		x->util = b->util;
		x->count = b->curregs;
	}
	/* Thread caches: 8 MiB and a tenth of resident. */
	if (d->tcache >= at_least(8 * MiB, d->resident, 10))
		advise(d, ADVICE_TCACHE, d->tcache, d->tcache);
	/* Sampling finer than jemalloc's default costing a tenth of resident:
	 * the cost scales with the rate, 2^(19 - lg) times less at 19. */
	if (d->prof && d->lg_sample < LG_SAMPLE_DEFAULT &&
	    d->prof_cost >= at_least(MiB, d->resident, 10) &&
	    (x = advise(d, ADVICE_SAMPLING, d->prof_cost,
	         d->prof_cost -
	             (d->prof_cost >> (LG_SAMPLE_DEFAULT - d->lg_sample)))) !=
	        NULL) {
		x->value = (long)d->lg_sample;
		x->value2 = LG_SAMPLE_DEFAULT;
	}
}

/*
 * ctl — what the engine asks of the allocator on struct core's behalf:
 * the calls that change its state (jmep, jmdp, jmpg, jmrs), its version
 * and statistics, the coalesced epoch and the loop thread's own sampling
 * (core/ctl.c).
 */
#ifndef JM4LW_CTL_H
#define JM4LW_CTL_H

#include <stddef.h>

#include "reason.h"

struct core;

/* Refresh the statistics at most once a millisecond, for words that only
 * read. */
void ctl_epoch_coalesced(struct core *c);

/* ctl_thread_sampling() for the loop's thread (struct core's mib). */
int core_thread_sampling(struct core *c, int on);

/* jemalloc's version string ("" if unknown). */
const char *core_version(const struct core *c);
/* jemalloc's statistics through @p cb, text or (@p json) JSON. */
void core_stats_print(struct core *c, void (*cb)(void *, const char *),
    void *arg, int json);

/* The outcome of a call that changes allocator state (jmep, jmdp, jmpg,
 * jmrs): ok, or a one-line reason. */
struct ctl_result {
	int ok;
	enum core_reason why; /* when not ok */
	int was;              /* jmep/jmdp: prof.active before */
	size_t lg;     /* jmrs: the lg_prof_sample passed to prof.reset */
	int sizes;     /* jmpg: resident before/after are known */
	size_t before; /* jmpg: stats.resident before the purge */
	size_t after;  /* and after */
	char reason[256];
};

/* prof.active = @p on. */
void core_set_active(struct core *c, int on, struct ctl_result *r);
/* Purge every arena (MALLCTL_ARENAS_ALL). */
void core_purge(struct core *c, struct ctl_result *r);
/* prof.reset at prof_reset_lg_sample. */
void core_reset(struct core *c, struct ctl_result *r);

struct view_sampling;
/* Note prof.active as it is now (@p changed: we just switched it or
 * reset the profile), for core_sampling's "since when". */
void core_sampling_seen(struct core *c, int changed);

/* The state of sampling now, for a profile dumped now: on or off, since
 * when, its interval, and the face's words to turn it on. On the loop. */
void core_sampling(struct core *c, struct view_sampling *s);

#endif /* JM4LW_CTL_H */

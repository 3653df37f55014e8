/*
 * reason — why a call of the engine was refused or failed, whether heap
 * profiling is usable, and the words a face hands in for the lines that
 * say what to do next (core/ctl.c).
 */
#ifndef JM4LW_REASON_H
#define JM4LW_REASON_H

#include <stddef.h>

#include "ops.h"

/*
 * What a line of the engine's says a person can do next names a face's
 * words, and the engine knows none: the words' face hands these in
 * (proto_init). NULL, or a member NULL: the line says less.
 */
struct core_hints {
	const char *base_kept_by;   /* who keeps a dump to compare with */
	const char *base_next;      /* what a view without a base says next */
	const char *sampling_on;    /* how to turn sampling on */
	const char *sampling_start; /* the same, once profiling is enabled */
};

/*
 * Why a call was refused or failed, in every result: a face picks its
 * status from it (HTTP: one table in http/reply.c), never from the
 * errno or the text. The text a person reads is the result's reason.
 */
enum core_reason {
	REASON_NONE,         /* done */
	REASON_BUSY,         /* a dump or another job is running */
	REASON_RATE,         /* dump_min_interval: too soon after the last */
	REASON_NO_SPACE,     /* dump_min_free, or the disk filled */
	REASON_PROF_UNBUILT, /* jemalloc built without --enable-prof */
	REASON_PROF_OFF,     /* opt.prof is false */
	REASON_NOT_ALLOWED,  /* not in the allow list */
	REASON_UNKNOWN,      /* no such word */
	REASON_NO_DUMP,      /* no such kept dump */
	REASON_NO_BASE,      /* nothing kept to compare with */
	REASON_BAD_REQUEST,  /* what was asked for is malformed */
	REASON_FAILED,       /* tried and failed, or could not even ask */
	REASON_NO_STATS,     /* jemalloc built with --disable-stats (doctor) */
	REASON_NO_SAMPLES, /* a view that needs samples, of a profile without */
	REASON_CROWDED,    /* scrape_waiters_max requests already wait */
	REASON_COUNT
};

/* Is heap profiling usable here? */
enum prof_state {
	PROF_READY,
	PROF_UNBUILT,    /* jemalloc built without --enable-prof */
	PROF_OFF,        /* opt.prof is false */
	PROF_UNREADABLE, /* opt.prof could not be read: *err says why */
};
enum prof_state core_prof_state(const struct core_ops *ops, int *err);

/* What to tell a person for a state that is not PROF_READY (with
 * @p hints' words, if any). */
const char *core_prof_reason(enum prof_state s, int err,
    const struct core_hints *hints, char *buf, size_t len);

/* The reason a state that is not PROF_READY refuses with. */
enum core_reason core_prof_why(enum prof_state s);

#endif /* JM4LW_REASON_H */

/*
 * fake_jemalloc — the allocator the unit tests and the fuzzer hand to
 * core_init(): mallctl and malloc_stats_print with jemalloc's signatures,
 * answering from struct fake_jemalloc. Every call is checked (names are
 * ours, lengths are jemalloc's, prof.dump writes a new name in a private
 * staging directory) and counted; hooks cover what differs between users.
 */
#ifndef JM4LW_FAKE_JEMALLOC_H
#define JM4LW_FAKE_JEMALLOC_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "ops.h"
#include "util.h"

struct fake_jemalloc {
	/* What the allocator answers. */
	bool opt_prof;    /* opt.prof (default true) */
	bool prof_active; /* prof.active, written by jmep/jmdp */
	size_t allocated; /* stats.allocated (default 12345) */
	size_t stats;     /* every other stats.* (default 19) */
	size_t lg_sample; /* prof.lg_sample, and prof.reset's default (19) */
	int stats_pieces; /* extra pieces malloc_stats_print hands over */
	bool opt_prof_sys_thread_name; /* opt.prof_sys_thread_name */
	char thread_name[64];          /* thread.prof.name, as set */

	/* Failures: fail_errno for fail_name ("*": every name, "x.": every
	 * name starting "x."; NULL: none), then the hook, if any: its
	 * errno, or 0 to answer normally. */
	const char *fail_name;
	int fail_errno;
	int (*fail)(const char *name);

	/*
	 * prof.dump: the file is made as jemalloc's creat() does (0644), then
	 * this hook writes the profile to @p f (NULL: a short whole one,
	 * FAKE_PROFILE). Its return is prof.dump's: 0, or an errno.
	 */
	int (*profile)(FILE *f, const char *path);
	/* If set, prof.dump's file must be directly in this directory (point
	 * it at struct dumper's stage). */
	const char *stage;

	/* A broken expectation: report and do not return (default: print
	 * and abort()). */
	void (*violation)(const char *file, int line, const char *what);

	/* What was called. */
	int epochs;             /* epoch calls */
	int epoch_at_stats;     /* epochs when stats_print last ran */
	int stats_prints;       /* malloc_stats_print calls */
	const char *stats_opts; /* its last opts */
	int dumps;              /* prof.dump calls that reached the file */
	char dump_path[CORE_PATH_MAX]; /* the last one's name */
	mode_t dump_dir_mode;          /* the permissions of its directory */
	int dump_memfd;                /* it went to our memfd, not a file */
	int resets;                    /* prof.reset calls */
	size_t reset_lg;               /* the last one's lg_prof_sample */
	int purges;                    /* arena.<all>.purge calls */

	/* jemalloc 5.3's prof_recent. */
	ssize_t recent_max;      /* experimental.prof_recent.alloc_max (64) */
	const char *recent_json; /* what alloc_dump writes; NULL: FAKE_RECENT */
	size_t recent_piece;     /* handed over in pieces this big (0: one) */
	int recent_dumps;        /* alloc_dump calls */
	int recent_max_writes;   /* alloc_max writes */
};

/* What alloc_dump writes without recent_json: one live record and one
 * freed, in jemalloc's compact shape, stacks of addresses in no object. */
#define FAKE_RECENT                                                            \
	"{\"sample_interval\":524288,\"recent_alloc_max\":64,"                 \
	"\"recent_alloc\":[{\"size\":1000,\"usize\":1024,\"released\":true,"   \
	"\"alloc_thread_uid\":1,\"alloc_time\":1000000000,"                    \
	"\"alloc_trace\":[\"0x10\",\"0x20\"],\"dalloc_thread_uid\":2,"         \
	"\"dalloc_thread_name\":\"worker\",\"dalloc_time\":2000000000,"        \
	"\"dalloc_trace\":[\"0x30\"]},{\"size\":4096,\"usize\":4096,"          \
	"\"released\":false,\"alloc_thread_uid\":3,"                           \
	"\"alloc_thread_name\":\"main\",\"alloc_time\":3000000000,"            \
	"\"alloc_trace\":[\"0x40\"]}]}"

/* What prof.dump writes without a hook: a whole profile, ending in the
 * maps section. */
#define FAKE_PROFILE "heap_v2/524288\n\nMAPPED_LIBRARIES:\n00-01 r-xp x\n"

/* The fake's state; fake_reset() puts the defaults back. */
extern struct fake_jemalloc fake;

/* The table to hand to core_init(). */
extern const struct core_ops fake_ops;

/* Defaults: profiling built and on, nothing failing, no hooks, counters
 * at 0. */
void fake_reset(void);

/* Write @p n bytes of profile-like lines to @p f, the last ending in
 * "\n" (for long profiles). */
void fake_fill(FILE *f, size_t n);

#endif /* JM4LW_FAKE_JEMALLOC_H */

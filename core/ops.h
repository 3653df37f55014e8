/*
 * ops — the allocator behind one table (jemalloc's own signatures), and
 * the plain mallctl reads through it (core/ctl.c, core/jemalloc_ops.c).
 * Unit tests hand in a table that fails each call with each errno.
 */
#ifndef JM4LW_OPS_H
#define JM4LW_OPS_H

#include <stddef.h>

/* The allocator, behind a table (jemalloc's own signatures). */
struct core_ops {
	int (*mallctl)(const char *name, void *oldp, size_t *oldlenp,
	    void *newp, size_t newlen);
	void (*stats_print)(void (*write_cb)(void *, const char *),
	    void *cbopaque, const char *opts);
	const char *version; /* jemalloc's version string */
	/* Optional (NULL in a fake): the fast path for a name used often. */
	int (*nametomib)(const char *name, size_t *mibp, size_t *miblenp);
	int (*bymib)(const size_t *mib, size_t miblen, void *oldp,
	    size_t *oldlenp, void *newp, size_t newlen);
};

/* The real jemalloc the process runs on; NULL if it runs on another
 * allocator (only possible in the preload agent's build). */
const struct core_ops *core_jemalloc(void);
/* core_jemalloc() only if the process's malloc is that jemalloc (a program
 * linked without -ljemalloc loads it but mallocs from libc); else NULL and
 * one line in @p err saying how to link or preload it. */
const struct core_ops *core_allocator(char *err, size_t errlen);

/* A mallctl name looked up once: 0 not yet, 1 ready, -1 not here. */
struct ctl_mib {
	int state;
	size_t mib[4], len;
};

int ctl_bool(const struct core_ops *ops, const char *name, int *v);
int ctl_size(const struct core_ops *ops, const char *name, size_t *v);
/* Refresh jemalloc's statistics; stats.* are stale without it. */
void ctl_epoch(const struct core_ops *ops);

/*
 * Switch the calling thread's own sampling (thread.prof.active) to @p on,
 * for the module's work on a host's thread: what the module allocates for
 * itself must not show up in the profiles it writes. Returns the previous
 * state, or -1 when there is none to switch (no profiling).
 */
int ctl_thread_sampling(const struct core_ops *ops, struct ctl_mib *m, int on);

/* The longest thread name ctl_thread_name takes: what the kernel keeps
 * of a thread's name (comm, 16 bytes with its NUL), so a name given here
 * and one prof_sys_thread_name reads are alike, as short label values. */
#define CTL_THREAD_NAME_MAX 15

/*
 * Name the calling thread in heap profiles (thread.prof.name: the
 * header's tN: line ends with it). 0, or an errno: EINVAL (NULL, or a
 * byte jemalloc refuses: only printable ASCII, space and tab; nor '"'
 * or '\\', which jemalloc writes unescaped into prof_recent's JSON),
 * ENAMETOOLONG (past CTL_THREAD_NAME_MAX), ENOENT (no heap profiling:
 * opt.prof off or not built), EBUSY (opt.prof_sys_thread_name: jemalloc
 * takes every thread's name from the system, pthread_setname_np), or
 * jemalloc's own (EAGAIN: no memory).
 */
int ctl_thread_name(const struct core_ops *ops, const char *name);

#endif /* JM4LW_OPS_H */

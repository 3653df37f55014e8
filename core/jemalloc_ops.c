/*
 * The real allocator behind struct core_ops. Tests substitute their own
 * table to inject each errno.
 *
 * Linked into a program (libjm4lw, jm4lwd) we call jemalloc directly. Built
 * with JM4LW_OPS_DLSYM (the preload agent) we must not pull libjemalloc in
 * ourselves: a second jemalloc that is not the process's malloc would
 * report on an empty heap. So we look for the one the process runs on.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

#ifndef JM4LW_OPS_DLSYM

#include <jemalloc/jemalloc.h>

static const struct core_ops jemalloc_ops = {
    .mallctl = mallctl,
    .stats_print = malloc_stats_print,
    .version = JEMALLOC_VERSION,
    .nametomib = mallctlnametomib,
    .bymib = mallctlbymib,
};

/* The jemalloc we are linked with. */
const struct core_ops *core_jemalloc(void)
{
	return &jemalloc_ops;
}

#else

static struct core_ops dl_ops;
static const struct core_ops *dl_found;
static pthread_once_t dl_once = PTHREAD_ONCE_INIT;

/* Find mallctl & co. in the process's global scope, once. */
static void dl_resolve(void)
{
	const char **version;
	size_t len = sizeof(*version);

	*(void **)&dl_ops.mallctl = dlsym(RTLD_DEFAULT, "mallctl");
	*(void **)&dl_ops.stats_print =
	    dlsym(RTLD_DEFAULT, "malloc_stats_print");
	*(void **)&dl_ops.nametomib = dlsym(RTLD_DEFAULT, "mallctlnametomib");
	*(void **)&dl_ops.bymib = dlsym(RTLD_DEFAULT, "mallctlbymib");
	if (dl_ops.mallctl == NULL || dl_ops.stats_print == NULL)
		return;
	dl_ops.version = "unknown";
	version = (const char **)&dl_ops.version;
	(void)dl_ops.mallctl("version", version, &len, NULL, 0);
	dl_found = &dl_ops;
}

/* The jemalloc the process runs on, or NULL when it runs on another. */
const struct core_ops *core_jemalloc(void)
{
	pthread_once(&dl_once, dl_resolve);
	return dl_found;
}

#endif

/*
 * Is the process's malloc the jemalloc that mallctl talks to? A program
 * linked -ljm4lw without -ljemalloc loads jemalloc through our NEEDED entry
 * while its malloc binds to libc's: every figure would describe an idle
 * heap. jemalloc 5.3.0's arenas.lookup cannot ask "is this pointer yours"
 * (a pointer it never mapped faults in its radix tree), so two safe tests.
 */

/* A sanitizer's runtime owns malloc by design in those builds. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define JM4LW_SANITIZER_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
#define JM4LW_SANITIZER_MALLOC 1
#endif
#endif

/* Calls through this pointer are the process's malloc, and the compiler
 * cannot drop the malloc/free pair of the probe below. */
static void *(*volatile probe_malloc)(size_t) = malloc;

/* 1 if a malloc() shows up in jemalloc's count of this thread's bytes, 0
 * if not, -1 if jemalloc keeps no such count (built without stats). */
static int malloc_counted(const struct core_ops *ops)
{
	enum { PROBE = 4096 };
	uint64_t before, after;
	size_t len = sizeof(before);
	void *p;

	/* The first read may set up jemalloc's thread state: read twice. */
	if (ops->mallctl("thread.allocated", &before, &len, NULL, 0) != 0 ||
	    ops->mallctl("thread.allocated", &before, &len, NULL, 0) != 0)
		return -1;
	if ((p = probe_malloc(PROBE)) == NULL)
		return -1;
	len = sizeof(after);
	if (ops->mallctl("thread.allocated", &after, &len, NULL, 0) != 0) {
		free(p);
		return -1;
	}
	free(p);
	return after - before >= PROBE;
}

/* The base name of the object holding @p addr, for the refusal line. */
static const char *object_of(void *addr, Dl_info *info)
{
	const char *slash;

	if (addr == NULL || dladdr(addr, info) == 0 ||
	    info->dli_fname == NULL || info->dli_fname[0] == '\0')
		return NULL;
	slash = strrchr(info->dli_fname, '/');
	return slash != NULL ? slash + 1 : info->dli_fname;
}

/* Check once per process: the binding of malloc cannot change. */
static const struct core_ops *checked_ops;
static char checked_why[512];
static pthread_once_t check_once = PTHREAD_ONCE_INIT;

/* Decide whether the process's malloc is core_jemalloc()'s, once. */
static void check_malloc(void)
{
	const struct core_ops *ops = core_jemalloc();
	Dl_info mi = {0}, ci = {0};
	const char *mobj, *cobj;

	if (ops == NULL) {
		snprintf(checked_why, sizeof(checked_why),
		    "this process does not run on jemalloc (no mallctl "
		    "symbol)%s",
#ifdef JM4LW_OPS_DLSYM
		    "; not starting. Use jm4lw-run, which preloads "
		    "libjemalloc.so.2"
#else
		    ""
#endif
		);
		return;
	}
#ifdef JM4LW_SANITIZER_MALLOC
	checked_ops = ops;
	return;
#endif
	/* Our malloc landed in jemalloc's books: that is the proof. */
	if (malloc_counted(ops) == 1) {
		checked_ops = ops;
		return;
	}
	/* Otherwise malloc and mallctl from one object will do: that is
	 * jemalloc without stats, or valgrind, which replaces jemalloc's
	 * malloc in the code but leaves its symbols where they were. */
	mobj = object_of(dlsym(RTLD_DEFAULT, "malloc"), &mi);
	cobj = object_of(*(void **)&ops->mallctl, &ci);
	if (mobj != NULL && cobj != NULL && mi.dli_fbase == ci.dli_fbase) {
		checked_ops = ops;
		return;
	}
	/* One line that fits a host's err[256]. */
	snprintf(checked_why, sizeof(checked_why),
	    "this process does not run on jemalloc: malloc is %s's, not %s's, "
	    "so every figure would be of an idle heap; %s",
	    mobj != NULL ? mobj : "another allocator",
	    cobj != NULL ? cobj : "jemalloc",
#ifdef JM4LW_OPS_DLSYM
	    "not starting. Run it under jm4lw-run, or with "
	    "LD_PRELOAD=\"libjemalloc.so.2 libjm4lw_agent.so\""
#else
	    "link the executable with -ljemalloc (pkg-config --libs jm4lw) "
	    "or run it with LD_PRELOAD=libjemalloc.so.2"
#endif
	);
}

/* core_jemalloc() if the process's malloc is that jemalloc, else NULL and
 * one line in @p err saying how to link or preload it. */
const struct core_ops *core_allocator(char *err, size_t errlen)
{
	pthread_once(&check_once, check_malloc);
	if (checked_ops == NULL && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", checked_why);
	return checked_ops;
}

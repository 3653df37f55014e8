/*
 * The real allocator behind struct core_ops. Tests substitute their own
 * table to inject each errno.
 *
 * Linked into a program (libjm4lw, jm4lwd) we call jemalloc directly. Built
 * with JM4LW_OPS_DLSYM (the preload agent) we must not pull libjemalloc in
 * ourselves: a second jemalloc that is not the process's malloc would
 * report on an empty heap. So we look for the one the process runs on.
 */
#include <stddef.h>

#include "core.h"

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

#include <dlfcn.h>
#include <pthread.h>

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

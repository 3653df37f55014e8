/*
 * dw_load: libdw.so.1 dlopen()ed on the first symbolization, and the
 * functions of DW_FUNCS (dw_load.h) looked up in it, once, under
 * pthread_once. Why not linked: see dw_load.h.
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define DW_LOAD_NO_CALLS /* here the names are the members' */
#include "dw_load.h"

struct dw_funcs dw_funcs;

/* What the one load gave: 0, or -1 with why in dw_why. */
static int dw_status = -1;
static char dw_why[256];
static pthread_once_t dw_once = PTHREAD_ONCE_INIT;
static int dw_tried; /* a dw_load() returned (atomic: read from any thread) */

/* pthread_once: open libdw and fill dw_funcs, or say why not. A missing
 * function means a libdw older than the headers we were built with: then
 * none is used (a half-filled table would be a crash later). */
static void dw_load_once(void)
{
	void *lib, *fn;
	const char *missing = NULL;

	/* RTLD_LOCAL: its symbols stay out of the host's namespace. */
	if ((lib = dlopen(DW_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(dw_why, sizeof(dw_why), "%s cannot be loaded: %s",
		    DW_SONAME, dlerror());
		return;
	}
	/* dlsym on the handle searches libdw and its dependencies, so
	 * libelf's functions are found through it too. */
#define DW_LOOKUP(f)                                                           \
	if (missing == NULL) {                                                 \
		if ((fn = dlsym(lib, #f)) == NULL)                             \
			missing = #f;                                          \
		else                                                           \
			memcpy(&dw_funcs.f, &fn, sizeof(fn));                  \
	}
	DW_FUNCS(DW_LOOKUP)
#undef DW_LOOKUP
	if (missing != NULL) {
		snprintf(dw_why, sizeof(dw_why),
		    "%s cannot be used: it has no %s (elfutils older than "
		    "this build's)",
		    DW_SONAME, missing);
		memset(&dw_funcs, 0, sizeof(dw_funcs));
		dlclose(lib);
		return;
	}
	dw_status = 0;
}

/* The first call loads; every call gives the load's answer. */
int dw_load(char *err, size_t errlen)
{
	(void)pthread_once(&dw_once, dw_load_once);
	__atomic_store_n(&dw_tried, 1, __ATOMIC_RELEASE);
	if (dw_status == -1)
		snprintf(err, errlen, "%s", dw_why);
	return dw_status;
}

/* Without loading: did the load run and fail? */
int dw_load_failed(void)
{
	return __atomic_load_n(&dw_tried, __ATOMIC_ACQUIRE) && dw_status == -1;
}

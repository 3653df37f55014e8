/*
 * profile_int — what core/profile.c lends its siblings
 * (core/profile_self.c, core/profile_leaks.c): the context's symbolizer
 * and the safe way to read a dump by name.
 */
#ifndef JM4LW_PROFILE_INT_H
#define JM4LW_PROFILE_INT_H

#include <stddef.h>

#include "heapprof.h"
#include "profile.h"
#include "symbolize.h"

/* This process's symbolizer of @p hp with @p c's places for debug info;
 * its first warning kept in c->warn. NULL with @p err. */
struct symbolizer *profile_sym(struct profile_ctx *c,
    const struct heap_profile *hp, char *err, size_t errlen);

/* Parse the dump at @p path (opened once, not through a symlink, a
 * regular file of ours), @p hp zeroed on failure. 0, or -1 with @p err. */
int profile_load(const char *path, struct heap_profile *hp, char *err,
    size_t errlen);

#endif /* JM4LW_PROFILE_INT_H */

/*
 * render — a symbolized heap profile as people and tools read it: jeprof's
 * --text table, and FlameGraph's collapsed stacks. Pure functions of the
 * parsed profile and a symbolizer.
 */
#ifndef JM4LW_RENDER_H
#define JM4LW_RENDER_H

#include <stdio.h>

#include "heapprof.h"
#include "symbolize.h"

enum render_value {
	RENDER_SPACE,   /* unsampled in-use bytes */
	RENDER_OBJECTS, /* unsampled in-use objects */
};

/* jeprof --text: "Total:", then flat, flat%, sum%, cum, cum%, function,
 * sorted by flat. 0, or -1 with errno. */
int render_text(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v);

/* jeprof's symbolized profile: a "--- symbol" section naming every
 * address of the profile (as jeprof looks them up: callers' at pc - 1),
 * then "--- heap" and the profile @p raw itself, which jeprof reads on
 * any machine without the program or its libraries. */
int render_symbolized(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const char *binary, const char *raw, size_t rawlen);

/* "outer;...;leaf value" lines, one per distinct stack. */
int render_collapsed(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v);

#endif

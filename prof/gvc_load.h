/*
 * gvc_load — Graphviz's layout library, libgvc, loaded on the first call
 * graph drawn as SVG rather than linked: linked, libgvc, libcgraph,
 * libcdt, libpathplan, libltdl and libexpat would be mapped into every
 * host at start, where most never draw a call graph, and a host without
 * Graphviz would not start at all. Loaded by gvc_svg() on the worker,
 * once; where it cannot be, the caller says so and hands out the dot
 * text instead.
 *
 * Graphviz's headers (libgraphviz-dev) are not needed: gvc_load.c
 * declares the few functions it calls itself, with the types of
 * Graphviz's own (gvc.h, cgraph.h), so the build needs no -dev package
 * and the library's absence is a runtime answer, not a build option.
 */
#ifndef JM4LW_GVC_LOAD_H
#define JM4LW_GVC_LOAD_H

#include <stddef.h>
#include <stdio.h>

/* The library dlopen()ed: libgvc's soname since Graphviz 2.30 (Debian's
 * libgvc6, which the graphviz package depends on). JM4LW_GVC_LIB in the
 * environment names another (a path, or one that does not exist, to
 * see the answer without it). */
#define GVC_SONAME "libgvc.so.6"

/* gvc_svg's answer when libgvc cannot be loaded. */
#define GVC_MISSING 1

/* Lay out the dot text @p dot (NUL-terminated) with Graphviz's dot
 * layout and write it to @p out as SVG. 0; GVC_MISSING with why (one
 * line) in @p err when libgvc or its plugins cannot be loaded (every
 * later call says the same: it is loaded once per process); -1 with
 * Graphviz's complaint in @p err when it refuses the graph. Calls are
 * serialized (Graphviz keeps global state). */
int gvc_svg(const char *dot, FILE *out, char *err, size_t errlen);

#endif

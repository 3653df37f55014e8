/*
 * render_svg — a heap profile as an interactive flame graph: one SVG file
 * with its style and script inline, which names no other host or file,
 * reads without script (names, <title> tooltips) and with it shows
 * details on hover, zooms on click and searches (Ctrl-F).
 */
#ifndef JM4LW_RENDER_SVG_H
#define JM4LW_RENDER_SVG_H

#include <stdio.h>

#include "heapprof.h"
#include "render.h"
#include "symbolize.h"

/* A flame graph of @p hp as one self-contained SVG: every stack merged
 * into a tree from the root ("all") out, children by name, each frame as
 * wide as what it holds, frames under 0.1 px left out (their parents keep
 * their size), a stack deeper than 1024 frames drawn with its middle
 * folded into one "[N more frames]" frame. A difference (hp->diff) is
 * drawn with the width of the larger of before and after and coloured
 * by the change: red grew, blue shrank. @p title heads it (NULL: a
 * default); @p note, why it is empty or partial (NULL: none), is a line
 * of its own under the legend. 0, or -1 with errno. */
int render_svg(FILE *out, const struct heap_profile *hp, struct symbolizer *sym,
    enum render_value v, const char *title, const char *note);

#endif

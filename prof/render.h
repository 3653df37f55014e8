/*
 * render — a symbolized heap profile as people and tools read it: jeprof's
 * --text table (render_text.c), FlameGraph's collapsed stacks
 * (render_collapsed.c), jeprof's symbolized file (render_symbolized.c),
 * and the stack view they share (render.c); the SVG flame graph and pprof
 * have their own headers. One file per format, pure functions of the
 * parsed profile and a symbolizer.
 *
 * A profile after heapprof_subtract (hp->diff) renders as a difference:
 * each stack's value is its growth (negative when it shrank), and the
 * formats that can show both sides (collapsed, svg) take the base's value
 * from b_bytes / b_objs.
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

/* One frame of a stack as every format sees it. */
struct render_frame {
	struct sym_frame f; /* f.func is the name the formats print */
	uint64_t pc;        /* the address it came from, as dumped */
	size_t depth;       /* where that address is in the stack, 0 = leaf */
};

/* A stack's frames, leaf first, the allocator's cut off. */
struct render_view {
	struct render_frame *f;
	size_t n, cap;
	/* Names already checked against the allocator's entry points, by
	 * pointer (the symbolizer's names are interned) to 1 if skipped:
	 * the list is checked once per name, not once per frame. */
	struct hmap seen;
};

/* Fill @p v with stack @p st's frames: each address through its inline
 * chain (innermost first), with the frames in the allocator's shared
 * library and everything up to and including the last allocator entry
 * point (jeprof's list: malloc, operator new, ...) cut off, so the stack
 * starts where the program allocated. 0, or -1 when
 * memory runs out. Reuse @p v across stacks; free with
 * render_view_free(). */
int render_view_stack(struct render_view *v, const struct hp_stack *st,
    struct symbolizer *sym);

void render_view_free(struct render_view *v);

/* Do stack @p st's tN: lines hold no more than the stack (each count
 * summed over them at most the stack's own, without overflow)? Only
 * then are they split by thread (render_threads, pprof's labels): a
 * dump whose thread lines claim more is damaged or forged, and its
 * threads' parts would pass every bound the stack's own keep. */
int render_threads_fit(const struct hp_stack *st);

/* What stack @p st counts in @p v: its unsampled bytes or objects (its
 * growth, for a difference), through render_clamp. */
double render_value_of(const struct hp_stack *st, enum render_value v);

/* The base's value of @p st, for a difference (0 otherwise). */
double render_base_of(const struct hp_stack *st, enum render_value v);

/*
 * The formats' guard on their numbers. heapprof refuses a profile whose
 * totals pass 2^62, so a profile, or a difference of two, never reaches
 * int64's ends; a caller that builds a heap_profile by other means
 * might. Past RENDER_MAX a value saturates there (NaN is 0), so every
 * conversion to an integer is defined and nothing prints inf, nan, or a
 * sign the value did not have.
 */
#define RENDER_MAX 0x1.fffffffffffffp62 /* the largest double < 2^63 */
double render_clamp(double x);

/* Decode the UTF-8 character at @p s, @p n bytes left (n > 0): its
 * length, with its code point in *@p cp; or 1 with *@p cp = -1 for a
 * byte that starts no whole character (a broken, overlong or cut
 * sequence, a surrogate, past U+10FFFF). Control characters come back as
 * they are: each format says what it does with them. */
size_t render_utf8(const unsigned char *s, size_t n, long *cp);

/* Write the @p n bytes at @p s as XML text or an attribute's value:
 * & < > " ' escaped, anything XML cannot carry as '?', at most @p max
 * characters; a longer @p s is cut to max - 2 and ".." (names are C++
 * templates, often longer than the box they go in). */
void render_xml(FILE *out, const char *s, size_t n, size_t max);

/* Write @p s as text for a terminal, within one line: UTF-8 as it is,
 * control characters (C0 with the tab, DEL, C1) and bytes that are not
 * UTF-8 as '?', so a name from a dump (a thread's, any bytes) sends no
 * escape sequence and keeps its row. */
void render_line(FILE *out, const char *s);

/* render_line's text of @p s into @p dst of @p len bytes, cut between
 * characters where it does not fit: @p dst. */
const char *render_line_to(char *dst, size_t len, const char *s);

/* Does render_line show code point @p cp (render_utf8's, -1 for a broken
 * byte) as it is? */
int render_line_shows(long cp);

/* render_clamp(@p x) rounded to the nearest integer (llround's). */
long long render_round(double x);

struct fold_list;

/* jeprof --text: "Total:", then flat, flat%, sum%, cum, cum%, function,
 * sorted by flat; the first @p limit rows (0: all). Flat goes past the
 * allocator's wrappers (fold.h) under @p fold (NULL: the defaults), and
 * a line under Total: names them. 0, or -1 with errno. */
int render_text(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v, size_t limit,
    const struct fold_list *fold);

/* jeprof's symbolized profile: a "--- symbol" section naming every
 * address of the profile (as jeprof looks them up: callers' at pc - 1),
 * then "--- heap" and the profile @p raw itself through render_dump
 * (nothing when @p rawlen is 0: the caller writes it so), which jeprof
 * reads on any machine without the program or its libraries. */
int render_symbolized(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const char *binary, const char *raw, size_t rawlen);

/*
 * The heap_v2 profile read from @p in, to @p out as it is but for each
 * stack's leading frames in the allocator's library (sym_in_allocator),
 * which are cut, the new leaf written as its address - 1: the stacks
 * every format of ours shows (render_view_stack), for jeprof, which
 * cuts the allocator's frames by name only and finds none in a stripped
 * libjemalloc's internal functions. A stack all of whose
 * frames are the allocator's stays as it is. 0, or -1 with errno.
 */
int render_dump(FILE *out, FILE *in, struct symbolizer *sym);

/* "outer;...;leaf value" lines, one per stack with a value; for a
 * difference "outer;...;leaf old new", the two-column form of
 * FlameGraph's difffolded.pl that flamegraph.pl draws as a differential
 * flame graph. */
int render_collapsed(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v);

/* What render_dot draws and leaves out; RENDER_DOT_OPTS is jeprof's
 * defaults (--nodefraction=0.005 --edgefraction=0.001 --nodecount=80,
 * and its maxdegree of 8). */
struct render_dot_opts {
	double nodefraction;  /* nodes of |cum| at most this x total go */
	double edgefraction;  /* edges of |value| at most this x total go */
	size_t nodecount;     /* at most this many nodes, heaviest first */
	size_t maxdegree;     /* at most this many edges into and out of a
	                         node (the first into it always stays) */
	const char *program;  /* the graph's name and the legend's first
	                         line; NULL: "heap profile" */
	const char *title;    /* "live heap", "heap growth"; NULL: a default */
	const char *fontname; /* every label's font; NULL: Graphviz's own */
	const char *note;     /* why it is empty or partial, the legend's
	                         last line and a comment; NULL: none */
};
#define RENDER_DOT_OPTS 0.005, 0.001, 80, 8, NULL, NULL, NULL, NULL

/* Graphviz dot of the call graph, as jeprof --dot: a box per function
 * (self and "of" cumulative, each with its share; the font grows with
 * self), an edge per caller -> callee labelled with what flowed through
 * it, nodes and edges under @p o's fractions left out, and a legend of
 * the totals and of what was dropped. A difference shows signed values,
 * growth red and shrinking blue. @p o NULL: RENDER_DOT_OPTS. 0, or -1
 * with errno. */
int render_dot(FILE *out, const struct heap_profile *hp, struct symbolizer *sym,
    enum render_value v, const struct render_dot_opts *o);

/* The call graph of render_dot as SVG, laid out by Graphviz's libgvc
 * (prof/gvc_load.c) where it can be loaded. Where it cannot (or refuses
 * the graph), an SVG of the dot text's lines under a dot comment saying
 * why, its root marked data-jm4lw="dot-text". 0, or -1 with errno. */
int render_callgraph(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v,
    const struct render_dot_opts *o);

#endif

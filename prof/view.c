/*
 * view — the table of views, and each renderer of prof/render*.c in the
 * table's one shape.
 */
#include <stdio.h>
#include <errno.h>
#include <string.h>

#include "frag.h"
#include "heapprof.h"
#include "render.h"
#include "render_pprof.h"
#include "render_svg.h"
#include "render_threads.h"
#include "symbolize.h"
#include "view.h"

#define TEXT "text/plain; charset=utf-8"
#define BINARY "application/octet-stream"
#define SVG "image/svg+xml"

/* "# note: ..." above a text view, when there is one. */
static void view_note_comment(FILE *out, const struct heap_profile *hp,
    const struct view_args *a)
{
	char note[512];

	if (view_sampling_note(hp, a, note, sizeof(note)) != NULL)
		fprintf(out, "# note: %s\n", note);
}

/* Under a table: its Total is a sampled estimate (beside the doctor's
 * exact figures), and how far off it may be. Below, so the table starts
 * with jeprof's Total line as jeprof's does. */
static void view_estimate_comment(FILE *out, const struct heap_profile *hp)
{
	char est[128];

	if (view_estimate_of(hp, est, sizeof(est)) != NULL)
		fprintf(out, "# Total: a %s\n", est);
}

/* What a renderer counts. */
static enum render_value view_value(const struct view_args *a)
{
	return a->objects ? RENDER_OBJECTS : RENDER_SPACE;
}

/* jeprof --text's table. */
static int view_text(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	view_note_comment(out, hp, a);
	if (render_text(out, hp, sym, view_value(a), a->limit, a->fold) == -1)
		return -1;
	view_estimate_comment(out, hp);
	return ferror(out) ? -1 : 0;
}

/* Collapsed stacks. */
static int view_collapsed(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	return render_collapsed(out, hp, sym, view_value(a));
}

/* A flame graph. */
static int view_svg(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	char note[512];

	return render_svg(out, hp, sym, view_value(a), a->title,
	    view_sampling_note(hp, a, note, sizeof(note)));
}

/* pprof's facts from the arguments, its default type @p dflt, with
 * thread labels or not (@p labels). */
static int view_pprof_as(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a, const char *dflt,
    int labels)
{
	char note[512];
	char name[VIEW_PROGRAM_MAX];
	struct pprof_opts o = {.default_type = dflt,
	    .note = view_sampling_note(hp, a, note, sizeof(note)),
	    .accum = a->accum,
	    .time_ns = a->time_ns,
	    .duration_ns = a->duration_ns,
	    .thread_labels = labels,
	    .main_file = a->process_path};

	if (a->process != NULL)
		o.program = view_program(hp, a, name, sizeof(name));

	return render_pprof(out, hp, sym, &o);
}

/* pprof: every value there is, inuse_space shown first (Go's /heap),
 * each sample labelled with its thread. */
static int view_pprof(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	return view_pprof_as(out, hp, sym, a, "inuse_space", 1);
}

/* pprof with alloc_space shown first (Go's /allocs): the same values. */
static int view_pprof_allocs(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	return view_pprof_as(out, hp, sym, a, "alloc_space", 0);
}

/* pprof as view_pprof, without thread labels: for fleet scrapers. */
static int view_pprof_heap(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	return view_pprof_as(out, hp, sym, a, "inuse_space", 0);
}

/* jeprof's symbolized profile, naming the main program: the one asked
 * for, else a symbolized file's own, else the first object the profile
 * maps from a path. */
static int view_symbolized(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	const char *binary = a->binary != NULL ? a->binary : hp->binary;
	size_t i;

	for (i = 0; binary == NULL && i < hp->nmaps; i++)
		if (hp->maps[i].path[0] == '/')
			binary = hp->maps[i].path;
	return render_symbolized(out, hp, sym, binary,
	    a->raw != NULL ? a->raw : "", a->rawlen);
}

const char *view_program(const struct heap_profile *hp,
    const struct view_args *a, char *buf, size_t len)
{
	const char *file = a->binary != NULL ? a->binary : hp->binary;
	size_t i;

	for (i = 0; file == NULL && i < hp->nmaps; i++)
		if (hp->maps[i].path[0] == '/')
			file = hp->maps[i].path;
	if (file == NULL || a->process == NULL || a->process[0] == '\0')
		return file;
	snprintf(buf, len, "%s (%s)", a->process, file);
	return buf;
}

/* The call graph's options: the profile's program as its name (in
 * @p buf), and why it is empty or partial (into @p note) as a line of its
 * legend. */
static struct render_dot_opts view_dot_opts(const struct heap_profile *hp,
    const struct view_args *a, char *buf, size_t len, char *note,
    size_t notelen)
{
	struct render_dot_opts o = {RENDER_DOT_OPTS};

	o.program = view_program(hp, a, buf, len);
	o.title = a->title;
	o.note = view_sampling_note(hp, a, note, notelen);
	return o;
}

/* jeprof --dot's call graph. */
static int view_dot(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	char note[512], name[VIEW_PROGRAM_MAX];
	struct render_dot_opts o =
	    view_dot_opts(hp, a, name, sizeof(name), note, sizeof(note));

	return render_dot(out, hp, sym, view_value(a), &o);
}

/* The same laid out as SVG by Graphviz, or its dot text saying why not. */
static int view_callgraph(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	char note[512], name[VIEW_PROGRAM_MAX];
	struct render_dot_opts o =
	    view_dot_opts(hp, a, name, sizeof(name), note, sizeof(note));

	/* Laid out without the text-layout plugin (see gvc_load.c), dot
	 * sizes labels from its own metrics, and a browser draws them in
	 * the fonts it has: in a monospace face the two agree (any one is
	 * about 0.6 em a character, as dot's Courier), where Times and the
	 * browser's serif do not and labels overran their boxes. */
	o.fontname = "Courier";
	return render_callgraph(out, hp, sym, view_value(a), &o);
}

/* The live heap by thread (render_threads.c). */
static int view_threads(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	view_note_comment(out, hp, a);
	if (render_threads(out, hp, sym, view_value(a), a->limit, a->fold) ==
	    -1)
		return -1;
	view_estimate_comment(out, hp);
	return ferror(out) ? -1 : 0;
}

/* Fragmentation by site in one of its forms (@p how: 0 text, 1 JSON, 2
 * collapsed), from the bin statistics read beside the dump. */
static int view_frag_as(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a, int how)
{
	struct frag_report r;
	int rv;

	if (a->frag == NULL) {
		errno = ENODATA; /* a kept dump has no statistics of its time */
		return -1;
	}
	if (frag_attribute(a->frag, hp, sym, a->fold, &r) == -1)
		return -1;
	rv = how == 0  ? frag_render_text(out, &r)
	    : how == 1 ? frag_render_json(out, &r)
	               : frag_render_flame(out, &r);
	frag_report_free(&r);
	return rv;
}

/* jmfr's text. */
static int view_frag(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	return view_frag_as(out, hp, sym, a, 0);
}

/* /jemalloc/fragmentation's JSON. */
static int view_frag_json(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	return view_frag_as(out, hp, sym, a, 1);
}

/* The waste as collapsed stacks, for a flame graph. */
static int view_frag_flame(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct view_args *a)
{
	return view_frag_as(out, hp, sym, a, 2);
}

/* jmtp's heading: the live heap, or its growth since the base. */
static void view_heading_top(FILE *out, const struct view_args *a,
    int have_base, const char *base)
{
	if (have_base)
		fprintf(out,
		    "# growth since %s, top %zu functions by bytes grown "
		    "(negative: shrank)\n",
		    base, a->limit);
	else
		fprintf(out, "# live heap, top %zu functions by bytes in use\n",
		    a->limit);
}

/* jmdf's: its growth; without a base the engine says why instead. */
static void view_heading_growth(FILE *out, const struct view_args *a,
    int have_base, const char *base)
{
	if (have_base)
		view_heading_top(out, a, have_base, base);
}

/* jmth's: the threads and the functions of each. */
static void view_heading_threads(FILE *out, const struct view_args *a,
    int have_base, const char *base)
{
	(void)have_base;
	(void)base;
	fprintf(out,
	    "# live heap by thread, biggest first: the top %zu threads, %d "
	    "functions each by bytes in use\n",
	    a->limit, THREADS_TOP);
}

const struct view views[DUMP_VIEW_COUNT] = {
    [DUMP_VIEW_COLLAPSED] = {.name = "collapsed",
        .ctype = TEXT,
        .word = "jmcs",
        .base = VIEW_BASE_MAY,
        .needs_samples = 1,
        .render = view_collapsed,
        .suffix = ".collapsed.txt"},
    /* The dump with each stack's allocator frames cut (render_dump). */
    [DUMP_VIEW_RAW] = {.name = "raw",
        .ctype = BINARY,
        .word = "jmtp",
        .carries_dump = 1,
        .suffix = ".heap"},
    [DUMP_VIEW_SVG] = {.name = "svg",
        .ctype = SVG,
        .word = "jmfg",
        .base = VIEW_BASE_MAY,
        .render = view_svg,
        .suffix = ".svg"},
    [DUMP_VIEW_PPROF] = {.name = "pprof",
        .ctype = BINARY,
        .word = "jmtp",
        .base = VIEW_BASE_MAY,
        .render = view_pprof,
        .suffix = ".pb.gz"},
    [DUMP_VIEW_TEXT] = {.name = "text",
        .ctype = TEXT,
        .word = "jmtp",
        .base = VIEW_BASE_MAY,
        .comments = 1,
        .render = view_text,
        .suffix = ".txt",
        .heading = view_heading_top},
    [DUMP_VIEW_SYMBOLIZED] = {.name = "symbolized",
        .ctype = TEXT,
        .word = "jmtp",
        .carries_dump = 1,
        .render = view_symbolized,
        .suffix = ".sym.heap"},
    [DUMP_VIEW_DIFF] = {.ctype = TEXT,
        .word = "jmdf",
        .keeps = 1,
        .base = VIEW_BASE_ALWAYS,
        .comments = 1,
        .render = view_text,
        .heading = view_heading_growth},
    /* No format name: /debug/pprof/allocs's row, where fleet scrapers
     * (Alloy, Parca) read allocations by default. */
    [DUMP_VIEW_PPROF_ALLOCS] = {.ctype = BINARY,
        .word = "jmtp",
        .base = VIEW_BASE_MAY,
        .render = view_pprof_allocs},
    /* The call graph, jeprof --dot's: for dot -Tsvg, or laid out here
     * by libgvc where the machine has it (render_callgraph). */
    [DUMP_VIEW_DOT] = {.name = "dot",
        .ctype = "text/vnd.graphviz; charset=utf-8",
        .word = "jmcg",
        .base = VIEW_BASE_MAY,
        .render = view_dot,
        .suffix = ".dot"},
    [DUMP_VIEW_CALLGRAPH] = {.name = "callgraph",
        .ctype = SVG,
        .word = "jmcg",
        .base = VIEW_BASE_MAY,
        .render = view_callgraph,
        .suffix = ".callgraph.svg"},
    /* Never with a base: heapprof_subtract leaves the threads' lines
     * as dumped. */
    [DUMP_VIEW_THREADS] = {.name = "threads",
        .ctype = TEXT,
        .word = "jmth",
        .comments = 1,
        .render = view_threads,
        .suffix = ".threads.txt",
        .one_process = 1,
        .heading = view_heading_threads},
    /* No format name: /debug/pprof/heap's row, pprof without thread
     * labels, which fleet scrapers (Alloy, Parca) would store as one
     * series per thread (README, "Threads"). */
    [DUMP_VIEW_PPROF_HEAP] = {.ctype = BINARY,
        .word = "jmtp",
        .base = VIEW_BASE_MAY,
        .render = view_pprof_heap},
    /* No format names: /jemalloc/fragmentation picks them (the bins
     * are read beside a fresh dump, never a kept one's). */
    [DUMP_VIEW_FRAG] = {.ctype = TEXT, .word = "jmfr", .render = view_frag},
    [DUMP_VIEW_FRAG_JSON] = {.ctype = "application/json",
        .word = "jmfr",
        .render = view_frag_json},
    [DUMP_VIEW_FRAG_FLAME] = {.ctype = TEXT,
        .word = "jmfr",
        .render = view_frag_flame},
};

/* The row whose format name is @p name. */
int view_by_name(const char *name)
{
	int v;

	for (v = 0; v < DUMP_VIEW_COUNT; v++)
		if (views[v].name != NULL && strcmp(views[v].name, name) == 0)
			return v;
	return -1;
}

/* Does view_join list view @p v? */
static int view_taken(int v, int (*pick)(int v))
{
	return views[v].name != NULL && (pick == NULL || pick(v));
}

/* The names, @p first's first, joined as a sentence or a path's list. */
const char *view_join(char *buf, size_t len, int (*pick)(int v), int first,
    const char *sep, const char *last)
{
	int order[DUMP_VIEW_COUNT], n = 0, i, v;
	size_t used = 0;

	if (first >= 0 && first < DUMP_VIEW_COUNT && view_taken(first, pick))
		order[n++] = first;
	for (v = 0; v < DUMP_VIEW_COUNT; v++)
		if (v != first && view_taken(v, pick))
			order[n++] = v;
	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    i == 0           ? ""
		        : i == n - 1 ? last
		                     : sep,
		    views[order[i]].name);
	return buf;
}

/* Is view @p v drawn from a parsed profile? */
static int view_rendered(int v)
{
	return views[v].render != NULL;
}

/* The format names, in the table's order, for a usage or error line. */
const char *view_names(char *buf, size_t len, int with_render)
{
	return view_join(buf, len, with_render ? view_rendered : NULL, -1, ", ",
	    " or ");
}

/* A merge has no one dump to carry, and sums processes. */
int view_merges(int v)
{
	return views[v].render != NULL && !views[v].carries_dump &&
	    !views[v].one_process;
}

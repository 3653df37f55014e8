/*
 * The call graph in Graphviz's dot language, laid out as jeprof --dot
 * (PrintDot) has it: one box per function, its self value and share and
 * "of" its cumulative value and share, the font growing with self; an
 * edge caller -> callee per call seen in the stacks, labelled with what
 * flowed through it and drawn wider the more that was; nodes and edges
 * under a fraction of the total dropped, at most a number of nodes, and
 * a legend saying what was shown and what was dropped.
 *
 * Counting, as render_text.c counts: a stack's value is its unsampled
 * bytes or objects; a function's self is what it holds as the leaf of
 * the stack's view (render_view_stack: inline chains expanded, the
 * allocator cut), its cumulative what every stack it appears in holds,
 * once per stack however often it recurses. An edge too counts once per
 * stack. A difference (hp->diff) draws growth: values carry their sign,
 * growth is filled red and shrinking blue, and fractions are of what
 * changed either way (the net change may be near nothing while much
 * moved).
 *
 * Names reach dot as quoted strings: quotes and backslashes escaped,
 * bytes that are not UTF-8 or are control characters replaced, so a
 * C++ name's <>, quotes and a hostile object's bytes are text, never
 * syntax.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "render.h"
#include "view.h"

/* One function of the graph. */
struct dot_fn {
	const char *name; /* the symbolizer's: lives until sym_free */
	double flat, cum;
	size_t seen; /* the last stack counted in cum, + 1 */
	size_t id;   /* its node's number when shown, else 0 */
};

/* One edge, caller -> callee, by index into the functions. */
struct dot_edge {
	size_t from, to;
	double w;
	size_t seen; /* the last stack counted in w, + 1 */
	int keep;    /* drawn */
};

struct dot_graph {
	struct dot_fn *fn;
	size_t nfn, capfn;
	struct hmap fix; /* hash of a name -> index in fn */
	struct dot_edge *e;
	size_t ne, cape;
	struct hmap eix; /* hash of (from, to) -> index in e */
};

/* What dot_fn_get and dot_edge_get look for. */
struct dot_key {
	const struct dot_graph *g;
	const char *name;
	size_t from, to;
};

/* Is function @p i the one named in @p arg? */
static int dot_fn_eq(const void *arg, uint64_t i)
{
	const struct dot_key *k = arg;

	return strcmp(k->g->fn[i].name, k->name) == 0;
}

/* Is edge @p i the one of @p arg's pair? */
static int dot_edge_eq(const void *arg, uint64_t i)
{
	const struct dot_key *k = arg;

	return k->g->e[i].from == k->from && k->g->e[i].to == k->to;
}

/* The index of function @p name, made if new; -1 if memory runs out. */
static long dot_fn_get(struct dot_graph *g, const char *name)
{
	struct dot_key k = {.g = g, .name = name};
	uint64_t *i;
	int added;

	if (hp_grow((void **)&g->fn, &g->capfn, g->nfn + 1, sizeof(*g->fn)) ==
	        -1 ||
	    (i = hmap_add(&g->fix, hash_str(name), dot_fn_eq, &k, &added)) ==
	        NULL)
		return -1;
	if (added) {
		*i = g->nfn;
		memset(&g->fn[g->nfn], 0, sizeof(*g->fn));
		g->fn[g->nfn++].name = name;
	}
	return (long)*i;
}

/* The edge @p from -> @p to, made if new; NULL if memory runs out. */
static struct dot_edge *dot_edge_get(struct dot_graph *g, size_t from,
    size_t to)
{
	struct dot_key k = {.g = g, .from = from, .to = to};
	uint64_t *i;
	int added;

	if (hp_grow((void **)&g->e, &g->cape, g->ne + 1, sizeof(*g->e)) == -1 ||
	    (i = hmap_add(&g->eix, hash_int(((uint64_t)from << 32) ^ to),
	         dot_edge_eq, &k, &added)) == NULL)
		return NULL;
	if (added) {
		*i = g->ne;
		memset(&g->e[g->ne], 0, sizeof(*g->e));
		g->e[g->ne].from = from;
		g->e[g->ne++].to = to;
	}
	return &g->e[*i];
}

/* Largest |cum| first, then by name (jeprof's order): a stable order. */
static int dot_fn_cmp(const void *a, const void *b)
{
	const struct dot_fn *x = a, *y = b;

	if (fabs(x->cum) != fabs(y->cum))
		return fabs(x->cum) < fabs(y->cum) ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Heaviest edge first, then by the nodes' numbers: a stable order. */
static int dot_edge_cmp(const void *a, const void *b)
{
	const struct dot_edge *x = a, *y = b;

	if (fabs(x->w) != fabs(y->w))
		return fabs(x->w) < fabs(y->w) ? 1 : -1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* A value as the labels show it: bytes through the one byte formatter,
 * objects whole; a difference's with its sign. x is clamped first, so
 * the cast is defined. */
static const char *dot_value(char *buf, size_t len, double x,
    enum render_value v, int diff)
{
	x = render_clamp(x);
	if (v == RENDER_SPACE)
		return fmt_bytes_as(buf, len, x, diff ? BYTES_SIGN : 0);
	/* Truncated, as render_text's (jeprof's int()): the two agree. */
	snprintf(buf, len, "%s%lld", diff && x >= 1 ? "+" : "", (long long)x);
	return buf;
}

/* "12.3%" of @p total (0 when there is none). */
static const char *dot_pct(char *buf, size_t len, double x, double total)
{
	snprintf(buf, len, "%.1f%%",
	    total != 0 ? render_clamp(x * 100 / total) : 0.0);
	return buf;
}

/* The longest name a label (DOT_LABEL_MAX) or a tooltip (DOT_TIP_MAX)
 * carries, in bytes of dot text: Graphviz refuses a quoted string past
 * 16384 bytes ("longer than 16384?"), and C++ template names reach
 * that. A longer one is cut, whole characters and escapes only, and
 * ends with an ellipsis. */
#define DOT_LABEL_MAX 1024
#define DOT_TIP_MAX 8192

/* One character of @p s (at @p i, @p n bytes in all) as dot text, into
 * @p buf (room for 8): its length there; the bytes it takes in *@p len.
 * @p depth counts the <> and () it is inside, for dot_str's lines. */
static size_t dot_char(const unsigned char *p, size_t n, size_t i, int lines,
    int *depth, char *buf, size_t *len)
{
	long cp;

	*len = render_utf8(p + i, n - i, &cp);
	if (cp == -1)
		return buf[0] = '?', 1;
	if (*len > 1)
		return memcpy(buf, p + i, *len), *len;
	if (p[i] == '"' || p[i] == '\\')
		return buf[0] = '\\', buf[1] = (char)p[i], 2;
	if (p[i] < 0x20 || p[i] == 0x7f)
		return buf[0] = '?', 1;
	if (lines && *depth == 0 && p[i] == ':' && i + 1 < n &&
	    p[i + 1] == ':' && i > 0) {
		*len = 2;
		return memcpy(buf, "::\\n", 4), 4;
	}
	if (p[i] == '<' || p[i] == '(')
		(*depth)++;
	else if ((p[i] == '>' || p[i] == ')') && *depth > 0)
		(*depth)--;
	return buf[0] = (char)p[i], 1;
}

/*
 * @p s inside a dot quoted string: '"' and '\' escaped (dot reads
 * "\\" as one backslash, and a lone one would start one of its label
 * escapes, \N, \G, \l...), control characters and bytes that are not
 * UTF-8 as '?'. With @p lines, a "::" outside <> and () starts a new
 * line, as jeprof breaks C++ names (it breaks at every one, templates'
 * arguments too; here a name's own scopes only). At most @p max bytes
 * of dot text: a longer one is cut between characters, with "…".
 */
static void dot_str(FILE *out, const char *s, int lines, size_t max)
{
	static const char ell[] = "\xe2\x80\xa6"; /* U+2026, … */
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i, len, k, total = 0;
	int depth = 0;
	char buf[8];

	for (i = 0; i < n && total <= max; i += len)
		total += dot_char(p, n, i, lines, &depth, buf, &len);
	if (total > max) /* room for the ellipsis */
		max = max > sizeof(ell) - 1 ? max - (sizeof(ell) - 1) : 0;
	depth = 0;
	for (i = 0, total = 0; i < n; i += len) {
		k = dot_char(p, n, i, lines, &depth, buf, &len);
		if (total + k > max) {
			fputs(ell, out);
			return;
		}
		fwrite(buf, 1, k, out);
		total += k;
	}
}

/* The graph of @p hp: every function and edge, summed. */
static int dot_build(struct dot_graph *g, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v, double *total, double *moved)
{
	struct render_view vw = {0};
	struct dot_edge *e;
	size_t k, i, *ids = NULL, capids = 0;
	double x;
	long f;
	int rv = -1;

	*total = *moved = 0;
	for (k = 0; k < hp->nstacks; k++) {
		if (render_view_stack(&vw, &hp->stacks[k], sym) == -1)
			goto out;
		x = render_value_of(&hp->stacks[k], v);
		*total += x;
		*moved += fabs(x);
		if (vw.n == 0 || x == 0)
			continue;
		if (hp_grow((void **)&ids, &capids, vw.n, sizeof(*ids)) == -1)
			goto out;
		for (i = 0; i < vw.n; i++) {
			if ((f = dot_fn_get(g, vw.f[i].f.func)) == -1)
				goto out;
			ids[i] = (size_t)f;
			if (i == 0)
				g->fn[f].flat += x;
			if (g->fn[f].seen != k + 1) { /* once per stack */
				g->fn[f].cum += x;
				g->fn[f].seen = k + 1;
			}
		}
		/* Caller (outer, i + 1) -> callee (i), once per stack. */
		for (i = 0; i + 1 < vw.n; i++) {
			if ((e = dot_edge_get(g, ids[i + 1], ids[i])) == NULL)
				goto out;
			if (e->seen != k + 1) {
				e->w += x;
				e->seen = k + 1;
			}
		}
	}
	rv = 0;
out:
	free(ids);
	render_view_free(&vw);
	return rv;
}

/* The legend's box: what, how much, what was left out. */
static void dot_legend(FILE *out, const struct heap_profile *hp,
    enum render_value v, const struct render_dot_opts *o, double total,
    double moved, double shown, size_t nshown, size_t nfn, size_t dropped_nodes,
    double dropped_cum, size_t dropped_edges, double dropped_w)
{
	double scale = hp->diff ? moved : total;
	char a[32], b[32], c[64];

	fputs("Legend [shape=box,fontsize=24,shape=plaintext,label=\"", out);
	if (o->program != NULL) {
		dot_str(out, o->program, 0, DOT_LABEL_MAX);
		fputs("\\l", out);
	}
	dot_str(out, o->title != NULL ? o->title : "heap profile", 0,
	    DOT_LABEL_MAX);
	fprintf(out, ", %s\\l",
	    v == RENDER_OBJECTS ? "objects in use" : "bytes in use");
	if (hp->diff)
		fprintf(out, "Change: %s net, %s changed in all\\l",
		    dot_value(a, sizeof(a), total, v, 1),
		    dot_value(b, sizeof(b), moved, v, 0));
	else
		fprintf(out, "Total: %s\\l",
		    dot_value(a, sizeof(a), total, v, 0));
	/* Beside the doctor's exact figures, a sampled total says so. */
	if (view_estimate_of(hp, c, sizeof(c)) != NULL)
		fprintf(out, "A %s\\l", c);
	if (nshown == 0) {
		fputs("No nodes to show\\l", out);
	} else {
		fprintf(out, "Showing nodes accounting for %s, %s of %s %s\\l",
		    dot_value(a, sizeof(a), shown, v, hp->diff),
		    dot_pct(b, sizeof(b), shown, scale),
		    dot_value(c, sizeof(c), scale, v, 0),
		    hp->diff ? "changed" : "total");
		if (nshown < nfn && nshown == o->nodecount)
			fprintf(out, "Showing top %zu nodes out of %zu\\l",
			    nshown, nfn);
	}
	if (dropped_nodes > 0)
		fprintf(out, "Dropped %zu nodes (cum <= %s)\\l", dropped_nodes,
		    dot_value(a, sizeof(a), dropped_cum, v, 0));
	if (dropped_edges > 0)
		fprintf(out, "Dropped %zu edges (freq <= %s)\\l", dropped_edges,
		    dot_value(a, sizeof(a), dropped_w, v, 0));
	if (o->note != NULL) { /* why it is empty or partial */
		fputs("Note: ", out);
		dot_str(out, o->note, 0, DOT_LABEL_MAX);
		fputs("\\l", out);
	}
	fputs("\"];\n", out);
}

/* One node: the name (broken at its scopes), self and share, "of" the
 * cumulative and share where they differ; font by self, as jeprof's
 * 8 + 50 * sqrt(self / total). */
static void dot_node(FILE *out, const struct dot_fn *f, enum render_value v,
    int diff, double scale)
{
	char a[32], b[32];
	double fs = 8;

	if (scale > 0)
		fs = 8 + 50.0 * sqrt(fmin(1, fabs(f->flat) / scale));
	fprintf(out, "N%zu [label=\"", f->id);
	dot_str(out, f->name, 1, DOT_LABEL_MAX);
	fprintf(out, "\\n%s (%s)\\r", dot_value(a, sizeof(a), f->flat, v, diff),
	    dot_pct(b, sizeof(b), f->flat, scale));
	if (f->flat != f->cum)
		fprintf(out, "of %s (%s)\\r",
		    dot_value(a, sizeof(a), f->cum, v, diff),
		    dot_pct(b, sizeof(b), f->cum, scale));
	fprintf(out, "\",shape=box,fontsize=%.1f,tooltip=\"", fs);
	dot_str(out, f->name, 0, DOT_TIP_MAX);
	fputc('"', out);
	if (diff && f->cum != 0)
		fprintf(out, ",style=filled,fillcolor=\"%s\"",
		    f->cum > 0 ? "#f8c8c0" : "#c8d8f8");
	fputs("];\n", out);
}

/* One edge: what flowed, the width by its share (jeprof's 3 x share,
 * up to all of it, here 1 to 5 points: below 1 SVG draws poorly), the
 * layout's weight a squashed function of it (jeprof's |n|^0.7, capped:
 * dot misbehaves on huge weights); an inlined callee's edge dashed. */
static void dot_edge_out(FILE *out, const struct dot_graph *g,
    const struct dot_edge *e, enum render_value v, int diff, double scale)
{
	double share = scale > 0 ? fmin(1, 3 * fabs(e->w) / scale) : 0;
	double weight = fmin(pow(fabs(e->w), 0.7), 100000);
	char a[32];

	fprintf(out, "N%zu -> N%zu [label=\"%s\",weight=%d,penwidth=%.2f",
	    g->fn[e->from].id, g->fn[e->to].id,
	    dot_value(a, sizeof(a), e->w, v, diff), (int)weight, 1 + 4 * share);
	if (strstr(g->fn[e->to].name, "(inline)") != NULL)
		fputs(",style=dashed", out);
	if (diff && e->w != 0)
		fprintf(out, ",color=\"%s\"", e->w > 0 ? "#c03020" : "#2050c0");
	fputs("];\n", out);
}

/* Graphviz dot of the call graph (see render.h). */
int render_dot(FILE *out, const struct heap_profile *hp, struct symbolizer *sym,
    enum render_value v, const struct render_dot_opts *opts)
{
	struct render_dot_opts o = {RENDER_DOT_OPTS};
	struct dot_graph g = {0};
	size_t *indeg = NULL, *outdeg = NULL, nshown = 0, dropped_nodes = 0,
	       dropped_edges = 0, i, *remap = NULL;
	double total, moved, scale, nodelimit, edgelimit,
	    shown = 0, dropped_cum = 0, dropped_w = 0;
	int rv = -1;

	if (opts != NULL)
		o = *opts;
	if (dot_build(&g, hp, sym, v, &total, &moved) == -1)
		goto out;
	scale = hp->diff ? moved : total;
	nodelimit = o.nodefraction * fabs(scale);
	edgelimit = o.edgefraction * fabs(scale);
	/* The nodes: heaviest first, the first nodecount over the limit.
	 * Sorting moves the functions: the edges find theirs through
	 * remap (old index -> new). */
	if ((remap = calloc(g.nfn + 1, sizeof(*remap))) == NULL)
		goto out;
	for (i = 0; i < g.nfn; i++)
		g.fn[i].seen = i; /* the index before sorting */
	if (g.nfn > 0)
		qsort(g.fn, g.nfn, sizeof(*g.fn), dot_fn_cmp);
	for (i = 0; i < g.nfn; i++) {
		remap[g.fn[i].seen] = i;
		if (nshown < o.nodecount && fabs(g.fn[i].cum) > nodelimit) {
			g.fn[i].id = ++nshown;
			shown += g.fn[i].flat;
		} else {
			g.fn[i].id = 0;
			dropped_nodes++;
			dropped_cum = fmax(dropped_cum, fabs(g.fn[i].cum));
		}
	}
	for (i = 0; i < g.ne; i++) {
		g.e[i].from = remap[g.e[i].from];
		g.e[i].to = remap[g.e[i].to];
	}
	/* The edges, heaviest first, as jeprof keeps them: always the
	 * first into a node (it stays reachable), then none at or under
	 * the edge limit nor past maxdegree in or out of a node. */
	if ((indeg = calloc(g.nfn + 1, sizeof(*indeg))) == NULL ||
	    (outdeg = calloc(g.nfn + 1, sizeof(*outdeg))) == NULL)
		goto out;
	if (g.ne > 0)
		qsort(g.e, g.ne, sizeof(*g.e), dot_edge_cmp);
	for (i = 0; i < g.ne; i++) {
		if (g.fn[g.e[i].from].id == 0 || g.fn[g.e[i].to].id == 0)
			continue; /* an end was dropped: counted with it */
		g.e[i].keep = indeg[g.e[i].to] == 0 ||
		    (fabs(g.e[i].w) > edgelimit &&
		        outdeg[g.e[i].from] < o.maxdegree &&
		        indeg[g.e[i].to] < o.maxdegree);
		if (!g.e[i].keep) {
			dropped_edges++;
			dropped_w = fmax(dropped_w, fabs(g.e[i].w));
			continue;
		}
		indeg[g.e[i].to]++;
		outdeg[g.e[i].from]++;
	}
	fputs("digraph \"", out);
	dot_str(out, o.program != NULL ? o.program : "heap profile", 0,
	    DOT_LABEL_MAX);
	fputs("\" {\n", out);
	if (o.note != NULL) { /* for a reader of the text, too */
		fputs("/* note: ", out);
		for (i = 0; o.note[i] != '\0'; i++) /* no early end */
			fputc(o.note[i] == '*' && o.note[i + 1] == '/'
			        ? '-'
			        : o.note[i],
			    out);
		fputs(" */\n", out);
	}
	fputs("node [width=0.375,height=0.25];\n", out);
	if (o.fontname != NULL) {
		fputs("node [fontname=\"", out);
		dot_str(out, o.fontname, 0, DOT_LABEL_MAX);
		fputs("\"];\nedge [fontname=\"", out);
		dot_str(out, o.fontname, 0, DOT_LABEL_MAX);
		fputs("\"];\n", out);
	}
	dot_legend(out, hp, v, &o, total, moved, shown, nshown, g.nfn,
	    dropped_nodes, dropped_cum, dropped_edges, dropped_w);
	for (i = 0; i < nshown; i++)
		dot_node(out, &g.fn[i], v, hp->diff, fabs(scale));
	for (i = 0; i < g.ne; i++)
		if (g.e[i].keep)
			dot_edge_out(out, &g, &g.e[i], v, hp->diff,
			    fabs(scale));
	fputs("}\n", out);
	rv = ferror(out) ? -1 : 0;
out:
	if (rv == -1 && errno == 0)
		errno = ENOMEM;
	free(remap);
	free(indeg);
	free(outdeg);
	free(g.fn);
	free(g.e);
	hmap_free(&g.fix);
	hmap_free(&g.eix);
	return rv;
}

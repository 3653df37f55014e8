/*
 * The SVG flame graph. Every stack's view (render_view_stack) is merged
 * into one tree from the root ("all") out: a node per distinct path,
 * children found through one hash table keyed by (parent, name), so a
 * profile of 10^5 stacks and 10^6 frames is one pass. The tree is then
 * written depth first with each node's children sorted by name, so the
 * same profile always gives the same file.
 *
 * Frames narrower than MIN_PX are left out, as flamegraph.pl's minwidth
 * does: their parents keep their full width, so totals stay right, and
 * the file stays bounded (at most ~(WIDTH / MIN_PX) frames a level).
 *
 * Deep stacks: a stack's view longer than DEPTH_MAX frames is drawn
 * with its DEPTH_OUTER outermost frames, one "[N more frames]" frame for
 * the middle, and its innermost frames up to DEPTH_MAX levels in all.
 * jemalloc keeps at most 128 addresses a stack (PROF_BT_MAX), a few
 * hundred frames with their inline chains, so a real profile is drawn
 * whole; a longer one is a forged or damaged file (a planted dump of
 * 100,000 frames made a 1.6-million-pixel-high, 30 MB graph that no
 * browser shows). The middle goes, not the end: a heap profile is read
 * at both ends, where the thread started and what allocated. The other
 * formats are data, not drawings, and keep every frame. The tree is
 * written without recursion (an explicit stack on the heap), whatever
 * its depth.
 *
 * A difference (hp->diff): each stack is drawn as wide as the larger of
 * its size before and after, and coloured by its change. Gregg's
 * differential flame graphs draw the new size only, where a stack that
 * was freed entirely has no width and its shrink cannot be seen; a width
 * of |change| would hide what the change is relative to. max(before,
 * after) keeps both the leak (wide and red) and what was released (wide
 * and blue) on screen, and still shows unchanged memory in grey for
 * scale. The SVG's legend says so.
 *
 * The SVG has its style and script inline and names no other host or
 * file; without script it still shows every name that fits and a
 * <title> tooltip on each frame. The script adds a details line on
 * hover, zoom on click, and search (Ctrl-F or the Search button; a
 * regular expression, or plain text when it is not one), and reads
 * ?s=TERM and ?z=NAME from the URL (search, zoom) so a page can link to
 * a view and a test can drive it headless.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "render_svg.h"
#include "view.h"

#define WIDTH 1200  /* px */
#define XPAD 10     /* px either side */
#define TOP 72      /* title, subtitle, legend */
#define BOTTOM 34   /* the details line */
#define NOTE_H 20   /* the note's line under the legend, when there is one */
#define FRAME_H 16  /* px a level */
#define CHAR_PX 7.3 /* a 12 px monospace character, with a margin */
#define MIN_PX 0.1  /* narrower frames are left out */
#define TEXT_MIN 3  /* characters a frame must fit to show its name */
#define NO_NODE SIZE_MAX
#define DEPTH_MAX 1024  /* levels a stack is drawn with, at most */
#define DEPTH_OUTER 512 /* of which its outermost frames */

/* One frame of the merged tree: a distinct path from the root. */
struct svg_node {
	const char *name;   /* the symbolizer's: lives until sym_free */
	size_t parent;      /* NO_NODE for the root */
	size_t depth;       /* 0 for the root */
	double w;           /* what sets its width */
	double old, now;    /* a difference's before and after */
	size_t kids, nkids; /* its children, sorted, in svg_tree.kid */
};

/* The tree, and a hash table of (parent, name) -> node index. */
struct svg_tree {
	struct svg_node *n;
	size_t len, cap;
	struct hmap ix;        /* the root is no one's child: not in it */
	struct svg_node **kid; /* every non-root node by (parent, name) */
	char **folds;          /* "[N more frames]" names, one per N */
	size_t nfolds, cap_folds;
	struct hmap fold_ix; /* N -> its index in folds */
};

/* What writing needs beyond the tree. */
struct svg_out {
	FILE *out;
	const struct svg_tree *t;
	enum render_value v;
	int diff;
	double scale;     /* px per unit of w */
	double minw;      /* narrower than this (in units of w) is left out */
	double maxd;      /* the largest |change| drawn, for colour intensity */
	size_t bottom;    /* y of the root's bottom edge */
	const char *note; /* why it is empty or partial, or NULL */
	const char *estimate; /* "sampled estimate, ±N% at 95%", or NULL */
};

/* What tree_child looks for. */
struct svg_key {
	const struct svg_tree *t;
	size_t parent;
	const char *name;
};

/* Is node @p i the child @p arg names? */
static int key_eq(const void *arg, uint64_t i)
{
	const struct svg_key *k = arg;
	const struct svg_node *c = &k->t->n[i];

	return c->parent == k->parent && strcmp(c->name, k->name) == 0;
}

/* The child @p name of node @p parent, made if new: its index, or NO_NODE
 * if memory runs out. */
static size_t tree_child(struct svg_tree *t, size_t parent, const char *name)
{
	struct svg_key k = {t, parent, name};
	struct svg_node *c;
	uint64_t *i;
	int added;

	if (hp_grow((void **)&t->n, &t->cap, t->len + 1, sizeof(*t->n)) == -1 ||
	    (i = hmap_add(&t->ix, hash_str(name) ^ hash_int(parent), key_eq, &k,
	         &added)) == NULL)
		return NO_NODE;
	if (!added)
		return *i;
	c = &t->n[t->len];
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->parent = parent;
	c->depth = t->n[parent].depth + 1;
	*i = t->len++;
	return t->len - 1;
}

/* The name "[@p n more frames]", made once per @p n and kept with the
 * tree; NULL if memory runs out. */
static const char *tree_fold_name(struct svg_tree *t, size_t n)
{
	char buf[64];
	uint64_t *i;
	int added;

	if ((i = hmap_put(&t->fold_ix, n, &added)) == NULL)
		return NULL;
	if (!added)
		return t->folds[*i];
	snprintf(buf, sizeof(buf), "[%zu more frames]", n);
	if (hp_grow((void **)&t->folds, &t->cap_folds, t->nfolds + 1,
	        sizeof(*t->folds)) == -1 ||
	    (t->folds[t->nfolds] = strdup(buf)) == NULL)
		return NULL; /* the render fails: the half entry goes too */
	*i = t->nfolds;
	return t->folds[t->nfolds++];
}

/* Add one stack (@p vw, leaf first) from the root out, its middle
 * folded past DEPTH_MAX frames (see the top of the file). 0, or -1. */
static int tree_add(struct svg_tree *t, const struct render_view *vw, double w,
    double old, double now)
{
	size_t at = 0, i, fold = 0, fold_lo = 0;
	const char *name;

	/* Frames [fold_lo, fold_lo + fold) from the leaf go into one. */
	if (vw->n > DEPTH_MAX) {
		fold = vw->n - (DEPTH_MAX - 1);
		fold_lo = vw->n - DEPTH_OUTER - fold;
	}
	t->n[0].w += w;
	t->n[0].old += old;
	t->n[0].now += now;
	for (i = vw->n; i-- > 0;) {
		name = vw->f[i].f.func;
		if (fold > 0 && i == fold_lo + fold - 1) {
			if ((name = tree_fold_name(t, fold)) == NULL)
				return -1;
			i = fold_lo; /* the loop goes on below the fold */
		}
		if ((at = tree_child(t, at, name)) == NO_NODE)
			return -1;
		t->n[at].w += w;
		t->n[at].old += old;
		t->n[at].now += now;
	}
	return 0;
}

/* Siblings together, by name: the order frames are drawn in. */
static int kid_cmp(const void *a, const void *b)
{
	const struct svg_node *x = *(const struct svg_node *const *)a;
	const struct svg_node *y = *(const struct svg_node *const *)b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sort every node's children by name, once: O(n log n). 0, or -1. */
static int tree_sort(struct svg_tree *t)
{
	size_t i, p;

	if (t->len < 2)
		return 0;
	if ((t->kid = malloc((t->len - 1) * sizeof(*t->kid))) == NULL)
		return -1;
	for (i = 1; i < t->len; i++)
		t->kid[i - 1] = &t->n[i];
	qsort(t->kid, t->len - 1, sizeof(*t->kid), kid_cmp);
	for (i = 0; i < t->len - 1; i++) {
		p = t->kid[i]->parent;
		if (t->n[p].nkids++ == 0)
			t->n[p].kids = i;
	}
	return 0;
}

/* Write @p s as XML text, at most @p max characters (render_xml). */
static void put_xml(FILE *out, const char *s, size_t max)
{
	render_xml(out, s, strlen(s), max);
}

/* @p x in people's units: "12.3 MiB (12897484 bytes)", or "1234 objects";
 * with a sign when @p sign. The size is lib's formatter's, stopping at
 * TiB as the script's own units do. */
static void put_amount(FILE *out, double x, enum render_value v, int sign)
{
	long long n = render_round(x);
	const char *s = sign && n > 0 ? "+" : "";
	char size[48];

	if (v == RENDER_OBJECTS) {
		fprintf(out, "%s%lld objects", s, n);
		return;
	}
	fputs(fmt_bytes_as(size, sizeof(size), (double)n,
	          (sign ? BYTES_SIGN : 0) | BYTES_UPTO_TIB),
	    out);
	if (n <= -1024 || n >= 1024)
		fprintf(out, " (%s%lld bytes)", s, n);
}

/* "12.34%" of @p total. */
static double pct(double x, double total)
{
	return total != 0 ? x * 100 / total : 0;
}

/* The fill of node @p n: by name for a profile (greens, as memory flame
 * graphs are drawn, the same function the same shade), by change for a
 * difference. */
static void put_fill(const struct svg_out *o, const struct svg_node *n)
{
	unsigned long h = 5381;
	const char *s;
	double r;
	int c;

	if (!o->diff) {
		for (s = n->name; *s != '\0'; s++)
			h = h * 33 + (unsigned char)*s;
		fprintf(o->out, "rgb(%d,%d,%d)", 70 + (int)(h % 80),
		    190 + (int)(h / 80 % 50), 90 + (int)(h / 4000 % 90));
		return;
	}
	r = o->maxd > 0 ? (n->now - n->old) / o->maxd : 0;
	if (!(fabs(r) <= 1)) /* NaN, or a sum that saturated */
		r = isnan(r) ? 0 : copysign(1, r);
	c = 220 - (int)lround(200 * fabs(r));
	if (fabs(r) < 0.005) /* ~0: neutral */
		fputs("rgb(228,228,228)", o->out);
	else if (r > 0)
		fprintf(o->out, "rgb(255,%d,%d)", c, c);
	else
		fprintf(o->out, "rgb(%d,%d,255)", c, c);
}

/* How many characters of a name fit @p px: 0 when fewer than TEXT_MIN
 * would. The script's fit() has the same rule. */
static size_t fit_chars(double px)
{
	double n = floor((px - 6) / CHAR_PX);

	/* Not n < TEXT_MIN: a NaN must not reach the cast. */
	return n >= TEXT_MIN && n <= WIDTH ? (size_t)n : 0;
}

/* The tooltip of @p n: its whole name, then its size and share. */
static void put_title(const struct svg_out *o, const struct svg_node *n)
{
	const struct svg_node *root = &o->t->n[0];
	double d = n->now - n->old;

	put_xml(o->out, n->name, SIZE_MAX);
	fputc('\n', o->out);
	if (!o->diff) {
		put_amount(o->out, n->w, o->v, 0);
		fprintf(o->out, ", %.2f%% of all", pct(n->w, root->w));
		return;
	}
	fputs(llround(d) > 0     ? "grew "
	        : llround(d) < 0 ? "shrank "
	                         : "unchanged ",
	    o->out);
	put_amount(o->out, d, o->v, 1);
	fputs(": from ", o->out);
	put_amount(o->out, n->old, o->v, 0);
	fputs(" to ", o->out);
	put_amount(o->out, n->now, o->v, 0);
	fprintf(o->out, ", %.2f%% of all now", pct(n->now, root->now));
}

/* One frame: a group of its tooltip, its box and as much of its name as
 * fits (the script finds the whole name in the tooltip). */
static void put_frame(const struct svg_out *o, const struct svg_node *n,
    double x)
{
	double px = XPAD + x * o->scale, pw = n->w * o->scale;
	size_t y = o->bottom - (n->depth + 1) * FRAME_H;

	if (n->parent == NO_NODE) /* the root spans the graph, even empty */
		pw = WIDTH - 2 * XPAD;
	fputs("<g class=\"f\"><title>", o->out);
	put_title(o, n);
	fprintf(o->out,
	    "</title><rect x=\"%.2f\" y=\"%zu\" width=\"%.2f\" "
	    "height=\"%d\" fill=\"",
	    px, y, pw, FRAME_H - 1);
	put_fill(o, n);
	fprintf(o->out, "\"/><text x=\"%.2f\" y=\"%zu\">", px + 3, y + 12);
	put_xml(o->out, n->name, fit_chars(pw));
	fputs("</text></g>\n", o->out);
}

/* Every frame from the root, depth first, children by name, each at
 * its x (in units of w). A child too narrow to draw still takes its
 * room. Iterative: the frames still to write wait on a stack of our own,
 * so no depth of tree can exhaust the thread's. 0, or -1. */
static int emit(const struct svg_out *o)
{
	struct todo {
		const struct svg_node *n;
		double x;
	} *stack = NULL;
	const struct svg_node *n, *k;
	size_t depth = 0, cap = 0, i, nk;
	double x;

	if (hp_grow((void **)&stack, &cap, 1, sizeof(*stack)) == -1)
		return -1;
	stack[depth].n = &o->t->n[0];
	stack[depth++].x = 0;
	while (depth > 0) {
		n = stack[--depth].n;
		x = stack[depth].x;
		if (n->parent != NO_NODE && (n->w < o->minw || n->w <= 0))
			continue;
		put_frame(o, n, x);
		if ((nk = n->nkids) == 0)
			continue;
		if (hp_grow((void **)&stack, &cap, depth + nk,
		        sizeof(*stack)) == -1) {
			free(stack);
			return -1;
		}
		/* The first child on top; x summed in the order the
		 * recursion it replaces summed it, to the same bits. */
		for (i = 0; i < nk; i++) {
			k = o->t->kid[n->kids + i];
			stack[depth + nk - 1 - i].n = k;
			stack[depth + nk - 1 - i].x = x;
			x += k->w;
		}
		depth += nk;
	}
	free(stack);
	return 0;
}

/* Monospace, so the C side and the script know what fits a box. */
static const char svg_style[] =
    "text{font-family:monospace;font-size:12px;fill:#000}\n"
    "#title{font-size:17px;text-anchor:middle}\n"
    "#subtitle,#legend{text-anchor:middle;fill:#333}\n"
    "#note{text-anchor:middle;fill:#a40000;font-weight:bold}\n"
    ".btn{fill:#1a4fa0;cursor:pointer;text-decoration:underline}\n"
    "#search,#matched{text-anchor:end}\n"
    ".f{cursor:pointer}\n"
    ".f rect{rx:2px;ry:2px}\n"
    ".f text{pointer-events:none}\n"
    ".f:hover rect{stroke:#000;stroke-width:0.7}\n"
    ".par rect{opacity:0.55}\n"
    ".hide{display:none}\n";

/* The whole interactive part. It reads the frames back from the
 * document (box, depth from y, whole name from the tooltip) in the
 * order they were written, depth first, so a frame's subtree is the run
 * of frames after it that are deeper: zoom and search need no other
 * data. No "]]>" in here: it sits in a CDATA section. */
static const char svg_script[] =
    "(function () {\n"
    "\"use strict\";\n"
    "var svg = document.documentElement;\n"
    "var W = 1200, PAD = 10, FH = 16, CW = 7.3, MINC = 3;\n"
    "var total = parseFloat(svg.getAttribute(\"data-w\"));\n"
    "var objs = svg.getAttribute(\"data-unit\") === \"objects\";\n"
    "var bottom = parseFloat(svg.getAttribute(\"data-bottom\"));\n"
    "var details = document.getElementById(\"details\");\n"
    "var matched = document.getElementById(\"matched\");\n"
    "var unzoomBtn = document.getElementById(\"unzoom\");\n"
    "var searchBtn = document.getElementById(\"search\");\n"
    "var idle = \"Hover: a frame's size and share. Click: zoom in. \" +\n"
    "    \"Ctrl-F: search. Esc: reset.\";\n"
    "var fr = [], open = [], term = null, i;\n"
    "\n"
    "function fit(name, w) {\n"
    "  var n = Math.floor((w - 6) / CW);\n"
    "  if (n < MINC) return \"\";\n"
    "  return name.length <= n ? name : name.slice(0, n - 2) + \"..\";\n"
    "}\n"
    "\n"
    "function amount(x) {\n"
    "  var u = [\"B\", \"KiB\", \"MiB\", \"GiB\", \"TiB\"], k = 0;\n"
    "  if (objs) return Math.round(x) + \" objects\";\n"
    "  while (Math.abs(x) >= 1024 && k < 4) { x /= 1024; k++; }\n"
    "  return k ? x.toFixed(1) + \" \" + u[k] : Math.round(x) + \" B\";\n"
    "}\n"
    "\n"
    "var gs = document.getElementById(\"frames\").children;\n"
    "for (i = 0; i < gs.length; i++) {\n"
    "  var g = gs[i], r = g.querySelector(\"rect\");\n"
    "  var tip = g.querySelector(\"title\").textContent;\n"
    "  var nl = tip.indexOf(\"\\n\");\n"
    "  var d = Math.round((bottom - parseFloat(r.getAttribute(\"y\"))) /\n"
    "      FH) - 1;\n"
    "  while (open.length && fr[open[open.length - 1]].d >= d)\n"
    "    fr[open.pop()].end = i;\n"
    "  fr.push({g: g, r: r, t: g.querySelector(\"text\"),\n"
    "    name: nl < 0 ? tip : tip.slice(0, nl),\n"
    "    tip: tip.replace(/\\n/g, \" \\u2014 \"),\n"
    "    x: parseFloat(r.getAttribute(\"x\")),\n"
    "    w: parseFloat(r.getAttribute(\"width\")), d: d,\n"
    "    parent: open.length ? open[open.length - 1] : -1, end: 0,\n"
    "    fill: r.getAttribute(\"fill\")});\n"
    "  g.fi = i;\n"
    "  open.push(i);\n"
    "}\n"
    "while (open.length) fr[open.pop()].end = fr.length;\n"
    "\n"
    "function place(f, x, w) {\n"
    "  f.r.setAttribute(\"x\", x.toFixed(2));\n"
    "  f.r.setAttribute(\"width\", w.toFixed(2));\n"
    "  f.t.setAttribute(\"x\", (x + 3).toFixed(2));\n"
    "  f.t.textContent = fit(f.name, w);\n"
    "}\n"
    "\n"
    "function unzoom() {\n"
    "  for (var j = 0; j < fr.length; j++) {\n"
    "    fr[j].g.classList.remove(\"hide\", \"par\");\n"
    "    place(fr[j], fr[j].x, fr[j].w);\n"
    "  }\n"
    "  unzoomBtn.classList.add(\"hide\");\n"
    "}\n"
    "\n"
    "/* Frame z across the whole width: what it called scaled with it,\n"
    "   its callers full width and dimmed, everything else hidden. */\n"
    "function zoom(i) {\n"
    "  var z = fr[i], sc = (W - 2 * PAD) / z.w, j, f;\n"
    "  if (z.parent < 0) { unzoom(); return; }\n"
    "  for (j = 0; j < fr.length; j++) {\n"
    "    fr[j].g.classList.remove(\"par\");\n"
    "    fr[j].g.classList.add(\"hide\");\n"
    "  }\n"
    "  for (j = z.parent; j >= 0; j = fr[j].parent) {\n"
    "    f = fr[j];\n"
    "    f.g.classList.remove(\"hide\");\n"
    "    f.g.classList.add(\"par\");\n"
    "    place(f, PAD, W - 2 * PAD);\n"
    "  }\n"
    "  for (j = i; j < z.end; j++) {\n"
    "    f = fr[j];\n"
    "    f.g.classList.remove(\"hide\");\n"
    "    place(f, PAD + (f.x - z.x) * sc, f.w * sc);\n"
    "  }\n"
    "  unzoomBtn.classList.remove(\"hide\");\n"
    "}\n"
    "\n"
    "function resetSearch() {\n"
    "  for (var j = 0; j < fr.length; j++)\n"
    "    fr[j].r.setAttribute(\"fill\", fr[j].fill);\n"
    "  matched.textContent = \"\";\n"
    "  searchBtn.textContent = \"Search\";\n"
    "  term = null;\n"
    "}\n"
    "\n"
    "/* Highlight the frames whose name matches s (a regular expression,\n"
    "   or plain text when it is not one) and sum them, counting a match\n"
    "   inside a counted one (recursion) once. */\n"
    "function search(s) {\n"
    "  var re = null, sum = 0, end = -1, n = 0, j, f, hit, p;\n"
    "  try { re = new RegExp(s); } catch (e) { re = null; }\n"
    "  for (j = 0; j < fr.length; j++) {\n"
    "    f = fr[j];\n"
    "    hit = re ? re.test(f.name) : f.name.indexOf(s) >= 0;\n"
    "    f.r.setAttribute(\"fill\", hit ? \"rgb(230,0,230)\" : f.fill);\n"
    "    if (!hit) continue;\n"
    "    n++;\n"
    "    if (j >= end) { sum += f.w; end = f.end; }\n"
    "  }\n"
    "  term = s;\n"
    "  p = sum * 100 / (W - 2 * PAD);\n"
    "  matched.textContent = \"Matched: \" + p.toFixed(2) + \"% (\" +\n"
    "      amount(p * total / 100) + \") in \" + n + \" frames\";\n"
    "  searchBtn.textContent = \"Reset Search\";\n"
    "}\n"
    "\n"
    "function ask() {\n"
    "  var s = prompt(\"Search for a function (a regular expression, \" +\n"
    "      \"or text):\", term === null ? \"\" : term);\n"
    "  if (s === null) return;\n"
    "  if (s === \"\") resetSearch(); else search(s);\n"
    "}\n"
    "\n"
    "function frameOf(e) {\n"
    "  var g = e.target.closest ? e.target.closest(\"g.f\") : null;\n"
    "  return g && g.fi !== undefined ? fr[g.fi] : null;\n"
    "}\n"
    "\n"
    "svg.addEventListener(\"click\", function (e) {\n"
    "  var f = frameOf(e);\n"
    "  if (e.target === unzoomBtn) unzoom();\n"
    "  else if (e.target === searchBtn) {\n"
    "    if (term === null) ask(); else resetSearch();\n"
    "  } else if (f) zoom(f.g.fi);\n"
    "});\n"
    "svg.addEventListener(\"mouseover\", function (e) {\n"
    "  var f = frameOf(e);\n"
    "  if (f) details.textContent = f.tip;\n"
    "});\n"
    "svg.addEventListener(\"mouseout\", function (e) {\n"
    "  if (frameOf(e)) details.textContent = idle;\n"
    "});\n"
    "window.addEventListener(\"keydown\", function (e) {\n"
    "  if (((e.ctrlKey || e.metaKey) && (e.key === \"f\" || e.key === \"F\"))\n"
    "      || e.key === \"F3\") {\n"
    "    e.preventDefault();\n"
    "    ask();\n"
    "  } else if (e.key === \"Escape\") {\n"
    "    resetSearch();\n"
    "    unzoom();\n"
    "  }\n"
    "});\n"
    "\n"
    "/* ?s=TERM searches, ?z=NAME zooms into the widest frame so named\n"
    "   (also after #), so a view can be linked to. */\n"
    "var q = new URLSearchParams(location.search ||\n"
    "    location.hash.replace(/^#/, \"\"));\n"
    "var zn = q.get(\"z\"), best = -1;\n"
    "if (zn) {\n"
    "  for (i = 0; i < fr.length; i++)\n"
    "    if (fr[i].name === zn && (best < 0 || fr[i].w > fr[best].w))\n"
    "      best = i;\n"
    "  if (best >= 0) zoom(best);\n"
    "}\n"
    "if (q.get(\"s\")) search(q.get(\"s\"));\n"
    "details.textContent = idle;\n"
    "svg.setAttribute(\"data-ready\", \"1\");\n"
    "})();\n";

/* The SVG up to the frames: size, style, title, subtitle (the totals),
 * legend (how to read it), the buttons and the details line. */
static void put_head(const struct svg_out *o, const char *title, size_t height,
    size_t nstacks)
{
	const struct svg_node *root = &o->t->n[0];
	FILE *out = o->out;

	fprintf(out,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
	    "width=\"%d\" height=\"%zu\" viewBox=\"0 0 %d %zu\" "
	    "data-w=\"%.0f\" data-unit=\"%s\" data-bottom=\"%zu\">\n",
	    WIDTH, height, WIDTH, height, root->w,
	    o->v == RENDER_OBJECTS ? "objects" : "bytes", o->bottom);
	fprintf(out, "<style><![CDATA[\n%s]]></style>\n", svg_style);
	fprintf(out,
	    "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%zu\" "
	    "fill=\"#fbfbf6\"/>\n",
	    WIDTH, height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\">", WIDTH / 2);
	put_xml(out, title, SIZE_MAX);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"44\">",
	    WIDTH / 2);
	if (o->diff) {
		fputs("Change ", out);
		put_amount(out, root->now - root->old, o->v, 1);
		fputs(": from ", out);
		put_amount(out, root->old, o->v, 0);
		fputs(" to ", out);
		put_amount(out, root->now, o->v, 0);
	} else {
		fputs("In use ", out);
		put_amount(out, root->w, o->v, 0);
	}
	fprintf(out, ", %zu stacks, unsampled", nstacks);
	if (o->estimate != NULL) { /* beside the doctor's exact figures */
		fputs(": a ", out);
		put_xml(out, o->estimate, SIZE_MAX);
	}
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"legend\" x=\"%d\" y=\"62\">", WIDTH / 2);
	if (o->diff)
		fprintf(out,
		    "Width: the larger of before and after. "
		    "<tspan style=\"fill:rgb(220,20,20)\">Red: grew</tspan>, "
		    "<tspan style=\"fill:rgb(20,20,220)\">blue: shrank</tspan>"
		    ", deeper for more; grey: unchanged.");
	else
		fprintf(out, "Width: %s in use, callers below callees.",
		    o->v == RENDER_OBJECTS ? "objects" : "bytes");
	fputs("</text>\n", out);
	if (o->note != NULL) { /* why it is empty or partial: in sight */
		fprintf(out,
		    "<text id=\"note\" x=\"%d\" y=\"%d\">Note: ", WIDTH / 2,
		    TOP + 8);
		put_xml(out, o->note, SIZE_MAX);
		fputs("</text>\n", out);
	}
	fprintf(out,
	    "<text id=\"unzoom\" class=\"btn hide\" x=\"%d\" y=\"24\">"
	    "Reset Zoom</text>\n"
	    "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\">Search</text>\n"
	    "<text id=\"matched\" x=\"%d\" y=\"%zu\"></text>\n"
	    "<text id=\"details\" x=\"%d\" y=\"%zu\">Hover over a frame for "
	    "its size and share.</text>\n"
	    "<g id=\"frames\">\n",
	    XPAD, WIDTH - XPAD, WIDTH - XPAD, height - 12, XPAD, height - 12);
}

int render_svg(FILE *out, const struct heap_profile *hp, struct symbolizer *sym,
    enum render_value v, const char *title, const char *note)
{
	struct svg_tree t = {0};
	struct render_view vw = {0};
	struct svg_out o = {0};
	const struct hp_stack *st;
	char est[128];
	double old, now, w;
	size_t k, i, depth = 0, nstacks = 0;
	int rv = -1;

	errno = 0;
	if (hp_grow((void **)&t.n, &t.cap, 1, sizeof(*t.n)) == -1)
		goto out;
	memset(&t.n[0], 0, sizeof(t.n[0]));
	t.n[0].name = "all";
	t.n[0].parent = NO_NODE;
	t.len = 1;
	for (k = 0; k < hp->nstacks; k++) {
		st = &hp->stacks[k];
		now = render_value_of(st, v);
		old = 0;
		if (hp->diff) { /* see the top of the file */
			old = render_base_of(st, v);
			now += old;
		}
		if ((w = fmax(old, now)) <= 0)
			continue;
		if (render_view_stack(&vw, st, sym) == -1 ||
		    tree_add(&t, &vw, w, old, now) == -1)
			goto out;
		nstacks++;
	}
	if (tree_sort(&t) == -1)
		goto out;
	o.out = out;
	o.t = &t;
	o.v = v;
	o.diff = hp->diff;
	o.minw = t.n[0].w * MIN_PX / (WIDTH - 2 * XPAD);
	o.scale = t.n[0].w > 0 ? (WIDTH - 2 * XPAD) / t.n[0].w : 0;
	for (i = 0; i < t.len; i++) {
		if (i > 0 && (t.n[i].w < o.minw || t.n[i].w <= 0))
			continue;
		if (t.n[i].depth > depth)
			depth = t.n[i].depth;
		if (fabs(t.n[i].now - t.n[i].old) > o.maxd)
			o.maxd = fabs(t.n[i].now - t.n[i].old);
	}
	o.note = note;
	o.estimate = view_estimate_of(hp, est, sizeof(est));
	o.bottom = TOP + (note != NULL ? NOTE_H : 0) + (depth + 1) * FRAME_H;
	if (title == NULL)
		title = hp->diff ? "Heap growth" : "Heap profile";
	put_head(&o, title, o.bottom + BOTTOM, nstacks);
	if (emit(&o) == -1)
		goto out;
	fprintf(out, "</g>\n<script><![CDATA[\n%s]]></script>\n</svg>\n",
	    svg_script);
	rv = ferror(out) ? -1 : 0;
out:
	if (rv == -1 && errno == 0)
		errno = ENOMEM;
	free(t.n);
	hmap_free(&t.ix);
	free(t.kid);
	for (k = 0; k < t.nfolds; k++)
		free(t.folds[k]);
	free(t.folds);
	hmap_free(&t.fold_ix);
	render_view_free(&vw);
	return rv;
}

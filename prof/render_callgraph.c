/*
 * The call graph as SVG: render_dot's graph laid out and drawn by
 * Graphviz's own library (gvc_load.c), where the machine has it. Where
 * it has not, the answer is still an SVG, so the format's one content
 * type holds and a browser opens it: the dot text itself, one <text>
 * line each, under a first line, a dot comment, saying why and what to
 * do; the root says so in data-jm4lw="dot-text", so a page can show it
 * as text instead. Copied out, the lines are dot that `dot -Tsvg` reads.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gvc_load.h"
#include "render.h"

/* The dot text @p dot as an SVG of its lines, @p note above them. The
 * dot text is render_dot's: UTF-8 without control characters, so each
 * line is character data as it is, but for XML's own three. */
static void dot_as_svg(FILE *out, const char *note, const char *dot)
{
	size_t lines = 1, width = strlen(note), n;
	const char *p;
	double y = 20;

	for (p = dot; *p != '\0'; p += n + (p[n] == '\n')) {
		n = strcspn(p, "\n");
		width = n > width ? n : width;
		lines++;
	}
	fprintf(out,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" data-jm4lw=\"dot-text\" "
	    "width=\"%.0f\" height=\"%.0f\" font-family=\"monospace\" "
	    "font-size=\"12\">\n"
	    "<text x=\"8\" y=\"%.0f\" xml:space=\"preserve\" "
	    "font-weight=\"bold\">",
	    (double)width * 7.3 + 16, (double)lines * 15 + 12, y);
	render_xml(out, note, strlen(note), SIZE_MAX);
	fputs("</text>\n", out);
	for (p = dot; *p != '\0'; p += n + (p[n] == '\n')) {
		n = strcspn(p, "\n");
		y += 15;
		fprintf(out, "<text x=\"8\" y=\"%.0f\" xml:space=\"preserve\">",
		    y);
		render_xml(out, p, n, SIZE_MAX);
		fputs("</text>\n", out);
	}
	fputs("</svg>\n", out);
}

/* The call graph as SVG (see render.h). */
int render_callgraph(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v,
    const struct render_dot_opts *o)
{
	char *dot = NULL, why[512], note[700];
	size_t len = 0;
	FILE *ms;
	int r;

	if ((ms = open_memstream(&dot, &len)) == NULL)
		return -1;
	r = render_dot(ms, hp, sym, v, o);
	if (fclose(ms) != 0 || r == -1 || dot == NULL) {
		free(dot);
		if (errno == 0)
			errno = ENOMEM;
		return -1;
	}
	if ((r = gvc_svg(dot, out, why, sizeof(why))) != 0) {
		/* Missing, or Graphviz refused the graph: its dot text,
		 * which the caller can render elsewhere. */
		if (r == GVC_MISSING)
			snprintf(note, sizeof(note),
			    "// Graphviz (" GVC_SONAME ") is not installed "
			    "here (%s): this is the call graph in dot; render "
			    "it with dot -Tsvg",
			    why);
		else
			snprintf(note, sizeof(note),
			    "// %s: this is the call graph in dot; render it "
			    "with dot -Tsvg",
			    why);
		dot_as_svg(out, note, dot);
	}
	free(dot);
	return ferror(out) ? -1 : 0;
}

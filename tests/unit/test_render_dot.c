/*
 * Unit tests of prof/render_dot.c on a small profile written here, with a
 * stand-in symbolizer that names each address from a table: a node per
 * function with its self and cumulative figures (a recursive function
 * counted once per stack), an edge per caller -> callee, nodes and edges
 * under their fractions dropped and the legend's counts of them, the
 * node cap, a difference's signs and colours, and names escaped for dot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof.h"
#include "render.h"

/* What each address is called (0x1 .. 0x9); 0x3 and 0x5 are the same
 * function, as two call sites in one function are. */
static const char *const names[] = {
    NULL,
    "main",
    "b",
    "c",
    "d",
    "c",
    "tiny",
    "r",
    "it's \"q\" \\N\x01\xff",
    "std::map<int, A&>::operator<",
};

/* 0xa's name: a C++ template's, longer than Graphviz's 16384-byte
 * quoted string (made by test_long_name). */
static char long_name[40000];

/* The stand-in for prof/symbolize.c: one frame, named from the table. */
int sym_lookup(struct symbolizer *s, uint64_t pc, int leaf,
    struct sym_frame *out, int max)
{
	(void)s;
	(void)leaf;
	(void)max;
	memset(out, 0, sizeof(*out));
	out->func = out->name = out->raw = pc < sizeof(names) / sizeof(names[0])
	    ? names[pc]
	    : pc == 0xa ? long_name
	                : "?";
	return 1;
}

/* No allocator library among the stand-in's frames. */
int sym_in_allocator(struct symbolizer *s, uint64_t pc)
{
	(void)s;
	(void)pc;
	return 0;
}

#define MAPS "\nMAPPED_LIBRARIES:\n"

/* heap_v2/0: no unsampling, so the bytes are the test's own figures.
 * 7690 bytes: main -> b -> c (twice, 5120), main -> b -> d (2048),
 * main -> tiny (10), main -> r -> r (512, recursive). */
static const char profile[] = "heap_v2/0\n"
                              "@ 0x3 0x2 0x1\n  t*: 1: 1024 [0: 0]\n"
                              "@ 0x4 0x2 0x1\n  t*: 1: 2048 [0: 0]\n"
                              "@ 0x5 0x2 0x1\n  t*: 1: 4096 [0: 0]\n"
                              "@ 0x6 0x1\n  t*: 1: 10 [0: 0]\n"
                              "@ 0x7 0x7 0x1\n  t*: 1: 512 [0: 0]\n" MAPS;

/* Does @p p start with the string @p s? */
#define STARTS(p, s) (strncmp((p), (s), strlen(s)) == 0)

static struct heap_profile hp, base;
static char err[256];

/* Render @p p (minus @p b, if not NULL) with @p o to a string (free it). */
static char *dot_of(const char *p, const char *b,
    const struct render_dot_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	assert_int_equal(heapprof_parse(p, strlen(p), &hp, err, sizeof(err)),
	    0);
	if (b != NULL) {
		assert_int_equal(heapprof_parse(b, strlen(b), &base, err,
		                     sizeof(err)),
		    0);
		assert_int_equal(heapprof_subtract(&hp, &base), 0);
	}
	assert_non_null(out = open_memstream(&buf, &len));
	assert_int_equal(render_dot(out, &hp, NULL, RENDER_SPACE, o), 0);
	fclose(out);
	heapprof_free(&hp);
	if (b != NULL)
		heapprof_free(&base);
	return buf;
}

/* The node line of @p label's start ("N<id> [label=\"<label>"), or NULL;
 * its id in *@p id. */
static const char *node(const char *dot, const char *label, int *id)
{
	const char *p;
	char key[256];
	int n;

	for (p = dot; (p = strstr(p, "\nN")) != NULL; p++)
		if (sscanf(p + 2, "%d [label=\"", &n) == 1) {
			snprintf(key, sizeof(key), "N%d [label=\"%s\\n", n,
			    label);
			if (strncmp(p + 1, key, strlen(key)) == 0) {
				if (id != NULL)
					*id = n;
				return p + 1 + strlen(key);
			}
		}
	return NULL;
}

/* The edge @p from -> @p to's label, or NULL. */
static const char *edge(const char *dot, const char *from, const char *to)
{
	static char key[64];
	int a, b;
	const char *p;

	if (node(dot, from, &a) == NULL || node(dot, to, &b) == NULL)
		return NULL;
	snprintf(key, sizeof(key), "\nN%d -> N%d [label=\"", a, b);
	return (p = strstr(dot, key)) != NULL ? p + strlen(key) : NULL;
}

/* Self and cumulative per function, the recursive one once per stack;
 * the legend's total and what the shown nodes hold; tiny (10 bytes,
 * under 0.5% of 7690) dropped with its edge. */
static void test_nodes_and_edges(void **state)
{
	char *dot = dot_of(profile, NULL, NULL);
	const char *p;

	(void)state;
	assert_true(STARTS(dot, "digraph \"heap profile\" {\n"));
	assert_non_null(p = node(dot, "main", NULL));
	assert_true(STARTS(p, "0 B (0.0%)\\rof 7.5 KiB (100.0%)\\r\""));
	assert_non_null(p = node(dot, "b", NULL));
	assert_true(STARTS(p, "0 B (0.0%)\\rof 7.0 KiB (93.2%)\\r\""));
	assert_non_null(p = node(dot, "c", NULL));
	assert_true(STARTS(p, "5.0 KiB (66.6%)\\r\""));
	assert_non_null(p = node(dot, "d", NULL));
	assert_true(STARTS(p, "2.0 KiB (26.6%)\\r\""));
	/* r -> r: 512 once, not twice. */
	assert_non_null(p = node(dot, "r", NULL));
	assert_true(STARTS(p, "512 B (6.7%)\\r\""));
	assert_null(node(dot, "tiny", NULL));

	assert_non_null(p = edge(dot, "main", "b"));
	assert_true(STARTS(p, "7.0 KiB\""));
	assert_non_null(p = edge(dot, "b", "c"));
	assert_true(STARTS(p, "5.0 KiB\""));
	assert_non_null(p = edge(dot, "r", "r"));
	assert_true(STARTS(p, "512 B\""));
	assert_non_null(p = edge(dot, "main", "r"));
	assert_null(edge(dot, "b", "main"));

	assert_non_null(strstr(dot, "\\lTotal: 7.5 KiB\\l"));
	assert_non_null(strstr(dot,
	    "\\lShowing nodes accounting for 7.5 "
	    "KiB, 99.9% of 7.5 KiB total\\l"));
	assert_non_null(strstr(dot, "\\lDropped 1 nodes (cum <= 10 B)\\l"));
	assert_null(strstr(dot, "edges (freq"));
	assert_true(strcmp(dot + strlen(dot) - 2, "}\n") == 0);
	free(dot);
}

/* An edge at or under the edge fraction goes, and the legend says how
 * many and up to what, but the first edge into a node always stays. */
static void test_edge_fraction(void **state)
{
	struct render_dot_opts o = {RENDER_DOT_OPTS};
	char *dot;

	(void)state;
	o.edgefraction = 0.3; /* 2307 of 7690 */
	dot = dot_of(profile, NULL, &o);
	assert_non_null(edge(dot, "main", "b"));
	assert_non_null(edge(dot, "b", "c"));
	assert_non_null(edge(dot, "b", "d"));    /* d's only way in */
	assert_non_null(edge(dot, "main", "r")); /* r's first */
	assert_null(edge(dot, "r", "r"));
	assert_non_null(strstr(dot, "\\lDropped 1 edges (freq <= 512 B)\\l"));
	free(dot);
}

/* At most nodecount nodes, the heaviest by cumulative value. */
static void test_node_count(void **state)
{
	struct render_dot_opts o = {RENDER_DOT_OPTS};
	char *dot;

	(void)state;
	o.nodecount = 2;
	o.program = "/usr/bin/prog";
	dot = dot_of(profile, NULL, &o);
	assert_true(STARTS(dot, "digraph \"/usr/bin/prog\" {\n"));
	assert_non_null(node(dot, "main", NULL));
	assert_non_null(node(dot, "b", NULL));
	assert_null(node(dot, "c", NULL));
	assert_non_null(strstr(dot, "\\lShowing top 2 nodes out of 6\\l"));
	assert_non_null(strstr(dot, "\\lDropped 4 nodes (cum <= 5.0 KiB)\\l"));
	free(dot);
}

/* A difference: signed figures, growth red and shrinking blue, shares of
 * what changed. */
static void test_difference(void **state)
{
	static const char old[] = "heap_v2/0\n"
	                          "@ 0x3 0x2 0x1\n  t*: 1: 1024 [0: 0]\n"
	                          "@ 0x4 0x2 0x1\n  t*: 1: 4096 [0: 0]\n" MAPS;
	static const char now[] = "heap_v2/0\n"
	                          "@ 0x3 0x2 0x1\n  t*: 1: 3072 [0: 0]\n"
	                          "@ 0x4 0x2 0x1\n  t*: 1: 3072 [0: 0]\n" MAPS;
	char *dot = dot_of(now, old, NULL);
	const char *p;

	(void)state;
	assert_non_null(p = node(dot, "c", NULL));
	assert_true(STARTS(p, "+2.0 KiB (66.7%)\\r\""));
	assert_non_null(strstr(p, "fillcolor=\"#f8c8c0\""));
	assert_non_null(p = node(dot, "d", NULL));
	assert_true(STARTS(p, "-1.0 KiB (-33.3%)\\r\""));
	assert_non_null(strstr(p, "fillcolor=\"#c8d8f8\""));
	assert_non_null(strstr(dot,
	    "\\lChange: +1.0 KiB net, 3.0 KiB changed "
	    "in all\\l"));
	free(dot);
}

/* Names are dot strings: quotes and backslashes escaped, control bytes
 * and bytes that are not UTF-8 replaced; a C++ name breaks at its own
 * scopes, not inside its template arguments. */
static void test_names_escaped(void **state)
{
	static const char p[] = "heap_v2/0\n"
	                        "@ 0x8 0x1\n  t*: 1: 1024 [0: 0]\n"
	                        "@ 0x9 0x1\n  t*: 1: 1024 [0: 0]\n" MAPS;
	char *dot = dot_of(p, NULL, NULL);

	(void)state;
	assert_non_null(node(dot, "it's \\\"q\\\" \\\\N??", NULL));
	assert_non_null(strstr(dot, "tooltip=\"it's \\\"q\\\" \\\\N??\""));
	assert_non_null(node(dot, "std::\\nmap<int, A&>::\\noperator<", NULL));
	free(dot);
}

/* The quoted strings of dot text @p dot: the longest one's bytes. */
static size_t longest_quoted(const char *dot)
{
	size_t best = 0, n;
	const char *p = dot, *q;

	while ((p = strchr(p, '"')) != NULL) {
		for (q = p + 1; *q != '\0' && *q != '"'; q++)
			if (*q == '\\' && q[1] != '\0')
				q++;
		n = (size_t)(q - p - 1);
		best = n > best ? n : best;
		p = *q != '\0' ? q + 1 : q;
	}
	return best;
}

/* A name past Graphviz's 16384 bytes (a C++ template's) is cut, in the
 * label and the tooltip, with an ellipsis after a whole character or
 * escape, never inside one; the real dot reads the graph. Each cut
 * point is tried against a '"' (escaped as two bytes) and a 2-byte
 * UTF-8 character. */
static void test_long_name(void **state)
{
	static const char p[] = "heap_v2/0\n"
	                        "@ 0xa 0x1\n  t*: 1: 1024 [0: 0]\n" MAPS;
	char *dot, cmd[64];
	const char *at, *end;
	size_t i, shift;
	FILE *f;

	(void)state;
	for (shift = 0; shift < 4; shift++) {
		/* "ns::f<" then a run of "\"é" from an offset, ">" */
		memcpy(long_name, "ns::f<", 6);
		for (i = 6; i < 6 + shift; i++)
			long_name[i] = 'x';
		for (; i + 5 < sizeof(long_name) - 2; i += 3)
			memcpy(long_name + i, "\"\xc3\xa9", 3);
		long_name[i++] = '>';
		long_name[i] = '\0';
		dot = dot_of(p, NULL, NULL);
		assert_true(longest_quoted(dot) < 16384);
		assert_non_null(at = strstr(dot, "[label=\"ns::\\nf<"));
		assert_non_null(end = strstr(at, "\xe2\x80\xa6\\n"));
		/* Before the ellipsis: a whole '\"' or 'é', or the x's. */
		assert_true((end[-2] == '\\' && end[-1] == '"') ||
		    (end[-2] == '\xc3' && end[-1] == '\xa9') ||
		    end[-1] == 'x' || end[-1] == '<');
		assert_non_null(at = strstr(dot, "tooltip=\"ns::f<"));
		assert_non_null(end = strstr(at, "\xe2\x80\xa6\""));
		assert_true((end[-2] == '\\' && end[-1] == '"') ||
		    (end[-2] == '\xc3' && end[-1] == '\xa9'));
		/* Graphviz itself takes it. */
		snprintf(cmd, sizeof(cmd), "dot -Tsvg -o /dev/null");
		assert_non_null(f = popen(cmd, "w"));
		fputs(dot, f);
		assert_int_equal(pclose(f), 0);
		free(dot);
	}
}

/* No samples: a graph of its legend alone, saying so. */
static void test_empty(void **state)
{
	char *dot = dot_of("heap_v2/0\n" MAPS, NULL, NULL);

	(void)state;
	assert_non_null(strstr(dot, "\\lNo nodes to show\\l"));
	assert_null(strstr(dot, "\nN1 "));
	free(dot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nodes_and_edges),
	    cmocka_unit_test(test_edge_fraction),
	    cmocka_unit_test(test_node_count),
	    cmocka_unit_test(test_difference),
	    cmocka_unit_test(test_names_escaped),
	    cmocka_unit_test(test_long_name),
	    cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

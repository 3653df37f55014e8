/*
 * prof/fold.c on fixed stacks: which functions are the allocator's
 * wrappers (chains fold through, a function that is sometimes the leaf
 * and sometimes not stays, a single-caller function stays unless its
 * caller folds, recursion stays, the named list and off), fold_wrappers'
 * syntax, and the text table, the threads' functions and the leak
 * index over a profile written here (through a stand-in symbolizer):
 * self bytes move to the callers, totals and cumulative figures stay.
 */
#include <sys/mman.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fold.h"
#include "heapprof.h"
#include "render.h"
#include "render_threads.h"
#include "sym_table.h"
#include "trend.h"

#define N(a) (sizeof(a) / sizeof(a[0]))

/* Fold @p nstacks stacks of names (innermost first, NULL-ended). */
static void fold_of(struct fold *f, const char *const *const *stacks,
    size_t nstacks, const struct fold_list *l)
{
	size_t depth[16], s;

	assert_true(nstacks <= N(depth));
	for (s = 0; s < nstacks; s++)
		for (depth[s] = 0; stacks[s][depth[s]] != NULL; depth[s]++)
			;
	assert_int_equal(fold_find_names(f, stacks, depth, nstacks, l), 0);
}

/* @p f's folded names, ", " between. */
static const char *folded(const struct fold *f)
{
	static char buf[512];

	return fold_names(f, buf, sizeof(buf));
}

/* A two-level chain from three callers: both levels fold, inner first,
 * and each stack's self is its caller. */
static void chain(void **state)
{
	static const char *const a[] = {"w_usable", "w", "createString", "main",
	    NULL};
	static const char *const b[] = {"w_usable", "w", "lpInsert", "main",
	    NULL};
	static const char *const c[] = {"w_usable", "w", "setKey", "main",
	    NULL};
	/* w_usable called straight from sdsnew (two callers: it stays)
	 * and dictAdd (one: it stays) too, three callers in all. */
	static const char *const d[] = {"w_usable", "sdsnew", "main", NULL};
	static const char *const e[] = {"w_usable", "sdsnew", "other", NULL};
	static const char *const f3[] = {"w_usable", "dictAdd", "main", NULL};
	const char *const *st[] = {a, b, c, d, e, f3};
	struct fold f;

	(void)state;
	fold_of(&f, st, N(st), NULL);
	assert_string_equal(folded(&f), "w_usable, w");
	assert_int_equal(fold_self_names(&f, a, 4), 2);
	assert_int_equal(fold_self_names(&f, d, 3), 1);
	assert_int_equal(fold_self_names(&f, f3, 3), 1);
	assert_false(fold_is(&f, "createString"));
	fold_free(&f);
}

/* A function that is sometimes the leaf and sometimes calls another
 * allocating function is not a wrapper, however many callers. */
static void sometimes_leaf(void **state)
{
	static const char *const a[] = {"mixed", "x", "main", NULL};
	static const char *const b[] = {"mixed", "y", "main", NULL};
	static const char *const c[] = {"mixed", "z", "main", NULL};
	static const char *const d[] = {"other", "mixed", "x", "main", NULL};
	/* ... even when what it calls has no other caller. */
	const char *const *st[] = {a, b, c, d};
	struct fold f;

	(void)state;
	fold_of(&f, st, N(st), NULL);
	assert_string_equal(folded(&f), "");
	assert_int_equal(fold_self_names(&f, a, 3), 0);
	fold_free(&f);
}

/* One caller, or two: the function itself is the allocation site. A
 * single-caller helper of a caller that is no wrapper stays too. */
static void few_callers(void **state)
{
	static const char *const a[] = {"helper", "only", "main", NULL};
	static const char *const b[] = {"pair", "left", "main", NULL};
	static const char *const c[] = {"pair", "right", "main", NULL};
	const char *const *st[] = {a, b, c};
	struct fold f;

	(void)state;
	fold_of(&f, st, N(st), NULL);
	assert_string_equal(folded(&f), "");
	fold_free(&f);
}

/* A wrapper's private helper (its one caller the wrapper) folds with
 * it: xmalloc -> xmalloc_impl -> malloc. */
static void helper_of_wrapper(void **state)
{
	static const char *const a[] = {"my_impl", "my_alloc", "p", NULL};
	static const char *const b[] = {"my_impl", "my_alloc", "q", NULL};
	static const char *const c[] = {"my_impl", "my_alloc", "r", NULL};
	const char *const *st[] = {a, b, c};
	struct fold f;

	(void)state;
	fold_of(&f, st, N(st), NULL);
	assert_string_equal(folded(&f), "my_alloc, my_impl");
	assert_int_equal(fold_self_names(&f, a, 3), 2);
	fold_free(&f);
}

/* A recursive function calls itself below: not always innermost. The
 * passes end. */
static void recursion(void **state)
{
	static const char *const a[] = {"rec", "rec", "x", NULL};
	static const char *const b[] = {"rec", "y", NULL};
	static const char *const c[] = {"rec", "z", NULL};
	static const char *const d[] = {"rec", "rec", "rec", "w", NULL};
	const char *const *st[] = {a, b, c, d};
	struct fold f;

	(void)state;
	fold_of(&f, st, N(st), NULL);
	assert_string_equal(folded(&f), "");
	fold_free(&f);
}

/* The default list and fold_wrappers' names fold wherever innermost,
 * whatever the rule says; off folds nothing, not even those. A stack
 * all of whose frames fold keeps its outermost as its self. */
static void named_and_off(void **state)
{
	static const char *const a[] = {"xmalloc", "one", "main", NULL};
	static const char *const b[] = {"my_pool_get", "two", "main", NULL};
	static const char *const c[] = {"xmalloc", NULL};
	const char *const *st[] = {a, b, c};
	struct fold_list l;
	struct fold f;
	char err[256];

	(void)state;
	fold_of(&f, st, N(st), NULL);
	assert_string_equal(folded(&f), "xmalloc");
	assert_int_equal(fold_self_names(&f, a, 3), 1);
	assert_int_equal(fold_self_names(&f, c, 1), 0);
	fold_free(&f);
	assert_int_equal(fold_parse("my_pool_get", &l, err, sizeof(err)), 0);
	fold_of(&f, st, N(st), &l);
	assert_string_equal(folded(&f), "xmalloc, my_pool_get");
	fold_free(&f);
	assert_int_equal(fold_parse(" off ", &l, err, sizeof(err)), 0);
	fold_of(&f, st, N(st), &l);
	assert_string_equal(folded(&f), "");
	assert_true(f.off);
	fold_free(&f);
}

/* !NAME keeps a function the rule finds (a constructor called from all
 * over: innermost, three callers) and one of the default list: folding
 * stops at it, and what is below still folds. */
static void kept(void **state)
{
	static const char *const a[] = {"ctor", "p", "main", NULL};
	static const char *const b[] = {"ctor", "q", "main", NULL};
	static const char *const c[] = {"ctor", "r", "main", NULL};
	static const char *const d[] = {"xmalloc", "s", "main", NULL};
	static const char *const e[] = {"zm", "ctor2", "p", "main", NULL};
	static const char *const g[] = {"zm", "ctor2", "q", "main", NULL};
	static const char *const h[] = {"zm", "x", "main", NULL};
	static const char *const i[] = {"zm", "y", "main", NULL};
	const char *const *st[] = {a, b, c, d};
	const char *const *st2[] = {e, g, h, i};
	struct fold_list l;
	struct fold f;
	char err[256], buf[256];

	(void)state;
	fold_of(&f, st, N(st), NULL);
	assert_string_equal(folded(&f), "ctor, xmalloc");
	fold_free(&f);
	assert_int_equal(fold_parse("!ctor, !xmalloc", &l, err, sizeof(err)),
	    0);
	fold_of(&f, st, N(st), &l);
	assert_string_equal(folded(&f), "");
	assert_int_equal(fold_self_names(&f, a, 3), 0);
	fold_free(&f);
	fold_format(&l, buf, sizeof(buf));
	assert_string_equal(buf, "!ctor, !xmalloc");
	/* zm folds (four callers); ctor2, its caller from two places,
	 * is kept by name: folding stops at it, not past it. */
	assert_int_equal(fold_parse("!ctor2", &l, err, sizeof(err)), 0);
	fold_of(&f, st2, N(st2), &l);
	assert_string_equal(folded(&f), "zm");
	assert_int_equal(fold_self_names(&f, e, 4), 1);
	fold_free(&f);
	assert_int_equal(fold_parse("a, !", &l, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "fold_wrappers: ! names no function (want !NAME: never fold "
	    "NAME)");
}

/* fold_wrappers' text: commas when there is one (C++ names hold
 * spaces), else white space; off alone; the limits named. */
static void parse(void **state)
{
	struct fold_list l;
	char err[256], buf[2048], many[2048] = "";
	int i;

	(void)state;
	assert_int_equal(fold_parse("", &l, err, sizeof(err)), 0);
	assert_false(l.off);
	assert_int_equal(l.n, 0);
	assert_int_equal(fold_parse("a  b\tc", &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.name[2], "c");
	assert_int_equal(fold_parse("operator new, Pool<int>::get,", &l, err,
	                     sizeof(err)),
	    0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.name[1], "Pool<int>::get");
	fold_format(&l, buf, sizeof(buf));
	assert_string_equal(buf, "operator new, Pool<int>::get");
	assert_int_equal(fold_parse("a off", &l, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "fold_wrappers: off stands alone (want off, or function names)");
	for (i = 0; i <= FOLD_NAMES_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
		    "f%d ", i);
	assert_int_equal(fold_parse(many, &l, err, sizeof(err)), -1);
	assert_string_equal(err, "fold_wrappers: more than 32 names");
	memset(buf, 'x', 200);
	buf[200] = '\0';
	assert_int_equal(fold_parse(buf, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is longer than 127 bytes"));
}

/* The profile's names: address N is names[N]. */
static const char *const names[] = {NULL, "main", "createString", "lpInsert",
    "setKey", "w", "w_usable", "single"};

SYM_TABLE(names);

/* heap_v2/0: no unsampling, the bytes are the figures. 1, 2 and 4 MiB
 * through w_usable <- w from three callers, 8 MiB in a single-caller
 * function (its own self), on threads 1 and 2. */
static const char profile[] =
    "heap_v2/0\n  t*: 4: 15728640 [0: 0]\n  t1: 3: 7340032 [0: 0] "
    "worker\n  t2: 1: 8388608 [0: 0]\n"
    "@ 0x6 0x5 0x2 0x1\n  t*: 1: 1048576 [0: 0]\n  t1: 1: 1048576 [0: 0]\n"
    "@ 0x6 0x5 0x3 0x1\n  t*: 1: 2097152 [0: 0]\n  t1: 1: 2097152 [0: 0]\n"
    "@ 0x6 0x5 0x4 0x1\n  t*: 1: 4194304 [0: 0]\n  t1: 1: 4194304 [0: 0]\n"
    "@ 0x7 0x1\n  t*: 1: 8388608 [0: 0]\n  t2: 1: 8388608 [0: 0]\n"
    "\nMAPPED_LIBRARIES:\n";

/* @p view of the profile as text, under @p l (free it). */
static char *text_of(int threads, const struct fold_list *l)
{
	struct heap_profile hp;
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *out;

	assert_int_equal(heapprof_parse(profile, strlen(profile), &hp, err,
	                     sizeof(err)),
	    0);
	assert_non_null(out = open_memstream(&buf, &len));
	if (threads)
		assert_int_equal(render_threads(out, &hp,
		                     (struct symbolizer *)&hp, RENDER_SPACE, 0,
		                     l),
		    0);
	else
		assert_int_equal(render_text(out, &hp, (struct symbolizer *)&hp,
		                     RENDER_SPACE, 0, l),
		    0);
	fclose(out);
	heapprof_free(&hp);
	return buf;
}

/* The text table: the callers hold the self bytes, the wrappers none
 * but their whole cumulative figure; the total is the same; a line
 * says what was folded. --no-fold (off) is jeprof's table. */
static void text_table(void **state)
{
	struct fold_list off = {.off = 1};
	char *t;

	(void)state;
	t = text_of(0, NULL);
	assert_non_null(strstr(t,
	    "Total: 15.0 MiB\n"
	    "Folded allocation wrappers into their "
	    "callers: w, w_usable (fold_wrappers to "
	    "change)\n"
	    "     8.0  53.3%  53.3%      8.0  53.3% "
	    "single\n"
	    "     4.0  26.7%  80.0%      4.0  26.7% "
	    "setKey\n"
	    "     2.0  13.3%  93.3%      2.0  13.3% "
	    "lpInsert\n"
	    "     1.0   6.7% 100.0%      1.0   6.7% "
	    "createString\n"));
	assert_non_null(
	    strstr(t, "     0.0   0.0% 100.0%      7.0  46.7% w\n"));
	assert_non_null(
	    strstr(t, "     0.0   0.0% 100.0%      7.0  46.7% w_usable\n"));
	free(t);
	t = text_of(0, &off);
	assert_null(strstr(t, "Folded"));
	assert_non_null(strstr(t,
	    "Total: 15.0 MiB\n"
	    "     8.0  53.3%  53.3%      8.0  53.3% "
	    "single\n"
	    "     7.0  46.7% 100.0%      7.0  46.7% "
	    "w_usable\n"));
	free(t);
}

/* The threads' functions: thread 1's are its three callers. */
static void threads_view(void **state)
{
	char *t;

	(void)state;
	t = text_of(1, NULL);
	assert_non_null(strstr(t,
	    "Folded allocation wrappers into their "
	    "callers: w, w_usable (fold_wrappers to "
	    "change)\n"));
	assert_non_null(
	    strstr(t, "       4194304              26.67%    setKey\n"));
	assert_null(strstr(t, "    w_usable\n"));
	free(t);
}

/* The leak index's functions: the callers; the index says what was
 * folded and under which list, and reads back the same. */
static void trend_point(void **state)
{
	struct heap_profile hp;
	struct trend_point p, q;
	char err[256], *buf = NULL;
	size_t len = 0, i;
	FILE *out;
	int fd;

	(void)state;
	assert_int_equal(heapprof_parse(profile, strlen(profile), &hp, err,
	                     sizeof(err)),
	    0);
	assert_int_equal(trend_point_of(&hp, (struct symbolizer *)&hp, 1000,
	                     "d.heap", NULL, &p),
	    0);
	assert_int_equal(p.nfn, 4);
	for (i = 0; i < p.nfn; i++)
		assert_null(strstr(p.fn[i].name, "w"));
	assert_string_equal(p.fn[1].name, "setKey");
	assert_string_equal(p.folded, "w, w_usable");
	assert_non_null(out = open_memstream(&buf, &len));
	assert_int_equal(trend_index_write(out, &p), 0);
	fclose(out);
	assert_true((fd = memfd_create("ix", 0)) != -1);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(trend_index_read(fd, "d.heap", &q, err, sizeof(err)),
	    0);
	assert_string_equal(q.folded, "w, w_usable");
	assert_string_equal(q.fold_cfg, "");
	assert_int_equal(q.nfn, 4);
	close(fd);
	free(buf);
	trend_point_free(&q);
	trend_point_free(&p);
	heapprof_free(&hp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(chain),
	    cmocka_unit_test(sometimes_leaf),
	    cmocka_unit_test(few_callers),
	    cmocka_unit_test(helper_of_wrapper),
	    cmocka_unit_test(recursion),
	    cmocka_unit_test(named_and_off),
	    cmocka_unit_test(kept),
	    cmocka_unit_test(parse),
	    cmocka_unit_test(text_table),
	    cmocka_unit_test(threads_view),
	    cmocka_unit_test(trend_point),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

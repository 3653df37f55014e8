/*
 * fold — the allocator's wrappers folded into their callers in the ranked
 * views (the text table, the leak suspects, the threads' functions): a
 * stack's self bytes go to the code that asked for the memory, not to
 * zmalloc, xmalloc or g_malloc it asked through.
 *
 * Which functions are wrappers, over one profile's stacks as
 * render_view_stack cuts them (the allocator's own frames gone):
 *   - found: a function that is the innermost frame of every stack it is
 *     in (it calls nothing else that allocates) and is called there from
 *     at least FOLD_MIN_CALLERS distinct functions;
 *   - named: a function of the default list (fold_default_names) or of
 *     the caller's list (fold_wrappers, --fold), wherever it is the
 *     innermost frame;
 *   - kept: a !NAME of the caller's list is never folded, found or named
 *     (a constructor called from everywhere is where memory is asked
 *     for, though it looks like a wrapper), and folding stops there.
 * The rule is applied again with the folded frames out of the way until
 * nothing more folds, so chains fold through (zmalloc_usable, then
 * zmalloc, then a constructor that only calls zmalloc from everywhere).
 * A function always innermost but called from one place only is its
 * caller's helper: not folded on its own (a single-caller function is
 * where its caller allocates), but looked past, and folded with its
 * caller when that is (xmalloc -> xmalloc_impl -> malloc). A recursive
 * function calls itself below: not always innermost, never found.
 * A stack whose frames all fold keeps its outermost frame as its self.
 *
 * Only the self (flat) column moves: a wrapper's cumulative figure stays
 * what it was, and totals do not change. The raw stacks (collapsed,
 * pprof, the flame graph, the call graph, the symbolized file) are never
 * folded.
 */
#ifndef JM4LW_FOLD_H
#define JM4LW_FOLD_H

#include <stddef.h>
#include <stdio.h>

#include "prof_util.h"

struct heap_profile;
struct symbolizer;
struct render_view;

/* Distinct callers a function needs to be found a wrapper: one caller
 * makes it that caller's helper, two a pair of sibling sites (an insert
 * left and right, a create and a copy), where its own name is still the
 * most telling one; a wrapper of the allocator is called from all over
 * the program (redis's zmalloc from hundreds of places), and from three
 * or more even in a heap of a few dozen samples. */
#define FOLD_MIN_CALLERS 3

/* Passes of the rule, each a step outwards from the allocator: a chain
 * of wrappers and helpers is never this deep, and each pass reads every
 * frame of the profile (a 100000-frame stack of single-caller functions
 * would otherwise take as many passes). */
#define FOLD_PASSES_MAX 16

/* Names one fold_wrappers list holds, and the longest name. */
#define FOLD_NAMES_MAX 32
#define FOLD_NAME_MAX 128

/* fold_wrappers parsed (fold_parse): off, or the names to fold besides
 * the found ones and the default list. All zeros: the defaults. A plain
 * struct without pointers: a job copies it. */
struct fold_list {
	int off; /* fold_wrappers = off, --no-fold: fold nothing */
	size_t n;
	char name[FOLD_NAMES_MAX][FOLD_NAME_MAX];
};

/* Parse @p text: "" (the defaults), "off", or names (NAME: fold it;
 * !NAME: never fold it), separated by commas
 * when there is one (C++ names hold spaces: "operator new, my_alloc"),
 * else by white space. 0, or -1 with one line in @p err naming
 * fold_wrappers and the limit passed. */
int fold_parse(const char *text, struct fold_list *l, char *err, size_t errlen);

/* @p l back as text, as fold_parse takes it ("off", "" or "a, b"). */
void fold_format(const struct fold_list *l, char *buf, size_t len);

/* The functions folded in one profile. */
struct fold {
	const char **name; /* in the order folded, each its own copy */
	size_t n;
	struct hmap ix; /* hash of a name -> its index in name */
	int off;        /* folding was off */
};

/* Find the wrappers of @p hp's stacks (symbolized by @p sym) under @p l
 * (NULL: the defaults) into @p f. 0, or -1 with errno (ENOMEM). Free
 * with fold_free(). */
int fold_find(struct fold *f, const struct heap_profile *hp,
    struct symbolizer *sym, const struct fold_list *l);

/* The same over stacks given by name, @p frames[s] stack s's @p depth[s]
 * names, innermost first (the allocator's frames already cut): the unit
 * tests' way in. */
int fold_find_names(struct fold *f, const char *const *const *frames,
    const size_t *depth, size_t nstacks, const struct fold_list *l);

/* Is @p name folded in @p f? */
int fold_is(const struct fold *f, const char *name);

/* The frame of @p v (a stack as render_view_stack made it) its self
 * bytes go to: the first one not folded, the outermost when all are; 0
 * for an empty view. */
size_t fold_self(const struct fold *f, const struct render_view *v);

/* The same for @p n names, innermost first. */
size_t fold_self_names(const struct fold *f, const char *const *names,
    size_t n);

/* "Folded allocation wrappers into their callers: a, b (fold_wrappers to
 * change)" after @p prefix, and a newline; nothing when none folded. */
void fold_note(FILE *out, const struct fold *f, const char *prefix);

/* The folded names, ", " between them, into @p buf ("" for none). */
const char *fold_names(const struct fold *f, char *buf, size_t len);

void fold_free(struct fold *f);

#endif

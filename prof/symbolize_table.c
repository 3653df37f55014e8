/*
 * The table backend: the addresses of a symbolized profile named by its
 * own symbol section (heapprof.c reads it into hp->syms), so a profile
 * made on one machine reads on another without the program or its
 * libraries. Each line names an address as jeprof looks it up (a
 * caller's return address minus 1, which sym_lookup already does) with
 * one function or an inline chain, callers first: "outer--mid--inner".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize_impl.h"

/* One address of the table: its names, innermost first, in pieces. */
struct tab_entry {
	uint64_t addr;
	size_t first;
	int n;
};

/* An address range of the allocator's library. */
struct tab_range {
	uint64_t start, end;
};

/* The backend's state. */
struct sym_table {
	struct tab_entry *e; /* by address */
	size_t n;
	const char **pieces; /* each name once (interned): sym_name keys
	                        names by pointer */
	size_t npieces, cap_pieces;
	struct hmap set; /* hash of a name -> the one copy of it */
	struct tab_range *alloc;
	size_t nalloc;
};

static int tab_resolve(struct symbolizer *s, uint64_t addr,
    struct sym_frame *out, int max);
static int tab_in_allocator(struct symbolizer *s, uint64_t pc);
static size_t tab_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits);
static void tab_free(struct symbolizer *s);

static const struct sym_ops tab_ops = {
    .resolve = tab_resolve,
    .in_allocator = tab_in_allocator,
    .build_id = tab_build_id,
    .free = tab_free,
};

/* A name sought: @p n bytes at @p s. */
struct tab_key {
	const char *s;
	size_t n;
};

/* Is @p v (a copy we keep) the name in @p arg? */
static int tab_eq(const void *arg, uint64_t v)
{
	const struct tab_key *k = arg;
	const char *c = (const char *)(uintptr_t)v;

	return strncmp(c, k->s, k->n) == 0 && c[k->n] == '\0';
}

/* The one copy of the name @p s[0..n); NULL when memory runs out. */
static const char *tab_intern(struct sym_table *t, const char *s, size_t n)
{
	struct tab_key k = {s, n};
	uint64_t h = hash_bytes(s, n), *v;
	char *c;

	if ((v = hmap_find(&t->set, h, tab_eq, &k)) != NULL)
		return (const char *)(uintptr_t)*v;
	if ((c = strndup(s, n)) == NULL)
		return NULL;
	if ((v = hmap_add(&t->set, h, tab_eq, &k, NULL)) == NULL) {
		free(c);
		return NULL;
	}
	*v = (uintptr_t)c;
	return c;
}

/*
 * Where the "--" separating @p s's next name is, or NULL. jeprof splits
 * on every "--" ("illegal in function names"), but C++'s operator-- has
 * one: a "--" right after "operator" is the name's.
 */
static const char *tab_sep(const char *s, const char *start)
{
	const char *p;

	for (p = s; (p = strstr(p, "--")) != NULL; p += 2)
		if (p - start < 8 || memcmp(p - 8, "operator", 8) != 0)
			return p;
	return NULL;
}

/* Split @p names ("outer--...--inner") into @p e's pieces, innermost
 * first; -1 when memory runs out. */
static int tab_split(struct sym_table *t, struct tab_entry *e,
    const char *names)
{
	const char *piece[SYM_INLINE_MAX], *p = names, *sep;
	size_t len[SYM_INLINE_MAX];
	int n = 0, i;

	for (; p != NULL; p = sep != NULL ? sep + 2 : NULL) {
		sep = tab_sep(p, names);
		if ((sep != NULL ? (size_t)(sep - p) : strlen(p)) == 0)
			continue; /* "a----b": nothing between */
		/* Deeper than we keep: the innermost ones stay, as a
		 * lookup keeps them. */
		if (n == SYM_INLINE_MAX) {
			memmove(piece, piece + 1, sizeof(piece[0]) * (n - 1));
			memmove(len, len + 1, sizeof(len[0]) * (n - 1));
			n--;
		}
		piece[n] = p;
		len[n++] = sep != NULL ? (size_t)(sep - p) : strlen(p);
	}
	if (hp_grow((void **)&t->pieces, &t->cap_pieces, t->npieces + (size_t)n,
	        sizeof(*t->pieces)) == -1)
		return -1;
	e->first = t->npieces;
	e->n = n;
	for (i = n; i-- > 0;)
		if ((t->pieces[t->npieces++] =
		            tab_intern(t, piece[i], len[i])) == NULL)
			return -1;
	return 0;
}

/*
 * The allocator's library, for sym_in_allocator: without the file we
 * cannot ask whether it defines mallctl, so its path says: an
 * executable mapping, not the program's, whose file name starts
 * "libjemalloc" (every distribution's and jemalloc's own build's name).
 * A jemalloc linked into the program, or renamed, is still cut by the
 * names of its entry points (malloc, operator new, ...).
 */
static int tab_allocator(struct sym_table *t, const struct heap_profile *hp)
{
	const char *main_path = sym_main_path(hp), *base;
	size_t i;

	if ((t->alloc = calloc(hp->nmaps + 1, sizeof(*t->alloc))) == NULL)
		return -1;
	for (i = 0; i < hp->nmaps; i++) {
		const struct hp_map *m = &hp->maps[i];
		if (!sym_reportable(m) ||
		    (main_path != NULL && strcmp(m->path, main_path) == 0))
			continue;
		base = strrchr(m->path, '/') + 1;
		if (strncmp(base, "libjemalloc", 11) != 0)
			continue;
		t->alloc[t->nalloc].start = m->start;
		t->alloc[t->nalloc++].end = m->end;
	}
	return 0;
}

struct symbolizer *sym_new_table(const struct heap_profile *hp, char *err,
    size_t errlen)
{
	struct symbolizer *s;
	struct sym_table *t;
	size_t k;

	if ((s = sym_alloc(&tab_ops, err, errlen)) == NULL)
		return NULL;
	if ((t = s->be = calloc(1, sizeof(*t))) == NULL ||
	    (t->e = calloc(hp->nsyms + 1, sizeof(*t->e))) == NULL ||
	    tab_allocator(t, hp) == -1)
		goto nomem;
	/* hp->syms is sorted, one line per address. */
	for (k = 0; k < hp->nsyms; k++) {
		t->e[k].addr = hp->syms[k].addr;
		if (tab_split(t, &t->e[k], hp->syms[k].names) == -1)
			goto nomem;
	}
	t->n = hp->nsyms;
	return s;
nomem:
	snprintf(err, errlen, "symbolized profile: %s", strerror(ENOMEM));
	sym_free(s);
	return NULL;
}

/* The table's line for @p addr: its chain, with jeprof's marks (every
 * name but the outermost was inlined at that address). */
static int tab_resolve(struct symbolizer *s, uint64_t addr,
    struct sym_frame *out, int max)
{
	struct sym_table *t = s->be;
	const struct tab_entry *e;
	const struct sym_name *nm;
	size_t lo = 0, hi = t->n, mid;
	int i, n = 0;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->e[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->n || t->e[lo].addr != addr)
		return 0;
	e = &t->e[lo];
	for (i = 0; i < e->n && n < max; i++) {
		if ((nm = sym_name(s, t->pieces[e->first + (size_t)i])) == NULL)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].func = i < e->n - 1 ? nm->inl : nm->func;
		out[n].name = nm->full;
		out[n].raw = nm->raw;
		n++;
	}
	return n;
}

/* sym_in_allocator: in a libjemalloc mapping (see tab_allocator). */
static int tab_in_allocator(struct symbolizer *s, uint64_t pc)
{
	struct sym_table *t = s->be;
	size_t i;

	for (i = 0; i < t->nalloc; i++)
		if (pc >= t->alloc[i].start && pc < t->alloc[i].end)
			return 1;
	return 0;
}

/* sym_build_id: a symbolized profile carries none. */
static size_t tab_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits)
{
	(void)s;
	(void)m;
	*bits = NULL;
	return 0;
}

/* What sym_free needs of this backend. */
static void tab_free(struct symbolizer *s)
{
	struct sym_table *t = s->be;
	size_t it;
	uint64_t v;

	if (t == NULL)
		return;
	for (it = 0; hmap_next(&t->set, &it, &v);)
		free((char *)(uintptr_t)v);
	hmap_free(&t->set);
	free(t->pieces);
	free(t->alloc);
	free(t->e);
	free(t);
}

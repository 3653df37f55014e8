/*
 * fold — which functions are the allocator's wrappers, and where a
 * stack's self bytes go once they are folded (see fold.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "heapprof.h"
#include "render.h"

/* Wrappers folded wherever they are the innermost frame, whether or not
 * the rule finds them: the allocation functions of well-known C code
 * bases (git and GNU's xmalloc, GLib, PostgreSQL, redis, OpenSSL, PHP,
 * FFmpeg, nginx, APR, CPython). */
static const char *const fold_default_names[] = {"xmalloc", "xcalloc",
    "xrealloc", "xstrdup", "xstrndup", "xmemdupz", "xzalloc", "g_malloc",
    "g_malloc0", "g_realloc", "g_try_malloc", "g_try_malloc0", "g_malloc_n",
    "g_malloc0_n", "g_realloc_n", "g_slice_alloc", "g_slice_alloc0", "g_strdup",
    "g_strndup", "g_memdup2", "palloc", "palloc0", "repalloc",
    "MemoryContextAlloc", "MemoryContextAllocZero", "zmalloc", "zcalloc",
    "zrealloc", "zmalloc_usable", "zcalloc_usable", "zrealloc_usable",
    "ztrymalloc", "ztrycalloc", "ztryrealloc", "ztrymalloc_usable",
    "ztrycalloc_usable", "ztryrealloc_usable", "zstrdup", "CRYPTO_malloc",
    "CRYPTO_zalloc", "CRYPTO_realloc", "emalloc", "ecalloc", "erealloc",
    "av_malloc", "av_mallocz", "av_realloc", "ngx_alloc", "ngx_calloc",
    "ngx_palloc", "ngx_pnalloc", "ngx_pcalloc", "apr_palloc", "apr_pcalloc",
    "PyMem_Malloc", "PyMem_RawMalloc", "PyObject_Malloc"};

#define NDEFAULT (sizeof(fold_default_names) / sizeof(fold_default_names[0]))

/* One name of a fold_wrappers list into @p l. */
static int list_add(struct fold_list *l, const char *s, size_t n, char *err,
    size_t errlen)
{
	while (n > 0 && isspace((unsigned char)*s))
		s++, n--;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0)
		return 0;
	if (s[0] == '!' && n == 1) {
		snprintf(err, errlen,
		    "fold_wrappers: ! names no function (want !NAME: never "
		    "fold NAME)");
		return -1;
	}
	if (n >= FOLD_NAME_MAX) {
		snprintf(err, errlen,
		    "fold_wrappers: %.40s... is longer than %d bytes", s,
		    FOLD_NAME_MAX - 1);
		return -1;
	}
	if (l->n == FOLD_NAMES_MAX) {
		snprintf(err, errlen, "fold_wrappers: more than %d names",
		    FOLD_NAMES_MAX);
		return -1;
	}
	memcpy(l->name[l->n], s, n);
	l->name[l->n++][n] = '\0';
	return 0;
}

/* fold_wrappers' text to its list (fold.h). */
int fold_parse(const char *text, struct fold_list *l, char *err, size_t errlen)
{
	const char *p = text, *sep;
	size_t n;

	memset(l, 0, sizeof(*l));
	while (isspace((unsigned char)*p))
		p++;
	if (strncmp(p, "off", 3) == 0 &&
	    p[3 + strspn(p + 3, " \t\r\n")] == '\0') {
		l->off = 1;
		return 0;
	}
	sep = strchr(p, ',') != NULL ? "," : " \t\r\n";
	for (; *p != '\0'; p += n + (p[n] != '\0')) {
		n = strcspn(p, sep);
		if (strncmp(p, "off", n) == 0 && n == 3) {
			snprintf(err, errlen,
			    "fold_wrappers: off stands alone (want off, or "
			    "function names)");
			return -1;
		}
		if (list_add(l, p, n, err, errlen) == -1)
			return -1;
	}
	return 0;
}

/* The list as text again. */
void fold_format(const struct fold_list *l, char *buf, size_t len)
{
	size_t i, used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (l->off) {
		snprintf(buf, len, "off");
		return;
	}
	for (i = 0; i < l->n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    i ? ", " : "", l->name[i]);
}

/* Names while the stacks are read: each distinct one an id. */
struct names {
	const char **s; /* the callers' strings, alive during fold_find */
	size_t n, cap;
	struct hmap ix;
};

/* What names_eq compares with. */
struct name_key {
	const char *const *s;
	const char *name;
};

/* Is id @p i the name in @p arg? */
static int names_eq(const void *arg, uint64_t i)
{
	const struct name_key *k = arg;

	return strcmp(k->s[i], k->name) == 0;
}

/* The id of @p name, new if not met yet; -1 when memory runs out. */
static long names_id(struct names *t, const char *name)
{
	struct name_key k;
	uint64_t *slot;
	int added;

	if (hp_grow((void **)&t->s, &t->cap, t->n + 1, sizeof(*t->s)) == -1)
		return -1;
	k.s = t->s;
	k.name = name;
	if ((slot = hmap_add(&t->ix, hash_str(name), names_eq, &k, &added)) ==
	    NULL)
		return -1;
	if (added) {
		*slot = t->n;
		t->s[t->n++] = name;
	}
	return (long)*slot;
}

/* Stacks as ids: stack s is id[off[s]] .. id[off[s + 1] - 1]. */
struct stacks {
	uint32_t *id;
	size_t nid, capid;
	size_t *off;
	size_t n, capoff;
};

/* Append frame @p name to the stack being built. */
static int stacks_push(struct stacks *st, struct names *nm, const char *name)
{
	long id = names_id(nm, name);

	if (id == -1 || id > (long)UINT32_MAX - 1 ||
	    hp_grow((void **)&st->id, &st->capid, st->nid + 1,
	        sizeof(*st->id)) == -1)
		return -1;
	st->id[st->nid++] = (uint32_t)id;
	return 0;
}

/* End the stack being built. */
static int stacks_end(struct stacks *st)
{
	if (hp_grow((void **)&st->off, &st->capoff, st->n + 2,
	        sizeof(*st->off)) == -1)
		return -1;
	if (st->n == 0)
		st->off[0] = 0;
	st->off[++st->n] = st->nid;
	return 0;
}

/* Is @p name on the list @p l or the default one (1), kept by a !NAME
 * of @p l (-1: never folded, whatever the rule or the default list
 * say), or neither (0)? */
static int named(const struct fold_list *l, const char *name)
{
	size_t i;

	for (i = 0; l != NULL && i < l->n; i++)
		if (l->name[i][0] == '!' && strcmp(name, l->name[i] + 1) == 0)
			return -1;
	for (i = 0; i < NDEFAULT; i++)
		if (strcmp(name, fold_default_names[i]) == 0)
			return 1;
	for (i = 0; l != NULL && i < l->n; i++)
		if (strcmp(name, l->name[i]) == 0)
			return 1;
	return 0;
}

/* Record @p name as folded in @p f (copied: the stacks' names go). */
static int fold_add(struct fold *f, const char *name, size_t *cap)
{
	char *c;

	if (hp_grow((void **)&f->name, cap, f->n + 1, sizeof(*f->name)) == -1 ||
	    (c = strdup(name)) == NULL)
		return -1;
	f->name[f->n++] = c;
	return 0;
}

/* Per name, while a pass looks at the stacks. */
struct fn_state {
	unsigned char folded, named, kept, lead, inner, helper;
	unsigned char direct, via; /* innermost itself; over a helper */
	size_t callers;  /* distinct callers where it is the innermost */
	uint32_t caller; /* the last of them */
	uint32_t parent; /* a helper's one caller */
};

/* The rule, pass after pass, over stacks of ids (see fold.h). A
 * function always innermost but called from one place is its caller's
 * helper: it stays, unless that caller is folded (a two-level wrapper,
 * xmalloc -> xmalloc_impl -> malloc), so each pass looks past the
 * helpers found so far. */
static int fold_compute(struct fold *f, const struct names *nm,
    const struct stacks *st, const struct fold_list *l)
{
	struct fn_state *fs;
	struct hmap pairs = {0};
	size_t cap = 0, s, i, lead, hi, more, pass;
	uint64_t key;
	int added, via, alone, r = -1;

	if ((fs = calloc(nm->n + 1, sizeof(*fs))) == NULL)
		return -1;
	for (i = 0; i < nm->n; i++) {
		int how = named(l, nm->s[i]);

		fs[i].named = how == 1;
		fs[i].kept = how == -1;
	}
	for (pass = 0; pass < FOLD_PASSES_MAX; pass++) {
		for (i = 0; i < nm->n; i++) {
			fs[i].lead = fs[i].inner = 0;
			fs[i].direct = fs[i].via = 0;
			fs[i].callers = 0;
		}
		hmap_clear(&pairs);
		for (s = 0; s < st->n; s++) {
			hi = st->off[s + 1];
			via = 0;
			for (lead = st->off[s]; lead < hi &&
			     (fs[st->id[lead]].folded ||
			         fs[st->id[lead]].helper);
			     lead++)
				via |= fs[st->id[lead]].helper;
			if (lead == hi)
				continue;
			fs[st->id[lead]].lead = 1;
			if (via)
				fs[st->id[lead]].via = 1;
			else
				fs[st->id[lead]].direct = 1;
			/* Deeper in, it calls something else that
			 * allocates: not a wrapper (recursion too). */
			for (i = lead + 1; i < hi; i++)
				fs[st->id[i]].inner = 1;
			if (lead + 1 == hi)
				continue;
			key = (uint64_t)st->id[lead] << 32 |
			    ((uint64_t)st->id[lead + 1] + 1);
			if (hmap_put(&pairs, key, &added) == NULL)
				goto out;
			if (added) {
				fs[st->id[lead]].callers++;
				fs[st->id[lead]].caller = st->id[lead + 1];
			}
		}
		more = 0;
		for (i = 0; i < nm->n; i++) {
			if (fs[i].folded || fs[i].helper || fs[i].kept ||
			    !fs[i].lead || fs[i].callers == 0)
				continue;
			/* Always innermost, itself or over its helpers,
			 * not both: a function that allocates itself and
			 * through a helper too is sometimes not a leaf. */
			alone = !fs[i].inner && !(fs[i].direct && fs[i].via);
			if (fs[i].named ||
			    (alone && fs[i].callers >= FOLD_MIN_CALLERS)) {
				if (fold_add(f, nm->s[i], &cap) == -1)
					goto out;
				fs[i].folded = 1;
				more++;
			} else if (alone && fs[i].callers == 1) {
				fs[i].helper = 1;
				fs[i].parent = fs[i].caller;
				more++;
			}
		}
		if (more == 0)
			break;
	}
	/* A helper goes with its caller, when that is folded or kept (a
	 * kept function is the site: its private helpers are its own). */
	do {
		more = 0;
		for (i = 0; i < nm->n; i++)
			if (fs[i].helper && !fs[i].folded &&
			    (fs[fs[i].parent].folded ||
			        fs[fs[i].parent].kept)) {
				if (fold_add(f, nm->s[i], &cap) == -1)
					goto out;
				fs[i].folded = 1;
				more++;
			}
	} while (more > 0);
	r = 0;
out:
	hmap_free(&pairs);
	free(fs);
	return r;
}

/* Is folded name @p i the one in @p arg? */
static int fold_eq(const void *arg, uint64_t i)
{
	const struct name_key *k = arg;

	return strcmp(k->s[i], k->name) == 0;
}

/* Index the folded names for fold_is. */
static int fold_index(struct fold *f)
{
	struct name_key k = {f->name, NULL};
	uint64_t *slot;
	size_t i;
	int added;

	for (i = 0; i < f->n; i++) {
		k.name = f->name[i];
		if ((slot = hmap_add(&f->ix, hash_str(k.name), fold_eq, &k,
		         &added)) == NULL)
			return -1;
		*slot = i;
	}
	return 0;
}

/* What fold_find and fold_find_names built to fold by: the names and
 * the stacks of ids. */
static void build_free(struct names *nm, struct stacks *st)
{
	free(nm->s);
	hmap_free(&nm->ix);
	free(st->id);
	free(st->off);
}

/* The rule over stacks of ids, and the index; frees what it built. */
static int fold_run(struct fold *f, struct names *nm, struct stacks *st,
    const struct fold_list *l)
{
	int r = fold_compute(f, nm, st, l) == 0 && fold_index(f) == 0 ? 0 : -1;

	build_free(nm, st);
	if (r == -1) {
		fold_free(f);
		errno = ENOMEM;
	}
	return r;
}

/* @p f emptied; 1 when @p l turns folding off (f->off set): nothing
 * more to find. */
static int fold_begin(struct fold *f, const struct fold_list *l)
{
	memset(f, 0, sizeof(*f));
	if (l != NULL && l->off) {
		f->off = 1;
		return 1;
	}
	return 0;
}

int fold_find(struct fold *f, const struct heap_profile *hp,
    struct symbolizer *sym, const struct fold_list *l)
{
	struct render_view v = {0};
	struct names nm = {0};
	struct stacks st = {0};
	size_t s, i;

	if (fold_begin(f, l))
		return 0;
	for (s = 0; s < hp->nstacks; s++) {
		if (render_view_stack(&v, &hp->stacks[s], sym) == -1)
			goto fail;
		for (i = 0; i < v.n; i++)
			if (stacks_push(&st, &nm, v.f[i].f.func) == -1)
				goto fail;
		if (stacks_end(&st) == -1)
			goto fail;
	}
	/* The names are the symbolizer's: alive as long as it is. */
	render_view_free(&v);
	return fold_run(f, &nm, &st, l);
fail:
	render_view_free(&v);
	build_free(&nm, &st);
	errno = ENOMEM;
	return -1;
}

int fold_find_names(struct fold *f, const char *const *const *frames,
    const size_t *depth, size_t nstacks, const struct fold_list *l)
{
	struct names nm = {0};
	struct stacks st = {0};
	size_t s, i;

	if (fold_begin(f, l))
		return 0;
	for (s = 0; s < nstacks; s++) {
		for (i = 0; i < depth[s]; i++)
			if (stacks_push(&st, &nm, frames[s][i]) == -1)
				goto fail;
		if (stacks_end(&st) == -1)
			goto fail;
	}
	return fold_run(f, &nm, &st, l);
fail:
	build_free(&nm, &st);
	errno = ENOMEM;
	return -1;
}

int fold_is(const struct fold *f, const char *name)
{
	struct name_key k = {f->name, name};

	return f->n > 0 &&
	    hmap_find(&f->ix, hash_str(name), fold_eq, &k) != NULL;
}

size_t fold_self(const struct fold *f, const struct render_view *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (!fold_is(f, v->f[i].f.func))
			return i;
	return v->n > 0 ? v->n - 1 : 0;
}

size_t fold_self_names(const struct fold *f, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!fold_is(f, names[i]))
			return i;
	return n > 0 ? n - 1 : 0;
}

const char *fold_names(const struct fold *f, char *buf, size_t len)
{
	size_t i, used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < f->n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    i ? ", " : "", f->name[i]);
	return buf;
}

void fold_note(FILE *out, const struct fold *f, const char *prefix)
{
	size_t i;

	if (f->n == 0)
		return;
	fprintf(out,
	    "%sFolded allocation wrappers into their callers: ", prefix);
	for (i = 0; i < f->n; i++)
		fprintf(out, "%s%s", i ? ", " : "", f->name[i]);
	fprintf(out, " (fold_wrappers to change)\n");
}

void fold_free(struct fold *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free((void *)f->name[i]);
	free(f->name);
	hmap_free(&f->ix);
	memset(f, 0, sizeof(*f));
}

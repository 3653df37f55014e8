/*
 * merge — many processes' heap profiles of one program as one: each
 * frame moved into the first profile's address space by (object, offset
 * in its file), then equal stacks summed. See merge.h for why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"

/* Where an object only later profiles map is put: past every mapping
 * so far, at this alignment (a huge page: any object's own fits). */
#define MERGE_ALIGN ((uint64_t)2 << 20)

/* An object's build ID as hex, at most this many bytes of it. */
#define MERGE_ID_MAX 64

/* One object a profile maps: what it is known by across profiles. */
struct mg_key {
	char *key;  /* "b:<build ID>" or "p:<path>"; NULL: no file */
	char *stem; /* its file name up to ".so", for the build warning */
	char id[2 * MERGE_ID_MAX + 1]; /* its build ID as hex, "" if none */
};

/* The merged profile as it is built. */
struct mg {
	struct hp_map *maps;
	char **mkey; /* each merged mapping's object key, NULL for none */
	size_t *path_off;
	size_t nmaps, cap_maps, cap_mkey, cap_off;
	char *text;
	size_t ntext, cap_text;
	uint64_t top; /* the end of the highest mapping so far */
	struct hp_stack *st;
	size_t *pc_off; /* each stack's frames in pcs, until the end */
	size_t nst, cap_st, cap_pc_off;
	uint64_t *pcs;
	size_t npcs, cap_pcs;
	struct hmap ix; /* a stack's hash -> its index */
	/* The build warning: the first difference, and how many. */
	struct mg_seen {
		char *stem, *name, *path;
		char id[2 * MERGE_ID_MAX + 1];
		int differs;
	} * seen;
	size_t nseen, cap_seen, ndiffer;
	char first_diff[1024];
};

/* What mg_same_stack compares with. */
struct mg_find {
	const struct mg *g;
	const uint64_t *pc;
	size_t depth;
};

static int mg_same_stack(const void *arg, uint64_t i)
{
	const struct mg_find *f = arg;
	const struct hp_stack *s = &f->g->st[i];

	return s->depth == f->depth &&
	    memcmp(f->g->pcs + f->g->pc_off[i], f->pc,
	        f->depth * sizeof(*f->pc)) == 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The file name of @p path up to ".so" (libfoo.so.1.2 -> libfoo),
 * malloc'd; NULL when memory runs out. */
static char *mg_stem(const char *path)
{
	const char *b = strrchr(path, '/'), *so;
	size_t len;

	b = b != NULL ? b + 1 : path;
	len = strlen(b);
	for (so = strstr(b, ".so"); so != NULL; so = strstr(so + 1, ".so"))
		if (so[3] == '\0' || so[3] == '.') {
			len = (size_t)(so - b);
			break;
		}
	return strndup(b, len);
}

/* Each mapping of @p hp as known across profiles, into @p k (nmaps of
 * them): its build ID through @p sym. -1 when memory runs out. */
static int mg_keys(const struct heap_profile *hp, struct symbolizer *sym,
    struct mg_key *k)
{
	const unsigned char *bits;
	size_t i, j, n;

	for (i = 0; i < hp->nmaps; i++) {
		const struct hp_map *m = &hp->maps[i];

		if (m->path[0] != '/')
			continue;
		n = sym_build_id(sym, m, &bits);
		if (n > MERGE_ID_MAX)
			n = MERGE_ID_MAX;
		for (j = 0; j < n; j++)
			snprintf(k[i].id + 2 * j, 3, "%02x", bits[j]);
		k[i].id[2 * n] = '\0';
		if (n > 0 ? asprintf(&k[i].key, "b:%s", k[i].id) == -1
		          : asprintf(&k[i].key, "p:%s", m->path) == -1) {
			k[i].key = NULL;
			return -1;
		}
		if ((k[i].stem = mg_stem(m->path)) == NULL)
			return -1;
	}
	return 0;
}

/* Note object @p k of profile @p name (its main program when @p main)
 * for the build warning: another build ID than the one an earlier
 * profile had for the same name is a difference. -1 when memory runs
 * out. */
static int mg_note(struct mg *g, const struct mg_key *k, const char *path,
    int main, const char *name)
{
	const char *stem = main ? "" : k->stem; /* "": the main program */
	struct mg_seen *s;
	size_t i;

	if (k->id[0] == '\0')
		return 0;
	for (i = 0; i < g->nseen; i++) {
		s = &g->seen[i];
		if (strcmp(s->stem, stem) != 0)
			continue;
		if (strcmp(s->id, k->id) == 0 || s->differs)
			return 0;
		s->differs = 1;
		if (g->ndiffer++ == 0)
			snprintf(g->first_diff, sizeof(g->first_diff),
			    "%s%s (build %.16s) in %s but %s (build %.16s) "
			    "in %s",
			    main ? "the main program is " : "", s->path, s->id,
			    s->name, path, k->id, name);
		return 0;
	}
	if (hp_grow((void **)&g->seen, &g->cap_seen, g->nseen + 1,
	        sizeof(*g->seen)) == -1)
		return -1;
	s = &g->seen[g->nseen];
	memset(s, 0, sizeof(*s));
	if ((s->stem = strdup(stem)) == NULL ||
	    (s->name = strdup(name)) == NULL ||
	    (s->path = strdup(path)) == NULL) {
		free(s->stem);
		free(s->name);
		return -1;
	}
	memcpy(s->id, k->id, sizeof(s->id));
	g->nseen++;
	return 0;
}

/* Add mapping @p m moved by @p delta, of object @p key, to the merged
 * mappings. -1 when memory runs out. */
static int mg_add_map(struct mg *g, const struct hp_map *m, uint64_t delta,
    const char *key)
{
	size_t len = strlen(m->path) + 1;
	struct hp_map *d;

	if (hp_grow((void **)&g->maps, &g->cap_maps, g->nmaps + 1,
	        sizeof(*g->maps)) == -1 ||
	    hp_grow((void **)&g->mkey, &g->cap_mkey, g->nmaps + 1,
	        sizeof(*g->mkey)) == -1 ||
	    hp_grow((void **)&g->path_off, &g->cap_off, g->nmaps + 1,
	        sizeof(*g->path_off)) == -1 ||
	    hp_grow((void **)&g->text, &g->cap_text, g->ntext + len, 1) == -1)
		return -1;
	g->mkey[g->nmaps] = NULL;
	if (key != NULL && (g->mkey[g->nmaps] = strdup(key)) == NULL)
		return -1;
	memcpy(g->text + g->ntext, m->path, len);
	g->path_off[g->nmaps] = g->ntext;
	g->ntext += len;
	d = &g->maps[g->nmaps++];
	*d = *m;
	d->start += delta;
	d->end += delta;
	d->path = NULL; /* into text, once it stops moving */
	if (d->end > g->top)
		g->top = d->end;
	return 0;
}

/* The merged mapping of object @p key whose part of the file holds
 * @p m's, or NULL. */
static const struct hp_map *mg_find_map(const struct mg *g, const char *key,
    const struct hp_map *m)
{
	size_t i;

	for (i = 0; i < g->nmaps; i++) {
		const struct hp_map *t = &g->maps[i];

		if (g->mkey[i] != NULL && strcmp(g->mkey[i], key) == 0 &&
		    t->offset <= m->offset &&
		    m->offset + (m->end - m->start) <=
		        t->offset + (t->end - t->start))
			return t;
	}
	return NULL;
}

/* The mapping of @p hp (sorted by start in @p by) that holds @p pc, or
 * -1. */
static long mg_map_of(const struct heap_profile *hp, const size_t *by,
    uint64_t pc)
{
	size_t lo = 0, hi = hp->nmaps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (hp->maps[by[mid]].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < hp->nmaps && hp->maps[by[lo]].start <= pc ? (long)by[lo]
	                                                      : -1;
}

static const struct heap_profile *sort_hp;

static int by_start(const void *a, const void *b)
{
	uint64_t x = sort_hp->maps[*(const size_t *)a].start,
	         y = sort_hp->maps[*(const size_t *)b].start;

	return x < y ? -1 : x > y;
}

/* Add stack @p s of @p hp, its frames moved by @p delta of the mapping
 * each is in (@p by: the mappings by start), to the merged stacks. -1
 * when memory runs out. */
static int mg_add_stack(struct mg *g, const struct heap_profile *hp,
    const size_t *by, const uint64_t *delta, const struct hp_stack *s,
    uint64_t *tmp)
{
	struct mg_find f = {g, tmp, s->depth};
	struct hp_stack *d;
	uint64_t *v, h = 0;
	size_t i;
	long m;
	int added;

	for (i = 0; i < s->depth; i++) {
		/* A return address may end its mapping: look it up at - 1. */
		m = mg_map_of(hp, by,
		    i == 0 || s->pc[i] == 0 ? s->pc[i] : s->pc[i] - 1);
		tmp[i] = s->pc[i] + (m >= 0 ? delta[m] : 0);
		h = hash_int(h ^ tmp[i]);
	}
	if ((v = hmap_add(&g->ix, h, mg_same_stack, &f, &added)) == NULL)
		return -1;
	if (added) {
		if (hp_grow((void **)&g->st, &g->cap_st, g->nst + 1,
		        sizeof(*g->st)) == -1 ||
		    hp_grow((void **)&g->pc_off, &g->cap_pc_off, g->nst + 1,
		        sizeof(*g->pc_off)) == -1 ||
		    hp_grow((void **)&g->pcs, &g->cap_pcs, g->npcs + s->depth,
		        sizeof(*g->pcs)) == -1)
			return -1;
		memcpy(g->pcs + g->npcs, tmp, s->depth * sizeof(*tmp));
		g->pc_off[g->nst] = g->npcs;
		g->npcs += s->depth;
		d = &g->st[g->nst];
		memset(d, 0, sizeof(*d));
		d->depth = s->depth;
		*v = g->nst++;
	}
	d = &g->st[*v];
	d->objs = sat_add(d->objs, s->objs);
	d->bytes = sat_add(d->bytes, s->bytes);
	d->accum_objs = sat_add(d->accum_objs, s->accum_objs);
	d->accum_bytes = sat_add(d->accum_bytes, s->accum_bytes);
	d->u_objs += s->u_objs;
	d->u_bytes += s->u_bytes;
	d->u_accum_objs += s->u_accum_objs;
	d->u_accum_bytes += s->u_accum_bytes;
	return 0;
}

/*
 * Profile @p hp (the @p i-th, named @p name) into @p g: its objects'
 * mappings found among the merged ones or added past them, then its
 * stacks moved and summed. -1 with @p err.
 */
static int mg_one(struct mg *g, const struct heap_profile *hp, size_t i,
    const char *name, const char *binary, const struct sym_debug *dbg,
    char *err, size_t errlen)
{
	struct symbolizer *sym;
	struct mg_key *k = NULL;
	uint64_t *delta = NULL, *tmp = NULL, lo, hi, d;
	size_t *by = NULL, j, l, maxdepth = 1;
	const struct hp_map *t;
	int main_seen = 0, r = -1;

	if ((sym = sym_new_debug(hp, binary, dbg, err, errlen)) == NULL)
		return -1;
	for (j = 0; j < hp->nstacks; j++)
		if (hp->stacks[j].depth > maxdepth)
			maxdepth = hp->stacks[j].depth;
	if ((k = calloc(hp->nmaps + 1, sizeof(*k))) == NULL ||
	    (delta = calloc(hp->nmaps + 1, sizeof(*delta))) == NULL ||
	    (by = calloc(hp->nmaps + 1, sizeof(*by))) == NULL ||
	    (tmp = calloc(maxdepth, sizeof(*tmp))) == NULL ||
	    mg_keys(hp, sym, k) == -1)
		goto nomem;
	for (j = 0; j < hp->nmaps; j++) {
		if (k[j].key == NULL)
			continue;
		if (mg_note(g, &k[j], hp->maps[j].path, !main_seen, name) == -1)
			goto nomem;
		main_seen = 1;
	}
	/* Each mapping's move: none for the first profile's (they are the
	 * merged ones) and for those of no file; else to where the merged
	 * profile has that part of the object, or, for an object it does
	 * not have, with the rest of the object past the top. */
	for (j = 0; j < hp->nmaps; j++) {
		if (i == 0) {
			if (mg_add_map(g, &hp->maps[j], 0, k[j].key) == -1)
				goto nomem;
			continue;
		}
		if (k[j].key == NULL)
			continue;
		if ((t = mg_find_map(g, k[j].key, &hp->maps[j])) != NULL) {
			delta[j] = (t->start - t->offset) -
			    (hp->maps[j].start - hp->maps[j].offset);
			continue;
		}
		/* A new object: all its mappings in this profile, moved as
		 * one past the top. */
		lo = UINT64_MAX;
		hi = 0;
		for (l = 0; l < hp->nmaps; l++)
			if (k[l].key != NULL &&
			    strcmp(k[l].key, k[j].key) == 0) {
				if (hp->maps[l].start < lo)
					lo = hp->maps[l].start;
				if (hp->maps[l].end > hi)
					hi = hp->maps[l].end;
			}
		d = ((g->top + MERGE_ALIGN - 1) & ~(MERGE_ALIGN - 1)) - lo;
		for (l = 0; l < hp->nmaps; l++)
			if (k[l].key != NULL &&
			    strcmp(k[l].key, k[j].key) == 0) {
				delta[l] = d;
				if (mg_add_map(g, &hp->maps[l], d, k[l].key) ==
				    -1)
					goto nomem;
			}
	}
	for (j = 0; j < hp->nmaps; j++)
		by[j] = j;
	sort_hp = hp;
	qsort(by, hp->nmaps, sizeof(*by), by_start);
	for (j = 0; j < hp->nstacks; j++)
		if (mg_add_stack(g, hp, by, delta, &hp->stacks[j], tmp) == -1)
			goto nomem;
	r = 0;
	goto out;
nomem:
	snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
out:
	for (j = 0; k != NULL && j < hp->nmaps; j++) {
		free(k[j].key);
		free(k[j].stem);
	}
	free(k);
	free(delta);
	free(by);
	free(tmp);
	sym_free(sym);
	return r;
}

static void mg_free(struct mg *g)
{
	size_t i;

	for (i = 0; i < g->nmaps; i++)
		free(g->mkey[i]);
	for (i = 0; i < g->nseen; i++) {
		free(g->seen[i].stem);
		free(g->seen[i].name);
		free(g->seen[i].path);
	}
	free(g->seen);
	free(g->mkey);
	free(g->path_off);
	free(g->maps);
	free(g->text);
	free(g->st);
	free(g->pc_off);
	free(g->pcs);
	hmap_free(&g->ix);
}

int heapprof_merge(struct heap_profile *const *in, const char *const *names,
    size_t n, const char *binary, const struct sym_debug *dbg,
    struct heap_profile *out, char *warn, size_t warnlen, char *err,
    size_t errlen)
{
	struct mg g = {0};
	size_t i;

	memset(out, 0, sizeof(*out));
	warn[0] = '\0';
	if (n == 0) {
		snprintf(err, errlen, "no profiles to merge");
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (in[i]->symbolized || in[i]->diff) {
			snprintf(err, errlen,
			    "%s: a %s profile cannot be merged (its addresses "
			    "have no mappings to line them up by): give the "
			    "raw heap_v2 dumps",
			    names[i],
			    in[i]->diff ? "difference" : "symbolized");
			return -1;
		}
		if (mg_one(&g, in[i], i, names[i], binary, dbg, err, errlen) ==
		    -1) {
			mg_free(&g);
			return -1;
		}
		out->u_objs += in[i]->u_objs;
		out->u_bytes += in[i]->u_bytes;
	}
	if (g.ndiffer > 0)
		snprintf(warn, warnlen,
		    "the dumps are of different builds: %s%s; frames of "
		    "different builds are summed by name only",
		    g.first_diff, g.ndiffer > 1 ? " (and other objects)" : "");
	for (i = 0; i < g.nmaps; i++)
		g.maps[i].path = g.text + g.path_off[i];
	for (i = 0; i < g.nst; i++)
		g.st[i].pc = g.pcs + g.pc_off[i];
	out->period = in[0]->period;
	out->maps = g.maps;
	out->nmaps = g.nmaps;
	out->text = g.text;
	out->stacks = g.st;
	out->nstacks = g.nst;
	out->pcs = g.pcs;
	out->npcs = g.npcs;
	g.maps = NULL;
	g.text = NULL;
	g.st = NULL;
	g.pcs = NULL;
	mg_free(&g);
	return 0;
}

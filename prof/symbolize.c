/*
 * The symbolizer's shared part: the per-pc cache (a profile's stacks
 * share most of their addresses), names in the forms people read, the
 * demangler, and the choice of backend. Where the frames come from is a
 * backend's business (struct sym_ops): libdwfl (symbolize_dwfl.c, when
 * built with elfutils), our own ELF symbol-table reader
 * (symbolize_elf.c), or the table of a symbolized profile
 * (symbolize_table.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize_impl.h"

/* One looked-up pc: its frames, in the frames array. */
struct sym_entry {
	uint64_t pc; /* with the leaf bit in bit 0 of key */
	uint64_t key;
	size_t first;
	int n;
};

/* The C++ demangler: the one set, or libstdc++'s __cxa_demangle where
 * the process has it (a C++ host). A C host needs no C++ runtime: it
 * keeps names as the objects have them. */
static sym_demangle_fn *sym_demangler;

void sym_set_demangler(sym_demangle_fn *fn)
{
	sym_demangler = fn;
}

const char *sym_backend(void)
{
#ifdef JM4LW_HAVE_LIBDW
	return "libdw";
#else
	return "elf";
#endif
}

struct symbolizer *sym_alloc(const struct sym_ops *ops, char *err,
    size_t errlen)
{
	struct symbolizer *s;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errlen, "symbolizer: %s", strerror(ENOMEM));
		return NULL;
	}
	s->ops = ops;
	s->demangle = sym_demangler != NULL
	    ? sym_demangler
	    : (sym_demangle_fn *)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	return s;
}

int sym_reportable(const struct hp_map *m)
{
	return m->exec && m->path[0] == '/';
}

const char *sym_main_path(const struct heap_profile *hp)
{
	size_t i;

	for (i = 0; i < hp->nmaps; i++)
		if (hp->maps[i].path[0] == '/')
			return hp->maps[i].path;
	return NULL;
}

/* The objects' backend this build was made with. */
static struct symbolizer *sym_objects(const struct heap_profile *hp,
    const char *binary, int self, char *err, size_t errlen)
{
#ifdef JM4LW_HAVE_LIBDW
	return sym_dwfl_open(hp, binary, self, err, errlen);
#else
	return sym_elf_open(hp, binary, self, err, errlen);
#endif
}

const char *sym_object_path(const struct heap_profile *hp, size_t i,
    const char *binary, int self, char *buf, size_t len)
{
	const struct hp_map *m = &hp->maps[i];
	const char *main_path = sym_main_path(hp), *path;
	size_t j;

	if (!sym_reportable(m))
		return NULL;
	for (j = 0; j < i; j++)
		if (sym_reportable(&hp->maps[j]) &&
		    strcmp(hp->maps[j].path, m->path) == 0)
			return NULL;
	path = binary != NULL && main_path != NULL &&
	        strcmp(m->path, main_path) == 0
	    ? binary
	    : m->path;
	if (self) {
		snprintf(buf, len, "/proc/self/map_files/%llx-%llx",
		    (unsigned long long)m->start, (unsigned long long)m->end);
		if (access(buf, R_OK) == 0)
			path = buf;
	}
	return path;
}

void sym_want_lines(struct symbolizer *s)
{
	if (s->lines)
		return;
	s->lines = 1;
	if (s->cap > 0)
		memset(s->tab, 0, s->cap * sizeof(*s->tab));
	s->used = 0;
	s->nframes = 0;
}

struct symbolizer *sym_new(const struct heap_profile *hp, const char *binary,
    char *err, size_t errlen)
{
	/* A symbolized profile names its own addresses: the objects it was
	 * made from need not be on this machine. */
	if (hp->symbolized)
		return sym_new_table(hp, err, errlen);
	return sym_objects(hp, binary, 0, err, errlen);
}

struct symbolizer *sym_new_self(const struct heap_profile *hp, char *err,
    size_t errlen)
{
	return sym_objects(hp, NULL, 1, err, errlen);
}

size_t sym_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits)
{
	return s->ops->build_id(s, m, bits);
}

int sym_in_allocator(struct symbolizer *s, uint64_t pc)
{
	return s->ops->in_allocator(s, pc);
}

void sym_free(struct symbolizer *s)
{
	size_t i;

	if (s == NULL)
		return;
	if (s->ops != NULL && s->ops->free != NULL)
		s->ops->free(s);
	for (i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	free(s->strs);
	free(s->tab);
	free(s->frames);
	free(s->names);
	free(s);
}

const char *sym_keep(struct symbolizer *s, const char *str)
{
	if (hp_grow((void **)&s->strs, &s->cap_strs, s->nstrs + 1,
	        sizeof(*s->strs)) == -1)
		return "?";
	if ((s->strs[s->nstrs] = strdup(str)) == NULL)
		return "?";
	return s->strs[s->nstrs++];
}

/* Where @p name's parameter list starts: the '(' matching its last ')',
 * so "ns::f<int>(char*) const" gives "(char*) const"; NULL if none, or
 * if that is a namespace's "(anonymous namespace)". */
static const char *sym_params(const char *name)
{
	const char *p = strrchr(name, ')'), *q;
	int depth = 0;

	if (p == NULL || p == name)
		return NULL;
	/* Only a list that ends the name, but for its qualifiers: a name
	 * ending in template arguments ("f<g()::<lambda()> >") has none. */
	for (q = p + 1; *q != '\0'; q++)
		if (strchr(" constvlaier&", *q) == NULL)
			return NULL;
	for (; p >= name; p--) {
		if (*p == ')')
			depth++;
		else if (*p == '(' && --depth == 0)
			return p == name ||
			        strncmp(p, "(anonymous namespace)", 21) == 0
			    ? NULL
			    : p;
	}
	return NULL;
}

/*
 * Make @p n's forms of its raw name; -1 when memory runs out. The short
 * form is the full one without its parameters, whether or not it was
 * demangled here: a symbolized profile carries full names already
 * demangled, and must read back to the same short names.
 */
static int sym_name_make(struct symbolizer *s, struct sym_name *n)
{
	char *dem = NULL, buf[1024];
	const char *full = n->raw, *par;
	int status = -1;

	if (s->demangle != NULL && strncmp(n->raw, "_Z", 2) == 0)
		dem = s->demangle(n->raw, NULL, NULL, &status);
	if (dem != NULL && status == 0)
		full = dem;
	n->full = full == n->raw ? n->raw : sym_keep(s, full);
	if ((par = sym_params(full)) != NULL)
		snprintf(buf, sizeof(buf), "%.*s", (int)(par - full), full);
	else
		snprintf(buf, sizeof(buf), "%s", full);
	free(dem);
	n->func = strcmp(buf, n->full) == 0 ? n->full : sym_keep(s, buf);
	snprintf(buf, sizeof(buf), "%s (inline)", n->func);
	n->inl = sym_keep(s, buf);
	return 0;
}

const struct sym_name *sym_name(struct symbolizer *s, const char *raw)
{
	struct sym_name *t;
	size_t h, i, cap;

	if ((s->nnames + 1) * 2 > s->cap_names) {
		cap = s->cap_names ? s->cap_names * 2 : 1024;
		if ((t = calloc(cap, sizeof(*t))) == NULL)
			return NULL;
		for (i = 0; i < s->cap_names; i++) {
			if (s->names[i].raw == NULL)
				continue;
			for (h = ((uintptr_t)s->names[i].raw >> 3) *
			             0x9e3779b97f4a7c15ull >>
			         20;
			     t[h & (cap - 1)].raw != NULL; h++)
				;
			t[h & (cap - 1)] = s->names[i];
		}
		free(s->names);
		s->names = t;
		s->cap_names = cap;
	}
	for (h = ((uintptr_t)raw >> 3) * 0x9e3779b97f4a7c15ull >> 20;
	     (t = &s->names[h & (s->cap_names - 1)])->raw != NULL; h++)
		if (t->raw == raw)
			return t;
	t->raw = raw;
	s->nnames++;
	sym_name_make(s, t);
	return t;
}

/* Grow the cache to twice its size. */
static int sym_rehash(struct symbolizer *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024, i, h;
	struct sym_entry *t;

	if ((t = calloc(cap, sizeof(*t))) == NULL)
		return -1;
	for (i = 0; i < s->cap; i++) {
		if (s->tab[i].n == 0)
			continue;
		for (h = (s->tab[i].key * 0x9e3779b97f4a7c15ull) >> 20;
		     t[h & (cap - 1)].n != 0; h++)
			;
		t[h & (cap - 1)] = s->tab[i];
	}
	free(s->tab);
	s->tab = t;
	s->cap = cap;
	return 0;
}

int sym_lookup(struct symbolizer *s, uint64_t pc, int leaf,
    struct sym_frame *out, int max)
{
	struct sym_frame tmp[SYM_INLINE_MAX];
	uint64_t key = pc << 1 | (leaf != 0), addr;
	struct sym_entry *e;
	char hex[32];
	size_t h;
	int n, i;

	if (s->cap > 0)
		for (h = (key * 0x9e3779b97f4a7c15ull) >> 20;
		     (e = &s->tab[h & (s->cap - 1)])->n != 0; h++)
			if (e->key == key) {
				n = e->n < max ? e->n : max;
				memcpy(out, s->frames + e->first,
				    (size_t)n * sizeof(*out));
				return n;
			}
	/* A return address points past its call: look at the call. */
	addr = leaf || pc == 0 ? pc : pc - 1;
	if ((n = s->ops->resolve(s, addr, tmp, SYM_INLINE_MAX)) <= 0) {
		/* Nothing names it: its address, as jeprof shows it. */
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
		memset(&tmp[0], 0, sizeof(tmp[0]));
		tmp[0].func = tmp[0].name = tmp[0].raw = sym_keep(s, hex);
		n = 1;
	}
	if ((s->used + 1) * 2 > s->cap && sym_rehash(s) == -1)
		goto nocache;
	if (hp_grow((void **)&s->frames, &s->cap_frames, s->nframes + (size_t)n,
	        sizeof(*s->frames)) == -1)
		goto nocache;
	memcpy(s->frames + s->nframes, tmp, (size_t)n * sizeof(*tmp));
	for (h = (key * 0x9e3779b97f4a7c15ull) >> 20;
	     s->tab[h & (s->cap - 1)].n != 0; h++)
		;
	e = &s->tab[h & (s->cap - 1)];
	e->key = key;
	e->pc = pc;
	e->first = s->nframes;
	e->n = n;
	s->nframes += (size_t)n;
	s->used++;
nocache:
	for (i = 0; i < n && i < max; i++)
		out[i] = tmp[i];
	return i;
}

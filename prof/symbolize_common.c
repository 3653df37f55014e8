/*
 * What the symbolizer's front (symbolize.c) and its backends
 * (symbolize_dwfl.c, symbolize_elf.c, symbolize_table.c) share: the
 * symbolizer itself (made, freed, the strings it keeps), names in the
 * three forms people read, the C++ demangler, and which objects of a
 * profile a backend opens. Below both: it calls neither.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef JM4LW_HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

#include "symbolize_impl.h"

/* The C++ demangler: the one set, else libiberty's (built with it), else
 * libstdc++'s __cxa_demangle where the process has it (a C++ host). */
static sym_demangle_fn *sym_demangler;

#ifdef JM4LW_HAVE_LIBIBERTY
/*
 * libiberty's demangler in __cxa_demangle's shape, with c++filt's
 * reading of parameters and qualifiers (DMGL_PARAMS | DMGL_ANSI). It
 * reads what GCC 12's __cxa_demangle refuses (a generic lambda over a
 * parameter pack), as c++filt does. cplus_demangle_v3, not
 * cplus_demangle: the latter allocates through xmalloc, which exits the
 * process when memory runs out, and the module never exits its host;
 * the _v3 one (cp-demangle.c) uses malloc and returns NULL.
 */
static char *sym_iberty_demangle(const char *mangled, char *buf, size_t *len,
    int *status)
{
	char *d = cplus_demangle_v3(mangled, DMGL_PARAMS | DMGL_ANSI);

	(void)buf;
	(void)len;
	*status = d != NULL ? 0 : -2;
	return d;
}
#endif

/* The demangler of the symbolizers made from now on. */
void sym_set_demangler(sym_demangle_fn *fn)
{
	sym_demangler = fn;
}

/* A symbolizer for a backend, with the demangler of the moment. */
struct symbolizer *sym_alloc(const struct sym_ops *ops, char *err,
    size_t errlen)
{
	struct symbolizer *s;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errlen, "symbolizer: %s", strerror(ENOMEM));
		return NULL;
	}
	s->ops = ops;
	s->demangle = sym_demangler;
#ifdef JM4LW_HAVE_LIBIBERTY
	if (s->demangle == NULL)
		s->demangle = sym_iberty_demangle;
#endif
	if (s->demangle == NULL)
		s->demangle =
		    (sym_demangle_fn *)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	return s;
}

/* Is @p v (a string of ours) the one @p arg names? */
static int sym_str_eq(const void *arg, uint64_t v)
{
	return strcmp((const char *)(uintptr_t)v, arg) == 0;
}

/* sym_intern: the one copy of @p str, kept. */
const char *sym_intern(struct symbolizer *s, const char *str)
{
	const char *kept;
	uint64_t *v;
	int added;

	if ((v = hmap_add(&s->offnames, hash_str(str), sym_str_eq, str,
	         &added)) == NULL)
		return NULL;
	if (added) {
		kept = sym_keep(s, str);
		*v = (uintptr_t)kept; /* "?" if memory ran out: never equal */
		if (strcmp(kept, str) != 0)
			return NULL;
	}
	return (const char *)(uintptr_t)*v;
}

/* sym_offset_name: "base+0xOFF", made once and kept. */
const struct sym_name *sym_offset_name(struct symbolizer *s, const char *path,
    uint64_t off)
{
	const char *base = strrchr(path, '/'), *kept;
	char buf[512];

	base = base != NULL ? base + 1 : path;
	snprintf(buf, sizeof(buf), "%s+0x%llx", base, (unsigned long long)off);
	if ((kept = sym_intern(s, buf)) == NULL)
		return NULL;
	return sym_name(s, kept);
}

/* sym_frame_of: a frame of one name, no file:line. */
int sym_frame_of(const struct sym_name *nm, struct sym_frame *out)
{
	if (nm == NULL)
		return 0;
	memset(out, 0, sizeof(*out));
	out->func = nm->func;
	out->name = nm->full;
	out->raw = nm->raw;
	return 1;
}

/* An executable mapping of a file. */
int sym_reportable(const struct hp_map *m)
{
	return m->exec && m->path[0] == '/';
}

/* The first mapping with a path: jeprof's main program. */
const char *sym_main_path(const struct heap_profile *hp)
{
	size_t i;

	for (i = 0; i < hp->nmaps; i++)
		if (hp->maps[i].path[0] == '/')
			return hp->maps[i].path;
	return NULL;
}

/*
 * Was the object of mapping @p i already reported for an earlier
 * mapping of the same load of it? A file loaded twice (a libc.so.6 of
 * the process and one of Graphviz's dlmopen namespace) is two objects
 * at two bases, each of whose addresses only its own base names; the
 * copy mapped lower comes first in the maps, so keying by path alone
 * let it stand for both. A load's mappings are consecutive among the
 * file's and begin at offset 0: an earlier executable mapping of the
 * file is this load's unless a mapping at offset 0 comes between.
 */
static int sym_reported_before(const struct heap_profile *hp, size_t i)
{
	const struct hp_map *m = &hp->maps[i];
	size_t j;

	if (m->offset == 0)
		return 0;
	for (j = i; j-- > 0;) {
		const struct hp_map *o = &hp->maps[j];
		if (strcmp(o->path, m->path) != 0)
			continue;
		if (sym_reportable(o))
			return 1;
		if (o->offset == 0)
			return 0;
	}
	return 0;
}

/* The file to open for mapping @p i, once per load of each object. */
const char *sym_object_path(const struct heap_profile *hp, size_t i,
    const char *binary, int self, char *buf, size_t len)
{
	const struct hp_map *m = &hp->maps[i];
	const char *main_path = sym_main_path(hp), *path;

	if (!sym_reportable(m) || sym_reported_before(hp, i))
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

/* The backend's state, then everything the symbolizer made. */
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
	hmap_free(&s->cache);
	free(s->frames);
	free(s->names);
	hmap_free(&s->name_ix);
	hmap_free(&s->offnames);
	free(s);
}

/* A copy of @p str kept until sym_free; "?" if memory runs out. */
const char *sym_keep(struct symbolizer *s, const char *str)
{
	if (hp_grow((void **)&s->strs, &s->cap_strs, s->nstrs + 1,
	        sizeof(*s->strs)) == -1)
		return "?";
	if ((s->strs[s->nstrs] = strdup(str)) == NULL)
		return "?";
	return s->strs[s->nstrs++];
}

/* Keep warning @p w (one line) for sym_warning; past SYM_WARN_MAX it is
 * dropped. */
void sym_warn(struct symbolizer *s, const char *w)
{
	if (s->nwarn < SYM_WARN_MAX)
		s->warn[s->nwarn++] = sym_keep(s, w);
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
	static const char mark[] = " (inline)";
	char *dem = NULL, *buf;
	const char *par;
	size_t len;
	int status = -1;

	if (s->demangle != NULL && strncmp(n->raw, "_Z", 2) == 0)
		dem = s->demangle(n->raw, NULL, NULL, &status);
	n->full = dem != NULL && status == 0 ? sym_keep(s, dem) : n->raw;
	free(dem);
	/* Whole, however long: a C++ template's name runs to kilobytes,
	 * and a cut one would not read back as the same name. */
	len = (par = sym_params(n->full)) != NULL ? (size_t)(par - n->full)
	                                          : strlen(n->full);
	if ((buf = malloc(len + sizeof(mark))) == NULL) {
		n->func = n->inl = n->full;
		return -1;
	}
	memcpy(buf, n->full, len);
	buf[len] = '\0';
	n->func = n->full[len] == '\0' ? n->full : sym_keep(s, buf);
	memcpy(buf + len, mark, sizeof(mark));
	n->inl = sym_keep(s, buf);
	free(buf);
	return 0;
}

/* By the raw name's pointer: a backend keeps one copy of each name. */
const struct sym_name *sym_name(struct symbolizer *s, const char *raw)
{
	struct sym_name *n;
	uint64_t *v;

	if ((v = hmap_get(&s->name_ix, (uintptr_t)raw)) != NULL)
		return &s->names[*v];
	if (hp_grow((void **)&s->names, &s->cap_names, s->nnames + 1,
	        sizeof(*s->names)) == -1 ||
	    (v = hmap_put(&s->name_ix, (uintptr_t)raw, NULL)) == NULL)
		return NULL;
	*v = s->nnames;
	n = &s->names[s->nnames++];
	memset(n, 0, sizeof(*n));
	n->raw = raw;
	sym_name_make(s, n);
	return n;
}

/*
 * Symbolization through elfutils' libdwfl: it finds each object's symbol
 * table, its DWARF (in the file, or separate debuginfo by build ID) and
 * maps addresses to modules. We add the mappings a heap profile names,
 * the inline chain of each address from dwarf_getscopes(), and a cache,
 * since a profile's stacks share most of their addresses.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize.h"

/* One looked-up pc: its frames, in the frames array. */
struct sym_entry {
	uint64_t pc; /* with the leaf bit in bit 0 of key */
	uint64_t key;
	size_t first;
	int n;
};

/* A module's function symbols by address, for the nearest one below an
 * address: what jeprof's nm-based lookup finds where the symbol table
 * has no symbol spanning the address (a stripped library's static
 * functions fall to the exported one before them). */
struct sym_module {
	Dwfl_Module *mod;
	struct sym_addr {
		GElf_Addr addr;
		const char *name;
	} * syms;
	size_t n;
};

/* A name as the object has it, and as people read it. */
struct sym_name {
	const char *raw;  /* the key: libdw's string, stable until dwfl_end */
	const char *full; /* demangled, with its parameters */
	const char *func; /* demangled, without them (jeprof's short form) */
	const char *inl;  /* func + " (inline)" */
};

/* Is a module the allocator's own library? */
struct sym_alloc {
	Dwfl_Module *mod;
	int alloc;
};

struct symbolizer {
	Dwfl *dwfl;
	Dwfl_Module *main_mod; /* the program's, NULL if not found */
	struct sym_alloc *allocs;
	size_t nallocs;
	sym_demangle_fn *demangle;
	struct sym_name *names; /* by raw pointer, open addressing */
	size_t cap_names, nnames;
	struct sym_module *mods;
	size_t nmods;
	struct sym_entry *tab; /* open addressing, a power of two */
	size_t cap, used;
	struct sym_frame *frames;
	size_t nframes, cap_frames;
	char **strs; /* names we made (hex fallbacks) */
	size_t nstrs, cap_strs;
};

/* The C++ demangler: the one set, or libstdc++'s __cxa_demangle where
 * the process has it (a C++ host). A C host needs no C++ runtime: it
 * keeps names as the objects have them. */
static sym_demangle_fn *sym_demangler;

void sym_set_demangler(sym_demangle_fn *fn)
{
	sym_demangler = fn;
}

static const Dwfl_Callbacks sym_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* Is @p path one of the profile's mappings to report (a file)? */
static int sym_reportable(const struct hp_map *m)
{
	return m->exec && m->path[0] == '/';
}

/* The ELF type of the file at @p path: ET_EXEC or ET_DYN, or -1. */
static int sym_elf_type(const char *path)
{
	GElf_Ehdr eh;
	Elf *elf;
	int fd, t = -1;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if ((elf = elf_begin(fd, ELF_C_READ, NULL)) != NULL &&
	    gelf_getehdr(elf, &eh) != NULL)
		t = eh.e_type;
	elf_end(elf);
	close(fd);
	return t;
}

/* A symbolizer over @p hp's mappings; @p binary stands for the main
 * program, @p self opens each object as this process maps it. */
static struct symbolizer *sym_open(const struct heap_profile *hp,
    const char *binary, int self, char *err, size_t errlen)
{
	char mapfile[64];
	struct symbolizer *s;
	const char *main_path = NULL, *path;
	size_t i, j;
	int t, dup;

	elf_version(EV_CURRENT);
	if ((s = calloc(1, sizeof(*s))) != NULL)
		s->demangle = sym_demangler != NULL
		    ? sym_demangler
		    : (sym_demangle_fn *)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (s == NULL || (s->dwfl = dwfl_begin(&sym_callbacks)) == NULL) {
		snprintf(err, errlen, "cannot start libdwfl: %s",
		    s != NULL ? dwfl_errmsg(-1) : strerror(ENOMEM));
		free(s);
		return NULL;
	}
	for (i = 0; i < hp->nmaps && main_path == NULL; i++)
		if (hp->maps[i].path[0] == '/')
			main_path = hp->maps[i].path;
	dwfl_report_begin(s->dwfl);
	for (i = 0; i < hp->nmaps; i++) {
		const struct hp_map *m = &hp->maps[i];
		if (!sym_reportable(m))
			continue;
		for (dup = 0, j = 0; j < i && !dup; j++)
			dup = sym_reportable(&hp->maps[j]) &&
			    strcmp(hp->maps[j].path, m->path) == 0;
		if (dup)
			continue;
		path = binary != NULL && main_path != NULL &&
		        strcmp(m->path, main_path) == 0
		    ? binary
		    : m->path;
		if (self) {
			snprintf(mapfile, sizeof(mapfile),
			    "/proc/self/map_files/%llx-%llx",
			    (unsigned long long)m->start,
			    (unsigned long long)m->end);
			if (access(mapfile, R_OK) == 0)
				path = mapfile;
		}
		/* A missing object leaves its addresses as hex, as jeprof
		 * does; libdwfl ignores the base of an ET_EXEC. */
		if ((t = sym_elf_type(path)) == -1)
			continue;
		(void)dwfl_report_elf(s->dwfl, m->path, path, -1,
		    t == ET_EXEC ? 0 : m->start - m->offset, false);
	}
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0) {
		snprintf(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
		sym_free(s);
		return NULL;
	}
	for (i = 0; i < hp->nmaps && s->main_mod == NULL; i++)
		if (main_path != NULL && sym_reportable(&hp->maps[i]) &&
		    strcmp(hp->maps[i].path, main_path) == 0)
			s->main_mod =
			    dwfl_addrmodule(s->dwfl, hp->maps[i].start);
	return s;
}

struct symbolizer *sym_new(const struct heap_profile *hp, const char *binary,
    char *err, size_t errlen)
{
	return sym_open(hp, binary, 0, err, errlen);
}

struct symbolizer *sym_new_self(const struct heap_profile *hp, char *err,
    size_t errlen)
{
	return sym_open(hp, NULL, 1, err, errlen);
}

/* dwfl_getmodules: stop at the module named in *arg's path. */
static int sym_find_module(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr start, void *arg)
{
	struct {
		const char *path;
		Dwfl_Module *mod;
	} *want = arg;

	(void)userdata;
	(void)start;
	if (strcmp(name, want->path) != 0)
		return DWARF_CB_OK;
	want->mod = mod;
	return DWARF_CB_ABORT;
}

size_t sym_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits)
{
	struct {
		const char *path;
		Dwfl_Module *mod;
	} want = {m->path, NULL};
	GElf_Addr vaddr;
	int n;

	(void)dwfl_getmodules(s->dwfl, sym_find_module, &want, 0);
	if (want.mod == NULL ||
	    (n = dwfl_module_build_id(want.mod, bits, &vaddr)) <= 0)
		return 0;
	return (size_t)n;
}

void sym_free(struct symbolizer *s)
{
	size_t i;

	if (s == NULL)
		return;
	if (s->dwfl != NULL)
		dwfl_end(s->dwfl);
	for (i = 0; i < s->nmods; i++)
		free(s->mods[i].syms);
	free(s->mods);
	for (i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	free(s->strs);
	free(s->tab);
	free(s->frames);
	free(s->names);
	free(s->allocs);
	free(s);
}

/* A string we own until sym_free(). */
static const char *sym_keep(struct symbolizer *s, const char *str)
{
	if (hp_grow((void **)&s->strs, &s->cap_strs, s->nstrs + 1,
	        sizeof(*s->strs)) == -1)
		return "?";
	if ((s->strs[s->nstrs] = strdup(str)) == NULL)
		return "?";
	return s->strs[s->nstrs++];
}

/* By address, then by name for a stable choice among aliases. */
static int sym_addr_cmp(const void *a, const void *b)
{
	const struct sym_addr *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The table of @p mod's function symbols, made on first use. */
static struct sym_module *sym_module(struct symbolizer *s, Dwfl_Module *mod)
{
	struct sym_module *m, *nm;
	GElf_Sym sym;
	GElf_Addr addr;
	const char *name;
	size_t i;
	int k, nsyms;

	for (i = 0; i < s->nmods; i++)
		if (s->mods[i].mod == mod)
			return &s->mods[i];
	if ((nm = realloc(s->mods, (s->nmods + 1) * sizeof(*nm))) == NULL)
		return NULL;
	s->mods = nm;
	m = &s->mods[s->nmods++];
	memset(m, 0, sizeof(*m));
	m->mod = mod;
	if ((nsyms = dwfl_module_getsymtab(mod)) <= 0 ||
	    (m->syms = calloc((size_t)nsyms, sizeof(*m->syms))) == NULL)
		return m;
	for (k = 1; k < nsyms; k++) {
		name = dwfl_module_getsym_info(mod, k, &sym, &addr, NULL, NULL,
		    NULL);
		if (name != NULL && name[0] != '\0' &&
		    GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
		    sym.st_shndx != SHN_UNDEF) {
			m->syms[m->n].addr = addr;
			m->syms[m->n].name = name;
			m->n++;
		}
	}
	qsort(m->syms, m->n, sizeof(*m->syms), sym_addr_cmp);
	return m;
}

/* The function symbol at or below @p addr in @p mod, or NULL. */
static const char *sym_nearest(struct symbolizer *s, Dwfl_Module *mod,
    uint64_t addr)
{
	struct sym_module *m = sym_module(s, mod);
	size_t lo = 0, hi, mid;

	if (m == NULL || m->n == 0)
		return NULL;
	/* Below the lowest symbol, but in the module: jeprof names it after
	 * that symbol too (its first range starts at the library's start). */
	if (m->syms[0].addr > addr)
		return m->syms[0].name;
	hi = m->n;
	while (hi - lo > 1) { /* syms[lo].addr <= addr < syms[hi].addr */
		mid = lo + (hi - lo) / 2;
		if (m->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return m->syms[lo].name;
}

/* Where @p name's parameter list starts: the '(' matching its last ')',
 * so "ns::f<int>(char*) const" gives "(char*) const"; NULL if none. */
static const char *sym_params(const char *name)
{
	const char *p = strrchr(name, ')');
	int depth = 0;

	if (p == NULL || p == name)
		return NULL;
	for (; p >= name; p--) {
		if (*p == ')')
			depth++;
		else if (*p == '(' && --depth == 0)
			return p == name ? NULL : p;
	}
	return NULL;
}

/* Make @p n's forms of its raw name; -1 when memory runs out. */
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
	if (full != n->raw && (par = sym_params(full)) != NULL)
		snprintf(buf, sizeof(buf), "%.*s", (int)(par - full), full);
	else
		snprintf(buf, sizeof(buf), "%s", full);
	free(dem);
	n->func = strcmp(buf, n->full) == 0 ? n->full : sym_keep(s, buf);
	snprintf(buf, sizeof(buf), "%s (inline)", n->func);
	n->inl = sym_keep(s, buf);
	return 0;
}

/* The forms of @p raw, made once per name; NULL when memory runs out. */
static const struct sym_name *sym_name(struct symbolizer *s, const char *raw)
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

/* The name of @p die, through its abstract origin for an inline. */
static const char *sym_die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name;

	if ((name = dwarf_formstring(
	         dwarf_attr_integrate(die, DW_AT_linkage_name, &a))) != NULL)
		return name;
	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

/* The file an inline was called from (DW_AT_call_file) in @p cu. */
static const char *sym_call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t nfiles;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* Look @p addr up: the inline chain, innermost first, into @p out. */
static int sym_resolve(struct symbolizer *s, uint64_t addr,
    struct sym_frame *out, int max)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Addr bias;
	Dwarf_Attribute a;
	Dwarf_Word line;
	Dwfl_Line *l;
	const char *file = NULL, *name;
	const struct sym_name *nm;
	char hex[32];
	int n = 0, nscopes, i, lineno = 0, tag;

	if (mod != NULL && (l = dwfl_module_getsrc(mod, addr)) != NULL)
		file = dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL);
	if (mod != NULL &&
	    (cu = dwfl_module_addrdie(mod, addr, &bias)) != NULL &&
	    (nscopes = dwarf_getscopes(cu, addr - bias, &scopes)) > 0) {
		/*
		 * The innermost function at addr; if it is an inline, its
		 * callers are the scopes around that inline instance
		 * (dwarf_getscopes_die), up to the real function, as
		 * eu-addr2line -i walks them.
		 */
		for (i = 0; i < nscopes; i++) {
			tag = dwarf_tag(&scopes[i]);
			if (tag == DW_TAG_inlined_subroutine ||
			    tag == DW_TAG_subprogram)
				break;
		}
		if (i < nscopes && tag == DW_TAG_inlined_subroutine) {
			Dwarf_Die inl = scopes[i];
			free(scopes);
			scopes = NULL;
			nscopes = dwarf_getscopes_die(&inl, &scopes);
			i = 0;
		}
		for (; i < nscopes && n < max; i++) {
			tag = dwarf_tag(&scopes[i]);
			if (tag != DW_TAG_inlined_subroutine &&
			    tag != DW_TAG_subprogram)
				continue;
			if ((name = sym_die_name(&scopes[i])) == NULL)
				continue;
			if ((nm = sym_name(s, name)) == NULL)
				continue;
			out[n].name = nm->full;
			out[n].raw = nm->raw;
			/* jeprof's mark for a function inlined at this pc. */
			out[n].func = tag == DW_TAG_inlined_subroutine
			    ? nm->inl
			    : nm->func;
			out[n].file = file;
			out[n].line = lineno;
			n++;
			if (tag == DW_TAG_subprogram)
				break;
			/* The caller's place: where this inline was called. */
			file = sym_call_file(cu, &scopes[i]);
			lineno = dwarf_formudata(dwarf_attr(&scopes[i],
			                             DW_AT_call_line, &a),
			             &line) == 0
			    ? (int)line
			    : 0;
		}
		free(scopes);
	}
	if (n > 0)
		return n;
	/* No DWARF: the symbol table. */
	if (mod != NULL &&
	    ((name = dwfl_module_addrname(mod, addr)) != NULL ||
	        (name = sym_nearest(s, mod, addr)) != NULL) &&
	    (nm = sym_name(s, name)) != NULL) {
		out[0].func = nm->func;
		out[0].name = nm->full;
		out[0].raw = nm->raw;
	} else {
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
		out[0].func = out[0].name = out[0].raw = sym_keep(s, hex);
	}
	out[0].file = file;
	out[0].line = lineno;
	return 1;
}

/* Does @p mod define jemalloc's mallctl? */
static int sym_defines_mallctl(Dwfl_Module *mod)
{
	GElf_Sym sym;
	GElf_Addr addr;
	const char *name;
	int k, n = dwfl_module_getsymtab(mod);

	for (k = 1; k < n; k++) {
		name = dwfl_module_getsym_info(mod, k, &sym, &addr, NULL, NULL,
		    NULL);
		if (name != NULL && sym.st_shndx != SHN_UNDEF &&
		    (strcmp(name, "mallctl") == 0 ||
		        strcmp(name, "je_mallctl") == 0))
			return 1;
	}
	return 0;
}

int sym_in_allocator(struct symbolizer *s, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	struct sym_alloc *na;
	size_t i;

	/* A jemalloc linked into the program is named, and cut by name. */
	if (mod == NULL || mod == s->main_mod)
		return 0;
	for (i = 0; i < s->nallocs; i++)
		if (s->allocs[i].mod == mod)
			return s->allocs[i].alloc;
	if ((na = realloc(s->allocs, (s->nallocs + 1) * sizeof(*na))) == NULL)
		return 0;
	s->allocs = na;
	na[s->nallocs].mod = mod;
	na[s->nallocs].alloc = sym_defines_mallctl(mod);
	return na[s->nallocs++].alloc;
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
	uint64_t key = pc << 1 | (leaf != 0);
	struct sym_entry *e;
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
	n = sym_resolve(s, leaf || pc == 0 ? pc : pc - 1, tmp, SYM_INLINE_MAX);
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

const char *sym_backend(void)
{
	return "libdw";
}

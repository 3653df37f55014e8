/*
 * The libdwfl backend (elfutils): it finds each object's symbol table,
 * its DWARF (in the file, or separate debuginfo by build ID) and maps
 * addresses to modules. We add the mappings a heap profile names and
 * the inline chain of each address from dwarf_getscopes().
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize_impl.h"

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

/* Is a module the allocator's own library? */
struct sym_alloc {
	Dwfl_Module *mod;
	int alloc;
};

/* The backend's state. */
struct sym_dwfl {
	Dwfl *dwfl;
	Dwfl_Module *main_mod; /* the program's, NULL if not found */
	struct sym_alloc *allocs;
	size_t nallocs;
	struct sym_module *mods;
	size_t nmods;
};

static int dw_resolve(struct symbolizer *s, uint64_t addr,
    struct sym_frame *out, int max);
static int dw_in_allocator(struct symbolizer *s, uint64_t pc);
static size_t dw_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits);
static void dw_free(struct symbolizer *s);

static const struct sym_ops dw_ops = {
    .resolve = dw_resolve,
    .in_allocator = dw_in_allocator,
    .build_id = dw_build_id,
    .free = dw_free,
};

static const Dwfl_Callbacks sym_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

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

struct symbolizer *sym_dwfl_open(const struct heap_profile *hp,
    const char *binary, int self, char *err, size_t errlen)
{
	char mapfile[64];
	struct symbolizer *s;
	struct sym_dwfl *d;
	const char *main_path = sym_main_path(hp), *path;
	size_t i, j;
	int t, dup;

	elf_version(EV_CURRENT);
	if ((s = sym_alloc(&dw_ops, err, errlen)) == NULL)
		return NULL;
	if ((d = s->be = calloc(1, sizeof(*d))) == NULL ||
	    (d->dwfl = dwfl_begin(&sym_callbacks)) == NULL) {
		snprintf(err, errlen, "cannot start libdwfl: %s",
		    d != NULL ? dwfl_errmsg(-1) : strerror(ENOMEM));
		sym_free(s);
		return NULL;
	}
	dwfl_report_begin(d->dwfl);
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
		(void)dwfl_report_elf(d->dwfl, m->path, path, -1,
		    t == ET_EXEC ? 0 : m->start - m->offset, false);
	}
	if (dwfl_report_end(d->dwfl, NULL, NULL) != 0) {
		snprintf(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
		sym_free(s);
		return NULL;
	}
	for (i = 0; i < hp->nmaps && d->main_mod == NULL; i++)
		if (main_path != NULL && sym_reportable(&hp->maps[i]) &&
		    strcmp(hp->maps[i].path, main_path) == 0)
			d->main_mod =
			    dwfl_addrmodule(d->dwfl, hp->maps[i].start);
	return s;
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

/* sym_build_id: libdwfl read the note when it reported the module. */
static size_t dw_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits)
{
	struct sym_dwfl *d = s->be;
	struct {
		const char *path;
		Dwfl_Module *mod;
	} want = {m->path, NULL};
	GElf_Addr vaddr;
	int n;

	(void)dwfl_getmodules(d->dwfl, sym_find_module, &want, 0);
	if (want.mod == NULL ||
	    (n = dwfl_module_build_id(want.mod, bits, &vaddr)) <= 0)
		return 0;
	return (size_t)n;
}

/* What sym_free needs of this backend. */
static void dw_free(struct symbolizer *s)
{
	struct sym_dwfl *d = s->be;
	size_t i;

	if (d == NULL)
		return;
	if (d->dwfl != NULL)
		dwfl_end(d->dwfl);
	for (i = 0; i < d->nmods; i++)
		free(d->mods[i].syms);
	free(d->mods);
	free(d->allocs);
	free(d);
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
static struct sym_module *sym_module(struct sym_dwfl *d, Dwfl_Module *mod)
{
	struct sym_module *m, *nm;
	GElf_Sym sym;
	GElf_Addr addr;
	const char *name;
	size_t i;
	int k, nsyms;

	for (i = 0; i < d->nmods; i++)
		if (d->mods[i].mod == mod)
			return &d->mods[i];
	if ((nm = realloc(d->mods, (d->nmods + 1) * sizeof(*nm))) == NULL)
		return NULL;
	d->mods = nm;
	m = &d->mods[d->nmods++];
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
static const char *sym_nearest(struct sym_dwfl *d, Dwfl_Module *mod,
    uint64_t addr)
{
	struct sym_module *m = sym_module(d, mod);
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
static int dw_resolve(struct symbolizer *s, uint64_t addr,
    struct sym_frame *out, int max)
{
	struct sym_dwfl *d = s->be;
	Dwfl_Module *mod = dwfl_addrmodule(d->dwfl, addr);
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Addr bias;
	Dwarf_Attribute a;
	Dwarf_Word line;
	Dwfl_Line *l;
	const char *file = NULL, *name;
	const struct sym_name *nm;
	int n = 0, nscopes, i, lineno = 0, tag;

	if (mod == NULL)
		return 0;
	if ((l = dwfl_module_getsrc(mod, addr)) != NULL)
		file = dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL);
	if ((cu = dwfl_module_addrdie(mod, addr, &bias)) != NULL &&
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
	if (((name = dwfl_module_addrname(mod, addr)) == NULL &&
	        (name = sym_nearest(d, mod, addr)) == NULL) ||
	    (nm = sym_name(s, name)) == NULL)
		return 0;
	out[0].func = nm->func;
	out[0].name = nm->full;
	out[0].raw = nm->raw;
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

/* sym_in_allocator: a module other than the program's that defines
 * mallctl. */
static int dw_in_allocator(struct symbolizer *s, uint64_t pc)
{
	struct sym_dwfl *d = s->be;
	Dwfl_Module *mod = dwfl_addrmodule(d->dwfl, pc);
	struct sym_alloc *na;
	size_t i;

	/* A jemalloc linked into the program is named, and cut by name. */
	if (mod == NULL || mod == d->main_mod)
		return 0;
	for (i = 0; i < d->nallocs; i++)
		if (d->allocs[i].mod == mod)
			return d->allocs[i].alloc;
	if ((na = realloc(d->allocs, (d->nallocs + 1) * sizeof(*na))) == NULL)
		return 0;
	d->allocs = na;
	na[d->nallocs].mod = mod;
	na[d->nallocs].alloc = sym_defines_mallctl(mod);
	return na[d->nallocs++].alloc;
}

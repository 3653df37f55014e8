/*
 * The ELF backend: each object's function symbols from its .symtab and
 * .dynsym (or a separate debuginfo file's .symtab, found by build ID);
 * an address gets the symbol that contains it (never jeprof's
 * nearest one below, which names a stripped object's static functions
 * after the exported one before them), else "object+0xSTART", START the
 * function's first byte from .eh_frame_hdr's table. No inline frames, no
 * file:line: that is DWARF, libdw's.
 *
 * Why an ELF reader of our own rather than libelf: this backend is what
 * a build without libdw symbolizes with, and libelf comes with libdw
 * (both are elfutils; Debian's libdw-dev depends on libelf-dev), so a
 * build without libdw is one without libelf, by choice (a smaller
 * image, fewer libraries in the process). What we read is small: the
 * ELF header, the program headers (the load segments, the build ID
 * note) and the section headers (symbol tables and their strings), of
 * ELF64 little-endian objects (x86-64, aarch64); anything else is left
 * in hex. Every offset the file gives is checked against its size: a
 * profile names whatever files it likes.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize_impl.h"

/* A file mapped whole, read-only. */
struct elf_file {
	const unsigned char *p;
	size_t size;
};

/* One function symbol. */
struct elf_sym {
	uint64_t addr;
	uint64_t size;    /* st_size; 0: up to the next symbol (end) */
	uint64_t end;     /* where it stops: addr + size, or for a size-0
	                     symbol the next symbol or its section's end */
	const char *name; /* into the mapped file: stable until sym_free */
	int rank;         /* a global name before a weak one before a local */
	size_t idx;       /* then the first in the tables (libdwfl's pick) */
};

/* One object of the profile. */
struct elf_obj {
	char *path; /* as the profile names it */
	struct elf_file f, dbg;
	uint64_t bias;   /* a run-time address minus the file's */
	uint64_t lo, hi; /* its load segments, at run time */
	struct elf_sym *syms;
	size_t nsyms;
	const unsigned char *build_id;
	size_t build_id_len;
	Elf64_Ehdr eh;
	uint64_t ehh;     /* .eh_frame_hdr's vaddr (PT_GNU_EH_FRAME), 0: none */
	uint64_t ehh_off; /* and its file offset */
	int main;         /* the program's */
	int alloc;        /* defines mallctl */
};

/* The backend's state. */
struct sym_elf {
	struct elf_obj *objs;
	size_t nobjs;
};

static int elf_resolve(struct symbolizer *s, uint64_t addr,
    struct sym_frame *out, int max);
static int elf_in_allocator(struct symbolizer *s, uint64_t pc);
static size_t elf_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits);
static void elf_free(struct symbolizer *s);

static const struct sym_ops elf_ops = {
    .resolve = elf_resolve,
    .in_allocator = elf_in_allocator,
    .build_id = elf_build_id,
    .free = elf_free,
};

/* @p len bytes at @p off of @p f copied to @p dst: 0, or -1 if they are
 * not all in the file. A copy, not a cast: the file's offsets need not
 * be aligned. */
static int elf_get(const struct elf_file *f, uint64_t off, void *dst,
    size_t len)
{
	if (off > f->size || len > f->size - off)
		return -1;
	memcpy(dst, f->p + off, len);
	return 0;
}

/*
 * The file at @p path in memory: 0, or -1 (not there, not a regular
 * file, changed while copied: then why in @p why). Mapped from
 * prof_open_object's sealed copy, never from the file: anyone who can
 * write it could truncate it under the mapping (SIGBUS at our next read).
 */
static int elf_map(const char *path, struct elf_file *f, char *why,
    size_t whylen)
{
	struct stat sb;
	void *p;
	int fd;

	f->p = NULL;
	f->size = 0;
	why[0] = '\0';
	if ((fd = prof_open_object(path, why, whylen)) == -1)
		return -1;
	if (fstat(fd, &sb) == -1 || (size_t)sb.st_size < sizeof(Elf64_Ehdr) ||
	    (p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd,
	         0)) == MAP_FAILED) {
		close(fd);
		return -1;
	}
	close(fd);
	f->p = p;
	f->size = (size_t)sb.st_size;
	return 0;
}

/* Give back what elf_map took. */
static void elf_unmap(struct elf_file *f)
{
	if (f->p != NULL)
		munmap((void *)f->p, f->size);
	f->p = NULL;
}

/* @p f's header, if it is an ELF64 little-endian file we can read on
 * this (little-endian) host: 0, or -1. */
static int elf_header(const struct elf_file *f, Elf64_Ehdr *eh)
{
	if (elf_get(f, 0, eh, sizeof(*eh)) == -1 ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return -1;
	if (eh->e_phnum > 0 && eh->e_phentsize != sizeof(Elf64_Phdr))
		return -1;
	if (eh->e_shnum > 0 && eh->e_shentsize != sizeof(Elf64_Shdr))
		return -1;
	return 0;
}

/* Program header @p i of @p f. */
static int elf_phdr(const struct elf_file *f, const Elf64_Ehdr *eh, size_t i,
    Elf64_Phdr *ph)
{
	return elf_get(f, eh->e_phoff + i * sizeof(*ph), ph, sizeof(*ph));
}

/* Section header @p i of @p f. */
static int elf_shdr(const struct elf_file *f, const Elf64_Ehdr *eh, size_t i,
    Elf64_Shdr *sh)
{
	return elf_get(f, eh->e_shoff + i * sizeof(*sh), sh, sizeof(*sh));
}

/* The GNU build ID among the notes at @p off, @p size bytes aligned to
 * @p align: 0 and o->build_id set, or -1. */
static int elf_notes(struct elf_obj *o, uint64_t off, uint64_t size,
    uint64_t align)
{
	const struct elf_file *f = &o->f;
	Elf64_Nhdr nh;
	uint64_t end, name, desc;

	align = align == 8 ? 8 : 4;
	if (off > f->size || size > f->size - off)
		return -1;
	end = off + size;
	while (end - off >= sizeof(nh)) {
		elf_get(f, off, &nh, sizeof(nh));
		name = off + sizeof(nh);
		desc = name + ((nh.n_namesz + align - 1) & ~(align - 1));
		if (desc > end || nh.n_descsz > end - desc)
			return -1;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(f->p + name, "GNU", 4) == 0 && nh.n_descsz > 0) {
			o->build_id = f->p + desc;
			o->build_id_len = nh.n_descsz;
			return 0;
		}
		off = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
		if (off > end)
			return -1;
	}
	return -1;
}

/*
 * Where the object is at run time, from the mapping @p m the profile
 * saw: its bias (a run-time address minus the file's virtual address)
 * through the load segment that mapping's file offset falls in, and the
 * span of all its load segments (libdwfl's module range). Its build ID
 * from a PT_NOTE (or, if none, an SHT_NOTE section).
 */
static void elf_layout(struct elf_obj *o, const Elf64_Ehdr *eh,
    const struct hp_map *m)
{
	Elf64_Phdr ph;
	Elf64_Shdr sh;
	uint64_t lo = UINT64_MAX, hi = 0, vaddr = m->offset, align;
	size_t i;
	int found = 0;

	for (i = 0; i < eh->e_phnum; i++) {
		if (elf_phdr(&o->f, eh, i, &ph) == -1)
			break;
		if (ph.p_type == PT_GNU_EH_FRAME) {
			o->ehh = ph.p_vaddr;
			o->ehh_off = ph.p_offset;
		}
		if (ph.p_type == PT_NOTE && o->build_id == NULL)
			(void)elf_notes(o, ph.p_offset, ph.p_filesz,
			    ph.p_align);
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr < lo)
			lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > hi)
			hi = ph.p_vaddr + ph.p_memsz;
		/* The mapping starts at the page its segment starts in. */
		align = ph.p_align > 1 ? ph.p_align : 1;
		if (!found && (ph.p_flags & PF_X) &&
		    m->offset >= (ph.p_offset & ~(align - 1)) &&
		    m->offset <= ph.p_offset + ph.p_filesz) {
			vaddr = ph.p_vaddr - (ph.p_offset - m->offset);
			found = 1;
		}
	}
	for (i = 0; o->build_id == NULL && i < eh->e_shnum; i++)
		if (elf_shdr(&o->f, eh, i, &sh) == 0 && sh.sh_type == SHT_NOTE)
			(void)elf_notes(o, sh.sh_offset, sh.sh_size,
			    sh.sh_addralign);
	/* An ET_EXEC is where its addresses say. */
	o->bias = eh->e_type == ET_EXEC ? 0 : m->start - vaddr;
	if (lo > hi) { /* no load segment: the mapping itself */
		o->lo = m->start;
		o->hi = m->end;
		return;
	}
	o->lo = lo + o->bias;
	o->hi = hi + o->bias;
}

/* How much a name's binding is worth when several share an address:
 * libdwfl's preference (global, then weak, then local). */
static int elf_rank(unsigned char info)
{
	switch (ELF64_ST_BIND(info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	default:
		return 1;
	}
}

/* Add @p f's function symbols from its tables of type @p type (and note
 * whether it defines mallctl): 1 if it has such a table, 0 if not, -1
 * when memory runs out. */
static int elf_symtab(struct elf_obj *o, const struct elf_file *f,
    unsigned type, size_t *cap)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, str, sec;
	Elf64_Sym sym;
	const char *name;
	uint64_t k, n, secend;
	size_t i;
	int has = 0;

	if (elf_header(f, &eh) == -1)
		return 0;
	for (i = 0; i < eh.e_shnum; i++) {
		if (elf_shdr(f, &eh, i, &sh) == -1 || sh.sh_type != type ||
		    sh.sh_entsize != sizeof(sym) || sh.sh_link >= eh.e_shnum ||
		    elf_shdr(f, &eh, sh.sh_link, &str) == -1 ||
		    str.sh_offset > f->size ||
		    str.sh_size > f->size - str.sh_offset)
			continue;
		has = 1;
		n = sh.sh_size / sizeof(sym);
		for (k = 1; k < n; k++) {
			if (elf_get(f, sh.sh_offset + k * sizeof(sym), &sym,
			        sizeof(sym)) == -1)
				break;
			if (sym.st_shndx == SHN_UNDEF ||
			    sym.st_name >= str.sh_size)
				continue;
			name = (const char *)f->p + str.sh_offset + sym.st_name;
			if (name[0] == '\0' ||
			    memchr(name, '\0', str.sh_size - sym.st_name) ==
			        NULL)
				continue;
			if (strcmp(name, "mallctl") == 0 ||
			    strcmp(name, "je_mallctl") == 0)
				o->alloc = 1;
			if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC &&
			    ELF64_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
				continue;
			if (hp_grow((void **)&o->syms, cap, o->nsyms + 1,
			        sizeof(*o->syms)) == -1)
				return -1;
			/* A size-0 symbol ends with its section at most. */
			secend = UINT64_MAX;
			if (sym.st_shndx < eh.e_shnum &&
			    elf_shdr(f, &eh, sym.st_shndx, &sec) == 0 &&
			    sec.sh_addr <= sym.st_value)
				secend = sec.sh_addr + sec.sh_size;
			o->syms[o->nsyms].addr = sym.st_value;
			o->syms[o->nsyms].size = sym.st_size;
			o->syms[o->nsyms].end = secend;
			o->syms[o->nsyms].name = name;
			o->syms[o->nsyms].idx = o->nsyms;
			o->syms[o->nsyms++].rank = elf_rank(sym.st_info);
		}
	}
	return has;
}

/* By address, the best name first (binding, then the first in the
 * tables, as libdwfl picks among aliases). */
static int elf_sym_cmp(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* @p o's symbols: .symtab, else the separate debuginfo's (a stripped
 * library with its -dbg package installed), and .dynsym. -1 when memory
 * runs out. */
static int elf_symbols(struct elf_obj *o)
{
	char dbg[PATH_MAX], why[PATH_MAX + 128];
	size_t cap = 0, i, n, len;
	int r;

	if ((r = elf_symtab(o, &o->f, SHT_SYMTAB, &cap)) == -1)
		return -1;
	if (r == 0 && o->build_id != NULL && o->build_id_len > 1) {
		len = (size_t)snprintf(dbg, sizeof(dbg),
		    "/usr/lib/debug/.build-id/%02x/", o->build_id[0]);
		for (i = 1; i < o->build_id_len && len + 3 < sizeof(dbg); i++)
			len += (size_t)snprintf(dbg + len, sizeof(dbg) - len,
			    "%02x", o->build_id[i]);
		snprintf(dbg + len, sizeof(dbg) - len, ".debug");
		if (elf_map(dbg, &o->dbg, why, sizeof(why)) == 0 &&
		    elf_symtab(o, &o->dbg, SHT_SYMTAB, &cap) == -1)
			return -1;
	}
	if (elf_symtab(o, &o->f, SHT_DYNSYM, &cap) == -1)
		return -1;
	if (o->nsyms > 0) /* qsort wants an array, even of none */
		qsort(o->syms, o->nsyms, sizeof(*o->syms), elf_sym_cmp);
	/* .symtab and .dynsym repeat the exported names: the lookup only
	 * ever takes the first of an address, so one per address does
	 * (with an alias's size where the first has none). */
	for (i = 0, n = 0; i < o->nsyms; i++) {
		if (n == 0 || o->syms[n - 1].addr != o->syms[i].addr)
			o->syms[n++] = o->syms[i];
		else if (o->syms[n - 1].size == 0)
			o->syms[n - 1].size = o->syms[i].size;
	}
	o->nsyms = n;
	/* Where each stops: its size, else the next symbol (or its
	 * section's end, seen when the table was read). */
	for (i = 0; i < n; i++) {
		struct elf_sym *y = &o->syms[i];
		if (y->size > 0)
			y->end = y->addr + y->size;
		else if (i + 1 < n && o->syms[i + 1].addr < y->end)
			y->end = o->syms[i + 1].addr;
	}
	return 0;
}

struct symbolizer *sym_elf_open(const struct heap_profile *hp,
    const char *binary, int self, char *err, size_t errlen)
{
	char mapfile[64], why[PATH_MAX + 128];
	struct symbolizer *s;
	struct sym_elf *e;
	struct elf_obj *o;
	Elf64_Ehdr eh;
	const char *main_path = sym_main_path(hp), *path;
	size_t i;

	if ((s = sym_alloc(&elf_ops, err, errlen)) == NULL)
		return NULL;
	if ((e = s->be = calloc(1, sizeof(*e))) == NULL ||
	    (e->objs = calloc(hp->nmaps + 1, sizeof(*e->objs))) == NULL)
		goto nomem;
	for (i = 0; i < hp->nmaps; i++) {
		const struct hp_map *m = &hp->maps[i];
		if ((path = sym_object_path(hp, i, binary, self, mapfile,
		         sizeof(mapfile))) == NULL)
			continue;
		o = &e->objs[e->nobjs];
		/* A missing or foreign object leaves its addresses in hex,
		 * as jeprof does. */
		if (elf_map(path, &o->f, why, sizeof(why)) == -1) {
			if (errno == ESTALE)
				sym_warn(s, why);
			continue;
		}
		if (elf_header(&o->f, &eh) == -1 ||
		    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
			elf_unmap(&o->f);
			continue;
		}
		e->nobjs++;
		if ((o->path = strdup(m->path)) == NULL)
			goto nomem;
		o->main = main_path != NULL && strcmp(m->path, main_path) == 0;
		o->eh = eh;
		elf_layout(o, &eh, m);
		if (elf_symbols(o) == -1)
			goto nomem;
	}
	return s;
nomem:
	snprintf(err, errlen, "symbolizer: %s", strerror(ENOMEM));
	sym_free(s);
	return NULL;
}

/* The object @p addr is in, or NULL. */
static struct elf_obj *elf_obj_at(struct sym_elf *e, uint64_t addr)
{
	size_t i;

	for (i = 0; i < e->nobjs; i++)
		if (addr >= e->objs[i].lo && addr < e->objs[i].hi)
			return &e->objs[i];
	return NULL;
}

/* The file offset of @p len bytes at virtual address @p vaddr of @p o,
 * through its load segments: 0, or -1 if no segment holds them. */
static int elf_vaddr_off(const struct elf_obj *o, uint64_t vaddr, size_t len,
    uint64_t *off)
{
	Elf64_Phdr ph;
	size_t i;

	for (i = 0; i < o->eh.e_phnum; i++) {
		if (elf_phdr(&o->f, &o->eh, i, &ph) == -1)
			return -1;
		if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr <= ph.p_filesz &&
		    len <= ph.p_filesz - (vaddr - ph.p_vaddr)) {
			*off = ph.p_offset + (vaddr - ph.p_vaddr);
			return 0;
		}
	}
	return -1;
}

/* An unsigned LEB128 at *@p off (moved past it), within @p end. */
static uint64_t elf_uleb(const struct elf_file *f, uint64_t *off, uint64_t end)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char b;

	do {
		if (*off >= end || elf_get(f, *off, &b, 1) == -1)
			return 0;
		(*off)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return v;
}

/* The size of a pointer of DWARF encoding @p enc's format (its low
 * nibble), or 0 for one we do not read (LEB128). */
static size_t elf_enc_size(unsigned char enc)
{
	static const unsigned char size[16] = {
	    [0x0] = 8, /* absptr */
	    [0x2] = 2,
	    [0x3] = 4,
	    [0x4] = 8,
	    [0xa] = 2,
	    [0xb] = 4,
	    [0xc] = 8,
	};

	return size[enc & 0x0f];
}

/*
 * The pointer encoding of the FDEs of the CIE at @p cie (its 'R'
 * augmentation; absptr without one), or -1 if it cannot be read. Only
 * what leads to 'R' is read: the CIE's header, code and data alignment,
 * return register, and the augmentation data before it.
 */
static int elf_cie_enc(const struct elf_obj *o, uint64_t cie)
{
	const struct elf_file *f = &o->f;
	char aug[16];
	uint32_t len, id;
	uint64_t off = cie, end;
	unsigned char ver, enc = 0, b;
	size_t i, n;

	if (elf_get(f, off, &len, 4) == -1 || len == 0xffffffff ||
	    elf_get(f, off + 4, &id, 4) == -1 || id != 0 ||
	    elf_get(f, off + 8, &ver, 1) == -1)
		return -1;
	end = off + 4 + len;
	off += 9;
	for (n = 0; n < sizeof(aug); n++, off++)
		if (elf_get(f, off, &aug[n], 1) == -1 || aug[n] == '\0')
			break;
	if (n == sizeof(aug) || aug[0] != 'z')
		return n < sizeof(aug) && n == 0 ? 0 : -1;
	off++;
	if (strstr(aug, "eh") != NULL)
		off += 8;
	(void)elf_uleb(f, &off, end); /* code alignment */
	(void)elf_uleb(f, &off, end); /* data alignment (sign unneeded) */
	if (ver == 1)
		off++;
	else
		(void)elf_uleb(f, &off, end);
	(void)elf_uleb(f, &off, end); /* augmentation data's length */
	for (i = 1; i < n; i++) {
		if (aug[i] == 'R')
			return elf_get(f, off, &enc, 1) == -1 ? -1 : enc;
		if (aug[i] == 'L') {
			off++;
		} else if (aug[i] == 'P') {
			if (elf_get(f, off, &b, 1) == -1 ||
			    elf_enc_size(b) == 0)
				return -1;
			off += 1 + elf_enc_size(b);
		} else if (aug[i] != 'S' && aug[i] != 'B') {
			return -1;
		}
	}
	return 0;
}

/*
 * The start of the function holding @p a (an ELF virtual address of
 * @p o) by its FDE, found through .eh_frame_hdr's sorted table: 0 with
 * *@p start set, or -1 (no table, or no FDE covers @p a).
 *
 * Hand-written: this is the backend of builds without libdw, and so
 * without libelf's and libdw's CFI readers (the libdw build asks
 * dwarf_cfi_addrframe). Kept to what every linker writes (GNU ld, gold,
 * lld, mold): a version 1 header, the count as udata4, the table as
 * datarel sdata4 pairs; and of the FDE only its range, which needs its
 * CIE's pointer encoding. Every read is checked against the file.
 */
static int elf_fde_start(const struct elf_obj *o, uint64_t a, uint64_t *start)
{
	const struct elf_file *f = &o->f;
	unsigned char h[4], enc;
	uint32_t count, len, cie_ptr;
	int32_t pair[2];
	uint64_t lo = 0, hi, mid, fde, off, range = 0;
	size_t sz;
	int e;

	if (o->ehh == 0 || elf_get(f, o->ehh_off, h, 4) == -1 || h[0] != 1 ||
	    elf_enc_size(h[1]) != 4 || h[2] != 0x03 || h[3] != 0x3b ||
	    elf_get(f, o->ehh_off + 8, &count, 4) == -1 || count == 0)
		return -1;
	/* The last entry starting at or below a. */
	hi = count;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (elf_get(f, o->ehh_off + 12 + mid * 8, pair, 4) == -1)
			return -1;
		if (o->ehh + (uint64_t)(int64_t)pair[0] <= a)
			lo = mid;
		else
			hi = mid;
	}
	if (elf_get(f, o->ehh_off + 12 + lo * 8, pair, 8) == -1 ||
	    o->ehh + (uint64_t)(int64_t)pair[0] > a)
		return -1;
	fde = o->ehh + (uint64_t)(int64_t)pair[1];
	if (elf_vaddr_off(o, fde, 8, &off) == -1 ||
	    elf_get(f, off, &len, 4) == -1 || len == 0xffffffff ||
	    elf_get(f, off + 4, &cie_ptr, 4) == -1 || cie_ptr > off + 4 ||
	    (e = elf_cie_enc(o, off + 4 - cie_ptr)) == -1)
		return -1;
	enc = (unsigned char)e;
	if ((sz = elf_enc_size(enc)) == 0 || 8 + 2 * sz > (uint64_t)len + 4 ||
	    elf_get(f, off + 8 + sz, &range, sz) == -1)
		return -1;
	*start = o->ehh + (uint64_t)(int64_t)pair[0];
	return a - *start < range ? 0 : -1;
}

/*
 * The function at @p addr: the symbol that contains it, else
 * "object+0xSTART" from its FDE, else "object+0xADDR" (addresses as
 * the object's ELF virtual addresses).
 */
static int elf_resolve(struct symbolizer *s, uint64_t addr,
    struct sym_frame *out, int max)
{
	struct elf_obj *o = elf_obj_at(s->be, addr);
	size_t lo = 0, hi, mid, k;
	uint64_t a, start;

	if (o == NULL || max < 1)
		return 0;
	a = addr - o->bias;
	hi = o->nsyms;
	if (hi > 0 && o->syms[0].addr <= a) {
		while (hi - lo > 1) { /* syms[lo].addr <= a < syms[hi].addr */
			mid = lo + (hi - lo) / 2;
			if (o->syms[mid].addr <= a)
				lo = mid;
			else
				hi = mid;
		}
		/* The nearest below, or one of the few before it should
		 * symbols nest (a function's local entry point). */
		for (k = 0; k < 4 && k <= lo; k++)
			if (a < o->syms[lo - k].end)
				return sym_frame_of(sym_name(s,
				                        o->syms[lo - k].name),
				    out);
	}
	if (elf_fde_start(o, a, &start) == -1)
		start = a;
	return sym_frame_of(sym_offset_name(s, o->path, start), out);
}

/* sym_in_allocator: a library other than the program that defines
 * mallctl. */
static int elf_in_allocator(struct symbolizer *s, uint64_t pc)
{
	struct elf_obj *o = elf_obj_at(s->be, pc);

	return o != NULL && !o->main && o->alloc;
}

/* sym_build_id: read from the note when the object was opened. */
static size_t elf_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits)
{
	struct sym_elf *e = s->be;
	size_t i;

	for (i = 0; i < e->nobjs; i++)
		if (strcmp(e->objs[i].path, m->path) == 0) {
			*bits = e->objs[i].build_id;
			return e->objs[i].build_id_len;
		}
	return 0;
}

/* What sym_free needs of this backend. */
static void elf_free(struct symbolizer *s)
{
	struct sym_elf *e = s->be;
	size_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->nobjs; i++) {
		elf_unmap(&e->objs[i].f);
		elf_unmap(&e->objs[i].dbg);
		free(e->objs[i].syms);
		free(e->objs[i].path);
	}
	free(e->objs);
	free(e);
}

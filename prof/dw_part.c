/*
 * dw_part — a separate debug file's compressed DWARF, inflated only as
 * far as a profile needs.
 *
 * Debian's libc6-dbg (which valgrind pulls in) keeps libc's and ld.so's
 * DWARF SHF_COMPRESSED. elfutils 0.188's dwarf_begin_elf inflates every
 * .debug_* section of a file at once, 10 MB for libc, though a heap
 * profile asks about two or three of its 4126 units (__libc_start_main
 * is in the third): on a clang-14 profile that was 53 % of jm4lw-prof's
 * instructions, and 10 MiB of the worker's peak in a host.
 *
 * So, for a module whose DWARF is only in such a file, we build a
 * smaller file for libdw: the sections it reads to walk a unit's DIEs
 * (abbreviations, strings, range lists, addresses), inflated by zlib,
 * and of .debug_info only its first bytes, up to the end of the last
 * unit that .debug_aranges gives for one of the profile's addresses.
 * Units are whole and at their own offsets, so every reference inside
 * them (to their own DIEs, to the other sections) reads as in the
 * original. A reference beyond the cut fails in libdw, never reads
 * something else; the caller then asks libdwfl (symbolize_dwfl.c). Not
 * taken: location lists, line programs (file:line is asked of libdwfl),
 * macros, frames, name indexes. The file is written with libelf into a
 * memfd (libdw takes an Elf, and libelf makes one of a file) and read
 * back mapped.
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>
#include <zlib.h>

#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dw_load.h" /* after libdw's headers: calls go through dw_funcs */
#include "dw_part.h"
#include "prof_util.h"

/* A range of .debug_aranges: [lo, hi) is in the unit at @c cu. */
struct dw_arange {
	uint64_t lo, hi, cu;
};

struct dw_part {
	Dwarf *dbg;
	Elf *elf;
	int fd;
	size_t info_len; /* .debug_info's first bytes we have */
	struct dw_arange *ar;
	size_t nar;
};

/* The sections we give libdw: what it reads to walk a unit's DIEs and
 * name them. .debug_info is cut (dw_part_open). */
static const char *const dw_part_keep[] = {
    ".debug_info",
    ".debug_abbrev",
    ".debug_str",
    ".debug_line_str",
    ".debug_str_offsets",
    ".debug_addr",
    ".debug_ranges",
    ".debug_rnglists",
};
#define DW_NKEEP (sizeof(dw_part_keep) / sizeof(dw_part_keep[0]))

/* Little-endian reads (dw_part_open takes only ELFDATA2LSB files). */
static uint64_t dw_get(const unsigned char *p, size_t n)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* By start. */
static int dw_arange_cmp(const void *a, const void *b)
{
	const struct dw_arange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * The ranges of .debug_aranges (@p len bytes at @p p) into @p pt,
 * sorted; -1 if it is not what DWARF 2 to 5 write. Read here because
 * libdw's dwarf_getaranges reads them only from a Dwarf that has all of
 * .debug_info (it checks each set's unit there), the inflating we
 * avoid. The format: per set, unit_length (32 or 64-bit), version 2,
 * debug_info_offset, address_size, segment_selector_size 0, padding to
 * twice the address size, (address, length) pairs up to (0, 0).
 */
static int dw_aranges(struct dw_part *pt, const unsigned char *p, size_t len)
{
	size_t off = 0, q, end, t, cap = 0;
	uint64_t ulen, cu, lo, l;
	unsigned asz, osz, hdr;

	while (len - off >= 4) {
		ulen = dw_get(p + off, 4);
		hdr = 4;
		osz = 4;
		if (ulen == 0xffffffff) {
			if (len - off < 12)
				return -1;
			ulen = dw_get(p + off + 4, 8);
			hdr = 12;
			osz = 8;
		}
		if (ulen > len - off - hdr || ulen < 2 + osz + 2)
			return -1;
		end = off + hdr + (size_t)ulen;
		q = off + hdr;
		if (dw_get(p + q, 2) != 2)
			return -1;
		cu = dw_get(p + q + 2, osz);
		asz = p[q + 2 + osz];
		if ((asz != 4 && asz != 8) || p[q + 3 + osz] != 0)
			return -1;
		t = 2 * asz;
		q = off + (hdr + 4 + osz + t - 1) / t * t;
		for (; q + t <= end; q += t) {
			lo = dw_get(p + q, asz);
			l = dw_get(p + q + asz, asz);
			if (lo == 0 && l == 0)
				break;
			if (l == 0)
				continue;
			if (hp_grow((void **)&pt->ar, &cap, pt->nar + 1,
			        sizeof(*pt->ar)) == -1)
				return -1;
			pt->ar[pt->nar].lo = lo;
			pt->ar[pt->nar].hi = lo + l;
			pt->ar[pt->nar++].cu = cu;
		}
		off = end;
	}
	qsort(pt->ar, pt->nar, sizeof(*pt->ar), dw_arange_cmp);
	return 0;
}

/* The unit offset of the range holding @p a, or -1: the last range
 * starting at or below it, or one of the few before should ranges
 * overlap. */
static int64_t dw_arange_find(const struct dw_part *pt, uint64_t a)
{
	size_t lo = 0, hi = pt->nar, mid, k;

	if (pt->nar == 0 || pt->ar[0].lo > a)
		return -1;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (pt->ar[mid].lo <= a)
			lo = mid;
		else
			hi = mid;
	}
	for (k = 0; k < 4 && k <= lo; k++)
		if (a < pt->ar[lo - k].hi)
			return (int64_t)pt->ar[lo - k].cu;
	return -1;
}

/* A section being inflated: the stream and what came out so far. */
struct dw_inflate {
	z_stream z;
	unsigned char *buf; /* its whole size; pages touched as filled */
	size_t size, have;
	int started;
};

/* Inflate @p f's section @p scn up to @p want bytes (at most its size);
 * 0, or -1. libelf's elf_compress inflates whole sections only. */
static int dw_inflate_to(Elf *elf, Elf_Scn *scn, struct dw_inflate *f,
    size_t want)
{
	GElf_Chdr ch;
	Elf_Data *raw;
	size_t hdr;
	int r;

	if (!f->started) {
		f->started = 1;
		if (gelf_getchdr(scn, &ch) == NULL ||
		    ch.ch_type != ELFCOMPRESS_ZLIB ||
		    (raw = elf_rawdata(scn, NULL)) == NULL)
			return -1;
		hdr = gelf_getclass(elf) == ELFCLASS64 ? sizeof(Elf64_Chdr)
		                                       : sizeof(Elf32_Chdr);
		if (raw->d_size < hdr || ch.ch_size == 0 ||
		    (f->buf = malloc(ch.ch_size)) == NULL ||
		    inflateInit(&f->z) != Z_OK) {
			free(f->buf);
			f->buf = NULL;
			return -1;
		}
		f->size = ch.ch_size;
		f->z.next_in = (unsigned char *)raw->d_buf + hdr;
		f->z.avail_in = (uInt)(raw->d_size - hdr);
	}
	if (f->buf == NULL)
		return -1;
	if (want > f->size)
		want = f->size;
	while (f->have < want) {
		f->z.next_out = f->buf + f->have;
		f->z.avail_out = (uInt)(want - f->have);
		r = inflate(&f->z, Z_NO_FLUSH);
		f->have = (size_t)(f->z.next_out - f->buf);
		if (r == Z_STREAM_END)
			break;
		if (r != Z_OK)
			return -1;
	}
	return f->have >= want ? 0 : -1;
}

/* The section named @p name of @p elf, or NULL. */
static Elf_Scn *dw_scn(Elf *elf, size_t shstrndx, const char *name,
    GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	const char *n;

	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, sh) != NULL &&
		    (n = elf_strptr(elf, shstrndx, sh->sh_name)) != NULL &&
		    strcmp(n, name) == 0)
			return scn;
	return NULL;
}

/* Write the sections @p bufs (lengths @p lens; NULL: left out) as an
 * ELF file like @p src into a memfd, and open it as pt's Elf and
 * Dwarf; -1 on failure. */
static int dw_write(struct dw_part *pt, Elf *src,
    const unsigned char *const *bufs, const size_t *lens)
{
	GElf_Ehdr eh, seh;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *data;
	Elf *out;
	char strtab[256];
	size_t i, nstr = 1;
	int rv = -1;

	if (gelf_getehdr(src, &seh) == NULL ||
	    (pt->fd = memfd_create("jm4lw-dwarf", MFD_CLOEXEC)) == -1)
		return -1;
	if ((out = elf_begin(pt->fd, ELF_C_WRITE, NULL)) == NULL)
		return -1;
	strtab[0] = '\0';
	if (gelf_newehdr(out, gelf_getclass(src)) == NULL ||
	    gelf_getehdr(out, &eh) == NULL)
		goto out;
	memcpy(eh.e_ident, seh.e_ident, EI_NIDENT);
	eh.e_type = seh.e_type;
	eh.e_machine = seh.e_machine;
	eh.e_version = EV_CURRENT;
	for (i = 0; i < DW_NKEEP; i++) {
		if (bufs[i] == NULL)
			continue;
		if ((scn = elf_newscn(out)) == NULL ||
		    (data = elf_newdata(scn)) == NULL ||
		    gelf_getshdr(scn, &sh) == NULL)
			goto out;
		data->d_buf = (void *)bufs[i];
		data->d_size = lens[i];
		data->d_type = ELF_T_BYTE;
		data->d_align = 1;
		data->d_version = EV_CURRENT;
		sh.sh_name = nstr;
		sh.sh_type = SHT_PROGBITS;
		sh.sh_addralign = 1;
		nstr += (size_t)snprintf(strtab + nstr, sizeof(strtab) - nstr,
		            "%s", dw_part_keep[i]) +
		    1;
		if (gelf_update_shdr(scn, &sh) == 0)
			goto out;
	}
	if ((scn = elf_newscn(out)) == NULL ||
	    (data = elf_newdata(scn)) == NULL || gelf_getshdr(scn, &sh) == NULL)
		goto out;
	sh.sh_name = nstr;
	nstr += (size_t)snprintf(strtab + nstr, sizeof(strtab) - nstr, "%s",
	            ".shstrtab") +
	    1;
	data->d_buf = strtab;
	data->d_size = nstr;
	data->d_type = ELF_T_BYTE;
	data->d_align = 1;
	data->d_version = EV_CURRENT;
	sh.sh_type = SHT_STRTAB;
	sh.sh_addralign = 1;
	eh.e_shstrndx = (unsigned)elf_ndxscn(scn);
	if (gelf_update_shdr(scn, &sh) == 0 ||
	    gelf_update_ehdr(out, &eh) == 0 || elf_update(out, ELF_C_WRITE) < 0)
		goto out;
	rv = 0;
out:
	elf_end(out);
	if (rv == 0 &&
	    ((pt->elf = elf_begin(pt->fd, ELF_C_READ_MMAP, NULL)) == NULL ||
	        (pt->dbg = dwarf_begin_elf(pt->elf, DWARF_C_READ, NULL)) ==
	            NULL))
		rv = -1;
	return rv;
}

struct dw_part *dw_part_open(int fd, const uint64_t *addrs, size_t n,
    uint64_t text)
{
	struct dw_inflate f[DW_NKEEP], far;
	const unsigned char *bufs[DW_NKEEP];
	size_t lens[DW_NKEEP], shstrndx, i, cut = 0;
	Elf_Scn *scns[DW_NKEEP], *ascn;
	struct dw_part *pt;
	GElf_Shdr sh;
	Elf_Data *raw;
	Elf *elf;
	int64_t cu, last = -1;
	uint64_t ulen;
	int ok = 0;

	memset(f, 0, sizeof(f));
	memset(&far, 0, sizeof(far));
	memset(bufs, 0, sizeof(bufs));
	memset(scns, 0, sizeof(scns));
	if ((pt = calloc(1, sizeof(*pt))) == NULL)
		return NULL;
	pt->fd = -1;
	if ((elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL)
		goto out;
	/* Little-endian, no dwz file (its units live in another file). */
	if (elf_getident(elf, NULL) == NULL ||
	    elf_getident(elf, NULL)[EI_DATA] != ELFDATA2LSB ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0 ||
	    dw_scn(elf, shstrndx, ".gnu_debugaltlink", &sh) != NULL ||
	    dw_scn(elf, shstrndx, ".debug_sup", &sh) != NULL ||
	    dw_scn(elf, shstrndx, ".debug_types", &sh) != NULL)
		goto out;
	/* Its addresses are the object's (no prelink moved one of them). */
	if (dw_scn(elf, shstrndx, ".text", &sh) == NULL || sh.sh_addr != text)
		goto out;
	for (i = 0; i < DW_NKEEP; i++)
		if ((scns[i] = dw_scn(elf, shstrndx, dw_part_keep[i], &sh)) !=
		        NULL &&
		    (sh.sh_type == SHT_NOBITS ||
		        ((sh.sh_flags & SHF_COMPRESSED) == 0 && i == 0)))
			goto out; /* not compressed: libdwfl maps it */
	if (scns[0] == NULL ||
	    (ascn = dw_scn(elf, shstrndx, ".debug_aranges", &sh)) == NULL)
		goto out;
	/* The units the addresses are in: the last one is the cut. */
	if ((sh.sh_flags & SHF_COMPRESSED) != 0) {
		if (dw_inflate_to(elf, ascn, &far, (size_t)-1) == -1 ||
		    dw_aranges(pt, far.buf, far.have) == -1)
			goto out;
	} else if ((raw = elf_rawdata(ascn, NULL)) == NULL ||
	    dw_aranges(pt, raw->d_buf, raw->d_size) == -1) {
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((cu = dw_arange_find(pt, addrs[i])) > last)
			last = cu;
	if (last == -1)
		goto out;
	/* .debug_info to the end of that unit (its unit_length). A unit
	 * the aranges place past the section's end: a file we do not read
	 * (the files are hostile: ENGINE.md). */
	(void)dw_inflate_to(elf, scns[0], &f[0], (size_t)last + 12);
	if (f[0].have < (size_t)last + 4)
		goto out;
	ulen = dw_get(f[0].buf + last, 4);
	if (ulen == 0xffffffff) {
		if (f[0].have < (size_t)last + 12)
			goto out;
		ulen = 12 + dw_get(f[0].buf + last + 4, 8);
	} else {
		ulen += 4;
	}
	if (ulen > f[0].size - (size_t)last)
		goto out;
	cut = (size_t)last + (size_t)ulen;
	if (dw_inflate_to(elf, scns[0], &f[0], cut) == -1)
		goto out;
	bufs[0] = f[0].buf;
	lens[0] = cut;
	for (i = 1; i < DW_NKEEP; i++) {
		if (scns[i] == NULL || gelf_getshdr(scns[i], &sh) == NULL)
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) == 0) {
			if ((raw = elf_rawdata(scns[i], NULL)) == NULL)
				goto out;
			bufs[i] = raw->d_buf;
			lens[i] = raw->d_size;
		} else if (dw_inflate_to(elf, scns[i], &f[i], (size_t)-1) ==
		    0) {
			bufs[i] = f[i].buf;
			lens[i] = f[i].have;
		} else {
			goto out;
		}
	}
	if (dw_write(pt, elf, bufs, lens) == -1)
		goto out;
	pt->info_len = cut;
	ok = 1;
out:
	for (i = 0; i < DW_NKEEP; i++) {
		if (f[i].started && f[i].buf != NULL)
			inflateEnd(&f[i].z);
		free(f[i].buf);
	}
	if (far.started && far.buf != NULL)
		inflateEnd(&far.z);
	free(far.buf);
	elf_end(elf);
	if (!ok) {
		dw_part_free(pt);
		return NULL;
	}
	return pt;
}

Dwarf_Die *dw_part_cudie(struct dw_part *p, uint64_t addr, Dwarf_Die *mem)
{
	Dwarf_Off next;
	size_t hsize;
	int64_t cu;

	if (p == NULL || (cu = dw_arange_find(p, addr)) == -1 ||
	    (size_t)cu >= p->info_len ||
	    dwarf_next_unit(p->dbg, (Dwarf_Off)cu, &next, &hsize, NULL, NULL,
	        NULL, NULL, NULL, NULL) != 0 ||
	    next > p->info_len ||
	    dwarf_offdie(p->dbg, (Dwarf_Off)cu + hsize, mem) == NULL)
		return NULL;
	return mem;
}

void dw_part_free(struct dw_part *p)
{
	if (p == NULL)
		return;
	if (p->dbg != NULL)
		dwarf_end(p->dbg);
	if (p->elf != NULL)
		elf_end(p->elf);
	if (p->fd != -1)
		close(p->fd);
	free(p->ar);
	free(p);
}

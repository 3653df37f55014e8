/*
 * dw_part — a separate debug file's compressed DWARF, inflated only as
 * far as a profile needs. Include after <elfutils/libdw.h>.
 */
#ifndef JM4LW_DW_PART_H
#define JM4LW_DW_PART_H

#include <stddef.h>
#include <stdint.h>

struct dw_part;

/*
 * The DWARF of the debug file open at @p fd, for the addresses
 * @p addrs[0..@p n) (ELF virtual addresses of the object): every section
 * libdw reads to walk a unit's DIEs, inflated, .debug_info only up to
 * the end of the last unit .debug_aranges gives for one of the
 * addresses. NULL when that is not worth it or not possible (the
 * sections are not compressed, no .debug_aranges, a dwz file, no
 * memory, its .text not at @p text, the object's): the caller then asks
 * libdwfl, which inflates all. @p fd is the caller's to close.
 */
struct dw_part *dw_part_open(int fd, const uint64_t *addrs, size_t n,
    uint64_t text);

/* The unit holding @p addr, into @p mem; NULL when this part does not
 * hold it (ask libdwfl). */
Dwarf_Die *dw_part_cudie(struct dw_part *p, uint64_t addr, Dwarf_Die *mem);

/* Free all of @p p (NULL is nothing). */
void dw_part_free(struct dw_part *p);

#endif

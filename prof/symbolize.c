/*
 * The symbolizer's front: the per-pc cache (a profile's stacks share most
 * of their addresses) and the choice of backend. Where the frames come
 * from is a backend's business (struct sym_ops): libdwfl
 * (symbolize_dwfl.c, when built with elfutils), our own ELF symbol-table
 * reader (symbolize_elf.c), or the table of a symbolized profile
 * (symbolize_table.c). What the front and the backends both use (the
 * symbolizer itself, names in the forms people read, the demangler, the
 * objects to open) is symbolize_common.c's, so the backends never call
 * back into this file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize_impl.h"

/*
 * The objects' backends, by name. The first is the one this build reads
 * objects with: libdw's (symbols, DWARF inline frames, file:line,
 * separate debuginfo) when built with elfutils, else the ELF symbol
 * tables'. A symbolized profile needs no objects: sym_new_table.
 */
static const struct sym_backend_def {
	const char *name;
	sym_open_fn *open;
} sym_backends[] = {
#ifdef JM4LW_HAVE_LIBDW
    {.name = "libdw", .open = sym_dwfl_open},
#endif
    {.name = "elf", .open = sym_elf_open},
};

/* The name of this build's objects' backend, the table's first. */
const char *sym_backend(void)
{
	return sym_backends[0].name;
}

/* Lines wanted: the cache made without them goes. */
void sym_want_lines(struct symbolizer *s)
{
	if (s->lines)
		return;
	s->lines = 1;
	hmap_clear(&s->cache);
	s->nframes = 0;
}

/* A profile's symbolizer: its own table, or its objects'. */
struct symbolizer *sym_new(const struct heap_profile *hp, const char *binary,
    char *err, size_t errlen)
{
	/* A symbolized profile names its own addresses: the objects it was
	 * made from need not be on this machine. */
	if (hp->symbolized)
		return sym_new_table(hp, err, errlen);
	return sym_backends[0].open(hp, binary, 0, err, errlen);
}

/* The running process's: its objects as it has them mapped. */
struct symbolizer *sym_new_self(const struct heap_profile *hp, char *err,
    size_t errlen)
{
	return sym_backends[0].open(hp, NULL, 1, err, errlen);
}

/* The backend's answer: the GNU build ID of a mapping's object. */
size_t sym_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits)
{
	return s->ops->build_id(s, m, bits);
}

/* The backend's answer: is @p pc in the allocator's library? */
int sym_in_allocator(struct symbolizer *s, uint64_t pc)
{
	return s->ops->in_allocator(s, pc);
}

/*
 * The frames of @p pc, from the cache if it was looked up before. The
 * cache maps pc << 1 | leaf to where its frames are in s->frames: the
 * first's index << 8 | how many (at most SYM_INLINE_MAX).
 */
int sym_lookup(struct symbolizer *s, uint64_t pc, int leaf,
    struct sym_frame *out, int max)
{
	struct sym_frame tmp[SYM_INLINE_MAX];
	uint64_t key = pc << 1 | (leaf != 0), addr, *v;
	char hex[32];
	int n, i;

	if ((v = hmap_get(&s->cache, key)) != NULL) {
		n = (int)(*v & 0xff) < max ? (int)(*v & 0xff) : max;
		memcpy(out, s->frames + (*v >> 8), (size_t)n * sizeof(*out));
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
	if (hp_grow((void **)&s->frames, &s->cap_frames, s->nframes + (size_t)n,
	        sizeof(*s->frames)) == -1 ||
	    (v = hmap_put(&s->cache, key, NULL)) == NULL)
		goto nocache;
	memcpy(s->frames + s->nframes, tmp, (size_t)n * sizeof(*tmp));
	*v = (uint64_t)s->nframes << 8 | (uint64_t)n;
	s->nframes += (size_t)n;
nocache:
	for (i = 0; i < n && i < max; i++)
		out[i] = tmp[i];
	return i;
}

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

/* One looked-up pc: its frames, in the frames array. */
struct sym_entry {
	uint64_t pc; /* with the leaf bit in bit 0 of key */
	uint64_t key;
	size_t first;
	int n;
};

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

const char *sym_backend(void)
{
	return sym_backends[0].name;
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
	return sym_backends[0].open(hp, binary, 0, err, errlen);
}

struct symbolizer *sym_new_self(const struct heap_profile *hp, char *err,
    size_t errlen)
{
	return sym_backends[0].open(hp, NULL, 1, err, errlen);
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

/*
 * jeprof's symbolized profile: a "--- symbol" section naming each address
 * of the profile once, then the profile as dumped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "render.h"

/* Has @p key been written? A set of addresses, open addressing. */
struct pc_set {
	uint64_t *keys; /* 0 is free: no address 0 is ever looked up */
	size_t cap, n;
};

/* Add @p key; 1 if it is new, 0 if it was there, -1 out of memory. */
static int pc_add(struct pc_set *set, uint64_t key)
{
	size_t i, h;

	if ((set->n + 1) * 2 > set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 4096;
		uint64_t *nk = calloc(cap, sizeof(*nk));
		if (nk == NULL)
			return -1;
		for (i = 0; i < set->cap; i++) {
			if (set->keys[i] == 0)
				continue;
			for (h = set->keys[i] * 0x9e3779b97f4a7c15ull;
			     nk[(h >> 20) & (cap - 1)] != 0; h += 1ull << 20)
				;
			nk[(h >> 20) & (cap - 1)] = set->keys[i];
		}
		free(set->keys);
		set->keys = nk;
		set->cap = cap;
	}
	for (h = key * 0x9e3779b97f4a7c15ull;
	     set->keys[(h >> 20) & (set->cap - 1)] != 0; h += 1ull << 20)
		if (set->keys[(h >> 20) & (set->cap - 1)] == key)
			return 0;
	set->keys[(h >> 20) & (set->cap - 1)] = key;
	set->n++;
	return 1;
}

int render_symbolized(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const char *binary, const char *raw, size_t rawlen)
{
	struct sym_frame fr[SYM_INLINE_MAX];
	struct pc_set set = {0};
	uint64_t addr;
	size_t k, d;
	int n, i, r;

	fprintf(out, "--- symbol\n");
	if (binary != NULL)
		fprintf(out, "binary=%s\n", binary);
	for (k = 0; k < hp->nstacks; k++)
		for (d = 0; d < hp->stacks[k].depth; d++) {
			/* jeprof looks callers up at pc - 1 (a return
			 * address points past its call). */
			addr = hp->stacks[k].pc[d] - (d > 0);
			if (addr == 0 || (r = pc_add(&set, addr)) == 0)
				continue;
			if (r == -1) {
				free(set.keys);
				errno = ENOMEM;
				return -1;
			}
			n = sym_lookup(sym, hp->stacks[k].pc[d], d == 0, fr,
			    SYM_INLINE_MAX);
			/* Callers first, "--" between: jeprof's order. */
			fprintf(out, "0x%llx ", (unsigned long long)addr);
			for (i = n; i-- > 0;)
				fprintf(out, "%s%s", fr[i].name,
				    i ? "--" : "\n");
		}
	free(set.keys);
	fprintf(out, "---\n--- heap\n");
	fwrite(raw, 1, rawlen, out);
	return ferror(out) ? -1 : 0;
}

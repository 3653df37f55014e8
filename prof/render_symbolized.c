/*
 * jeprof's symbolized profile: a "--- symbol" section naming each address
 * of the profile once, then the profile as dumped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "render.h"

/* Every address named once, then the profile (see render.h). */
int render_symbolized(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const char *binary, const char *raw, size_t rawlen)
{
	struct sym_frame fr[SYM_INLINE_MAX];
	struct hmap set = {0}; /* the addresses written */
	uint64_t addr;
	size_t k, d;
	int n, i, added;

	fprintf(out, "--- symbol\n");
	if (binary != NULL)
		fprintf(out, "binary=%s\n", binary);
	for (k = 0; k < hp->nstacks; k++)
		for (d = 0; d < hp->stacks[k].depth; d++) {
			/* jeprof looks callers up at pc - 1 (a return
			 * address points past its call). */
			addr = hp->stacks[k].pc[d] - (d > 0);
			if (addr == 0)
				continue;
			if (hmap_put(&set, addr, &added) == NULL) {
				hmap_free(&set);
				errno = ENOMEM;
				return -1;
			}
			if (!added)
				continue;
			n = sym_lookup(sym, hp->stacks[k].pc[d], d == 0, fr,
			    SYM_INLINE_MAX);
			/* Callers first, "--" between: jeprof's order. */
			fprintf(out, "0x%llx ", (unsigned long long)addr);
			for (i = n; i-- > 0;)
				fprintf(out, "%s%s", fr[i].name,
				    i ? "--" : "\n");
		}
	hmap_free(&set);
	fprintf(out, "---\n--- heap\n");
	fwrite(raw, 1, rawlen, out);
	return ferror(out) ? -1 : 0;
}

/*
 * jeprof's symbolized profile: a "--- symbol" section naming each address
 * of the profile once, then the profile as dumped, each stack's leading
 * frames in the allocator's library cut (render_dump: the raw profile
 * served over HTTP is written by it too).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

/*
 * How many of a stack's leading frames to cut: those in the allocator's
 * library (sym_in_allocator), the frames render_view_stack cuts for
 * every format of ours. None when every frame is the allocator's (a
 * stack needs a frame: jeprof reads an empty "@" line as the stack
 * before it), or when the new leaf is 0 (it is written as pc - 1).
 */
static size_t alloc_frames(struct symbolizer *sym, const uint64_t *pc,
    size_t depth)
{
	size_t d;

	for (d = 0; d < depth && sym_in_allocator(sym, pc[d]); d++)
		;
	return d < depth && pc[d] > 0 ? d : 0;
}

/* Every address named once, then the profile (see render.h). */
int render_symbolized(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const char *binary, const char *raw, size_t rawlen)
{
	struct sym_frame fr[SYM_INLINE_MAX];
	struct hmap set = {0}; /* the addresses written */
	uint64_t addr;
	size_t k, d;
	FILE *in;
	int n, i, added, r;

	fprintf(out, "--- symbol\n");
	if (binary != NULL)
		fprintf(out, "binary=%s\n", binary);
	for (k = 0; k < hp->nstacks; k++)
		/* The frames render_dump keeps, the first of them the leaf
		 * now: written as pc - 1, so looked up at the same address. */
		for (d = alloc_frames(sym, hp->stacks[k].pc,
		         hp->stacks[k].depth);
		     d < hp->stacks[k].depth; d++) {
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
	if (rawlen == 0)
		return ferror(out) ? -1 : 0; /* the caller copies it */
	/* fmemopen: render_dump reads the file a profile is served from
	 * as a stream (tens of MB, not read whole); this one is in memory. */
	if ((in = fmemopen((void *)(uintptr_t)raw, rawlen, "r")) == NULL)
		return -1;
	r = render_dump(out, in, sym);
	fclose(in);
	return r;
}

/*
 * The "@ 0x.. 0x.." line @p line with its leading allocator frames cut
 * (alloc_frames' rule, asked one address at a time: most stacks keep
 * all but a few), to @p out; 1 if it was cut, 0 if it is to be written
 * as it is (no such frames, all of them such, or not a stack of hex
 * addresses).
 */
static int cut_line(FILE *out, const char *line, struct symbolizer *sym)
{
	const char *p = line + 1;
	unsigned long long pc;
	char *end;
	size_t d = 0;

	for (;; d++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\r' || *p == '\0')
			return 0; /* every frame the allocator's, or none */
		errno = 0;
		pc = strtoull(p, &end, 16);
		if (end == p || errno != 0 ||
		    (*end != ' ' && *end != '\t' && *end != '\n' &&
		        *end != '\r' && *end != '\0'))
			return 0;
		p = end;
		if (!sym_in_allocator(sym, (uint64_t)pc))
			break;
	}
	if (d == 0 || pc == 0)
		return 0;
	/* jeprof looks a leaf up as it is and a caller at pc - 1: the new
	 * leaf, a caller, is written as pc - 1 to be named as one. */
	fprintf(out, "@ 0x%llx%s", pc - 1, p);
	return 1;
}

/* The heap_v2 profile on @p in to @p out, each stack cut (render.h). */
int render_dump(FILE *out, FILE *in, struct symbolizer *sym)
{
	char *line = NULL, buf[65536];
	size_t cap = 0, n;
	ssize_t len;
	int r = 0;

	/* Line by line up to the mappings, which are copied as they are. */
	while ((len = getline(&line, &cap, in)) != -1) {
		if (line[0] == '@' && cut_line(out, line, sym))
			continue;
		fwrite(line, 1, (size_t)len, out);
		if (strncmp(line, "MAPPED_LIBRARIES:", 17) == 0)
			break;
	}
	free(line);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in)) {
		errno = errno ? errno : EIO;
		r = -1;
	}
	return ferror(out) ? -1 : r;
}

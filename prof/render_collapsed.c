/*
 * FlameGraph's collapsed stacks: one "outer;...;leaf value" line per
 * stack's view ("old new" for a difference).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

/* Write @p f with any ';' as ':' (';' separates frames). */
static void put_frame(FILE *out, const char *f)
{
	const char *semi;

	while ((semi = strchr(f, ';')) != NULL) {
		fwrite(f, 1, (size_t)(semi - f), out);
		fputc(':', out);
		f = semi + 1;
	}
	fputs(f, out);
}

/* One line per stack with a value, root first (see render.h). */
int render_collapsed(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, enum render_value v)
{
	struct render_view vw = {0};
	long long x, old, now;
	size_t k, i;

	/* Stacks that symbolize alike are separate lines here: the tools
	 * that read collapsed stacks (flamegraph.pl, speedscope, inferno)
	 * add them up. */
	for (k = 0; k < hp->nstacks; k++) {
		if (render_view_stack(&vw, &hp->stacks[k], sym) == -1) {
			render_view_free(&vw);
			errno = ENOMEM;
			return -1;
		}
		x = render_round(render_value_of(&hp->stacks[k], v));
		old = render_round(render_base_of(&hp->stacks[k], v));
		if (vw.n == 0 || (x == 0 && (!hp->diff || old == 0)))
			continue;
		for (i = vw.n; i-- > 0;) {
			put_frame(out, vw.f[i].f.func);
			fputc(i > 0 ? ';' : ' ', out);
		}
		/* difffolded.pl's "old new"; their sum saturates as each
		 * of them did. */
		if (hp->diff) {
			if (__builtin_add_overflow(old, x, &now))
				now = render_round(
				    x < 0 ? -RENDER_MAX : RENDER_MAX);
			fprintf(out, "%lld %lld\n", old, now);
		} else
			fprintf(out, "%lld\n", x);
	}
	render_view_free(&vw);
	return ferror(out) ? -1 : 0;
}

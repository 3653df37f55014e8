/*
 * profile — a dump made readable, in the process that wrote it: parse
 * (heapprof), symbolize against the objects this process has mapped
 * (sym_new_self), render. Runs on the module's worker, whose own
 * allocations jemalloc does not sample; everything it builds is freed
 * before it returns, so nothing stays in the host between jobs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "heapprof.h"
#include "render.h"
#include "render_svg.h"
#include "symbolize.h"

const char *profile_symbolizer(void)
{
	return sym_backend();
}

/* A view's heading line: what the table below is. */
static void profile_heading(FILE *out, enum dump_view view, const char *base,
    int have_base)
{
	if (view == DUMP_VIEW_TEXT)
		fprintf(out, "# live heap, top %d functions by bytes in use\n",
		    PROFILE_TOP_ROWS);
	else if (view == DUMP_VIEW_DIFF && have_base)
		fprintf(out,
		    "# growth since %s, top %d functions by bytes grown "
		    "(negative: shrank)\n",
		    base, PROFILE_TOP_ROWS);
}

int profile_render(enum dump_view view, const char *dump, const char *base,
    FILE *out, char *err, size_t errlen)
{
	struct heap_profile hp, old = {0};
	struct symbolizer *sym = NULL;
	char why[512];
	int r = -1, have_base = 0;

	if (heapprof_load(dump, &hp, err, errlen) == -1)
		return -1;
	if (view == DUMP_VIEW_DIFF) {
		/* No earlier dump, or retention took it: the live heap, and
		 * a line saying why there is no growth to show. */
		if (base == NULL || base[0] == '\0')
			fprintf(out,
			    "# no earlier dump by this process to compare "
			    "with; the next jmdf compares with this one\n");
		else if (heapprof_load(base, &old, why, sizeof(why)) == -1)
			fprintf(out,
			    "# cannot compare with the last dump: %s\n", why);
		else if (heapprof_subtract(&hp, &old) == -1) {
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			goto out;
		} else
			have_base = 1;
		if (!have_base)
			fprintf(out, "# live heap, top %d functions\n",
			    PROFILE_TOP_ROWS);
	}
	/* Collapsed stacks have no room for a remark: say it instead. */
	if (view == DUMP_VIEW_COLLAPSED && hp.u_bytes == 0) {
		snprintf(err, errlen,
		    "the heap profile has no samples (is prof.active "
		    "false? jmep turns it on)");
		goto out;
	}
	if ((sym = sym_new_self(&hp, err, errlen)) == NULL)
		goto out;
	profile_heading(out, view, base, have_base);
	switch (view) {
	case DUMP_VIEW_TEXT:
	case DUMP_VIEW_DIFF:
		r = render_text(out, &hp, sym, RENDER_SPACE, PROFILE_TOP_ROWS);
		break;
	case DUMP_VIEW_COLLAPSED:
		r = render_collapsed(out, &hp, sym, RENDER_SPACE);
		break;
	case DUMP_VIEW_SVG:
		r = render_svg(out, &hp, sym, RENDER_SPACE,
		    have_base ? "heap growth" : "live heap");
		break;
	case DUMP_VIEW_NONE:
		r = 0;
		break;
	}
	if (r == -1)
		snprintf(err, errlen, "cannot render the profile: %s",
		    strerror(errno));
out:
	sym_free(sym);
	heapprof_free(&hp);
	heapprof_free(&old);
	return r;
}

int profile_symbolized(const char *dump, FILE *out, char *err, size_t errlen)
{
	struct heap_profile hp;
	struct symbolizer *sym;
	char buf[65536];
	size_t n;
	FILE *in;
	int r;

	if (heapprof_load(dump, &hp, err, errlen) == -1)
		return -1;
	if ((sym = sym_new_self(&hp, err, errlen)) == NULL) {
		heapprof_free(&hp);
		return -1;
	}
	/* The symbols, then the dump copied after "--- heap": not read
	 * into memory whole (profiles run to tens of MB). */
	for (n = 0; n < hp.nmaps && hp.maps[n].path[0] != '/'; n++)
		;
	r = render_symbolized(out, &hp, sym,
	    n < hp.nmaps ? hp.maps[n].path : NULL, "", 0);
	sym_free(sym);
	heapprof_free(&hp);
	if (r == -1 || (in = fopen(dump, "re")) == NULL) {
		snprintf(err, errlen, "cannot write the symbolized profile: %s",
		    strerror(errno));
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	r = ferror(in) || ferror(out) ? -1 : 0;
	if (r == -1)
		snprintf(err, errlen, "cannot write the symbolized profile: %s",
		    strerror(errno ? errno : EIO));
	fclose(in);
	return r;
}

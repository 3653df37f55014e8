/*
 * jm4lw-prof: a jemalloc heap profile, symbolized, as text people read,
 * collapsed stacks flame-graph tools read, a flame graph (SVG) a
 * browser opens, or pprof's protobuf for go tool pprof, Parca and
 * Pyroscope. Offline: the objects named in the profile's
 * MAPPED_LIBRARIES, as found on this machine, or --binary for the main
 * program. A symbolized profile (jeprof's, ClickHouse's
 * .heap.symbolized, our -f symbolized) names its own addresses and
 * needs neither.
 *
 *	jm4lw-prof [-f text|collapsed|symbolized|svg|pprof] [--objects]
 *	           [--base OLD] [--binary PATH] [-o FILE] PROFILE
 *
 * Exit status: 0 done, 1 the profile or an output could not be used
 * (one line on stderr), 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof.h"
#include "render.h"
#include "render_svg.h"
#include "render_pprof.h"
#include "symbolize.h"

/* libstdc++'s demangler, linked in: C++ names as people read them. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
    int *status);

static const char usage_text[] =
    "usage: jm4lw-prof [-f text|collapsed|symbolized|svg|pprof] [--objects] "
    "[--base OLD] [--binary PATH] [-o FILE] PROFILE\n"
    "  -f text       jeprof --text's table: flat, flat%, sum%, cum, cum%, "
    "function (default)\n"
    "  -f collapsed  one \"outer;...;leaf bytes\" line per stack, for "
    "flamegraph.pl\n"
    "                (with --base: \"outer;...;leaf old new\", which "
    "flamegraph.pl draws as a difference)\n"
    "  -f symbolized jeprof's symbolized profile: jeprof reads it on any "
    "machine, without the program\n"
    "  -f svg        an interactive flame graph, one self-contained file "
    "(with --base: red grew, blue shrank)\n"
    "  -f pprof      gzipped pprof protobuf, Go's heap layout (go tool "
    "pprof, Parca); --objects is moot\n"
    "  --objects     count objects instead of bytes\n"
    "  --base OLD    what grew since the profile OLD (jeprof's --base)\n"
    "  --binary PATH the main program's file, when it is not where the "
    "profile says\n"
    "  -o FILE       write there instead of standard output\n";

/* -f symbolized: the symbols, then the profile file itself, as read
 * again (the parser keeps only what it understood); of a symbolized
 * file, its profile part, after its own symbols. */
static int symbolized(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const char *binary, const char *path)
{
	char *raw = NULL;
	size_t len = 0, i, hp_off;
	FILE *in;
	int r;

	if (binary == NULL) /* a symbolized file's, as it names it */
		binary = hp->binary;
	if (binary == NULL) /* the main program, as the profile names it */
		for (i = 0; i < hp->nmaps && binary == NULL; i++)
			if (hp->maps[i].path[0] == '/')
				binary = hp->maps[i].path;
	if ((in = fopen(path, "re")) == NULL)
		return -1;
	if (getdelim(&raw, &len, '\0', in) == -1 && ferror(in)) {
		fclose(in);
		free(raw);
		return -1;
	}
	len = raw != NULL ? strlen(raw) : 0;
	fclose(in);
	if (hp->profile_offset > len) /* changed since it was read */
		hp_off = len;
	else
		hp_off = hp->profile_offset;
	r = render_symbolized(out, hp, sym, binary,
	    raw != NULL ? raw + hp_off : "", len - hp_off);
	free(raw);
	return r;
}

/* A usage error: the reason, the usage, exit status 2. */
static int usage(const char *why, const char *what)
{
	if (why != NULL)
		fprintf(stderr, "jm4lw-prof: %s%s\n", why, what ? what : "");
	fputs(usage_text, stderr);
	return 2;
}

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"binary", required_argument, NULL, 'b'},
	    {"objects", no_argument, NULL, 'O'},
	    {"base", required_argument, NULL, 'B'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *format = "text", *binary = NULL, *outpath = NULL;
	const char *basepath = NULL;
	struct heap_profile base = {0};
	enum render_value v = RENDER_SPACE;
	struct heap_profile hp;
	struct symbolizer *sym;
	FILE *out = stdout;
	char err[512];
	size_t w;
	int ch, r;

	sym_set_demangler(__cxa_demangle);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'b':
			binary = optarg;
			break;
		case 'O':
			v = RENDER_OBJECTS;
			break;
		case 'B':
			basepath = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return usage("an option needs a value: ",
			    argv[optind - 1]);
		default:
			return usage("unknown option: ", argv[optind - 1]);
		}
	}
	if (strcmp(format, "text") != 0 && strcmp(format, "collapsed") != 0 &&
	    strcmp(format, "symbolized") != 0 && strcmp(format, "svg") != 0 &&
	    strcmp(format, "pprof") != 0)
		return usage("unknown format (want text, collapsed, "
		             "symbolized, svg or pprof): ",
		    format);
	if (optind + 1 != argc)
		return usage(optind == argc ? "no profile given"
		                            : "one profile at a time",
		    NULL);
	/* A symbolized file carries the profile as dumped: no difference. */
	if (basepath != NULL && strcmp(format, "symbolized") == 0)
		return usage("--base does not go with -f symbolized (it "
		             "carries the profile as dumped)",
		    NULL);
	if (heapprof_load(argv[optind], &hp, err, sizeof(err)) == -1) {
		fprintf(stderr, "jm4lw-prof: %s\n", err);
		return 1;
	}
	/* What grew since basepath: jeprof's --base. */
	if (basepath != NULL &&
	    (heapprof_load(basepath, &base, err, sizeof(err)) == -1 ||
	        heapprof_subtract(&hp, &base) == -1)) {
		fprintf(stderr, "jm4lw-prof: %s\n",
		    base.pcs != NULL ? strerror(ENOMEM) : err);
		heapprof_free(&hp);
		heapprof_free(&base);
		return 1;
	}
	if ((sym = sym_new(&hp, binary, err, sizeof(err))) == NULL) {
		fprintf(stderr, "jm4lw-prof: %s\n", err);
		heapprof_free(&hp);
		heapprof_free(&base);
		return 1;
	}
	/* What is doubtful in the answer, before it (issue 19, #11). */
	for (w = 0; w < hp.nwarn; w++)
		fprintf(stderr, "jm4lw-prof: warning: %s\n", hp.warn[w]);
	for (w = 0; sym_warning(sym, w) != NULL; w++)
		fprintf(stderr, "jm4lw-prof: warning: %s\n",
		    sym_warning(sym, w));
	if (outpath != NULL && (out = fopen(outpath, "we")) == NULL) {
		fprintf(stderr, "jm4lw-prof: %s: %s\n", outpath,
		    strerror(errno));
		sym_free(sym);
		heapprof_free(&hp);
		heapprof_free(&base);
		return 1;
	}
	if (strcmp(format, "symbolized") == 0)
		r = symbolized(out, &hp, sym, binary, argv[optind]);
	else if (strcmp(format, "text") == 0)
		r = render_text(out, &hp, sym, v, 0);
	else if (strcmp(format, "svg") == 0)
		r = render_svg(out, &hp, sym, v, NULL);
	else if (strcmp(format, "pprof") == 0) /* both values, always */
		r = render_pprof(out, &hp, sym);
	else
		r = render_collapsed(out, &hp, sym, v);
	if (fflush(out) != 0)
		r = -1;
	if (r == -1)
		fprintf(stderr, "jm4lw-prof: %s: %s\n",
		    outpath ? outpath : "standard output", strerror(errno));
	if (out != stdout)
		fclose(out);
	sym_free(sym);
	heapprof_free(&hp);
	heapprof_free(&base);
	return r == -1 ? 1 : 0;
}

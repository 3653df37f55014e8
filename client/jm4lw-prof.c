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
 *	jm4lw-prof [-f FORMAT] [--objects]
 *	           [--base OLD] [--binary PATH] [--debug-dir DIR]...
 *	           [--system-debug-dir DIR] [--timeout SECS] [--no-debuginfod]
 *	           [-o FILE] PROFILE
 *	jm4lw-prof --merge [-f FORMAT] [--objects] [...]
 *	           [-o FILE] DUMP...
 *	jm4lw-prof --trend [-f text|json] [--binary PATH] [-o FILE] DUMP...
 *
 * FORMAT is a named row of views[] (prof/view.c): -h lists them, and
 * every list of them below is drawn from that table.
 *
 * Exit status: 0 done, 1 the profile or an output could not be used
 * (one line on stderr), 2 usage.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "heapprof.h"
#include "merge.h"
#include "symbolize.h"
#include "trend.h"
#include "view.h"
#include "when.h"

#ifndef JM4LW_HAVE_LIBIBERTY
/* libstdc++'s demangler, linked in: C++ names as people read them. Built
 * with libiberty, the symbolizer's own default is libiberty's, which
 * reads what this one refuses. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
    int *status);
#endif

/* What each -f format is, for the usage; the list of formats itself is
 * views[] (prof/view.c), so a format added there shows here by name even
 * before it is described. */
static const struct {
	const char *name, *help;
} format_help[] = {
    {"text",
        "jeprof --text's table: flat, flat%, sum%, cum, cum%, "
        "function (default)"},
    {"collapsed",
        "one \"outer;...;leaf bytes\" line per stack, for "
        "flamegraph.pl\n"
        "(with --base: \"outer;...;leaf old new\", which "
        "flamegraph.pl draws as a difference)"},
    {"symbolized",
        "jeprof's symbolized profile: jeprof reads it on any "
        "machine, without the program"},
    {"svg",
        "an interactive flame graph, one self-contained file "
        "(with --base: red grew, blue shrank)"},
    {"pprof",
        "gzipped pprof protobuf, Go's heap layout (go tool "
        "pprof, Parca); --objects is moot\n"
        "(each sample labelled thread=NAME: go tool pprof "
        "-tagfocus=thread=NAME)"},
    {"dot",
        "the call graph in Graphviz dot, as jeprof --dot: pipe it to "
        "dot -Tsvg"},
    {"callgraph",
        "the call graph laid out as SVG by Graphviz's libgvc "
        "(without it: the dot text)"},
    {"threads",
        "the live heap by thread: bytes, objects, % and top "
        "functions of each\n"
        "(jemalloc's per-thread lines; names with "
        "prof_sys_thread_name or jm4lw_thread_name)"},
};

static const char usage_options[] =
    "  --objects     count objects instead of bytes\n"
    "  --base OLD    what grew since the profile OLD (jeprof's --base)\n"
    "  --binary PATH the main program's file, when it is not where the "
    "profile says\n"
    "  --debug-dir DIR  look for debug files there too (repeatable): as a "
    "build-ID tree\n"
    "                (DIR/.build-id/xx/rest.debug) and as a "
    ".gnu_debuglink directory\n"
    "  --system-debug-dir DIR  the distribution's debug root instead of "
    "/usr/lib/debug\n"
    "  --timeout SECS   what debuginfod (DEBUGINFOD_URLS) may take in all "
    "(default 10)\n"
    "  --no-debuginfod  do not ask debuginfod even when DEBUGINFOD_URLS is "
    "set\n"
    "  --fold NAME,...  fold these allocation wrappers into their callers "
    "too (-f text,\n"
    "                threads, --trend), besides those found (always the "
    "innermost frame,\n"
    "                called from 3 or more places) and the default list "
    "(xmalloc, g_malloc, ...);\n"
    "                !NAME never folds NAME (a constructor called from "
    "everywhere)\n"
    "  --no-fold     fold no wrappers: the leaf's own figures, as jeprof's\n"
    "  -o FILE       write there instead of standard output\n"
    "  -h, --help    this help\n"
    "  -V, --version print \"jm4lw-prof VERSION\"\n";

static const char usage_merge[] =
    "  --merge       dumps of one program from many processes (hosts) as "
    "one profile,\n"
    "                summed stack by stack (frames lined up by object and "
    "offset)\n"
    "usage: jm4lw-prof --trend [-f text|json] [--binary PATH] [-o FILE] "
    "DUMP...\n"
    "  --trend       leak suspects over dumps of one process (at least 3, "
    "ordered by\n"
    "                their files' times): functions whose live bytes grew "
    "in nearly\n"
    "                every interval, fastest first\n";

/* The formats views[] draws, "a|b|c"; with @p merge only --merge's. */
static void usage_formats(FILE *f, int merge)
{
	int v, n = 0;

	for (v = 0; v < DUMP_VIEW_COUNT; v++)
		if (views[v].name != NULL && views[v].render != NULL &&
		    (!merge || view_merges(v)))
			fprintf(f, "%s%s", n++ ? "|" : "", views[v].name);
}

/* The usage to @p f: its format lists and "-f NAME" lines are views[]'s
 * drawn rows, so they never disagree with what -f takes. */
static void usage_print(FILE *f)
{
	const char *h, *nl;
	size_t i;
	int v;

	fputs("usage: jm4lw-prof [-f ", f);
	usage_formats(f, 0);
	fputs("] [--objects] [--base OLD] [--binary PATH] [--debug-dir DIR]... "
	      "[--system-debug-dir DIR] [--timeout SECS] [--no-debuginfod] "
	      "[--fold NAME,...|--no-fold] [-o FILE] PROFILE\n",
	    f);
	for (v = 0; v < DUMP_VIEW_COUNT; v++) {
		if (views[v].name == NULL || views[v].render == NULL)
			continue;
		h = "";
		for (i = 0; i < sizeof(format_help) / sizeof(format_help[0]);
		     i++)
			if (strcmp(format_help[i].name, views[v].name) == 0)
				h = format_help[i].help;
		fprintf(f, "  -f %-10s", views[v].name);
		/* Continuation lines of a description, indented under it. */
		while ((nl = strchr(h, '\n')) != NULL) {
			fprintf(f, " %.*s\n%15s", (int)(nl - h), h, "");
			h = nl + 1;
		}
		fprintf(f, " %s\n", h);
	}
	fputs(usage_options, f);
	fputs("usage: jm4lw-prof --merge [-f ", f);
	usage_formats(f, 1);
	fputs("] [--objects] [--binary PATH] [...] [-o FILE] DUMP...\n", f);
	fputs(usage_merge, f);
}

/* A view that carries the profile (-f symbolized): the profile file
 * itself, as read again (the parser keeps only what it understood); of
 * a symbolized file, its profile part, after its own symbols. NULL and
 * errno when it cannot be read; free it. */
static char *raw_profile(const struct heap_profile *hp, const char *path,
    struct view_args *a)
{
	char *raw = NULL;
	size_t len = 0;
	FILE *in;

	if ((in = fopen(path, "re")) == NULL)
		return NULL;
	if (getdelim(&raw, &len, '\0', in) == -1 && ferror(in)) {
		fclose(in);
		free(raw);
		return NULL;
	}
	len = raw != NULL ? strlen(raw) : 0;
	fclose(in);
	/* hp->profile_offset is past the end if it changed since. */
	a->raw = raw != NULL
	    ? raw + (hp->profile_offset > len ? len : hp->profile_offset)
	    : "";
	a->rawlen = raw != NULL ? len - (size_t)(a->raw - raw) : 0;
	return raw != NULL ? raw : strdup("");
}

/* Add @p dir to the ':'-separated list @p dirs of @p size bytes: 0,
 * or -1 when it does not fit (a fixed buffer: a command line's few
 * directories, and nothing to free on the way out). */
static int add_dir(char *dirs, size_t size, const char *dir)
{
	size_t len = strlen(dirs);
	int n;

	n = snprintf(dirs + len, size - len, "%s%s", len > 0 ? ":" : "", dir);
	if (n < 0 || (size_t)n >= size - len) {
		dirs[len] = '\0';
		return -1;
	}
	return 0;
}

/* --timeout's value: whole seconds, 1 to 3600; -1 otherwise. */
static long parse_timeout(const char *v)
{
	char *end;
	long t;

	errno = 0;
	t = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || t < 1 || t > 3600)
		return -1;
	return t;
}

/*
 * The pid in a dump's name, as jemalloc and the module name dumps:
 * PREFIX.PID.SEQ.heap (ours), PREFIX.PID.SEQ.{i,m,u}N.heap and
 * PREFIX.PID.SEQ.f.heap (jemalloc's): the last two numeric fields before
 * those tails. -1 for a name of another shape.
 */
static long dump_pid(const char *path)
{
	const char *name = strrchr(path, '/'), *f[64];
	char buf[1024], *s, *e;
	size_t n = 0, k, len;
	long pid;

	name = name != NULL ? name + 1 : path;
	len = strlen(name);
	if (len < 5 || len >= sizeof(buf) ||
	    strcmp(name + len - 5, ".heap") != 0)
		return -1;
	memcpy(buf, name, len - 5);
	buf[len - 5] = '\0';
	for (s = buf; n < 64; s = e + 1) {
		f[n++] = s;
		if ((e = strchr(s, '.')) == NULL)
			break;
		*e = '\0';
	}
	/* jemalloc's tails: "f", or one of i, m, u and digits. */
	k = n;
	if (k > 0 &&
	    (strcmp(f[k - 1], "f") == 0 ||
	        (strchr("imu", f[k - 1][0]) != NULL && f[k - 1][0] != '\0' &&
	            f[k - 1][1] != '\0' &&
	            strspn(f[k - 1] + 1, "0123456789") == strlen(f[k - 1] + 1))))
		k--;
	if (k < 3 || f[k - 1][0] == '\0' || f[k - 2][0] == '\0' ||
	    strspn(f[k - 1], "0123456789") != strlen(f[k - 1]) ||
	    strspn(f[k - 2], "0123456789") != strlen(f[k - 2]))
		return -1;
	errno = 0;
	pid = strtol(f[k - 2], &e, 10);
	return errno == 0 && *e == '\0' ? pid : -1;
}

/* A file given to --trend: which one, and how many times. */
struct trend_file {
	dev_t dev;
	ino_t ino;
	const char *path;
	int times;
};

/*
 * --trend: each dump reduced to a point (its file's time, each function's
 * live bytes), then prof/trend.c's analysis, the one jmlk runs. A file
 * given more than once counts once; dumps of more than one process (pids
 * in their names, or their mappings) are analysed but warned of, as
 * --base warns: one line on stderr per problem. Exit status as main's.
 */
static int trend_main(char *const *dumps, int n, const char *binary,
    const struct fold_list *fold, const char *format, FILE *out,
    const char *outpath)
{
	struct trend t = {0};
	struct trend_point p;
	struct heap_profile hp;
	struct symbolizer *sym;
	struct trend_file *files;
	struct hp_origin *first = NULL, *o = NULL;
	const char *other_maps = NULL;
	struct stat sb;
	char err[512];
	long pid, pid0 = -1, pid1 = -1;
	int i, j, nfiles = 0, r = 1;

	if ((files = calloc((size_t)n, sizeof(*files))) == NULL ||
	    (first = calloc(2, sizeof(*first))) == NULL) {
		fprintf(stderr, "jm4lw-prof: %s\n", strerror(ENOMEM));
		free(files);
		return 1;
	}
	o = first + 1;
	for (i = 0; i < n; i++) {
		if (stat(dumps[i], &sb) == -1) {
			fprintf(stderr, "jm4lw-prof: %s: %s\n", dumps[i],
			    strerror(errno));
			goto out;
		}
		for (j = 0; j < nfiles; j++)
			if (files[j].dev == sb.st_dev &&
			    files[j].ino == sb.st_ino)
				break;
		if (j < nfiles) { /* again: counted once */
			files[j].times++;
			continue;
		}
		files[nfiles++] =
		    (struct trend_file){sb.st_dev, sb.st_ino, dumps[i], 1};
		if ((pid = dump_pid(dumps[i])) != -1) {
			if (pid0 == -1)
				pid0 = pid;
			else if (pid != pid0 && pid1 == -1)
				pid1 = pid;
		}
		if (heapprof_load(dumps[i], &hp, err, sizeof(err)) == -1) {
			fprintf(stderr, "jm4lw-prof: %s\n", err);
			goto out;
		}
		heapprof_origin(&hp, nfiles == 1 ? first : o);
		if (nfiles > 1 && other_maps == NULL &&
		    !heapprof_origin_same(first, o))
			other_maps = dumps[i];
		if ((sym = sym_new(&hp, binary, err, sizeof(err))) == NULL) {
			fprintf(stderr, "jm4lw-prof: %s\n", err);
			heapprof_free(&hp);
			goto out;
		}
		if (trend_point_of(&hp, sym,
		        (double)sb.st_mtim.tv_sec +
		            (double)sb.st_mtim.tv_nsec / 1e9,
		        dumps[i], fold, &p) == -1 ||
		    trend_add(&t, &p) == -1) {
			fprintf(stderr, "jm4lw-prof: %s\n", strerror(errno));
			trend_point_free(&p);
			sym_free(sym);
			heapprof_free(&hp);
			goto out;
		}
		sym_free(sym);
		heapprof_free(&hp);
	}
	for (j = 0; j < nfiles; j++)
		if (files[j].times > 1)
			fprintf(stderr,
			    "jm4lw-prof: warning: %s was given %d times: "
			    "counted once\n",
			    files[j].path, files[j].times);
	if (pid1 != -1)
		fprintf(stderr,
		    "jm4lw-prof: warning: the dumps are of more than one "
		    "process (pids %ld and %ld in their names): the trend "
		    "mixes their heaps\n",
		    pid0, pid1);
	else if (other_maps != NULL)
		fprintf(stderr,
		    "jm4lw-prof: warning: %s is of another process than %s "
		    "(its main program, or where it is mapped, differs): the "
		    "trend mixes their heaps\n",
		    other_maps, files[0].path);
	if (trend_analyze(&t) == -1) {
		fprintf(stderr, "jm4lw-prof: %s\n", strerror(errno));
		goto out;
	}
	if (t.n < TREND_MIN_POINTS) {
		fprintf(stderr, "jm4lw-prof: %s\n",
		    trend_too_few(&t, err, sizeof(err)));
		goto out;
	}
	if ((strcmp(format, "json") == 0 ? trend_render_json(out, &t)
	                                 : trend_render_text(out, &t)) == -1 ||
	    fflush(out) != 0)
		fprintf(stderr, "jm4lw-prof: %s: %s\n",
		    outpath ? outpath : "standard output", strerror(errno));
	else
		r = 0;
out:
	trend_free(&t);
	free(files);
	free(first);
	return r;
}

/* A usage error: the reason, the usage, exit status 2. */
static int usage(const char *why, const char *what)
{
	if (why != NULL)
		fprintf(stderr, "jm4lw-prof: %s%s\n", why, what ? what : "");
	usage_print(stderr);
	return 2;
}

/* A rendering's end: @p out flushed and, if it is @p outpath's, closed;
 * a failure (@p r -1, or the flush) said in one line. @p r or -1. */
static int output_done(FILE *out, const char *outpath, int r)
{
	if (fflush(out) != 0)
		r = -1;
	if (r == -1)
		fprintf(stderr, "jm4lw-prof: %s: %s\n",
		    outpath ? outpath : "standard output", strerror(errno));
	if (out != stdout)
		fclose(out);
	return r;
}

/*
 * @p hp as view @p vw into @p outpath (NULL: standard output), one dump's
 * or a merge's alike: symbolized, what is doubtful on stderr first (the
 * profile's warnings, the symbolizer's), then the rendering, with @p warn
 * (or NULL) above it in a view with comments. @p dump is the file a view
 * that carries the dump reads. 0, or 1 after a line on stderr.
 */
static int render_profile(const struct view *vw, struct heap_profile *hp,
    const char *dump, const char *binary, struct sym_debug *dbg,
    struct view_args *args, const char *outpath, const char *warn)
{
	struct symbolizer *sym;
	FILE *out = stdout;
	char err[1024], *raw = NULL;
	size_t w;
	int r = 0;

	if ((sym = sym_new_debug(hp, binary, dbg, err, sizeof(err))) == NULL) {
		fprintf(stderr, "jm4lw-prof: %s\n", err);
		return 1;
	}
	for (w = 0; w < hp->nwarn; w++)
		fprintf(stderr, "jm4lw-prof: warning: %s\n", hp->warn[w]);
	for (w = 0; sym_warning(sym, w) != NULL; w++)
		fprintf(stderr, "jm4lw-prof: warning: %s\n",
		    sym_warning(sym, w));
	/* Collapsed stacks have no room for a remark: an empty answer
	 * says why here (the other formats carry it themselves). */
	if (vw->needs_samples &&
	    view_sampling_note(hp, args, err, sizeof(err)) != NULL)
		fprintf(stderr, "jm4lw-prof: note: %s\n", err);
	if (outpath != NULL && (out = fopen(outpath, "we")) == NULL) {
		fprintf(stderr, "jm4lw-prof: %s: %s\n", outpath,
		    strerror(errno));
		sym_free(sym);
		return 1;
	}
	args->binary = binary;
	if (warn != NULL && vw->comments &&
	    fprintf(out, "# warning: %s\n", warn) < 0)
		r = -1;
	else if (vw->carries_dump &&
	    (raw = raw_profile(hp, dump, args)) == NULL)
		r = -1;
	else
		r = vw->render(out, hp, sym, args);
	free(raw);
	r = output_done(out, outpath, r);
	sym_free(sym);
	return r == -1 ? 1 : 0;
}

/*
 * --merge: the @p n dumps summed into one profile (prof/merge.c), then
 * rendered as one dump is. A view that carries a dump as it was written
 * (symbolized, raw) has no merged dump to carry and is refused; the
 * warning that builds differ goes to stderr and, in a view with
 * comments (text), above the rendering. Exit status as main's.
 */
static int merge_main(int n, char *const *dumps, const char *format,
    const char *basepath, const char *binary, struct view_args *args,
    const char *dirs, struct sym_debug *dbg, const char *outpath)
{
	struct heap_profile **hps = NULL, merged = {0};
	const struct view *vw;
	char err[1024], warn[1536], names[128], use[160];
	long long t;
	size_t w;
	int i, f, r = 1;

	/* "use text, ...": what a merge draws, the default first. */
	snprintf(use, sizeof(use), "use %s",
	    view_join(names, sizeof(names), view_merges, DUMP_VIEW_TEXT, ", ",
	        " or "));
	if ((f = view_by_name(format)) != -1 && views[f].carries_dump) {
		snprintf(err, sizeof(err),
		    "--merge does not go with -f %s (it carries one dump as "
		    "it was written, and a merge has none): ",
		    format);
		return usage(err, use);
	}
	/* A thread's number is its process's: summed over processes they
	 * would name nobody. */
	if (f != -1 && views[f].one_process) {
		snprintf(err, sizeof(err),
		    "--merge does not go with -f %s (%s are one "
		    "process's): ",
		    format, format);
		return usage(err, use);
	}
	if (f == -1 || views[f].render == NULL) {
		snprintf(err, sizeof(err), "unknown format (want %s): ",
		    view_names(names, sizeof(names), 1));
		return usage(err, format);
	}
	vw = &views[f];
	if (basepath != NULL)
		return usage("--merge takes no --base", NULL);
	if (n == 0)
		return usage("--merge: no dumps given", NULL);
	dbg->dirs = dirs;
	if ((hps = calloc((size_t)n, sizeof(*hps))) == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		if ((hps[i] = calloc(1, sizeof(**hps))) == NULL)
			goto nomem;
		if (heapprof_load(dumps[i], hps[i], err, sizeof(err)) == -1) {
			fprintf(stderr, "jm4lw-prof: %s\n", err);
			goto out;
		}
		for (w = 0; w < hps[i]->nwarn; w++)
			fprintf(stderr, "jm4lw-prof: warning: %s: %s\n",
			    dumps[i], hps[i]->warn[w]);
		/* The merge is as of its newest dump. */
		if ((t = file_mtime_ns(-1, dumps[i])) > args->time_ns)
			args->time_ns = t;
	}
	/* The objects are read for their build IDs only: no debuginfod. */
	{
		struct sym_debug ids = *dbg;

		ids.debuginfod = 0;
		if (heapprof_merge(hps, (const char *const *)dumps, (size_t)n,
		        binary, &ids, &merged, warn, sizeof(warn), err,
		        sizeof(err)) == -1) {
			fprintf(stderr, "jm4lw-prof: %s\n", err);
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		heapprof_free(hps[i]);
		free(hps[i]);
		hps[i] = NULL;
	}
	if (warn[0] != '\0')
		fprintf(stderr, "jm4lw-prof: warning: %s\n", warn);
	r = render_profile(vw, &merged, NULL, binary, dbg, args, outpath,
	    warn[0] != '\0' ? warn : NULL);
	goto out;
nomem:
	fprintf(stderr, "jm4lw-prof: %s\n", strerror(ENOMEM));
out:
	for (i = 0; hps != NULL && i < n; i++)
		if (hps[i] != NULL) {
			heapprof_free(hps[i]);
			free(hps[i]);
		}
	free(hps);
	heapprof_free(&merged);
	return r;
}

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"binary", required_argument, NULL, 'b'},
	    {"objects", no_argument, NULL, 'O'},
	    {"base", required_argument, NULL, 'B'},
	    {"debug-dir", required_argument, NULL, 'd'},
	    {"system-debug-dir", required_argument, NULL, 'S'},
	    {"timeout", required_argument, NULL, 't'},
	    {"no-debuginfod", no_argument, NULL, 'n'},
	    {"trend", no_argument, NULL, 'T'},
	    {"merge", no_argument, NULL, 'M'},
	    {"fold", required_argument, NULL, 'F'},
	    {"no-fold", no_argument, NULL, 'N'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    /* Not in the usage: for the build, which writes jm4lw's
	     * usage from it (CMakeLists.txt). */
	    {"formats", required_argument, NULL, 'L'},
	    {NULL, 0, NULL, 0},
	};
	const char *format = "text", *binary = NULL, *outpath = NULL;
	const char *basepath = NULL;
	struct heap_profile base = {0};
	struct view_args args = {0};
	struct fold_list fold = {0}, more;
	const struct view *vw;
	struct heap_profile hp;
	FILE *out = stdout;
	char err[512], names[128], dirs[16384] = "";
	struct sym_debug dbg = {.debuginfod = 1};
	long long bt;
	long t;
	int ch, r, f, trend = 0, merge = 0;

#ifndef JM4LW_HAVE_LIBIBERTY
	sym_set_demangler(__cxa_demangle);
#endif
	opterr = 0;
	while (
	    (ch = getopt_long(argc, argv, ":f:o:hV", longopts, NULL)) != -1) {
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
			args.objects = 1;
			break;
		case 'B':
			basepath = optarg;
			break;
		case 'd':
			if (add_dir(dirs, sizeof(dirs), optarg) == -1)
				return usage("too many --debug-dir (16 KB of "
				             "names at most): ",
				    optarg);
			break;
		case 'S':
			dbg.system_dir = optarg;
			break;
		case 't':
			if ((t = parse_timeout(optarg)) == -1)
				return usage("--timeout wants whole seconds, "
				             "1 to 3600: ",
				    optarg);
			dbg.timeout = (unsigned)t;
			break;
		case 'n':
			dbg.debuginfod = 0;
			break;
		case 'T':
			trend = 1;
			break;
		case 'M':
			merge = 1;
			break;
		case 'F':
			if (fold.off)
				return usage("--fold and --no-fold do not go "
				             "together",
				    NULL);
			if (fold_parse(optarg, &more, err, sizeof(err)) == -1)
				/* The key's checker's line, for the flag. */
				return usage("--fold: ",
				    strncmp(err, "fold_wrappers: ", 15) == 0
				        ? err + 15
				        : err);
			if (more.off)
				return usage("--fold wants names; --no-fold "
				             "folds none",
				    NULL);
			/* Repeatable: each adds its names. */
			for (t = 0; t < (long)more.n; t++) {
				if (fold.n == FOLD_NAMES_MAX)
					return usage("--fold: more than 32 "
					             "names",
					    NULL);
				memcpy(fold.name[fold.n++], more.name[t],
				    sizeof(more.name[t]));
			}
			break;
		case 'N':
			if (fold.n > 0)
				return usage("--fold and --no-fold do not go "
				             "together",
				    NULL);
			fold.off = 1;
			break;
		case 'h':
			usage_print(stdout);
			return 0;
		case 'V':
			printf("jm4lw-prof %s\n", JM4LW_PROJECT_VERSION);
			return 0;
		case 'L':
			if (strcmp(optarg, "merge") != 0)
				return usage("--formats takes merge: ", optarg);
			printf("%s\n",
			    view_join(names, sizeof(names), view_merges,
			        DUMP_VIEW_TEXT, ", ", " or "));
			return 0;
		case ':':
			return usage("an option needs a value: ",
			    argv[optind - 1]);
		default:
			return usage("unknown option: ", argv[optind - 1]);
		}
	}
	if (trend && merge)
		return usage("--trend and --merge do not go together", NULL);
	args.fold = &fold;
	if (merge)
		return merge_main(argc - optind, argv + optind, format,
		    basepath, binary, &args, dirs, &dbg, outpath);
	if (trend) {
		if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
			return usage("--trend writes -f text or json, not ",
			    format);
		if (basepath != NULL || args.objects)
			return usage("--trend takes neither --base nor --objects",
			    NULL);
		if (optind == argc)
			return usage("--trend: no dumps given", NULL);
		if (outpath != NULL && (out = fopen(outpath, "we")) == NULL) {
			fprintf(stderr, "jm4lw-prof: %s: %s\n", outpath,
			    strerror(errno));
			return 1;
		}
		r = trend_main(argv + optind, argc - optind, binary, &fold,
		    format, out, outpath);
		if (out != stdout && fclose(out) != 0 && r == 0) {
			fprintf(stderr, "jm4lw-prof: %s: %s\n", outpath,
			    strerror(errno));
			r = 1;
		}
		return r;
	}
	/* A view drawn from the profile; not raw, which is the file. */
	if ((f = view_by_name(format)) == -1 || views[f].render == NULL) {
		snprintf(err, sizeof(err), "unknown format (want %s): ",
		    view_names(names, sizeof(names), 1));
		return usage(err, format);
	}
	vw = &views[f];
	if (optind + 1 != argc)
		return usage(optind == argc ? "no profile given"
		                            : "one profile at a time (--merge "
		                              "sums several)",
		    NULL);
	/* A symbolized file carries the profile as dumped: no difference. */
	if (basepath != NULL && vw->base == VIEW_BASE_NEVER) {
		snprintf(err, sizeof(err),
		    "--base does not go with -f %s (it shows one profile as "
		    "dumped)",
		    format);
		return usage(err, NULL);
	}
	if (heapprof_load(argv[optind], &hp, err, sizeof(err)) == -1) {
		fprintf(stderr, "jm4lw-prof: %s\n", err);
		return 1;
	}
	/* When it was dumped (and over what span, with a base), as the
	 * module's own pprof says: a profile store files it by time_nanos,
	 * and 0 is 1970. */
	args.time_ns = file_mtime_ns(-1, argv[optind]);
	if (basepath != NULL && args.time_ns != 0 &&
	    (bt = file_mtime_ns(-1, basepath)) != 0 && args.time_ns > bt)
		args.duration_ns = args.time_ns - bt;
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
	dbg.dirs = dirs;
	r = render_profile(vw, &hp, argv[optind], binary, &dbg, &args, outpath,
	    NULL);
	heapprof_free(&hp);
	heapprof_free(&base);
	return r;
}

/*
 * profile — a dump made readable, in the process that wrote it: parse
 * (heapprof), symbolize against the objects this process has mapped
 * (sym_new_self), render. Runs on the module's worker, whose own
 * allocations jemalloc does not sample; everything it builds is freed
 * before it returns, so nothing stays in the host between jobs.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_struct.h"
#include "heapprof.h"
#include "prof_util.h"
#include "profile.h"
#include "render_threads.h"
#include "reason.h"
#include "recent.h"
#include "recentjob.h"
#include "render.h"
#include "symbolize.h"
#include "trend.h"
#include "util.h"
#include "view.h"
#include "when.h"

/* The worker's places for debug info (profile_debug_from): per thread,
 * for a host may run several modules, each with its worker. */
static __thread struct {
	char dirs[sizeof(((struct jm4lw_config *)0)->debug_dirs)];
	struct sym_debug dbg;
	int set;
	char warn[512];        /* the last symbolizer's first warning, or "" */
	int accum;             /* opt.prof_accum: 1, -1, 0 not known */
	struct fold_list fold; /* fold_wrappers */
	char folded[PROFILE_FOLDED_MAX]; /* the last collapsed view's */
	struct view_sampling sampling;
	const struct frag_stats *frag; /* profile_frag_from */
} profile_dbg;

void profile_frag_from(const struct frag_stats *st)
{
	profile_dbg.frag = st;
}

void profile_fold_from(const struct fold_list *fold)
{
	profile_dbg.fold = *fold;
}

const char *profile_folded(void)
{
	return profile_dbg.folded;
}

/* The wrappers of @p hp (fold.h) into profile_dbg.folded as an HTTP
 * header's value: names as collapsed stacks write them (';' as ':'),
 * ';' between them, '%', controls and non-ASCII bytes %XX (the page
 * decodes each with decodeURIComponent). A name that does not fit is
 * left out with the rest. */
static void profile_fold_note(const struct heap_profile *hp,
    struct symbolizer *sym)
{
	struct fold f;
	char *o = profile_dbg.folded, esc[4];
	const unsigned char *c;
	size_t i, used = 0, n;

	o[0] = '\0';
	if (fold_find(&f, hp, sym, &profile_dbg.fold) == -1)
		return;
	for (i = 0; i < f.n; i++) {
		size_t at = used;
		if (i > 0)
			o[used++] = ';';
		for (c = (const unsigned char *)f.name[i]; *c != '\0'; c++) {
			if (*c == ';')
				snprintf(esc, sizeof(esc), ":");
			else if (*c == '%' || *c < 0x20 || *c >= 0x7f)
				snprintf(esc, sizeof(esc), "%%%02X", *c);
			else
				snprintf(esc, sizeof(esc), "%c", *c);
			n = strlen(esc);
			if (used + n >= sizeof(profile_dbg.folded))
				break;
			memcpy(o + used, esc, n);
			used += n;
		}
		if (*c != '\0') { /* cut: not this one, nor any after */
			used = at;
			break;
		}
	}
	o[used] = '\0';
	fold_free(&f);
}

void profile_accum_from(int accum)
{
	profile_dbg.accum = accum;
}

void profile_sampling_from(const struct view_sampling *s)
{
	profile_dbg.sampling = *s;
}

void profile_debug_from(const struct jm4lw_config *cfg)
{
	snprintf(profile_dbg.dirs, sizeof(profile_dbg.dirs), "%s",
	    cfg->debug_dirs);
	profile_dbg.dbg.dirs = profile_dbg.dirs;
	profile_dbg.dbg.debuginfod = cfg->symbolize_debuginfod == CONFIG_ON;
	profile_dbg.dbg.timeout = cfg->symbolize_timeout;
	profile_dbg.set = 1;
	profile_dbg.warn[0] = '\0';
}

/* This process's symbolizer with the worker's places for debug info;
 * its first warning kept for profile_debug_warning. */
static struct symbolizer *profile_sym(const struct heap_profile *hp, char *err,
    size_t errlen)
{
	struct symbolizer *s;

	profile_dbg.warn[0] = '\0';
	s = sym_new_self_debug(hp, profile_dbg.set ? &profile_dbg.dbg : NULL,
	    err, errlen);
	if (s != NULL && sym_warning(s, 0) != NULL)
		snprintf(profile_dbg.warn, sizeof(profile_dbg.warn), "%s",
		    sym_warning(s, 0));
	return s;
}

const char *profile_debug_warning(void)
{
	return profile_dbg.warn[0] != '\0' ? profile_dbg.warn : NULL;
}

const char *profile_symbolizer(void)
{
	return sym_backend();
}

/* This process's main program as /proc/self/maps has it now (the
 * first mapping with a path, jeprof's reading): its start into
 * @p start, its path into @p path; -1 if none. */
static int profile_self_main(uint64_t *start, char *path, size_t len)
{
	char line[4400], *p, *nl;
	unsigned long long lo;
	FILE *f;
	int r = -1;

	if ((f = fopen("/proc/self/maps", "re")) == NULL)
		return -1;
	while (r == -1 && fgets(line, sizeof(line), f) != NULL) {
		if ((p = strchr(line, '/')) == NULL ||
		    sscanf(line, "%llx-", &lo) != 1)
			continue;
		if ((nl = strchr(p, '\n')) != NULL)
			*nl = '\0';
		*start = lo;
		snprintf(path, len, "%s", p);
		r = 0;
	}
	fclose(f);
	return r;
}

/* Does @p dir/@p name exist and resolve to @p target? */
static int profile_links_to(const char *dir, size_t dlen, const char *name,
    const char *target, char *out, size_t len)
{
	char real[4096];

	if ((size_t)snprintf(out, len, "%.*s/%s", (int)dlen, dir, name) >= len)
		return 0;
	return realpath(out, real) != NULL && strcmp(real, target) == 0;
}

/*
 * Whose @p hp is, when it is this process's (its main program mapped
 * where this process has it): the process's own name, argv[0]'s base
 * name up to a space (a title set over argv, as redis-server does),
 * into @p name, when it is not the mapped file's (Debian's redis-server
 * is a link to redis-check-rdb); and a path by that name that resolves
 * to the file (argv[0] itself, or found in PATH as execvp did) into
 * @p path, else "". 0 when there is a name to give, else -1.
 */
static int profile_whose(const struct heap_profile *hp, char *name, size_t nlen,
    char *path, size_t plen)
{
	char self[4096], argv0[512], *base, *sp;
	const char *dirs, *colon;
	struct hp_origin o;
	uint64_t start;
	ssize_t n;
	int fd;

	path[0] = '\0';
	heapprof_origin(hp, &o);
	if (!o.known || profile_self_main(&start, self, sizeof(self)) == -1 ||
	    start != o.main_start || strcmp(self, o.main) != 0)
		return -1;
	if ((fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, argv0, sizeof(argv0) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	argv0[n] = '\0';
	if ((sp = strchr(argv0, ' ')) != NULL)
		*sp = '\0';
	base = strrchr(argv0, '/') != NULL ? strrchr(argv0, '/') + 1 : argv0;
	sp = strrchr(self, '/');
	if (base[0] == '\0' || strcmp(base, sp + 1) == 0)
		return -1;
	snprintf(name, nlen, "%s", base);
	if (base != argv0) {
		if (argv0[0] == '/' &&
		    profile_links_to(argv0, (size_t)(base - 1 - argv0), base,
		        self, path, plen))
			return 0;
		path[0] = '\0';
		return 0;
	}
	for (dirs = getenv("PATH"); dirs != NULL && dirs[0] != '\0';
	     dirs = colon != NULL ? colon + 1 : NULL) {
		colon = strchr(dirs, ':');
		if (dirs[0] == '/' &&
		    profile_links_to(dirs,
		        colon != NULL ? (size_t)(colon - dirs) : strlen(dirs),
		        base, self, path, plen))
			return 0;
	}
	path[0] = '\0';
	return 0;
}

/* A view's heading line: what the table below is. */
static void profile_heading(FILE *out, enum dump_view view, const char *base,
    int have_base)
{
	if (!views[view].comments)
		return;
	if (view == DUMP_VIEW_THREADS) {
		fprintf(out,
		    "# live heap by thread, biggest first: the top %d "
		    "threads, %d functions each by bytes in use\n",
		    PROFILE_TOP_ROWS, THREADS_TOP);
		return;
	}
	if (!have_base && views[view].base != VIEW_BASE_ALWAYS)
		fprintf(out, "# live heap, top %d functions by bytes in use\n",
		    PROFILE_TOP_ROWS);
	else if (have_base)
		fprintf(out,
		    "# growth since %s, top %d functions by bytes grown "
		    "(negative: shrank)\n",
		    base, PROFILE_TOP_ROWS);
}

/* " (@p hint)" after a line, or nothing when the face gave none. */
static const char *hint_of(const char *hint, char *buf, size_t len)
{
	if (hint == NULL)
		return "";
	snprintf(buf, len, " (%s)", hint);
	return buf;
}

/*
 * Open the dump at @p path once: not through a symlink, a regular file of
 * ours. A name the loop checked may have been swapped since (a symlink to
 * /etc/passwd renamed over a kept dump); from here on only the descriptor
 * is read. -1 with @p err.
 */
static int profile_open(const char *path, char *err, size_t errlen)
{
	return prof_open_file(path, PROF_OPEN_NOFOLLOW | PROF_OPEN_OURS, NULL,
	    err, errlen);
}

/* Parse the dump at @p path (profile_open), @p hp zeroed on failure. */
static int profile_load(const char *path, struct heap_profile *hp, char *err,
    size_t errlen)
{
	int fd, r;

	memset(hp, 0, sizeof(*hp));
	if ((fd = profile_open(path, err, errlen)) == -1)
		return -1;
	r = heapprof_load_fd(fd, path, hp, err, errlen);
	close(fd);
	return r;
}

/* The dump open on @p fd (the one parsed; heapprof reads with pread, so
 * still at 0) to @p out through render_dump: each stack without the
 * allocator's frames, as every other view shows it. 0, or -1 with
 * @p err. */
static int profile_copy(int fd, struct symbolizer *sym, FILE *out, char *err,
    size_t errlen)
{
	FILE *in;
	int dfd, r = -1;

	if ((dfd = dup(fd)) == -1 || (in = fdopen(dfd, "r")) == NULL) {
		snprintf(err, errlen, "cannot read the dump: %s",
		    strerror(errno));
		if (dfd != -1)
			close(dfd);
		return -1;
	}
	if ((r = render_dump(out, in, sym)) == -1)
		snprintf(err, errlen, "cannot write the profile: %s",
		    strerror(errno ? errno : EIO));
	fclose(in);
	return r;
}

int profile_render(enum dump_view view, const char *dump, int with_base,
    const char *base, const struct core_hints *hints, FILE *out, char *err,
    size_t errlen)
{
	const struct view *vw = &views[view];
	int fd, r;

	if (vw->render == NULL && !vw->carries_dump)
		return 0; /* nothing to draw from it */
	if ((fd = profile_open(dump, err, errlen)) == -1)
		return -1;
	r = profile_render_fd(view, fd, dump, with_base, base, hints, out, err,
	    errlen);
	close(fd);
	return r;
}

/* profile_render_fd's and profile_render_delta's one body: the base by
 * name (@p base) or open (@p base_fd, not -1). */
static int profile_render_any(enum dump_view view, int fd, const char *dump,
    int with_base, const char *base, int base_fd,
    const struct core_hints *hints, FILE *out, char *err, size_t errlen);

int profile_render_fd(enum dump_view view, int fd, const char *dump,
    int with_base, const char *base, const struct core_hints *hints, FILE *out,
    char *err, size_t errlen)
{
	return profile_render_any(view, fd, dump, with_base, base, -1, hints,
	    out, err, errlen);
}

int profile_render_delta(enum dump_view view, int fd, int base_fd,
    const struct core_hints *hints, FILE *out, char *err, size_t errlen)
{
	return profile_render_any(view, fd, "the heap profile", 1, NULL,
	    base_fd, hints, out, err, errlen);
}

int profile_render_since(enum dump_view view, int fd, int base_fd,
    const char *base_name, const struct core_hints *hints, FILE *out, char *err,
    size_t errlen)
{
	return profile_render_any(view, fd, "the heap profile", 1, base_name,
	    base_fd, hints, out, err, errlen);
}

static int profile_render_any(enum dump_view view, int fd, const char *dump,
    int with_base, const char *base, int base_fd,
    const struct core_hints *hints, FILE *out, char *err, size_t errlen)
{
	const struct view *vw = &views[view];
	struct view_args args = {.limit = PROFILE_TOP_ROWS,
	    .accum = profile_dbg.accum,
	    .sampling = profile_dbg.sampling,
	    .frag = profile_dbg.frag,
	    .time_ns = file_mtime_ns(fd, dump), /* prof.dump's last write */
	    .fold = &profile_dbg.fold};
	struct heap_profile hp, old = {0};
	struct symbolizer *sym = NULL;
	char why[512], hint[128], note[512], name[512], path[4096];
	long long base_ns;
	int r = -1, have_base = 0, loaded = 0;
	size_t i;

	profile_dbg.folded[0] = '\0';
	if (vw->render == NULL && !vw->carries_dump)
		return 0; /* nothing to draw from it */
	if (heapprof_load_fd(fd, dump, &hp, err, errlen) == -1)
		return -1;
	/* A program is named as its process is; the file it maps beside. */
	if (profile_whose(&hp, name, sizeof(name), path, sizeof(path)) == 0) {
		args.process = name;
		args.process_path = path[0] != '\0' ? path : NULL;
	}
	if (with_base) {
		/* No earlier dump, or retention took it: jmdf shows the live
		 * heap with a line saying why; the others cannot. */
		if (base_fd != -1)
			loaded = heapprof_load_fd(base_fd, "the first dump",
			             &old, why, sizeof(why)) == 0;
		else if (base == NULL || base[0] == '\0')
			snprintf(why, sizeof(why),
			    "no earlier dump by this process to compare with%s",
			    hint_of(hints ? hints->base_kept_by : NULL, hint,
			        sizeof(hint)));
		else
			loaded =
			    profile_load(base, &old, why, sizeof(why)) == 0;
		if (loaded && heapprof_subtract(&hp, &old) == -1) {
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			goto out;
		}
		have_base = loaded;
		/* A difference spans the time between the dumps. */
		if (have_base && args.time_ns != 0 &&
		    (base_ns = file_mtime_ns(base_fd, base)) != 0 &&
		    args.time_ns > base_ns)
			args.duration_ns = args.time_ns - base_ns;
		if (!have_base && vw->base != VIEW_BASE_ALWAYS) {
			snprintf(err, errlen, "cannot compare: %s", why);
			r = PROFILE_NO_BASE;
			goto out;
		}
		if (!have_base)
			fprintf(out,
			    "# %s%s%s\n# live heap, top %d functions\n", why,
			    hints && hints->base_next ? "; " : "",
			    hints && hints->base_next ? hints->base_next : "",
			    PROFILE_TOP_ROWS);
	}
	/* A format with no room for a remark: say it instead. */
	if (vw->needs_samples && hp.u_bytes == 0 && !have_base) {
		snprintf(err, errlen, "the heap profile has no samples: %s",
		    view_sampling_note(&hp, &args, note, sizeof(note)) != NULL
		        ? note
		        : "no samples in this dump");
		r = PROFILE_NO_SAMPLES;
		goto out;
	}
	/* The raw dump asks only which frames are the allocator's: no
	 * debug info looked for (debuginfod's wait) for that. */
	if ((sym = vw->render != NULL ? profile_sym(&hp, err, errlen)
	                              : sym_new_self(&hp, err, errlen)) == NULL)
		goto out;
	profile_heading(out, view, base, have_base);
	/* What the parse noticed (a cut MAPPED_LIBRARIES, a base of another
	 * process), where the format has room for a remark. */
	for (i = 0; vw->comments && i < hp.nwarn; i++)
		fprintf(out, "# warning: %s\n", hp.warn[i]);
	/* And what the symbolizer could not get (debuginfod's objects). */
	for (i = 0; vw->comments && sym_warning(sym, i) != NULL; i++)
		fprintf(out, "# warning: %s\n", sym_warning(sym, i));
	/* A format without room for the warnings above says it in its
	 * note (the flame graph's line, pprof's comment, the legend). */
	args.sampling.other_base = hp.other_base && !vw->comments;
	args.title = have_base ? "heap growth" : "live heap";
	/* The raw stacks stay raw; which frames the ranked views fold goes
	 * beside them (HTTP's X-Jm4lw-Folded), for the page's table. */
	if (view == DUMP_VIEW_COLLAPSED)
		profile_fold_note(&hp, sym);
	/* The symbols, then the dump copied after "--- heap": not read
	 * into memory whole (profiles run to tens of MB). */
	if ((r = vw->render != NULL ? vw->render(out, &hp, sym, &args) : 0) ==
	    -1)
		snprintf(err, errlen, "cannot render the profile: %s",
		    strerror(errno));
	else if (vw->carries_dump)
		r = profile_copy(fd, sym, out, err, errlen);
out:
	sym_free(sym);
	heapprof_free(&hp);
	heapprof_free(&old);
	return r;
}

long profile_parse_addrs(const char *addrs, size_t len, uint64_t *out,
    size_t max, char *err, size_t errlen)
{
	const char *p = addrs, *end = addrs + len, *tok;
	char shown[64];
	uint64_t v;
	size_t n = 0;
	int digits;

	for (;;) {
		while (p < end &&
		    (*p == '+' || *p == ' ' || *p == '\t' || *p == '\r' ||
		        *p == '\n'))
			p++;
		if (p == end)
			return (long)n;
		tok = p;
		if (end - p < 3 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
			goto bad;
		for (p += 2, v = 0, digits = 0;
		     p < end && isxdigit((unsigned char)*p); p++, digits++) {
			if (digits == 16)
				goto bad; /* wider than 64 bits */
			v = v << 4 |
			    (uint64_t)(isdigit((unsigned char)*p)
			            ? *p - '0'
			            : (tolower((unsigned char)*p) - 'a' + 10));
		}
		if (digits == 0 ||
		    (p < end && *p != '+' && !isspace((unsigned char)*p)))
			goto bad;
		if (n == max) {
			snprintf(err, errlen,
			    "too many addresses (at most %zu at a time)", max);
			return -1;
		}
		out[n++] = v;
	}
bad:
	while (p < end && *p != '+' && !isspace((unsigned char)*p))
		p++;
	snprintf(err, errlen,
	    "%s is not an address (want 0x<hex> separated by +)",
	    quote(shown, sizeof(shown), tok, (size_t)(p - tok)));
	return -1;
}

/* The process's own mappings, as a heap profile the symbolizer reads:
 * what a dump's MAPPED_LIBRARIES would say now. */
static int profile_self_maps(struct heap_profile *hp, char *err, size_t errlen)
{
	static const char head[] = "heap_v2/1\nMAPPED_LIBRARIES:\n";
	char *buf = NULL, chunk[16384];
	size_t len = 0, cap = 0, n;
	FILE *f;
	int r = -1;

	if ((f = fopen("/proc/self/maps", "re")) == NULL) {
		snprintf(err, errlen, "/proc/self/maps: %s", strerror(errno));
		return -1;
	}
	if (hp_grow((void **)&buf, &cap, sizeof(head), 1) == 0) {
		memcpy(buf, head, sizeof(head) - 1);
		len = sizeof(head) - 1;
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			if (hp_grow((void **)&buf, &cap, len + n, 1) == -1)
				break;
			memcpy(buf + len, chunk, n);
			len += n;
		}
		if (!ferror(f) && n == 0)
			r = heapprof_parse(buf, len, hp, err, errlen);
		else
			snprintf(err, errlen, "/proc/self/maps: %s",
			    strerror(ferror(f) ? EIO : ENOMEM));
	} else
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	free(buf);
	fclose(f);
	return r;
}

int profile_symbols(const char *addrs, size_t len, FILE *out, char *err,
    size_t errlen)
{
	struct sym_frame fr[SYM_INLINE_MAX];
	struct heap_profile hp;
	struct symbolizer *sym;
	uint64_t *pcs;
	long n, i;
	int k, nf;

	/* At most one address per 3 bytes ("0x1+"): no bigger array. */
	if ((pcs = calloc(len / 3 + 1, sizeof(*pcs))) == NULL) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	if ((n = profile_parse_addrs(addrs, len, pcs, PROFILE_ADDRS_MAX, err,
	         errlen)) == -1) {
		free(pcs);
		return PROFILE_BAD_ADDRS;
	}
	if (profile_self_maps(&hp, err, errlen) == -1) {
		free(pcs);
		return -1;
	}
	if ((sym = profile_sym(&hp, err, errlen)) == NULL) {
		heapprof_free(&hp);
		free(pcs);
		return -1;
	}
	for (i = 0; i < n; i++) {
		/* Callers come adjusted (pc - 1): look each up as is. */
		nf = sym_lookup(sym, pcs[i], 1, fr, SYM_INLINE_MAX);
		fprintf(out, "0x%llx ", (unsigned long long)pcs[i]);
		for (k = nf; k-- > 0;)
			fprintf(out, "%s%s", fr[k].name, k ? "--" : "\n");
	}
	sym_free(sym);
	heapprof_free(&hp);
	free(pcs);
	if (ferror(out)) {
		snprintf(err, errlen, "cannot write the symbols: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

int profile_recent(const char *buf, size_t len,
    const struct profile_recent_args *a, FILE *out, char *err, size_t errlen)
{
	struct recent_opts o = {.live_only = a->live_only,
	    .min_size = a->min_size,
	    .now_ns = a->now_ns,
	    .cap_bytes = RECENT_JSON_MAX};
	struct view_args va = {.sampling = profile_dbg.sampling};
	struct heap_profile hp;
	struct symbolizer *sym;
	struct recent r;
	char note[512];
	int rv;

	o.note = view_sampling_note(NULL, &va, note, sizeof(note));
	if (recent_parse(buf != NULL ? buf : "", len, a->cut, &r, err,
	        errlen) == -1)
		return -1;
	/* The records' addresses are this process's: its mappings now, as
	 * for a symbol lookup. */
	if (profile_self_maps(&hp, err, errlen) == -1) {
		recent_free(&r);
		return -1;
	}
	if ((sym = profile_sym(&hp, err, errlen)) == NULL) {
		heapprof_free(&hp);
		recent_free(&r);
		return -1;
	}
	rv = a->json ? recent_render_json(out, &r, sym, &o)
	             : recent_render_text(out, &r, sym, &o);
	if (rv == -1)
		snprintf(err, errlen, "cannot write the recent allocations: %s",
		    strerror(errno ? errno : EIO));
	sym_free(sym);
	heapprof_free(&hp);
	recent_free(&r);
	return rv;
}

int profile_symbolized(const char *dump, FILE *out, char *err, size_t errlen)
{
	return profile_render(DUMP_VIEW_SYMBOLIZED, dump, 0, NULL, NULL, out,
	    err, errlen);
}

/* The point of the dump at @p dump, read again (parse, symbolize in this
 * process), at time @p t. 0, or -1 with @p err. */
static int profile_point(const char *dump, double t, struct trend_point *p,
    char *err, size_t errlen)
{
	struct heap_profile hp;
	struct symbolizer *sym;
	const char *name = strrchr(dump, '/');
	int r = -1;

	if (profile_load(dump, &hp, err, errlen) == -1)
		return -1;
	if ((sym = sym_new_self(&hp, err, errlen)) != NULL &&
	    (r = trend_point_of(&hp, sym, t, name ? name + 1 : dump,
	         &profile_dbg.fold, p)) == -1)
		snprintf(err, errlen, "%s", strerror(errno));
	sym_free(sym);
	heapprof_free(&hp);
	return r;
}

/* Write @p p to a new file @p out (O_EXCL, ours only). 0, or -1 with
 * @p err and no file left. */
static int profile_index_file(const struct trend_point *p, const char *out,
    char *err, size_t errlen)
{
	FILE *f = NULL;
	int fd, r;

	if ((fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) ==
	        -1 ||
	    (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "cannot write %s: %s", out,
		    strerror(errno));
		if (fd != -1) {
			close(fd);
			(void)unlink(out);
		}
		return -1;
	}
	r = trend_index_write(f, p);
	if (fclose(f) != 0)
		r = -1;
	if (r == -1) {
		snprintf(err, errlen, "cannot write %s: %s", out,
		    strerror(errno ? errno : EIO));
		(void)unlink(out);
	}
	return r;
}

/*
 * The point of kept dump @p dump: its index "<dump>.trend" when there is
 * one, else the dump read again and the index written for the next
 * question, first in the staging directory @p stage (a reader never sees
 * half of one, and a module freed meanwhile removes it with the
 * directory), then renamed in. 0 if read from its index, 1 if the index
 * was made now, or -1 with @p err.
 */
static int profile_kept_point(const char *dump, const char *stage,
    struct trend_point *p, char *err, size_t errlen)
{
	char ix[CORE_PATH_MAX + 16], tmp[2 * CORE_PATH_MAX + 32], cur[1024];
	const char *name = strrchr(dump, '/');
	struct stat sb;
	int fd, r;

	name = name != NULL ? name + 1 : dump;
	snprintf(ix, sizeof(ix), "%s.trend", dump);
	if ((fd = prof_open_file(ix, PROF_OPEN_NOFOLLOW | PROF_OPEN_OURS, NULL,
	         err, errlen)) != -1) {
		r = trend_index_read(fd, name, p, err, errlen);
		close(fd);
		/* Made under another fold_wrappers: made again. */
		fold_format(&profile_dbg.fold, cur, sizeof(cur));
		if (r == 0 && p->fold_cfg != NULL &&
		    strcmp(p->fold_cfg, cur) == 0)
			return 0;
		if (r == 0)
			trend_point_free(p);
	}
	if (stat(dump, &sb) == -1) {
		snprintf(err, errlen, "%s: %s", dump, strerror(errno));
		return -1;
	}
	if (profile_point(dump,
	        (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec / 1e9, p,
	        err, errlen) == -1)
		return -1;
	/* The thread: the worker's idle indexing and a host's own jmlk
	 * (jm4lw_reply_builtin) may write the same one at once. */
	snprintf(tmp, sizeof(tmp), "%s/%s.trend.%ld", stage, name,
	    (long)syscall(SYS_gettid));
	(void)unlink(tmp);
	if (profile_index_file(p, tmp, err, errlen) == 0 &&
	    rename(tmp, ix) == -1)
		(void)unlink(tmp);
	return 1;
}

int profile_index_kept(const char *dump, const char *stage, char *err,
    size_t errlen)
{
	struct trend_point p;
	int r;

	if ((r = profile_kept_point(dump, stage, &p, err, errlen)) != -1)
		trend_point_free(&p);
	return r;
}

/* jmlk's refusal of too few dumps: where the process cannot sample
 * (profiling off, sampling inactive), that first, since more dumps
 * (jmfp) would not help. */
static void profile_too_few(const struct trend *t, char *err, size_t errlen)
{
	static const struct heap_profile none = {0};
	struct view_args a = {.sampling = profile_dbg.sampling};
	char note[512], few[256];

	trend_too_few(t, few, sizeof(few));
	if (a.sampling.state == SAMPLING_OFF)
		snprintf(err, errlen, "no leak suspects: %s",
		    view_sampling_note(&none, &a, note, sizeof(note)));
	else if (a.sampling.state == SAMPLING_INACTIVE)
		snprintf(err, errlen, "%s; but %s", few,
		    view_sampling_note(&none, &a, note, sizeof(note)));
	else
		snprintf(err, errlen, "%s", few);
}

/* jmlk over @p dumps: their points, the analysis, the answer. */
int profile_leaks(char *const *dumps, size_t n, const char *stage, int json,
    FILE *out, char *err, size_t errlen)
{
	struct trend t = {0};
	struct trend_point p;
	char why[CORE_PATH_MAX + 128];
	size_t i;
	int k, r = -1;

	for (i = 0; i < n; i++) {
		/* A dump retention took meanwhile is not in the series;
		 * neither is one whose index and dump both fail to read
		 * (the answer counts it and says the first reason). */
		if ((k = profile_kept_point(dumps[i], stage, &p, why,
		         sizeof(why))) == -1) {
			if (access(dumps[i], F_OK) == 0 && t.skipped++ == 0)
				snprintf(t.skip_why, sizeof(t.skip_why), "%.*s",
				    (int)sizeof(t.skip_why) - 1, why);
			continue;
		}
		t.indexed += (size_t)k; /* made now: the answer says so */
		if (trend_add(&t, &p) == -1) {
			trend_point_free(&p);
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			goto out;
		}
	}
	if (trend_analyze(&t) == -1) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto out;
	}
	/* Sampling off now: the next dumps will hold nothing. */
	if (profile_dbg.sampling.state == SAMPLING_INACTIVE)
		(void)view_sampling_note(NULL,
		    &(struct view_args){.sampling = profile_dbg.sampling},
		    t.note, sizeof(t.note));
	if (t.n < TREND_MIN_POINTS) {
		profile_too_few(&t, err, errlen);
		r = PROFILE_NO_BASE;
		goto out;
	}
	r = json ? trend_render_json(out, &t) : trend_render_text(out, &t);
	if (r == -1)
		snprintf(err, errlen, "cannot write the answer: %s",
		    strerror(errno));
out:
	trend_free(&t);
	return r;
}

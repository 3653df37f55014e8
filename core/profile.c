/*
 * profile — a dump made readable, in the process that wrote it: parse
 * (heapprof), symbolize against the objects this process has mapped
 * (sym_new_self), render. Runs on the module's worker, whose own
 * allocations jemalloc does not sample; everything it builds is freed
 * before it returns, so nothing stays in the host between jobs. What it
 * reads and leaves comes and goes in the caller's struct profile_ctx.
 */
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
#include "profile_int.h"
#include "reason.h"
#include "render.h"
#include "symbolize.h"
#include "util.h"
#include "view.h"
#include "when.h"

/* A job's context, from its configuration and fold list. */
void profile_ctx_init(struct profile_ctx *c, const struct jm4lw_config *cfg,
    const struct fold_list *fold)
{
	memset(c, 0, sizeof(*c));
	if (fold != NULL)
		c->fold = *fold;
	if (cfg == NULL)
		return;
	c->debug = 1;
	snprintf(c->dirs, sizeof(c->dirs), "%s", cfg->debug_dirs);
	c->debuginfod = cfg->symbolize_debuginfod == CONFIG_ON;
	c->timeout = cfg->symbolize_timeout;
}

/* The wrappers of @p hp (fold.h) into @p c's folded as an HTTP
 * header's value: names as collapsed stacks write them (';' as ':'),
 * ';' between them, '%', controls and non-ASCII bytes %XX (the page
 * decodes each with decodeURIComponent). A name that does not fit is
 * left out with the rest. */
static void profile_fold_note(struct profile_ctx *c,
    const struct heap_profile *hp, struct symbolizer *sym)
{
	struct fold f;
	char *o = c->folded, esc[4];
	const unsigned char *ch;
	size_t i, used = 0, n;

	o[0] = '\0';
	if (fold_find(&f, hp, sym, &c->fold) == -1)
		return;
	for (i = 0; i < f.n; i++) {
		size_t at = used;
		if (i > 0)
			o[used++] = ';';
		for (ch = (const unsigned char *)f.name[i]; *ch != '\0'; ch++) {
			if (*ch == ';')
				snprintf(esc, sizeof(esc), ":");
			else if (*ch == '%' || *ch < 0x20 || *ch >= 0x7f)
				snprintf(esc, sizeof(esc), "%%%02X", *ch);
			else
				snprintf(esc, sizeof(esc), "%c", *ch);
			n = strlen(esc);
			if (used + n >= sizeof(c->folded))
				break;
			memcpy(o + used, esc, n);
			used += n;
		}
		if (*ch != '\0') { /* cut: not this one, nor any after */
			used = at;
			break;
		}
	}
	o[used] = '\0';
	fold_free(&f);
}

/* This process's symbolizer, with the context's debug info. */
struct symbolizer *profile_sym(struct profile_ctx *c,
    const struct heap_profile *hp, char *err, size_t errlen)
{
	struct sym_debug dbg = {.dirs = c->dirs,
	    .debuginfod = c->debuginfod,
	    .timeout = c->timeout};
	struct symbolizer *s;

	c->warn[0] = '\0';
	s = sym_new_self_debug(hp, c->debug ? &dbg : NULL, err, errlen);
	if (s != NULL && sym_warning(s, 0) != NULL)
		snprintf(c->warn, sizeof(c->warn), "%s", sym_warning(s, 0));
	return s;
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
int profile_load(const char *path, struct heap_profile *hp, char *err,
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

/* profile_render of the dump open at @p fd (@p s's, or opened by its
 * path), which stays open. */
static int profile_render_open(struct profile_ctx *c,
    const struct profile_src *s, int fd, FILE *out, char *err, size_t errlen)
{
	enum dump_view view = s->view;
	const char *dump = s->dump, *base = s->base;
	const struct core_hints *hints = c->hints;
	const struct view *vw = &views[view];
	struct view_args args = {.limit = PROFILE_TOP_ROWS,
	    .accum = c->accum,
	    .sampling = c->sampling,
	    .frag = c->frag,
	    .time_ns = file_mtime_ns(fd, dump), /* prof.dump's last write */
	    .fold = &c->fold};
	struct heap_profile hp, old = {0};
	struct symbolizer *sym = NULL;
	char why[512], hint[128], note[512], name[512], path[4096];
	long long base_ns;
	int r = -1, have_base = 0, loaded = 0, base_fd = s->base_fd;
	size_t i;

	c->folded[0] = '\0';
	if (vw->render == NULL && !vw->carries_dump)
		return 0; /* nothing to draw from it */
	if (heapprof_load_fd(fd, dump, &hp, err, errlen) == -1)
		return -1;
	/* A program is named as its process is; the file it maps beside. */
	if (profile_whose(&hp, name, sizeof(name), path, sizeof(path)) == 0) {
		args.process = name;
		args.process_path = path[0] != '\0' ? path : NULL;
	}
	if (s->with_base) {
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
	if ((sym = vw->render != NULL ? profile_sym(c, &hp, err, errlen)
	                              : sym_new_self(&hp, err, errlen)) == NULL)
		goto out;
	if (vw->comments && vw->heading != NULL) /* the row's own */
		vw->heading(out, &args, have_base, base);
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
		profile_fold_note(c, &hp, sym);
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

/* The source's dump opened (by path when not open), then rendered. */
int profile_render(struct profile_ctx *c, const struct profile_src *s,
    FILE *out, char *err, size_t errlen)
{
	const struct view *vw = &views[s->view];
	int fd, r;

	if (s->fd != -1)
		return profile_render_open(c, s, s->fd, out, err, errlen);
	c->folded[0] = '\0';
	if (vw->render == NULL && !vw->carries_dump)
		return 0; /* nothing to draw from it */
	if ((fd = profile_open(s->dump, err, errlen)) == -1)
		return -1;
	r = profile_render_open(c, s, fd, out, err, errlen);
	close(fd);
	return r;
}

/* jeprof's symbolized file: the symbolized view of a kept dump. */
int profile_symbolized(struct profile_ctx *c, const char *dump, FILE *out,
    char *err, size_t errlen)
{
	return profile_render(c,
	    &(struct profile_src){.view = DUMP_VIEW_SYMBOLIZED,
	        .dump = dump,
	        .fd = -1,
	        .base_fd = -1},
	    out, err, errlen);
}

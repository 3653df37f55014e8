/*
 * peak — jemalloc's prof_gdump dumps as candidates for the heap at the
 * peak (core/peak.h). A gdump dump carries no stats.allocated: its
 * figure is its own sampled total, unsampled as jeprof does, which is
 * what its profile shows. A process that grows writes hundreds, so each
 * is ranked by its header's total (its first line of counts, a few bytes
 * read) and only the highest PEAK_GDUMPS_PARSE are parsed, on the worker.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cause.h"
#include "dumps.h"
#include "heapprof.h"
#include "peak.h"

/* One gdump dump in the window. */
struct peak_cand {
	const char *path;
	time_t mtime;
	double sampled; /* its header's total, as sampled */
};

/* Is @p path (in the listing of @p prefix) a prof_gdump dump no older
 * than @p window s at @p now? Its mtime in @p mtime. */
static int peak_gdump_in(const char *prefix, const char *path, unsigned window,
    time_t now, time_t *mtime)
{
	const char *name = strrchr(path, '/');
	struct stat sb;

	name = name != NULL ? name + 1 : path;
	if (dumps_cause(prefix, name) != CAUSE_GDUMP ||
	    lstat(path, &sb) == -1 || !S_ISREG(sb.st_mode))
		return 0;
	*mtime = sb.st_mtim.tv_sec;
	return window == 0 || *mtime + (time_t)window >= now;
}

/* The sampled bytes of the header's total, from the dump's first bytes
 * (heapprof_header_total); -1 when it has none. */
static double peak_header_bytes(const char *path)
{
	uint64_t objs, bytes;
	char buf[256];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 ||
	    heapprof_header_total(buf, (size_t)n, &objs, &bytes) == -1)
		return -1;
	return (double)bytes;
}

/* qsort: the highest header total first. */
static int peak_cand_cmp(const void *a, const void *b)
{
	const struct peak_cand *x = a, *y = b;

	return x->sampled < y->sampled ? 1 : x->sampled > y->sampled ? -1 : 0;
}

int peak_gdump_best(const char *prefix, const char *dir, long pid,
    unsigned window, time_t now, struct peak_gdump *best)
{
	struct peak_cand *c = NULL;
	struct heap_profile hp;
	char **paths = NULL, err[256];
	size_t n = 0, i, k = 0;
	time_t mtime;
	double h;
	int found = 0;

	memset(best, 0, sizeof(*best));
	if (dumps_of_pid(prefix, dir, pid, (size_t)-1 / 2, &paths, &n) == -1)
		return 0;
	if (n > 0 && (c = calloc(n, sizeof(*c))) == NULL)
		goto done;
	/* Newest first, so the sort (stable enough: ties keep no order,
	 * the parse below prefers the newest) starts from the newest. */
	for (i = n; i-- > 0;) {
		if (!peak_gdump_in(prefix, paths[i], window, now, &mtime) ||
		    (h = peak_header_bytes(paths[i])) < 0)
			continue;
		c[k].path = paths[i];
		c[k].mtime = mtime;
		c[k].sampled = h;
		k++;
	}
	best->seen = (unsigned)k;
	if (k > 1) /* none: c may be NULL, which qsort must not get */
		qsort(c, k, sizeof(*c), peak_cand_cmp);
	for (i = 0; i < k && i < PEAK_GDUMPS_PARSE; i++) {
		if (heapprof_load(c[i].path, &hp, err, sizeof(err)) == -1)
			continue; /* gone (retention) or not whole */
		/* Of equals, the newest: closest to now, as for snapshots. */
		if (!found || hp.u_bytes > best->bytes ||
		    (hp.u_bytes == best->bytes && c[i].mtime > best->mtime)) {
			found = 1;
			best->bytes = hp.u_bytes;
			best->mtime = c[i].mtime;
			snprintf(best->path, sizeof(best->path), "%s",
			    c[i].path);
		}
		heapprof_free(&hp);
	}
done:
	free(c);
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return found;
}

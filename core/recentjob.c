/*
 * recentjob — jemalloc 5.3's recent sampled allocations: recent_max set
 * through experimental.prof_recent.alloc_max, and job_recent's lock
 * window, which reads them through experimental.prof_recent.alloc_dump.
 * The rest of the job (parse, symbolize, render) is body_recent's
 * (core/body.c), off the window.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "job.h"
#include "recentjob.h"

int core_recent_max(struct core *c, unsigned max, char *err, size_t errlen)
{
	ssize_t want = (ssize_t)max, now = 0;
	size_t len = sizeof(now);
	int e;

	/* No profiling, or a jemalloc before 5.3.0: nothing to set, and
	 * jmrc says so when asked. */
	if ((e = c->ops->mallctl("experimental.prof_recent.alloc_max", &now,
	         &len, NULL, 0)) == ENOENT)
		return 0;
	if (e != 0) {
		snprintf(err, errlen,
		    "recent_max: cannot read "
		    "experimental.prof_recent.alloc_max: %s",
		    strerror(e));
		return -1;
	}
	if (now == want)
		return 0;
	/* A write under prof_recent_alloc_mtx that frees the records past
	 * the new cap: as short as reading a handful of records. */
	if ((e = c->ops->mallctl("experimental.prof_recent.alloc_max", NULL,
	         NULL, &want, sizeof(want))) != 0) {
		snprintf(err, errlen,
		    "recent_max: cannot set experimental.prof_recent.alloc_max "
		    "to %u: %s",
		    max, strerror(e));
		return -1;
	}
	return 0;
}

/*
 * alloc_dump's write callback: each piece of the JSON into @p arg's
 * buffer, up to RECENT_JSON_MAX and then dropped (cut says so). It runs
 * under prof_recent_dump_mtx only: jemalloc has moved the records off
 * its list and let go of prof_recent_alloc_mtx, so growing the buffer
 * here blocks no allocating thread.
 */
static void recent_write(void *arg, const char *s)
{
	struct recent_buf *b = arg;
	size_t n = strlen(s), cap;
	char *p;

	if (b->cut)
		return;
	if (b->len + n > RECENT_JSON_MAX) {
		b->cut = 1;
		n = RECENT_JSON_MAX - b->len;
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 65536;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((p = realloc(b->buf, cap)) == NULL) {
			b->cut = b->nomem = 1; /* what we have, said cut */
			return;
		}
		b->buf = p;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

/* jemalloc's clock for the records' times (opt.prof_time_res: "high" is
 * the wall clock, else the coarse monotonic one), in ns. */
unsigned long long recent_clock(const struct core_ops *ops)
{
	const char *res = NULL;
	size_t len = sizeof(res);
	struct timespec ts;
	clockid_t id = CLOCK_MONOTONIC_COARSE;

	if (ops->mallctl("opt.prof_time_res", &res, &len, NULL, 0) == 0 &&
	    res != NULL && strcmp(res, "high") == 0)
		id = CLOCK_REALTIME;
	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	    (unsigned long long)ts.tv_nsec;
}

/*
 * job_recent's lock window: alloc_dump, nothing else. It holds
 * prof_recent_dump_mtx while it writes and takes prof_recent_alloc_mtx
 * (which every sampled allocation and its free take) twice, briefly, to
 * move the list out and back, so it runs at the host's priority like
 * prof.dump.
 */
int recent_dump(const struct core_ops *ops, struct recent_buf *b,
    unsigned long long *now)
{
	/* jemalloc's write_cb_packet_t: the callback and its argument. */
	struct {
		void (*write_cb)(void *, const char *);
		void *cbopaque;
	} packet = {recent_write, b};
	int e;

	e = ops->mallctl("experimental.prof_recent.alloc_dump", NULL, NULL,
	    &packet, sizeof(packet));
	*now = recent_clock(ops);
	return e;
}

int recent_read(struct job *j)
{
	j->state.recent.err =
	    recent_dump(j->ops, &j->state.recent.b, &j->state.recent.now);
	return 0;
}

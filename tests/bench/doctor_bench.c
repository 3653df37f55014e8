/*
 * doctor_bench: what the memory doctor costs on a heap of
 * -a arenas (default 16) with every small size class in use in each:
 * jmdr's diagnosis, and /metrics with and without the doctor's families,
 * timed in this process on the real jemalloc.
 *
 *	doctor_bench [-a ARENAS] [-n CALLS] [-q]
 *
 * Each arena gets 64 objects of every small class, every other one freed
 * again (slabs half used, as a service's are). Prints one line:
 *
 *	arenas=16 bins=36 calls=N diag_us=.. diag_epoch_us=.. jmdr_us=..
 *	metrics_us=.. metrics_doctor_us=.. metrics_before_us=..
 *
 * diag_us: doctor_diagnose() on a snapshot (no epoch); diag_epoch_us:
 * the same after its own epoch; jmdr_us: the word's text as well;
 * metrics_us: http_metrics() whole; metrics_doctor_us: its doctor part
 * (core_doctor and the families); metrics_before_us: the rest, what
 * /metrics rendered before. -q runs the diagnosis only (for callgrind's
 * --toggle-collect=doctor_diagnose).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "answer.h"
#include "config_struct.h"
#include "core.h"
#include "doctor.h"
#include "http.h"
#include "ops.h"
#include "proto.h"

/* Nanoseconds now, monotonic. */
static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Make @p n arenas (arena 0 is there) with every small class in use. */
static void build_heap(const struct core_ops *ops, unsigned n, unsigned *nbins)
{
	size_t len = sizeof(unsigned), size, slen;
	unsigned a, ind, j, k;
	char name[64];
	void *p[64];

	len = sizeof(*nbins);
	ops->mallctl("arenas.nbins", nbins, &len, NULL, 0);
	for (a = 0; a < n; a++) {
		ind = 0;
		len = sizeof(ind);
		if (a > 0 &&
		    ops->mallctl("arenas.create", &ind, &len, NULL, 0) != 0) {
			fprintf(stderr, "doctor_bench: arenas.create failed\n");
			exit(1);
		}
		ops->mallctl("thread.arena", NULL, NULL, &ind, sizeof(ind));
		for (j = 0; j < *nbins; j++) {
			snprintf(name, sizeof(name), "arenas.bin.%u.size", j);
			slen = sizeof(size);
			ops->mallctl(name, &size, &slen, NULL, 0);
			for (k = 0; k < 64; k++)
				if ((p[k] = malloc(size)) != NULL)
					memset(p[k], 1, size);
			for (k = 0; k < 64; k += 2)
				free(p[k]);
			/* The other half stays: the heap under study. */
		}
	}
	ind = 0;
	ops->mallctl("thread.arena", NULL, NULL, &ind, sizeof(ind));
}

/* A struct out that drops the text: jmdr's rendering, not its I/O. */
static void drop(void *arg, const void *buf, size_t len)
{
	(void)buf;
	*(size_t *)arg += len;
}

/* Build the heap, then time each path @p calls times. */
int main(int argc, char **argv)
{
	static struct jm4lw_config cfg;
	struct core_policy pol = {.reset_lg = -1};
	const struct core_ops *ops = core_jemalloc();
	unsigned arenas = 16, calls = 2000, nbins = 0, i;
	double t0, diag, diag_epoch, jmdr, metrics, mdoc, fam;
	struct out out, mout;
	struct evbuffer *b;
	struct doctor *d;
	struct core c;
	size_t bytes = 0;
	int ch, quick = 0;

	while ((ch = getopt(argc, argv, "a:n:q")) != -1) {
		if (ch == 'a')
			arenas = (unsigned)strtoul(optarg, NULL, 10);
		else if (ch == 'n')
			calls = (unsigned)strtoul(optarg, NULL, 10);
		else if (ch == 'q')
			quick = 1;
		else {
			fprintf(stderr,
			    "usage: doctor_bench [-a ARENAS] "
			    "[-n CALLS] [-q]\n");
			return 2;
		}
	}
	if (ops == NULL || calls == 0 || arenas == 0 ||
	    (d = malloc(sizeof(*d))) == NULL || (b = evbuffer_new()) == NULL)
		return 1;
	mout = http_out_of(b);
	build_heap(ops, arenas, &nbins);
	ctl_epoch(ops);
	doctor_diagnose(ops, 0, d); /* warm: MIBs, caches */
	t0 = now_ns();
	for (i = 0; i < calls; i++)
		doctor_diagnose(ops, 0, d);
	diag = (now_ns() - t0) / calls / 1000;
	if (!d->ok) {
		fprintf(stderr, "doctor_bench: %s\n", d->reason);
		return 1;
	}
	if (quick) {
		printf("arenas=%u bins=%u calls=%u diag_us=%.1f\n", d->narenas,
		    nbins, calls, diag);
		return 0;
	}
	t0 = now_ns();
	for (i = 0; i < calls; i++)
		doctor_diagnose(ops, 1, d);
	diag_epoch = (now_ns() - t0) / calls / 1000;
	out.write = drop;
	out.arg = &bytes;
	t0 = now_ns();
	for (i = 0; i < calls; i++) {
		doctor_diagnose(ops, 1, d);
		answer_doctor(&out, ANSWER_TEXT, d);
	}
	jmdr = (now_ns() - t0) / calls / 1000;
	/* /metrics as a scrape renders it: the module's coalesced epoch. */
	core_init(&c, ops, &cfg, &pol);
	t0 = now_ns();
	for (i = 0; i < calls; i++) {
		http_metrics(&c, b, 1);
		evbuffer_drain(b, evbuffer_get_length(b));
	}
	metrics = (now_ns() - t0) / calls / 1000;
	t0 = now_ns();
	for (i = 0; i < calls; i++) {
		core_doctor(&c, d);
		answer_doctor(&mout, ANSWER_PROMETHEUS, d);
		evbuffer_drain(b, evbuffer_get_length(b));
	}
	mdoc = (now_ns() - t0) / calls / 1000;
	t0 = now_ns();
	for (i = 0; i < calls; i++) {
		answer_doctor(&mout, ANSWER_PROMETHEUS, d);
		evbuffer_drain(b, evbuffer_get_length(b));
	}
	fam = (now_ns() - t0) / calls / 1000;
	printf("arenas=%u bins=%u calls=%u diag_us=%.1f diag_epoch_us=%.1f "
	       "jmdr_us=%.1f jmdr_bytes=%zu metrics_us=%.1f "
	       "metrics_doctor_us=%.1f families_us=%.1f "
	       "metrics_before_us=%.1f\n",
	    d->narenas, nbins, calls, diag, diag_epoch, jmdr, bytes / calls,
	    metrics, mdoc, fam, metrics - mdoc > 0 ? metrics - mdoc : 0);
	evbuffer_free(b);
	free(d);
	return 0;
}

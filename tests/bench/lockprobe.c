/*
 * lockprobe: how long a host thread waits on jemalloc's profiling locks
 * (a busy machine), LD_PRELOADed into the host beside the jm4lw agent:
 *
 *	JM4LW_LOCKPROBE=FILE LD_PRELOAD=.../liblockprobe.so \
 *	    jm4lw-run --prof-active -- PROGRAM ...
 *
 * (jm4lw-run puts the agent first and keeps the caller's LD_PRELOAD after
 * it.) Without JM4LW_LOCKPROBE it does nothing at all.
 *
 * With it, its constructor starts one thread, "lockprobe", at the normal
 * priority with every signal blocked, that loops: malloc an object of
 * 2 x 2^prof.lg_sample bytes (sampled with probability 1 - e^-2, 86 %),
 * touch one byte, free it, sleep 1 ms. The stack depth of the malloc
 * cycles through a few values, so the backtraces differ; and since the
 * object is freed before the next, its tctx (and its gctx) are destroyed
 * on each free, so nearly every sampled malloc goes through
 * prof_lookup_global() (bt2gctx_mtx, a new gctx) and every free through
 * prof_tctx_destroy() (its tdata lock, a gctx lock, bt2gctx_mtx again):
 * the host operations a prof.dump holds off the longest. The time of
 * each malloc + touch + free is taken with CLOCK_MONOTONIC; for each
 * 50 ms window (aligned on CLOCK_MONOTONIC) the longest one and the count
 * go to FILE as a line "WINDOW_START_NS MAX_NS COUNT" (an operation
 * counts in the window it started in; a window with no operation has no
 * line). Lines collect in a 16 KiB static buffer, written with one
 * write() at least once a second (O_APPEND); the last second before the
 * process exits may be lost.
 *
 * What it measures: the longest malloc+free of a sampled object in each
 * window, which includes any wait on prof_dump_mtx-protected state,
 * bt2gctx_mtx, tdatas_mtx, a tdata lock or a gctx lock a dump holds.
 * What it does not separate: its own scheduling delay. On a busy machine
 * a 1 ms operation can take a time slice (several ms) longer because the
 * thread was preempted, dump or no dump. So read the windows overlapping
 * a dump against the windows of the same run without one
 * (tests/bench/busy.sh does), never an absolute figure. It does not see
 * waits of other threads (the host's own), on locks it never takes
 * (prof_recent_*, fork's), nor a dump that samples nothing it touches.
 *
 * It is a probe, not a load: one 1 ms sleep per iteration keeps it under
 * a few per cent of one CPU. It allocates nothing in its loop but the
 * probe object (snprintf into the static buffer; the clock is a vDSO
 * call).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WINDOW_NS 50000000ULL
#define FLUSH_NS 1000000000ULL
#define BUF_SIZE 16384
#define LINE_MAX_LEN 64

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

static int probe_fd = -1;
static char probe_buf[BUF_SIZE];
static size_t probe_len;
/* The stack depths the mallocs cycle through. */
static const int depths[] = {0, 3, 7, 12, 5};

/* CLOCK_MONOTONIC in nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* malloc(n) DEPTH frames below here: the read of guard after the call
 * keeps the compiler from making it a tail call, so each depth is a
 * backtrace of its own. */
static __attribute__((noinline)) void *alloc_at(int depth, size_t n)
{
	volatile int guard = depth;
	void *p;

	if (depth > 0)
		p = alloc_at(depth - 1, n);
	else
		p = malloc(n);
	(void)guard;
	return p;
}

/* Write what the buffer holds; a failed write drops it (a probe never
 * stops the host). */
static void probe_flush(void)
{
	size_t off = 0;
	ssize_t w;

	while (off < probe_len) {
		w = write(probe_fd, probe_buf + off, probe_len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	probe_len = 0;
}

/* Append one window's line, flushing first when it would not fit. */
static void probe_line(uint64_t start, uint64_t max, unsigned count)
{
	int n;

	if (probe_len + LINE_MAX_LEN > sizeof(probe_buf))
		probe_flush();
	n = snprintf(probe_buf + probe_len, sizeof(probe_buf) - probe_len,
	    "%llu %llu %u\n", (unsigned long long)start,
	    (unsigned long long)max, count);
	if (n > 0 && (size_t)n < sizeof(probe_buf) - probe_len)
		probe_len += (size_t)n;
}

/* The probe thread: see the comment at the top. */
static void *probe_main(void *arg)
{
	const struct timespec pause = {0, 1000000};
	uint64_t win = 0, max = 0, last_flush, t0, t1;
	unsigned count = 0, i = 0;
	size_t lg = 0, lglen = sizeof(lg), size;
	mallctl_fn ctl;
	char *p;

	(void)arg;
	/* No jemalloc at all (jm4lw-run's own sh, ldd and awk inherit the
	 * preload too): nothing to probe, nothing to say. */
	ctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
	if (ctl == NULL)
		return NULL;
	if (ctl("prof.lg_sample", &lg, &lglen, NULL, 0) != 0) {
		fprintf(stderr,
		    "lockprobe: no mallctl(\"prof.lg_sample\") "
		    "(jemalloc with prof:true?); not probing\n");
		return NULL;
	}
	size = (size_t)2 << lg;
	fprintf(stderr, "lockprobe: %zu-byte objects (lg_sample %zu)\n", size,
	    lg);
	last_flush = now_ns();
	for (;;) {
		t0 = now_ns();
		p = alloc_at(depths[i++ % (sizeof(depths) / sizeof(*depths))],
		    size);
		if (p != NULL)
			*(volatile char *)p = 1;
		free(p);
		t1 = now_ns();
		if (t0 - t0 % WINDOW_NS != win) {
			if (count > 0)
				probe_line(win, max, count);
			win = t0 - t0 % WINDOW_NS;
			max = 0;
			count = 0;
		}
		if (t1 - t0 > max)
			max = t1 - t0;
		count++;
		if (t1 - last_flush >= FLUSH_NS) {
			probe_flush();
			last_flush = t1;
		}
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* Start the probe thread when JM4LW_LOCKPROBE names a file. */
__attribute__((constructor)) static void probe_init(void)
{
	const char *path = getenv("JM4LW_LOCKPROBE");
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;

	if (path == NULL || *path == '\0')
		return;
	probe_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (probe_fd < 0) {
		fprintf(stderr, "lockprobe: %s: %s\n", path, strerror(errno));
		return;
	}
	/* The host's signals stay the host's: the thread blocks them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, probe_main, NULL) == 0)
		pthread_setname_np(t, "lockprobe");
	else
		fprintf(stderr, "lockprobe: cannot start its thread\n");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

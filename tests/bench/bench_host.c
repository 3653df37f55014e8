/*
 * bench_host: a host that embeds the module (include/jm4lw.h, libjm4lw.a)
 * over a large sampled heap, to time jmfp against a bare prof.dump of the
 * same heap, and to watch its port while it dumps.
 *
 *	MALLOC_CONF=prof:true bench_host [-T] [-S] [-m MiB] [-A N [-P PCT]]
 *	    [-l addr:port] [-W addr:port] DUMP_DIR
 *
 * -W serves the HTTP face there too (none without it), logged as the
 * module's "HTTP listening on ADDR:PORT".
 *
 * At start it switches sampling on (prof.active) and allocates -m MiB
 * (default 1024) of live blocks, 32 B to 128 KiB (log-uniform), each
 * written to so the heap is resident, through call chains of 1 to 12
 * frames picked among four functions: the ~2000 samples jemalloc takes at
 * its default rate (one per 512 KiB) carry many distinct backtraces, as a
 * real service's do. -S (stacks) makes the profile as large as a big
 * service's: blocks of 32 B to 8 KiB, so that at a lowered sample interval
 * (MALLOC_CONF lg_prof_sample:15, one per 32 KiB) every sample is a block
 * of its own, through chains of 8 to 16 frames, so that nearly every
 * sample has a backtrace of its own: ~30000 per GiB. Then it serves the
 * module on -l (default 127.0.0.1:0) with dump_min_interval = 0, on its
 * own libevent loop (embedded), or with -T on the module's own thread
 * (jm4lw_start_thread_ex(), as the preload agent runs it), with two host
 * words:
 *
 *	bdmp  a bare mallctl("prof.dump") of the same heap to
 *	      DUMP_DIR/bare.<pid>.<seq>.heap: no temporary file, no rename,
 *	      no checks; the reply is "<path>\t<nanoseconds in mallctl>\n"
 *
 *	tjfp  jmfp through jm4lw_reply_builtin(), timed in the process: its
 *	      path line, then "took\t<nanoseconds>\n"
 *
 * so `loadgen -w tjfp` and `loadgen -w bdmp` time both over the same port
 * and the same transport, and each reply says what the process spent.
 *
 * -A N starts N more host threads once the heap is built, each a service's
 * allocation churn: a live set of 1024 blocks of 32 B to 4 KiB
 * (log-uniform), one of them freed and a new one allocated (and written
 * to) per operation, sampled like the rest of the heap. Each works PCT %
 * (-P, default 25) of every 4 ms and sleeps the rest, so the process leaves
 * CPU to the module's loop and worker as a service that is not saturated
 * does. Every operation's latency (free + malloc + write, clock_gettime
 * around it) goes into a fixed log-linear histogram of the thread's own (16
 * steps per power of two, < 3 % error; nothing allocated to record it), and
 * a third host word reads them:
 *
 *	alst  "threads=N secs=S ops=O ops_per_s=R p50_ns=A p99_ns=B
 *	      max_ns=C\n": the operations of all N threads since the last alst
 *	      (or since they started), their rate and latency percentiles;
 *	      each alst starts the next interval
 *
 * Logs
 * the heap it built, what one mallctl("epoch") costs before and after
 * building it, and then "bench_host: listening on ADDR:PORT" on stderr;
 * exits 0 on SIGTERM or SIGINT.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jemalloc/jemalloc.h>

#include "jm4lw.h"

#define MIN_LG 5  /* 32 B */
#define MAX_LG 17 /* 128 KiB */
#define MAX_DEPTH 12
#define STACKS_MAX_LG 12   /* -S: 8 KiB */
#define STACKS_MIN_DEPTH 8 /* -S: 4^8 chains at the shortest */
#define STACKS_MAX_DEPTH 16
#define CHURN_LIVE 1024         /* -A: blocks each churn thread holds */
#define CHURN_MIN_LG 5          /* -A: 32 B */
#define CHURN_MAX_LG 11         /* -A: up to 4 KiB */
#define CHURN_PERIOD_NS 4000000 /* -A: a thread works -P % of 4 ms */
#define HIST_SUB 16             /* histogram steps per power of two */
#define HIST_N (64 * HIST_SUB)

struct bare {
	char dir[4096];
	unsigned long seq;
};

/* -A: one churn thread. The thread writes hist, ops and max_ns (single
 * writer, relaxed); alst, on the module's loop, reads them and keeps what it
 * saw in seen/seen_ops, so an interval is a difference and the writer never
 * waits for the reader. */
struct churn {
	pthread_t tid;
	_Atomic uint64_t hist[HIST_N];
	_Atomic uint64_t ops;
	_Atomic uint64_t max_ns;
	uint64_t seen[HIST_N];
	uint64_t seen_ops;
	uint64_t rng;
	void *live[CHURN_LIVE];
};

struct churns {
	struct churn *t;
	int n;
	int pct;
	atomic_bool stop;
	struct timespec since; /* alst's: the start of its interval */
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
/* The heap's shape: block sizes 2^min_lg .. 2^(max_lg+1), chains of
 * min_depth .. max_depth frames (-S changes them). */
static int max_lg = MAX_LG, min_depth = 1, max_depth = MAX_DEPTH;

/* xorshift64*: the same heap on every run. */
static uint64_t next_rand(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static void *path0(int depth, uint64_t bits, size_t size);
static void *path1(int depth, uint64_t bits, size_t size);
static void *path2(int depth, uint64_t bits, size_t size);
static void *path3(int depth, uint64_t bits, size_t size);

/* The allocation at the end of a chain; the block is written to. */
__attribute__((noinline)) static void *leaf_alloc(size_t size)
{
	void *p = malloc(size);

	if (p != NULL)
		memset(p, 0x5a, size);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* One more frame, chosen by the next two bits, or the allocation. */
__attribute__((noinline)) static void *step(int depth, uint64_t bits,
    size_t size)
{
	void *p;

	if (depth == 0)
		p = leaf_alloc(size);
	else
		switch (bits & 3) {
		case 0:
			p = path0(depth - 1, bits >> 2, size);
			break;
		case 1:
			p = path1(depth - 1, bits >> 2, size);
			break;
		case 2:
			p = path2(depth - 1, bits >> 2, size);
			break;
		default:
			p = path3(depth - 1, bits >> 2, size);
			break;
		}
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* Four distinct frames for the backtraces (no tail calls: see asm). */
__attribute__((noinline)) static void *path0(int depth, uint64_t bits,
    size_t size)
{
	void *p = step(depth, bits, size);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *path1(int depth, uint64_t bits,
    size_t size)
{
	void *p = step(depth, bits, size);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *path2(int depth, uint64_t bits,
    size_t size)
{
	void *p = step(depth, bits, size);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *path3(int depth, uint64_t bits,
    size_t size)
{
	void *p = step(depth, bits, size);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* Fill the heap: @p mib MiB of live, sampled blocks. */
static void **heap_fill(size_t mib, size_t *nblocks)
{
	size_t want = mib << 20, live = 0, n = 0, cap = 1024, size;
	void **blocks = malloc(cap * sizeof(*blocks)), **nb;
	uint64_t r;
	int lg;

	while (blocks != NULL && live < want) {
		r = next_rand();
		lg = MIN_LG + (int)(r % (uint64_t)(max_lg - MIN_LG + 1));
		size =
		    ((size_t)1 << lg) + (size_t)((r >> 8) % ((size_t)1 << lg));
		if (n == cap) {
			if ((nb = realloc(blocks, 2 * cap * sizeof(*nb))) ==
			    NULL)
				break;
			blocks = nb;
			cap *= 2;
		}
		blocks[n] = step(min_depth +
		        (int)((r >> 32) %
		            (uint64_t)(max_depth - min_depth + 1)),
		    next_rand(), size);
		if (blocks[n] == NULL)
			break;
		live += size;
		n++;
	}
	*nblocks = n;
	return blocks;
}

/* Microseconds one mallctl("epoch") takes here (mean of 200): the
 * statistics refresh every mntr, jmst and jmfp starts with. */
static double epoch_us(void)
{
	struct timespec t0, t1;
	uint64_t epoch = 1;
	size_t len = sizeof(epoch);
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 200; i++)
		(void)mallctl("epoch", &epoch, &len, &epoch, sizeof(epoch));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
	           (double)(t1.tv_nsec - t0.tv_nsec)) /
	    200 / 1000;
}

/* Nanoseconds from @p a to @p b. */
static uint64_t ns_between(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)((b->tv_sec - a->tv_sec) * 1000000000LL +
	    (b->tv_nsec - a->tv_nsec));
}

/* The histogram bucket of @p ns: exact below HIST_SUB, then HIST_SUB
 * steps per power of two. */
static unsigned hist_bucket(uint64_t ns)
{
	unsigned e;

	if (ns < HIST_SUB)
		return (unsigned)ns;
	e = 63 - (unsigned)__builtin_clzll(ns); /* >= 4 */
	return (e - 3) * HIST_SUB +
	    (unsigned)((ns >> (e - 4)) & (HIST_SUB - 1));
}

/* The middle of bucket @p b, in nanoseconds. */
static uint64_t hist_value(unsigned b)
{
	unsigned e = b / HIST_SUB + 3, sub = b % HIST_SUB;

	if (b < HIST_SUB)
		return b;
	return ((uint64_t)(HIST_SUB + sub) << (e - 4)) +
	    ((uint64_t)1 << (e - 4)) / 2;
}

/* Add one to a counter only this thread writes (no locked instruction). */
static void bump(_Atomic uint64_t *c, uint64_t by)
{
	atomic_store_explicit(c,
	    atomic_load_explicit(c, memory_order_relaxed) + by,
	    memory_order_relaxed);
}

/* A block of 32 B .. 4 KiB, log-uniform, written to as a service would. */
static void *churn_alloc(uint64_t *state)
{
	uint64_t r;
	size_t size;
	void *p;
	int lg;

	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	r = *state * 0x2545f4914f6cdd1dull;
	lg = CHURN_MIN_LG + (int)(r % (CHURN_MAX_LG - CHURN_MIN_LG + 1));
	size = ((size_t)1 << lg) + (size_t)((r >> 8) % ((size_t)1 << lg));
	if ((p = malloc(size)) != NULL) {
		((volatile char *)p)[0] = 1;
		((volatile char *)p)[size - 1] = 1;
	}
	return p;
}

struct churn_arg {
	struct churns *set;
	struct churn *me;
};

/* -A: free one block of the live set and allocate its successor, timing
 * each such operation, for pct % of every period; sleep the rest. */
static void *churn_main(void *arg)
{
	struct churn_arg *a = arg;
	struct churn *c = a->me;
	struct churns *set = a->set;
	struct timespec t0, t1, next;
	uint64_t work_ns = (uint64_t)CHURN_PERIOD_NS * (uint64_t)set->pct / 100,
	         ns, start_ns;
	size_t i = 0;
	sigset_t all;

	/* SIGTERM and SIGINT are for main's sigwait() or the loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (i = 0; i < CHURN_LIVE; i++)
		c->live[i] = churn_alloc(&c->rng);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load_explicit(&set->stop, memory_order_relaxed)) {
		/* The window starts when the thread runs, not when it was
		 * due: a late wake-up (a halted CPU) must not shorten it, or
		 * ops/s would measure how often the CPU idles. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		start_ns =
		    (uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec;
		do {
			i = (size_t)(c->rng >> 20) % CHURN_LIVE;
			free(c->live[i]);
			c->live[i] = churn_alloc(&c->rng);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ns = ns_between(&t0, &t1);
			bump(&c->hist[hist_bucket(ns)], 1);
			bump(&c->ops, 1);
			if (ns > atomic_load_explicit(&c->max_ns,
			             memory_order_relaxed))
				atomic_store_explicit(&c->max_ns, ns,
				    memory_order_relaxed);
			t0 = t1;
		} while ((uint64_t)t1.tv_sec * 1000000000ull +
		        (uint64_t)t1.tv_nsec - start_ns <
		    work_ns);
		/* The next period; after an overrun, from now. */
		next.tv_nsec += CHURN_PERIOD_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		if (ns_between(&t1, &next) > (uint64_t)CHURN_PERIOD_NS)
			next = t1;
		else
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
			    NULL);
	}
	for (i = 0; i < CHURN_LIVE; i++)
		free(c->live[i]);
	return NULL;
}

/* -A: start @p set->n churn threads; 0, or -1 with none left running. */
static int churn_start(struct churns *set, struct churn_arg *args)
{
	int i;

	clock_gettime(CLOCK_MONOTONIC, &set->since);
	for (i = 0; i < set->n; i++) {
		set->t[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 2);
		args[i].set = set;
		args[i].me = &set->t[i];
		if (pthread_create(&set->t[i].tid, NULL, churn_main,
		        &args[i]) != 0) {
			set->n = i;
			return -1;
		}
	}
	return 0;
}

/* -A: stop and join the churn threads. */
static void churn_stop(struct churns *set)
{
	int i;

	atomic_store(&set->stop, true);
	for (i = 0; i < set->n; i++)
		pthread_join(set->t[i].tid, NULL);
}

/* alst: the churn threads' operations since the last alst. */
static int word_alst(struct jm4lw_reply *r, void *arg)
{
	struct churns *set = arg;
	uint64_t d[HIST_N], ops = 0, max = 0, v, sum = 0, p50 = 0, p99 = 0;
	struct timespec now;
	double secs;
	unsigned b;
	int i;

	if (set->n == 0)
		return jm4lw_reply_error(r,
		    "no allocating threads; start bench_host with -A N");
	memset(d, 0, sizeof(d));
	for (i = 0; i < set->n; i++) {
		struct churn *c = &set->t[i];

		for (b = 0; b < HIST_N; b++) {
			v = atomic_load_explicit(&c->hist[b],
			    memory_order_relaxed);
			d[b] += v - c->seen[b];
			c->seen[b] = v;
		}
		v = atomic_load_explicit(&c->ops, memory_order_relaxed);
		ops += v - c->seen_ops;
		c->seen_ops = v;
		v = atomic_exchange_explicit(&c->max_ns, 0,
		    memory_order_relaxed);
		if (v > max)
			max = v;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	secs = (double)ns_between(&set->since, &now) / 1e9;
	set->since = now;
	for (b = 0; b < HIST_N; b++) {
		if (d[b] == 0)
			continue;
		sum += d[b];
		if (p50 == 0 && sum * 2 >= ops)
			p50 = hist_value(b);
		if (p99 == 0 && sum * 100 >= ops * 99)
			p99 = hist_value(b);
	}
	jm4lw_reply_printf(r,
	    "threads=%d secs=%.3f ops=%llu ops_per_s=%.0f p50_ns=%llu "
	    "p99_ns=%llu max_ns=%llu\n",
	    set->n, secs, (unsigned long long)ops,
	    secs > 0 ? (double)ops / secs : 0.0, (unsigned long long)p50,
	    (unsigned long long)p99, (unsigned long long)max);
	return 0;
}

/* bdmp: prof.dump straight to a file, timed. */
static int word_bdmp(struct jm4lw_reply *r, void *arg)
{
	struct bare *b = arg;
	struct timespec t0, t1;
	char path[4096 + 64];
	const char *p = path;
	int e;

	snprintf(path, sizeof(path), "%s/bare.%ld.%lu.heap", b->dir,
	    (long)getpid(), b->seq++);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	e = mallctl("prof.dump", NULL, NULL, &p, sizeof(p));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (e != 0)
		return jm4lw_reply_error(r, "prof.dump: %s", strerror(e));
	jm4lw_reply_printf(r, "%s\t%lld\n", path,
	    (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
	        (t1.tv_nsec - t0.tv_nsec));
	return 0;
}

/*
 * tjfp: jmfp itself (the built-in, through the public API), timed in the
 * process: everything proto_dump does, without the connection. The reply
 * is jmfp's path line, then "took\t<nanoseconds>\n".
 */
static int word_tjfp(struct jm4lw_reply *r, void *arg)
{
	struct timespec t0, t1;
	int e;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	e = jm4lw_reply_builtin(r, "jmfp");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (e == 0)
		jm4lw_reply_printf(r, "took\t%lld\n",
		    (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
		        (t1.tv_nsec - t0.tv_nsec));
	return e;
}

/* The host words, on the module before it listens (both modes). */
static int add_words(struct jm4lw *m, struct bare *b, struct churns *c)
{
	return jm4lw_add_word(m, "bdmp", word_bdmp, b, JM4LW_WORD_MUTATES) ==
	            -1 ||
	        jm4lw_add_word(m, "tjfp", word_tjfp, NULL,
	            JM4LW_WORD_MUTATES) == -1 ||
	        jm4lw_add_word(m, "alst", word_alst, c, 0) == -1
	    ? -1
	    : 0;
}

/* SIGTERM/SIGINT: leave the loop. */
static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	event_base_loopexit(arg, NULL);
}

/* Embedded: the module on this thread's libevent loop, until a signal. */
static int serve_embedded(const struct jm4lw_config *cfg, const char *listen,
    struct bare *b, struct churns *c)
{
	struct event_base *base = NULL;
	struct event *sigterm = NULL, *sigint = NULL;
	struct jm4lw *m = NULL;
	char err[256], addr[128], http[512];
	int status = 1;

	if (jm4lw_config_get(cfg, "http_listen", http, sizeof(http)) == -1)
		http[0] = '\0';
	if ((base = event_base_new()) == NULL ||
	    (m = jm4lw_new(base, cfg, err, sizeof(err))) == NULL) {
		fprintf(stderr, "bench_host: %s\n", base ? err : "event base");
		goto done;
	}
	if (add_words(m, b, c) == -1 || jm4lw_listen(m, listen) == -1 ||
	    jm4lw_bound_addr(m, 0, addr, sizeof(addr)) == -1 ||
	    (http[0] != '\0' && jm4lw_http_listen(m, NULL) == -1))
		goto done;
	sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	sigint = evsignal_new(base, SIGINT, on_signal, base);
	if (sigterm == NULL || sigint == NULL ||
	    evsignal_add(sigterm, NULL) == -1 ||
	    evsignal_add(sigint, NULL) == -1)
		goto done;
	fprintf(stderr, "bench_host: listening on %s\n", addr);
	if (event_base_dispatch(base) == 0)
		status = 0;
done:
	if (sigterm != NULL)
		event_free(sigterm);
	if (sigint != NULL)
		event_free(sigint);
	jm4lw_free(m);
	if (base != NULL)
		event_base_free(base);
	return status;
}

struct thread_setup {
	struct bare *bare;
	struct churns *churns;
	struct jm4lw *m;
	int failed;
};

/* -T: add the host words before the module's thread starts. */
static void thread_setup(struct jm4lw *m, void *arg)
{
	struct thread_setup *ts = arg;

	ts->m = m;
	if (add_words(m, ts->bare, ts->churns) == -1)
		ts->failed = 1;
}

/* -T: the module on its own thread, as the agent runs it; this thread
 * only waits for SIGTERM or SIGINT. */
static int serve_thread(struct jm4lw_config *cfg, const char *listen,
    struct bare *b, struct churns *c)
{
	struct thread_setup ts = {b, c, NULL, 0};
	struct jm4lw_thread_opts opts;
	struct jm4lw_thread *t;
	char err[256], addr[128];
	sigset_t set;
	int sig;

	if (jm4lw_config_set(cfg, "listen", listen, err, sizeof(err)) == -1) {
		fprintf(stderr, "bench_host: %s\n", err);
		return 1;
	}
	/* Blocked before the thread exists, so sigwait() gets them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	memset(&opts, 0, sizeof(opts));
	opts.size = sizeof(opts);
	opts.setup = thread_setup;
	opts.setup_arg = &ts;
	if ((t = jm4lw_start_thread_ex(cfg, &opts, err, sizeof(err))) == NULL) {
		fprintf(stderr, "bench_host: %s\n", err);
		return 1;
	}
	/* The listeners are fixed before the thread starts: reading their
	 * address from here does not race with it. */
	if (ts.failed || jm4lw_bound_addr(ts.m, 0, addr, sizeof(addr)) == -1) {
		jm4lw_stop_thread(t);
		return 1;
	}
	fprintf(stderr, "bench_host: listening on %s (thread mode)\n", addr);
	while (sigwait(&set, &sig) != 0)
		;
	jm4lw_stop_thread(t);
	return 0;
}

int main(int argc, char *argv[])
{
	struct jm4lw_config *cfg;
	static struct bare bare;
	static struct churns churns = {.pct = 25};
	struct churn_arg *cargs = NULL;
	const char *listen = "127.0.0.1:0";
	const char *http = ""; /* -W: none unless asked */
	struct timespec t0, t1;
	char err[256];
	size_t mib = 1024, nblocks = 0, i, allocated, len = sizeof(size_t);
	void **blocks;
	bool on = true, thread = false;
	uint64_t epoch = 1;
	double epoch_empty;
	int ch, status = 1;

	while ((ch = getopt(argc, argv, "A:P:m:l:W:ST")) != -1) {
		switch (ch) {
		case 'A':
			churns.n = atoi(optarg);
			if (churns.n < 0 || churns.n > 64)
				goto usage;
			break;
		case 'P':
			churns.pct = atoi(optarg);
			if (churns.pct < 1 || churns.pct > 100)
				goto usage;
			break;
		case 'm':
			mib = (size_t)strtoul(optarg, NULL, 10);
			if (mib == 0 || mib > 65536)
				goto usage;
			break;
		case 'l':
			listen = optarg;
			break;
		case 'W':
			http = optarg;
			break;
		case 'S':
			max_lg = STACKS_MAX_LG;
			min_depth = STACKS_MIN_DEPTH;
			max_depth = STACKS_MAX_DEPTH;
			break;
		case 'T':
			thread = true;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	snprintf(bare.dir, sizeof(bare.dir), "%s", argv[optind]);

	if (mallctl("prof.active", NULL, NULL, &on, sizeof(on)) != 0) {
		fprintf(stderr,
		    "bench_host: cannot switch sampling on; run "
		    "with MALLOC_CONF=prof:true\n");
		return 1;
	}
	epoch_empty = epoch_us();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	blocks = heap_fill(mib, &nblocks);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	(void)mallctl("epoch", &epoch, &len, &epoch, sizeof(epoch));
	len = sizeof(allocated);
	if (blocks == NULL ||
	    mallctl("stats.allocated", &allocated, &len, NULL, 0) != 0) {
		fprintf(stderr, "bench_host: out of memory\n");
		return 1;
	}
	fprintf(stderr,
	    "bench_host: %zu blocks, stats.allocated %zu MiB, "
	    "filled in %.2f s\n",
	    nblocks, allocated >> 20,
	    (double)(t1.tv_sec - t0.tv_sec) +
	        (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	fprintf(stderr,
	    "bench_host: epoch %.1f us before the fill, %.1f us "
	    "after\n",
	    epoch_empty, epoch_us());

	if (churns.n > 0) {
		churns.t = calloc((size_t)churns.n, sizeof(*churns.t));
		cargs = calloc((size_t)churns.n, sizeof(*cargs));
		if (churns.t == NULL || cargs == NULL ||
		    churn_start(&churns, cargs) == -1) {
			fprintf(stderr,
			    "bench_host: cannot start -A threads\n");
			churn_stop(&churns);
			return 1;
		}
		fprintf(stderr,
		    "bench_host: %d allocating threads, %d %% of every %d ms\n",
		    churns.n, churns.pct, CHURN_PERIOD_NS / 1000000);
	}

	if ((cfg = jm4lw_config_new()) == NULL) {
		fprintf(stderr, "bench_host: out of memory\n");
		return 2;
	}
	/* JM4LW_CONF: more keys (snapshot_interval, to time snapshots). */
	if (getenv("JM4LW_CONF") != NULL &&
	    jm4lw_config_load(cfg, getenv("JM4LW_CONF"), err, sizeof(err)) ==
	        -1) {
		fprintf(stderr, "bench_host: JM4LW_CONF: %s\n", err);
		jm4lw_config_free(cfg);
		return 2;
	}
	if (jm4lw_config_set(cfg, "http_listen", http, err, sizeof(err)) ==
	    -1) {
		fprintf(stderr, "bench_host: -W: %s\n", err);
		jm4lw_config_free(cfg);
		return 2;
	}
	if (jm4lw_config_set(cfg, "dump_dir", bare.dir, err, sizeof(err)) ==
	        -1 ||
	    jm4lw_config_set(cfg, "dump_min_interval", "0", err, sizeof(err)) ==
	        -1)
		fprintf(stderr, "bench_host: %s\n", err);
	else if (thread)
		status = serve_thread(cfg, listen, &bare, &churns);
	else
		status = serve_embedded(cfg, listen, &bare, &churns);
	jm4lw_config_free(cfg);
	churn_stop(&churns);
	free(churns.t);
	free(cargs);
	for (i = 0; i < nblocks; i++)
		free(blocks[i]);
	free(blocks);
	return status;
usage:
	fprintf(stderr,
	    "usage: bench_host [-T] [-S] [-m MiB] [-A N [-P PCT]] "
	    "[-l addr:port] DUMP_DIR\n");
	return 2;
}

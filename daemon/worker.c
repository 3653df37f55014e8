/*
 * The worker: two threads. "jm4lw-worker" sleeps on a condition variable
 * until a job comes (no timers: an idle module still never wakes up),
 * runs it niced (WORKER_NICE) with its own allocations unsampled, and
 * tells the loop through an eventfd, the one way to reach a libevent loop
 * from another thread without evthread locking (the loop may be the
 * host's). Between jobs it does the work nobody waits for (the idle hook:
 * leak indexes), one piece at a time, a queued job first.
 *
 * "jm4lw-dump" runs only the part of a job that holds jemalloc's
 * profiling locks (prof.dump: worker_locked), at the priority of the
 * thread that started the worker, the host's. Host threads that sample,
 * free a sampled object or start a thread wait on those locks; behind a
 * thread that gets no CPU they waited a minute on a busy machine
 * (SCHED_IDLE, a priority inversion). One thread cannot do both: an
 * unprivileged thread may lower its priority but never raise it again
 * (RLIMIT_NICE is 0 by default), so the high one is a thread of its own,
 * started from the loop's thread so that it inherits the host's priority.
 *
 * Teardown must be prompt even mid-dump, and prof.dump cannot be
 * interrupted: worker_free() hands a running job to the thread, which
 * finishes it, frees it and itself, and exits (detached).
 */
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "ops.h"
#include "worker.h"

enum worker_state { W_IDLE, W_QUEUED, W_RUNNING, W_DONE };

/* The locked part's hand-off between the two threads. */
enum locked_state { L_IDLE, L_ASKED, L_DONE };

struct worker {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	pthread_t thread;
	int started; /* thread runs */
	pid_t pid;   /* the process it runs in */
	enum worker_state state;
	int stop;                /* leave when idle */
	worker_orphan_fn orphan; /* set: the module is gone, free and exit */
	worker_fn fn;
	void *job;
	int efd;          /* eventfd: a job is done */
	pid_t efd_pid;    /* the process that made it (a fork shares it) */
	struct event *ev; /* the loop's end of it */
	worker_done_fn done;
	void *arg;
	const struct core_ops *ops;
	/* jm4lw-dump: the locked part, at the host's priority. */
	pthread_t ltid;
	int lstarted;
	pthread_cond_t lcv; /* both ways, under lock */
	enum locked_state lstate;
	void (*lfn)(void *);
	void *larg;
	/* Work nobody waits for, between jobs (worker_set_idle). */
	worker_idle_fn idle;
	void *idle_arg;
	int idle_more;           /* the hook may have something to do */
	struct timespec idle_at; /* not before (CLOCK_REALTIME, as cv's) */
	int idle_delay_ms;       /* after the next job (worker_idle_after) */
	int idle_running;        /* it runs now, without the lock */
	/* What the last job ran on (worker_threads). */
	long tid, ltid_os;
	int nice;
	int nice_by; /* WORKER_NICE, or JM4LW_WORKER_NICE's */
};

/*
 * An arena of the worker's own: what a job allocates (a parsed profile,
 * libdw's tables, the symbol cache) neither fragments the host's arenas
 * nor stays in them after the job. 0 if there is none (no arenas.create:
 * the host's arenas serve, as before).
 */
static unsigned worker_own_arena(const struct core_ops *ops)
{
	unsigned ind = 0;
	size_t len = sizeof(ind);

	if (ops->mallctl("arenas.create", &ind, &len, NULL, 0) != 0 ||
	    ops->mallctl("thread.arena", NULL, NULL, &ind, sizeof(ind)) != 0)
		return 0;
	return ind;
}

/*
 * After a job: its memory back to the system at once, rather than when
 * jemalloc's decay gets to it seconds later, so a host's RSS is back
 * where it was when the reply goes out. Only the worker's arena is
 * purged; the host's dirty pages are the host's business.
 */
static void worker_release(const struct core_ops *ops, unsigned arena)
{
	char name[64];

	if (arena == 0)
		return;
	(void)ops->mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	snprintf(name, sizeof(name), "arena.%u.purge", arena);
	(void)ops->mallctl(name, NULL, NULL, NULL, 0);
}

/* Free what the worker holds; the thread is gone or is this one. */
static void worker_destroy(struct worker *w)
{
	close(w->efd);
	pthread_cond_destroy(&w->lcv);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/*
 * Lower this thread's priority by WORKER_NICE from the host's: the loop
 * and the host's threads win the CPU, yet on a machine whose every core
 * is busy the worker still gets a share (a nice-5 thread beside a busy
 * one at nice 0 gets about a quarter of the core), so a reply a person waits
 * for comes in seconds. SCHED_IDLE, which it ran at before, gets 0.3 % and
 * starved: jmtp took minutes on a busy machine (BENCHMARKS.md, section 13).
 * The value it reached, for worker_threads().
 */
static int worker_yielding_priority(int by)
{
	id_t tid = (id_t)syscall(SYS_gettid);
	int cur;

	errno = 0;
	cur = getpriority(PRIO_PROCESS, tid);
	if (cur == -1 && errno != 0)
		return 0;
	if (by < 0) { /* the old way, for comparison (BENCHMARKS.md) */
		struct sched_param sp = {.sched_priority = 0};
		(void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	} else if (cur < 19 && by > 0)
		(void)setpriority(PRIO_PROCESS, tid,
		    cur + by > 19 ? 19 : cur + by);
	errno = 0;
	cur = getpriority(PRIO_PROCESS, tid);
	return cur == -1 && errno != 0 ? 0 : cur;
}

/* WORKER_NICE, or JM4LW_WORKER_NICE: 0 to 19, or "idle" for SCHED_IDLE
 * (-1), to measure the choice on a machine (tests/bench/busy.sh). Read on
 * the loop's thread, never the worker's: a host's setenv is not ours to
 * race. */
static int worker_nice_by(void)
{
	const char *e = getenv("JM4LW_WORKER_NICE");
	char *end;
	long v;

	if (e == NULL || *e == '\0')
		return WORKER_NICE;
	if (strcmp(e, "idle") == 0)
		return -1;
	v = strtol(e, &end, 10);
	return *end == '\0' && v >= 0 && v <= 19 ? (int)v : WORKER_NICE;
}

/* jm4lw-dump: run what worker_locked() hands over, until stopped. It
 * keeps the priority it was started with, the host's. */
static void *worker_locked_main(void *arg)
{
	struct worker *w = arg;
	struct ctl_mib tpa = {.state = 0};

	pthread_setname_np(pthread_self(), "jm4lw-dump");
	(void)ctl_thread_sampling(w->ops, &tpa, 0);
	pthread_mutex_lock(&w->lock);
	w->ltid_os = (long)syscall(SYS_gettid);
	for (;;) {
		while (w->lstate != L_ASKED && w->lstarted != 2)
			pthread_cond_wait(&w->lcv, &w->lock);
		if (w->lstate != L_ASKED)
			break; /* stopped, nothing asked */
		pthread_mutex_unlock(&w->lock);
		w->lfn(w->larg);
		pthread_mutex_lock(&w->lock);
		w->lstate = L_DONE;
		pthread_cond_broadcast(&w->lcv);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

void worker_locked(void *ctx, void (*fn)(void *), void *arg)
{
	struct worker *w = ctx;

	pthread_mutex_lock(&w->lock);
	if (w->lstarted != 1 || w->pid != getpid()) {
		/* No second thread (it could not start): here, niced. */
		pthread_mutex_unlock(&w->lock);
		fn(arg);
		return;
	}
	w->lfn = fn;
	w->larg = arg;
	w->lstate = L_ASKED;
	pthread_cond_broadcast(&w->lcv);
	while (w->lstate != L_DONE)
		pthread_cond_wait(&w->lcv, &w->lock);
	w->lstate = L_IDLE;
	pthread_mutex_unlock(&w->lock);
}

/* Stop jm4lw-dump and wait for it (it is idle: no job runs). */
static void worker_locked_stop(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
	if (w->lstarted != 1) {
		pthread_mutex_unlock(&w->lock);
		return;
	}
	w->lstarted = 2;
	pthread_cond_broadcast(&w->lcv);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->ltid, NULL);
}

/* The deadline @p ms from now on CLOCK_REALTIME, pthread_cond_timedwait's
 * clock (the worker's cv is made with the default attributes). */
static void worker_deadline(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* The thread: wait for a job, run it, tell the loop; between jobs, the
 * idle hook; until stopped. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t one = 1;
	unsigned arena;
	struct ctl_mib tpa = {.state = 0};
	void *job;
	int more, nice;

	pthread_setname_np(pthread_self(), "jm4lw-worker");
	/* What a job allocates must not show up in the profiles it writes. */
	(void)ctl_thread_sampling(w->ops, &tpa, 0);
	nice = worker_yielding_priority(w->nice_by);
	arena = worker_own_arena(w->ops);
	pthread_mutex_lock(&w->lock);
	w->tid = (long)syscall(SYS_gettid);
	w->nice = nice;
	for (;;) {
		while (w->state != W_QUEUED && !w->stop) {
			if (w->idle == NULL || !w->idle_more) {
				pthread_cond_wait(&w->cv, &w->lock);
				continue;
			}
			/* Not while a person may be about to ask again. */
			if (pthread_cond_timedwait(&w->cv, &w->lock,
			        &w->idle_at) != ETIMEDOUT)
				continue;
			/* One piece, then look again: a job comes first. */
			w->idle_running = 1;
			pthread_mutex_unlock(&w->lock);
			more = w->idle(w->idle_arg);
			if (!more)
				worker_release(w->ops, arena);
			pthread_mutex_lock(&w->lock);
			w->idle_running = 0;
			w->idle_more = more;
			if (w->orphan != NULL) /* freed meanwhile */
				goto orphaned;
		}
		if (w->stop)
			break;
		w->state = W_RUNNING;
		pthread_mutex_unlock(&w->lock);
		w->fn(w->job);
		worker_release(w->ops, arena);
		pthread_mutex_lock(&w->lock);
		w->idle_more = 1; /* the job may have left some */
		worker_deadline(&w->idle_at, w->idle_delay_ms);
		if (w->orphan != NULL)
			goto orphaned;
		w->state = W_DONE;
		pthread_cond_broadcast(&w->cv); /* for worker_settle() */
		while (write(w->efd, &one, sizeof(one)) == -1 && errno == EINTR)
			;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
orphaned:
	/* The module is gone: nobody to tell. */
	job = w->job;
	pthread_mutex_unlock(&w->lock);
	worker_locked_stop(w);
	w->orphan(job);
	worker_destroy(w);
	return NULL;
}

/* The eventfd fired on the loop: collect the finished job. */
static void worker_ready(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	void *job = NULL;

	(void)what;
	/* In a fork child, the parent's "done": read here, the parent's job
	 * would never end (worker_forked makes the child its own). */
	if (module_efd_take(w->ev, fd, w->efd_pid) == -1)
		return;
	pthread_mutex_lock(&w->lock);
	if (w->state == W_DONE) {
		job = w->job;
		w->job = NULL;
		w->state = W_IDLE;
	}
	pthread_mutex_unlock(&w->lock);
	if (job != NULL)
		w->done(w->arg, job);
}

struct worker *worker_new(struct event_base *base, const struct core_ops *ops,
    worker_done_fn done, void *arg)
{
	struct worker *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->done = done;
	w->arg = arg;
	w->ops = ops;
	w->nice_by = worker_nice_by();
	if ((w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1) {
		free(w);
		return NULL;
	}
	w->efd_pid = getpid();
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cv, NULL);
	pthread_cond_init(&w->lcv, NULL);
	w->ev = event_new(base, w->efd, EV_READ | EV_PERSIST, worker_ready, w);
	if (w->ev == NULL || event_add(w->ev, NULL) == -1) {
		if (w->ev != NULL)
			event_free(w->ev);
		worker_destroy(w);
		return NULL;
	}
	return w;
}

/* A thread of the module's: signals are the host's business, so every
 * one is blocked on it from its first instruction. 0 or an errno. */
int module_spawn(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int e;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(tid, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return e;
}

int module_efd_take(struct event *ev, int fd, pid_t owner)
{
	uint64_t n;

	if (owner != getpid()) {
		event_del(ev);
		return -1;
	}
	(void)!read(fd, &n, sizeof(n));
	return 0;
}

/* Start the worker's threads, from the loop's thread (jm4lw-dump takes
 * its priority). Without jm4lw-dump, the worker does all (niced). */
static int worker_start(struct worker *w)
{
	int e;

	if ((e = module_spawn(&w->thread, worker_main, w)) != 0) {
		errno = e;
		return -1;
	}
	w->started = 1;
	w->pid = getpid();
	w->lstate = L_IDLE;
	w->lstarted = module_spawn(&w->ltid, worker_locked_main, w) == 0;
	return 0;
}

/*
 * In a fork child, the worker's state as the parent left it: no thread,
 * and an eventfd shared with the parent, whose loop would as likely read
 * the child's "done" as the child's own loop (the child's jmfp
 * then hung, and every later one was refused as in progress). The child
 * takes a new eventfd of its own. 0, or -1 with errno.
 */
static int worker_forked(struct worker *w)
{
	struct event_base *base = event_get_base(w->ev);
	struct event *ev;
	int efd;

	if ((efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1)
		return -1;
	ev = event_new(base, efd, EV_READ | EV_PERSIST, worker_ready, w);
	if (ev == NULL || event_add(ev, NULL) == -1) {
		if (ev != NULL)
			event_free(ev);
		close(efd);
		errno = ENOMEM;
		return -1;
	}
	event_free(w->ev); /* the child's registration only */
	close(w->efd);     /* the child's descriptor only */
	w->ev = ev;
	w->efd = efd;
	w->efd_pid = getpid();
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cv, NULL);
	pthread_cond_init(&w->lcv, NULL);
	w->started = 0;
	w->lstarted = 0;
	w->lstate = L_IDLE;
	w->idle_running = 0;
	w->tid = w->ltid_os = 0;
	w->state = W_IDLE;
	w->pid = getpid();
	return 0;
}

int worker_submit(struct worker *w, worker_fn fn, void *job)
{
	int rv = 0;

	/* A fork child has no thread: it starts its own. */
	if (w->efd_pid != getpid() && worker_forked(w) == -1)
		return -1;
	pthread_mutex_lock(&w->lock);
	if (w->state != W_IDLE) {
		errno = EBUSY;
		rv = -1;
	} else if (!w->started && worker_start(w) == -1)
		rv = -1;
	else {
		w->fn = fn;
		w->job = job;
		w->state = W_QUEUED;
		pthread_cond_signal(&w->cv);
	}
	pthread_mutex_unlock(&w->lock);
	return rv;
}

int worker_settle(struct worker *w, int timeout_ms, worker_orphan_fn cancel,
    void **done)
{
	struct timespec ts;
	int rv = 0;

	*done = NULL;
	if (w == NULL || !w->started || w->pid != getpid())
		return 0;
	pthread_mutex_lock(&w->lock);
	if (timeout_ms > 0) {
		worker_deadline(&ts, timeout_ms);
		while ((w->state == W_QUEUED || w->state == W_RUNNING) &&
		    pthread_cond_timedwait(&w->cv, &w->lock, &ts) != ETIMEDOUT)
			;
	}
	if (w->state == W_DONE) { /* ended: the caller collects it */
		*done = w->job;
		w->job = NULL;
		w->state = W_IDLE;
	} else if (w->state != W_IDLE) {
		cancel(w->job); /* under the lock: the job cannot be freed */
		rv = -1;
	}
	pthread_mutex_unlock(&w->lock);
	return rv;
}

int worker_base_gone(const struct worker *w)
{
	/* Read from our own struct event, never from the base: the one
	 * thing event_base_free leaves that says it ran. */
	return w != NULL && w->ev != NULL &&
	    !(w->ev->ev_evcallback.evcb_flags & EVLIST_INSERTED);
}

void worker_forget_loop(struct worker *w)
{
	if (w != NULL)
		w->ev = NULL; /* its base is gone: event_free would touch it */
}

int worker_free(struct worker *w, worker_orphan_fn orphan)
{
	void *job = NULL;
	int had;

	if (w == NULL)
		return 0;
	if (w->ev != NULL)
		event_free(w->ev);
	if (!w->started || w->pid != getpid()) {
		/* No thread here (never started, or a fork child's copy). */
		had = w->state != W_IDLE;
		if (had)
			orphan(w->job);
		if (w->pid == getpid()) {
			worker_destroy(w);
			return had;
		}
		/* A fork child's copy of the parent's lock and cv: the
		 * parent's thread, absent here, may hold the one and wait on
		 * the other, and destroying a cv with a waiter waits for it
		 * (glibc), forever: the child's jm4lw_free hung. Only the
		 * descriptor and the memory are the child's. */
		close(w->efd);
		free(w);
		return had;
	}
	pthread_mutex_lock(&w->lock);
	if (w->state == W_QUEUED || w->state == W_RUNNING || w->idle_running) {
		/* Not ended: the thread finishes it (or the idle hook's
		 * piece, which works in the same block), frees all, exits. */
		if (w->job == NULL)
			w->job = w->idle_arg;
		w->orphan = orphan; /* a queued job still runs: it was
		                       admitted, so it counts as begun */
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->lock);
		pthread_detach(w->thread);
		return 1;
	}
	if (w->state == W_DONE)
		job = w->job;
	w->stop = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	worker_locked_stop(w);
	if (job != NULL)
		orphan(job);
	worker_destroy(w);
	return job != NULL;
}

void worker_idle_after(struct worker *w, int ms)
{
	pthread_mutex_lock(&w->lock);
	w->idle_delay_ms = ms;
	pthread_mutex_unlock(&w->lock);
}

void worker_set_idle(struct worker *w, worker_idle_fn fn, void *arg)
{
	pthread_mutex_lock(&w->lock);
	w->idle = fn;
	w->idle_arg = arg;
	w->idle_more = fn != NULL;
	pthread_mutex_unlock(&w->lock);
}

int worker_threads(struct worker *w, long *tid, long *ltid, int *nice)
{
	int rv;

	pthread_mutex_lock(&w->lock);
	rv = w->started && w->pid == getpid() && w->tid != 0 ? 0 : -1;
	*tid = w->tid;
	*ltid = w->lstarted == 1 ? w->ltid_os : 0;
	*nice = w->nice;
	pthread_mutex_unlock(&w->lock);
	return rv;
}

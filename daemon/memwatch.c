/*
 * dump_on_memory's watcher. A look is a handful of small files in
 * /sys/fs/cgroup and /proc (0.17 ms measured on the machine fallback,
 * the longest path), but a cgroup file system can stall under the very
 * memory pressure we watch for (its reads take the cgroup's locks, and a
 * process near its limit is in reclaim), so the looks run on a thread of
 * the module's, never on the host's loop. We poll at
 * memory_check_interval rather than use the kernel's events (cgroup v1's
 * cgroup.event_control thresholds, PSI triggers): a threshold of the
 * limit moves when the limit does, v1's events do not exist in v2 nor
 * PSI triggers in v1, and an unprivileged PSI trigger needs a 2 s window
 * on recent kernels; one look a second serves every source alike for
 * 0.02 % of a core. The thread only reads into its stack and signals an
 * eventfd; the state machine (core/memory.c) and the dump request run on
 * the loop. The loop never waits for the thread: a stop while a look is
 * under way (a read stalled in reclaim) leaves the thread to free its
 * own state when the read returns.
 */
#include <sys/eventfd.h>
#include <sys/resource.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "bytes.h"
#include "cause.h"
#include "config_struct.h"
#include "core.h"
#include "job.h"
#include "jobs.h"
#include "life.h"
#include "log.h"
#include "memory.h"
#include "memwatch.h"
#include "module.h"
#include "worker.h"

struct memwatch {
	struct jm4lw *m;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int stop;
	int reading;       /* the thread is in memory_read (in a syscall) */
	int orphan;        /* stopped mid-read: the thread frees all */
	int efd;           /* eventfd: a reading is in @c r */
	pid_t efd_pid;     /* who made it (a fork child must not read) */
	struct event *ev;  /* on the loop */
	unsigned interval; /* seconds */
	char root[256];    /* memory_cgroup_root */
	struct memory_reading r;
	struct job_waiter waiter; /* the dump's answer comes to us */
	char detail[256];         /* why the dump out was asked for */
	int refused_said;         /* a refusal logged since the last dump */
	char odd_said[256];       /* the file not read, last logged */
};

/* The RLIMIT_AS in force, UINT64_MAX for none. */
static uint64_t rlimit_as(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_AS, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

/* What the thread and the loop share, gone; by the loop after a join or
 * by the thread itself when it was stopped mid-read. */
static void memwatch_destroy(struct memwatch *w)
{
	if (w->efd != -1)
		close(w->efd);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* The watcher thread: read, hand over, sleep; until told to stop. It
 * allocates nothing (core/memory.c reads into its stack) but, when the
 * loop let it go mid-read, frees its state on the way out. */
static void *memwatch_main(void *arg)
{
	struct memwatch *w = arg;
	struct memory_where where = {.cgroup_root = w->root, .proc = "/proc"};
	struct memory_reading r;
	struct timespec until;
	uint64_t one = 1;
	int orphan;

	pthread_setname_np(pthread_self(), "jm4lw-memory");
	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		w->reading = 1;
		pthread_mutex_unlock(&w->lock);
		where.rlimit_as = rlimit_as();
		(void)memory_read(&where, &r);
		pthread_mutex_lock(&w->lock);
		w->reading = 0;
		if (w->stop)
			break;
		w->r = r;
		(void)!write(w->efd, &one, sizeof(one));
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)w->interval;
		while (!w->stop &&
		    pthread_cond_timedwait(&w->cv, &w->lock, &until) !=
		        ETIMEDOUT)
			;
	}
	orphan = w->orphan;
	pthread_mutex_unlock(&w->lock);
	if (orphan)
		memwatch_destroy(w);
	return NULL;
}

/* "90%" or "3.0 GiB": the threshold as the configuration says it. */
static const char *threshold_text(const struct memory_policy *p, char *buf,
    size_t len)
{
	if (p->pct != 0)
		snprintf(buf, len, "%u%%", p->pct);
	else
		fmt_bytes(buf, len, (unsigned long long)p->bytes);
	return buf;
}

/* Why a dump is asked for, for its log line: the figures that fired. */
static void memwatch_detail(struct memwatch *w, enum memory_trigger t,
    const struct memory_reading *r, const struct memory_policy *p)
{
	char use[32], lim[32], th[32];
	unsigned v = p->psi_full ? r->psi_full : r->psi_some;
	int n;

	if (t == MEMORY_PSI) {
		snprintf(w->detail, sizeof(w->detail),
		    "memory pressure: %s avg10 %u.%02u%% >= %u%%",
		    p->psi_full ? "full" : "some", v / 100, v % 100,
		    p->psi / 100);
		return;
	}
	n = snprintf(w->detail, sizeof(w->detail),
	    "%s: usage %s of %s limit, %.1f%% >= %s", memory_trigger_words[t],
	    fmt_bytes(use, sizeof(use), (unsigned long long)r->usage),
	    fmt_bytes(lim, sizeof(lim), (unsigned long long)r->limit),
	    r->limit != 0 ? 100.0 * (double)r->usage / (double)r->limit : 0.0,
	    threshold_text(p, th, sizeof(th)));
	if (r->have_events && n > 0 && (size_t)n < sizeof(w->detail))
		snprintf(w->detail + n, sizeof(w->detail) - (size_t)n,
		    "; memory.events high %llu max %llu oom_kill %llu",
		    (unsigned long long)r->events_high,
		    (unsigned long long)r->events_max,
		    (unsigned long long)r->events_oom_kill);
}

/* The memory dump's outcome, on the loop: kept, the trigger waits to
 * fall back; refused (busy, dump_min_interval, the disk guard), it is
 * asked again at the next reading while still above. */
static void memwatch_answer(struct jm4lw *m, void *arg, struct dump_result *r)
{
	struct memwatch *w = arg;
	int ok = r->status == DUMP_OK && r->path[0] != '\0';

	memory_dumped(&m->core.mem, ok);
	if (ok) { /* its line, with w->detail, is core_job_done's */
		m->core.st.dumps_scheduled++;
		w->refused_said = 0;
	} else if (!w->refused_said) {
		/* Once per episode: asked again every interval meanwhile. */
		w->refused_said = 1;
		log_msg(m, JM4LW_LOG_WARN,
		    "memory dump (%s): %s; trying again at each check while "
		    "above",
		    w->detail, r->reason);
	}
}

/* A reading came (the eventfd): decide on the loop, and ask for the dump
 * as the schedule does. */
static void memwatch_ready(evutil_socket_t fd, short what, void *arg)
{
	struct memwatch *w = arg;
	struct jm4lw *m = w->m;
	struct memory_reading r;
	enum memory_trigger t;
	int was;

	(void)what;
	if (module_efd_take(w->ev, fd, w->efd_pid) == -1)
		return; /* a fork child: the parent's reading */
	pthread_mutex_lock(&w->lock);
	r = w->r;
	pthread_mutex_unlock(&w->lock);
	/* Once per file, not each second: what the thread would not read. */
	if (r.refused[0] != '\0' && strcmp(r.refused, w->odd_said) != 0) {
		snprintf(w->odd_said, sizeof(w->odd_said), "%s", r.refused);
		log_msg(m, JM4LW_LOG_WARN,
		    "dump_on_memory: %s is not a regular file; not read "
		    "(check memory_cgroup_root)",
		    r.refused);
	}
	module_enter(m);
	was = module_unsampled_enter(m);
	t = memory_check(&m->core.mem, &m->core.pol.mem, &r);
	if (t != MEMORY_NONE) {
		memwatch_detail(w, t, &r, &m->core.pol.mem);
		module_job(m, &w->waiter,
		    &(struct job_req){.kind = &job_dump,
		        .why = "memory",
		        .answer = DUMP_ANSWER_PATH,
		        .cause = CAUSE_MEMORY,
		        .detail = w->detail});
	}
	module_unsampled_leave(m, was);
	module_leave(m);
}

/* Stop @p w's thread and free it; its dump out, if any, still answers
 * to the module (jobs_settle) before this runs. A thread waiting on its
 * condition variable is joined (it leaves at once); one in a read, which
 * a stalled cgroup file can hold for ever, is detached and frees @p w
 * itself when the read returns: the loop never waits on it. */
static void memwatch_stop(struct memwatch *w, int base_gone)
{
	pthread_t tid;
	int busy;

	if (w == NULL)
		return;
	/* Off the loop first: nothing of ours runs there after this. */
	if (w->ev != NULL && !base_gone)
		event_free(w->ev);
	w->ev = NULL;
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	busy = w->orphan = w->reading;
	tid = w->thread;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->lock);
	if (busy) { /* w may be gone already */
		pthread_detach(tid);
		return;
	}
	pthread_join(tid, NULL);
	memwatch_destroy(w);
}

/* A watcher for m's configuration, running; NULL (and errno) if not. */
static struct memwatch *memwatch_start(struct jm4lw *m)
{
	pthread_condattr_t ca;
	struct memwatch *w;
	int e;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->m = m;
	w->efd = -1;
	w->interval = m->cfg.memory_check_interval;
	snprintf(w->root, sizeof(w->root), "%s", m->cfg.memory_cgroup_root);
	w->waiter.answer = memwatch_answer;
	w->waiter.arg = w;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1)
		goto fail;
	w->efd_pid = getpid();
	if ((w->ev = event_new(m->base, w->efd, EV_READ | EV_PERSIST,
	         memwatch_ready, w)) == NULL ||
	    event_add(w->ev, NULL) == -1) {
		errno = ENOMEM;
		goto fail;
	}
	if ((e = module_spawn(&w->thread, memwatch_main, w)) != 0) {
		errno = e;
		goto fail;
	}
	return w;
fail:
	e = errno;
	if (w->ev != NULL)
		event_free(w->ev);
	memwatch_destroy(w);
	errno = e;
	return NULL;
}

void memwatch_apply(struct jm4lw *m)
{
	struct memwatch *w = m->memwatch;
	int on = memory_policy_on(&m->core.pol.mem);

	/* A new policy starts armed: a threshold lowered below the usage
	 * dumps at the next reading. A reload that left it alone does not
	 * re-arm (it would dump again while usage stays above). */
	if (!memory_policy_same(&m->core.mem.armed, &m->core.pol.mem)) {
		memory_rearm(&m->core.mem);
		m->core.mem.armed = m->core.pol.mem;
	}
	if (w != NULL && on && w->interval == m->cfg.memory_check_interval &&
	    strcmp(w->root, m->cfg.memory_cgroup_root) == 0)
		return;
	memwatch_free(m);
	if (!on) { /* its figures go with it; its counters stay */
		m->core.mem.have = 0;
		m->core.mem.threshold = 0;
		return;
	}
	if ((m->memwatch = memwatch_start(m)) == NULL)
		log_msg(m, JM4LW_LOG_WARN,
		    "dump_on_memory: cannot start the watcher thread (%s); "
		    "no memory dumps",
		    strerror(errno));
}

void memwatch_free(struct jm4lw *m)
{
	/* A dump still out ends without us: its waiter is freed here. */
	if (m->memwatch != NULL) {
		module_job_forget(m, m->memwatch);
		m->core.mem.asking = 0;
	}
	memwatch_stop(m->memwatch, m->base_gone);
	m->memwatch = NULL;
}

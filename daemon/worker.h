/*
 * worker — the module's threads for heavy work (prof.dump and what comes
 * with it), so the event loop, which may be the host's own, never waits on
 * it. One job at a time; the loop learns of its end through an eventfd.
 * The part of a job that holds jemalloc's profiling locks runs on a thread
 * at the host's priority (worker_locked), the rest niced (WORKER_NICE).
 */
#ifndef JM4LW_WORKER_H
#define JM4LW_WORKER_H

#include <sys/types.h>

#include <pthread.h>

#include "ops.h"

struct event;
struct event_base;
struct worker;

/* Runs on the worker thread. */
typedef void (*worker_fn)(void *job);
/* Runs on the loop once @p job is done. */
typedef void (*worker_done_fn)(void *arg, void *job);
/* Frees a job whose module went away before it ended. */
typedef void (*worker_orphan_fn)(void *job);
/* One piece of work nobody waits for, on the worker thread between jobs:
 * 1 if there may be more, 0 when there is none. */
typedef int (*worker_idle_fn)(void *arg);

/*
 * How far below the host's priority the worker runs its jobs. At +5 it
 * gets a quarter of a core it shares with a busy thread at the host's
 * priority, and the host three quarters. The sweep in BENCHMARKS.md
 * (section 13: 0, 5, 10, 19 and SCHED_IDLE, two busy loops on 2 cores,
 * thousands of stacks) chose it: every jmtp within 2.8 s at +5, up to
 * 6.7 s at +10 and 21 s at +19, and no cost to the host that the bench
 * could tell from its noise at any of them. The environment's
 * JM4LW_WORKER_NICE (0 to 19, or "idle") overrides it when the module
 * starts, to measure another choice.
 */
#define WORKER_NICE 5

/*
 * After a job a person asked for, work nobody waits for (the idle hook)
 * starts only once the worker has had no job for this long: the person's
 * next word (jmtp after jmfp) comes within a second or two, and must not
 * wait behind a leak index that takes seconds at the worker's priority on
 * a busy machine (the bench measured jmfp at 2.6 s right after another
 * jmfp, 0.3 s without). After a scheduled dump it starts at once: a
 * schedule as often as this delay would otherwise never leave room.
 */
#define WORKER_IDLE_DELAY_MS 2000

/* A worker whose jobs end on @p base's loop. The thread starts with the
 * first job. NULL if the loop's end of it cannot be made. */
struct worker *worker_new(struct event_base *base, const struct core_ops *ops,
    worker_done_fn done, void *arg);

/* Hand @p job over: 0, or -1 with errno (EBUSY: a job is out; else the
 * thread could not be started). */
int worker_submit(struct worker *w, worker_fn fn, void *job);

/*
 * Free the worker without waiting for a job: one that has not ended is
 * left to the thread, which frees it with @p orphan when it ends and then
 * exits; a finished job nobody collected is freed here with @p orphan.
 * Returns 1 if a job was out (and so @p orphan has it), 0 if none was.
 */
int worker_free(struct worker *w, worker_orphan_fn orphan);

/*
 * Before worker_free (jm4lw_free): wait up to @p timeout_ms for the job
 * out to end. Ended: 0 and *@p done is the job, collected (its eventfd
 * wake-up then finds nothing). Still running (or queued): @p cancel runs
 * on it, under the worker's lock so the job cannot be freed meanwhile,
 * and -1; worker_free then leaves it to the thread. No job: 0, NULL.
 */
int worker_settle(struct worker *w, int timeout_ms, worker_orphan_fn cancel,
    void **done);

/*
 * On the worker's thread, inside a job: run @p fn(@p arg) on jm4lw-dump, at
 * the host's priority, and wait for it (@p ctx is the worker). For the
 * part that holds jemalloc's profiling locks, kept short; where that thread
 * could not be started, @p fn runs here. A core job_locked runner.
 */
void worker_locked(void *ctx, void (*fn)(void *), void *arg);

/*
 * Between jobs, the worker thread calls @p fn(@p arg) while it returns 1,
 * a queued job always first. If the worker is freed while @p fn runs,
 * @p arg is what the orphan function frees (so it is the jobs' block).
 * NULL: none.
 */
void worker_set_idle(struct worker *w, worker_idle_fn fn, void *arg);

/* The idle hook waits @p ms after the next job ends (0: at once). */
void worker_idle_after(struct worker *w, int ms);

/* The worker's thread ids (jm4lw-worker, jm4lw-dump or 0) and the nice
 * value the first reached: 0, or -1 if no thread has started here. */
int worker_threads(struct worker *w, long *tid, long *ltid, int *nice);

/* The host freed the event_base under the worker's event (it is no
 * longer added, as event_base_free leaves it): 1, else 0. */
int worker_base_gone(const struct worker *w);

/* Drop the worker's event without touching its freed base (leaked). */
void worker_forget_loop(struct worker *w);

/* Start a thread of the module's with every signal blocked (signals are
 * the host's business). 0 or an errno, as pthread_create(). */
int module_spawn(pthread_t *tid, void *(*fn)(void *), void *arg);

/* The eventfd @p fd, made by process @p owner, fired on the loop (@p ev):
 * its count taken, 0. In a fork child the descriptor is its parent's
 * copy, whose count is the parent's wake-up: not read (the parent's
 * would be lost), @p ev taken off the loop, -1. */
int module_efd_take(struct event *ev, int fd, pid_t owner);

#endif

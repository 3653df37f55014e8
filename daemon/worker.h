/*
 * worker — the module's thread for heavy work (prof.dump and what comes
 * with it), so the event loop, which may be the host's own, never waits on
 * it. One job at a time; the loop learns of its end through an eventfd.
 */
#ifndef JM4LW_WORKER_H
#define JM4LW_WORKER_H

#include <pthread.h>

#include "core.h"

struct event_base;
struct worker;

/* Runs on the worker thread. */
typedef void (*worker_fn)(void *job);
/* Runs on the loop once @p job is done. */
typedef void (*worker_done_fn)(void *arg, void *job);
/* Frees a job whose module went away before it ended. */
typedef void (*worker_orphan_fn)(void *job);

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

/* The host freed the event_base under the worker's event (it is no
 * longer added, as event_base_free leaves it): 1, else 0. */
int worker_base_gone(const struct worker *w);

/* Drop the worker's event without touching its freed base (leaked). */
void worker_forget_loop(struct worker *w);

/* Start a thread of the module's with every signal blocked (signals are
 * the host's business). 0 or an errno, as pthread_create(). */
int module_spawn(pthread_t *tid, void *(*fn)(void *), void *arg);

#endif

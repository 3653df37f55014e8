/*
 * jobs — the job service (daemon/jobs.c) the faces and the schedule call
 * down into: admission on the loop, the hand-off to the worker, the
 * waiters a job answers, the shared bodies and queued questions of the
 * scrapers, and the switch that keeps the module's own allocations on a
 * host's thread unsampled. Its state is its own (struct jobs, opaque
 * here): the rest of the module asks through these calls.
 */
#ifndef JM4LW_JOBS_H
#define JM4LW_JOBS_H

struct core_ops;
struct dump_result;
struct dumper;
struct jm4lw;
struct job_req;
struct jobs;

/* Who waits for a job: answered on the loop when it ends (or at once,
 * refused). */
struct job_waiter {
	void (*answer)(struct jm4lw *m, void *arg, struct dump_result *r);
	void *arg;
};

/* The service's state with its job block, before anything asks it (the
 * word face takes the block's dumper at proto_init); NULL without
 * memory. Freed by jobs_free. */
struct jobs *jobs_new(void);
/* The dumper of the one dump job's block, which the words' jmfp path
 * and the schedule's dumps share. */
struct dumper *jobs_dumper(struct jobs *js);
/* The worker, ending its jobs on m->base; -1 if it cannot be made. */
int jobs_init(struct jm4lw *m, const struct core_ops *ops);

/* Around a callback on the loop that allocates for the module: the
 * host's thread samples none of it (enter returns what to restore). */
int module_unsampled_enter(struct jm4lw *m);
void module_unsampled_leave(struct jm4lw *m, int was);
/* The job @p req asks for (any kind: core's table says what it is), for
 * waiter @p w, or for the schedule (req->why) when @p w is NULL: admitted
 * here on the loop, run on the worker; a refusal is answered at once. */
void module_job(struct jm4lw *m, const struct job_waiter *w,
    const struct job_req *req);
/* @p arg, a waiter, is gone: its job ends unanswered. */
void module_job_forget(struct jm4lw *m, void *arg);

/* Is the service closing (jobs_settle ran): nothing more starts. */
int jobs_closing(const struct jm4lw *m);
/* The process is exiting without jm4lw_free(): the staging directory
 * goes now, and no dump is staged after. */
void jobs_unstage(struct jm4lw *m);
/* At jm4lw_free: the job out, if any, ends for its waiter, finished
 * within @p timeout_ms or else cancelled (staging directory removed, the
 * waiter answered with an error line). 0, or -1 if the worker still runs
 * (it frees the job and exits by itself). */
int jobs_settle(struct jm4lw *m, int timeout_ms);
/* The worker, the job block (a running job keeps its block) and the
 * service's state. */
void jobs_free(struct jm4lw *m);
/* Did the host free the event_base before the module? (The worker's
 * event, always added, was deleted by event_base_free.) */
int jobs_base_gone(const struct jm4lw *m);

#endif

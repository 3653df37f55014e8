/*
 * The worker threads (daemon/worker.c) under the real jemalloc and a real
 * libevent loop: jobs run off the loop and end on it, one at a time, on a
 * thread that samples none of its allocations, niced below the host,
 * asleep when idle; the part a job hands to worker_locked runs on a second
 * thread at the host's priority; the idle hook runs between
 * jobs, a job first; and freeing the worker mid-job (or mid-idle piece)
 * returns at once, the job being finished and freed by the thread. Run again
 * under valgrind and ThreadSanitizer by the suite.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/resource.h>
#include <sys/syscall.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jemalloc/jemalloc.h>

#include "ops.h"
#include "worker.h"

/* A job that waits at a gate until the test opens it, and notes where
 * and how it ran. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int open;     /* the test let it finish */
	int started;  /* it is running */
	int finished; /* it returned */
	int orphaned; /* freed by the thread, the module gone */
	int done;     /* its end was seen on the loop */
	int sampled;  /* thread.prof.active where it ran */
	int sampled_err;
	int policy;    /* its scheduling policy */
	int nice;      /* its nice value */
	char name[16]; /* its thread's name */
	pthread_t ran_on, done_on;
	struct event_base *base;
	long tid;
};

static struct gate G;

/* Reset the gate for a test. */
static int setup(void **state)
{
	(void)state;
	memset(&G, 0, sizeof(G));
	pthread_mutex_init(&G.mu, NULL);
	pthread_cond_init(&G.cv, NULL);
	G.base = event_base_new();
	assert_non_null(G.base);
	return 0;
}

/* Free what setup made. */
static int teardown(void **state)
{
	(void)state;
	event_base_free(G.base);
	pthread_cond_destroy(&G.cv);
	pthread_mutex_destroy(&G.mu);
	return 0;
}

/* The job: note the thread's attributes, then wait at the gate. */
static void gated_job(void *job)
{
	struct gate *g = job;
	struct sched_param sp;
	bool active = true;
	size_t len = sizeof(active);

	g->sampled_err = mallctl("thread.prof.active", &active, &len, NULL, 0);
	g->sampled = active;
	pthread_getschedparam(pthread_self(), &g->policy, &sp);
	errno = 0;
	g->nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	pthread_getname_np(pthread_self(), g->name, sizeof(g->name));
	g->tid = (long)syscall(SYS_gettid);
	pthread_mutex_lock(&g->mu);
	g->ran_on = pthread_self();
	g->started = 1;
	pthread_cond_broadcast(&g->cv);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->mu);
	g->finished = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

/* Wait until *@p flag is set (by the job's thread). */
static void wait_for(int *flag)
{
	pthread_mutex_lock(&G.mu);
	while (!*flag)
		pthread_cond_wait(&G.cv, &G.mu);
	pthread_mutex_unlock(&G.mu);
}

/* Let the job finish. */
static void open_gate(void)
{
	pthread_mutex_lock(&G.mu);
	G.open = 1;
	pthread_cond_broadcast(&G.cv);
	pthread_mutex_unlock(&G.mu);
}

/* The loop's end of a job. */
static void job_done(void *arg, void *job)
{
	struct gate *g = arg;

	assert_ptr_equal(job, g);
	g->done++;
	g->done_on = pthread_self();
	event_base_loopbreak(g->base);
}

/* A job whose module went away: the thread frees it. */
static void job_orphan(void *job)
{
	struct gate *g = job;

	pthread_mutex_lock(&g->mu);
	g->orphaned = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

/* A timer on the loop, fired while the job is still at its gate. */
static void tick(evutil_socket_t fd, short what, void *arg)
{
	int *ticks = arg;

	(void)fd;
	(void)what;
	(*ticks)++;
}

/* The voluntary context switches of thread @p tid of this process. */
static long switches(long tid)
{
	char path[64], line[256];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static void test_job_runs_off_the_loop(void **state)
{
	struct worker *w;
	struct event *ev;
	struct timeval zero = {0, 0};
	int ticks = 0;
	long before, after;

	(void)state;
	w = worker_new(G.base, core_jemalloc(), job_done, &G);
	assert_non_null(w);
	assert_int_equal(worker_submit(w, gated_job, &G), 0);
	/* submit returned with the job still at its gate: it runs on
	 * another thread, and the loop is free meanwhile. */
	wait_for(&G.started);
	assert_false(pthread_equal(G.ran_on, pthread_self()));
	ev = evtimer_new(G.base, tick, &ticks);
	evtimer_add(ev, &zero);
	event_base_loop(G.base, EVLOOP_ONCE);
	assert_int_equal(ticks, 1);
	assert_int_equal(G.done, 0);
	/* One job at a time. */
	errno = 0;
	assert_int_equal(worker_submit(w, gated_job, &G), -1);
	assert_int_equal(errno, EBUSY);
	open_gate();
	event_base_dispatch(G.base); /* until job_done breaks it */
	assert_int_equal(G.done, 1);
	assert_true(pthread_equal(G.done_on, pthread_self()));
	/* Idle again: a new job is taken, and the thread sleeps between. */
	for (after = switches(G.tid), before = -1; after != before;) {
		before = after;
		usleep(200 * 1000);
		after = switches(G.tid);
	}
	sleep(1);
	assert_int_equal(switches(G.tid), before);
	G.open = 1;
	assert_int_equal(worker_submit(w, gated_job, &G), 0);
	event_base_dispatch(G.base);
	assert_int_equal(G.done, 2);
	event_free(ev);
	assert_int_equal(worker_free(w, job_orphan), 0);
	assert_int_equal(G.orphaned, 0);
}

/* What worker_locked ran on. */
struct where {
	char name[16];
	int nice, policy, sampled;
	long tid;
};

static struct worker *W;
static struct where L;

/* Note the thread's attributes into @p arg. */
static void note_where(void *arg)
{
	struct where *x = arg;
	struct sched_param sp;
	bool active = true;
	size_t len = sizeof(active);

	x->sampled =
	    mallctl("thread.prof.active", &active, &len, NULL, 0) == 0 &&
	    active;
	pthread_getschedparam(pthread_self(), &x->policy, &sp);
	errno = 0;
	x->nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	pthread_getname_np(pthread_self(), x->name, sizeof(x->name));
	x->tid = (long)syscall(SYS_gettid);
}

/* A job that hands its locked part over, then runs as gated_job. */
static void locked_job(void *job)
{
	worker_locked(W, note_where, &L);
	gated_job(job);
}

static void test_threads_unsampled_niced_and_named(void **state)
{
	struct worker *w;
	bool opt = false;
	size_t len = sizeof(opt);
	int host, want, nice;
	long tid, ltid;

	(void)state;
	errno = 0;
	host = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	want = host + WORKER_NICE > 19 ? 19 : host + WORKER_NICE;
	W = w = worker_new(G.base, core_jemalloc(), job_done, &G);
	assert_non_null(w);
	assert_int_equal(worker_threads(w, &tid, &ltid, &nice), -1);
	G.open = 1;
	memset(&L, 0, sizeof(L));
	assert_int_equal(worker_submit(w, locked_job, &G), 0);
	event_base_dispatch(G.base);
	assert_string_equal(G.name, "jm4lw-worker");
	/* Niced, never SCHED_IDLE: it must get the CPU on a busy machine. */
	assert_int_equal(G.policy, SCHED_OTHER);
	assert_int_equal(G.nice, want);
	/* The locked part: another thread, at the host's priority. */
	assert_string_equal(L.name, "jm4lw-dump");
	assert_int_equal(L.policy, SCHED_OTHER);
	assert_int_equal(L.nice, host);
	assert_int_not_equal(L.tid, G.tid);
	assert_int_equal(worker_threads(w, &tid, &ltid, &nice), 0);
	assert_int_equal(tid, G.tid);
	assert_int_equal(ltid, L.tid);
	assert_int_equal(nice, want);
	/* Their allocations never show up in the profiles they write (the
	 * suite runs this with MALLOC_CONF=prof:true). */
	if (mallctl("opt.prof", &opt, &len, NULL, 0) == 0 && opt) {
		assert_int_equal(G.sampled_err, 0);
		assert_int_equal(G.sampled, 0);
		assert_int_equal(L.sampled, 0);
	}
	assert_int_equal(worker_free(w, job_orphan), 0);
}

/* The idle hook: counts its pieces, each waiting while I.hold, and has
 * IDLE_PIECES to do; notes how many jobs ran before each. */
#define IDLE_PIECES 3
static struct {
	int hold, pieces, ended, runs;
	int runs_at[IDLE_PIECES + 1];
	pthread_t on;
} I;

static int idle_piece(void *arg)
{
	assert_ptr_equal(arg, &G);
	pthread_mutex_lock(&G.mu);
	I.on = pthread_self();
	I.pieces++;
	I.runs_at[I.pieces] = I.runs;
	pthread_cond_broadcast(&G.cv);
	while (I.hold)
		pthread_cond_wait(&G.cv, &G.mu);
	I.ended++;
	pthread_cond_broadcast(&G.cv);
	pthread_mutex_unlock(&G.mu);
	return I.pieces < IDLE_PIECES;
}

/* gated_job, counted. */
static void counted_job(void *job)
{
	gated_job(job);
	pthread_mutex_lock(&G.mu);
	I.runs++;
	pthread_mutex_unlock(&G.mu);
}

/* Wait until the hook has begun @p n pieces. */
static void wait_pieces(int n)
{
	pthread_mutex_lock(&G.mu);
	while (I.pieces < n)
		pthread_cond_wait(&G.cv, &G.mu);
	pthread_mutex_unlock(&G.mu);
}

/* Let the hook's pieces go on. */
static void release_pieces(void)
{
	pthread_mutex_lock(&G.mu);
	I.hold = 0;
	pthread_cond_broadcast(&G.cv);
	pthread_mutex_unlock(&G.mu);
}

/* A worker with the idle hook: its first job ended on the loop, and the
 * hook's first piece began after it and is held (I.hold). */
static struct worker *worker_in_idle(void)
{
	struct worker *w;

	memset(&I, 0, sizeof(I));
	I.hold = 1;
	w = worker_new(G.base, core_jemalloc(), job_done, &G);
	assert_non_null(w);
	worker_set_idle(w, idle_piece, &G);
	G.open = 1;
	assert_int_equal(worker_submit(w, counted_job, &G), 0);
	event_base_dispatch(G.base); /* the job's end */
	wait_pieces(1);
	return w;
}

/* Between jobs the hook runs on the worker's thread until it has done
 * all; a job submitted meanwhile runs before its next piece. */
static void test_idle_hook_between_jobs(void **state)
{
	struct worker *w;

	(void)state;
	w = worker_in_idle();
	assert_int_equal(I.runs_at[1], 1);
	assert_true(pthread_equal(I.on, G.ran_on));
	assert_int_equal(worker_submit(w, counted_job, &G), 0);
	release_pieces();
	event_base_dispatch(G.base); /* the second job's end */
	pthread_mutex_lock(&G.mu);
	while (I.ended < IDLE_PIECES)
		pthread_cond_wait(&G.cv, &G.mu);
	pthread_mutex_unlock(&G.mu);
	/* The queued job ran before the second piece. */
	assert_int_equal(I.runs_at[2], 2);
	assert_int_equal(G.done, 2);
	/* The last piece may be returning still: then the thread has it. */
	if (worker_free(w, job_orphan) == 1)
		wait_for(&G.orphaned);
	usleep(100 * 1000);
	assert_int_equal(I.pieces, IDLE_PIECES); /* and no more */
}

/* Freed while an idle piece runs: prompt, and the thread frees the
 * hook's block (the jobs' block) with the orphan function. */
static void test_free_mid_idle_is_prompt(void **state)
{
	struct worker *w;

	(void)state;
	w = worker_in_idle();
	assert_int_equal(worker_free(w, job_orphan), 1);
	assert_int_equal(G.orphaned, 0);
	release_pieces();
	wait_for(&G.orphaned);
	assert_int_equal(I.pieces, 1); /* no piece after the free */
	usleep(100 * 1000);            /* the thread exits right after */
}

static void test_free_mid_job_is_prompt(void **state)
{
	struct worker *w;

	(void)state;
	w = worker_new(G.base, core_jemalloc(), job_done, &G);
	assert_non_null(w);
	assert_int_equal(worker_submit(w, gated_job, &G), 0);
	wait_for(&G.started);
	/* Returns with the job still running: the thread has it now. */
	assert_int_equal(worker_free(w, job_orphan), 1);
	assert_int_equal(G.finished, 0);
	assert_int_equal(G.orphaned, 0);
	open_gate();
	wait_for(&G.orphaned);
	assert_int_equal(G.finished, 1);
	assert_int_equal(G.done, 0); /* the loop is not told: it is gone */
	/* The thread exits by itself right after; give it the moment, so
	 * valgrind sees nothing of it at exit. */
	usleep(100 * 1000);
}

static void test_free_without_a_job(void **state)
{
	struct worker *w;

	(void)state;
	/* Never started: no thread to stop. */
	w = worker_new(G.base, core_jemalloc(), job_done, &G);
	assert_non_null(w);
	assert_int_equal(worker_free(w, job_orphan), 0);
	assert_int_equal(worker_free(NULL, job_orphan), 0);
	/* A job done but not yet collected by the loop is the freer's. */
	w = worker_new(G.base, core_jemalloc(), job_done, &G);
	G.open = 1;
	assert_int_equal(worker_submit(w, gated_job, &G), 0);
	wait_for(&G.finished);
	/* Done or still returning: either way the orphan hook has it,
	 * exactly once, and the loop is never told. */
	assert_int_equal(worker_free(w, job_orphan), 1);
	wait_for(&G.orphaned);
	assert_int_equal(G.done, 0);
}

/* worker_settle's cancel hook: counts its calls. */
static int cancels;
static void job_cancel(void *job)
{
	assert_ptr_equal(job, &G);
	cancels++;
}

/* jm4lw_free's settle: a running job past the timeout is cancelled
 * (the hook runs, -1) and left to the thread; one that ends within it
 * is handed back (0) for its answer, and the loop is not told twice. */
static void test_settle_cancels_or_collects(void **state)
{
	struct worker *w;
	void *done = &done;

	(void)state;
	cancels = 0;
	w = worker_new(G.base, core_jemalloc(), job_done, &G);
	assert_int_equal(worker_settle(w, 100, job_cancel, &done), 0);
	assert_null(done); /* no job: nothing to do */
	assert_int_equal(worker_submit(w, gated_job, &G), 0);
	wait_for(&G.started);
	assert_int_equal(worker_settle(w, 50, job_cancel, &done), -1);
	assert_null(done);
	assert_int_equal(cancels, 1);
	assert_int_equal(worker_free(w, job_orphan), 1);
	open_gate();
	wait_for(&G.orphaned);
	usleep(100 * 1000); /* the thread exits right after */

	G.open = 1;
	G.orphaned = G.finished = G.started = 0;
	w = worker_new(G.base, core_jemalloc(), job_done, &G);
	assert_int_equal(worker_submit(w, gated_job, &G), 0);
	assert_int_equal(worker_settle(w, 10000, job_cancel, &done), 0);
	assert_ptr_equal(done, &G);
	assert_int_equal(cancels, 1);
	assert_int_equal(worker_free(w, job_orphan), 0);
	assert_int_equal(G.orphaned, 0);
	assert_int_equal(G.done, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_job_runs_off_the_loop, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_threads_unsampled_niced_and_named,
	        setup, teardown),
	    cmocka_unit_test_setup_teardown(test_idle_hook_between_jobs, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_free_mid_idle_is_prompt, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_free_mid_job_is_prompt, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_free_without_a_job, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_settle_cancels_or_collects,
	        setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

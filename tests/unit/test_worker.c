/*
 * The worker thread (daemon/worker.c) under the real jemalloc and a real
 * libevent loop: jobs run off the loop and end on it, one at a time, on a
 * thread that samples none of its allocations, at the lowest priority,
 * asleep when idle; and freeing the worker mid-job returns at once, the
 * job being finished and freed by the thread. Run again under valgrind
 * and ThreadSanitizer by the suite.
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

#include "core.h"
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

static void test_thread_is_unsampled_idle_and_named(void **state)
{
	struct worker *w;
	bool opt = false;
	size_t len = sizeof(opt);

	(void)state;
	w = worker_new(G.base, core_jemalloc(), job_done, &G);
	assert_non_null(w);
	G.open = 1;
	assert_int_equal(worker_submit(w, gated_job, &G), 0);
	event_base_dispatch(G.base);
	assert_string_equal(G.name, "jm4lw-worker");
	/* SCHED_IDLE, or nice 19 where that is refused. */
	assert_true(G.policy == SCHED_IDLE || G.nice == 19);
	/* Its allocations never show up in the profiles it writes (the
	 * suite runs this with MALLOC_CONF=prof:true). */
	if (mallctl("opt.prof", &opt, &len, NULL, 0) == 0 && opt) {
		assert_int_equal(G.sampled_err, 0);
		assert_int_equal(G.sampled, 0);
	}
	assert_int_equal(worker_free(w, job_orphan), 0);
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

/* worker_settle's cancel hook: counts its calls (issue 20). */
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
	    cmocka_unit_test_setup_teardown(test_thread_is_unsampled_idle_and_named,
	        setup, teardown),
	    cmocka_unit_test_setup_teardown(test_free_mid_job_is_prompt, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_free_without_a_job, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(test_settle_cancels_or_collects,
	        setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

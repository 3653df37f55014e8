/*
 * The worker's dump path under ThreadSanitizer with prof:true: the
 * module's worker (daemon/worker.c) runs real jobs through core
 * (core/admit.c, stage.c, publish.c, answer.c and job.c: admission on
 * the loop, prof.dump, the completeness check, the rename, the leak
 * index, retention; a view's parse, symbolization and
 * rendering; the leak question over the kept dumps) on a real libevent
 * loop, while allocator threads sample through jemalloc's own API
 * (mallocx/dallocx: under a sanitizer, malloc is the sanitizer's) and the
 * loop reads the figures and the history ring. TSan fails the test on any
 * report (halt_on_error, exitcode) but one inside jemalloc (tsan.supp).
 *
 * jemalloc's own locks are TSan-opaque (it is not instrumented): what TSan
 * sees is ours. Its deadlock detector is on (detect_deadlocks=1 in
 * tests/CMakeLists.txt): it did not livelock on jemalloc's mutexes, which
 * it does not see; were it ever to, turn it off there and say so.
 *
 * Registered only in a -DJM4LW_SANITIZE=thread build (label tsan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jemalloc/jemalloc.h>

#include "config.h"
#include "config_struct.h"
#include "core.h"
#include "dumper.h"
#include "figures.h"
#include "history.h"
#include "job.h"
#include "ops.h"
#include "result.h"
#include "view.h"
#include "worker.h"

#define ALLOCATORS 3
#define ROUNDS 6

static struct {
	struct event_base *base;
	struct core core;
	struct jm4lw_config cfg;
	struct dumper dumper;
	struct job job;
	int done;
	int stop; /* __atomic: the allocators' signal to end */
	char dir[512];
} T;

/* Each allocator thread: a ring of blocks through mallocx, replaced with
 * random sizes, so every dump meets samples being added and freed. */
static void *allocator(void *arg)
{
	void *ring[64] = {NULL};
	unsigned seed = (unsigned)(uintptr_t)arg, i = 0;

	while (!__atomic_load_n(&T.stop, __ATOMIC_RELAXED)) {
		if (ring[i % 64] != NULL)
			dallocx(ring[i % 64], 0);
		ring[i % 64] = mallocx(64 + (size_t)(rand_r(&seed) % 65536), 0);
		i++;
	}
	for (i = 0; i < 64; i++)
		if (ring[i] != NULL)
			dallocx(ring[i], 0);
	return NULL;
}

/* The worker's end of a job. */
static void run_job(void *job)
{
	job_run(job);
}

/* Between jobs: the leak indexes, as the module does. */
static int idle_job(void *arg)
{
	return dumper_idle(arg);
}

/* The worker was freed mid idle piece: it lets the dumper go. */
static int orphaned;
static void orphan(void *job)
{
	(void)job;
	__atomic_store_n(&orphaned, 1, __ATOMIC_RELEASE);
}

/* On the loop: the job ended. */
static void job_done(void *arg, void *job)
{
	struct job *j = job;

	(void)arg;
	core_job_done(&T.core, j);
	T.done = 1;
	event_base_loopbreak(T.base);
}

/* Wait on the loop for the job, reading the figures meanwhile (the loop's
 * own work while the worker dumps). */
static void wait_done(void)
{
	struct figure_value v[FIGURES_MAX];

	while (!T.done) {
		figures_read(&T.core, v);
		core_history_sample(&T.core);
		event_base_loop(T.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		usleep(1000);
	}
	T.done = 0;
}

/* A dump job of @p view through the worker; its status. */
static enum dump_status dump(struct worker *w, enum dump_answer answer,
    enum dump_view view)
{
	struct dump_result r;

	assert_int_equal(core_job_admit(&T.core, &T.job, &T.dumper,
	                     &(struct job_req){.kind = &job_dump,
	                         .who = "test",
	                         .answer = answer,
	                         .view = view},
	                     &r),
	    0);
	/* prof.dump on jm4lw-dump, as the module hands it over. */
	T.job.locked.run = worker_locked;
	T.job.locked.ctx = w;
	assert_int_equal(worker_submit(w, run_job, &T.job), 0);
	wait_done();
	r = T.job.res;
	dump_result_release(&T.job.res);
	job_release(&T.job);
	return r.status;
}

/* The leak question through the worker; its status. */
static enum dump_status leaks(struct worker *w)
{
	struct dump_result r;

	assert_int_equal(core_job_admit(&T.core, &T.job, &T.dumper,
	                     &(struct job_req){.kind = &job_leaks, .json = 1},
	                     &r),
	    0);
	assert_int_equal(worker_submit(w, run_job, &T.job), 0);
	wait_done();
	r = T.job.res;
	dump_result_release(&T.job.res);
	job_release(&T.job);
	return r.status;
}

/* Dumps (kept, their index after, between jobs; a view), prof.dump on
 * the worker's second thread, and leak questions, while three threads
 * allocate: no report from TSan. */
static void test_dump_path(void **state)
{
	struct core_policy pol = {.reset_lg = -1};
	pthread_t t[ALLOCATORS];
	struct worker *w;
	bool on = true;
	int i;

	(void)state;
	assert_non_null(core_jemalloc());
	assert_int_equal(mallctl("prof.active", NULL, NULL, &on, sizeof(on)),
	    0);
	config_defaults(&T.cfg);
	snprintf(T.cfg.dump_dir, sizeof(T.cfg.dump_dir), "%s", T.dir);
	T.cfg.dump_min_interval = 0;
	T.cfg.dump_min_free = 0;
	T.cfg.dump_keep = 4;
	core_init(&T.core, core_jemalloc(), &T.cfg, &pol);
	assert_int_equal(history_setup(&T.core.hist, 16, 1), 0);
	assert_non_null(T.base = event_base_new());
	assert_non_null(
	    w = worker_new(T.base, core_jemalloc(), job_done, NULL));
	worker_set_idle(w, idle_job, &T.dumper);
	for (i = 0; i < ALLOCATORS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, allocator,
		                     (void *)(uintptr_t)(i + 1)),
		    0);
	for (i = 0; i < ROUNDS; i++) {
		assert_int_equal(dump(w, DUMP_ANSWER_PATH, DUMP_VIEW_TEXT),
		    DUMP_OK);
		assert_int_equal(dump(w, DUMP_ANSWER_VIEW, DUMP_VIEW_TEXT),
		    DUMP_OK);
	}
	assert_int_equal(leaks(w), DUMP_OK);
	__atomic_store_n(&T.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < ALLOCATORS; i++)
		pthread_join(t[i], NULL);
	/* As jobs_free: the idle work stops, then the worker goes; a piece
	 * still running keeps the dumper until it ends. */
	dumper_cancel(&T.dumper);
	if (worker_free(w, orphan) == 1)
		while (!__atomic_load_n(&orphaned, __ATOMIC_ACQUIRE))
			usleep(1000);
	dumper_fini(&T.dumper);
	history_free(&T.core.hist);
	event_base_free(T.base);
}

/* A private dump directory under TMPDIR. */
static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(T.dir, sizeof(T.dir), "%s/test_tsan_dump.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	return mkdtemp(T.dir) != NULL ? 0 : -1;
}

/* Remove it and what the test left in it. */
static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T.dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_dump_path, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

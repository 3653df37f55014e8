/*
 * thread: a program without libevent that embeds jm4lw in thread mode.
 *
 * The module runs on a thread of its own ("jm4lw"), serving the words on
 * the admin address plus one word of this program, `work`: how many
 * rounds of (pretend) work the main thread has done. Link it with
 * jemalloc as for counter.c. The module logs "listening on ADDR:PORT" to
 * stderr, the real port for port 0. Usage:
 */
/* clang-format off */
/*
 *	MALLOC_CONF=prof:true,prof_active:false ./thread 127.0.0.1:9181 &
 *	echo work | nc 127.0.0.1 9181
 */
/* clang-format on */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jm4lw.h>

static atomic_ulong rounds;

/* Our own word; it runs on the module's thread, hence the atomic. */
static int word_work(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	jm4lw_reply_printf(r, "work\t%lu\n", atomic_load(&rounds));
	return 0;
}

/* Runs before the module's thread starts: the place to add words. */
static void setup(struct jm4lw *m, void *arg)
{
	(void)arg;
	if (jm4lw_add_word(m, "work", word_work, NULL, 0) == -1)
		fprintf(stderr, "thread: %s\n", jm4lw_errmsg(m));
}

int main(int argc, char *argv[])
{
	struct timespec nap = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};
	sigset_t stop;

	if (argc != 2) {
		fprintf(stderr, "usage: thread ADMIN_ADDR:PORT\n");
		return 2;
	}
	/* Blocked here, before the module's thread exists, so that
	 * sigwait() below is the one place SIGINT/SIGTERM arrive. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);

	/* jm4lw: a configuration, the module on its thread, our word. */
	struct jm4lw_config *cfg = jm4lw_config_new();
	struct jm4lw_thread_opts opts = {JM4LW_THREAD_OPTS_INIT,
	    .setup = setup};
	char err[256] = "out of memory";
	struct jm4lw_thread *t = NULL;
	if (cfg != NULL &&
	    jm4lw_config_set(cfg, "listen", argv[1], err, sizeof(err)) == 0 &&
	    jm4lw_config_set(cfg, "http_listen", "", err, sizeof(err)) == 0)
		t = jm4lw_start_thread_ex(cfg, &opts, err, sizeof(err));
	jm4lw_config_free(cfg);
	if (t == NULL) {
		fprintf(stderr, "thread: %s\n", err);
		return 1;
	}

	/* The program's own work: allocate, count, until told to stop. */
	struct timespec zero = {0, 0};
	for (;;) {
		char *p = malloc(4096);
		if (p != NULL)
			memset(p, 0, 4096);
		free(p);
		atomic_fetch_add(&rounds, 1);
		nanosleep(&nap, NULL);
		if (sigtimedwait(&stop, NULL, &zero) > 0)
			break;
	}
	jm4lw_stop_thread(t); /* jm4lw */
	return 0;
}

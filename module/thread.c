/*
 * Thread mode: the module on a thread of its own with its own event_base,
 * for hosts that do not run libevent.
 *
 * Idle, the thread sleeps in epoll_wait() with no timeout: no timer exists
 * unless a connection is open, so it causes zero wake-ups. It is stopped
 * through an eventfd rather than event_base_loopbreak() from another
 * thread, so libevent's locking (evthread) is not needed.
 *
 * After fork() the child has no such thread. At fork the child's copies of
 * the listening sockets are closed, so only the parent answers the port;
 * jm4lw_stop_thread() in the child releases nothing (the event_base shares
 * its epoll instance with the parent, and touching it would unregister the
 * parent's sockets).
 */
#include <sys/eventfd.h>
#include <sys/queue.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "config_struct.h"
#include "jm4lw.h"
#include "listen.h"
#include "module.h"
#include "ops.h"
#include "server.h"
#include "worker.h"

struct jm4lw_thread {
	LIST_ENTRY(jm4lw_thread) entry;
	pthread_t tid;
	pid_t pid; /* the process that started it */
	struct event_base *base;
	struct jm4lw *m;
	struct event *stop_ev;
	int stop_fd;               /* eventfd: written to stop the loop */
	int lfd[MODULE_LISTENERS]; /* listening sockets, closed in a fork child */
	int nlfd;
	volatile int forked; /* set in a fork child */
	char err[256];       /* first error logged while starting */
	jm4lw_log_fn logfn;
	void *logarg;
};

/* Every running thread, so the fork handler can reach them. */
static LIST_HEAD(, jm4lw_thread) threads = LIST_HEAD_INITIALIZER(threads);
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* fork(): hold the list so it is consistent in the child. */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&threads_lock);
}

/* fork() in the parent: carry on. */
static void atfork_parent(void)
{
	pthread_mutex_unlock(&threads_lock);
}

/* fork() in the child: our threads are gone; let go of their ports. */
static void atfork_child(void)
{
	struct jm4lw_thread *t;
	int i;

	LIST_FOREACH(t, &threads, entry) {
		t->forked = 1;
		for (i = 0; i < t->nlfd; i++)
			close(t->lfd[i]);
		close(t->stop_fd);
	}
	pthread_mutex_unlock(&threads_lock);
}

/* Register the fork handlers once per process. */
static void atfork_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Log sink: the host's callback (or stderr); the first error is kept for
 * jm4lw_start_thread()'s err. */
static void thread_log(int level, const char *msg, void *arg)
{
	struct jm4lw_thread *t = arg;

	if (level == JM4LW_LOG_ERR && t->err[0] == '\0')
		snprintf(t->err, sizeof(t->err), "%s", msg);
	if (t->logfn != NULL)
		t->logfn(level, msg, t->logarg);
	else if (level <= JM4LW_LOG_INFO)
		fprintf(stderr, "jm4lw: %s\n", msg);
}

/* The eventfd fired: leave the loop. */
static void thread_stop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct jm4lw_thread *t = arg;
	uint64_t v;

	(void)what;
	(void)!read(fd, &v, sizeof(v));
	event_base_loopbreak(t->base);
}

/* The thread: name it, then run the loop until told to stop. */
static void *thread_main(void *arg)
{
	struct jm4lw_thread *t = arg;
	struct ctl_mib tpa = {.state = 0};

	pthread_setname_np(pthread_self(), "jm4lw");
	/* The loop is ours here: keep its allocations out of the profiles,
	 * and out of jemalloc's profiling locks while a dump holds them. */
	(void)ctl_thread_sampling(core_jemalloc(), &tpa, 0);
	event_base_dispatch(t->base);
	return NULL;
}

/* Free what jm4lw_start_thread() built, in the starting process. */
static void thread_free(struct jm4lw_thread *t)
{
	jm4lw_free(t->m);
	if (t->stop_ev != NULL)
		event_free(t->stop_ev);
	if (t->base != NULL)
		event_base_free(t->base);
	if (t->stop_fd != -1)
		close(t->stop_fd);
	free(t);
}

/* The caller's options, as many bytes as it was built with (its size
 * field), the fields it does not know zero: the struct can grow without
 * a new SONAME. -1 with a reason if the size is not set. */
static int thread_opts(const struct jm4lw_thread_opts *in,
    struct jm4lw_thread_opts *out, char *err, size_t errlen)
{
	const size_t v1 = offsetof(struct jm4lw_thread_opts, setup_arg) +
	    sizeof(in->setup_arg);

	if (in->size < v1) {
		snprintf(err, errlen,
		    "jm4lw_thread_opts: size is %zu, want "
		    "sizeof(struct jm4lw_thread_opts) (JM4LW_THREAD_OPTS_INIT)",
		    in->size);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, in, in->size < sizeof(*out) ? in->size : sizeof(*out));
	out->size = sizeof(*out);
	return 0;
}

/* jm4lw_start_thread_ex's work, on the caller's thread. */
static struct jm4lw_thread *thread_start(const struct jm4lw_config *cfg,
    const struct jm4lw_thread_opts *opts, char *err, size_t errlen)
{
	struct jm4lw_thread_opts o = {.size = 0};
	struct jm4lw_thread *t;
	int e;

	if (opts != NULL && thread_opts(opts, &o, err, errlen) == -1)
		return NULL;
	opts = opts != NULL ? &o : NULL;
	/* Before anything is built: a process that mallocs from another
	 * allocator gets no thread, only the line saying how to fix it. */
	if (core_allocator(err, errlen) == NULL)
		return NULL;
	pthread_once(&atfork_once, atfork_init);
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	t->stop_fd = -1;
	t->pid = getpid();
	if (opts != NULL) {
		t->logfn = opts->log;
		t->logarg = opts->log_arg;
	}
	if ((t->base = event_base_new()) == NULL) {
		snprintf(err, errlen, "cannot create an event base");
		goto fail;
	}
	if ((t->m = jm4lw_new(t->base, cfg, err, errlen)) == NULL)
		goto fail;
	jm4lw_set_log(t->m, thread_log, t);
	if (t->logfn == NULL) /* stderr: no debug lines to format */
		jm4lw_set_log_level(t->m, JM4LW_LOG_INFO);
	server_set_mode(t->m, "thread");
	t->m->own_loop = 1;
	if (opts != NULL && opts->setup != NULL)
		opts->setup(t->m, opts->setup_arg);
	if (jm4lw_listen(t->m, NULL) == -1) {
		snprintf(err, errlen, "%s",
		    t->err[0] ? t->err : "listen failed");
		goto fail;
	}
	/* HTTP that cannot bind (a second process on the default port) is
	 * logged; the words still serve. */
	(void)jm4lw_http_listen(t->m, NULL);
	t->nlfd = server_listen_fds(t->m, t->lfd, MODULE_LISTENERS);
	if ((t->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	t->stop_ev = event_new(t->base, t->stop_fd, EV_READ, thread_stop_cb, t);
	if (t->stop_ev == NULL || event_add(t->stop_ev, NULL) == -1) {
		snprintf(err, errlen, "cannot watch the stop eventfd");
		goto fail;
	}
	if ((e = module_spawn(&t->tid, thread_main, t)) != 0) {
		snprintf(err, errlen, "pthread_create: %s", strerror(e));
		goto fail;
	}
	pthread_mutex_lock(&threads_lock);
	LIST_INSERT_HEAD(&threads, t, entry);
	pthread_mutex_unlock(&threads_lock);
	return t;
fail:
	thread_free(t);
	return NULL;
}

/*
 * The module's thread, built on the caller's thread: a host's (an agent's
 * in the program's constructor), whose allocations jemalloc samples. The
 * loop, the listeners and evhttp are the module's own and live as long
 * as it does: none of them may stand in the host's profiles, so the
 * caller's sampling is off while they are made and back as it was after
 * (jm4lw_new does the same for an embedding host).
 */
JM4LW_API struct jm4lw_thread *
jm4lw_start_thread_ex(const struct jm4lw_config *cfg,
    const struct jm4lw_thread_opts *opts, char *err, size_t errlen)
{
	const struct core_ops *ops = core_jemalloc();
	struct ctl_mib mib = {.state = 0};
	struct jm4lw_thread *t;
	int was = ops != NULL ? ctl_thread_sampling(ops, &mib, 0) : -1;

	t = thread_start(cfg, opts, err, errlen);
	if (was == 1)
		(void)ctl_thread_sampling(ops, &mib, 1);
	return t;
}

/*
 * exit() with a module thread still running (an agent's host stopped by
 * SIGTERM, a host that never calls jm4lw_stop_thread): the staging
 * directory its dumps were made in would stay in dump_dir, one more per
 * run. It is removed here through the cancel jm4lw_free() uses; the
 * thread is not stopped or joined (it may be in a dump, and exit() must
 * not wait on it), and a dump it is making fails with the process.
 */
__attribute__((destructor)) static void thread_at_exit(void)
{
	struct jm4lw_thread *t;

	pthread_mutex_lock(&threads_lock);
	LIST_FOREACH(t, &threads, entry)
		if (!t->forked && t->pid == getpid() && t->m != NULL)
			server_unstage(t->m);
	pthread_mutex_unlock(&threads_lock);
}

JM4LW_API struct jm4lw_thread *
jm4lw_start_thread(const struct jm4lw_config *cfg, char *err, size_t errlen)
{
	return jm4lw_start_thread_ex(cfg, NULL, err, errlen);
}

JM4LW_API void jm4lw_stop_thread(struct jm4lw_thread *t)
{
	uint64_t one = 1;

	if (t == NULL)
		return;
	if (t->forked || t->pid != getpid())
		return; /* a fork child: see the comment at the top */
	pthread_mutex_lock(&threads_lock);
	LIST_REMOVE(t, entry);
	pthread_mutex_unlock(&threads_lock);
	while (write(t->stop_fd, &one, sizeof(one)) == -1 && errno == EINTR)
		;
	pthread_join(t->tid, NULL);
	thread_free(t);
}

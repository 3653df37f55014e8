/*
 * misuse_host: an embedding host that gets the lifecycle wrong on purpose,
 * one mistake per run, for tests/api/misuse.sh.
 * Every case must end in a clear error or the behaviour jm4lw.h
 * documents: never a crash, never a use-after-free (ASan, valgrind),
 * never a file left in the dump directory.
 *
 *	misuse_host CASE DUMP_DIR
 *
 * MISUSE_READ_TIMEOUT in the environment sets read_timeout. The host
 * binds the words and HTTP on 127.0.0.1:0, prints "words=PORT",
 * "http=PORT" and "ready", and serves until its case ends it or stdin
 * closes; it prints "exit" last. Cases:
 *	quit          word `quit` replies "bye" and calls jm4lw_free() in its
 *	              handler (the use-after-free in conn_log)
 *	logfree       the log callback frees the module on the line about a
 *	              peer's `ruok`
 *	dump_free     a `jmfp` starts on the worker; the next turn of the loop
 *	              frees the module (jm4lw_free) and the host exits at once
 *	dump_free_cb  the same, freed from the log callback, inside the
 *	              module's callback (deferred)
 *	view_free     dump_free with `jmtp` (a rendering after the dump)
 *	dump_wait     dump_free with jm4lw_free_wait(m, 60000): prints
 *	              "free_wait=RV"
 *	double_free   jm4lw_free() twice
 *	add_after     jm4lw_add_word() after jm4lw_free()
 *	base_first    event_base_free() before jm4lw_free()
 *	listen_null   jm4lw_listen(NULL, ...)
 *	listen_logfree  the log callback frees the module on the "listening
 *	              on" line, inside jm4lw_listen()
 *	serve         words `slow` (blocks 2 s in its handler), `big_` (writes
 *	              100 MB), `quit`, `hold` (prints "holding", blocks
 *	              until a line on stdin, then frees the module); serves
 *	              until stdin closes
 *
 * Its heap is a thousand distinct sampled stacks (mallocx: jemalloc's
 * own, even where a sanitizer or valgrind owns malloc), so that a dump
 * has something to write. They are never freed: a sampled free waits on
 * jemalloc's profiling locks, which a cancelled prof.dump still holds on
 * jm4lw-dump, a thread that a loaded machine may leave waiting for
 * seconds; the host is to exit at once (they stay reachable from held[]).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "jm4lw.h"

/* jemalloc's own allocation API (not replaced by ASan or valgrind). */
void *mallocx(size_t size, int flags);

#define STACK_BITS 10 /* 1024 distinct allocation stacks */

static struct event_base *base;
static struct jm4lw *m;
static const char *mode;
static void *held[1 << STACK_BITS];

static void grow_a(unsigned i, int level);
static void grow_b(unsigned i, int level);

/* Allocate object @p i below a call path spelt by its bits: each of the
 * 1 << STACK_BITS objects has a stack of its own. */
static __attribute__((noinline)) void grow_a(unsigned i, int level)
{
	if (level == STACK_BITS) {
		held[i] = mallocx(4096 + i % 64, 0);
		return;
	}
	if ((i >> level) & 1)
		grow_b(i, level + 1);
	else
		grow_a(i, level + 1);
	__asm__ volatile("" ::: "memory"); /* no tail call: keep the frame */
}

/* The other branch of grow_a(), a different return address. */
static __attribute__((noinline)) void grow_b(unsigned i, int level)
{
	if (level == STACK_BITS) {
		held[i] = mallocx(8192 + i % 64, 0);
		return;
	}
	if ((i >> level) & 1)
		grow_a(i, level + 1);
	else
		grow_b(i, level + 1);
	__asm__ volatile("" ::: "memory");
}

/* `quit`: answer, then free the module from inside its own callback. */
static int word_quit(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	jm4lw_reply_printf(r, "bye\n");
	jm4lw_free(m);
	m = NULL;
	event_base_loopbreak(base);
	return 0;
}

/* `hold`: block the loop until the test says "go" on stdin (it has sent
 * an HTTP request meanwhile, left unread), then free the module. */
static int word_hold(struct jm4lw_reply *r, void *arg)
{
	char buf[64];

	(void)arg;
	printf("holding\n");
	fflush(stdout);
	if (read(STDIN_FILENO, buf, sizeof(buf)) <= 0)
		jm4lw_reply_printf(r, "no go\n");
	jm4lw_reply_printf(r, "bye\n");
	jm4lw_free(m);
	m = NULL;
	event_base_loopbreak(base);
	return 0;
}

/* `slow`: a handler that blocks the host's loop for 2 s. */
static int word_slow(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	sleep(2);
	jm4lw_reply_printf(r, "slept\n");
	return 0;
}

/* `big_`: 100 MB of reply, over JM4LW_REPLY_MAX. */
static int word_big(struct jm4lw_reply *r, void *arg)
{
	static char chunk[64 * 1024];
	int i;

	(void)arg;
	memset(chunk, 'x', sizeof(chunk));
	for (i = 0; i < 100 * 16; i++)
		jm4lw_reply_write(r, chunk, sizeof(chunk));
	return 0;
}

/* The next turn of the loop after a dump started: free the module (or
 * wait for it) outside every callback of the module's, then stop. */
static void free_later(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (strcmp(mode, "dump_wait") == 0)
		printf("free_wait=%d\n", jm4lw_free_wait(m, 60000));
	else
		jm4lw_free(m);
	m = NULL;
	event_base_loopbreak(base);
}

/* The host's log: every line to stderr; some cases act on one. */
static void host_log(int level, const char *msg, void *arg)
{
	struct timeval now = {0, 0};

	(void)arg;
	fprintf(stderr, "log %d: %s\n", level, msg);
	if (m == NULL)
		return;
	if ((strcmp(mode, "logfree") == 0 && strstr(msg, "word ruok")) ||
	    (strcmp(mode, "listen_logfree") == 0 &&
	        strstr(msg, "listening on"))) {
		jm4lw_free(m); /* inside conn_read: deferred */
		m = NULL;
		event_base_loopbreak(base);
	} else if (strstr(msg, "-> worker") != NULL) {
		if (strcmp(mode, "dump_free_cb") == 0) {
			jm4lw_free(m);
			m = NULL;
			event_base_loopbreak(base);
		} else if (strcmp(mode, "dump_free") == 0 ||
		    strcmp(mode, "view_free") == 0 ||
		    strcmp(mode, "dump_wait") == 0)
			event_base_once(base, -1, EV_TIMEOUT, free_later, NULL,
			    &now);
	}
}

/* stdin closed: the test is done with us. */
static void on_stdin(evutil_socket_t fd, short what, void *arg)
{
	char buf[64];

	(void)what;
	(void)arg;
	if (read(fd, buf, sizeof(buf)) <= 0)
		event_base_loopbreak(base);
}

/* The mistakes that need no peer; 0 if the module said what it should. */
static int misuse_alone(void)
{
	if (strcmp(mode, "double_free") == 0) {
		jm4lw_free(m);
		jm4lw_free(m); /* stderr: not a live module */
		printf("freed twice\n");
	} else if (strcmp(mode, "add_after") == 0) {
		jm4lw_free(m);
		printf("add_word after free: %d\n",
		    jm4lw_add_word(m, "late", word_slow, NULL, 0));
	} else if (strcmp(mode, "base_first") == 0) {
		event_base_free(base);
		base = NULL;
		jm4lw_free(m); /* logs the order rule, touches no freed base */
		printf("freed after the base\n");
	} else if (strcmp(mode, "listen_logfree") == 0) {
		struct jm4lw *was = m;
		int r = jm4lw_listen(was, "127.0.0.1:0"); /* freed inside */
		printf("listen: %d, module %s\n", r,
		    m == NULL ? "freed by the log" : "still here");
		return 0;
	} else if (strcmp(mode, "listen_null") == 0) {
		printf("listen(NULL): %d\n", jm4lw_listen(NULL, "127.0.0.1:0"));
		jm4lw_free(m);
	} else
		return -1;
	m = NULL;
	return 0;
}

/* Print a face's port: "NAME=PORT". */
static void print_port(const char *name, const char *addr)
{
	const char *colon = strrchr(addr, ':');

	printf("%s=%s\n", name, colon != NULL ? colon + 1 : addr);
}

/* Set up as the case says, serve, and tear down in the right order
 * (unless the case already freed the module). */
int main(int argc, char **argv)
{
	struct jm4lw_config *cfg;
	struct event *in = NULL;
	char err[512], addr[128];
	unsigned i;

	if (argc != 3) {
		fprintf(stderr, "usage: misuse_host CASE DUMP_DIR\n");
		return 2;
	}
	mode = argv[1];
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < (1u << STACK_BITS); i++)
		grow_a(i, 0);
	if ((cfg = jm4lw_config_new()) == NULL)
		return 2;
	if (jm4lw_config_set(cfg, "dump_dir", argv[2], err, sizeof(err)) ==
	        -1 ||
	    jm4lw_config_set(cfg, "dump_min_interval", "0", err, sizeof(err)) ==
	        -1 ||
	    jm4lw_config_set(cfg, "dump_min_free", "0", err, sizeof(err)) ==
	        -1 ||
	    (getenv("MISUSE_READ_TIMEOUT") != NULL &&
	        jm4lw_config_set(cfg, "read_timeout",
	            getenv("MISUSE_READ_TIMEOUT"), err, sizeof(err)) == -1)) {
		fprintf(stderr, "misuse_host: %s\n", err);
		return 2;
	}
	if ((base = event_base_new()) == NULL ||
	    (m = jm4lw_new(base, cfg, err, sizeof(err))) == NULL) {
		fprintf(stderr, "misuse_host: %s\n", err);
		return 2;
	}
	jm4lw_config_free(cfg);
	jm4lw_set_log(m, host_log, NULL);
	if (misuse_alone() == 0)
		goto out;
	if (jm4lw_add_word(m, "quit", word_quit, NULL, 0) == -1 ||
	    jm4lw_add_word(m, "slow", word_slow, NULL, 0) == -1 ||
	    jm4lw_add_word(m, "big_", word_big, NULL, 0) == -1 ||
	    jm4lw_add_word(m, "hold", word_hold, NULL, 0) == -1 ||
	    jm4lw_listen(m, "127.0.0.1:0") == -1 ||
	    jm4lw_http_listen(m, "127.0.0.1:0") == -1 ||
	    jm4lw_bound_addr(m, 0, addr, sizeof(addr)) == -1)
		return 2;
	print_port("words", addr);
	if (jm4lw_http_bound_addr(m, 0, addr, sizeof(addr)) == -1)
		return 2;
	print_port("http", addr);
	in =
	    event_new(base, STDIN_FILENO, EV_READ | EV_PERSIST, on_stdin, NULL);
	if (in == NULL || event_add(in, NULL) == -1)
		return 2;
	printf("ready\n");
	fflush(stdout);
	event_base_dispatch(base);
	event_free(in);
out:
	jm4lw_free(m); /* NULL if the case freed it */
	if (base != NULL)
		event_base_free(base);
	printf("exit\n");
	fflush(stdout);
	return 0;
}

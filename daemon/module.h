/*
 * The module object, shared by the files of the libevent shell (daemon/)
 * and by the layers above it, which assemble it (module/: server.c,
 * thread.c, agent.c, jm4lwd.c) and serve HTTP on it (http/). Each daemon/
 * file declares what it defines in a header of its own, and calls only
 * the ones below it (scripts/loops.py checks):
 *
 *   timers.c   the dump schedule (dump_interval, dump_on_growth), the
 *              history's and the snapshots' timers (timers.h)
 *   memwatch.c dump_on_memory's watcher thread and its dumps (memwatch.h)
 *   jedumps.c  jemalloc's own dumps: prof.prefix into dump_dir, each
 *              one noticed (inotify) and adopted, prof_gdump's rate
 *              (jedumps_shell.h)
 *   listen.c   listeners: bind, accept, pause on EMFILE, the allow check
 *              (listen.h)
 *   conn.c     a connection's life: one word, its reply, the caps (conn.h)
 *   jobs.c     the job service: admission, hand-off to the worker, the
 *              waiter a job answers, the host thread's sampling switch;
 *              its state is its own (jobs.h)
 *   log.c      the log: the host's sink and level, lines about peers
 *              (log.h)
 *   life.c     the callback depth and the free a host asked for inside
 *              one (jm4lw_free from a word handler or the log callback)
 *              (life.h)
 *   worker.c   the worker thread (worker.h)
 *   config.c   the configuration (it reads proto's word table, data)
 *              (config.h); addr.c (addr.h) and lib's hostport.c (the one
 *              ADDR:PORT parser, which the client compiles too) below
 *              everything
 */
#ifndef JM4LW_MODULE_H
#define JM4LW_MODULE_H

#include <sys/queue.h>

#include "addr.h"
#include "config_struct.h"
#include "core.h"
#include "jm4lw.h"
#include "proto.h"

struct conn;
struct event;
struct evconnlistener;
struct http;
struct jobs;
struct jedumps;
struct memwatch;

/* Listeners a module has at most (listen's list, jm4lw_listen_fd). */
#define MODULE_LISTENERS JM4LW_LISTENERS_MAX

/* A words' listener (listen.c). */
struct listener {
	struct evconnlistener *lev;
	char addr[64];
};

struct jm4lw {
	struct event_base *base;
	/* cfg.listen and cfg.http_listen show what is bound (conf reads
	 * them); the lists asked for wait here until a listen call. */
	struct jm4lw_config cfg;
	char listen_req[sizeof(((struct jm4lw_config *)0)->listen)];
	char http_listen_req[sizeof(((struct jm4lw_config *)0)->http_listen)];
	struct core core;
	struct proto proto;
	struct listener ls[MODULE_LISTENERS];
	int nls;
	TAILQ_HEAD(, conn) conns;   /* oldest first */
	struct event *resume;       /* re-enables accept after a pause */
	struct event *next_turn;    /* ... after a burst, on the next turn */
	unsigned burst;             /* accepted this turn of the loop */
	struct event *dump_timer;   /* dump_interval, only when set */
	struct event *growth_timer; /* dump_on_growth, only when set */
	struct event *hist_timer;   /* history_interval, when history is on */
	struct event *snap_timer;   /* snapshot_interval, when snapshots on */
	struct memwatch *memwatch;  /* dump_on_memory's watcher, when on */
	struct jedumps *jedumps;    /* jemalloc's own dumps (jedumps.c) */
	unsigned nrejecting;        /* refusals still being sent */
	struct cidr acl[ACL_MAX];   /* allow_from, parsed */
	int nacl;
	struct jobs *jobs; /* the job service's own state (jobs.c) */
	jm4lw_log_fn logfn;
	void *logarg;
	int log_max;       /* levels above it are not even formatted */
	int own_loop;      /* thread mode: the loop thread samples nothing */
	int sampled;       /* jm4lwd: the module's allocations are the host's */
	struct http *http; /* the HTTP face, once bound (http/http.c) */
	/* jm4lw_errmsg(): why the last listen, add_word or reconfigure call
	 * failed, so a host learns it without a log callback. */
	char errmsg[256];
	/* The lifecycle (life.c): callbacks of the module on the
	 * stack; a jm4lw_free() asked for inside one waits for the last to
	 * return, then server.c's teardown runs through @destroy. */
	int depth;
	int free_requested;
	int free_timeout_ms; /* jm4lw_free_wait()'s, for the deferred free */
	int base_gone;       /* the host freed the event_base first */
	void (*destroy)(struct jm4lw *m);
	struct jm4lw *live_next; /* server.c's list of live modules */
};

#endif

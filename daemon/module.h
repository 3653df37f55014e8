/*
 * The module's insides, shared by the files of the libevent shell. Each
 * file calls only the ones below it (scripts/loops.py checks):
 *
 *   server.c   the assembler: jm4lw_new(), jm4lw_reconfigure(),
 *              jm4lw_free(), jm4lw_add_word(); builds and changes the
 *              parts below, and is called by none of them
 *   thread.c   thread mode (jm4lw_start_thread) over the API; agent.c and
 *              jm4lwd.c, the preload agent's and the daemon's main
 *   http/      the HTTP face (binds through listen.c's sockets)
 *   listen.c   listeners: bind, accept, pause on EMFILE, the allow check
 *   timers.c   the dump schedule (dump_interval, dump_on_growth)
 *   memwatch.c dump_on_memory's watcher thread and its dumps
 *   jedumps.c  jemalloc's own dumps: prof.prefix into dump_dir, each
 *              one noticed (inotify) and adopted, prof_gdump's rate
 *   conn.c     a connection's life: one word, its reply, the caps
 *   jobs.c     the job service: admission, hand-off to the worker, the
 *              waiter a job answers, the host thread's sampling switch
 *   log.c      the log: the host's sink and level, lines about peers
 *   life.c     the callback depth and the free a host asked for inside
 *              one (jm4lw_free from a word handler or the log callback)
 *   worker.c   the worker thread
 *   config.c   the configuration (it reads proto's word table, data);
 *              addr.c and hostport.c (the one ADDR:PORT parser, which the
 *              client compiles too) below everything
 */
#ifndef JM4LW_MODULE_H
#define JM4LW_MODULE_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <event2/util.h>

#include "addr.h"
#include "config_struct.h"
#include "core.h"
#include "dumper.h"
#include "jm4lw.h"
#include "job.h"
#include "ops.h"
#include "proto.h"
#include "result.h"

struct evbuffer;
struct evconnlistener;
struct worker;
struct http;

/* Listeners a module has at most (listen's list, jm4lw_listen_fd). */
#define MODULE_LISTENERS JM4LW_LISTENERS_MAX

enum conn_state {
	CONN_READ,   /* waiting for the word (read_timeout) */
	CONN_JOB,    /* the worker is computing the reply */
	CONN_WRITE,  /* sending the reply (write_timeout without progress) */
	CONN_LINGER, /* half-closed, draining until the peer's FIN */
};

struct conn {
	TAILQ_ENTRY(conn) entry;
	struct jm4lw *m;
	evutil_socket_t fd;
	struct event *rev;
	struct event *wev;
	struct evbuffer *out;
	enum conn_state state;
	char head[4];            /* the first bytes the peer sent */
	size_t have;             /* bytes of head[] filled */
	char word[4];            /* the word, once framed */
	size_t discarded;        /* bytes read and thrown away after the word */
	int peer_eof;            /* the peer shut down its side */
	int rejecting;           /* over the caps: sending the refusal */
	struct timeval deadline; /* for the word: accept + read_timeout */
	struct sockaddr_storage sa; /* the peer, formatted only for a log line */
	pid_t pid; /* the process that accepted it (conn_ours) */
};

struct listener {
	struct evconnlistener *lev;
	char addr[64];
};

/* A dump job and the state its dumps share, in one block the worker can
 * free on its own if the module goes first. */
struct module_job {
	struct job job; /* first: the worker hands back its address */
	struct dumper dumper;
};

/* Who waits for a job: answered on the loop when it ends (or at once,
 * refused). */
struct job_waiter {
	void (*answer)(struct jm4lw *m, void *arg, struct dump_result *r);
	void *arg;
};

/* Who wait for one job: a list that grows (scrapes share a job). */
struct job_waiters {
	struct job_waiter *w;
	unsigned n, cap;
};

/* Scrapes waiting for the worker behind another job: one group per
 * question (job_req_same), started in turn as the worker frees. */
#define JOBS_QUEUED_MAX 8
struct job_group {
	struct job_req req; /* its who, name and base point at the bufs */
	char who_buf[64];
	char name_buf[256], base_buf[256]; /* a kept dump's names */
	struct job_waiters ws;
};

/*
 * A difference over req.seconds (?seconds=N): its first dump as a job
 * (DUMP_VIEW_BASE, whose body is the dump), a timer on the loop for N s
 * while the worker serves others, then the second dump minus the first
 * as a job. Its own waiter stands in its jobs' lists; its requesters
 * wait here, and a request of the same question joins them.
 */
#define JOBS_DELTAS_MAX 4
struct job_delta {
	int used;
	int phase; /* 1 the first dump, 2 the wait, 3 the difference */
	struct job_req req;
	char who_buf[64];
	struct job_waiters ws;
	struct job_waiter self; /* in its jobs' waiters: jobs_delta_step */
	int base_fd;            /* the first dump, from phase 2 */
	struct event *timer;
	struct jm4lw *m;
};

/* A sharing kind's newest body per view (job_scrape's), for at most
 * dump_min_interval: the answer to the same request meanwhile. */
struct job_body {
	int have;
	int fd;
	size_t len;
	struct timespec at; /* CLOCK_MONOTONIC it was answered */
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
	struct worker *worker;
	struct module_job *mj;      /* the one dump job */
	struct job_waiters waiters; /* who wait for the job, if anyone */
	struct job_group queued[JOBS_QUEUED_MAX]; /* sharing jobs to come */
	unsigned nqueued;
	struct job_body bodies[DUMP_VIEW_COUNT];  /* newest shared bodies */
	struct job_delta deltas[JOBS_DELTAS_MAX]; /* ?seconds=N under way */
	struct event *bodies_timer; /* drops them at dump_min_interval */
	int jobs_closing;           /* jobs_settle: start nothing more */
	const char *job_why;        /* or the schedule that asked for it */
	struct dump_result refusal; /* a dump refused on the loop */
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

/* listen.c: @p bind for each address of the comma list @p list; -1 if
 * one failed (each failure logged by @p bind). */
int listen_each(struct jm4lw *m, const char *list,
    int (*bind)(struct jm4lw *m, const char *addr));
/* listen.c: a listening socket on @p addr, or -1 logged under @p key. */
int listen_socket(struct jm4lw *m, const char *key, const char *addr);

/* log.c */
/* The default sink (stderr, INFO) and core's lines through it; after
 * core_init(). */
void log_init(struct jm4lw *m);
void log_msg(struct jm4lw *m, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void log_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void conn_log(struct conn *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A public call failed: the line goes to jm4lw_errmsg() and the log. */
void module_fail(struct jm4lw *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A public call starts: jm4lw_errmsg() forgets the previous one's line. */
void module_clear_error(struct jm4lw *m);

/* life.c: around every callback from the loop into the module, and every
 * API call that can call the host back (a word handler, the log): a free
 * asked for meanwhile happens at the last leave. */
void module_enter(struct jm4lw *m);
void module_leave(struct jm4lw *m);

/* jobs.c */
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
/* The worker, ending its jobs on m->base; -1 if it cannot be made. */
int jobs_init(struct jm4lw *m, const struct core_ops *ops);
/* At jm4lw_free: the job out, if any, ends for its waiter, finished
 * within @p timeout_ms or else cancelled (staging directory removed, the
 * waiter answered with an error line). 0, or -1 if the worker still runs
 * (it frees the job and exits by itself). */
int jobs_settle(struct jm4lw *m, int timeout_ms);
/* The worker and the job block (a running job keeps its block). */
void jobs_free(struct jm4lw *m);
/* Did the host free the event_base before the module? (The worker's
 * event, always added, was deleted by event_base_free.) */
int jobs_base_gone(const struct jm4lw *m);

/* conn.c */
void conn_accept(struct jm4lw *m, evutil_socket_t fd, const struct sockaddr *sa,
    int salen);
void conn_close(struct conn *c);
/* jm4lw_free: send what the socket takes now, then close with a FIN. */
void conn_finish(struct conn *c);
/* Send @p b's bytes from offset @p off (up to 16 pieces at once) on
 * @p fd with sendmsg, MSG_NOSIGNAL | MSG_DONTWAIT, leaving @p b as it is:
 * what sendmsg returns (-1 and errno; 0 when nothing is left from @p off).
 * The words' replies and the HTTP face's last flush both send with it. */
ssize_t sock_send_buffer(evutil_socket_t fd, struct evbuffer *b, size_t off);

/* listen.c */
int listen_init(struct jm4lw *m);
/* Warn about allow entries that name no word this module serves. */
void listen_check_allow(struct jm4lw *m);
void listen_free(struct jm4lw *m);
/* The listening descriptors (thread mode closes them in a fork child). */
int server_listen_fds(const struct jm4lw *m, int *fds, int max);

/* timers.c: schedule timers built first, put in force last. */
struct timers {
	struct event *dump, *growth; /* new ones, or NULL */
	int keep_dump, keep_growth;  /* the running one stays */
	struct event *hist;          /* history_interval's */
	int keep_hist;
	struct event *snap; /* snapshot_interval's */
	int keep_snap;
	unsigned hist_points, hist_interval;
};
int timers_build(struct jm4lw *m, const struct jm4lw_config *cfg,
    const struct core_policy *pol, const struct jm4lw_config *old,
    struct timers *t);
void timers_commit(struct jm4lw *m, struct timers *t);
void timers_discard(struct timers *t);
void timers_free(struct jm4lw *m);

/* jedumps.c: jemalloc's own dumps into dump_dir, at start (@p old NULL)
 * and at each reload; -1 only without memory. Then freed. */
int jedumps_apply(struct jm4lw *m, const struct jm4lw_config *old);
void jedumps_free(struct jm4lw *m);
/* prof.gdump on at the loop's first turn, once its rate limit can act on
 * the first dump (the agent's, for a prof_gdump jm4lw-run held off). */
void jedumps_gdump_handover(struct jm4lw *m);

/* server.c, for thread.c and agent.c */
void server_set_mode(struct jm4lw *m, const char *mode);

/* jm4lwd: the process is the module, and profiles itself; its loop's
 * allocations stay sampled (see module_unsampled_enter). */
void server_keep_sampling(struct jm4lw *m);

/* thread.c, at exit(): remove the module's staging directory now. */
void server_unstage(struct jm4lw *m);

#endif

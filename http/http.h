/*
 * The HTTP face: libevent's evhttp on listeners of the module's own loop,
 * in front of the same core as the words. http.c owns the listeners, the
 * limits and the checks every request passes (allow_from, caps, Host,
 * CSRF); routes.c the paths; reply.c what a route answers with (replies,
 * errors, jobs), below both; metrics.c Prometheus' text format.
 */
#ifndef JM4LW_HTTP_H
#define JM4LW_HTTP_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "addr.h"
#include "core.h"
#include "out.h"
#include "doctor.h"
#include "job.h"
#include "reason.h"
#include "view.h"

struct jm4lw;
struct evconnlistener;
struct bufferevent;
struct event;

#define HTTP_LISTENERS JM4LW_LISTENERS_MAX

/* The face's state, shared by the server (http.c) and the replies
 * (reply.c), which track the requests waiting on the worker. */
struct http_listener {
	struct evhttp_bound_socket *bs;
	struct evconnlistener *lev;
	struct event *resume; /* ends an accept pause */
	char addr[64];
	struct http *h;
};

/* An accepted HTTP connection, from evhttp's bufferevent callback at
 * accept until evhttp has freed it: the count max_connections caps. */
struct http_sock {
	TAILQ_ENTRY(http_sock) entry;
	struct bufferevent *bev; /* evhttp's, made by us; one reference ours */
	unsigned requests;       /* requests seen: 0 is idle since accept */
	int refuse;              /* ended for the cap, counted out */
};

/* A connection that has sent a request: its requests and its job. */
struct http_conn {
	TAILQ_ENTRY(http_conn) entry;
	struct evhttp_connection *evcon;
	struct http *h;
	unsigned requests;
	struct http_pending *pending; /* a request waiting on the worker */
};

/* A request waiting on the worker: the job's waiter, on the face's list
 * until the job ends or the face is freed. */
struct http_pending {
	TAILQ_ENTRY(http_pending) entry;
	struct http *h;
	struct evhttp_request *req; /* NULL once its connection is gone */
	struct http_conn *hc;
	const char *ctype;
	int word; /* /4lw/: the word's reply around the body */
};

struct http {
	struct jm4lw *m;
	struct evhttp *eh;
	struct http_listener ls[HTTP_LISTENERS];
	int nls;
	TAILQ_HEAD(, http_conn) conns;
	TAILQ_HEAD(, http_sock) socks; /* every accepted connection */
	unsigned nsocks;               /* of them, not refused */
	struct event *refuse;          /* ends the refused, once set up */
	struct event *sweep;           /* forgets the closed, each second */
	/* Every request waiting on a job: the running one's, and a refusal's
	 * while it is answered; http_free forgets each before evhttp_free. */
	TAILQ_HEAD(, http_pending) pending;
	struct http *next; /* every module's, for listener errors */
	pid_t pid;         /* the process whose connections these are */
};

/* --- routes.c: the paths ---------------------------------------------- */

/* What a route answers with. */
struct http_ctx {
	struct jm4lw *m;
	struct evhttp_request *req;
	const char *path;               /* the request's path */
	struct evkeyvalq *query;        /* its parsed query */
	int post;                       /* POST (else GET or HEAD) */
	int flags;                      /* the route's HTTP_* flags */
	const struct http_route *route; /* the row being served */
};

/* A route's handler: reply to ctx->req now, or hand a job over whose
 * end replies (http_job, for the route's job kind). */
typedef void (*http_route_fn)(struct http_ctx *ctx);

/* Route flags. */
#define HTTP_GET 0x1
#define HTTP_POST 0x2
#define HTTP_MUTATES 0x4 /* POST only, and the anti-CSRF header */
#define HTTP_PREFIX 0x8  /* path is a prefix (/4lw/) */

struct http_route {
	const char *path;
	int flags;
	http_route_fn fn;
	const char *help; /* for the index pages */
	const char *word; /* whose entry in the allow list governs it (NULL:
	                     always served; the route checks it itself) */
	const struct job_kind *job; /* the job it hands the worker
	                               (http_job, &job_dump), or NULL:
	                               answered on the spot */
	enum dump_view view;        /* the view a scrape path answers with */
};

extern const struct http_route http_routes[];

/* Route @p r's help as the index shows it, its list of formats drawn from
 * views[] (in @p buf when it has one); NULL: a route without help. */
const char *http_route_help(const struct http_route *r, char *buf, size_t len);

/* seconds=@p s of /debug/pprof/heap and /allocs (NULL: not given, 0):
 * 1 up to below @p write_timeout, else -1 with Go's 400 line in @p why,
 * followed by the limit and its key. Pure, for the fuzzer. */
int http_seconds_arg(const char *s, unsigned write_timeout, unsigned *out,
    char *why, size_t whylen);

/* /jemalloc/profile's query: the view and whether to compare with the
 * last dump, or -1 with a one-line reason in @p why. Pure, for the
 * fuzzer. */
int http_profile_args(struct evkeyvalq *query, enum dump_view *view, int *base,
    char *why, size_t len);

/* --- http.c: the server --------------------------------------------- */

/* Close every HTTP listener and connection. */
void http_free(struct jm4lw *m);

/* A configuration was taken: the limits follow it. */
void http_reconfigure(struct jm4lw *m);

/* The route for @p path, or NULL (not static: the fuzzer calls it). */
const struct http_route *http_route_of(const char *path);

/* Is @p host (a Host header, port and all) an IP literal, localhost or
 * one of the comma list @p allowed? (Not static: the fuzzer calls it.) */
int http_host_allowed(const char *allowed, const char *host);

/* Why a request with target @p uri and headers @p in is ambiguous (two
 * Hosts, Origins, X-Jm4lws or Sec-Fetch-Sites, a blank before a header's
 * ':', absolute-form, two lengths), or NULL. (Not static: the fuzzer
 * calls it.) */
const char *http_ambiguity(const char *uri, const struct evkeyvalq *in);

/* The longest path a route can have, and then some: a longer one is 404. */
#define HTTP_PATH_MAX 128

/* The path of request target @p target as sent, up to its '?', into @p
 * buf (HTTP_PATH_MAX bytes); its query (after the '?') or NULL in @p
 * query. -1 if the path is longer than a route's can be. Nothing is
 * decoded or normalised: a path is a route's exactly or 404. (Not
 * static: the fuzzer calls it.) */
int http_target_split(const char *target, char *buf, const char **query);

/* Parse query string @p q into @p out (evhttp's parser) and check it: no
 * NUL (%00), every name and value of A-Z a-z 0-9 . _ - only, no name
 * twice. 0, or -1 with one line in @p why (a 400). (Not static: the
 * fuzzer calls it.) */
int http_query_parse(const char *q, struct evkeyvalq *out, char *why,
    size_t len);

/* --- reply.c: what a route answers with, below both -------------------- */

/* Reply @p code with @p body (taken) of type @p ctype. */
void http_reply(struct evhttp_request *req, int code, const char *ctype,
    struct evbuffer *body);

/* Reply @p code with one line "error: <reason>" (text/plain). */
void http_error(struct evhttp_request *req, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The HTTP status that says @p why a call was refused or failed. */
int http_status_of(enum core_reason why);

/* The Content-Type @p req's answer is sent with: its view's, or for an
 * answer that is no view text or JSON (http/reply.c). */
const char *http_job_ctype(const struct job_req *req);

/* Hand the job @p req asks for (any kind) to the module for this request,
 * answered with @p ctype. With @p word, the reply is the word's (a view's
 * body, then what the word says after it). */
void http_job(struct http_ctx *ctx, const struct job_req *req,
    const char *ctype, int word);

/* Is the word @p w allowed (the allow list governs both faces)? 1, or 0
 * with a 403 sent that names the word. */
int http_word_allowed(struct http_ctx *ctx, const char *w);
/* Does the allow list serve word @p w? No reply, no count: for a part of
 * a reply that @p w reveals (the doctor's families on /metrics). */
int http_word_serves(const struct http_ctx *ctx, const char *w);

/* Why this request may not change state (NULL: it may). */
const char *http_csrf_refusal(struct evhttp_request *req);

/* A struct out onto @p b: the HTTP face's adapter of lib's output
 * interface. */
struct out http_out_of(struct evbuffer *b);

/* --- history.c -------------------------------------------------------- */

/* /jemalloc/history: the figures' ring as JSON (?since=T). */
void http_route_history(struct http_ctx *ctx);
/* /jemalloc/leaks: the leak suspects (?format=json|text), on the
 * worker. */
void http_route_leaks(struct http_ctx *ctx);
void http_route_recent(struct http_ctx *ctx);
void http_route_frag(struct http_ctx *ctx);

/* --- metrics.c ------------------------------------------------------- */

/* Prometheus' text format 0.0.4 of the figures (what mntr shows), and
 * the doctor's families when @p doctor (jmdr is allowed). */
void http_metrics(struct core *c, struct evbuffer *out, int doctor);

#endif

/*
 * The HTTP face's shell: evhttp on listeners we bind, the limits
 * (header and body size, timeouts, keep-alive cap), and what every
 * request passes before its route runs:
 *   - allow_from, as for the words (403);
 *   - the connection cap, from accept (http_new_bev): max_connections
 *     HTTP connections, apart from the words'; at the cap the oldest
 *     that has sent no request is closed for the newcomer, else the
 *     newcomer; one that never sends a request goes at read_timeout;
 *   - a request two readers could take differently (two Hosts, a blank
 *     before a header's ':', absolute-form, two lengths): 400;
 *   - the Host header: an IP literal, localhost or a name listed in
 *     http_allowed_hosts, else 403 (a page the operator's browser loads
 *     from elsewhere cannot reach us through DNS rebinding);
 *   - for a route that changes state: POST, the X-Jm4lw header that no
 *     cross-site form can send, and no foreign Origin or Sec-Fetch-Site
 *     (403).
 * Replies never carry Access-Control-Allow-Origin: another origin's
 * script reads nothing.
 *
 * Why evhttp: it is libevent's, already linked, and parses HTTP/1.x with
 * its own limits; no parser of ours. Its 2.1 API cannot hand it a socket
 * we accepted: the cap counts from the bufferevent it asks us for at
 * accept, and descriptor exhaustion (EMFILE) pauses its listeners as
 * ours. Its own error pages (a request it cannot parse, a body over the
 * limit) are still its HTML: 2.1 answers them before any callback.
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "conn.h"
#include "hostport.h"
#include "http.h"
#include "jobs.h"
#include "life.h"
#include "listen.h"
#include "log.h"
#include "module.h"
#include "util.h"

#define HTTP_PAUSE_SECONDS 1 /* accept back-off after EMFILE */
#define HTTP_HEADER_SLACK 4  /* evhttp's header limit: ours times this */

/*
 * evhttp owns its listeners' callback argument, so an accept error comes
 * to us with evhttp's pointer, not ours: the modules' HTTP states are
 * kept in a list to find the listener by (a few modules at most).
 */
static pthread_mutex_t http_all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct http *http_all;

/* Find @p lev's listener among every module's. */
static struct http_listener *http_listener_of(struct evconnlistener *lev)
{
	struct http_listener *l = NULL;
	struct http *h;
	int i;

	pthread_mutex_lock(&http_all_lock);
	for (h = http_all; h != NULL && l == NULL; h = h->next)
		for (i = 0; i < h->nls; i++)
			if (h->ls[i].lev == lev)
				l = &h->ls[i];
	pthread_mutex_unlock(&http_all_lock);
	return l;
}

/* The accept pause is over. */
static void http_resume(evutil_socket_t fd, short what, void *arg)
{
	struct http_listener *l = arg;

	(void)fd;
	(void)what;
	evconnlistener_enable(l->lev);
}

/* accept() failed: out of descriptors, pause this listener rather than
 * spin on a backlog it cannot take, as the words' listeners do. */
static void http_listen_error(struct evconnlistener *lev, void *arg)
{
	struct timeval tv = {.tv_sec = HTTP_PAUSE_SECONDS};
	struct http_listener *l = http_listener_of(lev);
	int e = EVUTIL_SOCKET_ERROR();

	struct jm4lw *m;

	(void)arg;
	if (l == NULL ||
	    !(e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM))
		return;
	evconnlistener_disable(lev);
	event_add(l->resume, &tv);
	m = l->h->m;
	module_enter(m); /* the log may free the module: see life.c */
	log_msg(m, JM4LW_LOG_WARN, "http accept: %s; pausing accept for %d s",
	    strerror(e), HTTP_PAUSE_SECONDS);
	module_leave(m);
}

int http_host_allowed(const char *allowed, const char *host)
{
	struct in6_addr a6;
	struct in_addr a4;
	struct hostport hp;
	unsigned long port;
	char name[256];
	const char *s = allowed, *item;
	size_t n;

	/* [v6]:port, v4:port, name:port; the port digits only, so that no
	 * "127.0.0.1:x.evil" or "[::1]evil" passes for an IP literal. */
	if (hostport_split(host, strlen(host), &hp) != HOSTPORT_OK ||
	    hp.hlen >= sizeof(name) ||
	    (hp.port != NULL && !hostport_digits(hp.port, hp.plen, &port)))
		return 0;
	memcpy(name, hp.host, hp.hlen);
	name[hp.hlen] = '\0';
	if (hp.bracketed)
		return inet_pton(AF_INET6, name, &a6) == 1;
	if (inet_pton(AF_INET, name, &a4) == 1 ||
	    strcasecmp(name, "localhost") == 0)
		return 1;
	while (s != NULL) {
		item = list_next(&s, &n);
		if (n > 0 && n == strlen(name) &&
		    strncasecmp(item, name, n) == 0)
			return 1;
	}
	return 0;
}

/* The connection went: forget it, and any job it waited for. */
static void http_conn_closed(struct evhttp_connection *evcon, void *arg)
{
	struct http_conn *hc = arg;
	struct http *h = hc->h;

	(void)evcon;
	if (hc->pending != NULL) {
		hc->pending->req = NULL;
		hc->pending->hc = NULL;
	}
	TAILQ_REMOVE(&h->conns, hc, entry);
	free(hc);
}

/* The accepted connection @p req came on (NULL: evhttp made its own). */
static struct http_sock *http_sock_of(struct http *h,
    struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev;
	struct http_sock *sk;

	if (evcon == NULL)
		return NULL;
	bev = evhttp_connection_get_bufferevent(evcon);
	TAILQ_FOREACH(sk, &h->socks, entry)
		if (sk->bev == bev)
			return sk;
	return NULL;
}

/*
 * Forget the connections evhttp has freed, and close them. libevent has
 * no callback for a bufferevent's end, so we hold a reference on each:
 * evhttp's bufferevent_free clears its callbacks (evhttp keeps an event
 * callback on it while it lives) and drops its own reference; ours, the
 * last, frees it and closes the socket.
 */
static void http_sock_sweep(struct http *h)
{
	struct http_sock *sk, *next;
	bufferevent_event_cb ecb;

	for (sk = TAILQ_FIRST(&h->socks); sk != NULL; sk = next) {
		next = TAILQ_NEXT(sk, entry);
		bufferevent_getcb(sk->bev, NULL, NULL, &ecb, NULL);
		if (ecb != NULL)
			continue;
		TAILQ_REMOVE(&h->socks, sk, entry);
		if (!sk->refuse)
			h->nsocks--;
		bufferevent_decref(sk->bev);
		free(sk);
	}
}

/* Each second while there are connections (an idle module does not wake
 * up): the count follows those evhttp closed, and their sockets close. */
static void http_sweep_tick(evutil_socket_t fd, short what, void *arg)
{
	struct timeval tv = {.tv_sec = 1};
	struct http *h = arg;

	(void)fd;
	(void)what;
	http_sock_sweep(h);
	if (!TAILQ_EMPTY(&h->socks))
		event_add(h->sweep, &tv);
}

/* End @p sk's connection: a shutdown that evhttp reads as the peer's
 * end and frees it by (the descriptor is evhttp's to close). */
static void http_sock_end(struct http_sock *sk)
{
	evutil_socket_t fd = bufferevent_getfd(sk->bev);

	if (fd != -1)
		(void)shutdown(fd, SHUT_RDWR);
}

/* A connection refused at accept, now that evhttp gave it its socket. */
static void http_refuse(evutil_socket_t fd, short what, void *arg)
{
	struct http *h = arg;
	struct http_sock *sk;

	(void)fd;
	(void)what;
	TAILQ_FOREACH(sk, &h->socks, entry)
		if (sk->refuse)
			http_sock_end(sk);
}

/*
 * evhttp's bufferevent callback, the one thing of ours it calls at
 * accept (2.1 has no connection callback, and takes no socket we
 * accepted): the connection is counted from here against max_connections,
 * and at the cap the oldest that has sent no request yet is ended to make
 * room, or, if every one has, the newcomer -- as the words do.
 */
static struct bufferevent *http_new_bev(struct event_base *base, void *arg)
{
	struct timeval sweep_tv = {.tv_sec = 1};
	struct http *h = arg;
	struct http_sock *sk, *v;

	http_sock_sweep(h);
	if ((sk = calloc(1, sizeof(*sk))) == NULL ||
	    (sk->bev = bufferevent_socket_new(base, -1,
	         BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		free(sk);
		return NULL; /* evhttp makes its own: served, uncounted */
	}
	bufferevent_incref(sk->bev); /* ours: see http_sock_sweep */
	h->m->core.st.conns_total++;
	if (h->nsocks >= h->m->cfg.max_connections) {
		TAILQ_FOREACH(v, &h->socks, entry)
			if (v->requests == 0 && !v->refuse)
				break;
		if (v != NULL) {
			/* Counted out now; swept when evhttp has freed it. */
			v->refuse = 1;
			h->nsocks--;
			http_sock_end(v);
			h->m->core.st.conns_evicted++;
		} else {
			/* Its socket is set after we return: ended at once. */
			sk->refuse = 1;
			h->m->core.st.conns_rejected++;
			event_active(h->refuse, EV_TIMEOUT, 1);
		}
	}
	if (!sk->refuse)
		h->nsocks++;
	TAILQ_INSERT_TAIL(&h->socks, sk, entry);
	if (!evtimer_pending(h->sweep, NULL))
		event_add(h->sweep, &sweep_tv);
	return sk->bev;
}

/* The connection of @p req's record (its requests, its job); NULL with
 * a 503 sent when memory runs out. */
static struct http_conn *http_conn_of(struct http *h,
    struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct http_conn *hc;

	TAILQ_FOREACH(hc, &h->conns, entry)
		if (hc->evcon == evcon)
			return hc;
	if ((hc = calloc(1, sizeof(*hc))) == NULL) {
		http_error(req, 503, "%s", strerror(ENOMEM));
		return NULL;
	}
	hc->evcon = evcon;
	hc->h = h;
	TAILQ_INSERT_TAIL(&h->conns, hc, entry);
	evhttp_connection_set_closecb(evcon, http_conn_closed, hc);
	return hc;
}

const struct http_route *http_route_of(const char *path)
{
	const struct http_route *r;

	for (r = http_routes; r->path != NULL; r++)
		if ((r->flags & HTTP_PREFIX)
		        ? strncmp(path, r->path, strlen(r->path)) == 0
		        : strcmp(path, r->path) == 0)
			return r;
	return NULL;
}

/* The bytes of @p req's request line and header lines, as sent (give
 * or take the blanks around each ':'). */
static size_t http_header_bytes(struct evhttp_request *req)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *uri = evhttp_request_get_uri(req);
	struct evkeyval *kv;
	size_t n = sizeof("POST  HTTP/1.1\r\n") - 1 + (uri ? strlen(uri) : 0);

	TAILQ_FOREACH(kv, in, next)
		n += strlen(kv->key) + strlen(kv->value) + 4; /* ": ", CRLF */
	return n;
}

/* Is @p key an HTTP token (RFC 9110 5.6.2)? evhttp keeps what comes
 * before the ':' whole, so "Host : x" arrives as a header "Host ". */
static int http_token(const char *key)
{
	const char *k;

	if (*key == '\0')
		return 0;
	for (k = key; *k != '\0'; k++)
		if (!isalnum((unsigned char)*k) &&
		    strchr("!#$%&'*+-.^_`|~", *k) == NULL)
			return 0;
	return 1;
}

/*
 * Why a request (target @p uri, headers @p in) is ambiguous, so that two
 * readers of it (a proxy in front, evhttp, us) could take it differently (NULL:
 * it is not): a target that is not a path (absolute-form names a host of its
 * own), a header name that is no token, two Hosts, two Content-Lengths, or a
 * length with a chunked body. evhttp takes the first of each and serves; we
 * refuse.
 */
const char *http_ambiguity(const char *uri, const struct evkeyvalq *in)
{
	struct evkeyval *kv;
	int hosts = 0, lengths = 0, te = 0, origins = 0, xs = 0, sites = 0;

	if (uri == NULL || uri[0] != '/')
		return "the request target must be a path (origin-form)";
	TAILQ_FOREACH(kv, in, next) {
		if (!http_token(kv->key))
			return "a header name is not a token (a blank before "
			       "its ':'?)";
		hosts += strcasecmp(kv->key, "Host") == 0;
		origins += strcasecmp(kv->key, "Origin") == 0;
		xs += strcasecmp(kv->key, "X-Jm4lw") == 0;
		sites += strcasecmp(kv->key, "Sec-Fetch-Site") == 0;
		lengths += strcasecmp(kv->key, "Content-Length") == 0;
		te += strcasecmp(kv->key, "Transfer-Encoding") == 0;
	}
	if (hosts > 1)
		return "more than one Host header";
	/* evhttp_find_header takes the first: a same-origin Origin first
	 * and a foreign one after passed the CSRF check. */
	if (origins > 1)
		return "more than one Origin header";
	if (xs > 1)
		return "more than one X-Jm4lw header";
	if (sites > 1)
		return "more than one Sec-Fetch-Site header";
	if (lengths > 1)
		return "more than one Content-Length header";
	if (lengths > 0 && te > 0)
		return "both Content-Length and Transfer-Encoding";
	return NULL;
}

int http_target_split(const char *target, char *buf, const char **query)
{
	size_t n = strcspn(target, "?");

	*query = target[n] == '?' ? target + n + 1 : NULL;
	if (n >= HTTP_PATH_MAX)
		return -1;
	memcpy(buf, target, n);
	buf[n] = '\0';
	return 0;
}

/* Is @p s made of A-Z a-z 0-9 . _ - only (what every query name and
 * value we take is: formats, "previous", dump names, seconds)? */
static int http_query_token(const char *s)
{
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr("._-", *s) == NULL)
			return 0;
	return 1;
}

int http_query_parse(const char *q, struct evkeyvalq *out, char *why,
    size_t len)
{
	struct evkeyval *kv, *k2;

	TAILQ_INIT(out);
	/* evhttp decodes %00 to a NUL that ends the value where a C
	 * string reads it: format=svg%00x was served as svg. */
	if (strstr(q, "%00") != NULL) {
		snprintf(why, len, "a NUL byte (%%00) in the query string");
		return -1;
	}
	if (evhttp_parse_query_str(q, out) == -1) {
		snprintf(why, len, "the query string is not name=value&...");
		return -1;
	}
	TAILQ_FOREACH(kv, out, next) {
		if (!http_query_token(kv->key) ||
		    !http_query_token(kv->value)) {
			snprintf(why, len,
			    "the query's %.40s has a byte outside "
			    "A-Z a-z 0-9 . _ -",
			    http_query_token(kv->key) ? kv->key : "name");
			return -1;
		}
		for (k2 = TAILQ_NEXT(kv, next); k2 != NULL;
		     k2 = TAILQ_NEXT(k2, next))
			if (strcmp(kv->key, k2->key) == 0) {
				snprintf(why, len, "%.40s is given twice",
				    kv->key);
				return -1;
			}
	}
	return 0;
}

/* Every request: the checks, then its route. */
static void http_on_request(struct evhttp_request *req, void *arg)
{
	struct http *h = arg;
	struct jm4lw *m = h->m;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	struct evkeyvalq query;
	const struct sockaddr *sa = evhttp_connection_get_addr(evcon);
	const struct http_route *r;
	struct http_ctx ctx;
	struct http_conn *hc;
	struct http_sock *sk;
	const char *host, *q, *why, *allow;
	char peer[64], path[HTTP_PATH_MAX], qwhy[256];
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	int was = module_unsampled_enter(m);

	m->core.st.http_requests++;
	if (sa == NULL || !acl_match(m->acl, m->nacl, sa)) {
		m->core.st.conns_denied++;
		if (sa != NULL)
			addr_format(sa, peer, sizeof(peer));
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
		http_error(req, 403, "%s is not in allow_from",
		    sa != NULL ? peer : "this peer");
		goto out;
	}
	if ((sk = http_sock_of(h, req)) != NULL)
		sk->requests++;
	if ((hc = http_conn_of(h, req)) == NULL)
		goto out;
	if ((why = http_ambiguity(evhttp_request_get_uri(req), in)) != NULL) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
		http_error(req, 400, "%s", why);
		goto out;
	}
	/* evhttp stops reading at HTTP_HEADER_SLACK times the limit, with
	 * a 400 that says nothing; below that the limit is ours, and says
	 * what it is. */
	if (http_header_bytes(req) > m->cfg.http_max_header_bytes) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
		http_error(req, 431,
		    "the request's headers are larger than "
		    "http_max_header_bytes=%u",
		    (unsigned)m->cfg.http_max_header_bytes);
		goto out;
	}
	if (++hc->requests >= m->cfg.http_keepalive_requests)
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
	/* Browsers always send Host; a client without one is no page. */
	if ((host = evhttp_find_header(in, "Host")) != NULL &&
	    !http_host_allowed(m->cfg.http_allowed_hosts, host)) {
		http_error(req, 403,
		    "Host %.80s is not an IP address, localhost or in "
		    "http_allowed_hosts",
		    host);
		goto out;
	}
	/* The path as sent: evhttp's URI parser reads "//metrics" as an
	 * authority and an empty path, which was "/". */
	if (http_target_split(evhttp_request_get_uri(req), path, &q) == -1 ||
	    (r = http_route_of(path)) == NULL) {
		http_error(req, 404, "no such path: %.200s (see /)",
		    evhttp_request_get_uri(req));
		goto out;
	}
	if (!(cmd == EVHTTP_REQ_POST && (r->flags & HTTP_POST)) &&
	    !((cmd == EVHTTP_REQ_GET || cmd == EVHTTP_REQ_HEAD) &&
	        (r->flags & HTTP_GET))) {
		allow = !(r->flags & HTTP_GET) ? "POST"
		    : (r->flags & HTTP_POST)   ? "GET, HEAD, POST"
		                               : "GET, HEAD";
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", allow);
		http_error(req, 405, "%s takes %s", r->path, allow);
		goto out;
	}
	if ((r->flags & HTTP_MUTATES) && (why = http_csrf_refusal(req))) {
		http_error(req, 403, "%s", why);
		goto out;
	}
	TAILQ_INIT(&query);
	if (q != NULL &&
	    http_query_parse(q, &query, qwhy, sizeof(qwhy)) == -1) {
		evhttp_clear_headers(&query);
		http_error(req, 400, "%s", qwhy);
		goto out;
	}
	ctx.m = m;
	ctx.req = req;
	ctx.path = path;
	ctx.query = &query;
	ctx.post = cmd == EVHTTP_REQ_POST;
	ctx.flags = r->flags;
	ctx.route = r;
	if (r->word == NULL || http_word_allowed(&ctx, r->word))
		r->fn(&ctx);
	evhttp_clear_headers(&query);
out:
	module_unsampled_leave(m, was);
}

/* evhttp's request callback: a host's jm4lw_free() in a word's handler
 * (/4lw/<word>) or in the log waits until the request is handled, and
 * then runs here, where evhttp expects its callbacks may free (its
 * bufferevent holds a reference across the call). */
static void http_request(struct evhttp_request *req, void *arg)
{
	struct jm4lw *m = ((struct http *)arg)->m;

	module_enter(m);
	http_on_request(req, arg);
	module_leave(m);
}

/* The limits of the configuration, on evhttp. */
static void http_limits(struct http *h)
{
	struct timeval tv = {.tv_sec = h->m->cfg.read_timeout};

	/* evhttp's own limit answers 400 and no reason: it is only the
	 * backstop, http_request() answers 431 below it. */
	evhttp_set_max_headers_size(h->eh,
	    (ev_ssize_t)h->m->cfg.http_max_header_bytes * HTTP_HEADER_SLACK);
	evhttp_set_max_body_size(h->eh,
	    (ev_ssize_t)h->m->cfg.http_max_body_bytes);
	/* Headers, body and an idle keep-alive, each: read_timeout. */
	evhttp_set_timeout_tv(h->eh, &tv);
}

void http_reconfigure(struct jm4lw *m)
{
	if (m->http != NULL)
		http_limits(m->http);
}

/* The module's HTTP state, made on first bind. */
static struct http *http_get(struct jm4lw *m)
{
	struct http *h;

	if (m->http != NULL)
		return m->http;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	if ((h->eh = evhttp_new(m->base)) == NULL) {
		free(h);
		return NULL;
	}
	h->m = m;
	h->pid = getpid();
	TAILQ_INIT(&h->conns);
	TAILQ_INIT(&h->pending);
	TAILQ_INIT(&h->socks);
	/* Every method evhttp knows comes to us, so that one we do not
	 * serve gets our 405 with Allow and one-line body, not its page. */
	evhttp_set_allowed_methods(h->eh,
	    EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
	        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
	        EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_default_content_type(h->eh, "text/plain; charset=utf-8");
	evhttp_set_gencb(h->eh, http_request, h);
	evhttp_set_bevcb(h->eh, http_new_bev, h);
	h->refuse = event_new(m->base, -1, 0, http_refuse, h);
	h->sweep = evtimer_new(m->base, http_sweep_tick, h);
	if (h->refuse == NULL || h->sweep == NULL) {
		if (h->refuse != NULL)
			event_free(h->refuse);
		if (h->sweep != NULL)
			event_free(h->sweep);
		evhttp_free(h->eh);
		free(h);
		return NULL;
	}
	http_limits(h);
	pthread_mutex_lock(&http_all_lock);
	h->next = http_all;
	http_all = h;
	pthread_mutex_unlock(&http_all_lock);
	m->http = h;
	return h;
}

static int http_bind(struct jm4lw *m, const char *addr)
{
	struct http *h = http_get(m);
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	struct http_listener *l;
	int fd;

	if (h == NULL) {
		module_fail(m, "http_listen %s: %s", addr, strerror(ENOMEM));
		return -1;
	}
	if (h->nls == HTTP_LISTENERS) {
		module_fail(m, "http_listen %s: more than %d listeners", addr,
		    HTTP_LISTENERS);
		return -1;
	}
	if ((fd = listen_socket(m, "http_listen", addr)) == -1)
		return -1;
	l = &h->ls[h->nls];
	if ((l->bs = evhttp_accept_socket_with_handle(h->eh, fd)) == NULL ||
	    (l->resume = evtimer_new(m->base, http_resume, l)) == NULL) {
		module_fail(m, "http_listen %s: %s", addr,
		    strerror(errno ? errno : ENOMEM));
		if (l->bs != NULL)
			evhttp_del_accept_socket(h->eh, l->bs);
		else
			close(fd);
		l->bs = NULL;
		return -1;
	}
	l->lev = evhttp_bound_socket_get_listener(l->bs);
	l->h = h;
	evconnlistener_set_error_cb(l->lev, http_listen_error);
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == 0)
		addr_format((struct sockaddr *)&ss, l->addr, sizeof(l->addr));
	pthread_mutex_lock(&http_all_lock);
	h->nls++;
	pthread_mutex_unlock(&http_all_lock);
	log_msg(m, JM4LW_LOG_INFO, "HTTP listening on %s", l->addr);
	return 0;
}

static void http_bound(const struct jm4lw *m, char *buf, size_t len)
{
	size_t used = 0;
	int i, n;

	buf[0] = '\0';
	for (i = 0; m->http != NULL && i < m->http->nls; i++) {
		n = snprintf(buf + used, len - used, "%s%s", i ? "," : "",
		    m->http->ls[i].addr);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

/*
 * jm4lw_free: a reply evhttp already holds (the /4lw/quit that freed the
 * module) goes out as far as the socket takes it now; evhttp_free would
 * drop it. MSG_NOSIGNAL, as everywhere: the host ignores no SIGPIPE.
 * 1 if all of it went.
 */
static int http_sock_flush(evutil_socket_t fd, struct evbuffer *out)
{
	size_t len = evbuffer_get_length(out), sent = 0;
	ssize_t n;

	/* Walked by offset, not drained: on an idle keep-alive connection
	 * evhttp's output buffer was seen not to drain (its start frozen),
	 * and the same bytes went out again and again, megabytes of them. */
	while (
	    fd != -1 && sent < len && (n = sock_send_buffer(fd, out, sent)) > 0)
		sent += (size_t)n;
	return sent == len;
}

/*
 * What a request that came in but was never read gets at jm4lw_free (it
 * arrived while the loop was busy, with the word that freed the module):
 * a whole reply, not an empty close that a client can only call "empty
 * reply". Written raw, as evhttp has no request for it yet; it closes.
 */
#define HTTP_GONE_BODY                                                         \
	JM4LW_ERROR_PREFIX "the module is being freed (jm4lw_free); retry "    \
	                   "when the service is back\n"
#define HTTP_GONE_HEAD                                                         \
	"HTTP/1.1 503 Service Unavailable\r\n"                                 \
	"Content-Type: text/plain; charset=utf-8\r\n"                          \
	"Cache-Control: no-store\r\n"                                          \
	"X-Content-Type-Options: nosniff\r\n"                                  \
	"Connection: close\r\n"

/* Has @p sk's peer sent bytes nobody has read: a request it waits on? */
static int http_sock_unread(struct http_sock *sk, evutil_socket_t fd)
{
	char c;

	return evbuffer_get_length(bufferevent_get_input(sk->bev)) > 0 ||
	    recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

/*
 * jm4lw_free, before evhttp_free closes @p sk: its held reply goes out
 * (http_sock_flush), and then, if it went out whole, a request the peer
 * sent that was never read gets the 503 above. Then what the peer sent is read
 * away, as conn_finish does for the words, so that the close is a FIN after the
 * reply, not a reset that would destroy the reply in flight.
 */
static void http_sock_finish(struct http_sock *sk)
{
	struct evbuffer *gone;
	evutil_socket_t fd = bufferevent_getfd(sk->bev);
	char buf[512];
	int i;

	if (fd == -1)
		return;
	/* Bytes unread after a whole reply are the next request's. */
	if (http_sock_flush(fd, bufferevent_get_output(sk->bev)) &&
	    !sk->refuse && http_sock_unread(sk, fd) &&
	    (gone = evbuffer_new()) != NULL) {
		(void)evbuffer_add_printf(gone,
		    HTTP_GONE_HEAD "Content-Length: %zu\r\n\r\n%s",
		    sizeof(HTTP_GONE_BODY) - 1, HTTP_GONE_BODY);
		(void)http_sock_flush(fd, gone);
		evbuffer_free(gone);
	}
	for (i = 0; i < 128 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0;
	     i++)
		;
}

/* In a fork child: its copies of the parent's sockets become /dev/null. */
static void http_socks_disown(struct http *h)
{
	struct http_sock *sk;
	evutil_socket_t fd;
	int null;

	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		return;
	TAILQ_FOREACH(sk, &h->socks, entry)
		if ((fd = bufferevent_getfd(sk->bev)) != -1 && fd != null)
			(void)dup2(null, fd);
	close(null);
}

void http_free(struct jm4lw *m)
{
	struct http *h = m->http, **pp;
	struct http_pending *p;
	struct http_sock *sk;
	int i;

	if (h == NULL)
		return;
	pthread_mutex_lock(&http_all_lock);
	for (pp = &http_all; *pp != NULL; pp = &(*pp)->next)
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	pthread_mutex_unlock(&http_all_lock);
	/* A job still out answers nobody: its end finds no waiter, and the
	 * connections evhttp_free closes below find no record to clear. */
	while ((p = TAILQ_FIRST(&h->pending)) != NULL) {
		TAILQ_REMOVE(&h->pending, p, entry);
		module_job_forget(m, p);
		if (p->hc != NULL)
			p->hc->pending = NULL;
		free(p);
	}
	for (i = 0; i < h->nls; i++)
		if (h->ls[i].resume != NULL)
			event_free(h->ls[i].resume);
	/* A fork child's connections are its parent's (conn_ours says why):
	 * never written, read or shut down. evhttp_free shuts down every
	 * socket it closes, so the child's copies become /dev/null first
	 * (dup2 drops the copy as close() would; a shutdown of /dev/null
	 * fails, harmlessly, and libevent takes the failed epoll delete for
	 * one already done). */
	if (h->pid == getpid())
		TAILQ_FOREACH(sk, &h->socks, entry)
			http_sock_finish(sk);
	else
		http_socks_disown(h);
	/* Frees the listeners and connections; their close callbacks
	 * empty our list. */
	evhttp_free(h->eh);
	/* evhttp_free closed every socket; the references are ours. */
	while ((sk = TAILQ_FIRST(&h->socks)) != NULL) {
		TAILQ_REMOVE(&h->socks, sk, entry);
		bufferevent_decref(sk->bev);
		free(sk);
	}
	event_free(h->refuse);
	event_free(h->sweep);
	while (!TAILQ_EMPTY(&h->conns)) {
		struct http_conn *hc = TAILQ_FIRST(&h->conns);
		TAILQ_REMOVE(&h->conns, hc, entry);
		free(hc);
	}
	free(h);
	m->http = NULL;
}

/* Serve HTTP on @p addr, or on every address the configuration asked. */
/*
 * evhttp writes with writev() (and sendfile), which raise SIGPIPE on a
 * peer that reset mid-reply; unlike the words (MSG_NOSIGNAL), there is no
 * flag to pass it. Thread mode blocks every signal on its thread; a host
 * serving HTTP on its own loop must ignore SIGPIPE (as servers do), or a
 * reset would end it: said once, when it listens without.
 */
static void http_sigpipe_check(struct jm4lw *m)
{
	struct sigaction sa;
	sigset_t cur;

	if (m->own_loop || sigaction(SIGPIPE, NULL, &sa) == -1 ||
	    sa.sa_handler != SIG_DFL ||
	    (pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 &&
	        sigismember(&cur, SIGPIPE) == 1))
		return;
	log_msg(m, JM4LW_LOG_WARN,
	    "SIGPIPE is not ignored: a peer that resets an HTTP reply would "
	    "end the process (evhttp writes without MSG_NOSIGNAL); call "
	    "signal(SIGPIPE, SIG_IGN) before jm4lw_http_listen, or use thread "
	    "mode");
}

JM4LW_API int jm4lw_http_listen(struct jm4lw *m, const char *addr)
{
	int r, was;

	if (m == NULL)
		return -1;
	module_clear_error(m);
	module_enter(m); /* the log may free the module: see life.c */
	was = module_unsampled_enter(m);
	r = addr != NULL ? http_bind(m, addr)
	                 : listen_each(m, m->http_listen_req, http_bind);
	/* conf shows what is bound, as for listen: nothing until a bind. */
	http_bound(m, m->cfg.http_listen, sizeof(m->cfg.http_listen));
	if (r == 0)
		http_sigpipe_check(m);
	module_unsampled_leave(m, was);
	module_leave(m);
	return r;
}

/* The HTTP face's listeners, as jm4lw_bound_addr gives the words': a
 * port-0 listener is found here, not in the log. */
JM4LW_API int jm4lw_http_bound_addr(const struct jm4lw *m, int i, char *buf,
    size_t len)
{
	if (m == NULL || buf == NULL || m->http == NULL || i < 0 ||
	    i >= m->http->nls)
		return -1;
	snprintf(buf, len, "%s", m->http->ls[i].addr);
	return 0;
}

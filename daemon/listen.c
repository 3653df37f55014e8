/*
 * Listeners: bind, adopt a host's socket, accept (allow_from first), and
 * pause accepting when descriptors run out instead of spinning.
 */
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "conn.h"
#include "jobs.h"
#include "life.h"
#include "listen.h"
#include "log.h"
#include "module.h"
#include "util.h"

#define ACCEPT_PAUSE_SECONDS 1 /* back-off after EMFILE/ENFILE */
/*
 * Peers accepted in a row at most, before a turn of the loop (the count
 * runs across turns: a pause costs one zero timer per ACCEPT_BURST
 * peers, idle or not). libevent's listener
 * accepts until the backlog is empty; under a flood that is hundreds in a
 * row, each taking an idle peer's slot, before any of their words is
 * read: a health check accepted early in the row, its word already on the
 * way, would be taken for idle and closed. A turn of the loop between
 * bursts reads the words that came.
 */
#define ACCEPT_BURST 16

/* Turn accepting on or off on every listener. */
static void listen_accepting(struct jm4lw *m, int on)
{
	int i;

	for (i = 0; i < m->nls; i++) {
		if (on)
			evconnlistener_enable(m->ls[i].lev);
		else
			evconnlistener_disable(m->ls[i].lev);
	}
}

/* A new peer: strangers are closed at once, the others get a slot. */
static void listen_accept(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct jm4lw *m = arg;
	int was;

	(void)lev;
	module_enter(m); /* the log may free the module: see life.c */
	if (!acl_match(m->acl, m->nacl, sa)) {
		/* Strangers learn nothing, not even that this is jm4lw. */
		m->core.st.conns_denied++;
		evutil_closesocket(fd);
		log_peer(m, JM4LW_LOG_DEBUG, sa, "not in allow_from, closed");
		module_leave(m);
		return;
	}
	was = module_unsampled_enter(m);
	conn_accept(m, fd, sa, salen);
	module_unsampled_leave(m, was);
	if (++m->burst == ACCEPT_BURST) {
		/* Our disabling ends libevent's accept loop; a zero timer
		 * runs after this turn's reads. */
		struct timeval now = {0, 0};
		listen_accepting(m, 0);
		evtimer_add(m->next_turn, &now);
	}
	module_leave(m);
}

/* The turn after a burst: accept again (unless paused for descriptors). */
static void listen_next_turn(evutil_socket_t fd, short what, void *arg)
{
	struct jm4lw *m = arg;

	(void)fd;
	(void)what;
	m->burst = 0;
	if (!evtimer_pending(m->resume, NULL))
		listen_accepting(m, 1);
}

/* The accept pause is over. */
static void listen_resume(evutil_socket_t fd, short what, void *arg)
{
	struct jm4lw *m = arg;

	(void)fd;
	(void)what;
	module_enter(m);
	log_msg(m, JM4LW_LOG_INFO, "accepting connections again");
	listen_accepting(m, 1);
	module_leave(m);
}

/*
 * accept() failed. Out of descriptors, the pending connection stays in the
 * backlog and the listener would fire again at once: pause instead of
 * spinning, like OpenBSD's httpd.
 */
static void listen_error(struct evconnlistener *lev, void *arg)
{
	struct jm4lw *m = arg;
	struct timeval tv = {.tv_sec = ACCEPT_PAUSE_SECONDS};
	int e = EVUTIL_SOCKET_ERROR();

	(void)lev;
	module_enter(m);
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		listen_accepting(m, 0);
		event_add(m->resume, &tv);
		log_msg(m, JM4LW_LOG_WARN,
		    "accept: %s; pausing accept for %d s", strerror(e),
		    ACCEPT_PAUSE_SECONDS);
	} else
		log_msg(m, JM4LW_LOG_DEBUG, "accept: %s", strerror(e));
	module_leave(m);
}

/* Serve a bound socket: listen if needed, then hand it to libevent. */
static int listen_adopt(struct jm4lw *m, int fd)
{
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	int on = 0;
	socklen_t onlen = sizeof(on);
	struct listener *l;

	if (m->nls == MODULE_LISTENERS) {
		errno = EMFILE;
		return -1;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == -1)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &onlen) == -1)
		return -1;
	if (!on && listen(fd, SOMAXCONN) == -1)
		return -1;
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    evutil_make_socket_closeonexec(fd) == -1)
		return -1;
	l = &m->ls[m->nls];
	l->lev = evconnlistener_new(m->base, listen_accept, m,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (l->lev == NULL)
		return -1;
	evconnlistener_set_error_cb(l->lev, listen_error);
	addr_format((struct sockaddr *)&ss, l->addr, sizeof(l->addr));
	m->nls++;
	log_msg(m, JM4LW_LOG_INFO, "listening on %s", l->addr);
	return 0;
}

/*
 * A listening socket on @p addr, IPv6 sockets v6-only so [::] and 0.0.0.0
 * coexist; -1 with the reason logged under the key @p key (listen,
 * http_listen).
 */
int listen_socket(struct jm4lw *m, const char *key, const char *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr *sa = (struct sockaddr *)&ss;
	socklen_t len;
	int one = 1, fd = -1;

	if (addr_parse(addr, &ss, &len) == -1) {
		module_fail(m,
		    "%s %s: not an address (want ADDR:PORT or [ADDR6]:PORT)",
		    key, addr);
		return -1;
	}
	if ((fd = socket(sa->sa_family,
	         SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1)
		goto fail;
	if (sa->sa_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) == -1)
		goto fail;
	if (bind(fd, sa, len) == -1 || listen(fd, SOMAXCONN) == -1)
		goto fail;
	return fd;
fail:
	/* The address, then the key that set it: what to change. */
	module_fail(m, "cannot listen on %s (%s): %s", addr, key,
	    strerror(errno));
	if (fd != -1)
		close(fd);
	return -1;
}

/* Bind one address for the words. */
static int listen_bind(struct jm4lw *m, const char *addr)
{
	int fd;

	if (m->nls == MODULE_LISTENERS) {
		module_fail(m, "listen %s: more than %d listeners", addr,
		    MODULE_LISTENERS);
		return -1;
	}
	if ((fd = listen_socket(m, "listen", addr)) == -1)
		return -1;
	if (listen_adopt(m, fd) == -1) {
		module_fail(m, "listen %s: %s", addr, strerror(errno));
		close(fd);
		return -1;
	}
	return 0;
}

/* Warn about allow entries that name no word we serve (a typo, or a host
 * word not added yet). */
void listen_check_allow(struct jm4lw *m)
{
	const char *s = m->cfg.allow, *item;
	char w[5];
	size_t n;

	while (s != NULL) {
		item = list_next(&s, &n);
		if (n != 4)
			continue;
		memcpy(w, item, 4);
		w[4] = '\0';
		if (proto_lookup(w) == NULL && !proto_host_known(&m->proto, w))
			log_msg(m, JM4LW_LOG_WARN,
			    "allow: \"%s\" is not a word "
			    "this module serves",
			    w);
	}
}

/* Keep conf's listen= honest: the addresses really bound. */
static void listen_note(struct jm4lw *m)
{
	char *d = m->cfg.listen;
	size_t left = sizeof(m->cfg.listen);
	int i, n;

	d[0] = '\0';
	for (i = 0; i < m->nls; i++) {
		n = snprintf(d, left, "%s%s", i ? "," : "", m->ls[i].addr);
		if (n < 0 || (size_t)n >= left)
			break;
		d += n;
		left -= (size_t)n;
	}
}

int listen_each(struct jm4lw *m, const char *list,
    int (*bind)(struct jm4lw *m, const char *addr))
{
	char a[sizeof(m->cfg.listen)];
	const char *item;
	size_t n;
	int r = 0;

	while (list != NULL) {
		item = list_next(&list, &n);
		if (n == 0 || n >= sizeof(a))
			continue;
		memcpy(a, item, n);
		a[n] = '\0';
		if (bind(m, a) == -1)
			r = -1;
	}
	return r;
}

JM4LW_API int jm4lw_listen(struct jm4lw *m, const char *addr)
{
	int r, was;

	if (m == NULL)
		return -1;
	module_clear_error(m);
	module_enter(m); /* the log may free the module: see life.c */
	was = module_unsampled_enter(m);
	listen_check_allow(m);
	r = addr != NULL ? listen_bind(m, addr)
	                 : listen_each(m, m->listen_req, listen_bind);
	listen_note(m);
	module_unsampled_leave(m, was);
	module_leave(m);
	return r;
}

JM4LW_API int jm4lw_listen_fd(struct jm4lw *m, int fd)
{
	int r, was;

	if (m == NULL)
		return -1;
	module_clear_error(m);
	module_enter(m); /* the log may free the module: see life.c */
	was = module_unsampled_enter(m);
	if (m->nls == MODULE_LISTENERS) {
		module_fail(m, "listen_fd %d: more than %d listeners", fd,
		    MODULE_LISTENERS);
		r = -1;
	} else if ((r = listen_adopt(m, fd)) == -1)
		module_fail(m, "listen_fd %d: %s", fd, strerror(errno));
	listen_note(m);
	module_unsampled_leave(m, was);
	module_leave(m);
	return r;
}

JM4LW_API int jm4lw_bound_addr(const struct jm4lw *m, int i, char *buf,
    size_t len)
{
	if (m == NULL || buf == NULL || i < 0 || i >= m->nls)
		return -1;
	snprintf(buf, len, "%s", m->ls[i].addr);
	return 0;
}

int server_listen_fds(const struct jm4lw *m, int *fds, int max)
{
	int i;

	for (i = 0; i < m->nls && i < max; i++)
		fds[i] = evconnlistener_get_fd(m->ls[i].lev);
	return i;
}

/* The timer that ends an accept pause; -1 if it cannot be made. */
int listen_init(struct jm4lw *m)
{
	m->resume = evtimer_new(m->base, listen_resume, m);
	m->next_turn = evtimer_new(m->base, listen_next_turn, m);
	return m->resume != NULL && m->next_turn != NULL ? 0 : -1;
}

/* Close every listener (and the pause timer). */
void listen_free(struct jm4lw *m)
{
	int i;

	for (i = 0; i < m->nls; i++)
		evconnlistener_free(m->ls[i].lev);
	m->nls = 0;
	if (m->resume != NULL)
		event_free(m->resume);
	if (m->next_turn != NULL)
		event_free(m->next_turn);
	m->resume = m->next_turn = NULL;
}

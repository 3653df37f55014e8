/*
 * The libevent server module: listeners, connections, limits and timeouts.
 *
 * A connection goes READ -> WRITE -> LINGER -> closed:
 *   READ    collect the first 4 bytes (read_timeout), then dispatch;
 *   WRITE   send the reply with MSG_NOSIGNAL (write_timeout without
 *           progress drops the peer);
 *   LINGER  shutdown(SHUT_WR) and discard what the peer still sends until
 *           it closes, so our close is a FIN: closing with unread bytes
 *           (the "\n" nc sends) would make the kernel reset the connection
 *           and could destroy the reply before the peer read it.
 * Plain events and an evbuffer rather than bufferevents: we read at most a
 * small buffer at a time and can send with MSG_NOSIGNAL, so the host never
 * has to ignore SIGPIPE for us.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "addr.h"
#include "jm4lw.h"
#include "proto.h"
#include "server.h"

#define MAX_LISTENERS 16
#define LINGER_SECONDS 2          /* wait this long for the peer's FIN */
#define DISCARD_MAX (64 * 1024)   /* bytes after the word we read at most */
#define ACCEPT_PAUSE_SECONDS 1    /* back-off after EMFILE/ENFILE */
#define SEND_IOV 16
#define ACL_MAX 64                /* allow_from entries */
#define REJECT_MIN 64             /* refusals in flight beyond the cap */

enum conn_state { CONN_READ, CONN_WRITE, CONN_LINGER };

struct conn {
	TAILQ_ENTRY(conn) entry;
	struct jm4lw *m;
	evutil_socket_t fd;
	struct event *rev;
	struct event *wev;
	struct evbuffer *out;
	enum conn_state state;
	char head[4];     /* the first bytes the peer sent */
	size_t have;      /* bytes of head[] filled */
	char word[4];     /* the word, once framed */
	size_t discarded; /* bytes read and thrown away after the word */
	int peer_eof;     /* the peer shut down its side */
	int rejecting;    /* over max_connections: sending the refusal */
	struct timeval deadline; /* for the word: accept + read_timeout */
	struct sockaddr_storage sa; /* the peer, formatted only for a log line */
};

struct listener {
	struct evconnlistener *lev;
	char addr[64];
};

struct jm4lw {
	struct event_base *base;
	struct jm4lw_config cfg; /* cfg.listen shows what is bound */
	char listen_req[sizeof(((struct jm4lw_config *)0)->listen)];
	struct proto proto;
	struct listener ls[MAX_LISTENERS];
	int nls;
	TAILQ_HEAD(, conn) conns;
	struct event *resume; /* re-enables accept after a pause */
	struct event *dump_timer;   /* dump_interval, only when set */
	struct event *growth_timer; /* dump_on_growth, only when set */
	unsigned nrejecting;      /* refusals still being sent */
	struct cidr acl[ACL_MAX]; /* allow_from, parsed */
	int nacl;
	jm4lw_log_fn logfn;
	void *logarg;
	int log_max; /* levels above it are not even formatted */
};

static void conn_read(evutil_socket_t, short, void *);
static void conn_write(evutil_socket_t, short, void *);

/* Default log sink: one line on stderr, debug chatter left out. */
static void log_stderr(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= JM4LW_LOG_INFO)
		fprintf(stderr, "jm4lw: %s\n", msg);
}

/* Format a log line and hand it to the host's callback. */
static void log_msg(struct jm4lw *m, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void log_msg(struct jm4lw *m, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (level > m->log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	m->logfn(level, buf, m->logarg);
}

/* "1.2.3.4:5" or "[::1]:5" for logs, bound_addr and conf. */
static void fmt_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(s6->sin6_port));
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(s4->sin_port));
	} else
		snprintf(buf, len, "(family %d)", sa->sa_family);
}

/*
 * A log line about a peer, "ADDR: ...". The address is formatted only
 * when the line is wanted: per connection, inet_ntop() and snprintf() cost
 * more instructions than the rest of a ruok in user space.
 */
static void vlog_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
    const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
static void vlog_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
    const char *fmt, va_list ap)
{
	char peer[64], buf[448];

	if (level > m->log_max)
		return;
	fmt_addr(sa, peer, sizeof(peer));
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_msg(m, level, "%s: %s", peer, buf);
}

static void log_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void log_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_peer(m, level, sa, fmt, ap);
	va_end(ap);
}

/* A log line about a connection's peer. */
static void conn_log(struct conn *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void conn_log(struct conn *c, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_peer(c->m, level, (const struct sockaddr *)&c->sa, fmt, ap);
	va_end(ap);
}

/* Close a connection and free everything it holds. */
static void conn_close(struct conn *c)
{
	struct jm4lw *m = c->m;

	TAILQ_REMOVE(&m->conns, c, entry);
	if (c->rejecting)
		m->nrejecting--;
	else
		m->proto.st.conns_open--;
	event_free(c->rev);
	event_free(c->wev);
	evbuffer_free(c->out);
	evutil_closesocket(c->fd);
	free(c);
}

/* proto's write callback: the reply goes into the output buffer. */
static void conn_append(void *arg, const void *buf, size_t len)
{
	struct conn *c = arg;

	if (evbuffer_add(c->out, buf, len) == -1)
		conn_log(c, JM4LW_LOG_ERR, "out of memory for reply");
}

/* Wait for bytes from the peer, with or without a deadline. */
static void conn_want_read(struct conn *c, int seconds)
{
	struct timeval tv = {.tv_sec = seconds};

	event_add(c->rev, seconds > 0 ? &tv : NULL);
}

/* Send what is buffered; on the last byte, half-close and linger. */
static void conn_flush(struct conn *c)
{
	struct evbuffer_iovec v[SEND_IOV];
	struct iovec iov[SEND_IOV];
	struct msghdr msg;
	struct timeval tv;
	ssize_t n;
	int i, nv;

	while (evbuffer_get_length(c->out) > 0) {
		nv = evbuffer_peek(c->out, -1, NULL, v, SEND_IOV);
		if (nv > SEND_IOV)
			nv = SEND_IOV;
		for (i = 0; i < nv; i++) {
			iov[i].iov_base = v[i].iov_base;
			iov[i].iov_len = v[i].iov_len;
		}
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = (size_t)nv;
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				tv.tv_sec = c->m->cfg.write_timeout;
				tv.tv_usec = 0;
				event_add(c->wev, &tv);
				return;
			}
			conn_log(c, JM4LW_LOG_DEBUG, "send: %s",
			    strerror(errno));
			conn_close(c);
			return;
		}
		evbuffer_drain(c->out, (size_t)n);
	}
	event_del(c->wev);
	shutdown(c->fd, SHUT_WR);
	if (c->peer_eof || c->discarded > DISCARD_MAX) {
		conn_close(c);
		return;
	}
	c->state = CONN_LINGER;
	conn_want_read(c, LINGER_SECONDS);
}

/*
 * Partial word: the persistent event would restart read_timeout with every
 * byte, so a trickling peer could hold the slot 4x longer. Keep the
 * deadline absolute.
 */
static void conn_rearm(struct conn *c)
{
	struct timeval now, left;

	event_base_gettimeofday_cached(c->m->base, &now);
	evutil_timersub(&c->deadline, &now, &left);
	if (left.tv_sec < 0 || (left.tv_sec == 0 && left.tv_usec <= 0)) {
		conn_log(c, JM4LW_LOG_DEBUG, "read timeout");
		conn_close(c);
		return;
	}
	event_add(c->rev, &left);
}

/* The word is complete: run it and start sending the reply. */
static void conn_dispatch(struct conn *c)
{
	struct proto_out out = {.write = conn_append, .arg = c};
	int r;

	r = proto_dispatch(&c->m->proto, c->word, &out);
	conn_log(c, JM4LW_LOG_DEBUG, "word %s%s",
	    proto_lookup(c->word) ? proto_lookup(c->word)->name : "(unknown)",
	    r == PROTO_ERROR ? " -> error" : "");
	/*
	 * Keep reading, only to notice EOF and discard, with no deadline:
	 * write_timeout governs now. Dropping the timer leaves the fd in
	 * epoll, where a del and re-add would cost two epoll_ctl calls per
	 * connection.
	 */
	c->state = CONN_WRITE;
	event_remove_timer(c->rev);
	conn_flush(c);
}

/* Readable (or timed out): fill the word, or discard after it. */
static void conn_read(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	char buf[512];
	size_t take;
	ssize_t n;

	if (what & EV_TIMEOUT) {
		conn_log(c, JM4LW_LOG_DEBUG, "%s timeout",
		    c->state == CONN_READ ? "read" : "linger");
		conn_close(c);
		return;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		conn_log(c, JM4LW_LOG_DEBUG, "recv: %s",
		    strerror(errno));
		conn_close(c);
		return;
	}
	if (n == 0) {
		/* Before the word: nothing to answer. After: done. */
		if (c->state != CONN_WRITE) {
			conn_close(c);
			return;
		}
		c->peer_eof = 1;
		event_del(c->rev);
		return;
	}
	if (c->state == CONN_READ) {
		take = 4 - c->have < (size_t)n ? 4 - c->have : (size_t)n;
		memcpy(c->head + c->have, buf, take);
		c->have += take;
		c->discarded += (size_t)n - take;
		if (proto_frame(c->head, c->have, c->word) == 4)
			conn_dispatch(c);
		else
			conn_rearm(c);
		return;
	}
	c->discarded += (size_t)n;
	if (c->discarded > DISCARD_MAX) {
		/* A peer that streams gets no more of our reads. */
		if (c->state == CONN_LINGER) {
			conn_close(c);
			return;
		}
		event_del(c->rev);
	}
}

/* Writable again (or no progress for write_timeout). */
static void conn_write(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	if (what & EV_TIMEOUT) {
		conn_log(c, JM4LW_LOG_DEBUG, "write timeout");
		conn_close(c);
		return;
	}
	conn_flush(c);
}

/* A connection object for @p fd, not yet counted or watched. */
static struct conn *conn_new(struct jm4lw *m, evutil_socket_t fd,
    const struct sockaddr *sa, int salen)
{
	struct conn *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->m = m;
	c->fd = fd;
	if (salen > 0 && (size_t)salen <= sizeof(c->sa))
		memcpy(&c->sa, sa, (size_t)salen);
	c->rev = event_new(m->base, fd, EV_READ | EV_PERSIST, conn_read, c);
	c->wev = event_new(m->base, fd, EV_WRITE | EV_PERSIST, conn_write, c);
	c->out = evbuffer_new();
	if (c->rev == NULL || c->wev == NULL || c->out == NULL) {
		if (c->rev)
			event_free(c->rev);
		if (c->wev)
			event_free(c->wev);
		if (c->out)
			evbuffer_free(c->out);
		free(c);
		return NULL;
	}
	return c;
}

/*
 * Refuse a connection over max_connections with one line. It goes out
 * like any reply — half-close, then drain the peer's word until its FIN —
 * because closing with the word unread would reset the connection and
 * the peer would see "connection reset" instead of the reason. Refusals
 * in flight have a cap of their own (max_connections + REJECT_MIN, each a
 * few hundred bytes for at most LINGER_SECONDS); beyond it, best effort
 * and close.
 */
static void server_reject(struct jm4lw *m, evutil_socket_t fd,
    const struct sockaddr *sa, int salen)
{
	char line[128];
	struct conn *c;
	int n;

	m->proto.st.conns_rejected++;
	n = snprintf(line, sizeof(line),
	    JM4LW_ERROR_PREFIX "too many connections (max_connections=%u)\n",
	    m->cfg.max_connections);
	log_peer(m, JM4LW_LOG_DEBUG, sa, "rejected, %u connections open",
	    m->cfg.max_connections);
	if (m->nrejecting < REJECT_MIN + m->cfg.max_connections &&
	    (c = conn_new(m, fd, sa, salen)) != NULL &&
	    evbuffer_add(c->out, line, (size_t)n) == 0) {
		c->rejecting = 1;
		c->state = CONN_WRITE;
		TAILQ_INSERT_TAIL(&m->conns, c, entry);
		m->nrejecting++;
		conn_want_read(c, 0); /* to drain the word and see EOF */
		conn_flush(c);
		return;
	}
	(void)send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	evutil_closesocket(fd);
}

/* proto's log sink: straight to the host's. */
static void server_proto_log(void *arg, int level, const char *msg)
{
	struct jm4lw *m = arg;

	if (level <= m->log_max)
		m->logfn(level, msg, m->logarg);
}

/* A reply collected for the log instead of a peer. */
struct logbuf {
	char buf[512];
	size_t len;
};

/* proto_out writer into a struct logbuf (the first line is plenty). */
static void logbuf_write(void *arg, const void *buf, size_t len)
{
	struct logbuf *b = arg;
	size_t room = sizeof(b->buf) - 1 - b->len;

	if (len > room)
		len = room;
	memcpy(b->buf + b->len, buf, len);
	b->len += len;
	b->buf[b->len] = '\0';
}

/* A dump the schedule asked for: same path as jmfp, result to the log. */
static void server_scheduled_dump(struct jm4lw *m, const char *why)
{
	struct logbuf b = {.len = 0};
	struct proto_out out = {.write = logbuf_write, .arg = &b};
	int r;

	r = proto_dump(&m->proto, &out, 1);
	b.buf[strcspn(b.buf, "\n")] = '\0';
	if (r == PROTO_OK) {
		m->proto.st.dumps_scheduled++;
		log_msg(m, JM4LW_LOG_INFO, "%s dump: %s", why, b.buf);
	} else
		log_msg(m, JM4LW_LOG_WARN, "%s dump: %s", why, b.buf);
}

/* dump_interval fired. */
static void server_dump_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	server_scheduled_dump(arg, "interval");
}

/* growth_check_interval fired: look at stats.allocated. */
static void server_growth_tick(evutil_socket_t fd, short what, void *arg)
{
	struct jm4lw *m = arg;

	(void)fd;
	(void)what;
	if (proto_growth_due(&m->proto))
		server_scheduled_dump(m, "growth");
}

/*
 * (Re)arm the timers the configuration asks for, and no others: an
 * unscheduled module never wakes up. @p old is the configuration before a
 * reload (NULL at start): a timer whose setting did not change keeps
 * running, or reloading more often than dump_interval would mean no dump
 * ever comes.
 */
static int server_schedule(struct jm4lw *m, const struct jm4lw_config *old)
{
	struct timeval tv;

	if (old == NULL || old->dump_interval != m->cfg.dump_interval) {
		if (m->dump_timer != NULL)
			event_free(m->dump_timer);
		m->dump_timer = NULL;
	} else
		goto growth;
	if (m->cfg.dump_interval > 0) {
		m->dump_timer = event_new(m->base, -1, EV_PERSIST,
		    server_dump_tick, m);
		tv = (struct timeval){.tv_sec = m->cfg.dump_interval};
		if (m->dump_timer == NULL || event_add(m->dump_timer, &tv))
			return -1;
	}
growth:
	if (old != NULL &&
	    strcmp(old->dump_on_growth, m->cfg.dump_on_growth) == 0 &&
	    old->growth_check_interval == m->cfg.growth_check_interval)
		return 0;
	if (m->growth_timer != NULL)
		event_free(m->growth_timer);
	m->growth_timer = NULL;
	if (strcmp(m->cfg.dump_on_growth, "0") != 0) {
		m->growth_timer = event_new(m->base, -1, EV_PERSIST,
		    server_growth_tick, m);
		tv = (struct timeval){.tv_sec = m->cfg.growth_check_interval};
		if (m->growth_timer == NULL || event_add(m->growth_timer, &tv))
			return -1;
		(void)proto_growth_due(&m->proto); /* take the baseline */
	}
	return 0;
}

/* Parse allow_from (already checked) into the module's table. */
static int server_set_acl(struct jm4lw *m, const char *list, char *err,
    size_t errlen)
{
	struct cidr acl[ACL_MAX];
	const char *s = list, *e;
	int n = 0;

	while (*s != '\0') {
		while (*s == ',' || *s == ' ' || *s == '\t')
			s++;
		for (e = s; *e != '\0' && *e != ',' && *e != ' ' && *e != '\t';
		    e++)
			;
		if (e == s)
			break;
		if (n == ACL_MAX) {
			snprintf(err, errlen, "allow_from: more than %d entries",
			    ACL_MAX);
			return -1;
		}
		if (cidr_parse(s, (size_t)(e - s), &acl[n]) == -1) {
			snprintf(err, errlen, "allow_from: bad entry");
			return -1;
		}
		n++;
		s = e;
	}
	memcpy(m->acl, acl, sizeof(acl));
	m->nacl = n;
	return 0;
}

/* Is this peer in allow_from? */
static int server_allowed(const struct jm4lw *m, const struct sockaddr *sa)
{
	int i;

	for (i = 0; i < m->nacl; i++)
		if (cidr_match(&m->acl[i], sa))
			return 1;
	return 0;
}

/* A new peer: check allow_from and the cap, then wait for its word. */
static void server_accept(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct jm4lw *m = arg;
	struct conn *c;

	(void)lev;
	if (!server_allowed(m, sa)) {
		/* Strangers learn nothing, not even that this is jm4lw. */
		m->proto.st.conns_denied++;
		evutil_closesocket(fd);
		log_peer(m, JM4LW_LOG_DEBUG, sa, "not in allow_from, closed");
		return;
	}
	if (m->proto.st.conns_open >= m->cfg.max_connections) {
		server_reject(m, fd, sa, salen);
		return;
	}
	if ((c = conn_new(m, fd, sa, salen)) == NULL) {
		log_peer(m, JM4LW_LOG_ERR, sa, "out of memory, connection "
		    "dropped");
		evutil_closesocket(fd);
		return;
	}
	c->state = CONN_READ;
	TAILQ_INSERT_TAIL(&m->conns, c, entry);
	m->proto.st.conns_open++;
	m->proto.st.conns_total++;
	event_base_gettimeofday_cached(m->base, &c->deadline);
	c->deadline.tv_sec += m->cfg.read_timeout;
	conn_want_read(c, (int)m->cfg.read_timeout);
}

/* Turn accepting on or off on every listener. */
static void server_accepting(struct jm4lw *m, int on)
{
	int i;

	for (i = 0; i < m->nls; i++) {
		if (on)
			evconnlistener_enable(m->ls[i].lev);
		else
			evconnlistener_disable(m->ls[i].lev);
	}
}

/* The accept pause is over. */
static void server_resume(evutil_socket_t fd, short what, void *arg)
{
	struct jm4lw *m = arg;

	(void)fd;
	(void)what;
	log_msg(m, JM4LW_LOG_INFO, "accepting connections again");
	server_accepting(m, 1);
}

/*
 * accept() failed. Out of descriptors, the pending connection stays in the
 * backlog and the listener would fire again at once: pause instead of
 * spinning, like OpenBSD's httpd.
 */
static void server_accept_error(struct evconnlistener *lev, void *arg)
{
	struct jm4lw *m = arg;
	struct timeval tv = {.tv_sec = ACCEPT_PAUSE_SECONDS};
	int e = EVUTIL_SOCKET_ERROR();

	(void)lev;
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		log_msg(m, JM4LW_LOG_WARN,
		    "accept: %s; pausing accept for %d s", strerror(e),
		    ACCEPT_PAUSE_SECONDS);
		server_accepting(m, 0);
		event_add(m->resume, &tv);
		return;
	}
	log_msg(m, JM4LW_LOG_DEBUG, "accept: %s", strerror(e));
}

/* Serve a bound socket: listen if needed, then hand it to libevent. */
static int server_adopt(struct jm4lw *m, int fd)
{
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	int on = 0;
	socklen_t onlen = sizeof(on);
	struct listener *l;

	if (m->nls == MAX_LISTENERS) {
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
	l->lev = evconnlistener_new(m->base, server_accept, m,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (l->lev == NULL)
		return -1;
	evconnlistener_set_error_cb(l->lev, server_accept_error);
	fmt_addr((struct sockaddr *)&ss, l->addr, sizeof(l->addr));
	m->nls++;
	log_msg(m, JM4LW_LOG_INFO, "listening on %s", l->addr);
	return 0;
}

/* Bind one address, IPv6 sockets v6-only so [::] and 0.0.0.0 coexist. */
static int server_bind(struct jm4lw *m, const char *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr *sa = (struct sockaddr *)&ss;
	socklen_t len;
	int one = 1, fd = -1;

	if (addr_parse(addr, &ss, &len) == -1) {
		log_msg(m, JM4LW_LOG_ERR,
		    "listen %s: not an address (want ADDR:PORT or [ADDR6]:PORT)",
		    addr);
		return -1;
	}
	if ((fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1)
		goto fail;
	if (sa->sa_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &one, sizeof(one)) == -1)
		goto fail;
	if (bind(fd, sa, len) == -1 || listen(fd, SOMAXCONN) == -1)
		goto fail;
	if (server_adopt(m, fd) == -1)
		goto fail;
	return 0;
fail:
	log_msg(m, JM4LW_LOG_ERR, "listen %s: %s", addr, strerror(errno));
	if (fd != -1)
		close(fd);
	return -1;
}

/* Warn about allow entries that name no word we serve (a typo, or a host
 * word not added yet). */
static void server_check_allow(struct jm4lw *m)
{
	char list[sizeof(m->cfg.allow)], *item, *save = NULL;

	snprintf(list, sizeof(list), "%s", m->cfg.allow);
	for (item = strtok_r(list, ", \t", &save); item != NULL;
	    item = strtok_r(NULL, ", \t", &save)) {
		if (strlen(item) != 4 || proto_lookup(item) != NULL)
			continue;
		if (!proto_host_known(&m->proto, item))
			log_msg(m, JM4LW_LOG_WARN, "allow: \"%s\" is not a word "
			    "this module serves", item);
	}
}

/* Keep conf's listen= honest: the addresses really bound. */
static void server_note_listen(struct jm4lw *m)
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

JM4LW_API int jm4lw_listen(struct jm4lw *m, const char *addr)
{
	char list[sizeof(m->cfg.listen)], *item, *save = NULL;
	int r = 0;

	server_check_allow(m);
	if (addr != NULL)
		r = server_bind(m, addr);
	else {
		snprintf(list, sizeof(list), "%s", m->listen_req);
		for (item = strtok_r(list, ", \t", &save); item != NULL;
		    item = strtok_r(NULL, ", \t", &save))
			if (server_bind(m, item) == -1)
				r = -1;
	}
	server_note_listen(m);
	return r;
}

JM4LW_API int jm4lw_listen_fd(struct jm4lw *m, int fd)
{
	int r;

	if ((r = server_adopt(m, fd)) == -1)
		log_msg(m, JM4LW_LOG_ERR, "listen on fd %d: %s", fd,
		    strerror(errno));
	server_note_listen(m);
	return r;
}

JM4LW_API int jm4lw_add_word(struct jm4lw *m, const char *word,
    jm4lw_word_fn fn, void *arg, int flags)
{
	if (proto_add_word(&m->proto, word, fn, arg, flags) == -1) {
		log_msg(m, JM4LW_LOG_ERR, "add_word: %s",
		    fn == NULL ? "no handler"
			       : "want 4 printable bytes, at most 64 words");
		return -1;
	}
	return 0;
}

JM4LW_API int jm4lw_bound_addr(const struct jm4lw *m, int i, char *buf,
    size_t len)
{
	if (i < 0 || i >= m->nls)
		return -1;
	snprintf(buf, len, "%s", m->ls[i].addr);
	return 0;
}

void server_set_mode(struct jm4lw *m, const char *mode)
{
	m->proto.mode = mode;
}

int server_listen_fds(const struct jm4lw *m, int *fds, int max)
{
	int i;

	for (i = 0; i < m->nls && i < max; i++)
		fds[i] = evconnlistener_get_fd(m->ls[i].lev);
	return i;
}

JM4LW_API struct jm4lw *jm4lw_new(struct event_base *base,
    const struct jm4lw_config *cfg, char *err, size_t errlen)
{
	const struct proto_ops *ops;
	struct jm4lw *m;

	if (base == NULL) {
		snprintf(err, errlen, "no event_base");
		return NULL;
	}
	if (config_check_module(cfg, err, errlen) == -1)
		return NULL;
	if ((ops = proto_jemalloc()) == NULL) {
		snprintf(err, errlen, "this process does not run on jemalloc "
		    "(no mallctl symbol)");
		return NULL;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	if (server_set_acl(m, cfg->allow_from, err, errlen) == -1) {
		free(m);
		return NULL;
	}
	m->base = base;
	m->cfg = *cfg;
	memcpy(m->listen_req, cfg->listen, sizeof(m->listen_req));
	m->cfg.listen[0] = '\0'; /* nothing bound yet */
	m->logfn = log_stderr;
	m->log_max = JM4LW_LOG_INFO;
	TAILQ_INIT(&m->conns);
	proto_init(&m->proto, ops, &m->cfg);
	m->proto.log = server_proto_log;
	m->proto.log_arg = m;
	if ((m->resume = evtimer_new(base, server_resume, m)) == NULL ||
	    server_schedule(m, NULL) == -1) {
		snprintf(err, errlen, "cannot create timers");
		jm4lw_free(m);
		return NULL;
	}
	return m;
}

JM4LW_API void jm4lw_set_log(struct jm4lw *m, jm4lw_log_fn fn, void *arg)
{
	m->logfn = fn != NULL ? fn : log_stderr;
	m->logarg = fn != NULL ? arg : NULL;
	m->log_max = fn != NULL ? JM4LW_LOG_DEBUG : JM4LW_LOG_INFO;
}

JM4LW_API void jm4lw_set_log_level(struct jm4lw *m, int max_level)
{
	m->log_max = max_level;
}

JM4LW_API int jm4lw_reconfigure(struct jm4lw *m,
    const struct jm4lw_config *cfg, char *err, size_t errlen)
{
	char listen[sizeof(m->cfg.listen)];
	struct jm4lw_config old;

	if (config_check_module(cfg, err, errlen) == -1 ||
	    server_set_acl(m, cfg->allow_from, err, errlen) == -1)
		return -1;
	/* Listeners stay as they are; conf keeps showing what is bound. */
	memcpy(listen, m->cfg.listen, sizeof(listen));
	old = m->cfg;
	m->cfg = *cfg;
	memcpy(m->cfg.listen, listen, sizeof(listen));
	server_check_allow(m);
	if (server_schedule(m, &old) == -1) {
		snprintf(err, errlen, "cannot create the dump timers");
		return -1;
	}
	return 0;
}

JM4LW_API void jm4lw_free(struct jm4lw *m)
{
	int i;

	if (m == NULL)
		return;
	while (!TAILQ_EMPTY(&m->conns))
		conn_close(TAILQ_FIRST(&m->conns));
	for (i = 0; i < m->nls; i++)
		evconnlistener_free(m->ls[i].lev);
	if (m->resume != NULL)
		event_free(m->resume);
	if (m->dump_timer != NULL)
		event_free(m->dump_timer);
	if (m->growth_timer != NULL)
		event_free(m->growth_timer);
	proto_fini(&m->proto);
	free(m);
}

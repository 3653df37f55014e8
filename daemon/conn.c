/*
 * Connections: one word each.
 *
 * A connection goes READ -> [JOB] -> WRITE -> LINGER -> closed:
 *   READ    collect the first 4 bytes (read_timeout), then dispatch;
 *   JOB     the worker computes the reply (jmfp); the peer waits;
 *   WRITE   send the reply with MSG_NOSIGNAL (write_timeout without
 *           progress drops the peer);
 *   LINGER  shutdown(SHUT_WR) and discard what the peer still sends until
 *           it closes, so our close is a FIN: closing with unread bytes
 *           (the "\n" nc sends) would make the kernel reset the connection
 *           and could destroy the reply before the peer read it.
 * Plain events and an evbuffer rather than bufferevents: we read at most a
 * small buffer at a time and can send with MSG_NOSIGNAL, so the host never
 * has to ignore SIGPIPE for us.
 *
 * Slots: at max_connections (or max_connections_per_peer for one address)
 * a new peer takes the slot of the oldest peer that has not sent its word
 * yet (one whose word waits unread in its socket has sent it): an idle or
 * trickling peer is the cheapest thing to drop, and a flood of them can no
 * longer keep the operator's health check out. Next come peers that have their
 * whole reply and only hold the slot by not closing. Only when every slot holds
 * a peer whose reply is under way (computed, or being sent) is the new one
 * refused.
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "answer.h"
#include "conn.h"
#include "jobs.h"
#include "life.h"
#include "log.h"
#include "module.h"
#include "result.h"

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

#define LINGER_SECONDS 2        /* wait this long for the peer's FIN */
#define DISCARD_MAX (64 * 1024) /* bytes after the word we read at most */
#define SEND_IOV 16
#define REJECT_MIN 64 /* refusals in flight beyond the cap */

static void conn_read(evutil_socket_t, short, void *);
static void conn_write(evutil_socket_t, short, void *);
static int conn_ours(struct conn *c);

/* Close a connection and free everything it holds. */
void conn_close(struct conn *c)
{
	struct jm4lw *m = c->m;

	TAILQ_REMOVE(&m->conns, c, entry);
	if (c->rejecting)
		m->nrejecting--;
	else
		m->core.st.conns_open--;
	module_job_forget(m, c);
	if (!m->base_gone) { /* else the base deleted them as it went */
		event_del(c->rev);
		event_del(c->wev);
	}
	evbuffer_free(c->out);
	evutil_closesocket(c->fd);
	free(c);
}

/* proto's write callback: the reply goes into the output buffer. */
static void conn_write_cb(void *arg, const void *buf, size_t len)
{
	struct conn *c = arg;

	if (evbuffer_add(c->out, buf, len) == -1)
		conn_log(c, JM4LW_LOG_ERR, "out of memory for reply");
}

/*
 * A reply body from an open file (a view the worker rendered): mapped,
 * not copied into memory, and the fd is the buffer's to close. Not
 * sendfile: conn_flush() peeks the buffer into one sendmsg().
 */
static void conn_write_file(struct conn *c, int fd, size_t len)
{
	struct evbuffer_file_segment *seg;

	if (len == 0) {
		close(fd);
		return;
	}
	seg = evbuffer_file_segment_new(fd, 0, (ev_off_t)len,
	    EVBUF_FS_DISABLE_SENDFILE | EVBUF_FS_CLOSE_ON_FREE);
	if (seg == NULL) {
		close(fd);
		conn_log(c, JM4LW_LOG_ERR, "cannot map the reply");
		return;
	}
	if (evbuffer_add_file_segment(c->out, seg, 0, (ev_off_t)len) == -1)
		conn_log(c, JM4LW_LOG_ERR, "out of memory for reply");
	evbuffer_file_segment_free(seg); /* the buffer holds its own ref */
}

/* Wait for bytes from the peer, with or without a deadline. */
static void conn_want_read(struct conn *c, int seconds)
{
	struct timeval tv = {.tv_sec = seconds};

	event_add(c->rev, seconds > 0 ? &tv : NULL);
}

ssize_t sock_send_buffer(evutil_socket_t fd, struct evbuffer *b, size_t off)
{
	struct evbuffer_iovec v[SEND_IOV];
	struct iovec iov[SEND_IOV];
	struct evbuffer_ptr pos;
	struct msghdr msg;
	int i, nv;

	if (evbuffer_ptr_set(b, &pos, off, EVBUFFER_PTR_SET) == -1 ||
	    (nv = evbuffer_peek(b, -1, &pos, v, SEND_IOV)) <= 0)
		return 0;
	if (nv > SEND_IOV)
		nv = SEND_IOV;
	for (i = 0; i < nv; i++) {
		iov[i].iov_base = v[i].iov_base;
		iov[i].iov_len = v[i].iov_len;
	}
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.msg_iovlen = (size_t)nv;
	return sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Send what is buffered, as far as the socket takes it: 0 all sent, 1
 * the socket is full, -1 the peer is gone (logged). */
static int conn_push(struct conn *c)
{
	ssize_t n;

	while (evbuffer_get_length(c->out) > 0) {
		n = sock_send_buffer(c->fd, c->out, 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 1;
			conn_log(c, JM4LW_LOG_DEBUG, "send: %s",
			    strerror(errno));
			return -1;
		}
		evbuffer_drain(c->out, (size_t)n);
	}
	return 0;
}

/* Send what is buffered; on the last byte, half-close and linger. */
static void conn_flush(struct conn *c)
{
	struct timeval tv;

	if (!conn_ours(c)) /* a fork in the word's handler: the parent's */
		return;
	switch (conn_push(c)) {
	case 1:
		tv.tv_sec = c->m->cfg.write_timeout;
		tv.tv_usec = 0;
		event_add(c->wev, &tv);
		return;
	case -1:
		conn_close(c);
		return;
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
 * jm4lw_free: the module goes now, without another turn of the loop. A
 * reply (the word that freed the module, a cancelled dump's error line)
 * goes out as far as the socket takes it at once; then a FIN, after
 * reading away what the peer sent, so that the close is not a reset that
 * would destroy the reply in flight (see conn_evict).
 */
void conn_finish(struct conn *c)
{
	char buf[512];
	int i;

	if (!conn_ours(c))
		return;
	if (c->state == CONN_WRITE && conn_push(c) == 1)
		conn_log(c, JM4LW_LOG_WARN,
		    "reply cut short: the module was freed with %zu bytes "
		    "unsent",
		    evbuffer_get_length(c->out));
	if (c->state != CONN_LINGER)
		(void)shutdown(c->fd, SHUT_WR);
	for (i = 0; i < 128 && recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0;
	     i++)
		;
	conn_close(c);
}

/* The reply is complete in c->out: send it. */
static void conn_send(struct conn *c)
{
	c->state = CONN_WRITE;
	conn_flush(c);
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

/* A word's dump job ended: its peer gets the reply (a view's body
 * first, the file is the connection's now, then what the word says). */
static void conn_answer_job(struct jm4lw *m, void *arg, struct dump_result *r)
{
	struct conn *c = arg;
	struct out out = {.write = conn_write_cb, .arg = c};

	(void)m;
	if (r->status == DUMP_OK && r->body) {
		conn_write_file(c, r->body_fd, r->body_len);
		r->body = 0;
		r->body_fd = -1;
	}
	(void)answer_dump(&out, r);
	conn_send(c);
}

/* The word is complete: run it, or hand it to the worker. */
static void conn_dispatch(struct conn *c)
{
	struct out out = {.write = conn_write_cb, .arg = c};
	const struct proto_word *w = proto_lookup(c->word);
	struct proto_result res;
	int r;

	r = proto_dispatch(&c->m->proto, c->word, &out, &res);
	conn_log(c, JM4LW_LOG_DEBUG, "word %s%s", w ? w->name : "(unknown)",
	    r == PROTO_ERROR     ? " -> error"
	        : r == PROTO_JOB ? " -> worker"
	                         : "");
	/*
	 * Keep reading, only to notice EOF and discard, with no deadline:
	 * write_timeout governs now. Dropping the timer leaves the fd in
	 * epoll, where a del and re-add would cost two epoll_ctl calls per
	 * connection.
	 */
	event_remove_timer(c->rev);
	if (r == PROTO_JOB) {
		struct job_waiter jw = {conn_answer_job, c};

		c->state = CONN_JOB;
		module_job(c->m, &jw, &res.req);
		return;
	}
	conn_send(c);
}

/* Readable (or timed out): fill the word, or discard after it. */
static void conn_on_read(evutil_socket_t fd, short what, void *arg)
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
		conn_log(c, JM4LW_LOG_DEBUG, "recv: %s", strerror(errno));
		conn_close(c);
		return;
	}
	if (n == 0) {
		/* Before the word: nothing to answer. After: done. */
		if (c->state == CONN_READ || c->state == CONN_LINGER) {
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
		if (proto_frame(c->head, c->have, c->word) == 4) {
			struct jm4lw *m = c->m; /* c may be gone after */
			int was = module_unsampled_enter(m);
			conn_dispatch(c);
			module_unsampled_leave(m, was);
		} else
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
static void conn_on_write(evutil_socket_t fd, short what, void *arg)
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

/*
 * Whether @p c is this process's. A host that forks and runs its loop on
 * in the child (event_reinit) has a copy of every connection of its
 * parent: the socket is the parent's peer's, so the child must neither
 * read it (the parent's bytes), write it, nor shut it down (the parent's
 * reply cut short). The child lets go of its copy (close() alone, which
 * leaves the parent's socket open) at its first event, or at jm4lw_free.
 */
static int conn_ours(struct conn *c)
{
	if (c->pid == getpid())
		return 1;
	conn_close(c);
	return 0;
}

/* The loop's read callback: a host's jm4lw_free() in the word's handler
 * (or the log) waits until conn_on_read() is done with the connection. */
static void conn_read(evutil_socket_t fd, short what, void *arg)
{
	struct jm4lw *m = ((struct conn *)arg)->m;

	module_enter(m);
	if (conn_ours(arg))
		conn_on_read(fd, what, arg);
	module_leave(m);
}

/* The loop's write callback, counted as conn_read(). */
static void conn_write(evutil_socket_t fd, short what, void *arg)
{
	struct jm4lw *m = ((struct conn *)arg)->m;

	module_enter(m);
	if (conn_ours(arg))
		conn_on_write(fd, what, arg);
	module_leave(m);
}

/*
 * A connection object for @p fd, not yet counted or watched. In embedded
 * mode the loop is the host's thread, whose allocations jemalloc samples
 * and which waits on jemalloc's profiling locks while a dump holds them:
 * so the connection and its two events are one allocation (events placed
 * with event_assign() in room sized by libevent at run time), and the
 * reply buffer the second.
 */
static struct conn *conn_new(struct jm4lw *m, evutil_socket_t fd,
    const struct sockaddr *sa, int salen)
{
	size_t evsize = event_get_struct_event_size();
	size_t at = (sizeof(struct conn) + 15) & ~(size_t)15;
	struct conn *c;

	if ((c = calloc(1, at + 2 * evsize)) == NULL)
		return NULL;
	c->m = m;
	c->fd = fd;
	c->pid = getpid();
	if (salen > 0 && (size_t)salen <= sizeof(c->sa))
		memcpy(&c->sa, sa, (size_t)salen);
	c->rev = (struct event *)((char *)c + at);
	c->wev = (struct event *)((char *)c + at + evsize);
	if (event_assign(c->rev, m->base, fd, EV_READ | EV_PERSIST, conn_read,
	        c) == -1 ||
	    event_assign(c->wev, m->base, fd, EV_WRITE | EV_PERSIST, conn_write,
	        c) == -1 ||
	    (c->out = evbuffer_new()) == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

/*
 * Refuse a connection with one line. It goes out like any reply —
 * half-close, then drain the peer's word until its FIN — because closing
 * with the word unread would reset the connection and the peer would see
 * "connection reset" instead of the reason. Refusals in flight have a cap
 * of their own (max_connections + REJECT_MIN, each a few hundred bytes for
 * at most LINGER_SECONDS); beyond it, best effort and close.
 */
static void conn_reject(struct jm4lw *m, evutil_socket_t fd,
    const struct sockaddr *sa, int salen, int per_peer)
{
	char line[160];
	struct conn *c;
	int n;

	m->core.st.conns_rejected++;
	if (per_peer)
		n = snprintf(line, sizeof(line),
		    JM4LW_ERROR_PREFIX "too many "
		                       "connections from this address "
		                       "(max_connections_per_peer=%u)\n",
		    m->cfg.max_connections_per_peer);
	else
		n = snprintf(line, sizeof(line),
		    JM4LW_ERROR_PREFIX "too many "
		                       "connections (max_connections=%u)\n",
		    m->cfg.max_connections);
	log_peer(m, JM4LW_LOG_DEBUG, sa,
	    "rejected: every slot%s is "
	    "answering a word",
	    per_peer ? " of this address" : "");
	if (m->nrejecting < REJECT_MIN + m->cfg.max_connections &&
	    (c = conn_new(m, fd, sa, salen)) != NULL &&
	    evbuffer_add(c->out, line, (size_t)n) == 0) {
		c->rejecting = 1;
		TAILQ_INSERT_TAIL(&m->conns, c, entry);
		m->nrejecting++;
		conn_want_read(c, 0); /* to drain the word and see EOF */
		conn_send(c);
		return;
	}
	(void)send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	evutil_closesocket(fd);
}

/*
 * Has @p c's word arrived unread? Under a burst the listener accepts many
 * peers in one go before any of their reads is looked at, so a peer whose
 * word sits in the socket would look idle; it is not, and closing it with
 * that word unread would even reset its connection.
 */
static int conn_word_waiting(const struct conn *c)
{
	char b[4];
	ssize_t n = recv(c->fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);

	return n > 0 && c->have + (size_t)n >= 4;
}

/*
 * Close @p c for a newcomer. A lingering peer has its whole reply; what
 * it sent since is read away first, so our close is still a FIN and not
 * a reset that could destroy the reply in flight.
 */
static void conn_evict(struct conn *c)
{
	char buf[512];

	c->m->core.st.conns_evicted++;
	if (c->state == CONN_LINGER)
		while (recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
	conn_log(c, JM4LW_LOG_DEBUG,
	    "closed: %s, and a new peer needs the "
	    "slot",
	    c->state == CONN_READ ? "no word yet" : "reply sent");
	conn_close(c);
}

/*
 * The connection to drop for a newcomer (of peer @p sa only, unless
 * NULL): the oldest still waiting for a word that has not come, or else
 * the oldest that has its reply and only lingers; NULL when every one is
 * answering a word.
 */
static struct conn *conn_victim(struct jm4lw *m, const struct sockaddr *sa)
{
	struct conn *c, *linger = NULL;

	TAILQ_FOREACH(c, &m->conns, entry) {
		if (c->rejecting ||
		    (sa != NULL &&
		        !addr_same_host((const struct sockaddr *)&c->sa, sa)))
			continue;
		if (c->state == CONN_READ && !conn_word_waiting(c))
			return c;
		if (c->state == CONN_LINGER && linger == NULL)
			linger = c;
	}
	return linger;
}

/*
 * Make room for a peer at @p sa: 0 when there is a slot (perhaps after
 * evicting a connection), -1 when every candidate slot is answering a
 * word (*per_peer says which cap). A peer at its own cap makes room from
 * its own connections only.
 */
static int conn_make_room(struct jm4lw *m, const struct sockaddr *sa,
    int *per_peer)
{
	struct conn *c;
	unsigned same = 0;

	TAILQ_FOREACH(c, &m->conns, entry)
		same += !c->rejecting &&
		    addr_same_host((const struct sockaddr *)&c->sa, sa);
	*per_peer = same >= m->cfg.max_connections_per_peer;
	if (!*per_peer && m->core.st.conns_open < m->cfg.max_connections)
		return 0;
	if ((c = conn_victim(m, *per_peer ? sa : NULL)) == NULL)
		return -1;
	conn_evict(c);
	return 0;
}

/* A new peer, already past allow_from: make room, then wait for its word. */
void conn_accept(struct jm4lw *m, evutil_socket_t fd, const struct sockaddr *sa,
    int salen)
{
	struct conn *c;
	int per_peer;

	if (conn_make_room(m, sa, &per_peer) == -1) {
		conn_reject(m, fd, sa, salen, per_peer);
		return;
	}
	if ((c = conn_new(m, fd, sa, salen)) == NULL) {
		log_peer(m, JM4LW_LOG_ERR, sa,
		    "out of memory, connection "
		    "dropped");
		evutil_closesocket(fd);
		return;
	}
	c->state = CONN_READ;
	TAILQ_INSERT_TAIL(&m->conns, c, entry);
	m->core.st.conns_open++;
	m->core.st.conns_total++;
	event_base_gettimeofday_cached(m->base, &c->deadline);
	c->deadline.tv_sec += m->cfg.read_timeout;
	conn_want_read(c, (int)m->cfg.read_timeout);
}

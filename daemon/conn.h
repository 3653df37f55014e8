/*
 * conn — a connection of the words' port (daemon/conn.c): one word, its
 * reply, the caps; and the one sender of a reply's bytes, which the HTTP
 * face's last flush uses too.
 */
#ifndef JM4LW_CONN_H
#define JM4LW_CONN_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>

#include <event2/util.h>

struct evbuffer;
struct jm4lw;

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

#endif

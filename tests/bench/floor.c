/*
 * floor: the least a four-letter-word port can do, as a yardstick for
 * jm4lwd's ruok throughput.
 *
 *	floor [-l addr:port] [-m linger|close]
 *
 * One thread, level-triggered epoll, accept4() until EAGAIN, listen
 * backlog 128 (as jm4lwd). For each connection: read until 4 bytes have
 * come (any 4 bytes: no word table, no check), send "imok", then
 *	-m linger (default) what jm4lwd does on the wire: shutdown(SHUT_WR),
 *	          read and discard until the peer's EOF, close. The close
 *	          is a FIN, never a reset, whatever the peer sent after the
 *	          word; it costs one more wake-up per connection.
 *	-m close  close at once. Reads take up to 512 bytes, so the "\n"
 *	          after the word is normally consumed and the close is a FIN;
 *	          a peer whose bytes arrive later gets a reset. The shortest
 *	          possible path, shown for reference only.
 * What it leaves out is what jm4lwd's robustness costs: no timeouts, no
 * connection cap, no allow_from, no statistics, no log, no allocation per
 * connection. The fair comparison is jm4lwd against -m linger.
 *
 * Logs "floor: listening on ADDR:PORT" on stderr; exits 0 on SIGTERM or
 * SIGINT.
 */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FD 65536
#define BACKLOG 128

/* Per descriptor: bytes of the word seen so far; 0xff once answered. */
static unsigned char seen[MAX_FD];
static volatile sig_atomic_t done;
static int linger_mode = 1;

/* SIGTERM/SIGINT: leave the loop. */
static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

/* Bind and listen on "ADDR:PORT" (IPv4), non-blocking. */
static int listen_on(const char *spec)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	char host[64], *colon;
	int fd, one = 1;

	snprintf(host, sizeof(host), "%s", spec);
	if ((colon = strrchr(host, ':')) == NULL)
		return -1;
	*colon = '\0';
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, BACKLOG) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		close(fd);
		return -1;
	}
	fprintf(stderr, "floor: listening on %s:%u\n", host,
	    ntohs(sin.sin_port));
	return fd;
}

/* Take every pending connection and watch it for its word. */
static void accept_all(int ep, int lfd)
{
	struct epoll_event ev;
	int fd;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return; /* EAGAIN, or out of descriptors: try later */
		}
		if (fd >= MAX_FD) {
			close(fd);
			continue;
		}
		seen[fd] = 0;
		ev.events = EPOLLIN;
		ev.data.fd = fd;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1)
			close(fd);
	}
}

/* Readable: the word (answer it) or, after the answer, EOF (close). */
static void conn_read(int fd)
{
	char buf[512];
	ssize_t n;

	n = recv(fd, buf, sizeof(buf), 0);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close(fd);
		return;
	}
	if (seen[fd] == 0xff)
		return; /* discarding after the answer */
	if ((size_t)seen[fd] + (size_t)n < 4) {
		seen[fd] += (unsigned char)n;
		return;
	}
	seen[fd] = 0xff;
	(void)send(fd, "imok", 4, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (linger_mode)
		shutdown(fd, SHUT_WR);
	else
		close(fd);
}

int main(int argc, char *argv[])
{
	struct epoll_event evs[256], ev;
	const char *addr = "127.0.0.1:0";
	struct sigaction sa;
	int ch, ep, lfd, i, n;

	while ((ch = getopt(argc, argv, "l:m:")) != -1) {
		switch (ch) {
		case 'l':
			addr = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "linger") == 0)
				linger_mode = 1;
			else if (strcmp(optarg, "close") == 0)
				linger_mode = 0;
			else
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc)
		goto usage;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((lfd = listen_on(addr)) == -1) {
		fprintf(stderr, "floor: listen %s: %s\n", addr,
		    errno ? strerror(errno) : "bad address");
		return 1;
	}
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		return 1;
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) == -1)
		return 1;
	while (!done) {
		n = epoll_wait(ep, evs, 256, -1);
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == lfd)
				accept_all(ep, lfd);
			else
				conn_read(evs[i].data.fd);
		}
	}
	close(ep);
	close(lfd);
	return 0;
usage:
	fprintf(stderr, "usage: floor [-l addr:port] [-m linger|close]\n");
	return 2;
}

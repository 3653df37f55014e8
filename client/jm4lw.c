/*
 * jm4lw: send four-letter words to a jm4lw admin port, print the replies.
 *
 *	jm4lw [-h host] [-p port] [-t seconds] word ...
 *	echo jmfp | jm4lw host port
 *
 * One TCP connection per word, as the protocol wants. Exit status: 0 every
 * reply was ok, 1 the server answered an error line, 2 no answer or bad usage.
 * Depends on libc only, so it can be copied onto any box next to a service.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jm4lw.h"

#define MAX_REPLY   (64u << 20) /* jmst/jmsj are large, never this large */
#define MAX_WORDS   4096
#define MAX_TIMEOUT 86400.0

enum { ST_OK = 0, ST_ERROR = 1, ST_FAIL = 2 };

struct target {
	char host[NI_MAXHOST]; /* without the brackets of [::1] */
	const char *port;
	char name[NI_MAXHOST + 16]; /* HOST:PORT for messages */
	struct addrinfo *ai;
	const char *timeout; /* as written, for messages */
	int64_t timeout_ms;
};

struct words {
	char w[MAX_WORDS][4];
	size_t n;
};

struct buf {
	char *data;
	size_t len;
	size_t size;
};

static const char usage_text[] =
    "usage: jm4lw [-h host] [-p port] [-t seconds] word ...\n"
    "       jm4lw [-t seconds] host port    (words on stdin, one per line)\n"
    "       jm4lw -V | --help\n"
    "  -h host     server name or address (default 127.0.0.1)\n"
    "  -p port     server port (default 9181)\n"
    "  -t seconds  limit per word, connect to last byte (default 10)\n"
    "exit status: 0 ok, 1 the server answered with an error line,\n"
    "  2 no answer (resolve, connect, timeout, reset) or bad usage\n";

/* msg() with a va_list, shared with bad_usage(). */
static void __attribute__((format(printf, 1, 0)))
vmsg(const char *fmt, va_list ap)
{
	fputs("jm4lw: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Print one "jm4lw: ..." line on stderr. */
static void __attribute__((format(printf, 1, 2))) msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

/* Report a usage error and return the exit status for it. */
static int __attribute__((format(printf, 1, 2))) bad_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputs(usage_text, stderr);
	return ST_FAIL;
}

/* Show bytes from the network or stdin safely in a message, cut to fit. */
static const char *vis(const char *s, size_t len, char *dst, size_t size)
{
	unsigned char c;
	size_t i, o = 0;

	/* Keep room for one \xNN, the "..." and the NUL. */
	for (i = 0; i < len && o + 8 < size; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"')
			dst[o++] = (char)c;
		else
			o += (size_t)snprintf(dst + o, size - o, "\\x%02x", c);
	}
	if (i < len)
		o += (size_t)snprintf(dst + o, size - o, "...");
	dst[o] = '\0';
	return dst;
}

/* Milliseconds on a clock that does not jump. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait until fd is ready for events. ETIME once the deadline passed: not
 * ETIMEDOUT, which the kernel gives for a connect that got no answer.
 */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int64_t left;
	int n;

	for (;;) {
		/* Checked even when data is ready: a trickling peer must not
		 * stretch the limit. */
		if ((left = deadline - now_ms()) <= 0) {
			errno = ETIME;
			return -1;
		}
		if ((n = poll(&pfd, 1, (int)left)) > 0)
			return 0;
		if (n == -1 && errno != EINTR)
			return -1;
	}
}

/* Add a word (exactly 4 bytes) to the list, or say why it is not one. */
static int words_add(struct words *w, const char *s, size_t len,
                     const char *where)
{
	char shown[64];

	if (len != 4) {
		msg("%s\"%s\": a word is exactly 4 bytes, not %zu", where,
		    vis(s, len, shown, sizeof shown), len);
		return -1;
	}
	if (w->n == MAX_WORDS) {
		msg("%stoo many words (at most %d)", where, MAX_WORDS);
		return -1;
	}
	memcpy(w->w[w->n++], s, 4);
	return 0;
}

/* Read nc-shaped input: one word per line, blank lines skipped. */
static int words_read(struct words *w, FILE *f)
{
	char line[64], where[32];
	size_t len, start, lineno = 0;
	int c;

	for (;;) {
		len = 0;
		while ((c = getc(f)) != EOF && c != '\n') {
			if (len < sizeof line)
				line[len] = (char)c;
			len++;
		}
		if (c == EOF && len == 0)
			break;
		snprintf(where, sizeof where, "stdin:%zu: ", ++lineno);
		if (len > sizeof line) {
			msg("%sline too long for a word", where);
			return -1;
		}
		while (len > 0 && memchr(" \t\r", line[len - 1], 3) != NULL)
			len--;
		for (start = 0; start < len && memchr(" \t", line[start], 2);)
			start++;
		if (start == len)
			continue;
		if (words_add(w, line + start, len - start, where) == -1)
			return -1;
	}
	if (ferror(f)) {
		msg("stdin: %s", strerror(errno));
		return -1;
	}
	if (w->n == 0) {
		msg("no word on stdin");
		return -1;
	}
	return 0;
}

/* Check host, port and timeout and fill in the target; no I/O yet. */
static int target_init(struct target *t, const char *host, const char *port,
                       const char *timeout)
{
	size_t len = strlen(host);
	char *end;
	double sec;
	long p;

	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
	}
	if (len == 0 || len >= sizeof t->host)
		return bad_usage("bad host \"%s\"", host);
	memcpy(t->host, host, len);
	t->host[len] = '\0';

	if (port[strspn(port, "0123456789")] != '\0' || strlen(port) > 5 ||
	    (p = strtol(port, NULL, 10)) < 1 || p > 65535)
		return bad_usage("bad port \"%s\": 1 to 65535", port);
	t->port = port;

	errno = 0;
	sec = strtod(timeout, &end);
	if (end == timeout || *end != '\0' || errno != 0 || !isfinite(sec) ||
	    sec <= 0 || sec > MAX_TIMEOUT)
		return bad_usage("bad timeout \"%s\": seconds, more than 0 "
		                 "and at most %.0f",
		                 timeout, MAX_TIMEOUT);
	t->timeout = timeout;
	t->timeout_ms = (int64_t)(sec * 1000);
	if (t->timeout_ms < 1)
		t->timeout_ms = 1;

	/* Brackets again so the port stands apart from an IPv6 address. */
	if (strchr(t->host, ':') != NULL)
		snprintf(t->name, sizeof t->name, "[%s]:%s", t->host, port);
	else
		snprintf(t->name, sizeof t->name, "%s:%s", t->host, port);
	return 0;
}

/* Resolve the target once, for every word. */
static int target_resolve(struct target *t)
{
	struct addrinfo hints;
	int error;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((error = getaddrinfo(t->host, t->port, &hints, &t->ai)) != 0) {
		msg("%s: %s", t->name,
		    error == EAI_SYSTEM ? strerror(errno)
		                        : gai_strerror(error));
		return -1;
	}
	return 0;
}

/* Connect to the first address of the target that answers in time. */
static int conn_open(const struct target *t, int64_t deadline)
{
	struct addrinfo *ai;
	socklen_t len;
	int fd, error = EADDRNOTAVAIL;

	for (ai = t->ai; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family,
		            ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		            ai->ai_protocol);
		if (fd == -1) {
			error = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			return fd;
		error = errno;
		if (error == EINPROGRESS) {
			len = sizeof error;
			if (wait_fd(fd, POLLOUT, deadline) == -1)
				error = errno;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error,
			                    &len) == -1)
				error = errno;
			else if (error == 0)
				return fd;
		}
		close(fd);
		if (error == ETIME)
			break; /* the limit covers every address together */
	}
	errno = error;
	return -1;
}

/* Send the word and its newline, then half-close. */
static int conn_send(int fd, const char *word, int64_t deadline)
{
	char line[5];
	size_t off = 0;
	ssize_t n;

	memcpy(line, word, 4);
	line[4] = '\n'; /* what nc sends; the server ignores it */
	while (off < sizeof line) {
		/* MSG_NOSIGNAL rather than ignoring SIGPIPE, so that
		 * "jm4lw jmst | head" still ends quietly the usual way. */
		n = send(fd, line + off, sizeof line - off, MSG_NOSIGNAL);
		if (n >= 0)
			off += (size_t)n;
		else if (errno != EAGAIN && errno != EINTR)
			return -1;
		else if (wait_fd(fd, POLLOUT, deadline) == -1)
			return -1;
	}
	/* EOF tells the server there is nothing more. A failure here is a
	 * peer that is gone, which the read that follows reports. */
	shutdown(fd, SHUT_WR);
	return 0;
}

/* Read the whole reply, up to EOF, into b; EFBIG past MAX_REPLY. */
static int conn_read(int fd, int64_t deadline, struct buf *b)
{
	ssize_t n;
	size_t size;
	char *p;

	b->len = 0;
	for (;;) {
		if (b->len == b->size) {
			/* One byte past the cap tells "exactly 64 MiB" from
			 * "more". */
			if (b->size > MAX_REPLY) {
				errno = EFBIG;
				return -1;
			}
			size = b->size == 0 ? 65536 : b->size * 2;
			if (size > MAX_REPLY + 1)
				size = MAX_REPLY + 1;
			if ((p = realloc(b->data, size)) == NULL)
				return -1;
			b->data = p;
			b->size = size;
		}
		if (wait_fd(fd, POLLIN, deadline) == -1)
			return -1;
		n = recv(fd, b->data + b->len, b->size - b->len, 0);
		if (n == 0)
			return 0;
		if (n > 0)
			b->len += (size_t)n;
		else if (errno != EAGAIN && errno != EINTR)
			return -1;
	}
}

/* Say why an exchange failed, from the errno it left. */
static const char *reason(const struct target *t, int error, char *dst,
                          size_t size)
{
	if (error == ETIME)
		snprintf(dst, size, "timed out after %s s", t->timeout);
	else if (error == EFBIG)
		snprintf(dst, size, "reply larger than %u MiB",
		         MAX_REPLY >> 20);
	else
		snprintf(dst, size, "%s", strerror(error));
	return dst;
}

/* Is the reply one of the server's error lines? */
static int reply_is_error(const char *word, const struct buf *b)
{
	size_t plen = strlen(JM4LW_ERROR_PREFIX);
	size_t nlen = strlen(JM4LW_NOT_ALLOWED);

	if (b->len >= plen && memcmp(b->data, JM4LW_ERROR_PREFIX, plen) == 0)
		return 1;
	/* Refused by the allow list, in ZooKeeper's words. */
	return b->len >= 4 + nlen && memcmp(b->data, word, 4) == 0 &&
	       memcmp(b->data + 4, JM4LW_NOT_ALLOWED, nlen) == 0;
}

/* Ask one word on its own connection; the reply is left in b. */
static int ask(const struct target *t, const char *word, struct buf *b)
{
	char shown[32], why[64];
	int64_t deadline;
	int fd, status = ST_FAIL;

	b->len = 0;
	deadline = now_ms() + t->timeout_ms;
	if ((fd = conn_open(t, deadline)) == -1) {
		msg("%s: %s", t->name, reason(t, errno, why, sizeof why));
		return ST_FAIL;
	}
	vis(word, 4, shown, sizeof shown);
	if (conn_send(fd, word, deadline) == -1 ||
	    conn_read(fd, deadline, b) == -1) {
		msg("%s: %s: %s", t->name, shown,
		    reason(t, errno, why, sizeof why));
		b->len = 0; /* a cut reply is nothing a script can trust */
		goto out;
	}
	if (b->len == 0) {
		msg("%s: %s: empty reply", t->name, shown);
		status = ST_ERROR;
	} else
		status = reply_is_error(word, b) ? ST_ERROR : ST_OK;
out:
	close(fd);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'H'},
	    {NULL, 0, NULL, 0},
	};
	static struct words w;
	const char *host = NULL, *port = NULL, *timeout = "10";
	struct target t;
	struct buf b = {0};
	size_t i;
	int ch, st, status = ST_FAIL;

	memset(&t, 0, sizeof t);
	opterr = 0; /* our own messages, each followed by the usage */
	while ((ch = getopt_long(argc, argv, ":h:p:t:V", longopts, NULL)) !=
	       -1) {
		switch (ch) {
		case 'h':
			host = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 't':
			timeout = optarg;
			break;
		case 'V':
			printf("jm4lw %s\n", JM4LW_VERSION);
			return ST_OK;
		case 'H':
			fputs(usage_text, stdout);
			return ST_OK;
		case ':':
			return bad_usage("option -%c needs an argument",
			                 optopt);
		default:
			/* -? is not in the option string, so it lands here. */
			if (optopt == '?') {
				fputs(usage_text, stdout);
				return ST_OK;
			}
			if (optopt == 0)
				return bad_usage("unknown option %s",
				                 argv[optind - 1]);
			return bad_usage("unknown option -%c", optopt);
		}
	}
	argc -= optind;
	argv += optind;

	if (argc == 0)
		return bad_usage("no word given");
	if (argc == 2 && argv[1][0] != '\0' &&
	    argv[1][strspn(argv[1], "0123456789")] == '\0') {
		/* nc's shape: "jm4lw HOST PORT", words on stdin. */
		if (host != NULL || port != NULL)
			return bad_usage("host and port given twice");
		if (target_init(&t, argv[0], argv[1], timeout) != 0)
			return ST_FAIL;
		if (words_read(&w, stdin) == -1)
			goto out;
	} else {
		if (target_init(&t, host ? host : "127.0.0.1",
		                port ? port : "9181", timeout) != 0)
			return ST_FAIL;
		/* Every word is checked before the first connection. */
		for (i = 0; i < (size_t)argc; i++)
			if (words_add(&w, argv[i], strlen(argv[i]), "") == -1) {
				fputs(usage_text, stderr);
				goto out;
			}
	}
	if (target_resolve(&t) == -1)
		goto out;

	status = ST_OK;
	for (i = 0; i < w.n; i++) {
		if ((st = ask(&t, w.w[i], &b)) > status)
			status = st;
		if (b.len > 0)
			fwrite(b.data, 1, b.len, stdout);
		/* Keep replies apart, except that a single reply is passed
		 * through byte for byte: "imok" has no newline. */
		if (w.n > 1 && b.len > 0 && b.data[b.len - 1] != '\n')
			putchar('\n');
		if (fflush(stdout) == EOF) {
			msg("stdout: %s", strerror(errno));
			status = ST_FAIL;
			break;
		}
	}
out:
	if (t.ai != NULL)
		freeaddrinfo(t.ai);
	free(b.data);
	return status;
}

/*
 * jm4lw: send four-letter words to a jm4lw admin port, print the replies.
 *
 *	jm4lw [-h host] [-p port] [-t seconds] word ...
 *	jm4lw -H host:port,... | -H @file [-P n] word ...
 *	echo jmfp | jm4lw host port
 *	jm4lw -H host:port,... --merge [-f FORMAT] [-o FILE] [--dumps DIR]
 *
 * One TCP connection per word, as the protocol wants. Exit status: 0 every
 * reply was ok, 1 the server answered an error line, 2 no answer or bad usage;
 * with -H, the worst over every host and word.
 * Depends on libc only (pthreads are part of glibc since 2.34), so it can be
 * copied onto any box next to a service.
 *
 * --merge fetches each host's raw heap_v2 dump over HTTP (GET /pprof/heap,
 * the path remote jeprof reads; HTTP/1.0, so the body is the bytes up to
 * EOF) into a directory, then runs jm4lw-prof --merge on them: the merge
 * needs the symbolizer (libdw, zlib), which this client does not link.
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "formats.h"
#include "hostport.h"
#include "jm4lw.h"

#define MAX_REPLY (64u << 20) /* jmst/jmsj are large, never this large */
#define MAX_DUMP (1u << 30)   /* a dump of a real heap: tens of MB */
#define MAX_WORDS 4096
#define MAX_TIMEOUT 86400.0
#define MAX_HOSTS 4096
#define MAX_PAR 256 /* -P */
#define DEF_PAR 16

enum { ST_OK = 0, ST_ERROR = 1, ST_FAIL = 2 };

struct target {
	char host[NI_MAXHOST]; /* without the brackets of [::1] */
	char port[6];
	char name[NI_MAXHOST + 16]; /* HOST:PORT for messages and -H lines */
	struct addrinfo *ai;
	int status;  /* worst over its words */
	int fetched; /* --merge: its dump is in the directory */
};

struct words {
	char w[MAX_WORDS][4];
	size_t n;
};

/*
 * One run: the same words for every host. With -H, worker threads take
 * hosts in turn from next; lock covers next, out_failed and stdout, so a
 * reply is written whole and lines of different hosts never mix.
 */
struct run {
	struct words w;
	const char *timeout; /* as written, for messages */
	int64_t timeout_ms;
	struct target *t;
	size_t n, size;
	int prefix; /* several hosts: "HOST:PORT: " before every line */
	pthread_mutex_t lock;
	size_t next;
	int out_failed;
	const char *dumps; /* --merge: the directory the dumps go to */
};

struct buf {
	char *data;
	size_t len;
	size_t size;
};

/* The usage; %FORMATS% stands for what jm4lw-prof --merge draws, a list
 * the build asks jm4lw-prof for (its views[] table, prof/view.c), since
 * this client links no part of it. */
static const char usage_text[] =
    "usage: jm4lw [-h host] [-p port] [-t seconds] word ...\n"
    "       jm4lw -H hosts [-P n] [-p port] [-t seconds] word ...\n"
    "       jm4lw [-t seconds] host port    (words on stdin, one per line)\n"
    "       jm4lw -H hosts --merge [-f format] [-o file] [--dumps dir]\n"
    "       jm4lw -V | --version | --help\n"
    "  -h host     server name or address (default 127.0.0.1)\n"
    "  -p port     server port (default 9181; with -H, for hosts without one)\n"
    "  -t seconds  limit per word, connect to last byte (default 10)\n"
    "  -H hosts    ask many hosts, -P at once: name:port, 1.2.3.4:port,\n"
    "              [v6]:port or a bare name (port from -p), comma-separated;\n"
    "              -H @file reads them one per line (# comments, @- stdin);\n"
    "              -H may be repeated; at most 4096 hosts. With more than\n"
    "              one host, every output line starts with \"host:port: \"\n"
    "  -P n        hosts at once with -H, 1 to 256 (default 16)\n"
    "  --merge     fetch each host's heap dump over HTTP (GET /pprof/heap;\n"
    "              port 9182 unless given) and run jm4lw-prof --merge on them:\n"
    "              one profile of the fleet, -f %FORMATS%\n"
    "              (default text), to -o file or stdout\n"
    "  --dumps dir keep the fetched dumps there (default: a temporary\n"
    "              directory, removed after)\n"
    "exit status: 0 ok, 1 the server answered with an error line,\n"
    "  2 no answer (resolve, connect, timeout, reset) or bad usage;\n"
    "  with -H the worst over every host and word\n";

/* The usage to @p f: usage_text, its formats wrapped at 72 columns
 * under the text's column, as the lines around them are. */
static void usage_print(FILE *f)
{
	static const char mark[] = "%FORMATS%", list[] = JM4LW_MERGE_FORMATS;
	const char *at = strstr(usage_text, mark), *line = at, *w, *e;
	size_t col;

	while (line > usage_text && line[-1] != '\n')
		line--;
	col = (size_t)(at - line);
	fwrite(usage_text, 1, (size_t)(at - usage_text), f);
	for (w = list; *w != '\0'; w = *e != '\0' ? e + 1 : e) {
		e = w + strcspn(w, " ");
		if (w != list && col + 1 + (size_t)(e - w) > 72) {
			fprintf(f, "\n%14s", "");
			col = 14;
		} else if (w != list) {
			fputc(' ', f);
			col++;
		}
		fwrite(w, 1, (size_t)(e - w), f);
		col += (size_t)(e - w);
	}
	fputs(at + sizeof(mark) - 1, f);
}

/* msg() with a va_list, shared with bad_usage(). */
static void __attribute__((format(printf, 1, 0)))
vmsg(const char *fmt, va_list ap)
{
	char line[4096], *p = line;
	va_list again;
	int n;

	/* One line in one write(2): stderr is unbuffered, so stdio would
	 * write the prefix, the text and the newline apart, and another
	 * host's thread or a --merge child's line could land between them.
	 * A longer line than the buffer gets a buffer of its own. */
	va_copy(again, ap);
	n = vsnprintf(line + 7, sizeof(line) - 8, fmt, ap);
	if (n >= 0 && (size_t)n >= sizeof(line) - 8 &&
	    (p = malloc((size_t)n + 9)) != NULL)
		(void)vsnprintf(p + 7, (size_t)n + 1, fmt, again);
	else if (p == NULL || n < 0) {
		p = line;
		n = n < 0 ? 0 : (int)sizeof(line) - 9;
	}
	va_end(again);
	memcpy(p, "jm4lw: ", 7);
	p[7 + n] = '\n';
	flockfile(stderr);
	(void)fwrite(p, 1, (size_t)n + 8, stderr);
	funlockfile(stderr);
	if (p != line)
		free(p);
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
	usage_print(stderr);
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

/* Check the -t value; the limit applies to each word on each host. */
static int timeout_init(struct run *r, const char *timeout)
{
	char *end;
	double sec;

	errno = 0;
	sec = strtod(timeout, &end);
	if (end == timeout || *end != '\0' || errno != 0 || !isfinite(sec) ||
	    sec <= 0 || sec > MAX_TIMEOUT)
		return bad_usage("bad timeout \"%s\": seconds, more than 0 "
		                 "and at most %.0f",
		    timeout, MAX_TIMEOUT);
	r->timeout = timeout;
	r->timeout_ms = (int64_t)(sec * 1000);
	if (r->timeout_ms < 1)
		r->timeout_ms = 1;
	return 0;
}

/* Is s (len bytes, no NUL needed) a port, 1 to 65535? */
static int port_ok(const char *s, size_t len)
{
	unsigned long p;

	return hostport_digits(s, len, &p) && p >= 1 && p <= 65535;
}

/* Is s (len bytes) an IPv6 address, with or without a %scope? */
static int ipv6_ok(const char *s, size_t len)
{
	struct in6_addr a;
	char buf[INET6_ADDRSTRLEN];
	const char *pct = memchr(s, '%', len);

	if (pct != NULL)
		len = (size_t)(pct - s);
	if (len >= sizeof buf)
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return inet_pton(AF_INET6, buf, &a) == 1;
}

/* Add a target from a checked host (brackets off) and port. */
static int target_add(struct run *r, const char *host, size_t hlen,
    const char *port, size_t plen)
{
	struct target *t;
	size_t size;

	if (r->n == r->size) {
		size = r->size == 0 ? 16 : r->size * 2;
		if ((t = realloc(r->t, size * sizeof *t)) == NULL) {
			msg("%s", strerror(errno));
			return -1;
		}
		r->t = t;
		r->size = size;
	}
	t = &r->t[r->n++];
	memset(t, 0, sizeof *t);
	memcpy(t->host, host, hlen);
	memcpy(t->port, port, plen);
	/* Brackets again so the port stands apart from an IPv6 address. */
	if (memchr(host, ':', hlen) != NULL)
		snprintf(t->name, sizeof t->name, "[%s]:%s", t->host, t->port);
	else
		snprintf(t->name, sizeof t->name, "%s:%s", t->host, t->port);
	return 0;
}

/* Check -h or nc's HOST PORT and make it the one target; no I/O yet. */
static int target_init(struct run *r, const char *host, const char *port)
{
	size_t len = strlen(host);

	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
	}
	if (len == 0 || len >= NI_MAXHOST)
		return bad_usage("bad host \"%s\"", host);
	if (!port_ok(port, strlen(port)))
		return bad_usage("bad port \"%s\": 1 to 65535", port);
	return target_add(r, host, len, port, strlen(port)) == -1 ? ST_FAIL : 0;
}

/*
 * Add one -H entry: NAME:PORT, 1.2.3.4:PORT, [V6]:PORT, or a bare host with
 * the -p port. More than one colon without brackets must be a bare IPv6
 * address, as with -h ::1. where says "file:line: " for messages.
 */
static int entry_add(struct run *r, const char *s, size_t len,
    const char *defport, const char *where)
{
	const char *host = s, *port = defport, *why = NULL;
	size_t hlen = len, plen = strlen(defport), i;
	struct hostport hp;
	char shown[96];

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f || s[i] == ',')
			break;
	if (len == 0)
		why = "empty";
	else if (i < len)
		why = "spaces, commas or control characters in it";
	else
		switch (hostport_split(s, len, &hp)) {
		case HOSTPORT_NO_CLOSE:
			why = "[ without ]";
			break;
		case HOSTPORT_JUNK:
			why = "only :port may follow ]";
			break;
		case HOSTPORT_COLONS:
			if (!ipv6_ok(s, len))
				why = "more than one colon but not an IPv6 "
				      "address (with a port, write [v6]:port)";
			/* else a bare IPv6 address, as with -h ::1 */
			break;
		default:
			if (hp.bracketed && !ipv6_ok(hp.host, hp.hlen)) {
				why = "brackets hold an IPv6 address";
				break;
			}
			host = hp.host;
			hlen = hp.hlen;
			if (hp.port != NULL) {
				port = hp.port;
				plen = hp.plen;
			}
		}
	if (why == NULL && (hlen == 0 || hlen >= NI_MAXHOST))
		why = hlen == 0 ? "no host" : "host too long";
	if (why == NULL && !port_ok(port, plen))
		why = "port must be 1 to 65535";
	if (why != NULL) {
		msg("%sbad host entry \"%s\": %s", where,
		    vis(s, len, shown, sizeof shown), why);
		return -1;
	}
	if (r->n == MAX_HOSTS) {
		msg("%stoo many hosts (at most %d)", where, MAX_HOSTS);
		return -1;
	}
	return target_add(r, host, hlen, port, plen);
}

/* Add the entries of a -H list, split at commas. */
static int hosts_list(struct run *r, const char *arg, const char *defport)
{
	const char *comma;

	for (;;) {
		comma = strchr(arg, ',');
		if (entry_add(r, arg,
		        comma ? (size_t)(comma - arg) : strlen(arg), defport,
		        "") == -1)
			return -1;
		if (comma == NULL)
			return 0;
		arg = comma + 1;
	}
}

/* Add the hosts of a -H @file, one per line; "-" is stdin. */
static int hosts_file(struct run *r, const char *path, const char *defport)
{
	const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
	char *line = NULL, *where = NULL, *hash;
	size_t cap = 0, len, start, lineno = 0, before = r->n;
	ssize_t got;
	FILE *f;
	int rv = -1;

	if (*path == '\0') {
		msg("-H @: no file name");
		return -1;
	}
	if ((f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re")) == NULL) {
		msg("%s: %s", path, strerror(errno));
		return -1;
	}
	if ((where = malloc(strlen(name) + 32)) == NULL) {
		msg("%s", strerror(errno));
		goto out;
	}
	while ((got = getline(&line, &cap, f)) != -1) {
		lineno++;
		len = (size_t)got;
		if ((hash = memchr(line, '#', len)) != NULL)
			len = (size_t)(hash - line);
		while (len > 0 && memchr(" \t\r\n", line[len - 1], 4) != NULL)
			len--;
		for (start = 0; start < len && memchr(" \t", line[start], 2);)
			start++;
		if (start == len)
			continue;
		sprintf(where, "%s:%zu: ", name, lineno);
		if (entry_add(r, line + start, len - start, defport, where) ==
		    -1)
			goto out;
	}
	if (ferror(f))
		msg("%s: %s", name, strerror(errno));
	else if (r->n == before)
		msg("%s: no host in it", name);
	else
		rv = 0;
out:
	if (f != stdin)
		fclose(f);
	free(line);
	free(where);
	return rv;
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

/* Read the whole reply, up to EOF, into b; EFBIG past max. */
static int conn_read(int fd, int64_t deadline, struct buf *b, size_t max)
{
	ssize_t n;
	size_t size;
	char *p;

	b->len = 0;
	for (;;) {
		if (b->len == b->size) {
			/* One byte past the cap tells "exactly 64 MiB" from
			 * "more". */
			if (b->size > max) {
				errno = EFBIG;
				return -1;
			}
			size = b->size == 0 ? 65536 : b->size * 2;
			if (size > max + 1)
				size = max + 1;
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
static const char *reason(const struct run *r, int error, char *dst,
    size_t size)
{
	if (error == ETIME)
		snprintf(dst, size, "timed out after %s s", r->timeout);
	else if (error == EFBIG)
		snprintf(dst, size, "reply larger than %u MiB",
		    (r->dumps != NULL ? MAX_DUMP : MAX_REPLY) >> 20);
	else /* only errno values here: constant strings, thread-safe */
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
static int ask(const struct run *r, const struct target *t, const char *word,
    struct buf *b)
{
	char shown[32], why[64];
	int64_t deadline;
	int fd, status = ST_FAIL;

	b->len = 0;
	deadline = now_ms() + r->timeout_ms;
	if ((fd = conn_open(t, deadline)) == -1) {
		msg("%s: %s", t->name, reason(r, errno, why, sizeof why));
		return ST_FAIL;
	}
	vis(word, 4, shown, sizeof shown);
	if (conn_send(fd, word, deadline) == -1 ||
	    conn_read(fd, deadline, b, MAX_REPLY) == -1) {
		msg("%s: %s: %s", t->name, shown,
		    reason(r, errno, why, sizeof why));
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

/*
 * Write one reply to stdout whole, under the lock. One host: byte for byte,
 * as nc would. Several: "HOST:PORT: " before every line, and a last line
 * without newline ("imok") gets one. -1 once stdout failed.
 */
static int reply_print(struct run *r, const struct target *t,
    const struct buf *b)
{
	const char *p, *end, *nl;
	int rv = 0;

	pthread_mutex_lock(&r->lock);
	if (r->out_failed) {
		pthread_mutex_unlock(&r->lock);
		return -1;
	}
	if (!r->prefix && b->len > 0) {
		fwrite(b->data, 1, b->len, stdout);
		/* Keep replies apart, except that a single reply is passed
		 * through byte for byte: "imok" has no newline. */
		if (r->w.n > 1 && b->data[b->len - 1] != '\n')
			putchar('\n');
	} else if (r->prefix && b->len > 0) {
		end = b->data + b->len;
		for (p = b->data; p < end; p = nl + 1) {
			if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
				nl = end;
			fputs(t->name, stdout);
			fputs(": ", stdout);
			fwrite(p, 1, (size_t)(nl - p), stdout);
			putchar('\n');
		}
	}
	if (fflush(stdout) == EOF) {
		msg("stdout: %s", strerror(errno));
		r->out_failed = 1; /* the other hosts stop too */
		rv = -1;
	}
	pthread_mutex_unlock(&r->lock);
	return rv;
}

/* Where host @p t's dump goes: DIR/NNN-HOST_PORT.heap, numbered in
 * -H's order, the name's bytes other than [A-Za-z0-9.-] as '_'. */
static void dump_path(const struct run *r, const struct target *t, char *dst,
    size_t size)
{
	char name[sizeof(t->name)];
	size_t i;

	for (i = 0; t->name[i] != '\0' && i + 1 < sizeof(name); i++)
		name[i] =
		    strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
		           "VWXYZ0123456789.-",
		        t->name[i]) != NULL
		    ? t->name[i]
		    : '_';
	name[i] = '\0';
	snprintf(dst, size, "%s/%03zu-%s.heap", r->dumps, (size_t)(t - r->t),
	    name);
}

/* The Content-Length of the header from @p head to @p end (its blank
 * line): 0 with it in *@p v, or -1 when there is none or it is no
 * number (then the body runs to EOF, as HTTP/1.0 has it). */
static int content_length(const char *head, const char *end,
    unsigned long long *v)
{
	static const char key[] = "\r\ncontent-length:";
	const char *p;
	char *q;
	size_t k = sizeof(key) - 1;

	for (p = head; p + k <= end; p++)
		if (strncasecmp(p, key, k) == 0) {
			for (p += k; p < end && (*p == ' ' || *p == '\t'); p++)
				;
			if (p == end || !isdigit((unsigned char)*p))
				return -1;
			errno = 0;
			*v = strtoull(p, &q, 10);
			return errno == 0 && q <= end ? 0 : -1;
		}
	return -1;
}

/*
 * --merge: GET /pprof/heap from host @p t, its raw heap_v2 dump, into
 * dump_path(). HTTP/1.0 with Connection: close, so the body is what
 * follows the header up to EOF; with a Content-Length, the body must be
 * that long: a connection closed before (or inside the header) is a
 * failure (ST_FAIL) saying how far it got, a longer body the host's
 * error. Another status than 200, or a body that is not a heap_v2 dump,
 * is the host's error (ST_ERROR), with the status and the body's first
 * line on stderr.
 */
static int fetch_dump(const struct run *r, struct target *t, struct buf *b)
{
	char req[NI_MAXHOST + 128], shown[160], why[64], path[4096];
	const char *body, *eol;
	unsigned long long want;
	int64_t deadline;
	size_t off = 0, len;
	ssize_t n;
	FILE *f;
	int fd, code, v6 = strchr(t->host, ':') != NULL;

	deadline = now_ms() + r->timeout_ms;
	len = (size_t)snprintf(req, sizeof(req),
	    "GET /pprof/heap HTTP/1.0\r\nHost: %s%s%s:%s\r\n"
	    "Connection: close\r\n\r\n",
	    v6 ? "[" : "", t->host, v6 ? "]" : "", t->port);
	if ((fd = conn_open(t, deadline)) == -1) {
		msg("%s: %s", t->name, reason(r, errno, why, sizeof why));
		return ST_FAIL;
	}
	while (off < len) {
		n = send(fd, req + off, len - off, MSG_NOSIGNAL);
		if (n >= 0)
			off += (size_t)n;
		else if ((errno != EAGAIN && errno != EINTR) ||
		    wait_fd(fd, POLLOUT, deadline) == -1)
			break;
	}
	if (off < len || conn_read(fd, deadline, b, MAX_DUMP) == -1) {
		msg("%s: GET /pprof/heap: %s", t->name,
		    reason(r, errno, why, sizeof why));
		close(fd);
		return ST_FAIL;
	}
	close(fd);
	body = b->len >= 4 ? memmem(b->data, b->len, "\r\n\r\n", 4) : NULL;
	if (body == NULL && b->len >= 7 && memcmp(b->data, "HTTP/1.", 7) == 0) {
		msg("%s: GET /pprof/heap: connection closed after %zu bytes, "
		    "inside the HTTP header",
		    t->name, b->len);
		return ST_FAIL;
	}
	/* "HTTP/1.x NNN ...": the buffer is not a string, so by hand. */
	if (b->len < 12 || memcmp(b->data, "HTTP/1.", 7) != 0 || body == NULL ||
	    b->data[8] != ' ' || !isdigit((unsigned char)b->data[9]) ||
	    !isdigit((unsigned char)b->data[10]) ||
	    !isdigit((unsigned char)b->data[11])) {
		msg("%s: GET /pprof/heap: not an HTTP answer: %s", t->name,
		    vis(b->data, b->len < 40 ? b->len : 40, shown,
		        sizeof shown));
		return ST_ERROR;
	}
	code = (b->data[9] - '0') * 100 + (b->data[10] - '0') * 10 +
	    (b->data[11] - '0');
	body += 4;
	len = b->len - (size_t)(body - b->data);
	if (code == 200 && content_length(b->data, body, &want) == 0 &&
	    want != len) {
		if (len < want)
			msg("%s: GET /pprof/heap: connection closed after %zu of "
			    "%llu bytes of the body (its Content-Length)",
			    t->name, len, want);
		else
			msg("%s: GET /pprof/heap: a body of %zu bytes, longer "
			    "than its Content-Length of %llu",
			    t->name, len, want);
		return len < want ? ST_FAIL : ST_ERROR;
	}
	if (code != 200 || len < 8 || memcmp(body, "heap_v2/", 8) != 0) {
		eol = memchr(body, '\n', len);
		msg("%s: GET /pprof/heap: %s%d: %s", t->name,
		    code == 200 ? "not a heap_v2 dump, HTTP " : "HTTP ", code,
		    vis(body, eol != NULL ? (size_t)(eol - body) : len, shown,
		        sizeof shown));
		return ST_ERROR;
	}
	dump_path(r, t, path, sizeof(path));
	if ((f = fopen(path, "we")) == NULL || fwrite(body, 1, len, f) != len ||
	    fclose(f) != 0) {
		msg("%s: %s", path, strerror(errno));
		return ST_FAIL;
	}
	t->fetched = 1;
	return ST_OK;
}

/* Ask every word of one host in order; its worst status stays in t. */
static void host_run(struct run *r, struct target *t, struct buf *b)
{
	size_t i;
	int st;

	if (target_resolve(t) == -1) {
		t->status = ST_FAIL;
		return;
	}
	if (r->dumps != NULL)
		t->status = fetch_dump(r, t, b);
	for (i = 0; r->dumps == NULL && i < r->w.n; i++) {
		if ((st = ask(r, t, r->w.w[i], b)) > t->status)
			t->status = st;
		if (reply_print(r, t, b) == -1)
			break;
	}
	freeaddrinfo(t->ai);
	t->ai = NULL;
}

/* Take hosts in turn until none is left; run by each thread of the pool. */
static void *worker(void *arg)
{
	struct run *r = arg;
	struct buf b = {0};
	struct target *t;

	for (;;) {
		pthread_mutex_lock(&r->lock);
		t = r->out_failed || r->next == r->n ? NULL : &r->t[r->next++];
		pthread_mutex_unlock(&r->lock);
		if (t == NULL)
			break;
		host_run(r, t, &b);
	}
	free(b.data);
	return NULL;
}

/* jm4lw-prof: $JM4LW_PROF, else the one beside this program, else the
 * one on $PATH. */
static const char *prof_path(char *buf, size_t size)
{
	const char *env = getenv("JM4LW_PROF");
	ssize_t n;
	char *slash;

	if (env != NULL && env[0] != '\0')
		return env;
	if ((n = readlink("/proc/self/exe", buf, size - 16)) > 0) {
		buf[n] = '\0';
		if ((slash = strrchr(buf, '/')) != NULL) {
			strcpy(slash + 1, "jm4lw-prof");
			if (access(buf, X_OK) == 0)
				return buf;
		}
	}
	return "jm4lw-prof";
}

/*
 * --merge, once every host was asked: jm4lw-prof --merge -f @p format
 * [-o @p out] on the dumps fetched, in -H's order. Its exit status (2
 * when it could not be run or was killed).
 */
static int merge_run(const struct run *r, const char *format, const char *out)
{
	char **av, path[4096], prof[4096];
	size_t i, n = 0, k;
	int status = ST_FAIL, ws;
	pid_t pid;

	if ((av = calloc(r->n + 8, sizeof(*av))) == NULL) {
		msg("%s", strerror(errno));
		return ST_FAIL;
	}
	av[n++] = (char *)prof_path(prof, sizeof(prof));
	av[n++] = (char *)"--merge";
	av[n++] = (char *)"-f";
	av[n++] = (char *)format;
	if (out != NULL) {
		av[n++] = (char *)"-o";
		av[n++] = (char *)out;
	}
	k = n;
	for (i = 0; i < r->n; i++) {
		if (!r->t[i].fetched)
			continue;
		dump_path(r, &r->t[i], path, sizeof(path));
		if ((av[n] = strdup(path)) == NULL) {
			msg("%s", strerror(errno));
			goto out;
		}
		n++;
	}
	if (n == k) {
		msg("no host gave a dump: nothing to merge");
		goto out;
	}
	fflush(stdout);
	if ((pid = fork()) == -1) {
		msg("fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		execvp(av[0], av);
		msg("%s: %s", av[0], strerror(errno));
		_exit(ST_FAIL);
	}
	while (waitpid(pid, &ws, 0) == -1)
		if (errno != EINTR) {
			msg("waitpid: %s", strerror(errno));
			goto out;
		}
	status = WIFEXITED(ws) && WEXITSTATUS(ws) <= ST_FAIL ? WEXITSTATUS(ws)
	                                                     : ST_FAIL;
out:
	for (i = k; i < n; i++)
		free(av[i]);
	free(av);
	return status;
}

/* Remove the directory of dumps mkdtemp made, and what is in it. */
static void dumps_remove(const struct run *r)
{
	char path[4096];
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->t[i].fetched) {
			dump_path(r, &r->t[i], path, sizeof(path));
			unlink(path);
		}
	rmdir(r->dumps);
}

/*
 * Run every host, at most par at once. The main thread is one of the
 * workers, so one host or -P 1 starts no thread at all. A thread that cannot
 * be started only means fewer at once.
 */
static int run_all(struct run *r, long par)
{
	pthread_t tid[MAX_PAR];
	size_t i, started = 0;
	int status = ST_OK;

	for (i = 1; i < (size_t)par && i < r->n; i++)
		if (pthread_create(&tid[started], NULL, worker, r) == 0)
			started++;
	worker(r);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < r->n; i++)
		if (r->t[i].status > status)
			status = r->t[i].status;
	return r->out_failed ? ST_FAIL : status;
}

int main(int argc, char **argv)
{
	enum { OPT_HELP = 256, OPT_MERGE, OPT_DUMPS };
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, OPT_HELP},
	    {"version", no_argument, NULL, 'V'},
	    {"merge", no_argument, NULL, OPT_MERGE},
	    {"dumps", required_argument, NULL, OPT_DUMPS},
	    {NULL, 0, NULL, 0},
	};
	static struct run r = {.lock = PTHREAD_MUTEX_INITIALIZER};
	const char *host = NULL, *port = NULL, *timeout = "10", *par_arg = NULL;
	const char *format = NULL, *outpath = NULL, *dumps = NULL;
	char **hosts, tmpdir[4096] = "";
	size_t i, nhosts = 0;
	long par = DEF_PAR;
	char *end;
	int ch, status = ST_FAIL, merge = 0, st;

	/* Every -H, kept until -p is known: it may come later. */
	if ((hosts = calloc((size_t)argc, sizeof *hosts)) == NULL) {
		msg("%s", strerror(errno));
		return ST_FAIL;
	}
	opterr = 0; /* our own messages, each followed by the usage */
	while ((ch = getopt_long(argc, argv, ":h:p:t:H:P:Vf:o:", longopts,
	            NULL)) != -1) {
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
		case 'H':
			hosts[nhosts++] = optarg;
			break;
		case 'P':
			par_arg = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case OPT_MERGE:
			merge = 1;
			break;
		case OPT_DUMPS:
			dumps = optarg;
			break;
		case 'V':
			printf("jm4lw %s\n", JM4LW_VERSION);
			status = ST_OK;
			goto out;
		case OPT_HELP:
			usage_print(stdout);
			status = ST_OK;
			goto out;
		case ':':
			bad_usage("option -%c needs an argument", optopt);
			goto out;
		default:
			/* -? is not in the option string, so it lands here. */
			if (optopt == '?') {
				usage_print(stdout);
				status = ST_OK;
			} else if (optopt == 0)
				bad_usage("unknown option %s",
				    argv[optind - 1]);
			else
				bad_usage("unknown option -%c", optopt);
			goto out;
		}
	}
	argc -= optind;
	argv += optind;

	if (!merge && (format != NULL || outpath != NULL || dumps != NULL)) {
		bad_usage("-f, -o and --dumps go with --merge");
		goto out;
	}
	if (merge && argc > 0) {
		bad_usage("--merge takes no words (it asks GET /pprof/heap)");
		goto out;
	}
	if (merge) {
		/* The hosts' HTTP face: 9182 unless -p or -H say. */
		if (port == NULL)
			port = "9182";
		if (dumps != NULL && mkdir(dumps, 0700) == -1 &&
		    errno != EEXIST) {
			msg("%s: %s", dumps, strerror(errno));
			goto out;
		}
		if (dumps == NULL) {
			snprintf(tmpdir, sizeof(tmpdir),
			    "%s/jm4lw-merge.XXXXXX",
			    getenv("TMPDIR") != NULL && getenv("TMPDIR")[0]
			        ? getenv("TMPDIR")
			        : "/tmp");
			if (mkdtemp(tmpdir) == NULL) {
				msg("%s: %s", tmpdir, strerror(errno));
				goto out;
			}
			dumps = tmpdir;
		}
		r.dumps = dumps;
	} else if (argc == 0) {
		bad_usage("no word given");
		goto out;
	}
	if (timeout_init(&r, timeout) != 0)
		goto out;
	if (par_arg != NULL) {
		errno = 0;
		par = strtol(par_arg, &end, 10);
		if (end == par_arg || *end != '\0' || errno != 0 || par < 1 ||
		    par > MAX_PAR) {
			bad_usage("bad -P \"%s\": 1 to %d", par_arg, MAX_PAR);
			goto out;
		}
	}
	if (nhosts == 0 && argc == 2 && argv[1][0] != '\0' &&
	    argv[1][strspn(argv[1], "0123456789")] == '\0') {
		/* nc's shape: "jm4lw HOST PORT", words on stdin. */
		if (host != NULL || port != NULL) {
			bad_usage("host and port given twice");
			goto out;
		}
		if (target_init(&r, argv[0], argv[1]) != 0)
			goto out;
		if (words_read(&r.w, stdin) == -1)
			goto out;
	} else {
		if (nhosts == 0) {
			if (target_init(&r, host ? host : "127.0.0.1",
			        port ? port : "9181") != 0)
				goto out;
		} else if (host != NULL) {
			bad_usage("-h and -H together");
			goto out;
		} else if (port != NULL && !port_ok(port, strlen(port))) {
			bad_usage("bad port \"%s\": 1 to 65535", port);
			goto out;
		}
		/* Every word and host is checked before the first
		 * connection. */
		for (i = 0; !merge && i < (size_t)argc; i++)
			if (words_add(&r.w, argv[i], strlen(argv[i]), "") ==
			    -1) {
				usage_print(stderr);
				goto out;
			}
		for (i = 0; i < nhosts; i++) {
			if (hosts[i][0] == '@') {
				if (hosts_file(&r, hosts[i] + 1,
				        port ? port : "9181") == -1)
					goto out;
			} else if (hosts_list(&r, hosts[i],
			               port ? port : "9181") == -1) {
				usage_print(stderr);
				goto out;
			}
		}
	}
	r.prefix = r.n > 1;
	status = run_all(&r, par);
	if (merge && !r.out_failed &&
	    (st = merge_run(&r, format ? format : "text", outpath)) > status)
		status = st;
out:
	if (tmpdir[0] != '\0')
		dumps_remove(&r);
	free(r.t);
	free(hosts);
	return status;
}

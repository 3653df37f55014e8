/*
 * loadgen: a closed-loop load generator for four-letter-word ports.
 *
 *	loadgen [-h host] [-p port] [-c concurrency] [-d seconds] [-n requests]
 *	        [-w word] [-x prefix | -e exact] [-r refusal] [-i interval_ms]
 *	        [-k idle [-F] [-T trickle_ms]] [-W warmup] [-t timeout_ms]
 *	        [-o file] [-S] [-j]
 *
 * Each of the -c slots does connect -> send "WORD\n" -> read to EOF ->
 * close, and starts over at once (closed loop: the offered load is what the
 * server can take). One thread, epoll, non-blocking sockets. It stops after
 * -d seconds (default 5) or -n requests, whichever comes first; requests in
 * flight at that moment are finished, not dropped.
 *
 * Every reply is checked when its EOF arrives; a reply that fails the check
 * is WRONG, a connection that fails (refused, reset before a whole reply,
 * timed out, too big) is an ERROR:
 *	ruok	exactly "imok" (ZooKeeper's and our byte-identical reply)
 *	mntr	contains "jm4lw_version" or "zk_version"
 *	jmst	ends with "--- End jemalloc statistics ---\n"
 *	other	not empty and not an "error: " line
 *	-x P	starts with P (replaces the above), -e E: exactly E
 * A reset after a whole, correct reply (a server that closes with the
 * "\n" unread) is counted in resets, not as an error.
 *
 * -r R: a reply that starts with R is a refusal (say "error: too many
 * connections"): counted in refused, neither wrong nor in the latencies.
 *
 * -i I paces each slot: a slot starts its next request I ms after it
 * started the last one (or at once, if that took longer), so -c 1 -i 1 is
 * a steady prober of one connection per millisecond whose every latency
 * is recorded, not a load.
 *
 * -S spins: the load loop polls epoll without sleeping, so the client's
 * CPU never goes idle. A request that waits milliseconds for its reply
 * otherwise pays for waking a halted CPU (on a VM, hundreds of
 * microseconds); -S tells that cost, which is the machine's, apart from
 * the server's.
 *
 * -k K holds K more connections open for the whole run, connected and
 * silent, watching them: one the server closes is reconnected and counted
 * in idle_dropped. They are opened 32 per 10 ms (a burst beyond the
 * server's listen backlog would leave some waiting for a SYN-ACK
 * retransmission), and the load starts 0.5 s after all K are connected.
 * -F makes them a flood that a server with fewer slots cannot hold: each
 * one closed is reopened at once (at the same pace), without bound, the
 * load starts after 1 s whether or not all K are up, and drops are
 * figures, not failures. -T T makes every other holder trickle: one byte
 * of "ruok" every T ms (a slow client, not an idle one). -c 0 with -k:
 * holders only, no requests.
 *
 * Output: one line of key=value pairs (-j: one JSON object) with the
 * completed requests per second, latency percentiles in microseconds (from
 * socket() to EOF), errors and wrong replies. Exit status: 0 when there was
 * no error, no wrong reply and no dropped idle connection; 1 otherwise; 2
 * on a usage error.
 */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONC 4096
#define MAX_IDLE 60000
#define MAX_SECONDS 3600
#define MAX_REQUESTS 1000000000L
#define REPLY_MAX (8 * 1024 * 1024) /* a bigger reply is an error */
#define OUT_MAX (1024 * 1024)       /* -o stops appending after this */
#define IDLE_BATCH 32               /* idle connects per IDLE_TICK_NS */
#define IDLE_TICK_NS 10000000u      /* 10 ms: 3200 connects/s at most */
#define IDLE_SETTLE_NS 500000000u   /* then 0.5 s before the load */
#define IDLE_SETUP_SECONDS 20       /* all -k connections up by then */
#define DRAIN_SECONDS 30            /* in-flight requests after the end */
#define ERR_SHOW 5                  /* error lines on stderr, at most */

#define FLOOD_SETUP_NS 1000000000u /* -F: the load starts after 1 s */

/* Log-linear latency histogram over nanoseconds: exact below 256 ns,
 * then 128 buckets per power of two (under 1% error). */
#define H_SUB 128
#define H_LIN 256
#define H_BUCKETS (H_LIN + 56 * H_SUB)

enum slot_state { S_FREE, S_CONNECTING, S_READING, S_IDLE };

struct slot {
	int fd;
	int idle; /* a -k holder, not a request slot */
	enum slot_state state;
	uint64_t t0;   /* socket() time, ns */
	uint64_t next; /* -i: next start; -T: next trickled byte */
	int sent;      /* -T: bytes trickled on this connection */
	char *buf;
	size_t len, cap;
};

struct loadgen {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	const char *word;
	const char *prefix;   /* -x */
	const char *exact;    /* -e */
	const char *refusal;  /* -r */
	uint64_t interval_ns; /* -i */
	int flood;            /* -F */
	uint64_t trickle_ns;  /* -T */
	char req[8];
	int conc, nidle;
	double seconds, warmup;
	long limit; /* -n; 0: none */
	uint64_t timeout_ns;
	const char *outfile;
	FILE *out;
	size_t out_bytes;
	int json;
	int spin; /* -S */

	int ep;
	struct slot *slots; /* conc request slots, then nidle holders */
	long launched;      /* requests started (counts toward -n) */
	int inflight;
	int stopping;
	uint64_t idle_last; /* last idle_refill() batch */

	uint64_t hist[H_BUCKETS];
	uint64_t max_ns;
	long completed;
	uint64_t reply_bytes;
	long errors, wrong, resets, refused;
	long idle_dropped, trickled;
	int shown;
};

static volatile sig_atomic_t interrupted;

/* SIGINT/SIGTERM: finish what is in flight and report. */
static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Monotonic clock in nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Bucket of a latency in the log-linear histogram. */
static int hist_index(uint64_t v)
{
	int k, s;

	if (v < H_LIN)
		return (int)v;
	k = 63 - __builtin_clzll(v); /* v in [2^k, 2^(k+1)), k >= 8 */
	s = k - 7;                   /* v >> s in [128, 256) */
	return H_LIN + (s - 1) * H_SUB + (int)((v >> s) - H_SUB);
}

/* Middle of bucket @p i, in nanoseconds. */
static double hist_value(int i)
{
	int s, m;

	if (i < H_LIN)
		return i;
	s = (i - H_LIN) / H_SUB + 1;
	m = (i - H_LIN) % H_SUB + H_SUB;
	return ((double)((uint64_t)m << s) + (double)((uint64_t)(m + 1) << s)) /
	    2;
}

/* Latency at quantile @p q (0..1) in microseconds; the max is exact. */
static double hist_quantile(const struct loadgen *g, double q)
{
	uint64_t want, seen = 0;
	int i;

	if (g->completed == 0)
		return 0;
	want = (uint64_t)(q * (double)g->completed + 0.999999);
	if (want < 1)
		want = 1;
	for (i = 0; i < H_BUCKETS; i++) {
		seen += g->hist[i];
		if (seen >= want) {
			double v = hist_value(i);
			if (v > (double)g->max_ns)
				v = (double)g->max_ns;
			return v / 1000.0;
		}
	}
	return (double)g->max_ns / 1000.0;
}

/* Forget the figures so far (end of the warm-up); errors stay counted. */
static void stats_reset(struct loadgen *g)
{
	memset(g->hist, 0, sizeof(g->hist));
	g->max_ns = 0;
	g->completed = 0;
	g->reply_bytes = 0;
}

/* One line on stderr about a failure, for the first few only. */
static void show(struct loadgen *g, const char *what, const char *detail)
{
	if (g->shown++ < ERR_SHOW)
		fprintf(stderr, "loadgen: %s%s%s\n", what, detail ? ": " : "",
		    detail ? detail : "");
	else if (g->shown == ERR_SHOW + 1)
		fprintf(stderr, "loadgen: (further failures not shown)\n");
}

/* A wrong reply, printable: the first bytes with the rest escaped. */
static void show_wrong(struct loadgen *g, const struct slot *s)
{
	char buf[200];
	size_t i, n = 0;

	for (i = 0; i < s->len && n + 5 < sizeof(buf); i++) {
		unsigned char ch = (unsigned char)s->buf[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			buf[n++] = (char)ch;
		else
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			    "\\x%02x", ch);
	}
	buf[n] = '\0';
	show(g, "wrong reply", n ? buf : "(empty)");
}

/* Does @p hay (not NUL-terminated) contain @p needle? */
static int contains(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = 0; n <= len && i <= len - n; i++)
		if (memcmp(hay + i, needle, n) == 0)
			return 1;
	return 0;
}

/* Is this a right reply to our word? */
static int reply_ok(const struct loadgen *g, const char *r, size_t len)
{
	static const char end[] = "--- End jemalloc statistics ---\n";
	size_t n;

	if (g->exact != NULL)
		return len == strlen(g->exact) && memcmp(r, g->exact, len) == 0;
	if (g->prefix != NULL) {
		n = strlen(g->prefix);
		return len >= n && memcmp(r, g->prefix, n) == 0;
	}
	if (strcmp(g->word, "ruok") == 0)
		return len == 4 && memcmp(r, "imok", 4) == 0;
	if (strcmp(g->word, "mntr") == 0)
		return contains(r, len, "jm4lw_version") ||
		    contains(r, len, "zk_version");
	if (strcmp(g->word, "jmst") == 0)
		return len >= sizeof(end) - 1 &&
		    memcmp(r + len - (sizeof(end) - 1), end, sizeof(end) - 1) ==
		    0;
	return len > 0 && !(len >= 7 && memcmp(r, "error: ", 7) == 0);
}

/* Close a slot's socket (epoll forgets it with the close). */
static void slot_close(struct slot *s)
{
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	s->len = 0;
	s->state = S_FREE;
}

/* Start a connection on @p s: connected at once or waiting for EPOLLOUT. */
static int slot_connect(struct loadgen *g, struct slot *s)
{
	struct epoll_event ev;
	int fd;

	s->t0 = now_ns();
	s->len = 0;
	fd = socket(g->addr.ss_family,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	s->fd = fd;
	if (connect(fd, (struct sockaddr *)&g->addr, g->addrlen) == -1 &&
	    errno != EINPROGRESS) {
		slot_close(s);
		return -1;
	}
	s->state = S_CONNECTING;
	ev.events = EPOLLOUT;
	ev.data.ptr = s;
	if (epoll_ctl(g->ep, EPOLL_CTL_ADD, fd, &ev) == -1) {
		slot_close(s);
		return -1;
	}
	return 0;
}

/* Launch the next request on @p s, if the run is not over. */
static void req_start(struct loadgen *g, struct slot *s)
{
	uint64_t now = now_ns();

	if (g->stopping || (g->limit > 0 && g->launched >= g->limit))
		return;
	if (g->interval_ns > 0) {
		/* Paced: wait for the slot's turn (check_slots starts it);
		 * a turn missed by a whole interval restarts the cadence. */
		if (now < s->next)
			return;
		s->next = (now - s->next < g->interval_ns ? s->next : now) +
		    g->interval_ns;
	}
	g->launched++;
	if (slot_connect(g, s) == -1) {
		g->errors++;
		show(g, "connect", strerror(errno));
		/* Keep the loop closed without spinning on a dead server:
		 * the slot is retried on the next timer pass. */
		return;
	}
	g->inflight++;
}

/* A request failed: count it, free the slot, start the next one later. */
static void req_fail(struct loadgen *g, struct slot *s, const char *what, int e)
{
	g->errors++;
	show(g, what, e ? strerror(e) : NULL);
	slot_close(s);
	g->inflight--;
}

/* EOF (or a reset after the reply): check, record, go again. */
static void req_done(struct loadgen *g, struct slot *s, int reset)
{
	uint64_t lat = now_ns() - s->t0;

	if (g->refusal != NULL && s->len >= strlen(g->refusal) &&
	    memcmp(s->buf, g->refusal, strlen(g->refusal)) == 0) {
		g->refused++;
	} else if (!reply_ok(g, s->buf, s->len)) {
		if (reset) {
			req_fail(g, s, "recv", ECONNRESET);
			return;
		}
		if (s->len == 0) {
			/* Closed before any reply (a slot taken back from a
			 * peer the server saw as idle): a failure to count,
			 * not a reply of the wrong shape. */
			req_fail(g, s, "closed before a reply", 0);
			return;
		}
		g->wrong++;
		show_wrong(g, s);
	} else {
		if (reset)
			g->resets++;
		g->hist[hist_index(lat)]++;
		if (lat > g->max_ns)
			g->max_ns = lat;
		g->completed++;
		g->reply_bytes += s->len;
		if (g->out != NULL && g->out_bytes < OUT_MAX) {
			fwrite(s->buf, 1, s->len, g->out);
			g->out_bytes += s->len;
		}
	}
	slot_close(s);
	g->inflight--;
	req_start(g, s);
}

/* Connected (or failed to): send the word, then wait for the reply. */
static void req_connected(struct loadgen *g, struct slot *s)
{
	struct epoll_event ev;
	socklen_t len = sizeof(int);
	int e = 0;
	ssize_t n;

	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &e, &len) == -1)
		e = errno;
	if (e != 0) {
		req_fail(g, s, "connect", e);
		return;
	}
	/* 5 bytes into an empty send buffer: all or nothing. */
	n = send(s->fd, g->req, strlen(g->req), MSG_NOSIGNAL);
	if (n != (ssize_t)strlen(g->req)) {
		req_fail(g, s, "send", n == -1 ? errno : EIO);
		return;
	}
	s->state = S_READING;
	ev.events = EPOLLIN;
	ev.data.ptr = s;
	if (epoll_ctl(g->ep, EPOLL_CTL_MOD, s->fd, &ev) == -1)
		req_fail(g, s, "epoll_ctl", errno);
}

/* Readable: take everything there is; EOF completes the request. */
static void req_read(struct loadgen *g, struct slot *s)
{
	ssize_t n;
	char *nb;

	for (;;) {
		if (s->cap - s->len < 4096) {
			if (s->cap >= REPLY_MAX) {
				req_fail(g, s, "reply larger than 8 MiB", 0);
				return;
			}
			if ((nb = realloc(s->buf, s->cap * 2)) == NULL) {
				req_fail(g, s, "realloc", ENOMEM);
				return;
			}
			s->buf = nb;
			s->cap *= 2;
		}
		n = recv(s->fd, s->buf + s->len, s->cap - s->len, 0);
		if (n > 0) {
			s->len += (size_t)n;
			continue;
		}
		if (n == 0) {
			req_done(g, s, 0);
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (errno == ECONNRESET) {
			req_done(g, s, 1);
			return;
		}
		req_fail(g, s, "recv", errno);
		return;
	}
}

/* Open an idle holder's connection. */
static void idle_open(struct loadgen *g, struct slot *s)
{
	if (slot_connect(g, s) == -1) {
		show(g, "idle connect", strerror(errno));
		g->idle_dropped++;
		return;
	}
}

/* An idle holder connected, was closed, or was sent something. */
static void idle_event(struct loadgen *g, struct slot *s, uint32_t events)
{
	struct epoll_event ev;
	socklen_t len = sizeof(int);
	char buf[256];
	int e = 0;
	ssize_t n;

	if (s->state == S_CONNECTING) {
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &e, &len) == -1)
			e = errno;
		if (e == 0) {
			s->state = S_IDLE;
			s->sent = 0;
			s->next = now_ns() + g->trickle_ns;
			ev.events = EPOLLIN | EPOLLRDHUP;
			ev.data.ptr = s;
			if (epoll_ctl(g->ep, EPOLL_CTL_MOD, s->fd, &ev) == 0)
				return;
			e = errno;
		}
		show(g, "idle connect", strerror(e));
	} else {
		/* The server sent something (a "too many connections"
		 * line) or closed: either way this holder is gone. */
		n = recv(s->fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EINTR) &&
		    !(events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
			return;
		if (n > 0) {
			buf[strcspn(buf, "\n")] = '\0';
			show(g, "idle connection closed by server", buf);
		} else
			show(g, "idle connection closed by server", NULL);
	}
	g->idle_dropped++;
	slot_close(s);
}

/*
 * Open (or reopen) idle holders, IDLE_BATCH per IDLE_TICK_NS. A client's
 * connect() completes in the kernel before the server accept()s; a burst
 * larger than the server's listen backlog would overflow its accept queue
 * and leave connections that only the SYN-ACK retransmission (1 s, 3 s,
 * ...) brings to the server: "connected" here but not held there.
 */
static void idle_refill(struct loadgen *g)
{
	uint64_t now = now_ns();
	int i, n = 0;

	if (now - g->idle_last < IDLE_TICK_NS)
		return;
	g->idle_last = now;
	for (i = g->conc; i < g->conc + g->nidle && n < IDLE_BATCH; i++) {
		/* Bounded: a server that keeps dropping them is reported,
		 * not hammered (unless that is the point: -F). */
		if (!g->flood && g->idle_dropped > 2L * g->nidle + 100)
			return;
		if (g->slots[i].state == S_FREE) {
			idle_open(g, &g->slots[i]);
			n++;
		}
	}
}

/* -T: every other holder sends the next byte of "ruok" when it is due,
 * a client too slow to finish its word (the server may close it). */
static void idle_trickle(struct loadgen *g, uint64_t now)
{
	struct slot *s;
	int i;

	for (i = g->conc + 1; i < g->conc + g->nidle; i += 2) {
		s = &g->slots[i];
		if (s->state != S_IDLE || now < s->next || s->sent >= 4)
			continue;
		if (send(s->fd, &"ruok"[s->sent], 1, MSG_NOSIGNAL) == 1) {
			s->sent++;
			g->trickled++;
		}
		s->next = now + g->trickle_ns;
	}
}

/* How many idle holders are connected right now. */
static int idle_count(const struct loadgen *g)
{
	int i, n = 0;

	for (i = g->conc; i < g->conc + g->nidle; i++)
		n += g->slots[i].state == S_IDLE;
	return n;
}

/* Dispatch one epoll event. */
static void on_event(struct loadgen *g, struct epoll_event *ev)
{
	struct slot *s = ev->data.ptr;

	if (s->idle)
		idle_event(g, s, ev->events);
	else if (s->state == S_CONNECTING)
		req_connected(g, s);
	else if (s->state == S_READING)
		req_read(g, s);
}

/* Timed-out requests fail; slots left free (failed connect) restart. */
static void check_slots(struct loadgen *g, uint64_t now)
{
	struct slot *s;
	int i;

	for (i = 0; i < g->conc; i++) {
		s = &g->slots[i];
		if (s->state != S_FREE && now - s->t0 > g->timeout_ns)
			req_fail(g, s, "timeout", ETIMEDOUT);
		if (s->state == S_FREE)
			req_start(g, s);
	}
}

/* One pass of the event loop: wait up to @p ms, handle what came. */
static void loop_once(struct loadgen *g, int ms)
{
	struct epoll_event evs[256];
	int i, n;

	n = epoll_wait(g->ep, evs, 256, ms);
	for (i = 0; i < n; i++)
		on_event(g, &evs[i]);
}

/* Connect the -k holders, and let the server take them, before the load
 * starts. */
static int idle_setup(struct loadgen *g)
{
	uint64_t end, settle;

	/* A flood is not expected to fit: give it a second, then go. */
	for (end = now_ns() + FLOOD_SETUP_NS;
	     g->flood && now_ns() < end && !interrupted;) {
		idle_refill(g);
		if (g->trickle_ns > 0)
			idle_trickle(g, now_ns());
		loop_once(g, 1);
	}
	if (g->flood)
		return 0;
	end = now_ns() + (uint64_t)IDLE_SETUP_SECONDS * 1000000000u;
	while (idle_count(g) < g->nidle) {
		if (now_ns() > end || g->idle_dropped > 2L * g->nidle + 100 ||
		    interrupted) {
			fprintf(stderr,
			    "loadgen: only %d of %d idle connections "
			    "up\n",
			    idle_count(g), g->nidle);
			return -1;
		}
		idle_refill(g);
		loop_once(g, 1);
	}
	settle = now_ns() + IDLE_SETTLE_NS;
	while (now_ns() < settle && !interrupted) {
		idle_refill(g);
		loop_once(g, 10);
	}
	return 0;
}

/* The run: warm-up, measurement, then finish what is in flight. */
static double run(struct loadgen *g)
{
	uint64_t start, warm_end, end, drain_end = 0, now, last_check;
	int i;

	start = now_ns();
	warm_end = start + (uint64_t)(g->warmup * 1e9);
	if (g->warmup > 0 && g->limit > 0)
		warm_end = start; /* -n counts every request: no warm-up */
	end = warm_end + (uint64_t)(g->seconds * 1e9);
	for (i = 0; i < g->conc; i++)
		req_start(g, &g->slots[i]);
	last_check = start;
	while (!g->stopping || g->inflight > 0) {
		/* Paced slots start on time to within a millisecond. */
		loop_once(g, g->spin ? 0 : g->interval_ns > 0 ? 1 : 5);
		now = now_ns();
		if (warm_end > start && now >= warm_end) {
			stats_reset(g);
			start = warm_end;
			warm_end = start; /* once */
		}
		if (!g->stopping &&
		    (now >= end || interrupted ||
		        (g->limit > 0 && g->launched >= g->limit))) {
			g->stopping = 1;
			drain_end = now + (uint64_t)DRAIN_SECONDS * 1000000000u;
			if (drain_end < now + g->timeout_ns)
				drain_end = now + g->timeout_ns;
		}
		if (g->stopping && now >= drain_end)
			break;
		if (now - last_check >= 5000000u || g->interval_ns > 0) {
			check_slots(g, now);
			if (!g->stopping)
				idle_refill(g);
			if (!g->stopping && g->trickle_ns > 0)
				idle_trickle(g, now);
			last_check = now;
		}
	}
	for (i = 0; i < g->conc; i++)
		if (g->slots[i].state != S_FREE)
			req_fail(g, &g->slots[i], "still in flight at the end",
			    0);
	if (warm_end > start) /* ended inside the warm-up */
		start = now_ns();
	return (double)(now_ns() - start) / 1e9;
}

/* Print the figures: key=value, or JSON with -j. */
static void report(const struct loadgen *g, double secs, int idle_open_end)
{
	double rps = secs > 0 ? (double)g->completed / secs : 0;
	double avg =
	    g->completed ? (double)g->reply_bytes / (double)g->completed : 0;

	if (g->json)
		printf("{\"word\":\"%s\",\"concurrency\":%d,\"idle\":%d,"
		       "\"seconds\":%.3f,\"requests\":%ld,\"rps\":%.1f,"
		       "\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,"
		       "\"p999_us\":%.1f,\"max_us\":%.1f,\"errors\":%ld,"
		       "\"wrong\":%ld,\"resets\":%ld,\"idle_open\":%d,"
		       "\"idle_dropped\":%ld,\"refused\":%ld,\"trickled\":%ld,"
		       "\"reply_bytes\":%.0f}\n",
		    g->word, g->conc, g->nidle, secs, g->completed, rps,
		    hist_quantile(g, 0.50), hist_quantile(g, 0.90),
		    hist_quantile(g, 0.99), hist_quantile(g, 0.999),
		    (double)g->max_ns / 1000.0, g->errors, g->wrong, g->resets,
		    idle_open_end, g->idle_dropped, g->refused, g->trickled,
		    avg);
	else
		printf("word=%s conc=%d idle=%d secs=%.3f requests=%ld "
		       "rps=%.1f p50_us=%.1f p90_us=%.1f p99_us=%.1f "
		       "p999_us=%.1f max_us=%.1f errors=%ld wrong=%ld resets=%ld "
		       "idle_open=%d idle_dropped=%ld refused=%ld trickled=%ld "
		       "reply_bytes=%.0f\n",
		    g->word, g->conc, g->nidle, secs, g->completed, rps,
		    hist_quantile(g, 0.50), hist_quantile(g, 0.90),
		    hist_quantile(g, 0.99), hist_quantile(g, 0.999),
		    (double)g->max_ns / 1000.0, g->errors, g->wrong, g->resets,
		    idle_open_end, g->idle_dropped, g->refused, g->trickled,
		    avg);
	fflush(stdout);
}

/* Usage on stderr, exit 2. */
static void usage(void)
{
	fprintf(stderr,
	    "usage: loadgen [-h host] [-p port] [-c concurrency] [-d seconds] "
	    "[-n requests]\n"
	    "               [-w word] [-x prefix | -e exact] [-r refusal] "
	    "[-i interval_ms]\n"
	    "               [-k idle [-F] [-T trickle_ms]] "
	    "[-W warmup_seconds]\n"
	    "               [-t timeout_ms] [-o reply_file] [-S] [-j]\n");
	exit(2);
}

/* A number in [lo, hi] from an option, or usage. */
static double num_arg(const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "loadgen: bad number \"%s\" (want %g..%g)\n", s,
		    lo, hi);
		usage();
	}
	return v;
}

/* Resolve host:port once, up front. */
static int resolve(struct loadgen *g, const char *host, const char *port)
{
	struct addrinfo hints, *res;
	int e;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((e = getaddrinfo(host, port, &hints, &res)) != 0) {
		fprintf(stderr, "loadgen: %s:%s: %s\n", host, port,
		    gai_strerror(e));
		return -1;
	}
	memcpy(&g->addr, res->ai_addr, res->ai_addrlen);
	g->addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* Enough descriptors for every slot and holder. */
static void raise_nofile(int want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= (rlim_t)want)
		return;
	rl.rlim_cur =
	    rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= (rlim_t)want
	    ? (rlim_t)want
	    : rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
}

int main(int argc, char *argv[])
{
	static struct loadgen g;
	const char *host = "127.0.0.1", *port = NULL;
	struct sigaction sa;
	double secs;
	int ch, i, dset = 0, idle_end;

	g.word = "ruok";
	g.conc = 1;
	g.seconds = 5;
	g.timeout_ns = 10000000000ull;
	while ((ch = getopt(argc, argv, "h:p:c:d:n:w:x:e:r:i:k:FT:W:t:o:Sj")) !=
	    -1) {
		switch (ch) {
		case 'h':
			host = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'c':
			g.conc = (int)num_arg(optarg, 0, MAX_CONC);
			break;
		case 'd':
			g.seconds = num_arg(optarg, 0.01, MAX_SECONDS);
			dset = 1;
			break;
		case 'n':
			g.limit = (long)num_arg(optarg, 1, MAX_REQUESTS);
			break;
		case 'w':
			g.word = optarg;
			break;
		case 'x':
			g.prefix = optarg;
			break;
		case 'e':
			g.exact = optarg;
			break;
		case 'r':
			g.refusal = optarg;
			break;
		case 'i':
			g.interval_ns =
			    (uint64_t)(num_arg(optarg, 0, 3600000) * 1e6);
			break;
		case 'k':
			g.nidle = (int)num_arg(optarg, 0, MAX_IDLE);
			break;
		case 'F':
			g.flood = 1;
			break;
		case 'T':
			g.trickle_ns =
			    (uint64_t)(num_arg(optarg, 1, 3600000) * 1e6);
			break;
		case 'W':
			g.warmup = num_arg(optarg, 0, MAX_SECONDS);
			break;
		case 't':
			g.timeout_ns =
			    (uint64_t)(num_arg(optarg, 1, 3600000) * 1e6);
			break;
		case 'o':
			g.outfile = optarg;
			break;
		case 'S':
			g.spin = 1;
			break;
		case 'j':
			g.json = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || port == NULL || strlen(g.word) != 4 ||
	    (g.prefix != NULL && g.exact != NULL) ||
	    (g.conc == 0 && g.nidle == 0)) {
		if (port == NULL)
			fprintf(stderr, "loadgen: -p port is required\n");
		if (strlen(g.word) != 4)
			fprintf(stderr, "loadgen: -w wants 4 letters\n");
		usage();
	}
	if (g.limit > 0 && !dset)
		g.seconds = MAX_SECONDS; /* -n alone: the count ends the run */
	snprintf(g.req, sizeof(g.req), "%s\n", g.word);
	if (resolve(&g, host, port) == -1)
		return 2;
	if (g.outfile != NULL && (g.out = fopen(g.outfile, "a")) == NULL) {
		fprintf(stderr, "loadgen: %s: %s\n", g.outfile,
		    strerror(errno));
		return 2;
	}
	raise_nofile(g.conc + g.nidle + 64);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((g.ep = epoll_create1(EPOLL_CLOEXEC)) == -1 ||
	    (g.slots = calloc((size_t)(g.conc + g.nidle), sizeof(*g.slots))) ==
	        NULL) {
		perror("loadgen");
		return 1;
	}
	for (i = 0; i < g.conc + g.nidle; i++) {
		g.slots[i].fd = -1;
		g.slots[i].idle = i >= g.conc;
		if (!g.slots[i].idle) {
			g.slots[i].cap = 65536;
			if ((g.slots[i].buf = malloc(g.slots[i].cap)) == NULL) {
				perror("loadgen");
				return 1;
			}
		}
	}
	if (g.nidle > 0 && idle_setup(&g) == -1) {
		report(&g, 0, idle_count(&g));
		return 1;
	}
	secs = run(&g);
	idle_end = idle_count(&g);
	report(&g, secs, idle_end);
	for (i = 0; i < g.conc + g.nidle; i++) {
		slot_close(&g.slots[i]);
		free(g.slots[i].buf);
	}
	free(g.slots);
	close(g.ep);
	if (g.out != NULL)
		fclose(g.out);
	return g.errors || g.wrong || (g.idle_dropped && !g.flood) ||
	        (g.completed == 0 && g.conc > 0)
	    ? 1
	    : 0;
}

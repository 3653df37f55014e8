/*
 * wordtime: time four-letter words on CLOCK_MONOTONIC, for
 * tests/bench/busy.sh (a busy machine).
 *
 *	wordtime -p PORT -w WORD [-n N | -d SECS] [-t TIMEOUT] [-r WAIT]
 *	         [-x PREFIX] [-s SLEEP]
 *	wordtime -m
 *
 * Asks WORD on 127.0.0.1:PORT, one connection at a time, N times (default
 * 1) or for SECS seconds, and prints a line per reply:
 *	START_NS END_NS STATUS BYTES
 * START from before connect(), END at EOF, both CLOCK_MONOTONIC (the clock
 * lockprobe's windows are on, so a dump's interval can be laid over them).
 * STATUS is
 *	ok       a reply that does not start "error: " (and starts with
 *	         PREFIX, with -x)
 *	busy     "error: ... in progress ..." (another job runs)
 *	error    any other "error: " line, or a reply without PREFIX
 *	timeout  no EOF within TIMEOUT seconds (default 60): the connection
 *	         is closed and the line says when we gave up
 *	connect  the connection failed
 * With -r WAIT a busy reply is asked again every 100 ms for up to WAIT
 * seconds and only the last attempt is printed (the wait for a job in
 * progress is not the reply's time). -s SLEEP pauses between requests.
 * -m prints CLOCK_MONOTONIC now, in ns.
 * Exit 0 when every line is ok, busy or timeout (the caller judges those);
 * 1 on error or connect lines; 2 on usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* One request; its status word, the reply's size in *bytes. */
static const char *ask(int port, const char *word, double timeout,
    const char *prefix, size_t *bytes)
{
	struct sockaddr_in sa;
	char head[256], buf[65536], req[8];
	size_t hlen = 0;
	uint64_t deadline = now_ns() + (uint64_t)(timeout * 1e9);
	struct pollfd pfd;
	ssize_t n;
	int fd, ms;

	*bytes = 0;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return "connect";
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snprintf(req, sizeof(req), "%.4s\n", word);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return "connect";
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		uint64_t t = now_ns();

		if (t >= deadline) {
			close(fd);
			return "timeout";
		}
		ms = (int)((deadline - t) / 1000000) + 1;
		if (poll(&pfd, 1, ms) < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return "connect";
		}
		if (pfd.revents == 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return *bytes ? "error" : "connect";
		}
		if (n == 0)
			break;
		if (hlen < sizeof(head) - 1) {
			size_t k = (size_t)n;

			if (k > sizeof(head) - 1 - hlen)
				k = sizeof(head) - 1 - hlen;
			memcpy(head + hlen, buf, k);
			hlen += k;
		}
		*bytes += (size_t)n;
	}
	close(fd);
	head[hlen] = '\0';
	if (strncmp(head, "error: ", 7) == 0)
		return strstr(head, "in progress") ? "busy" : "error";
	if (hlen == 0 ||
	    (prefix != NULL && strncmp(head, prefix, strlen(prefix)) != 0))
		return "error";
	return "ok";
}

static void usage(void)
{
	fprintf(stderr,
	    "usage: wordtime -p PORT -w WORD [-n N | -d SECS] "
	    "[-t TIMEOUT] [-r WAIT] [-x PREFIX] [-s SLEEP]\n"
	    "       wordtime -m\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *word = NULL, *prefix = NULL, *st;
	double dur = 0, timeout = 60, wait = 0, pause = 0;
	int port = 0, n = 1, c, bad = 0, i;
	uint64_t end = 0, t0, t1;
	size_t bytes;

	while ((c = getopt(argc, argv, "p:w:n:d:t:r:x:s:m")) != -1) {
		switch (c) {
		case 'p':
			port = atoi(optarg);
			break;
		case 'w':
			word = optarg;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'd':
			dur = atof(optarg);
			break;
		case 't':
			timeout = atof(optarg);
			break;
		case 'r':
			wait = atof(optarg);
			break;
		case 'x':
			prefix = optarg;
			break;
		case 's':
			pause = atof(optarg);
			break;
		case 'm':
			printf("%llu\n", (unsigned long long)now_ns());
			return 0;
		default:
			usage();
		}
	}
	if (port <= 0 || word == NULL || strlen(word) != 4 || timeout <= 0)
		usage();
	if (dur > 0)
		end = now_ns() + (uint64_t)(dur * 1e9);
	for (i = 0; dur > 0 ? now_ns() < end : i < n; i++) {
		uint64_t give_up = now_ns() + (uint64_t)(wait * 1e9);

		for (;;) {
			t0 = now_ns();
			st = ask(port, word, timeout, prefix, &bytes);
			t1 = now_ns();
			if (strcmp(st, "busy") != 0 || t1 >= give_up)
				break;
			sleep_s(0.1);
		}
		printf("%llu %llu %s %zu\n", (unsigned long long)t0,
		    (unsigned long long)t1, st, bytes);
		fflush(stdout);
		if (strcmp(st, "error") == 0 || strcmp(st, "connect") == 0)
			bad = 1;
		if (strcmp(st, "busy") == 0 && dur > 0)
			sleep_s(0.05);
		sleep_s(pause);
	}
	return bad;
}

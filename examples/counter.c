/*
 * counter: a small libevent service that embeds jm4lw.
 *
 * It answers "hits N" on its own port and serves the four-letter words on
 * an admin port, plus one word of its own, `hits`, and the HTTP face
 * (/metrics, pprof, /jemalloc) on a third port if given. The lines marked
 * "jm4lw" are all it takes. Link it with jemalloc (its malloc must be the
 * jemalloc jm4lw reports on): pkg-config's and the CMake package's flags
 * do. Usage:
 */
/* clang-format off */
/*
 *	MALLOC_CONF=prof:true,prof_active:false \
 *	    ./counter 127.0.0.1:8080 127.0.0.1:9181 [127.0.0.1:9182] &
 *	echo hits | nc 127.0.0.1 9181
 *	curl http://127.0.0.1:9182/metrics
 *
 * It prints the addresses it serves on, "admin ADDR:PORT" and "http
 * ADDR:PORT", so port 0 (any free port) works too.
 */
/* clang-format on */
#include <sys/socket.h>

#include <netdb.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include <jm4lw.h>

static unsigned long hits;

/* The service itself: one line per connection. */
static void serve(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	char line[64];
	int n;

	(void)l, (void)sa, (void)salen, (void)arg;
	n = snprintf(line, sizeof(line), "hits %lu\n", ++hits);
	(void)send(fd, line, (size_t)n, MSG_NOSIGNAL);
	evutil_closesocket(fd);
}

/* Our own word on the admin port. */
static int word_hits(struct jm4lw_reply *r, void *arg)
{
	jm4lw_reply_printf(r, "hits\t%lu\n", *(unsigned long *)arg);
	return 0;
}

/* ADDR:PORT or [ADDR6]:PORT into @p ss, port 0 allowed (libevent's
 * evutil_parse_sockaddr_port() refuses it); -1 if it is not one. */
static int parse_addr(const char *s, struct sockaddr_storage *ss, int *len)
{
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	    .ai_socktype = SOCK_STREAM};
	struct addrinfo *ai;
	char host[128], *port;

	if (snprintf(host, sizeof(host), "%s", s) >= (int)sizeof(host) ||
	    (port = strrchr(host, ':')) == NULL)
		return -1;
	*port++ = '\0';
	if (host[0] == '[' && port[-2] == ']') {
		port[-2] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -1;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = (int)ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

/* SIGINT/SIGTERM: leave the loop. */
static void quit(evutil_socket_t sig, short what, void *base)
{
	(void)sig, (void)what;
	event_base_loopexit(base, NULL);
}

int main(int argc, char *argv[])
{
	struct sockaddr_storage ss;
	int sslen = sizeof(ss);
	struct event_base *base = event_base_new();
	struct evconnlistener *svc;
	struct event *sigint, *sigterm;

	/* A server ignores SIGPIPE before it serves anything: evhttp writes
	 * to peers that may be gone (jm4lw_http_listen() checks it). */
	signal(SIGPIPE, SIG_IGN);
	if (argc != 3 && argc != 4) {
		fprintf(stderr,
		    "usage: counter SERVICE_ADDR:PORT "
		    "ADMIN_ADDR:PORT [HTTP_ADDR:PORT]\n");
		return 2;
	}
	if (parse_addr(argv[1], &ss, &sslen) == -1) {
		fprintf(stderr, "counter: bad address %s\n", argv[1]);
		return 2;
	}
	svc = evconnlistener_new_bind(base, serve, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, -1,
	    (struct sockaddr *)&ss, sslen);
	if (svc == NULL) {
		perror("counter: listen");
		return 1;
	}

	/* jm4lw: the admin port on our own event loop, with one extra word
	 * (and HTTP if asked). jm4lw_new() copies the configuration. */
	struct jm4lw_config *cfg = jm4lw_config_new();
	char err[256] = "out of memory";
	struct jm4lw *admin = cfg ? jm4lw_new(base, cfg, err, sizeof(err)) : 0;
	jm4lw_config_free(cfg);
	if (admin == NULL || jm4lw_listen(admin, argv[2]) == -1 ||
	    jm4lw_add_word(admin, "hits", word_hits, &hits, 0) == -1 ||
	    (argc == 4 && jm4lw_http_listen(admin, argv[3]) == -1)) {
		fprintf(stderr, "counter: admin port: %s\n",
		    admin ? jm4lw_errmsg(admin) : err);
		jm4lw_free(admin);
		return 1;
	}
	char addr[64];
	if (jm4lw_bound_addr(admin, 0, addr, sizeof(addr)) == 0)
		printf("admin %s\n", addr);
	if (jm4lw_http_bound_addr(admin, 0, addr, sizeof(addr)) == 0)
		printf("http %s\n", addr);
	fflush(stdout);

	sigint = evsignal_new(base, SIGINT, quit, base);
	sigterm = evsignal_new(base, SIGTERM, quit, base);
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);
	event_base_dispatch(base);

	jm4lw_free(admin); /* jm4lw */
	event_free(sigint);
	event_free(sigterm);
	evconnlistener_free(svc);
	event_base_free(base);
	return 0;
}

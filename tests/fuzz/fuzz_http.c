/*
 * libFuzzer target: what the HTTP face decides from a request's bytes
 * before any handler runs, with no socket and no module: the route of a
 * path as sent (http_target_split, http_route_of), the Host check
 * (http_host_allowed), the query (http_query_parse: evhttp's parser and
 * our token check, then http_profile_args and http_seconds_arg), the
 * refusal of ambiguous requests (http_ambiguity: duplicate and spaced
 * headers) and the body of a /pprof/symbol POST (profile_parse_addrs).
 *
 * The input is lines (LF): the request target (as on the request line),
 * the Host header, http_allowed_hosts, then the rest: header lines up to
 * an empty line, and the POST body after it (no empty line: all body, no
 * headers). A missing line is empty. Every violated invariant is an
 * abort().
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "http.h"
#include "ops.h"
#include "profile.h"
#include "view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* server.c's link wants the allocator's table; no module is made here. */
const struct core_ops *core_jemalloc(void)
{
	return NULL;
}

/* server.c's and thread.c's check of it, likewise never called. */
const struct core_ops *core_allocator(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return NULL;
}

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_http: %s:%d: %s\n", __FILE__,    \
			    __LINE__, #cond);                                  \
			abort();                                               \
		}                                                              \
	} while (0)

/* The next LF-ended line of [*p, end) as a C string (malloc'ed). */
static char *next_line(const char **p, const char *end)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t n = (nl != NULL ? nl : end) - *p;
	char *s = malloc(n + 1);

	CHECK(s != NULL);
	memcpy(s, *p, n);
	s[n] = '\0';
	*p += n + (nl != NULL);
	return s;
}

/* The route table against a path: what came back matches it, and a
 * path that is a route's own always finds a route that matches. */
static void check_route(const char *path)
{
	const struct http_route *r = http_route_of(path), *t;

	if (r != NULL) {
		CHECK(r->fn != NULL);
		CHECK((r->flags & HTTP_PREFIX)
		        ? strncmp(path, r->path, strlen(r->path)) == 0
		        : strcmp(path, r->path) == 0);
		/* Only GET, POST or both; a mutating one is POST only. */
		CHECK(r->flags & (HTTP_GET | HTTP_POST));
		CHECK(!(r->flags & HTTP_MUTATES) || !(r->flags & HTTP_GET));
	}
	for (t = http_routes; t->path != NULL; t++)
		CHECK(http_route_of(t->path) != NULL);
}

/* The query of /jemalloc/profile: a view and base, or one line why. */
static void check_query(const char *query)
{
	struct evkeyvalq q;
	struct evkeyval *kv;
	enum dump_view view = DUMP_VIEW_COUNT;
	char why[256];
	const char *c;
	int base = -1, r;

	why[0] = '\0';
	if (http_query_parse(query, &q, why, sizeof(why)) == -1)
		CHECK(why[0] != '\0' && strchr(why, '\n') == NULL);
	else {
		/* What passes is tokens only: no NUL hid a tail. */
		CHECK(strstr(query, "%00") == NULL);
		TAILQ_FOREACH(kv, &q, next)
			for (c = kv->value; *c != '\0'; c++)
				CHECK(isalnum((unsigned char)*c) ||
				    strchr("._-", *c) != NULL);
		why[0] = '\0';
		r = http_profile_args(&q, &view, &base, why, sizeof(why));
		if (r == 0) {
			CHECK(base == 0 || base == 1);
			/* A named view of views[], nothing else. */
			CHECK((unsigned)view < DUMP_VIEW_COUNT &&
			    views[view].name != NULL);
			/* The dump as it is (raw, symbolized) and the
			 * threads' split have nothing to subtract. */
			CHECK(!base || views[view].base != VIEW_BASE_NEVER);
		} else {
			CHECK(r == -1);
			CHECK(why[0] != '\0' && strchr(why, '\n') == NULL);
		}
		/* seconds=: a delta's span is 1 .. below write_timeout, or
		 * a 400 with a line; never a wait nobody bounded. */
		{
			char swhy[256] = "";
			unsigned secs = 7;

			if (http_seconds_arg(evhttp_find_header(&q, "seconds"),
			        30, &secs, swhy, sizeof(swhy)) == 0)
				CHECK(secs < 30 &&
				    (secs > 0 ||
				        evhttp_find_header(&q, "seconds") ==
				            NULL));
			else
				CHECK(swhy[0] != '\0' && secs == 0);
		}
	}
	evhttp_clear_headers(&q);
}

/* The Host check: 0 or 1; what it allows is a name and at most a port
 * of digits; localhost and a listed name are allowed with any port. */
static void check_host(const char *host, const char *allowed)
{
	char with_port[600];
	const char *tail;
	int ok = http_host_allowed(allowed, host);

	CHECK(ok == 0 || ok == 1);
	if (ok) {
		tail = host[0] == '[' ? strchr(host, ']') + 1
		                      : host + strcspn(host, ":");
		CHECK(*tail == '\0' ||
		    (tail[0] == ':' &&
		        tail[1 + strspn(tail + 1, "0123456789")] == '\0'));
	}
	CHECK(http_host_allowed(allowed, "localhost:9182") == 1);
	CHECK(http_host_allowed(allowed, "127.0.0.1") == 1);
	CHECK(http_host_allowed(allowed, "[::1]:1") == 1);
	/* No port: adding one changes nothing. */
	if (strchr(host, ':') == NULL && host[0] != '[' && strlen(host) < 500) {
		snprintf(with_port, sizeof(with_port), "%s:80", host);
		CHECK(http_host_allowed(allowed, with_port) == ok);
	}
}

/* The /pprof/symbol body: what it parses prints back and parses again
 * to the same addresses. */
static void check_addrs(const char *body, size_t len)
{
	uint64_t a[64], b[64];
	char err[256], again[64 * 20 + 1];
	long n, m, i;
	size_t used = 0;

	err[0] = '\0';
	n = profile_parse_addrs(body, len, a, 64, err, sizeof(err));
	if (n == -1) {
		CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
		return;
	}
	CHECK(n >= 0 && n <= 64);
	for (i = 0; i < n; i++)
		used += (size_t)snprintf(again + used, sizeof(again) - used,
		    "%s0x%llx", i ? "+" : "", (unsigned long long)a[i]);
	m = profile_parse_addrs(again, used, b, 64, err, sizeof(err));
	CHECK(m == n);
	CHECK(n == 0 || memcmp(a, b, (size_t)n * sizeof(a[0])) == 0);
}

/* Header lines as evhttp 2.1 stores them (evhttp_parse_headers_ is not
 * exported, so its rule is copied): the name is everything before the
 * first ':', blanks and all; the value what follows, leading blanks cut.
 * A line without ':' ends them. Then what http_ambiguity says must hold:
 * a name that is no token, two Hosts, Origins or lengths are refused. */
static void check_headers(const char *target, const char *text, size_t len)
{
	struct evkeyvalq in;
	char *copy = malloc(len + 1), *line, *save = NULL, *colon, *v;
	int hosts = 0, lengths = 0, origins = 0, bad_name = 0;
	const char *why, *k;

	if (copy == NULL)
		return;
	memcpy(copy, text, len);
	copy[len] = '\0';
	TAILQ_INIT(&in);
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		if ((colon = strchr(line, ':')) == NULL || colon == line)
			break;
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		if (evhttp_add_header(&in, line, v) == -1)
			break; /* evhttp refuses a CR or LF in a value */
		hosts += strcasecmp(line, "Host") == 0;
		lengths += strcasecmp(line, "Content-Length") == 0;
		origins += strcasecmp(line, "Origin") == 0;
		for (k = line; *k != '\0'; k++)
			bad_name |= *k == ' ' || *k == '\t' || *k == '(' ||
			    *k == '"' || *k == '/' || *k == '@';
	}
	why = http_ambiguity(target, &in);
	CHECK(why == NULL || (why[0] != '\0' && strchr(why, '\n') == NULL));
	if (hosts > 1 || lengths > 1 || origins > 1 || bad_name ||
	    target[0] != '/')
		CHECK(why != NULL);
	evhttp_clear_headers(&in);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	char *target = next_line(&p, end);
	char *host = next_line(&p, end);
	char *allowed = next_line(&p, end);
	char path[HTTP_PATH_MAX];
	const char *query, *blank;

	/* As http_request() takes them: the path as sent, up to '?'. */
	if (http_target_split(target, path, &query) == 0) {
		CHECK(strchr(path, '?') == NULL);
		check_route(path);
		if (query != NULL)
			check_query(query);
	}
	check_route(target);
	check_query(target);
	check_host(host, allowed);
	/* Headers, an empty line, the body; or all body. */
	blank = memmem(p, (size_t)(end - p), "\n\n", 2);
	if (blank != NULL) {
		check_headers(target, p, (size_t)(blank - p));
		p = blank + 2;
	} else
		check_headers(target, "", 0);
	check_addrs(p, (size_t)(end - p));
	free(target);
	free(host);
	free(allowed);
	return 0;
}

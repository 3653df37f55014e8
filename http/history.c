/*
 * The HTTP face of the history and the leaks: /jemalloc/history, the
 * figures' ring as JSON (rendered by answer/history.c), and
 * /jemalloc/leaks, the leak suspects, which the worker computes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/keyvalq_struct.h>

#include "answer.h"
#include "history.h"
#include "http.h"
#include "job.h"
#include "module.h"

#define JSON "application/json"

/* since=: seconds since the epoch, digits only (at most 19: no
 * overflow); 0 with *@p v, or -1. */
static int history_since(const char *s, uint64_t *v)
{
	size_t n = strspn(s, "0123456789");

	if (n == 0 || n > 19 || s[n] != '\0')
		return -1;
	*v = strtoull(s, NULL, 10);
	return 0;
}

/* /jemalloc/history[?since=T]: the ring as JSON (answer/history.c),
 * with since=, only the rows after T. */
void http_route_history(struct http_ctx *ctx)
{
	const char *s = evhttp_find_header(ctx->query, "since");
	struct answer_history a = {.h = &ctx->m->core.hist};
	struct evbuffer *b;
	struct out out;

	if (s != NULL && history_since(s, &a.since) == -1) {
		http_error(ctx->req, 400,
		    "since=%.40s: want seconds since the epoch (a row's time)",
		    s);
		return;
	}
	if (a.h->ring == NULL) {
		http_error(ctx->req, 404, "no history: history_points is 0");
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	out = http_out_of(b);
	answer_history(&out, ANSWER_JSON, &a);
	http_reply(ctx->req, 200, JSON, b);
}

/* /jemalloc/leaks[?format=json|text]: jmlk, JSON by default (the page
 * draws it), on the worker. */
void http_route_leaks(struct http_ctx *ctx)
{
	const char *f = evhttp_find_header(ctx->query, "format");
	int json = f == NULL || strcmp(f, "json") == 0;
	struct job_req req = {0};

	if (!json && strcmp(f, "text") != 0) {
		http_error(ctx->req, 400,
		    "unknown format \"%.40s\" (want json or text)", f);
		return;
	}
	req.kind = ctx->route->job;
	req.json = json;
	http_job(ctx, &req, http_job_ctype(&req), 0);
}

/* /jemalloc/recent[?live=1&min_size=N&format=json|text]: jmrc, JSON by
 * default (the page draws it), on the worker. */
void http_route_recent(struct http_ctx *ctx)
{
	const char *f = evhttp_find_header(ctx->query, "format");
	const char *live = evhttp_find_header(ctx->query, "live");
	const char *min = evhttp_find_header(ctx->query, "min_size");
	int json = f == NULL || strcmp(f, "json") == 0;
	uint64_t min_size = 0;
	struct job_req req = {0};

	if (!json && strcmp(f, "text") != 0) {
		http_error(ctx->req, 400,
		    "unknown format \"%.40s\" (want json or text)", f);
		return;
	}
	if (live != NULL && strcmp(live, "0") != 0 && strcmp(live, "1") != 0) {
		http_error(ctx->req, 400, "live=%.40s: want 0 or 1", live);
		return;
	}
	/* Digits only, at most 19: no overflow, no sign, no suffix. */
	if (min != NULL && min[0] != '\0' &&
	    history_since(min, &min_size) == -1) {
		http_error(ctx->req, 400,
		    "min_size=%.40s: want a size in bytes, digits only", min);
		return;
	}
	req.kind = ctx->route->job;
	req.json = json;
	req.live_only = live != NULL && strcmp(live, "1") == 0;
	req.min_size = min_size;
	http_job(ctx, &req, http_job_ctype(&req), 0);
}

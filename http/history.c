/*
 * The HTTP face of issue 23's history and leaks: /jemalloc/history, the
 * figures' ring as JSON (the page draws it whole on opening, then asks
 * for the rows since its last), and /jemalloc/leaks, the leak suspects,
 * which the worker computes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/keyvalq_struct.h>

#include "history.h"
#include "http.h"
#include "job.h"
#include "module.h"
#include "view.h"

#define TEXT "text/plain; charset=utf-8"
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

/* /jemalloc/history[?since=T]: {"interval", "points", "bytes",
 * "columns", "rows"}, rows oldest first, each [time, value...] with
 * null for a value this process lacks; with since=, only rows after T.
 * The whole ring is ~1 MB of JSON at the default size: a few ms on the
 * loop, once per page opened (BENCHMARKS.md); polls ask for a few rows. */
void http_route_history(struct http_ctx *ctx)
{
	const char *s = evhttp_find_header(ctx->query, "since");
	const struct history *h = &ctx->m->core.hist;
	struct evbuffer *b;
	const uint64_t *row;
	uint64_t since = 0;
	size_t i, c, n = 0;

	if (s != NULL && history_since(s, &since) == -1) {
		http_error(ctx->req, 400,
		    "since=%.40s: want seconds since the epoch (a row's time)",
		    s);
		return;
	}
	if (h->ring == NULL) {
		http_error(ctx->req, 404, "no history: history_points is 0");
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	evbuffer_add_printf(b,
	    "{\"interval\": %u, \"points\": %zu, \"bytes\": %zu, "
	    "\"columns\": [\"time\"",
	    h->interval, h->cap, history_bytes(h->cap));
	for (c = 0; c < HISTORY_COLS; c++)
		evbuffer_add_printf(b, ", \"%s\"", history_cols[c].name);
	evbuffer_add_printf(b, "], \"rows\": [");
	for (i = 0; i < h->n; i++) {
		row = history_row(h, i);
		if (row[0] <= since)
			continue;
		evbuffer_add_printf(b, "%s[%llu", n++ ? ",\n" : "\n",
		    (unsigned long long)row[0]);
		for (c = 1; c < HISTORY_ROW; c++)
			if (row[c] == HISTORY_NONE)
				evbuffer_add_printf(b, ", null");
			else
				evbuffer_add_printf(b, ", %llu",
				    (unsigned long long)row[c]);
		evbuffer_add_printf(b, "]");
	}
	evbuffer_add_printf(b, "]}\n");
	http_reply(ctx->req, 200, JSON, b);
}

/* /jemalloc/leaks[?format=json|text]: jmlk, JSON by default (the page
 * draws it), on the worker. */
void http_route_leaks(struct http_ctx *ctx)
{
	const char *f = evhttp_find_header(ctx->query, "format");
	int json = f == NULL || strcmp(f, "json") == 0;

	if (!json && strcmp(f, "text") != 0) {
		http_error(ctx->req, 400,
		    "unknown format \"%.40s\" (want json or text)", f);
		return;
	}
	http_job(ctx,
	    &(struct job_req){.kind = ctx->route->job,
	        .view = DUMP_VIEW_LEAKS,
	        .json = json},
	    json ? JSON : TEXT, 0);
}

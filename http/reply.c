/*
 * What a route answers with, below both the server (http.c) and the
 * routes (routes.c): a reply with the headers every reply carries, an
 * error line, a job handed to the worker and its answer, and the checks
 * a route makes itself (the allow list, CSRF). Neither the server nor the
 * routes are called from here, so the two never call each other.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/keyvalq_struct.h>

#include "answer.h"
#include "http.h"
#include "job.h"
#include "jobs.h"
#include "module.h"
#include "reason.h"
#include "result.h"
#include "view.h"

/* Headers every reply carries: nothing cached, no type sniffing. */
static void http_common_headers(struct evhttp_request *req, const char *ctype)
{
	struct evkeyvalq *o = evhttp_request_get_output_headers(req);

	evhttp_add_header(o, "Content-Type", ctype);
	evhttp_add_header(o, "Cache-Control", "no-store");
	evhttp_add_header(o, "X-Content-Type-Options", "nosniff");
	/* An SVG or a page of ours may run its own inline script, and
	 * nothing from anywhere else, itself included. */
	evhttp_add_header(o, "Content-Security-Policy",
	    "default-src 'none'; script-src 'unsafe-inline'; "
	    "style-src 'unsafe-inline'; img-src data:; "
	    "connect-src 'self'; form-action 'none'; frame-ancestors 'none'");
}

/* The reason phrase of @p code. */
static const char *http_reason(int code)
{
	switch (code) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 413:
		return "Payload Too Large";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	default:
		return "Error";
	}
}

/* Send @p body under @p code with the headers every reply carries; to a
 * HEAD, the headers alone with the length GET would have had (evhttp
 * would write the body after them, and a keep-alive client would read it
 * as the next reply). */
void http_reply(struct evhttp_request *req, int code, const char *ctype,
    struct evbuffer *body)
{
	char len[32];

	http_common_headers(req, ctype);
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
		snprintf(len, sizeof(len), "%zu",
		    body != NULL ? evbuffer_get_length(body) : (size_t)0);
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Content-Length", len);
		evhttp_send_reply(req, code, http_reason(code), NULL);
	} else
		evhttp_send_reply(req, code, http_reason(code), body);
	if (body != NULL)
		evbuffer_free(body);
}

/* One "error: " line, as the words write theirs. */
void http_error(struct evhttp_request *req, int code, const char *fmt, ...)
{
	struct evbuffer *b = evbuffer_new();
	char line[1024];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	for (i = 0; line[i] != '\0'; i++) /* one line, whatever came in */
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	if (b != NULL)
		evbuffer_add_printf(b, JM4LW_ERROR_PREFIX "%s\n", line);
	http_reply(req, code, "text/plain; charset=utf-8", b);
}

/* The status that says each reason, the one table of it: a refusal
 * the client can wait out (busy 409, rate 429, disk or too many
 * scrapers waiting 503), one it cannot
 * (no profiling: 501), one that is its own doing (400, 403, 404, 409),
 * a state of the heap (no samples to draw: 409). */
static const int http_status[REASON_COUNT] = {
    [REASON_NONE] = 200,
    [REASON_BUSY] = 409,
    [REASON_RATE] = 429,
    [REASON_NO_SPACE] = 503,
    [REASON_PROF_UNBUILT] = 501,
    [REASON_PROF_OFF] = 501,
    [REASON_NOT_ALLOWED] = 403,
    [REASON_UNKNOWN] = 404,
    [REASON_NO_DUMP] = 404,
    [REASON_NO_BASE] = 409,
    [REASON_BAD_REQUEST] = 400,
    [REASON_FAILED] = 500,
    [REASON_NO_STATS] = 501,
    [REASON_NO_SAMPLES] = 409,
    [REASON_CROWDED] = 503,
};

/* The table's status for @p why. */
int http_status_of(enum core_reason why)
{
	/* A failure that gave no reason is ours: 500. */
	if ((unsigned)why >= REASON_COUNT || why == REASON_NONE)
		return 500;
	return http_status[why];
}

/* A refused or failed job: its reason's status, when to retry, its line. */
static void http_job_error(struct evhttp_request *req,
    const struct dump_result *r)
{
	struct evkeyvalq *o = evhttp_request_get_output_headers(req);
	char retry[32];

	if (r->retry_after > 0) {
		snprintf(retry, sizeof(retry), "%d",
		    (int)(r->retry_after + 0.999));
		evhttp_add_header(o, "Retry-After", retry);
	}
	http_error(req, http_status_of(r->why), "%s", r->reason);
}

/* struct out's write into an evbuffer. */
static void http_out(void *arg, const void *buf, size_t len)
{
	(void)evbuffer_add(arg, buf, len);
}

struct out http_out_of(struct evbuffer *b)
{
	struct out o = {.write = http_out, .arg = b};

	return o;
}

/* The job's end (or its refusal, at once): the reply. */
static void http_job_answer(struct jm4lw *m, void *arg, struct dump_result *r)
{
	struct http_pending *p = arg;
	struct evbuffer *b;
	struct evbuffer_file_segment *seg;

	(void)m;
	if (p->hc != NULL)
		p->hc->pending = NULL;
	TAILQ_REMOVE(&p->h->pending, p, entry);
	if (p->req == NULL) { /* its connection went meanwhile */
		free(p);
		return;
	}
	if (r->status != DUMP_OK) {
		http_job_error(p->req, r);
		free(p);
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		http_error(p->req, 500, "%s", strerror(ENOMEM));
		free(p);
		return;
	}
	/* The rendering, mapped from its unnamed file: page cache, not the
	 * host's memory. The buffer closes the file when it is sent. */
	if (r->body && r->body_len > 0) {
		seg = evbuffer_file_segment_new(r->body_fd, 0,
		    (ev_off_t)r->body_len,
		    EVBUF_FS_DISABLE_SENDFILE | EVBUF_FS_CLOSE_ON_FREE);
		if (seg != NULL) {
			r->body = 0;
			r->body_fd = -1;
			(void)evbuffer_add_file_segment(b, seg, 0,
			    (ev_off_t)r->body_len);
			evbuffer_file_segment_free(seg);
		}
	}
	/* An earlier job's body, shared within dump_min_interval: how old
	 * it is, as a cache would say (RFC 9111's Age, seconds). */
	if (r->aged) {
		char age[32];
		snprintf(age, sizeof(age), "%ld", r->age);
		evhttp_add_header(evhttp_request_get_output_headers(p->req),
		    "Age", age);
		/* Ours, beside a cache's Age: how old the dump is that the
		 * answer was drawn from (dump_min_interval). */
		evhttp_add_header(evhttp_request_get_output_headers(p->req),
		    "X-Jm4lw-Dump-Age", age);
	}
	/* The wrappers the ranked views fold, beside raw stacks. */
	if (r->folded[0] != '\0')
		evhttp_add_header(evhttp_request_get_output_headers(p->req),
		    "X-Jm4lw-Folded", r->folded);
	/* Which snapshot a since= or at=peak answer is drawn from. */
	if (r->snap[0] != '\0')
		evhttp_add_header(evhttp_request_get_output_headers(p->req),
		    "X-Jm4lw-Base", r->snap);
	if (p->word) { /* jmfp's path, jmdf's after its table */
		struct out out = http_out_of(b);
		(void)answer_dump(&out, r);
	}
	http_reply(p->req, 200, p->ctype, b);
	free(p);
}

/* The waiter of a job for this request (its reply, @p ctype); NULL with
 * a 500 sent when memory runs out, or a 405 to a HEAD. */
static struct http_pending *http_pending_new(struct http_ctx *ctx,
    const char *ctype, int word, struct job_waiter *w)
{
	struct evhttp_connection *evcon =
	    evhttp_request_get_connection(ctx->req);
	struct http *h = ctx->m->http;
	struct http_conn *hc;
	struct http_pending *p;

	/* A HEAD cannot know GET's status without the job (a 409 or a 429
	 * is as likely as a 200), and a dump for headers nobody reads is the
	 * cost the job's admission exists to bound: 405, try GET. */
	if (evhttp_request_get_command(ctx->req) == EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(ctx->req),
		    "Allow", (ctx->flags & HTTP_POST) ? "GET, POST" : "GET");
		http_error(ctx->req, 405,
		    "%s runs a job: HEAD is not served, send GET", ctx->path);
		return NULL;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return NULL;
	}
	p->h = h;
	p->req = ctx->req;
	p->ctype = ctype;
	p->word = word;
	TAILQ_FOREACH(hc, &h->conns, entry)
		if (hc->evcon == evcon) {
			hc->pending = p;
			p->hc = hc;
			break;
		}
	w->answer = http_job_answer;
	w->arg = p;
	TAILQ_INSERT_TAIL(&h->pending, p, entry);
	return p;
}

/* What job request @p req's answer is sent as: its view's Content-Type,
 * or for an answer that is no view text (jmfp's path), or JSON or text as
 * the request asks (leaks, recent). */
const char *http_job_ctype(const struct job_req *req)
{
	if (req->kind != NULL && req->kind->answer != DUMP_ANSWER_VIEW)
		return req->json ? "application/json"
		                 : "text/plain; charset=utf-8";
	if (req->answer != DUMP_ANSWER_VIEW) /* jmfp's path */
		return "text/plain; charset=utf-8";
	return views[req->view].ctype;
}

/* Hand the job @p req asks for to the module, this request its waiter. */
void http_job(struct http_ctx *ctx, const struct job_req *req,
    const char *ctype, int word)
{
	struct job_req r = *req;
	struct job_waiter w;

	/* Whatever a route keeps, HTTP took it. */
	if (r.cause == CAUSE_NONE)
		r.cause = CAUSE_HTTP;
	if (http_pending_new(ctx, ctype, word, &w) != NULL)
		module_job(ctx->m, &w, &r);
}

/* May this request change state? The header a form cannot send, with
 * the value 1 exactly ("X-Jm4lw: 0" once counted; any other value
 * is refused as a missing header is), and nothing saying it comes from
 * another site. Two of any of these headers never get here
 * (http_ambiguity). */
const char *http_csrf_refusal(struct evhttp_request *req)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *origin = evhttp_find_header(in, "Origin");
	const char *site = evhttp_find_header(in, "Sec-Fetch-Site");
	const char *host = evhttp_find_header(in, "Host");
	const char *x = evhttp_find_header(in, "X-Jm4lw");

	if (x == NULL || strcmp(x, "1") != 0)
		return "this request changes state: send it as POST with the "
		       "header X-Jm4lw: 1";
	if (site != NULL && strcmp(site, "same-origin") != 0 &&
	    strcmp(site, "none") != 0)
		return "a request from another site may not change state";
	if (origin != NULL && strcmp(origin, "null") != 0 &&
	    (host == NULL || strncmp(origin, "http://", 7) != 0 ||
	        strcmp(origin + 7, host) != 0))
		return "a request from another origin may not change state";
	if (origin != NULL && strcmp(origin, "null") == 0)
		return "a request from another origin may not change state";
	return NULL;
}

/* The allow list, for a route that answers as word @p w does. */
int http_word_allowed(struct http_ctx *ctx, const char *w)
{
	const struct proto_word *bw;
	int flags = proto_word_flags(&ctx->m->proto, w, &bw);

	if (proto_allowed(ctx->m->cfg.allow, w, flags < 0 ? 0 : flags))
		return 1;
	ctx->m->core.st.words_refused++;
	http_error(ctx->req, 403,
	    "%s is served as %s, which is not in the allow list", ctx->path, w);
	return 0;
}

int http_word_serves(const struct http_ctx *ctx, const char *w)
{
	const struct proto_word *bw;
	int flags = proto_word_flags(&ctx->m->proto, w, &bw);

	return proto_allowed(ctx->m->cfg.allow, w, flags < 0 ? 0 : flags);
}

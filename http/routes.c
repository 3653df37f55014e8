/*
 * The HTTP face's paths, one const table: what Prometheus, go tool pprof,
 * Parca and Pyroscope, remote jeprof and ClickHouse Keeper's tooling ask
 * for, and every word as /4lw/<word>. Handlers ask core and render; the
 * heavy ones hand a job to the worker (http_job), as the words do.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/keyvalq_struct.h>

#include "answer.h"
#include "ctl.h"
#include "doctor.h"
#include "dumps.h"
#include "figures.h"
#include "http.h"
#include "job.h"
#include "json.h"
#include "module.h"
#include "profile.h"
#include "proto.h"
#include "view.h"

#define TEXT "text/plain; charset=utf-8"
#define HTML "text/html; charset=utf-8"
#define JSON "application/json"

/* In a route's help: the format names of views[], a|b|c, drawn from
 * the table when the help is shown (http_route_help). */
#define HELP_FORMATS "{formats}"

const char *http_route_help(const struct http_route *r, char *buf, size_t len)
{
	const char *at;
	char names[256];
	int n;

	if (r->help == NULL || (at = strstr(r->help, HELP_FORMATS)) == NULL)
		return r->help;
	n = (int)(at - r->help);
	snprintf(buf, len, "%.*s%s%s", n, r->help,
	    view_join(names, sizeof(names), NULL, -1, "|", "|"),
	    at + sizeof(HELP_FORMATS) - 1);
	return buf;
}

/* /, /jemalloc, /debug/pprof/: what there is, as links. */
static void route_index(struct http_ctx *ctx)
{
	struct evbuffer *b = evbuffer_new();
	const struct http_route *r;
	char help[512];

	if (b == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	evbuffer_add_printf(b,
	    "<!doctype html>\n<html><head><meta charset=\"utf-8\">"
	    "<title>jm4lw</title></head><body>\n<h1>jm4lw %s</h1>\n<ul>\n",
	    JM4LW_VERSION);
	for (r = http_routes; r->path != NULL; r++)
		if (r->help != NULL)
			evbuffer_add_printf(b,
			    "<li><a href=\"%s\">%s</a> &mdash; %s</li>\n",
			    r->path, r->path,
			    http_route_help(r, help, sizeof(help)));
	evbuffer_add_printf(b, "</ul>\n</body></html>\n");
	http_reply(ctx->req, 200, HTML, b);
}

/* The page, compiled in from http/page/jemalloc.html. */
extern const unsigned char http_page[];
extern const size_t http_page_len;

/* /jemalloc: the page (the next issue's; an index until then). */
static void route_page(struct http_ctx *ctx)
{
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	evbuffer_add_reference(b, http_page, http_page_len, NULL, NULL);
	http_reply(ctx->req, 200, HTML, b);
}

/* /jemalloc/dumps: jmls as JSON, for the page (answer/dumps.c). */
static void route_dumps(struct http_ctx *ctx)
{
	struct dump_list l;
	struct answer_dumps a = {.l = &l,
	    .prefix = ctx->m->core.cfg->dump_prefix};
	struct evbuffer *b;
	struct out out;

	if (core_dump_list(&ctx->m->core, &l) == -1) {
		http_error(ctx->req, 500, "cannot list %s: %s", l.dir,
		    dump_list_error(&l));
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		dump_list_free(&l);
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	out = http_out_of(b);
	answer_dumps(&out, ANSWER_JSON, &a);
	dump_list_free(&l);
	http_reply(ctx->req, 200, JSON, b);
}

/* /jemalloc/formats: views[]'s named rows, what the page offers to
 * download a kept dump as, in the table's order. */
static void route_formats(struct http_ctx *ctx)
{
	struct evbuffer *b = evbuffer_new();
	struct out out;
	int v, n = 0;

	if (b == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	out = http_out_of(b);
	out_puts(&out, "{\"formats\":[");
	for (v = 0; v < DUMP_VIEW_COUNT; v++) {
		if (views[v].name == NULL)
			continue;
		out_puts(&out, n++ ? ",{\"name\":" : "{\"name\":");
		json_string(&out, views[v].name);
		out_puts(&out, ",\"suffix\":");
		json_string(&out, views[v].suffix);
		out_puts(&out, ",\"type\":");
		json_string(&out, views[v].ctype);
		out_puts(&out, ",\"word\":");
		json_string(&out, views[v].word);
		out_puts(&out, "}");
	}
	out_puts(&out, "]}\n");
	http_reply(ctx->req, 200, JSON, b);
}

/* /jemalloc/dump?name=N&format=F[&base=M]: a kept dump's view. */
static void route_dump(struct http_ctx *ctx)
{
	const char *name = evhttp_find_header(ctx->query, "name");
	const char *base = evhttp_find_header(ctx->query, "base");
	const char *prefix = ctx->m->core.cfg->dump_prefix;
	struct evkeyvalq q;
	enum dump_view view;
	char why[256];
	int with_base;
	long pn, pb;

	if (name == NULL) {
		http_error(ctx->req, 400,
		    "which dump? name=<a name from "
		    "/jemalloc/dumps>");
		return;
	}
	/* The format's rules as /jemalloc/profile's, base aside: here it
	 * names a dump, not "previous". */
	TAILQ_INIT(&q);
	if (evhttp_find_header(ctx->query, "format") != NULL)
		evhttp_add_header(&q, "format",
		    evhttp_find_header(ctx->query, "format"));
	if (base != NULL)
		evhttp_add_header(&q, "base", "previous");
	if (http_profile_args(&q, &view, &with_base, why, sizeof(why)) == -1) {
		evhttp_clear_headers(&q);
		http_error(ctx->req, 400, "%s", why);
		return;
	}
	evhttp_clear_headers(&q);
	if (!http_word_allowed(ctx, views[view].word))
		return;
	if (view == DUMP_VIEW_RAW || view == DUMP_VIEW_PPROF)
		evhttp_add_header(evhttp_request_get_output_headers(ctx->req),
		    "Content-Disposition", "attachment");
	/* A base another process wrote (dump_dir is shared): said where
	 * every format has room, a header (the text says it in a line). */
	if (base != NULL && (pb = dumps_pid(prefix, base)) > 0 &&
	    (pn = dumps_pid(prefix, name)) > 0 && pb != pn) {
		snprintf(why, sizeof(why),
		    "the base dump is of another process (pid %ld; the "
		    "dump's: pid %ld): the difference mixes two heaps",
		    pb, pn);
		evhttp_add_header(evhttp_request_get_output_headers(ctx->req),
		    "X-Jm4lw-Warning", why);
	}
	http_job(ctx,
	    &(struct job_req){.kind = ctx->route->job,
	        .view = view,
	        .name = name,
	        .base = base},
	    views[view].ctype, 0);
}

/* /metrics */
static void route_metrics(struct http_ctx *ctx)
{
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	http_metrics(&ctx->m->core, b, http_word_serves(ctx, "jmdr"));
	http_reply(ctx->req, 200, "text/plain; version=0.0.4; charset=utf-8",
	    b);
}

int http_seconds_arg(const char *s, unsigned write_timeout, unsigned *out,
    char *why, size_t whylen)
{
	char *end;
	long long v;

	*out = 0;
	if (s == NULL)
		return 0;
	/* Go's strconv.ParseInt(s, 10, 64): a sign, digits, nothing else. */
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v <= 0 ||
	    (*s != '-' && *s != '+' && (*s < '0' || *s > '9'))) {
		snprintf(why, whylen,
		    "invalid value for \"seconds\" - must be a positive "
		    "integer");
		return -1;
	}
	/* The reply must be written before write_timeout, as Go refuses
	 * seconds >= the server's WriteTimeout: Go's words first (tools
	 * match them), then the limit and the key that sets it. */
	if (v >= (long long)write_timeout) {
		snprintf(why, whylen,
		    "profile duration exceeds server's WriteTimeout: "
		    "seconds=%lld, at most %u with write_timeout = %u "
		    "(raise write_timeout in the configuration)",
		    v, write_timeout - 1, write_timeout);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int span_arg(const char *s, unsigned *out);

/* /debug/pprof/heap and /allocs: pprof, symbolized here, in the view
 * the route's row names (their default sample types differ, as Go's);
 * with seconds=N, what changed over the next N s (Go's delta); with
 * since=5m, what changed since the snapshot of then. */
static void route_pprof_heap(struct http_ctx *ctx)
{
	struct job_req req = {.kind = ctx->route->job};
	enum dump_view view = ctx->route->view;
	const char *labels, *since;
	char name[64], why[256];
	unsigned seconds;

	if (http_seconds_arg(evhttp_find_header(ctx->query, "seconds"),
	        ctx->m->cfg.write_timeout, &seconds, why, sizeof(why)) == -1) {
		http_error(ctx->req, 400, "%s", why);
		return;
	}
	/* Scrapers get no thread labels (a series per thread); a person
	 * asks for them: labels=thread, /jemalloc/profile's pprof. */
	if ((labels = evhttp_find_header(ctx->query, "labels")) != NULL) {
		if (strcmp(labels, "thread") != 0 ||
		    view != DUMP_VIEW_PPROF_HEAP) {
			http_error(ctx->req, 400,
			    "labels=%.40s: thread labels are labels=thread, on "
			    "/debug/pprof/heap only",
			    labels);
			return;
		}
		/* A delta subtracts stacks, not their threads' lines: no
		 * label it could carry would be sound. Say so, never drop
		 * them. */
		if (seconds != 0) {
			http_error(ctx->req, 400,
			    "labels=thread: a delta (seconds=%u) carries no "
			    "thread labels; ask for one or the other",
			    seconds);
			return;
		}
		view = DUMP_VIEW_PPROF;
	}
	/* since=5m: the difference from the in-memory snapshot of then,
	 * at once, where seconds= waits them out. */
	if ((since = evhttp_find_header(ctx->query, "since")) != NULL &&
	    (seconds != 0 || span_arg(since, &req.since) == -1)) {
		http_error(ctx->req, 400,
		    "invalid since \"%.40s\" (want a span like 60s, 5m or 1h, "
		    "at most 168h, and no seconds=)",
		    since);
		return;
	}
	if (since != NULL)
		req.kind = &job_since;
	/* Go's names: heap, allocs; a delta's with -delta. */
	snprintf(name, sizeof(name), "attachment; filename=\"%s%s\"",
	    view == DUMP_VIEW_PPROF_ALLOCS ? "allocs" : "heap",
	    seconds != 0 || since != NULL ? "-delta" : ".pb.gz");
	evhttp_add_header(evhttp_request_get_output_headers(ctx->req),
	    "Content-Disposition", name);
	req.who = ctx->path;
	req.view = view;
	req.seconds = seconds;
	http_job(ctx, &req, views[view].ctype, 0);
}

/* /pprof/heap: the raw heap_v2 dump, for remote jeprof. */
static void route_raw_heap(struct http_ctx *ctx)
{
	http_job(ctx,
	    &(struct job_req){.kind = ctx->route->job,
	        .who = ctx->path,
	        .view = DUMP_VIEW_RAW},
	    views[DUMP_VIEW_RAW].ctype, 0);
}

/* A symbol lookup's body that is no list of addresses is the client's
 * mistake: 400 with the parser's line, here on the loop (the parse is
 * linear and allocates one array), rather than a 500 from the worker. */
static int symbol_body_bad(struct http_ctx *ctx)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(ctx->req);
	size_t len = evbuffer_get_length(in);
	const char *body = (const char *)evbuffer_pullup(in, -1);
	char why[256];
	uint64_t *pcs;
	long n;

	/* At most one address per 3 bytes ("0x1+"), as profile_symbols. */
	if ((pcs = calloc(len / 3 + 1, sizeof(*pcs))) == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return 1;
	}
	n = profile_parse_addrs(body != NULL ? body : "", len, pcs,
	    PROFILE_ADDRS_MAX, why, sizeof(why));
	free(pcs);
	if (n == -1)
		http_error(ctx->req, 400, "%s", why);
	return n == -1;
}

/* /pprof/symbol, /debug/pprof/symbol: GET says symbols are there; POST
 * names the addresses it is sent, on the worker. */
static void route_symbol(struct http_ctx *ctx)
{
	struct evbuffer *b, *in = evhttp_request_get_input_buffer(ctx->req);
	struct job_req req = {.kind = ctx->route->job, .who = ctx->path};

	if (ctx->post) {
		if (symbol_body_bad(ctx))
			return;
		req.addrs_len = evbuffer_get_length(in);
		req.addrs = (const char *)evbuffer_pullup(in, -1);
		http_job(ctx, &req, TEXT, 0);
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	evbuffer_add_printf(b, "num_symbols: 1\n");
	http_reply(ctx->req, 200, TEXT, b);
}

/* /pprof/cmdline, /debug/pprof/cmdline: the arguments, NUL-separated. */
static void route_cmdline(struct http_ctx *ctx)
{
	struct evbuffer *raw = evbuffer_new(), *b = evbuffer_new();
	char buf[4096];
	size_t len;
	ssize_t n;
	int fd;

	if (raw == NULL || b == NULL ||
	    (fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC)) == -1) {
		if (raw != NULL)
			evbuffer_free(raw);
		if (b != NULL)
			evbuffer_free(b);
		http_error(ctx->req, 500, "/proc/self/cmdline: %s",
		    strerror(errno));
		return;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		evbuffer_add(raw, buf, (size_t)n);
	close(fd);
	/* The kernel ends every argument in a NUL; Go's net/http/pprof
	 * joins them with NUL: the last one goes. */
	len = evbuffer_get_length(raw);
	if (len > 0 && evbuffer_pullup(raw, -1)[len - 1] == '\0')
		len--;
	evbuffer_remove_buffer(raw, b, len);
	evbuffer_free(raw);
	http_reply(ctx->req, 200, TEXT, b);
}

int http_profile_args(struct evkeyvalq *query, enum dump_view *view,
    int *with_base, char *why, size_t len)
{
	const char *fmt = evhttp_find_header(query, "format");
	const char *base = evhttp_find_header(query, "base");
	char names[128];
	int v;

	if (fmt == NULL)
		fmt = views[DUMP_VIEW_COLLAPSED].name;
	if ((v = view_by_name(fmt)) == -1) {
		snprintf(why, len, "unknown format \"%.40s\" (want %s)", fmt,
		    view_names(names, sizeof(names), 0));
		return -1;
	}
	if (base != NULL && strcmp(base, "previous") != 0) {
		snprintf(why, len,
		    "unknown base \"%.40s\" (want previous: the last dump this "
		    "process kept)",
		    base);
		return -1;
	}
	if (base != NULL && views[v].base == VIEW_BASE_NEVER) {
		snprintf(why, len, "format=%s shows one dump as it is: no base",
		    fmt);
		return -1;
	}
	*view = (enum dump_view)v;
	*with_base = base != NULL;
	return 0;
}

/* A span of time: digits and a unit, s, m or h (none: seconds), at most
 * a week. 0 with *@p out in seconds, or -1. */
static int span_arg(const char *s, unsigned *out)
{
	unsigned long long v = 0, unit = 1;
	const char *p = s;

	for (; *p >= '0' && *p <= '9' && v <= 604800; p++)
		v = v * 10 + (unsigned)(*p - '0');
	if (p == s)
		return -1;
	if (*p == 's' || *p == 'm' || *p == 'h')
		unit = *p == 'm' ? 60 : *p == 'h' ? 3600 : 1, p++;
	if (*p != '\0' || v == 0 || v * unit > 604800)
		return -1;
	*out = (unsigned)(v * unit);
	return 0;
}

/* ?since=5m (growth since the in-memory snapshot of then) or ?at=peak
 * (the snapshot at the highest stats.allocated): the kind of job, with
 * req->since; &job_dump when neither is asked; -1 with @p why. */
static int snapshot_args(struct evkeyvalq *query, enum dump_view view, int base,
    struct job_req *req, char *why, size_t len)
{
	const char *since = evhttp_find_header(query, "since");
	const char *at = evhttp_find_header(query, "at");

	if (since == NULL && at == NULL)
		return 0;
	if (at != NULL && strcmp(at, "peak") != 0) {
		snprintf(why, len, "unknown at \"%.40s\" (want peak)", at);
		return -1;
	}
	if ((since != NULL) + (at != NULL) + (base != 0) > 1) {
		snprintf(why, len, "one of base, since and at at a time");
		return -1;
	}
	if (at != NULL) {
		req->kind = &job_peak;
		return 0;
	}
	if (span_arg(since, &req->since) == -1) {
		snprintf(why, len,
		    "invalid since \"%.40s\" (want a span like 60s, 5m or "
		    "1h, at most 168h)",
		    since);
		return -1;
	}
	if (views[view].base == VIEW_BASE_NEVER) {
		snprintf(why, len,
		    "format=%s shows one dump as it is: no since",
		    views[view].name);
		return -1;
	}
	req->kind = &job_since;
	return 0;
}

/* Two of base=, since= and at= (whatever their values): -1 with @p why,
 * said before either value is read, since no value of either would do. */
static int profile_base_one(struct evkeyvalq *query, char *why, size_t len)
{
	const char *name[] = {"base", "since", "at"}, *have[2];
	size_t i, n = 0;

	for (i = 0; i < sizeof(name) / sizeof(name[0]); i++)
		if (evhttp_find_header(query, name[i]) != NULL && n < 2)
			have[n++] = name[i];
	if (n < 2)
		return 0;
	snprintf(why, len,
	    "%s= and %s= cannot be combined: base=previous compares with the "
	    "last kept dump, since= with a snapshot, at=peak shows the "
	    "snapshot at the peak; ask one",
	    have[0], have[1]);
	return -1;
}

/* /jemalloc/profile?format=...&base=previous|since=5m|at=peak: Keeper's
 * path, and the snapshots'. */
static void route_profile(struct http_ctx *ctx)
{
	struct job_req req = {.kind = ctx->route->job,
	    .who = "/jemalloc/profile"};
	enum dump_view view;
	char why[256];
	int base;

	if (profile_base_one(ctx->query, why, sizeof(why)) == -1 ||
	    http_profile_args(ctx->query, &view, &base, why, sizeof(why)) ==
	        -1 ||
	    snapshot_args(ctx->query, view, base, &req, why, sizeof(why)) ==
	        -1) {
		http_error(ctx->req, 400, "%s", why);
		return;
	}
	if (!http_word_allowed(ctx, views[view].word))
		return;
	req.view = view;
	req.with_base = base;
	http_job(ctx, &req, views[view].ctype, 0);
}

/* malloc_stats_print's pieces into an evbuffer. */
static void stats_cb(void *arg, const char *s)
{
	evbuffer_add(arg, s, strlen(s));
}

/* /jemalloc/stats[?format=json] */
static void route_stats(struct http_ctx *ctx)
{
	const char *fmt = evhttp_find_header(ctx->query, "format");
	struct evbuffer *b;
	int json = fmt != NULL && strcmp(fmt, "json") == 0;

	if (fmt != NULL && !json && strcmp(fmt, "text") != 0) {
		http_error(ctx->req, 400,
		    "unknown format \"%.40s\" (want text or json)", fmt);
		return;
	}
	if (!http_word_allowed(ctx, json ? "jmsj" : "jmst"))
		return;
	if ((b = evbuffer_new()) == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	core_stats_print(&ctx->m->core, stats_cb, b, json);
	if (json)
		evbuffer_add(b, "\n", 1);
	http_reply(ctx->req, 200, json ? JSON : TEXT, b);
}

/* /jemalloc/status: the figures as one JSON object, Keeper's names for
 * profiling first (answer/figures.c). */
static void route_status(struct http_ctx *ctx)
{
	struct figure_value v[FIGURES_MAX];
	struct view_sampling s;
	struct answer_figures a = {.v = v, .sampling = &s};
	struct evbuffer *b = evbuffer_new();
	struct out out;

	if (b == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	figures_read(&ctx->m->core, v);
	core_sampling(&ctx->m->core, &s); /* why a profile is empty */
	out = http_out_of(b);
	answer_figures(&out, ANSWER_JSON, &a);
	http_reply(ctx->req, 200, JSON, b);
}

/* /jemalloc/doctor: jmdr as JSON, every figure in bytes
 * (answer/doctor.c). */
static void route_doctor(struct http_ctx *ctx)
{
	struct evbuffer *b;
	struct doctor *d;
	struct out out;

	if ((d = malloc(sizeof(*d))) == NULL || (b = evbuffer_new()) == NULL) {
		free(d);
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	core_doctor(&ctx->m->core, d);
	if (!d->ok) {
		http_error(ctx->req, http_status_of(d->why), "%s", d->reason);
		evbuffer_free(b);
	} else {
		out = http_out_of(b);
		answer_doctor(&out, ANSWER_JSON, d);
		http_reply(ctx->req, 200, JSON, b);
	}
	free(d);
}

/* /4lw/<word>: exactly what the word answers on the raw port. */
static void route_word(struct http_ctx *ctx)
{
	const char *w = ctx->path + strlen("/4lw/"), *why;
	const struct proto_word *bw;
	struct out out;
	struct evbuffer *b;
	struct proto_result res;
	int flags, r;

	if (strlen(w) != 4 ||
	    (flags = proto_word_flags(&ctx->m->proto, w, &bw)) == -1) {
		http_error(ctx->req, 404, "unknown word at %.60s", ctx->path);
		return;
	}
	if ((flags & PROTO_F_MUTATES) && !ctx->post) {
		evhttp_add_header(evhttp_request_get_output_headers(ctx->req),
		    "Allow", "POST");
		http_error(ctx->req, 405, "%s changes state: POST it", w);
		return;
	}
	if ((flags & PROTO_F_MUTATES) &&
	    (why = http_csrf_refusal(ctx->req)) != NULL) {
		http_error(ctx->req, 403, "%s", why);
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		http_error(ctx->req, 500, "%s", strerror(ENOMEM));
		return;
	}
	out = http_out_of(b);
	r = proto_dispatch(&ctx->m->proto, w, &out, &res);
	if (r == PROTO_JOB) {
		evbuffer_free(b);
		res.req.cause = CAUSE_HTTP;
		http_job(ctx, &res.req, http_job_ctype(&res.req), 1);
		return;
	}
	/* The word's own line, under the status that says why. */
	http_reply(ctx->req, r == PROTO_OK ? 200 : http_status_of(res.why),
	    TEXT, b);
}

const struct http_route http_routes[] = {
    {"/", HTTP_GET, route_index, NULL, NULL},
    {"/jemalloc", HTTP_GET, route_page, NULL, NULL},
    {"/jemalloc/", HTTP_GET, route_page, NULL, NULL},
    {"/jemalloc/dumps", HTTP_GET, route_dumps,
        "this process's kept dumps, JSON (jmls)", "jmls"},
    {"/jemalloc/dump", HTTP_GET, route_dump,
        "a kept dump: ?name=N&amp;format=" HELP_FORMATS "[&amp;base=M]", NULL,
        &job_render},
    {"/jemalloc/formats", HTTP_GET, route_formats,
        "the formats a dump is shown in, JSON: name, file suffix, "
        "Content-Type, the word governing it",
        NULL},
    {"/metrics", HTTP_GET, route_metrics,
        "Prometheus metrics: allocator figures and the module's counters",
        "mntr"},
    {"/jemalloc/status", HTTP_GET, route_status,
        "profiling state and figures, JSON", "mntr"},
    {"/jemalloc/doctor", HTTP_GET, route_doctor,
        "where resident memory goes and what to do, JSON (jmdr)", "jmdr"},
    {"/jemalloc/stats", HTTP_GET, route_stats,
        "malloc_stats_print (?format=json for JSON)", NULL},
    {"/jemalloc/profile", HTTP_GET, route_profile,
        "a fresh heap profile: ?format=" HELP_FORMATS
        ", &amp;base=previous for the growth since the last dump",
        NULL, &job_dump},
    {"/jemalloc/fragmentation", HTTP_GET, http_route_frag,
        "fragmentation by size class and allocation site, JSON "
        "(?format=text: jmfr; ?format=fragflame: collapsed stacks of the "
        "waste)",
        "jmfr", &job_dump},
    {"/jemalloc/history", HTTP_GET, http_route_history,
        "the figures' history ring, JSON (?since=T for the rows after T; "
        "jmhi)",
        "jmhi"},
    {"/jemalloc/leaks", HTTP_GET, http_route_leaks,
        "leak suspects over this process's kept dumps, JSON "
        "(?format=text: jmlk)",
        "jmlk", &job_leaks},
    {"/jemalloc/recent", HTTP_GET, http_route_recent,
        "recent sampled allocations, both stacks symbolized, JSON "
        "(?live=1, ?min_size=N, ?format=text: jmrc)",
        "jmrc", &job_recent},
    {"/debug/pprof/", HTTP_GET, route_index, NULL, NULL},
    {"/debug/pprof/heap", HTTP_GET, route_pprof_heap,
        "pprof of the live heap, symbolized (go tool pprof); inuse_space "
        "first; ?labels=thread labels each sample with its thread",
        "jmtp", &job_scrape, DUMP_VIEW_PPROF_HEAP},
    {"/debug/pprof/allocs", HTTP_GET, route_pprof_heap,
        "the same, alloc_space first (allocation totals need prof_accum)",
        "jmtp", &job_scrape, DUMP_VIEW_PPROF_ALLOCS},
    {"/debug/pprof/symbol", HTTP_GET | HTTP_POST, route_symbol,
        "address to function, as Go's net/http/pprof", "jmtp", &job_symbols},
    {"/debug/pprof/cmdline", HTTP_GET, route_cmdline, "the process's arguments",
        "conf"},
    {"/pprof/heap", HTTP_GET, route_raw_heap,
        "a raw heap_v2 dump for jeprof http://host:port/pprof/heap", "jmtp",
        &job_dump},
    {"/pprof/symbol", HTTP_GET | HTTP_POST, route_symbol,
        "jeprof's symbol lookup", "jmtp", &job_symbols},
    {"/pprof/cmdline", HTTP_GET, route_cmdline, "the program, for jeprof",
        "conf"},
    {"/4lw/", HTTP_GET | HTTP_POST | HTTP_PREFIX, route_word,
        "every word: GET /4lw/ruok; words that change state by POST with "
        "X-Jm4lw: 1",
        NULL},
    {NULL, 0, NULL, NULL, NULL},
};

/*
 * frag — /jemalloc/fragmentation: fragmentation by size class and
 * allocation site (prof/frag.c) from a fresh dump and the bins read
 * beside it, as JSON, text (jmfr's) or collapsed stacks of the waste.
 */
#include <string.h>

#include <event2/keyvalq_struct.h>

#include "http.h"
#include "job.h"
#include "view.h"

/* /jemalloc/fragmentation[?format=json|text|fragflame] */
void http_route_frag(struct http_ctx *ctx)
{
	const char *f = evhttp_find_header(ctx->query, "format");
	enum dump_view view = DUMP_VIEW_FRAG_JSON;

	if (f != NULL && strcmp(f, "text") == 0)
		view = DUMP_VIEW_FRAG;
	else if (f != NULL && strcmp(f, "fragflame") == 0)
		view = DUMP_VIEW_FRAG_FLAME;
	else if (f != NULL && strcmp(f, "json") != 0) {
		http_error(ctx->req, 400,
		    "unknown format \"%.40s\" (want json, text or fragflame)",
		    f);
		return;
	}
	http_job(ctx,
	    &(struct job_req){.kind = ctx->route->job,
	        .who = "/jemalloc/fragmentation",
	        .view = view},
	    views[view].ctype, 0);
}

/*
 * The figures (core/figures.c's one table, read by figures_read): mntr's
 * key<TAB>value text, srvr's summary, /jemalloc/status's JSON object and
 * the /metrics
 * families, each row with a metric name becoming "# HELP", "# TYPE" and
 * its sample (Prometheus' text exposition format 0.0.4). A figure is
 * defined once, in core's table; every rendering of it is here.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "answer.h"
#include "figures.h"
#include "jm4lw.h"
#include "json.h"
#include "view.h"
#include "when.h"

/* mntr: ZooKeeper's key<TAB>value shape, one line per figure we have. */
void answer_figures_text(struct out *out, const struct answer_figures *a)
{
	const struct figure_value *v = a->v;
	char when[32];
	size_t i;

	for (i = 0; i < figures_count; i++) {
		if (!v[i].have)
			continue;
		switch (figures[i].type) {
		case FIG_TEXT:
			out_printf(out, "%s\t%s\n", figures[i].key, v[i].s);
			break;
		case FIG_BOOL:
			out_printf(out, "%s\t%s\n", figures[i].key,
			    v[i].u ? "true" : "false");
			break;
		case FIG_TIME:
			out_printf(out, "%s\t%s\n", figures[i].key,
			    fmt_time(when, sizeof(when), (time_t)v[i].u));
			break;
		default:
			out_printf(out, "%s\t%" PRIu64 "\n", figures[i].key,
			    v[i].u);
		}
	}
}

/* A figure's number, 0 if this process does not have it. */
static uint64_t figure_u(const struct figure_value *v, const char *key)
{
	const struct figure_value *f = figure_find(v, key);

	return f != NULL ? f->u : 0;
}

/* srvr: ZooKeeper's "Key: value" summary of the same figures. */
void answer_summary_text(struct out *out, const struct answer_figures *a)
{
	const struct figure_value *on, *active;
	const char *prof = "unavailable";

	if ((on = figure_find(a->v, "jemalloc_opt_prof")) != NULL) {
		prof = "off";
		active = figure_find(a->v, "jemalloc_prof_active");
		if (on->u && active != NULL)
			prof = active->u ? "active" : "inactive";
	}
	out_printf(out, "jm4lw version: %s (jemalloc %s)\n", JM4LW_VERSION,
	    a->jemalloc);
	out_printf(out, "Uptime: %" PRIu64 "\n",
	    figure_u(a->v, "jm4lw_uptime_seconds"));
	out_printf(out, "Connections: %" PRIu64 "\n",
	    figure_u(a->v, "jm4lw_open_connections"));
	out_printf(out, "Received: %" PRIu64 "\n",
	    figure_u(a->v, "jm4lw_words_served"));
	out_printf(out, "Dumps: %" PRIu64 "\n",
	    figure_u(a->v, "jm4lw_dumps_written"));
	out_printf(out, "Profiling: %s\n", prof);
	out_printf(out, "Mode: %s\n", a->mode);
}

/* "sampling": its state, since when (ISO 8601, or null), its interval
 * and the note a profile of now would carry (or null). */
static void sampling_json(struct out *out, const struct view_sampling *s)
{
	static const char *const names[] = {"unknown", "off", "inactive",
	    "active"};
	char when[32], note[512];

	out_printf(out,
	    ", \"sampling\": {\"state\": \"%s\", \"since\": ", names[s->state]);
	if (s->since_ns > 0) {
		fmt_time(when, sizeof(when),
		    (time_t)(s->since_ns / 1000000000));
		json_string(out, when);
	} else
		out_printf(out, "null");
	out_printf(out,
	    ", \"since_reset\": %s, \"from_start\": %s, "
	    "\"interval_bytes\": %llu, \"note\": ",
	    s->since_reset ? "true" : "false", s->from_start ? "true" : "false",
	    s->interval);
	if (view_sampling_note(NULL, &(struct view_args){.sampling = *s}, note,
	        sizeof(note)) != NULL)
		json_string(out, note);
	else
		out_printf(out, "null");
	out_printf(out, "}");
}

/* /jemalloc/status: the figures as one JSON object, Keeper's names for
 * profiling first. */
void answer_figures_json(struct out *out, const struct answer_figures *a)
{
	const struct figure_value *v = a->v;
	const struct figure_value *x;
	size_t i;

	x = figure_find(v, "jemalloc_opt_prof");
	out_printf(out, "{\"prof_enabled\": %s",
	    x != NULL && x->u ? "true" : "false");
	x = figure_find(v, "jemalloc_prof_active");
	out_printf(out, ", \"prof_active\": %s",
	    x != NULL && x->u ? "true" : "false");
	if ((x = figure_find(v, "jemalloc_lg_prof_sample")) != NULL)
		out_printf(out, ", \"lg_sample\": %llu",
		    (unsigned long long)x->u);
	if (a->sampling != NULL)
		sampling_json(out, a->sampling);
	for (i = 0; i < figures_count; i++) {
		if (!v[i].have)
			continue;
		out_printf(out, ", ");
		json_string(out, figures[i].key);
		out_printf(out, ": ");
		if (figures[i].type == FIG_TEXT)
			json_string(out, v[i].s);
		else if (figures[i].type == FIG_BOOL)
			out_printf(out, "%s", v[i].u ? "true" : "false");
		else
			out_printf(out, "%llu", (unsigned long long)v[i].u);
	}
	out_printf(out, "}\n");
}

/* A label value: backslash, quote and newline escaped, as the format
 * wants them. */
static void label(struct out *out, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			out_printf(out, "\\%c", *v);
		else if (*v == '\n')
			out_write(out, "\\n", 2);
		else
			out_write(out, v, 1);
	}
}

/* /metrics' figures, then what is running as labels of a constant, the
 * usual way (jm4lw_build_info). */
void answer_figures_prometheus(struct out *out, const struct answer_figures *a)
{
	const struct figure *f;
	const char *family = NULL;
	size_t i;

	for (i = 0; i < figures_count; i++) {
		f = &figures[i];
		if (f->metric == NULL || !a->v[i].have || f->type == FIG_TEXT)
			continue;
		/* A labelled family's rows follow each other: one HELP. */
		if (family == NULL || strcmp(family, f->metric) != 0)
			out_printf(out, "# HELP %s %s\n# TYPE %s %s\n",
			    f->metric, f->help, f->metric,
			    f->type == FIG_COUNTER ? "counter" : "gauge");
		family = f->metric;
		out_printf(out, "%s%s%s%s %llu\n", f->metric,
		    f->labels != NULL ? "{" : "",
		    f->labels != NULL ? f->labels : "",
		    f->labels != NULL ? "}" : "",
		    (unsigned long long)a->v[i].u);
	}
	out_printf(out,
	    "# HELP jm4lw_build_info jm4lw's and jemalloc's versions and the "
	    "symbolizer, as labels\n# TYPE jm4lw_build_info gauge\n"
	    "jm4lw_build_info{version=\"");
	label(out, JM4LW_VERSION);
	out_printf(out, "\",jemalloc=\"");
	label(out, a->jemalloc);
	out_printf(out, "\",symbolizer=\"");
	label(out, a->symbolizer);
	out_printf(out, "\"} 1\n");
}

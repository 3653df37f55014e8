/*
 * /metrics: Prometheus' text exposition format 0.0.4, rendered from the
 * same figures table mntr renders, so a figure is defined once: each row
 * with a metric name becomes "# HELP", "# TYPE" and its sample.
 * What a family reveals is governed by the word that reveals the same
 * (issue 28 #7): the figures and jm4lw_build_info are mntr's (the route's
 * word: mntr shows the versions and the symbolizer too); the doctor's
 * families, per part, arena and size class, are jmdr's, and appear only
 * when the allow list serves jmdr.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "ctl.h"
#include "doctor.h"
#include "figures.h"
#include "http.h"
#include "jm4lw.h"
#include "symbolize.h"

/* A label value: backslash, quote and newline escaped, as the format
 * wants them. */
static void label(struct evbuffer *out, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			evbuffer_add_printf(out, "\\%c", *v);
		else if (*v == '\n')
			evbuffer_add(out, "\\n", 2);
		else
			evbuffer_add(out, v, 1);
	}
}

void http_metrics(struct core *c, struct evbuffer *out, int doctor)
{
	struct figure_value v[FIGURES_MAX];
	const struct figure *f;
	struct doctor *d;
	size_t i;

	figures_read(c, v);
	for (i = 0; i < figures_count; i++) {
		f = &figures[i];
		if (f->metric == NULL || !v[i].have || f->type == FIG_TEXT)
			continue;
		evbuffer_add_printf(out,
		    "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", f->metric, f->help,
		    f->metric, f->type == FIG_COUNTER ? "counter" : "gauge",
		    f->metric, (unsigned long long)v[i].u);
	}
	/* What is running, as labels of a constant, the usual way. */
	evbuffer_add_printf(out,
	    "# HELP jm4lw_build_info jm4lw's and jemalloc's versions and the "
	    "symbolizer, as labels\n# TYPE jm4lw_build_info gauge\n"
	    "jm4lw_build_info{version=\"");
	label(out, JM4LW_VERSION);
	evbuffer_add_printf(out, "\",jemalloc=\"");
	label(out, core_version(c));
	evbuffer_add_printf(out, "\",symbolizer=\"");
	label(out, sym_backend());
	evbuffer_add_printf(out, "\"} 1\n");
	/* Where resident goes, per arena and size class (issue 22): jmdr's. */
	if (doctor && (d = malloc(sizeof(*d))) != NULL) {
		core_doctor(c, d);
		http_doctor_metrics(d, out);
		free(d);
	}
}

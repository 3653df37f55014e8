/*
 * /metrics: Prometheus' text exposition format 0.0.4. The figures and
 * jm4lw_build_info are rendered by answer/figures.c from the same table
 * mntr renders, so a figure is defined once; the doctor's families by
 * answer/doctor.c. What a family reveals is governed by the word that
 * reveals the same: the figures and jm4lw_build_info are mntr's (the
 * route's word: mntr shows the versions and the symbolizer too); the
 * doctor's families, per part, arena and size class, are jmdr's, and
 * appear only when the allow list serves jmdr.
 */
#include <stdlib.h>

#include "answer.h"
#include "core.h"
#include "ctl.h"
#include "doctor.h"
#include "figures.h"
#include "http.h"
#include "jm4lw.h"
#include "symbolize.h"

void http_metrics(struct core *c, struct evbuffer *b, int doctor)
{
	struct figure_value v[FIGURES_MAX];
	struct answer_figures a = {.v = v,
	    .jemalloc = core_version(c),
	    .symbolizer = sym_backend()};
	struct out out = http_out_of(b);
	struct doctor *d;

	figures_read(c, v);
	answer_figures(&out, ANSWER_PROMETHEUS, &a);
	/* Where resident goes, per arena and size class: jmdr's. None
	 * without stats (a diagnosis that failed). */
	if (doctor && (d = malloc(sizeof(*d))) != NULL) {
		core_doctor(c, d);
		if (d->ok)
			answer_doctor(&out, ANSWER_PROMETHEUS, d);
		free(d);
	}
}

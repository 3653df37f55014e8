/*
 * The doctor's HTTP renderings (issue 22): GET /jemalloc/doctor as JSON,
 * every figure in bytes, and the /metrics families per arena and per
 * size class. core/doctor.c diagnoses; this file only renders.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "http.h"
#include "proto.h"

/* Arenas /metrics shows one by one; the rest are summed as "other", so
 * a process with 256 arenas still makes a bounded number of series. */
#define METRICS_ARENAS 16

/* An arena's allocated share of its active pages; 1 when it has none. */
static double arena_util(const struct doctor_arena *a)
{
	return a->active > 0 ? (double)a->allocated / (double)a->active : 1.0;
}

/* One size class as a JSON object. */
static void json_bin(struct evbuffer *b, const struct doctor_bin *x)
{
	evbuffer_add_printf(b,
	    "{\"size\": %zu, \"objects\": %" PRIu64 ", \"slabs\": %" PRIu64
	    ", \"slab_bytes\": %zu, \"regions_per_slab\": %u, "
	    "\"free_bytes\": %" PRIu64 ", \"utilization\": %.4f}",
	    x->size, x->curregs, x->curslabs, x->slab_size, x->nregs, x->waste,
	    x->util);
}

/* One arena (or "other") as a JSON object. */
static void json_arena(struct evbuffer *b, const struct doctor_arena *a)
{
	if (a->index == DOCTOR_OTHER)
		evbuffer_add_printf(b, "{\"arena\": \"other\"");
	else
		evbuffer_add_printf(b, "{\"arena\": \"%u\"", a->index);
	evbuffer_add_printf(b,
	    ", \"arenas\": %u, \"threads\": %u, \"allocated\": %" PRIu64
	    ", \"active\": %" PRIu64 ", \"resident\": %" PRIu64
	    ", \"dirty\": %" PRIu64 ", \"muzzy\": %" PRIu64
	    ", \"frag_bytes\": %" PRIu64 ", \"tcache\": %" PRIu64
	    ", \"utilization\": %.4f, \"dirty_decay_ms\": %ld, "
	    "\"muzzy_decay_ms\": %ld}",
	    a->narenas, a->nthreads, a->allocated, a->active, a->resident,
	    a->dirty, a->muzzy, a->frag, a->tcache, arena_util(a),
	    a->dirty_decay_ms, a->muzzy_decay_ms);
}

/* The figures and the parts of resident. */
static void json_figures(struct evbuffer *b, const struct doctor *d)
{
	int k;

	evbuffer_add_printf(b,
	    "{\"allocated\": %" PRIu64 ", \"active\": %" PRIu64
	    ", \"resident\": %" PRIu64 ", \"purge_gain_bytes\": %" PRIu64
	    ", \"mapped\": %" PRIu64 ", \"retained\": %" PRIu64
	    ", \"metadata\": %" PRIu64 ", \"base\": %" PRIu64
	    ", \"internal\": %" PRIu64 ", \"metadata_thp\": %" PRIu64
	    ", \"tcache\": %" PRIu64 ", \"dirty\": %" PRIu64
	    ", \"muzzy\": %" PRIu64 ", \"small_frag\": %" PRIu64
	    ", \"large_pad\": %" PRIu64 ", \"frag_bytes\": %" PRIu64
	    ", \"residue\": %" PRId64 ", \"page\": %zu, \"narenas\": %u"
	    ", \"background_thread\": %s",
	    d->allocated, d->active, d->resident, d->purge_gain, d->mapped,
	    d->retained, d->metadata, d->base, d->internal, d->metadata_thp,
	    d->tcache, d->dirty, d->muzzy, d->small_frag, d->large_pad,
	    d->active > d->allocated ? d->active - d->allocated : 0, d->residue,
	    d->page, d->narenas, d->background_thread ? "true" : "false");
	evbuffer_add_printf(b, ", \"parts\": [");
	for (k = 0; k < DOCTOR_PARTS; k++) {
		evbuffer_add_printf(b, "%s{\"key\": ", k ? ", " : "");
		json_str(b, doctor_parts[k].key);
		evbuffer_add_printf(b, ", \"label\": ");
		json_str(b, doctor_parts[k].label);
		evbuffer_add_printf(b, ", \"bytes\": %" PRIu64 "}", d->part[k]);
	}
	evbuffer_add_printf(b,
	    "], \"profiling\": {\"enabled\": %s, \"active\": %s, "
	    "\"lg_sample\": %zu, \"sample_every_bytes\": %llu, "
	    "\"samples\": %" PRIu64 ", \"cost_bytes\": %" PRIu64
	    ", \"exact\": %s}",
	    d->prof ? "true" : "false", d->prof_active ? "true" : "false",
	    d->lg_sample, d->lg_sample < 63 ? 1ULL << d->lg_sample : 0ULL,
	    d->prof_samples, d->prof_cost, d->prof_exact ? "true" : "false");
}

/* GET /jemalloc/doctor's body: one JSON object, every figure in bytes. */
void http_doctor_json(const struct doctor *d, struct evbuffer *b)
{
	char line[512];
	unsigned i;

	json_figures(b, d);
	evbuffer_add_printf(b, ", \"size_classes\": [");
	for (i = 0; i < d->nbins; i++) {
		evbuffer_add_printf(b, "%s", i ? ", " : "");
		json_bin(b, &d->bins[i]);
	}
	evbuffer_add_printf(b, "], \"worst_size_classes\": [");
	for (i = 0; i < d->nworst_bins; i++) {
		evbuffer_add_printf(b, "%s", i ? ", " : "");
		json_bin(b, &d->bins[d->worst_bins[i]]);
	}
	evbuffer_add_printf(b, "], \"arenas\": [");
	for (i = 0; i < d->narena_rows; i++) {
		evbuffer_add_printf(b, "%s", i ? ", " : "");
		json_arena(b, &d->arenas[i]);
	}
	evbuffer_add_printf(b, "], \"worst_arenas\": [");
	for (i = 0; i < d->nworst_arenas; i++) {
		evbuffer_add_printf(b, "%s", i ? ", " : "");
		json_arena(b, &d->arenas[d->worst_arenas[i]]);
	}
	evbuffer_add_printf(b, "], \"advice\": [");
	for (i = 0; i < d->nadvice; i++) {
		evbuffer_add_printf(b, "%s{\"kind\": \"%s\", ", i ? ", " : "",
		    proto_doctor_advice_key(&d->advice[i]));
		evbuffer_add_printf(b,
		    "\"figure_bytes\": %" PRIu64 ", \"gain_bytes\": %" PRIu64
		    ", \"text\": ",
		    d->advice[i].figure, d->advice[i].gain);
		json_str(b,
		    proto_doctor_advice(&d->advice[i], line, sizeof(line)));
		evbuffer_add_printf(b, "}");
	}
	evbuffer_add_printf(b, "]}\n");
}

/*
 * The families' text, built by hand in a buffer and handed to the
 * evbuffer in a few pieces: one evbuffer_add_printf a sample (vsnprintf
 * each time) was ~0.25 us a line, most of what the doctor's ~150 lines
 * added to a scrape (BENCHMARKS.md). Every value is an integer or a
 * ratio in [0, 1], which need no printf.
 */
struct mbuf {
	struct evbuffer *out;
	size_t n;
	char buf[8192];
};

/* Hand what is buffered to the evbuffer. */
static void mb_flush(struct mbuf *m)
{
	evbuffer_add(m->out, m->buf, m->n);
	m->n = 0;
}

/* Append @p len bytes (less than the buffer). */
static void mb_put(struct mbuf *m, const char *s, size_t len)
{
	if (m->n + len > sizeof(m->buf))
		mb_flush(m);
	if (len > sizeof(m->buf)) {
		evbuffer_add(m->out, s, len);
		return;
	}
	memcpy(m->buf + m->n, s, len);
	m->n += len;
}

/* Append a NUL-terminated string. */
static void mb_str(struct mbuf *m, const char *s)
{
	mb_put(m, s, strlen(s));
}

/* An unsigned in decimal. */
static void mb_u64(struct mbuf *m, uint64_t v)
{
	char d[24];
	size_t i = sizeof(d);

	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	mb_put(m, d + i, sizeof(d) - i);
}

/* A ratio in [0, 1] with six decimals ("1" when whole). */
static void mb_ratio(struct mbuf *m, double r)
{
	uint64_t v = r >= 1.0 ? 1000000
	    : r <= 0.0        ? 0
	                      : (uint64_t)(r * 1e6 + 0.5);
	char d[8] = "0.000000";
	int i;

	if (v >= 1000000) {
		mb_put(m, "1", 1);
		return;
	}
	for (i = 7; i >= 2; i--, v /= 10)
		d[i] = (char)('0' + v % 10);
	mb_put(m, d, 8);
}

/* A family's header. */
static void family(struct mbuf *m, const char *name, const char *help)
{
	mb_str(m, "# HELP ");
	mb_str(m, name);
	mb_put(m, " ", 1);
	mb_str(m, help);
	mb_str(m, "\n# TYPE ");
	mb_str(m, name);
	mb_str(m, " gauge\n");
}

/* "NAME{LABEL=\"" and the label's value: a number, or @p text. */
static void sample_head(struct mbuf *m, const char *name, const char *label,
    const char *text, uint64_t num)
{
	mb_str(m, name);
	mb_put(m, "{", 1);
	mb_str(m, label);
	mb_put(m, "=\"", 2);
	if (text != NULL)
		mb_str(m, text);
	else
		mb_u64(m, num);
	mb_put(m, "\"} ", 3);
}

/* The arenas /metrics shows: the first METRICS_ARENAS rows, and one
 * "other" summing the rest (the doctor's own "other" among them). */
static unsigned metric_arenas(const struct doctor *d, struct doctor_arena *rows)
{
	const struct doctor_arena *a;
	struct doctor_arena *o;
	unsigned i, n = 0;

	for (i = 0; i < d->narena_rows; i++) {
		a = &d->arenas[i];
		if (n < METRICS_ARENAS && a->index != DOCTOR_OTHER) {
			rows[n++] = *a;
			continue;
		}
		o = &rows[METRICS_ARENAS];
		if (o->index != DOCTOR_OTHER) {
			*o = *a;
			o->index = DOCTOR_OTHER;
			continue;
		}
		o->narenas += a->narenas;
		o->dirty += a->dirty;
		o->muzzy += a->muzzy;
		o->frag += a->frag;
		o->allocated += a->allocated;
		o->active += a->active;
	}
	if (rows[METRICS_ARENAS].index == DOCTOR_OTHER)
		rows[n++] = rows[METRICS_ARENAS];
	return n;
}

/* The per-arena families: a uint64_t field of struct doctor_arena, or
 * (off == RATIO) the arena's utilization. */
#define RATIO ((size_t)-1)
static const struct {
	const char *name, *help;
	size_t off;
} arena_families[] = {
    {"jemalloc_arena_dirty_bytes",
        "Dirty pages per arena: freed, kept until they decay (jmpg returns "
        "them); arenas past 16 summed as arena=\"other\"",
        offsetof(struct doctor_arena, dirty)},
    {"jemalloc_arena_muzzy_bytes",
        "Muzzy pages per arena: given back lazily (MADV_FREE), not in "
        "resident",
        offsetof(struct doctor_arena, muzzy)},
    {"jemalloc_arena_fragmentation_bytes",
        "Active less allocated per arena: free regions in small-class slabs "
        "and large extents' padding",
        offsetof(struct doctor_arena, frag)},
    {"jemalloc_arena_utilization_ratio",
        "Allocated share of each arena's active pages (1: none active)", RATIO},
};

/* The per-arena families. */
static void metrics_arenas(const struct doctor *d, struct mbuf *b)
{
	struct doctor_arena rows[METRICS_ARENAS + 1];
	const struct doctor_arena *a;
	unsigned i, n;
	size_t f, off;
	uint64_t v;

	memset(rows, 0, sizeof(rows));
	n = metric_arenas(d, rows);
	for (f = 0; f < sizeof(arena_families) / sizeof(arena_families[0]);
	     f++) {
		family(b, arena_families[f].name, arena_families[f].help);
		off = arena_families[f].off;
		for (i = 0; i < n; i++) {
			a = &rows[i];
			sample_head(b, arena_families[f].name, "arena",
			    a->index == DOCTOR_OTHER ? "other" : NULL,
			    a->index);
			if (off == RATIO)
				mb_ratio(b, arena_util(a));
			else {
				memcpy(&v, (const char *)a + off, sizeof(v));
				mb_u64(b, v);
			}
			mb_put(b, "\n", 1);
		}
	}
}

/* The per-size-class families (jemalloc's small classes: bounded). */
static void metrics_classes(const struct doctor *d, struct mbuf *b)
{
	unsigned i;

	family(b, "jemalloc_size_class_fragmentation_bytes",
	    "Free regions inside the slabs of each small size class, all "
	    "arenas");
	for (i = 0; i < d->nbins; i++) {
		sample_head(b, "jemalloc_size_class_fragmentation_bytes",
		    "size", NULL, d->bins[i].size);
		mb_u64(b, d->bins[i].waste);
		mb_put(b, "\n", 1);
	}
	family(b, "jemalloc_size_class_utilization_ratio",
	    "Share of each small size class's regions in use (1: no slabs)");
	for (i = 0; i < d->nbins; i++) {
		sample_head(b, "jemalloc_size_class_utilization_ratio", "size",
		    NULL, d->bins[i].size);
		mb_ratio(b, d->bins[i].util);
		mb_put(b, "\n", 1);
	}
}

/* The doctor's families, appended to /metrics (none without stats). */
void http_doctor_metrics(const struct doctor *d, struct evbuffer *out)
{
	struct mbuf *b;
	int k;

	if (!d->ok || (b = malloc(sizeof(*b))) == NULL)
		return;
	b->out = out;
	b->n = 0;
	family(b, "jemalloc_resident_part_bytes",
	    "Where resident memory goes (the parts add up to "
	    "jemalloc_resident_bytes; part=\"residue\" is what the figures do "
	    "not explain)");
	for (k = 0; k < DOCTOR_PARTS; k++) {
		sample_head(b, "jemalloc_resident_part_bytes", "part",
		    doctor_parts[k].key, 0);
		mb_u64(b, d->part[k]);
		mb_put(b, "\n", 1);
	}
	family(b, "jemalloc_purge_gain_bytes",
	    "What jmpg would return to the kernel now (dirty pages)");
	mb_str(b, "jemalloc_purge_gain_bytes ");
	mb_u64(b, d->purge_gain);
	mb_put(b, "\n", 1);
	if (d->prof) {
		family(b, "jemalloc_prof_cost_bytes",
		    "Bytes sampled small objects hold beyond their size (each "
		    "takes a 16 KiB extent)");
		mb_str(b, "jemalloc_prof_cost_bytes ");
		mb_u64(b, d->prof_cost);
		mb_put(b, "\n", 1);
	}
	metrics_arenas(d, b);
	metrics_classes(d, b);
	mb_flush(b);
	free(b);
}

/*
 * The doctor's answers (core/doctor.c diagnoses; this file only renders):
 * jmdr's one screen of text — a table of where resident memory goes, the
 * worst size classes and arenas, then the advice — GET /jemalloc/doctor's
 * JSON, every figure in bytes, and the /metrics families per part, arena
 * and size class. An advice line is worded once, here, for the text and
 * for the JSON's "text".
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "bytes.h"
#include "doctor.h"
#include "json.h"

/* An advice line's wording, from its typed figures. */
typedef int (*advice_fn)(const struct doctor_advice *a, char *buf, size_t len,
    char *g, char *f);

/* jmpg now. */
static int adv_purge(const struct doctor_advice *a, char *buf, size_t len,
    char *g, char *f)
{
	(void)a;
	(void)f;
	return snprintf(buf, len,
	    "jmpg returns ~%s now: dirty pages freed by the program that "
	    "jemalloc keeps until they decay",
	    g);
}

/* Decay times longer than jemalloc's default. */
static int adv_decay(const struct doctor_advice *a, char *buf, size_t len,
    char *g, char *f)
{
	(void)g;
	if (a->value == -1)
		return snprintf(buf, len,
		    "dirty_decay_ms is -1 (never) where %s of dirty pages "
		    "wait; MALLOC_CONF=dirty_decay_ms:%ld returns them within "
		    "~%ld s of being freed",
		    f, a->value2, a->value2 / 1000);
	return snprintf(buf, len,
	    "dirty_decay_ms is %ld where %s of dirty pages wait; "
	    "MALLOC_CONF=dirty_decay_ms:%ld (jemalloc's default) returns "
	    "them ~%ld s after they are freed, not %ld s",
	    a->value, f, a->value2, a->value2 / 1000, a->value / 1000);
}

/* Decay that runs only when the program allocates. */
static int adv_background(const struct doctor_advice *a, char *buf, size_t len,
    char *g, char *f)
{
	(void)a;
	(void)g;
	return snprintf(buf, len,
	    "background_thread is off and %s of dirty pages pile up: decay "
	    "then runs only when the program allocates; "
	    "MALLOC_CONF=background_thread:true returns them on time",
	    f);
}

/* Arenas that hold next to nothing. */
static int adv_narenas(const struct doctor_advice *a, char *buf, size_t len,
    char *g, char *f)
{
	(void)f;
	return snprintf(buf, len,
	    "%ld of %" PRIu64 " arenas are mostly idle and keep ~%s of "
	    "slabs, dirty pages and metadata; MALLOC_CONF=narenas:%ld "
	    "would pool them",
	    a->value, a->count, g, a->value2);
}

/* A size class whose slabs are mostly free. */
static int adv_size_class(const struct doctor_advice *a, char *buf, size_t len,
    char *g, char *f)
{
	(void)g;
	return snprintf(buf, len,
	    "size class %zu B is %.0f%% used: %s free in its slabs "
	    "(%" PRIu64 " live objects); usually long-lived objects among "
	    "short-lived ones of one size pin slabs that are otherwise empty: "
	    "free them together, or allocate the long-lived ones elsewhere "
	    "(their own arena) to get up to that back; jmfr names the "
	    "allocation sites behind this fragmentation",
	    a->size, a->util * 100.0, f, a->count);
}

/* Thread caches holding much. */
static int adv_tcache(const struct doctor_advice *a, char *buf, size_t len,
    char *g, char *f)
{
	(void)a;
	(void)g;
	return snprintf(buf, len,
	    "thread caches hold %s; a smaller MALLOC_CONF=tcache_max:4096 "
	    "or fewer threads that allocate would return most of it",
	    f);
}

/* Sampling finer than the default. */
static int adv_sampling(const struct doctor_advice *a, char *buf, size_t len,
    char *g, char *f)
{
	return snprintf(buf, len,
	    "profiling costs %s at lg_prof_sample:%ld (each sampled small "
	    "object takes a 16 KiB extent); lg_prof_sample:%ld would give "
	    "back ~%s",
	    f, a->value, a->value2, g);
}

static const advice_fn advice_fns[ADVICE_KINDS] = {
    [ADVICE_PURGE] = adv_purge,
    [ADVICE_DECAY] = adv_decay,
    [ADVICE_BACKGROUND] = adv_background,
    [ADVICE_NARENAS] = adv_narenas,
    [ADVICE_SIZE_CLASS] = adv_size_class,
    [ADVICE_TCACHE] = adv_tcache,
    [ADVICE_SAMPLING] = adv_sampling,
};

/* The advice kinds' names, for JSON and the page. */
static const char *const advice_keys[ADVICE_KINDS] = {
    [ADVICE_PURGE] = "purge",
    [ADVICE_DECAY] = "dirty_decay_ms",
    [ADVICE_BACKGROUND] = "background_thread",
    [ADVICE_NARENAS] = "narenas",
    [ADVICE_SIZE_CLASS] = "size_class",
    [ADVICE_TCACHE] = "tcache",
    [ADVICE_SAMPLING] = "lg_prof_sample",
};

/* An advice kind's short name (JSON's "kind"). */
static const char *advice_key(const struct doctor_advice *a)
{
	return (unsigned)a->kind < ADVICE_KINDS ? advice_keys[a->kind] : "";
}

/* An advice line in words, with its figure and gain as sizes. */
static const char *advice_text(const struct doctor_advice *a, char *buf,
    size_t len)
{
	char g[32], f[32];

	buf[0] = '\0';
	if ((unsigned)a->kind >= ADVICE_KINDS)
		return buf;
	fmt_bytes(g, sizeof(g), a->gain);
	fmt_bytes(f, sizeof(f), a->figure);
	advice_fns[a->kind](a, buf, len, g, f);
	return buf;
}

/* "12.5%" of resident. */
static double pct(uint64_t x, uint64_t of)
{
	return of > 0 ? 100.0 * (double)x / (double)of : 0.0;
}

/* The sampling interval as a person reads it: "a sample every 4 KiB". */
static const char *sample_every(char *buf, size_t len, size_t lg)
{
	return fmt_bytes(buf, len, lg < 63 ? 1ULL << lg : 0);
}

/* The table of parts, then the virtual figures and metadata. */
static void render_parts(struct out *out, const struct doctor *d)
{
	char b1[32], b2[32], b3[32], b4[32];
	int k;

	/* Exact figures (jemalloc's counters), where a profile's total
	 * is a sampled estimate: say which is which. */
	out_printf(out,
	    "resident %s (allocated %s, active %s; exact counts, not "
	    "sampled); where it goes:\n",
	    fmt_bytes(b1, sizeof(b1), d->resident),
	    fmt_bytes(b2, sizeof(b2), d->allocated),
	    fmt_bytes(b3, sizeof(b3), d->active));
	for (k = 0; k < DOCTOR_PARTS; k++)
		out_printf(out, "  %-34s %12s %6.1f%%\n", doctor_parts[k].label,
		    fmt_bytes(b1, sizeof(b1), d->part[k]),
		    pct(d->part[k], d->resident));
	if (d->residue < 0)
		out_printf(out,
		    "  (the figures overshoot resident by %s: read while the "
		    "program allocated)\n",
		    fmt_bytes(b1, sizeof(b1), (uint64_t)-d->residue));
	out_printf(out,
	    "metadata %s: base %s, internal %s (inside allocated), THP %s\n",
	    fmt_bytes(b1, sizeof(b1), d->metadata),
	    fmt_bytes(b2, sizeof(b2), d->base),
	    fmt_bytes(b3, sizeof(b3), d->internal),
	    fmt_bytes(b4, sizeof(b4), d->metadata_thp));
	out_printf(out, "virtual, not resident: mapped %s, retained %s; muzzy ",
	    fmt_bytes(b1, sizeof(b1), d->mapped),
	    fmt_bytes(b2, sizeof(b2), d->retained));
	out_printf(out, "%s (given back lazily, not counted in resident)\n",
	    fmt_bytes(b1, sizeof(b1), d->muzzy));
	if (d->prof)
		out_printf(out,
		    "profiling: a sample every %s (lg_prof_sample %zu, %s): "
		    "%" PRIu64 " live samples cost %s (%s)\n",
		    sample_every(b1, sizeof(b1), d->lg_sample), d->lg_sample,
		    d->prof_active ? "active" : "inactive", d->prof_samples,
		    fmt_bytes(b2, sizeof(b2), d->prof_cost),
		    d->prof_exact ? "prof.stats" : "estimated");
}

/* The worst size classes and arenas. */
static void render_worst(struct out *out, const struct doctor *d)
{
	const struct doctor_bin *b;
	const struct doctor_arena *a;
	char b1[32], b2[32], b3[32], name[32];
	unsigned i;

	if (d->nworst_bins > 0)
		out_printf(out, "worst size classes:  %8s %10s %6s %12s\n",
		    "size", "objects", "used", "free");
	for (i = 0; i < d->nworst_bins; i++) {
		b = &d->bins[d->worst_bins[i]];
		out_printf(out, "  %27zu %10" PRIu64 " %5.0f%% %12s\n", b->size,
		    b->curregs, b->util * 100.0,
		    fmt_bytes(b1, sizeof(b1), b->waste));
	}
	if (d->nworst_arenas > 0)
		out_printf(out, "worst arenas of %u:  %10s %10s %10s %8s\n",
		    d->narenas, "dirty", "muzzy", "frag", "decay");
	for (i = 0; i < d->nworst_arenas; i++) {
		a = &d->arenas[d->worst_arenas[i]];
		if (a->index == DOCTOR_OTHER)
			snprintf(name, sizeof(name), "other %u", a->narenas);
		else
			snprintf(name, sizeof(name), "arena %u", a->index);
		out_printf(out, "  %-18s %10s %10s %10s %8ld\n", name,
		    fmt_bytes(b1, sizeof(b1), a->dirty),
		    fmt_bytes(b2, sizeof(b2), a->muzzy),
		    fmt_bytes(b3, sizeof(b3), a->frag), a->dirty_decay_ms);
	}
}

/* jmdr's screen: the parts, the worst, the advice, of a diagnosis that
 * is d->ok (a failed one is the face's error line). */
void answer_doctor_text(struct out *out, const struct doctor *d)
{
	char line[512];
	unsigned i;

	render_parts(out, d);
	render_worst(out, d);
	out_printf(out, "advice:%s\n",
	    d->nadvice ? "" : " none, nothing stands out");
	for (i = 0; i < d->nadvice; i++)
		out_printf(out, "  - %s\n",
		    advice_text(&d->advice[i], line, sizeof(line)));
}

/* Arenas /metrics shows one by one; the rest are summed as "other", so
 * a process with 256 arenas still makes a bounded number of series. */
#define METRICS_ARENAS 16

/* An arena's allocated share of its active pages; 1 when it has none. */
static double arena_util(const struct doctor_arena *a)
{
	return a->active > 0 ? (double)a->allocated / (double)a->active : 1.0;
}

/* One size class as a JSON object. */
static void json_bin(struct out *out, const struct doctor_bin *x)
{
	out_printf(out,
	    "{\"size\": %zu, \"objects\": %" PRIu64 ", \"slabs\": %" PRIu64
	    ", \"slab_bytes\": %zu, \"regions_per_slab\": %u, "
	    "\"free_bytes\": %" PRIu64 ", \"utilization\": %.4f}",
	    x->size, x->curregs, x->curslabs, x->slab_size, x->nregs, x->waste,
	    x->util);
}

/* One arena (or "other") as a JSON object. */
static void json_arena(struct out *out, const struct doctor_arena *a)
{
	if (a->index == DOCTOR_OTHER)
		out_printf(out, "{\"arena\": \"other\"");
	else
		out_printf(out, "{\"arena\": \"%u\"", a->index);
	out_printf(out,
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
static void json_figures(struct out *out, const struct doctor *d)
{
	int k;

	out_printf(out,
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
	out_printf(out, ", \"parts\": [");
	for (k = 0; k < DOCTOR_PARTS; k++) {
		out_printf(out, "%s{\"key\": ", k ? ", " : "");
		json_string(out, doctor_parts[k].key);
		out_printf(out, ", \"label\": ");
		json_string(out, doctor_parts[k].label);
		out_printf(out, ", \"bytes\": %" PRIu64 "}", d->part[k]);
	}
	out_printf(out,
	    "], \"profiling\": {\"enabled\": %s, \"active\": %s, "
	    "\"lg_sample\": %zu, \"sample_every_bytes\": %llu, "
	    "\"samples\": %" PRIu64 ", \"cost_bytes\": %" PRIu64
	    ", \"exact\": %s}",
	    d->prof ? "true" : "false", d->prof_active ? "true" : "false",
	    d->lg_sample, d->lg_sample < 63 ? 1ULL << d->lg_sample : 0ULL,
	    d->prof_samples, d->prof_cost, d->prof_exact ? "true" : "false");
}

/* GET /jemalloc/doctor's body: one JSON object, every figure in bytes. */
void answer_doctor_json(struct out *out, const struct doctor *d)
{
	char line[512];
	unsigned i;

	json_figures(out, d);
	out_printf(out, ", \"size_classes\": [");
	for (i = 0; i < d->nbins; i++) {
		out_printf(out, "%s", i ? ", " : "");
		json_bin(out, &d->bins[i]);
	}
	out_printf(out, "], \"worst_size_classes\": [");
	for (i = 0; i < d->nworst_bins; i++) {
		out_printf(out, "%s", i ? ", " : "");
		json_bin(out, &d->bins[d->worst_bins[i]]);
	}
	out_printf(out, "], \"arenas\": [");
	for (i = 0; i < d->narena_rows; i++) {
		out_printf(out, "%s", i ? ", " : "");
		json_arena(out, &d->arenas[i]);
	}
	out_printf(out, "], \"worst_arenas\": [");
	for (i = 0; i < d->nworst_arenas; i++) {
		out_printf(out, "%s", i ? ", " : "");
		json_arena(out, &d->arenas[d->worst_arenas[i]]);
	}
	out_printf(out, "], \"advice\": [");
	for (i = 0; i < d->nadvice; i++) {
		out_printf(out, "%s{\"kind\": \"%s\", ", i ? ", " : "",
		    advice_key(&d->advice[i]));
		out_printf(out,
		    "\"figure_bytes\": %" PRIu64 ", \"gain_bytes\": %" PRIu64
		    ", \"text\": ",
		    d->advice[i].figure, d->advice[i].gain);
		json_string(out,
		    advice_text(&d->advice[i], line, sizeof(line)));
		out_printf(out, "}");
	}
	out_printf(out, "]}\n");
}

/*
 * The families' text, built by hand in a buffer and handed to the
 * output in a few pieces: one printf a sample (vsnprintf
 * each time) was ~0.25 us a line, most of what the doctor's ~150 lines
 * added to a scrape (BENCHMARKS.md). Every value is an integer or a
 * ratio in [0, 1], which need no printf.
 */
struct mbuf {
	struct out *out;
	size_t n;
	char buf[8192];
};

/* Hand what is buffered to the output. */
static void mb_flush(struct mbuf *m)
{
	out_write(m->out, m->buf, m->n);
	m->n = 0;
}

/* Append @p len bytes (less than the buffer). */
static void mb_put(struct mbuf *m, const char *s, size_t len)
{
	if (m->n + len > sizeof(m->buf))
		mb_flush(m);
	if (len > sizeof(m->buf)) {
		out_write(m->out, s, len);
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

/* The doctor's families, appended to /metrics (none without stats: a
 * diagnosis that is not d->ok). */
void answer_doctor_prometheus(struct out *out, const struct doctor *d)
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

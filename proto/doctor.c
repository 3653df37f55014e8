/*
 * jmdr: the doctor's diagnosis (core/doctor.c) as one screen of text — a
 * table of where resident memory goes, the worst size classes and arenas,
 * then the advice — and the wording of an advice line, which the HTTP
 * face sends beside the typed figures.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "doctor.h"
#include "proto.h"
#include "util.h"

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
	    "(their own arena) to get up to that back",
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
const char *proto_doctor_advice_key(const struct doctor_advice *a)
{
	return (unsigned)a->kind < ADVICE_KINDS ? advice_keys[a->kind] : "";
}

/* An advice line in words, with its figure and gain as sizes. */
const char *proto_doctor_advice(const struct doctor_advice *a, char *buf,
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
static void render_parts(struct proto_out *out, const struct doctor *d)
{
	char b1[32], b2[32], b3[32], b4[32];
	int k;

	out_printf(out,
	    "resident %s (allocated %s, active %s); where it goes:\n",
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
static void render_worst(struct proto_out *out, const struct doctor *d)
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

/* jmdr's screen: the parts, the worst, the advice; or the error line. */
int proto_render_doctor(struct proto_out *out, const struct doctor *d)
{
	char line[512];
	unsigned i;

	if (!d->ok) {
		out_printf(out, JM4LW_ERROR_PREFIX "%s\n", d->reason);
		return PROTO_ERROR;
	}
	render_parts(out, d);
	render_worst(out, d);
	out_printf(out, "advice:%s\n",
	    d->nadvice ? "" : " none, nothing stands out");
	for (i = 0; i < d->nadvice; i++)
		out_printf(out, "  - %s\n",
		    proto_doctor_advice(&d->advice[i], line, sizeof(line)));
	return PROTO_OK;
}

/*
 * The words: each asks core and renders its answer as text. A handler
 * writes a complete reply to @p out and returns PROTO_OK or PROTO_ERROR
 * (an `error: ` line was written).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config_struct.h"
#include "ctl.h"
#include "doctor.h"
#include "dumps.h"
#include "figures.h"
#include "history.h"
#include "job.h"
#include "profile.h"
#include "proto.h"
#include "reason.h"
#include "result.h"
#include "util.h"
#include "view.h"

/* One error line, and why for proto_dispatch. */
static int reply_error(struct proto *p, struct proto_out *out,
    enum core_reason why, const char *reason)
{
	p->why = why;
	out_printf(out, JM4LW_ERROR_PREFIX "%s\n", reason);
	return PROTO_ERROR;
}

/* ruok: the liveness probe, byte-identical to ZooKeeper's. */
static int word_ruok(struct proto *p, struct proto_out *out)
{
	(void)p;
	out_write(out, "imok", 4);
	return PROTO_OK;
}

/* "2026-11-21T23:40:12Z", the one time format of our replies. */
static const char *fmt_time(char *buf, size_t len, time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

/* mntr: ZooKeeper's key<TAB>value shape, one line per figure we have. */
static int word_mntr(struct proto *p, struct proto_out *out)
{
	struct figure_value v[FIGURES_MAX];
	char when[32];
	size_t i;

	figures_read(p->core, v);
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
	return PROTO_OK;
}

/* A figure's number, 0 if this process does not have it. */
static uint64_t figure_u(const struct figure_value *v, const char *key)
{
	const struct figure_value *f = figure_find(v, key);

	return f != NULL ? f->u : 0;
}

/* srvr: ZooKeeper's "Key: value" summary. */
static int word_srvr(struct proto *p, struct proto_out *out)
{
	struct figure_value v[FIGURES_MAX];
	const struct figure_value *on, *active;
	const char *prof = "unavailable";

	figures_read(p->core, v);
	if ((on = figure_find(v, "jemalloc_opt_prof")) != NULL) {
		prof = "off";
		active = figure_find(v, "jemalloc_prof_active");
		if (on->u && active != NULL)
			prof = active->u ? "active" : "inactive";
	}
	out_printf(out, "jm4lw version: %s (jemalloc %s)\n", JM4LW_VERSION,
	    core_version(p->core));
	out_printf(out, "Uptime: %" PRIu64 "\n",
	    figure_u(v, "jm4lw_uptime_seconds"));
	out_printf(out, "Connections: %" PRIu64 "\n",
	    figure_u(v, "jm4lw_open_connections"));
	out_printf(out, "Received: %" PRIu64 "\n",
	    figure_u(v, "jm4lw_words_served"));
	out_printf(out, "Dumps: %" PRIu64 "\n",
	    figure_u(v, "jm4lw_dumps_written"));
	out_printf(out, "Profiling: %s\n", prof);
	out_printf(out, "Mode: %s\n", p->core->mode);
	return PROTO_OK;
}

/* One "key=value" line of conf: numbers and sizes in plain digits,
 * strings as they are. */
static void conf_line(struct proto_out *out, const struct proto_conf_key *k,
    const struct jm4lw_config *cfg)
{
	const char *field = (const char *)cfg + k->off;
	unsigned long long bytes;
	unsigned num;

	switch (k->type) {
	case PROTO_CONF_BYTES:
		memcpy(&bytes, field, sizeof(bytes));
		out_printf(out, "%s=%llu\n", k->name, bytes);
		break;
	case PROTO_CONF_NUMBER:
		memcpy(&num, field, sizeof(num));
		out_printf(out, "%s=%u\n", k->name, num);
		break;
	default:
		out_printf(out, "%s=%.*s\n", k->name, (int)k->size, field);
	}
}

/* conf: the effective configuration, one key=value a line, in the order
 * of the keys the module handed over (the config's key table). */
static int word_conf(struct proto *p, struct proto_out *out)
{
	size_t i;

	for (i = 0; i < p->nconf; i++)
		conf_line(out, &p->conf[i], p->core->cfg);
	/* Not a key: what this build symbolizes profiles with. */
	out_printf(out, "symbolizer=%s\n", profile_symbolizer());
	return PROTO_OK;
}

/* malloc_stats_print() hands us NUL-terminated pieces. */
static void stats_cb(void *arg, const char *s)
{
	out_write(arg, s, strlen(s));
}

/*
 * jmst: jemalloc's statistics text, whole. malloc_stats_print() refreshes
 * the epoch itself before it reads anything (stats.c, 5.x): one of ours
 * would be a second merge of every arena for nothing.
 */
static int word_jmst(struct proto *p, struct proto_out *out)
{
	core_stats_print(p->core, stats_cb, out, 0);
	return PROTO_OK;
}

/* jmsj: the same as JSON, for scripts; jemalloc ends it without "\n". */
static int word_jmsj(struct proto *p, struct proto_out *out)
{
	core_stats_print(p->core, stats_cb, out, 1);
	out_write(out, "\n", 1);
	return PROTO_OK;
}

/* jmfp's reply: the new dump's path, or why there is none. */
int proto_render_dump(struct proto_out *out, const struct dump_result *r)
{
	if (r->status != DUMP_OK) {
		out_printf(out, JM4LW_ERROR_PREFIX "%s\n", r->reason);
		return PROTO_ERROR;
	}
	if (views[r->view].keeps) /* jmfp, jmdf: where the dump is */
		out_printf(out, "%s\n", r->path);
	return PROTO_OK;
}

/*
 * jmls: a "#" summary line, then "path<TAB>size<TAB>time" per dump, newest
 * first, time in UTC ISO 8601. The summary keeps the reply non-empty when
 * there is nothing, and scripts skip it with grep -v '^#'.
 */
static int word_jmls(struct proto *p, struct proto_out *out)
{
	struct dump_list l;
	char when[32];
	size_t i;

	if (core_dump_list(p->core, &l) == -1) {
		out_printf(out, JM4LW_ERROR_PREFIX "cannot list %s: %s\n",
		    l.dir, dump_list_error(&l));
		return PROTO_ERROR;
	}
	out_printf(out, "# %zu dumps, %llu bytes in %s (%s.*.heap)\n", l.n,
	    l.total, l.dir, p->core->cfg->dump_prefix);
	for (i = 0; i < l.n; i++)
		out_printf(out, "%s/%s\t%lld\t%s\n", l.dir, l.d[i].name,
		    l.d[i].size,
		    fmt_time(when, sizeof(when), l.d[i].mtime.tv_sec));
	dump_list_free(&l);
	return PROTO_OK;
}

/* jmrs: a fresh profile, so a later jmfp covers only the window since. */
static int word_jmrs(struct proto *p, struct proto_out *out)
{
	struct ctl_result r;

	core_reset(p->core, &r);
	if (!r.ok)
		return reply_error(p, out, r.why, r.reason);
	out_printf(out, "ok: profile reset (lg_prof_sample=%zu)\n", r.lg);
	return PROTO_OK;
}

/* jmep/jmdp: switch sampling, and say what it was. */
static int set_active(struct proto *p, struct proto_out *out, int on)
{
	struct ctl_result r;

	core_set_active(p->core, on, &r);
	if (!r.ok)
		return reply_error(p, out, r.why, r.reason);
	out_printf(out, "ok: profiling %s (prof.active=%s, was %s)\n",
	    on ? "active" : "inactive", on ? "true" : "false",
	    r.was ? "true" : "false");
	return PROTO_OK;
}

/* jmep: start sampling allocations. */
static int word_jmep(struct proto *p, struct proto_out *out)
{
	return set_active(p, out, 1);
}

/* jmdp: stop sampling allocations. */
static int word_jmdp(struct proto *p, struct proto_out *out)
{
	return set_active(p, out, 0);
}

/* jmpg: give unused dirty pages of every arena back to the kernel. */
static int word_jmpg(struct proto *p, struct proto_out *out)
{
	char b1[32], b2[32];
	struct ctl_result r;

	core_purge(p->core, &r);
	if (!r.ok)
		return reply_error(p, out, r.why, r.reason);
	if (r.sizes)
		out_printf(out, "ok: purged all arenas (resident %s -> %s)\n",
		    fmt_bytes(b1, sizeof(b1), r.before),
		    fmt_bytes(b2, sizeof(b2), r.after));
	else /* no stats in this jemalloc: say nothing false */
		out_printf(out, "ok: purged all arenas\n");
	return PROTO_OK;
}

/* jmdr: where resident memory goes, and what to do about it. A few
 * hundred mallctl reads by MIB, well under a millisecond with 16 arenas
 * (BENCHMARKS.md, section 12): answered on the loop. The diagnosis (~10
 * KB) is allocated, not put on a host's stack of unknown size. */
static int word_jmdr(struct proto *p, struct proto_out *out)
{
	struct doctor *d;
	int rv;

	if ((d = malloc(sizeof(*d))) == NULL)
		return reply_error(p, out, REASON_FAILED,
		    "no memory for the diagnosis");
	core_doctor(p->core, d);
	if ((rv = proto_render_doctor(out, d)) == PROTO_ERROR)
		p->why = d->why;
	free(d);
	return rv;
}

/* Characters of a jmhi sparkline: the whole ring, bucketed. */
#define SPARK_WIDTH 60

/* One jmhi line: column @p col's newest value, least, most, and the ring
 * as a sparkline of SPARK_WIDTH buckets (each its bucket's last row). */
static void history_line(struct proto_out *out, const struct history *h,
    size_t col)
{
	static const char *const bars[] = {"\u2581", "\u2582", "\u2583",
	    "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
	uint64_t v, lo = UINT64_MAX, hi = 0, last = HISTORY_NONE;
	size_t i, w = h->n < SPARK_WIDTH ? h->n : SPARK_WIDTH, b;
	char a1[32], a2[32], a3[32];
	int bytes = col < 7; /* the allocator's columns; then counters */

	for (i = 0; i < h->n; i++) {
		v = history_row(h, i)[col + 1];
		if (v == HISTORY_NONE)
			continue;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		last = v;
	}
	if (last == HISTORY_NONE)
		return;
	if (bytes)
		out_printf(out, "%-14s %10s %10s %10s  ",
		    history_cols[col].name, fmt_bytes(a1, sizeof(a1), last),
		    fmt_bytes(a2, sizeof(a2), lo),
		    fmt_bytes(a3, sizeof(a3), hi));
	else
		out_printf(out,
		    "%-14s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "  ",
		    history_cols[col].name, last, lo, hi);
	for (b = 0; b < w; b++) {
		v = history_row(h, (b + 1) * h->n / w - 1)[col + 1];
		i = v == HISTORY_NONE || hi == lo
		    ? 0
		    : (size_t)((double)(v - lo) * 7.999 / (double)(hi - lo));
		out_printf(out, "%s", bars[i]);
	}
	out_printf(out, "\n");
}

/* jmhi: the figures' history, a line per column: now, least, most, and
 * a sparkline of the whole ring, oldest on the left. */
static int word_jmhi(struct proto *p, struct proto_out *out)
{
	const struct history *h = &p->core->hist;
	char a[32];
	size_t i;

	if (h->ring == NULL)
		return reply_error(p, out, REASON_NO_DUMP,
		    "no history: history_points is 0");
	out_printf(out,
	    "# history: %zu of %zu rows every %u s (%llu s), %s mapped; "
	    "now, least, most, then oldest to newest\n",
	    h->n, h->cap, h->interval, (unsigned long long)h->n * h->interval,
	    fmt_bytes(a, sizeof(a), history_bytes(h->cap)));
	for (i = 0; i < HISTORY_COLS; i++)
		history_line(out, h, i);
	return PROTO_OK;
}

/* The command table: one line a word. */
const struct proto_word proto_words[] = {
    {.name = "ruok", .fn = word_ruok, .help = "liveness: imok"},
    {.name = "mntr", .fn = word_mntr, .help = "figures, key<TAB>value"},
    {.name = "srvr", .fn = word_srvr, .help = "server summary"},
    {.name = "conf", .fn = word_conf, .help = "effective configuration"},
    {.name = "jmst", .fn = word_jmst, .help = "jemalloc statistics"},
    {.name = "jmsj", .fn = word_jmsj, .help = "jemalloc statistics, JSON"},
    {.name = "jmfp",
        .job = JOB_DUMP,
        .flags = PROTO_F_MUTATES,
        .help = "dump a heap profile"},
    {.name = "jmtp",
        .job = JOB_DUMP,
        .view = DUMP_VIEW_TEXT,
        .help = "the top of the live heap by function, symbolized"},
    {.name = "jmcs",
        .job = JOB_DUMP,
        .view = DUMP_VIEW_COLLAPSED,
        .help = "the live heap as collapsed stacks (flamegraph.pl)"},
    {.name = "jmfg",
        .job = JOB_DUMP,
        .view = DUMP_VIEW_SVG,
        .help = "the live heap as an SVG flame graph"},
    {.name = "jmdf",
        .job = JOB_DUMP,
        .view = DUMP_VIEW_DIFF,
        .flags = PROTO_F_MUTATES,
        .help = "dump, then what grew since the last dump"},
    {.name = "jmep",
        .fn = word_jmep,
        .flags = PROTO_F_MUTATES,
        .help = "enable profiling (prof.active)"},
    {.name = "jmdp",
        .fn = word_jmdp,
        .flags = PROTO_F_MUTATES,
        .help = "disable profiling"},
    {.name = "jmpg",
        .fn = word_jmpg,
        .flags = PROTO_F_MUTATES,
        .help = "purge every arena"},
    {.name = "jmls", .fn = word_jmls, .help = "the dumps in dump_dir"},
    {.name = "jmrs",
        .fn = word_jmrs,
        .flags = PROTO_F_MUTATES,
        .help = "reset the profile (prof.reset)"},
    {.name = "jmdr",
        .fn = word_jmdr,
        .help = "where resident memory goes, and what to do about it"},
    {.name = "jmhi",
        .fn = word_jmhi,
        .help = "the figures' history: now, least, most, a sparkline"},
    {.name = "jmlk",
        .job = JOB_LEAKS,
        .view = DUMP_VIEW_LEAKS,
        .help = "leak suspects: functions that grew in nearly every "
                "interval of the kept dumps"},
    {.name = NULL},
};

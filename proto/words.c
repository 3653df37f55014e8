/*
 * The words: each asks core and has its answer rendered as text (by
 * answer/ where the answer is one of its table's). A handler
 * writes a complete reply to @p out and returns PROTO_OK or PROTO_ERROR
 * (an `error: ` line was written).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "bytes.h"
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
static int reply_error(struct proto *p, struct out *out, enum core_reason why,
    const char *reason)
{
	p->why = why;
	out_printf(out, JM4LW_ERROR_PREFIX "%s\n", reason);
	return PROTO_ERROR;
}

/* ruok: the liveness probe, byte-identical to ZooKeeper's. */
static int word_ruok(struct proto *p, struct out *out)
{
	(void)p;
	out_write(out, "imok", 4);
	return PROTO_OK;
}

/* mntr: ZooKeeper's key<TAB>value shape, one line per figure we have
 * (answer/figures.c). */
static int word_mntr(struct proto *p, struct out *out)
{
	struct figure_value v[FIGURES_MAX];
	struct answer_figures a = {.v = v};

	figures_read(p->core, v);
	answer_figures(out, ANSWER_TEXT, &a);
	return PROTO_OK;
}

/* srvr: ZooKeeper's "Key: value" summary (answer/figures.c). */
static int word_srvr(struct proto *p, struct out *out)
{
	struct figure_value v[FIGURES_MAX];
	struct answer_figures a = {.v = v,
	    .jemalloc = core_version(p->core),
	    .mode = p->core->mode};

	figures_read(p->core, v);
	answer_summary(out, ANSWER_TEXT, &a);
	return PROTO_OK;
}

/* One "key=value" line of conf: numbers and sizes in plain digits,
 * strings as they are, typed values as the configuration prints them. */
static void conf_line(struct out *out, const struct proto_conf_key *k,
    const struct jm4lw_config *cfg)
{
	const char *field = (const char *)cfg + k->off;
	unsigned long long bytes;
	unsigned num;
	char text[PROTO_CONF_FORMAT_MAX];

	switch (k->type) {
	case PROTO_CONF_FORMAT:
		k->format(field, text, sizeof(text));
		out_printf(out, "%s=%s\n", k->name, text);
		break;
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
static int word_conf(struct proto *p, struct out *out)
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
static int word_jmst(struct proto *p, struct out *out)
{
	core_stats_print(p->core, stats_cb, out, 0);
	return PROTO_OK;
}

/* jmsj: the same as JSON, for scripts; jemalloc ends it without "\n". */
static int word_jmsj(struct proto *p, struct out *out)
{
	core_stats_print(p->core, stats_cb, out, 1);
	out_write(out, "\n", 1);
	return PROTO_OK;
}

/* jmls: the kept dumps, a "#" summary line then one per dump
 * (answer/dumps.c). */
static int word_jmls(struct proto *p, struct out *out)
{
	struct dump_list l;
	struct answer_dumps a = {.l = &l, .prefix = p->core->cfg->dump_prefix};

	if (core_dump_list(p->core, &l) == -1) {
		out_printf(out, JM4LW_ERROR_PREFIX "cannot list %s: %s\n",
		    l.dir, dump_list_error(&l));
		return PROTO_ERROR;
	}
	answer_dumps(out, ANSWER_TEXT, &a);
	dump_list_free(&l);
	return PROTO_OK;
}

/* jmrs: a fresh profile, so a later jmfp covers only the window since. */
static int word_jmrs(struct proto *p, struct out *out)
{
	struct ctl_result r;

	core_reset(p->core, &r);
	if (!r.ok)
		return reply_error(p, out, r.why, r.reason);
	/* Say what it cost: nothing sampled before now is in any
	 * profile from here on. */
	out_printf(out,
	    "ok: profile reset (lg_prof_sample=%zu); every sample so far was "
	    "dropped: profiles now hold only allocations made from now on\n",
	    r.lg);
	return PROTO_OK;
}

/* jmep/jmdp: switch sampling, and say what it was. */
static int set_active(struct proto *p, struct out *out, int on)
{
	struct ctl_result r;

	core_set_active(p->core, on, &r);
	if (!r.ok)
		return reply_error(p, out, r.why, r.reason);
	/* Switched on, it samples from now: say that nothing allocated
	 * before is in a profile. */
	out_printf(out, "ok: profiling %s (prof.active=%s, was %s)%s\n",
	    on ? "active" : "inactive", on ? "true" : "false",
	    r.was ? "true" : "false",
	    on && !r.was ? "; profiles hold only allocations made from now on"
	                 : "");
	return PROTO_OK;
}

/* jmep: start sampling allocations. */
static int word_jmep(struct proto *p, struct out *out)
{
	return set_active(p, out, 1);
}

/* jmdp: stop sampling allocations. */
static int word_jmdp(struct proto *p, struct out *out)
{
	return set_active(p, out, 0);
}

/* jmpg: give unused dirty pages of every arena back to the kernel. */
static int word_jmpg(struct proto *p, struct out *out)
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

/* jmdr: where resident memory goes, and what to do about it
 * (answer/doctor.c). A few hundred mallctl reads by MIB, well under a
 * millisecond with 16 arenas (BENCHMARKS.md, section 12): answered on
 * the loop. The diagnosis (~10 KB) is allocated, not put on a host's
 * stack of unknown size. */
static int word_jmdr(struct proto *p, struct out *out)
{
	struct doctor *d;
	int rv = PROTO_OK;

	if ((d = malloc(sizeof(*d))) == NULL)
		return reply_error(p, out, REASON_FAILED,
		    "no memory for the diagnosis");
	core_doctor(p->core, d);
	if (!d->ok)
		rv = reply_error(p, out, d->why, d->reason);
	else
		answer_doctor(out, ANSWER_TEXT, d);
	free(d);
	return rv;
}

/* jmhi: the figures' history, a line per column: now, least, most, and
 * a sparkline of the whole ring (answer/history.c). */
static int word_jmhi(struct proto *p, struct out *out)
{
	struct answer_history a = {.h = &p->core->hist};

	if (a.h->ring == NULL)
		return reply_error(p, out, REASON_NO_DUMP,
		    "no history: history_points is 0");
	answer_history(out, ANSWER_TEXT, &a);
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
        .job = &job_dump,
        .answer = DUMP_ANSWER_PATH,
        .flags = PROTO_F_MUTATES,
        .help = "dump a heap profile"},
    {.name = "jmtp",
        .job = &job_dump,
        .view = DUMP_VIEW_TEXT,
        .help = "the top of the live heap by function, symbolized"},
    {.name = "jmcs",
        .job = &job_dump,
        .view = DUMP_VIEW_COLLAPSED,
        .help = "the live heap as collapsed stacks (flamegraph.pl)"},
    {.name = "jmfg",
        .job = &job_dump,
        .view = DUMP_VIEW_SVG,
        .help = "the live heap as an SVG flame graph"},
    {.name = "jmcg",
        .job = &job_dump,
        .view = DUMP_VIEW_DOT,
        .help = "the live heap's call graph in Graphviz dot (jeprof --dot)"},
    {.name = "jmth",
        .job = &job_dump,
        .view = DUMP_VIEW_THREADS,
        .help = "the live heap by thread: bytes, objects, top functions"},
    {.name = "jmdf",
        .job = &job_dump,
        .view = DUMP_VIEW_DIFF,
        .flags = PROTO_F_MUTATES,
        .help = "dump, then what grew since the last dump"},
    {.name = "jmgr",
        .job = &job_since,
        .view = DUMP_VIEW_TEXT,
        .help = "what grew in the last 5 minutes: the heap now minus the "
                "oldest in-memory snapshot within them"},
    {.name = "jmpk",
        .job = &job_peak,
        .view = DUMP_VIEW_TEXT,
        .help = "the heap at the peak: the snapshot at the highest "
                "stats.allocated, and how near the true peak it is"},
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
    {.name = "jmfr",
        .job = &job_dump,
        .view = DUMP_VIEW_FRAG,
        .help = "fragmentation: free regions by size class, and the "
                "allocation sites whose objects are in them"},
    {.name = "jmhi",
        .fn = word_jmhi,
        .help = "the figures' history: now, least, most, a sparkline"},
    {.name = "jmlk",
        .job = &job_leaks,
        .help = "leak suspects: functions that grew in nearly every "
                "interval of the kept dumps"},
    {.name = "jmrc",
        .job = &job_recent,
        .help = "recent sampled allocations, newest first: size, age, "
                "thread, live or freed, where"},
    JM4LW_IF_EXAMPLE({"jmxx", .job = &job_example, .view = DUMP_VIEW_TEXT}, )
    /* The end of the table. */
    {.name = NULL},
};

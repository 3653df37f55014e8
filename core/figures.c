/*
 * figures — one table of named values. mntr renders each row as
 * "key<TAB>value", srvr picks a few, and the metrics face renders the same
 * rows under their metric names: a figure is defined here once.
 */
#include <stddef.h>
#include <string.h>

#include "core.h"
#include "ctl.h"
#include "figures.h"
#include "jm4lw.h"
#include "ops.h"
#include "profile.h"

#define STAT(f) (offsetof(struct core_stats, f) + 1)

/* jm4lw_version */
static int fig_version(const struct core *c, uint64_t *v, const char **s)
{
	(void)c;
	(void)v;
	*s = JM4LW_VERSION;
	return 1;
}

/* jm4lw_uptime_seconds */
static int fig_uptime(const struct core *c, uint64_t *v, const char **s)
{
	(void)s;
	*v = (uint64_t)core_uptime(c);
	return 1;
}

/* jm4lw_last_dump: only once there is one. */
static int fig_last_dump(const struct core *c, uint64_t *v, const char **s)
{
	(void)v;
	*s = c->last_dump;
	return c->last_dump[0] != '\0';
}

/* jm4lw_last_dump_time, as seconds since the epoch (mntr shows UTC). */
static int fig_last_dump_time(const struct core *c, uint64_t *v, const char **s)
{
	(void)s;
	*v = (uint64_t)c->last_dump_time;
	return c->last_dump[0] != '\0';
}

/* jemalloc_version */
static int fig_jemalloc_version(const struct core *c, uint64_t *v,
    const char **s)
{
	(void)v;
	*s = c->ops->version;
	return 1;
}

/* The symbolizer this build has. */
static int fig_symbolizer(const struct core *c, uint64_t *v, const char **s)
{
	(void)c;
	(void)v;
	*s = profile_symbolizer();
	return 1;
}

/* jm4lw_memory_source: where dump_on_memory read the limit. */
static int fig_memory_source(const struct core *c, uint64_t *v, const char **s)
{
	(void)v;
	*s = memory_trigger_names[c->mem.last.source];
	return c->mem.have;
}

/* jm4lw_memory_usage_bytes, once a limit was read. */
static int fig_memory_usage(const struct core *c, uint64_t *v, const char **s)
{
	(void)s;
	*v = c->mem.last.usage;
	return c->mem.have && c->mem.last.source != MEMORY_NONE;
}

/* jm4lw_memory_limit_bytes, once a limit was read. */
static int fig_memory_limit(const struct core *c, uint64_t *v, const char **s)
{
	(void)s;
	*v = c->mem.last.limit;
	return c->mem.have && c->mem.last.source != MEMORY_NONE;
}

/* jm4lw_memory_threshold_bytes: dump_on_memory in bytes, when set. */
static int fig_memory_threshold(const struct core *c, uint64_t *v,
    const char **s)
{
	(void)s;
	*v = c->mem.threshold;
	return c->mem.threshold != 0;
}

/* One trigger's memory dumps. */
#define FIG_MEMORY_DUMPS(t)                                                    \
	static int fig_memory_dumps_##t(const struct core *c, uint64_t *v,     \
	    const char **s)                                                    \
	{                                                                      \
		(void)s;                                                       \
		*v = c->mem.dumps[t];                                          \
		return 1;                                                      \
	}
FIG_MEMORY_DUMPS(MEMORY_CGROUP_V2)
FIG_MEMORY_DUMPS(MEMORY_CGROUP_V1)
FIG_MEMORY_DUMPS(MEMORY_RLIMIT)
FIG_MEMORY_DUMPS(MEMORY_MACHINE)
FIG_MEMORY_DUMPS(MEMORY_PSI)

#define MEMORY_DUMPS_HELP                                                      \
	"Dumps dump_on_memory took, by what fired: the cgroup's limit (v2, "   \
	"v1), RLIMIT_AS, the machine's memory, or memory pressure"

/* In mntr's order, which scripts may rely on. */
const struct figure figures[] = {
    {"jm4lw_version", NULL, "jm4lw's version", FIG_TEXT, .fn = fig_version},
    {"jm4lw_uptime_seconds", "jm4lw_uptime_seconds",
        "Seconds since the module started", FIG_GAUGE, .fn = fig_uptime},
    {"jm4lw_open_connections", "jm4lw_open_connections", "Connections open now",
        FIG_GAUGE, .stat = STAT(conns_open)},
    {"jm4lw_connections_total", "jm4lw_connections_total",
        "Connections accepted", FIG_COUNTER, .stat = STAT(conns_total)},
    {"jm4lw_connections_rejected", "jm4lw_connections_rejected_total",
        "Connections refused: every slot held a peer being answered",
        FIG_COUNTER, .stat = STAT(conns_rejected)},
    {"jm4lw_connections_evicted", "jm4lw_connections_evicted_total",
        "Idle connections closed to make room for new ones", FIG_COUNTER,
        .stat = STAT(conns_evicted)},
    {"jm4lw_connections_denied", "jm4lw_connections_denied_total",
        "Connections from peers outside allow_from", FIG_COUNTER,
        .stat = STAT(conns_denied)},
    {"jm4lw_words_served", "jm4lw_words_served_total", "Words answered",
        FIG_COUNTER, .stat = STAT(words_served)},
    {"jm4lw_words_unknown", "jm4lw_words_unknown_total", "Words nobody knows",
        FIG_COUNTER, .stat = STAT(words_unknown)},
    {"jm4lw_words_refused", "jm4lw_words_refused_total",
        "Words outside the allow list", FIG_COUNTER,
        .stat = STAT(words_refused)},
    {"jm4lw_dumps_written", "jm4lw_dumps_written_total",
        "Heap profiles written", FIG_COUNTER, .stat = STAT(dumps_written)},
    {"jm4lw_dumps_failed", "jm4lw_dumps_failed_total",
        "Heap profile dumps that failed", FIG_COUNTER,
        .stat = STAT(dumps_failed)},
    {"jm4lw_dumps_refused", "jm4lw_dumps_refused_total",
        "Dumps refused by the rate limit, the disk guard or a dump in "
        "progress",
        FIG_COUNTER, .stat = STAT(dumps_refused)},
    {"jm4lw_dumps_scheduled", "jm4lw_dumps_scheduled_total",
        "Dumps written by dump_interval or dump_on_growth", FIG_COUNTER,
        .stat = STAT(dumps_scheduled)},
    {"jm4lw_dumps_deleted", "jm4lw_dumps_deleted_total",
        "Dumps deleted by dump_keep or dump_max_bytes", FIG_COUNTER,
        .stat = STAT(dumps_deleted)},
    {"jm4lw_jemalloc_interval_dumps", "jm4lw_jemalloc_interval_dumps_total",
        "jemalloc's own lg_prof_interval dumps taken into dump_dir",
        FIG_COUNTER, .stat = STAT(jemalloc_interval_dumps)},
    {"jm4lw_jemalloc_gdumps", "jm4lw_jemalloc_gdumps_total",
        "jemalloc's own prof_gdump dumps taken into dump_dir", FIG_COUNTER,
        .stat = STAT(jemalloc_gdumps)},
    {"jm4lw_jemalloc_manual_dumps", "jm4lw_jemalloc_manual_dumps_total",
        "jemalloc's dumps of a host's unnamed prof.dump taken into dump_dir",
        FIG_COUNTER, .stat = STAT(jemalloc_manual_dumps)},
    {"jm4lw_gdump_paused", "jm4lw_gdump_paused_total",
        "Times prof.gdump was held off for dump_min_interval after a "
        "prof_gdump dump",
        FIG_COUNTER, .stat = STAT(gdump_paused)},
    {"jm4lw_http_requests", "jm4lw_http_requests_total",
        "Requests the HTTP face took", FIG_COUNTER,
        .stat = STAT(http_requests)},
    {"jm4lw_profiles_served", "jm4lw_profiles_served_total",
        "Symbolized profiles answered (jmtp, jmcs, jmfg, jmdf)", FIG_COUNTER,
        .stat = STAT(profiles_served)},
    {"jm4lw_symbolizer", NULL,
        "How profiles are symbolized: libdw (inline frames, file:line) or "
        "elf (symbol tables only)",
        FIG_TEXT, .fn = fig_symbolizer},
    {"jm4lw_last_dump", NULL, "Path of the last dump", FIG_TEXT,
        .fn = fig_last_dump},
    {"jm4lw_last_dump_time", "jm4lw_last_dump_timestamp_seconds",
        "When the last dump was written", FIG_TIME, .fn = fig_last_dump_time},
    {"jemalloc_version", NULL, "jemalloc's version", FIG_TEXT,
        .fn = fig_jemalloc_version},
    {"jemalloc_opt_prof", "jemalloc_prof_enabled",
        "Heap profiling built in and enabled (opt.prof)", FIG_BOOL,
        .ctl = "opt.prof"},
    {"jemalloc_prof_active", "jemalloc_prof_active",
        "Allocations are being sampled (prof.active)", FIG_BOOL,
        .ctl = "prof.active"},
    {"jemalloc_lg_prof_sample", "jemalloc_prof_lg_sample",
        "Sampling interval, log2 bytes (prof.lg_sample)", FIG_GAUGE,
        .ctl = "prof.lg_sample"},
    {"jemalloc_allocated", "jemalloc_allocated_bytes",
        "Bytes allocated by the application (stats.allocated)", FIG_GAUGE,
        .ctl = "stats.allocated"},
    {"jemalloc_active", "jemalloc_active_bytes",
        "Bytes in active pages (stats.active)", FIG_GAUGE,
        .ctl = "stats.active"},
    {"jemalloc_metadata", "jemalloc_metadata_bytes",
        "Bytes of allocator metadata (stats.metadata)", FIG_GAUGE,
        .ctl = "stats.metadata"},
    {"jemalloc_resident", "jemalloc_resident_bytes",
        "Bytes in resident data pages (stats.resident)", FIG_GAUGE,
        .ctl = "stats.resident"},
    {"jemalloc_mapped", "jemalloc_mapped_bytes",
        "Bytes in mapped extents (stats.mapped)", FIG_GAUGE,
        .ctl = "stats.mapped"},
    {"jemalloc_retained", "jemalloc_retained_bytes",
        "Bytes retained for reuse, not returned to the OS "
        "(stats.retained)",
        FIG_GAUGE, .ctl = "stats.retained"},
    /* dump_on_memory: a dump before the OOM killer comes. */
    {"jm4lw_memory_source", NULL,
        "Where dump_on_memory reads the limit: cgroup_v2, cgroup_v1, "
        "rlimit, machine, or none",
        FIG_TEXT, .fn = fig_memory_source},
    {"jm4lw_memory_usage", "jm4lw_memory_usage_bytes",
        "Memory the limit counts (cgroup usage, VmSize under RLIMIT_AS, "
        "else VmRSS)",
        FIG_GAUGE, .fn = fig_memory_usage},
    {"jm4lw_memory_limit", "jm4lw_memory_limit_bytes",
        "The memory limit dump_on_memory watches", FIG_GAUGE,
        .fn = fig_memory_limit},
    {"jm4lw_memory_threshold", "jm4lw_memory_threshold_bytes",
        "Usage at which dump_on_memory dumps", FIG_GAUGE,
        .fn = fig_memory_threshold},
    {"jm4lw_memory_dumps_cgroup_v2", "jm4lw_memory_dumps_total",
        MEMORY_DUMPS_HELP, FIG_COUNTER, .fn = fig_memory_dumps_MEMORY_CGROUP_V2,
        .labels = "trigger=\"cgroup_v2\""},
    {"jm4lw_memory_dumps_cgroup_v1", "jm4lw_memory_dumps_total",
        MEMORY_DUMPS_HELP, FIG_COUNTER, .fn = fig_memory_dumps_MEMORY_CGROUP_V1,
        .labels = "trigger=\"cgroup_v1\""},
    {"jm4lw_memory_dumps_rlimit", "jm4lw_memory_dumps_total", MEMORY_DUMPS_HELP,
        FIG_COUNTER, .fn = fig_memory_dumps_MEMORY_RLIMIT,
        .labels = "trigger=\"rlimit\""},
    {"jm4lw_memory_dumps_machine", "jm4lw_memory_dumps_total",
        MEMORY_DUMPS_HELP, FIG_COUNTER, .fn = fig_memory_dumps_MEMORY_MACHINE,
        .labels = "trigger=\"machine\""},
    {"jm4lw_memory_dumps_psi", "jm4lw_memory_dumps_total", MEMORY_DUMPS_HELP,
        FIG_COUNTER, .fn = fig_memory_dumps_MEMORY_PSI,
        .labels = "trigger=\"psi\""},
};
const size_t figures_count = sizeof(figures) / sizeof(figures[0]);
_Static_assert(sizeof(figures) / sizeof(figures[0]) <= FIGURES_MAX,
    "FIGURES_MAX is too small");

/*
 * Read every figure. One coalesced epoch first: stats.* are jemalloc's
 * cached values, stale without it.
 */
void figures_read(struct core *c, struct figure_value *v)
{
	const struct figure *f;
	size_t i, sz;
	int b;

	ctl_epoch_coalesced(c);
	for (i = 0; i < figures_count; i++) {
		f = &figures[i];
		memset(&v[i], 0, sizeof(v[i]));
		if (f->fn != NULL)
			v[i].have = f->fn(c, &v[i].u, &v[i].s);
		else if (f->stat != 0) {
			memcpy(&v[i].u, (const char *)&c->st + f->stat - 1,
			    sizeof(uint64_t));
			v[i].have = 1;
		} else if (f->type == FIG_BOOL) {
			if ((v[i].have = ctl_bool(c->ops, f->ctl, &b) == 0))
				v[i].u = (uint64_t)b;
		} else if ((v[i].have = ctl_size(c->ops, f->ctl, &sz) == 0))
			v[i].u = sz;
	}
}

/* The value of figure @p key, for a face that shows only a few. */
const struct figure_value *figure_find(const struct figure_value *v,
    const char *key)
{
	size_t i;

	for (i = 0; i < figures_count; i++)
		if (strcmp(figures[i].key, key) == 0)
			return v[i].have ? &v[i] : NULL;
	return NULL;
}

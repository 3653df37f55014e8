/*
 * ctl — every mallctl the engine makes, through struct core_ops (Redis's
 * zmalloc.c model: one file talks to the allocator). Unit tests hand in a
 * table that fails each call with each errno.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jemalloc/jemalloc.h> /* MALLCTL_ARENAS_ALL only: calls go via ops */

#include "config_struct.h"
#include "core.h"
#include "ctl.h"
#include "ops.h"
#include "reason.h"
#include "view.h"

/* Start counting uptime and remember the allocator and configuration. */
void core_init(struct core *c, const struct core_ops *ops,
    const struct jm4lw_config *cfg, const struct core_policy *pol)
{
	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->cfg = cfg;
	c->pol = *pol;
	c->mode = "standalone";
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	c->samp_active = -1;
	core_sampling_seen(c, 0);
}

/* The wall clock in ns since the epoch. */
static long long wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Note prof.active as it is now; @p changed: we just switched it (or
 * reset the profile), so its clock starts now. Seen for the first time
 * (core_init) as opt.prof_active says, it has been so since the process
 * started, as far as anyone can tell; changed behind our back (the host's
 * own mallctl), since when is not known. */
void core_sampling_seen(struct core *c, int changed)
{
	int on = 0, opt = 0;

	if (c->ops == NULL || c->ops->mallctl == NULL ||
	    ctl_bool(c->ops, "prof.active", &on) != 0) {
		c->samp_active = -1;
		return;
	}
	if (changed) {
		c->samp_since_ns = wall_ns();
		c->samp_from_start = 0;
	} else if (c->samp_active == -1) {
		c->samp_from_start =
		    ctl_bool(c->ops, "opt.prof_active", &opt) == 0 && opt == on;
		c->samp_since_ns = 0;
		c->samp_reset = 0;
	} else if (c->samp_active != on) {
		c->samp_since_ns = 0;
		c->samp_from_start = 0;
		c->samp_reset = 0;
	}
	c->samp_active = on;
}

/* Sampling now, for a fresh profile: its state, clock and interval. */
void core_sampling(struct core *c, struct view_sampling *s)
{
	enum prof_state ps;
	size_t lg = 0;
	int e;

	memset(s, 0, sizeof(*s));
	if (c->ops == NULL || c->ops->mallctl == NULL)
		return;
	if ((ps = core_prof_state(c->ops, &e)) == PROF_OFF)
		s->state = SAMPLING_OFF;
	if (ps != PROF_READY)
		goto words;
	core_sampling_seen(c, 0);
	if (c->samp_active == -1)
		goto words;
	s->state = c->samp_active ? SAMPLING_ACTIVE : SAMPLING_INACTIVE;
	s->since_ns = c->samp_since_ns;
	s->since_reset = c->samp_reset;
	s->from_start = c->samp_from_start;
	if (ctl_size(c->ops, "prof.lg_sample", &lg) == 0 && lg < 64)
		s->interval = 1ULL << lg;
words:
	if (c->hints != NULL) {
		s->turn_on = c->hints->sampling_on;
		s->start_with = c->hints->sampling_start;
	}
}

/* Seconds since core_init(). */
long long core_uptime(const struct core *c)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)(now.tv_sec - c->started.tv_sec);
}

/* Read a bool mallctl; returns 0 or jemalloc's errno. */
int ctl_bool(const struct core_ops *ops, const char *name, int *v)
{
	bool b = false;
	size_t len = sizeof(b);
	int e;

	if ((e = ops->mallctl(name, &b, &len, NULL, 0)) == 0)
		*v = b;
	return e;
}

/* Read a size_t mallctl; returns 0 or jemalloc's errno. */
int ctl_size(const struct core_ops *ops, const char *name, size_t *v)
{
	size_t len = sizeof(*v);

	return ops->mallctl(name, v, &len, NULL, 0);
}

/* Refresh jemalloc's cached statistics. */
void ctl_epoch(const struct core_ops *ops)
{
	uint64_t epoch = 1;
	size_t len = sizeof(epoch);

	(void)ops->mallctl("epoch", &epoch, &len, &epoch, len);
}

/*
 * The same, at most once per STATS_MAX_AGE_NS, for words that only read.
 * An epoch merges every arena's statistics under the arenas' locks: ~10 us
 * of the host's CPU here, most of what a mntr costs, and contention with
 * the host's own allocations. A scraper storm (or a benchmark) then pays
 * for one merge a millisecond, not one a request; no reader can tell a
 * snapshot a millisecond old from a new one.
 */
#define STATS_MAX_AGE_NS 1000000L

void ctl_epoch_coalesced(struct core *c)
{
	struct timespec now;
	long long age;

	clock_gettime(CLOCK_MONOTONIC, &now);
	age = (long long)(now.tv_sec - c->stats_at.tv_sec) * 1000000000LL +
	    (now.tv_nsec - c->stats_at.tv_nsec);
	if (c->stats_fresh && age >= 0 && age < STATS_MAX_AGE_NS)
		return;
	ctl_epoch(c->ops);
	c->stats_at = now;
	c->stats_fresh = 1;
}

/* The calling thread's sampling, through a MIB looked up once: this runs
 * twice per callback of the module on a host's loop. */
int ctl_thread_sampling(const struct core_ops *ops, struct ctl_mib *m, int on)
{
	bool old = false, nv = on != 0;
	size_t len = sizeof(old);

	if (m->state == 0) {
		m->len = sizeof(m->mib) / sizeof(m->mib[0]);
		m->state = ops->nametomib != NULL && ops->bymib != NULL &&
		        ops->nametomib("thread.prof.active", m->mib, &m->len) ==
		            0
		    ? 1
		    : -1;
	}
	if (m->state < 0)
		return -1;
	/* ENOENT without opt.prof: nothing to switch, now or later. */
	if (ops->bymib(m->mib, m->len, &old, &len, &nv, sizeof(nv)) != 0) {
		m->state = -1;
		return -1;
	}
	return old;
}

/* Name the calling thread for the profiles (see ops.h). */
int ctl_thread_name(const struct core_ops *ops, const char *name)
{
	int on = 0, e;
	size_t i;

	if (name == NULL)
		return EINVAL;
	/* jemalloc's own rule (isgraph or isblank), in ASCII: its isgraph
	 * of a char past 0x7f is the locale's, and the dump is read back
	 * byte by byte. Nor '"' or '\\': jemalloc writes the name
	 * unescaped into prof_recent's JSON, where they break the string
	 * for every other reader. */
	for (i = 0; name[i] != '\0'; i++)
		if (name[i] < ' '
		        ? name[i] != '\t'
		        : name[i] > '~' || name[i] == '"' || name[i] == '\\')
			return EINVAL;
	if (i > CTL_THREAD_NAME_MAX)
		return ENAMETOOLONG;
	if ((e = ctl_bool(ops, "opt.prof", &on)) != 0 || !on)
		return e == 0 || e == ENOENT ? ENOENT : e;
	/* With it, thread.prof.name answers ENOENT, as without profiling:
	 * say which. */
	if (ctl_bool(ops, "opt.prof_sys_thread_name", &on) == 0 && on)
		return EBUSY;
	return ops->mallctl("thread.prof.name", NULL, NULL, (void *)&name,
	    sizeof(name));
}

/* The same through the module's cached lookup. */
int core_thread_sampling(struct core *c, int on)
{
	return ctl_thread_sampling(c->ops, &c->tpa, on);
}

/* jemalloc's version string, for srvr and /metrics: the faces read it
 * here rather than from the ops table. */
const char *core_version(const struct core *c)
{
	return c->ops->version != NULL ? c->ops->version : "";
}

/* jmst/jmsj and /jemalloc/stats: malloc_stats_print() whole, as text or
 * (@p json) JSON. It refreshes the epoch itself before it reads anything
 * (stats.c, 5.x): one of ours would be a second merge of every arena. */
void core_stats_print(struct core *c, void (*cb)(void *, const char *),
    void *arg, int json)
{
	c->ops->stats_print(cb, arg, json ? "J" : NULL);
}

/* Is heap profiling usable in this process? */
enum prof_state core_prof_state(const struct core_ops *ops, int *err)
{
	int on = 0, e;

	*err = 0;
	if ((e = ctl_bool(ops, "opt.prof", &on)) == ENOENT)
		return PROF_UNBUILT;
	if (e != 0) {
		*err = e;
		return PROF_UNREADABLE;
	}
	return on ? PROF_READY : PROF_OFF;
}

/*
 * What to set, exactly: Keeper answers a process without profiling with
 * silence, which nobody can act on.
 */
const char *core_prof_reason(enum prof_state s, int err,
    const struct core_hints *hints, char *buf, size_t len)
{
	const char *start = hints != NULL ? hints->sampling_start : NULL;

	switch (s) {
	case PROF_UNBUILT:
		snprintf(buf, len,
		    "this jemalloc was built without heap "
		    "profiling (config.prof is false); run on a jemalloc "
		    "configured with --enable-prof, such as Debian's "
		    "libjemalloc2");
		break;
	case PROF_OFF:
		snprintf(buf, len,
		    "heap profiling is not enabled in this process; start it "
		    "with MALLOC_CONF=prof:true,prof_active:false%s%s",
		    start != NULL ? " and " : "", start != NULL ? start : "");
		break;
	case PROF_UNREADABLE:
		snprintf(buf, len, "cannot read opt.prof: %s", strerror(err));
		break;
	default:
		snprintf(buf, len, "heap profiling is ready");
	}
	return buf;
}

/* Profiling unbuilt or off is a refusal of its own; opt.prof that
 * cannot be read is a failure, whatever its errno. */
enum core_reason core_prof_why(enum prof_state s)
{
	switch (s) {
	case PROF_READY:
		return REASON_NONE;
	case PROF_UNBUILT:
		return REASON_PROF_UNBUILT;
	case PROF_OFF:
		return REASON_PROF_OFF;
	default:
		return REASON_FAILED;
	}
}

/* Fill @p r's reason when profiling is not usable; -1 then. */
static int prof_check(struct core *c, struct ctl_result *r)
{
	enum prof_state s;
	int e;

	memset(r, 0, sizeof(*r));
	if ((s = core_prof_state(c->ops, &e)) == PROF_READY)
		return 0;
	r->why = core_prof_why(s);
	core_prof_reason(s, e, c->hints, r->reason, sizeof(r->reason));
	return -1;
}

/* jmep/jmdp: switch sampling, and say what it was. */
void core_set_active(struct core *c, int on, struct ctl_result *r)
{
	bool old = false, nv = on != 0;
	size_t len = sizeof(old);
	int e;

	if (prof_check(c, r) == -1)
		return;
	e = c->ops->mallctl("prof.active", &old, &len, &nv, sizeof(nv));
	if (e != 0) {
		r->why = REASON_FAILED;
		snprintf(r->reason, sizeof(r->reason),
		    "cannot set prof.active: %s", strerror(e));
		return;
	}
	r->was = old;
	r->ok = 1;
	if (old != nv) {
		core_sampling_seen(c, 1);
		c->samp_reset = 0;
	} else
		core_sampling_seen(c, 0);
}

/* jmpg: give unused dirty pages of every arena back to the kernel. */
void core_purge(struct core *c, struct ctl_result *r)
{
	char name[32];
	int e;

	memset(r, 0, sizeof(*r));
	snprintf(name, sizeof(name), "arena.%u.purge",
	    (unsigned)MALLCTL_ARENAS_ALL);
	ctl_epoch(c->ops);
	r->sizes = ctl_size(c->ops, "stats.resident", &r->before) == 0;
	if ((e = c->ops->mallctl(name, NULL, NULL, NULL, 0)) != 0) {
		r->why = REASON_FAILED;
		snprintf(r->reason, sizeof(r->reason), "purge failed: %s",
		    strerror(e));
		return;
	}
	ctl_epoch(c->ops);
	/* No stats in this jemalloc: say nothing false. */
	r->sizes =
	    r->sizes && ctl_size(c->ops, "stats.resident", &r->after) == 0;
	r->ok = 1;
}

/*
 * jmrs: prof.reset — forget the samples so far and start a fresh profile,
 * so an operator can profile a window: jmrs, wait, jmfp. Passing the rate
 * keeps it: prof.reset with none resets it to opt.lg_prof_sample.
 */
void core_reset(struct core *c, struct ctl_result *r)
{
	int e;

	if (prof_check(c, r) == -1)
		return;
	if (c->pol.reset_lg >= 0)
		r->lg = (size_t)c->pol.reset_lg;
	else if ((e = ctl_size(c->ops, "prof.lg_sample", &r->lg)) != 0) {
		r->why = REASON_FAILED;
		snprintf(r->reason, sizeof(r->reason),
		    "cannot read prof.lg_sample: %s", strerror(e));
		return;
	}
	e = c->ops->mallctl("prof.reset", NULL, NULL, &r->lg, sizeof(r->lg));
	if (e != 0) {
		r->why = REASON_FAILED;
		snprintf(r->reason, sizeof(r->reason), "prof.reset failed: %s",
		    strerror(e));
		return;
	}
	r->ok = 1;
	/* Nothing sampled before now is in a profile from here on. */
	core_sampling_seen(c, 1);
	c->samp_reset = 1;
}

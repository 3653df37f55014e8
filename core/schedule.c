/*
 * schedule — when the module's own schedule calls for a dump. The timers
 * are the daemon's; the policy is here, over the typed configuration.
 */
#include "core.h"
#include "ops.h"
#include "schedule.h"

/* stats.allocated now, fresh; 0 if this jemalloc keeps no stats. */
static int allocated(struct core *c, size_t *now)
{
	ctl_epoch(c->ops);
	return ctl_size(c->ops, "stats.allocated", now) == 0 ? 0 : -1;
}

/* Take stats.allocated now as the growth baseline. */
void core_growth_baseline(struct core *c)
{
	size_t now = 0;

	c->alloc_known = allocated(c, &now) == 0;
	c->alloc_at_dump = now;
}

/*
 * dump_on_growth: compare stats.allocated with what it was at the last
 * dump (or at the first look, before any dump).
 */
int core_growth_due(struct core *c)
{
	unsigned long long want;
	size_t now = 0, base;

	if (c->pol.growth_bytes == 0 && c->pol.growth_pct == 0)
		return 0;
	if (!c->alloc_known) { /* no baseline yet (or growth was off) */
		core_growth_baseline(c);
		return 0;
	}
	if (allocated(c, &now) == -1)
		return 0;
	base = c->alloc_at_dump;
	if (now <= base)
		return 0;
	want = c->pol.growth_pct != 0
	    ? (unsigned long long)base * c->pol.growth_pct / 100
	    : c->pol.growth_bytes;
	return (unsigned long long)(now - base) >= want;
}

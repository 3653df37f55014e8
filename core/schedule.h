/* schedule — the dump schedule's policy (core/schedule.c). */
#ifndef JM4LW_SCHEDULE_H
#define JM4LW_SCHEDULE_H

struct core;

/* Is a dump_on_growth dump due? 1 yes, 0 no (or growth is off). */
int core_growth_due(struct core *c);

/* Take a new baseline for growth (a reload turned it on). */
void core_growth_baseline(struct core *c);

#endif /* JM4LW_SCHEDULE_H */

/*
 * timers — the schedule's timers (daemon/timers.c): dump_interval,
 * dump_on_growth, history_interval and snapshot_interval, built first and
 * put in force last, so a reconfigure that fails changes none.
 */
#ifndef JM4LW_TIMERS_H
#define JM4LW_TIMERS_H

struct core_policy;
struct event;
struct jm4lw;
struct jm4lw_config;

struct timers {
	struct event *dump, *growth; /* new ones, or NULL */
	int keep_dump, keep_growth;  /* the running one stays */
	struct event *hist;          /* history_interval's */
	int keep_hist;
	struct event *snap; /* snapshot_interval's */
	int keep_snap;
	unsigned hist_points, hist_interval;
};

int timers_build(struct jm4lw *m, const struct jm4lw_config *cfg,
    const struct core_policy *pol, const struct jm4lw_config *old,
    struct timers *t);
void timers_commit(struct jm4lw *m, struct timers *t);
void timers_discard(struct timers *t);
void timers_free(struct jm4lw *m);

#endif

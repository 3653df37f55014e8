/*
 * jedumps_shell — the shell's half of jemalloc's own dumps
 * (daemon/jedumps.c; core/jedumps.h is core's): prof.prefix into
 * dump_dir, each dump noticed (inotify) on the loop and adopted on the
 * worker, prof_gdump's rate.
 */
#ifndef JM4LW_JEDUMPS_SHELL_H
#define JM4LW_JEDUMPS_SHELL_H

struct jm4lw;
struct jm4lw_config;

/* jemalloc's own dumps into dump_dir, at start (@p old NULL) and at each
 * reload; -1 only without memory. Then freed. */
int jedumps_apply(struct jm4lw *m, const struct jm4lw_config *old);
void jedumps_free(struct jm4lw *m);
/* prof.gdump on at the loop's first turn, once its rate limit can act on
 * the first dump (the agent's, for a prof_gdump jm4lw-run held off). */
void jedumps_gdump_handover(struct jm4lw *m);

#endif

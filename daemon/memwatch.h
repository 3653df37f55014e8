/*
 * memwatch — dump_on_memory's watcher (daemon/memwatch.c): a small
 * thread reads the limit, usage and pressure (core/memory.c) every
 * memory_check_interval and hands each reading to the loop, where
 * core's state machine decides and the dump is asked for like the
 * schedule's, with CAUSE_MEMORY.
 */
#ifndef JM4LW_MEMWATCH_H
#define JM4LW_MEMWATCH_H

struct jm4lw;

/* Watch as m->cfg and m->core.pol.mem say (after jm4lw_new or a
 * reconfigure has put them in force): start, restart or stop the
 * watcher. A thread that cannot start is logged; the module serves on. */
void memwatch_apply(struct jm4lw *m);

/* Stop the watcher and free it (jm4lw_free). */
void memwatch_free(struct jm4lw *m);

#endif /* JM4LW_MEMWATCH_H */

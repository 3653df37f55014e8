/*
 * snapown — the snapshots' ring's owner (core/snapown.c).
 */
#ifndef JM4LW_SNAPOWN_H
#define JM4LW_SNAPOWN_H

struct dumper;
struct snapring;

/* Free the snapshots' ring, all of its memory (a fork child's copy of
 * its parent's is let go of). With no job out: the ring is the worker's
 * (core/snapown.c). */
void dumper_snaps_free(struct dumper *d);

/* On the loop, no job out: with @p count 0 (snapshot_count, a reload
 * turned snapshots off) the ring's memory goes now, not at the next
 * snapshot, which never comes. */
void dumper_snaps_apply(struct dumper *d, unsigned count);

/* The worker's ring, this process's: a fork child starts with none, not
 * with its parent's snapshots (of another heap from now on). */
struct snapring *snaps_ring(struct dumper *d);

/* A job starts (1) or ends (0) a change of the ring, so a fork child's
 * copy never shows a change without the flag. */
void snaps_changing(struct dumper *d, int on);

#endif /* JM4LW_SNAPOWN_H */

/*
 * What core/snaps.c and core/snaps_view.c share, and no one else.
 */
#ifndef JM4LW_SNAPS_INT_H
#define JM4LW_SNAPS_INT_H

#include <stddef.h>
#include <time.h>

/* A clock's now in ns. */
long long snaps_now(clockid_t id);

/* "12 s", "5.0 min" or "2.0 h": a snapshot's age. */
const char *snaps_age(char *buf, size_t len, long long ns);

/* A memfd for a profile, and its /proc path in @p path: -1 with errno. */
int snaps_memfd_open(char *path, size_t len);

#endif /* JM4LW_SNAPS_INT_H */

/*
 * when — the one time format of our replies: "2026-11-21T23:40:12Z",
 * UTC ISO 8601, for mntr, jmls and the leak report alike.
 */
#ifndef JM4LW_WHEN_H
#define JM4LW_WHEN_H

#include <stddef.h>
#include <time.h>

/* @p t into @p buf, which it returns; "?" if it cannot be shown. */
const char *fmt_time(char *buf, size_t len, time_t t);

/* When a file was last written, in ns since the epoch: open @p fd's
 * (when not -1) or @p path's; 0 if it cannot be known. A profile is
 * filed by it (pprof's time_nanos, from the dump's file). */
long long file_mtime_ns(int fd, const char *path);

/* An age at a glance, @p s seconds into @p buf, which it returns, one
 * decimal in seconds, minutes, hours or days: "12.3 s", "4.2 min",
 * "1.5 h", "3.0 d"; @p compact: "12.3s", "4.2m" (jmrc's columns). */
const char *fmt_age(char *buf, size_t len, double s, int compact);

#endif

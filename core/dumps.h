/*
 * dumps — our dumps in dump_dir as a collection: listing, retention,
 * a process's dumps, the staging directories of processes that are gone
 * (core/dumps.c).
 */
#ifndef JM4LW_DUMPS_H
#define JM4LW_DUMPS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config_struct.h"
#include "util.h"

struct core;

/* One of our dumps in dump_dir. */
struct dump_entry {
	char *name;
	long long size;
	struct timespec mtime;
	int cause; /* enum dump_cause, from its name */
};

/* jmls: our dumps, newest first. */
struct dump_list {
	char dir[PATH_MAX];
	size_t n;
	unsigned long long total;
	struct dump_entry *d;
	int err;       /* listing failed: errno, and dir says where */
	char why[512]; /* or, when dump_dir is not trusted, why */
};

/* Why listing failed, one line: l->why, or l->err's text. */
const char *dump_list_error(const struct dump_list *l);

/* Fill @p l; 0, or -1 with l->err. Free with dump_list_free(). */
int core_dump_list(const struct core *c, struct dump_list *l);
void dump_list_free(struct dump_list *l);

/* Apply dump_keep/dump_max_bytes in @p dir; @p newest always stays.
 * Returns how many dumps were deleted. */
uint64_t dumps_retain(const struct jm4lw_config *cfg, const char *dir,
    const char *newest, const struct core_log *log);

/* The paths of our dumps in @p dir by process @p pid, the newest @p max,
 * oldest first: 0 with *@p paths (free each and the array), or -1 with
 * errno. */
int dumps_of_pid(const char *prefix, const char *dir, long pid, size_t max,
    char ***paths, size_t *n);

/* Is @p name one of ours: "<prefix>.<pid>.<seq>.[<cause>.]heap"? */
int dumps_match(const char *prefix, const char *name);

/* The cause (enum dump_cause) @p name's tag says, or -1 if it is not one
 * of ours. */
int dumps_cause(const char *prefix, const char *name);

/* Is @p name a staging directory's: ".<prefix>.<pid>.XXXXXX"? */
int dumps_stage_match(const char *prefix, const char *name, long *pid);

/* Whether the process that wrote a file at @p since as pid @p pid is
 * gone: no such pid, or one that started later (the pid was reused). */
int dumps_pid_gone(long pid, time_t since);

/* Remove the staging directories in @p dir of processes that are gone. */
void dumps_sweep_stages(const char *prefix, const char *dir,
    const struct core_log *log);

#endif /* JM4LW_DUMPS_H */

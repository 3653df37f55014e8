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

/* The longest process name a listing keeps. */
#define DUMPS_PROGRAM_MAX 64

/* One of our dumps in dump_dir. */
struct dump_entry {
	char *name;
	long long size;
	struct timespec mtime;
	int cause;  /* enum dump_cause, from its name */
	int pinned; /* a memory dump nobody has listed or fetched yet */
	long pid;   /* the process that wrote it, from its name */
	int mine;   /* this process's (core_dump_list) */
	char program[DUMPS_PROGRAM_MAX]; /* its name where known (running,
	                                    or this one), else "" */
};

/* jmls: our dumps, this process's first, each part newest first. */
struct dump_list {
	char dir[PATH_MAX];
	long pid;                        /* this process */
	char program[DUMPS_PROGRAM_MAX]; /* and its name */
	size_t nmine;                    /* d[0 .. nmine) are its dumps */
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

/*
 * The dump before an OOM kill must outlive the flood of dumps after it:
 * a memory dump (CAUSE_MEMORY) is pinned, written read-only (0400), and
 * retention passes it by until someone lists it (jmls, /jemalloc/dumps)
 * or fetches it (/jemalloc/dump?name=), which makes it 0600 again. The
 * mode is the mark because it lives with the file: it survives restarts,
 * shows in `ls -l`, and costs retention's scan no extra call. At most
 * DUMPS_PINNED_MAX stay pinned; retention releases the oldest beyond.
 */
#define DUMPS_PINNED_MAX 4

/* Pin (0400) or release (0600) the memory dump at @p path: 0, or -1 and
 * errno. */
int dumps_pin(const char *path, int pin);

/* The pid in our dump's name "<prefix>.<pid>.<seq>...", or -1. */
long dumps_pid(const char *prefix, const char *name);

/* Process @p pid's own name: its argv[0]'s base name up to a space (a
 * title written over argv, as redis-server's), else its comm; "" if it
 * cannot be read. In @p buf. */
const char *dumps_proc_name(long pid, char *buf, size_t len);

/* Is @p name one of ours: "<prefix>.<pid>.<seq>.[<cause>.]heap"? */
int dumps_match(const char *prefix, const char *name);

/* The cause (enum dump_cause) @p name's tag says, or -1 if it is not one
 * of ours. */
int dumps_cause(const char *prefix, const char *name);

/* Whether the process that wrote a file at @p since as pid @p pid is
 * gone: no such pid, or one that started later (the pid was reused). */
int dumps_pid_gone(long pid, time_t since);

#endif /* JM4LW_DUMPS_H */

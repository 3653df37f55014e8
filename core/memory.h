/*
 * memory — how close the process is to its memory limit, for
 * dump_on_memory (core/memory.c): the limit and the usage read from files
 * under a root given by the caller (cgroup v2, cgroup v1, then RLIMIT_AS,
 * then the machine), the pressure (PSI), and the small state machine that
 * says when a dump is due. No threads, no events: the module's watcher
 * (daemon/memwatch.c) reads off the loop and decides on it.
 */
#ifndef JM4LW_MEMORY_H
#define JM4LW_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* What said a dump was due: where the limit was read, or PSI. */
enum memory_trigger {
	MEMORY_NONE,      /* no limit found */
	MEMORY_CGROUP_V2, /* memory.max, memory.current */
	MEMORY_CGROUP_V1, /* memory.limit_in_bytes, memory.usage_in_bytes */
	MEMORY_RLIMIT,    /* RLIMIT_AS against VmSize */
	MEMORY_MACHINE,   /* MemTotal against VmRSS */
	MEMORY_PSI,       /* memory pressure's avg10 */
	MEMORY_TRIGGERS
};

/* Each trigger's name in metrics' labels and mntr's keys, and as the
 * log line says it. */
extern const char *const memory_trigger_names[MEMORY_TRIGGERS];
extern const char *const memory_trigger_words[MEMORY_TRIGGERS];

/* Where to read: the cgroup file systems' root (/sys/fs/cgroup), proc's
 * (/proc) and the RLIMIT_AS in force (UINT64_MAX: none). */
struct memory_where {
	const char *cgroup_root;
	const char *proc;
	uint64_t rlimit_as;
};

/* One look at the process's memory. */
struct memory_reading {
	enum memory_trigger source; /* where limit and usage come from */
	uint64_t usage, limit;      /* bytes; both 0 with MEMORY_NONE */
	int have_events;            /* cgroup v2's memory.events */
	uint64_t events_high, events_max, events_oom_kill;
	int have_psi;                /* memory.pressure or /proc/pressure */
	unsigned psi_some, psi_full; /* avg10, in hundredths of a percent */
	char refused[256]; /* the first file not read: not a regular file */
};

/* Read the limit and usage, first source that has a limit wins. 0, or
 * -1 when nothing could be read at all (source MEMORY_NONE). */
int memory_read(const struct memory_where *w, struct memory_reading *r);

/* Pieces of memory_read, for tests: a cgroup v2 directory (its
 * ancestors' memory.max up to @p base count too), a cgroup v1 memory
 * directory. 0, or -1 if that source has no limit there. */
int memory_read_v2(const char *base, const char *dir, struct memory_reading *r);
int memory_read_v1(const char *dir, struct memory_reading *r);

/* The v2 path ("0::/p") and v1 memory path ("N:...memory...:/p") of a
 * /proc/self/cgroup text; "" where it has none. */
void memory_cgroup_paths(const char *text, char *v2, size_t v2len, char *v1,
    size_t v1len);

/* PSI's "some avg10=1.23 ..." / "full ..." lines: avg10 x100. 0, or -1. */
int memory_parse_psi(const char *text, unsigned *some, unsigned *full);

/* dump_on_memory and dump_on_memory_psi, parsed (daemon/config.c). */
struct memory_policy {
	uint64_t bytes; /* a threshold in bytes, or 0 */
	unsigned pct;   /* a percentage of the limit (1-100), or 0 */
	unsigned psi;   /* avg10 threshold x100, or 0: off */
	int psi_full;   /* the "full" line, else "some" */
};

/* Is the policy on at all? */
int memory_policy_on(const struct memory_policy *p);

/*
 * The watcher's state, on the loop: hysteresis per trigger kind (usage,
 * PSI), a dump asked for and not yet answered, and the counters.
 */
struct memory_state {
	int have;                    /* a reading came */
	struct memory_reading last;  /* the newest */
	uint64_t threshold;          /* bytes, from the newest reading */
	int fired_usage, fired_psi;  /* dumped; waits to fall back */
	int asking;                  /* a dump is out */
	enum memory_trigger pending; /* what it was asked for */
	struct memory_policy armed;  /* the policy it was armed under */
	uint64_t dumps[MEMORY_TRIGGERS];
};

/*
 * A new reading @p r under policy @p p: the trigger a dump is due for,
 * or MEMORY_NONE. A trigger fires when its figure reaches the threshold
 * and has not fired since it last fell back below 95 % of it (usage) or
 * half of it (PSI, an average that decays slowly); while a dump is out
 * nothing fires.
 */
enum memory_trigger memory_check(struct memory_state *s,
    const struct memory_policy *p, const struct memory_reading *r);

/* The dump asked for by memory_check() was kept (@p ok) or not: kept, the
 * trigger waits to fall back; not, it fires again at the next check. */
void memory_dumped(struct memory_state *s, int ok);

/* The state after a new policy: armed again, counters kept. */
void memory_rearm(struct memory_state *s);

/* Do two policies say the same? */
int memory_policy_same(const struct memory_policy *a,
    const struct memory_policy *b);

#endif /* JM4LW_MEMORY_H */

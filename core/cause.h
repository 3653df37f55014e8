/*
 * cause — why a kept dump was taken, written into its name so that it
 * survives restarts, shows in a plain `ls`, and covers the dumps jemalloc
 * writes itself (core/cause.c):
 *
 *	<prefix>.<pid>.<seq>.<letter>.heap          ours
 *	<prefix>.<pid>.<seq>.<letter><n>.heap       jemalloc's i, u and m
 *	<prefix>.<pid>.<seq>.f.heap                 jemalloc's final dump
 *	<prefix>.<pid>.<seq>.heap                   an older jm4lw's: not known
 *
 * jemalloc's letters are its own (src/prof_sys.c, prof_dump_filename);
 * ours are chosen not to meet them.
 */
#ifndef JM4LW_CAUSE_H
#define JM4LW_CAUSE_H

enum dump_cause {
	CAUSE_NONE,     /* not said: a name without a letter */
	CAUSE_WORD,     /* w: jmfp, jmdf, on the port or a host's reply */
	CAUSE_HTTP,     /* h: a route (/4lw/jmfp among them) */
	CAUSE_SCHEDULE, /* s: dump_interval */
	CAUSE_GROWTH,   /* g: dump_on_growth */
	CAUSE_MEMORY,   /* o: dump_on_memory, before the OOM killer */
	CAUSE_INTERVAL, /* i: jemalloc's lg_prof_interval */
	CAUSE_GDUMP,    /* u: jemalloc's prof_gdump, a new high */
	CAUSE_FINAL,    /* f: jemalloc's prof_final, at exit */
	CAUSE_MANUAL,   /* m: jemalloc's prof.dump without a name (a host's) */
	CAUSE_COUNT
};

struct cause_entry {
	char letter;      /* in the name; '\0' for CAUSE_NONE */
	int jemalloc;     /* jemalloc writes it, under its prof.prefix */
	int numbered;     /* jemalloc follows the letter with a sequence */
	const char *name; /* one word, in jmls, JSON, the page, the log */
};

extern const struct cause_entry causes[CAUSE_COUNT];

/*
 * The cause a dump name's tag says: @p tag points past "<pid>.<seq>." and
 * must be exactly "<letter>[digits].heap" as its row allows, or "heap"
 * (CAUSE_NONE). -1: not a tag of ours.
 */
int cause_of_tag(const char *tag);

/* A cause's word, "-" for CAUSE_NONE or out of range. */
const char *cause_name(int cause);

#endif /* JM4LW_CAUSE_H */

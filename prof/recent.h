/*
 * recent — jemalloc 5.3's recent sampled allocations
 * (experimental.prof_recent.alloc_dump): the JSON it writes parsed into
 * records, and the records rendered, both stacks symbolized, as jmrc's
 * screen and /jemalloc/recent's JSON. Pure: the caller reads the JSON
 * (core/recent.c) and hands in a symbolizer and the clock.
 */
#ifndef JM4LW_RECENT_H
#define JM4LW_RECENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct symbolizer;

/* Bounds of what the parser takes: jemalloc's own (a backtrace is at most
 * PROF_BT_MAX = 128 frames; a string is cut at its emitter's 256-byte
 * buffer), with room. */
#define RECENT_FRAMES_MAX 256
#define RECENT_NAME_MAX 64 /* a thread's name kept, cut beyond */
#define RECENT_RECS_MAX (1u << 20)
#define RECENT_DEPTH_MAX 8 /* nesting of a value skipped (an unknown key) */

/* One side of a record: who, when and where. */
struct recent_site {
	uint64_t tid;                 /* jemalloc's thread uid */
	uint64_t time_ns;             /* jemalloc's clock (opt.prof_time_res) */
	char thread[RECENT_NAME_MAX]; /* its name, or "" */
	size_t off, n;                /* its stack: recent.pcs[off..off+n) */
};

/* One sampled allocation. */
struct recent_rec {
	uint64_t size, usize;
	int released; /* freed (jemalloc's "released") */
	int has_free; /* the free's thread, time and stack are known */
	struct recent_site alloc, free;
};

/* What alloc_dump said: its records oldest first, as jemalloc keeps them. */
struct recent {
	uint64_t sample_interval;
	long long max; /* recent_alloc_max: -1 unlimited */
	struct recent_rec *rec;
	size_t n, cap;
	uint64_t *pcs; /* every stack's addresses, one after another */
	size_t npcs, pcap;
	int cut; /* the JSON was cut short: the records before the cut */
};

/*
 * Parse @p len bytes of alloc_dump's JSON into @p r (zeroed first). With
 * @p cut (the reader stopped at its cap), input that ends early keeps the
 * whole records before the end and sets r->cut; otherwise it is an error.
 * 0, or -1 with one line in @p err (and @p r freed).
 */
int recent_parse(const char *buf, size_t len, int cut, struct recent *r,
    char *err, size_t errlen);

void recent_free(struct recent *r);

/* What the renderings show, and of which records. */
struct recent_opts {
	int live_only;     /* only records not freed */
	uint64_t min_size; /* only records at least this big */
	uint64_t now_ns;   /* jemalloc's clock now, for ages */
	size_t cap_bytes;  /* the reader's cap, named when r->cut */
	/* Why the records are few or none (sampling inactive, or active
	 * only since a time: view_sampling_note); NULL: nothing to say. */
	const char *note;
};

/* jmrc: a heading, then newest first a line per record (size, age,
 * thread, live or freed, the innermost interesting frames) and for a
 * freed one a line for its free. 0, or -1 with errno. */
int recent_render_text(FILE *out, const struct recent *r,
    struct symbolizer *sym, const struct recent_opts *o);

/* /jemalloc/recent: one JSON object, newest first, every record with both
 * stacks symbolized (the allocator's frames cut) and their raw addresses.
 * 0, or -1 with errno. */
int recent_render_json(FILE *out, const struct recent *r,
    struct symbolizer *sym, const struct recent_opts *o);

#endif /* JM4LW_RECENT_H */

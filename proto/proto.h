/*
 * proto — the four-letter words: framing, the command table and the
 * replies. Pure C: no sockets, no libevent. Every jemalloc call goes
 * through struct proto_ops so tests can make it fail with each errno.
 */
#ifndef JM4LW_PROTO_H
#define JM4LW_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "jm4lw.h"

/* The allocator, behind a table (jemalloc's own signatures). */
struct proto_ops {
	int (*mallctl)(const char *name, void *oldp, size_t *oldlenp,
	    void *newp, size_t newlen);
	void (*stats_print)(void (*write_cb)(void *, const char *),
	    void *cbopaque, const char *opts);
	const char *version; /* jemalloc's version string */
};

/* The real jemalloc the process runs on; NULL if it runs on another
 * allocator (only possible in the preload agent's build). */
const struct proto_ops *proto_jemalloc(void);

/* Where a reply goes: the server appends to its output buffer. */
struct proto_out {
	void (*write)(void *arg, const void *buf, size_t len);
	void *arg;
};

/* Counters kept by the server and reported by mntr/srvr. */
struct proto_stats {
	uint64_t conns_open;
	uint64_t conns_total;
	uint64_t conns_rejected; /* over max_connections */
	uint64_t conns_denied;   /* outside allow_from */
	uint64_t words_served;   /* every dispatched word */
	uint64_t words_unknown;
	uint64_t words_refused; /* not in the allow list */
	uint64_t dumps_written;
	uint64_t dumps_failed;
	uint64_t dumps_refused; /* dump_min_interval, dump_min_free */
	uint64_t dumps_scheduled; /* written by dump_interval/on_growth */
	uint64_t dumps_deleted;   /* by dump_keep/dump_max_bytes */
};

/* A word the host added with jm4lw_add_word(). */
struct proto_hostword {
	char name[5];
	jm4lw_word_fn fn;
	void *arg;
	int flags;
};

#define PROTO_HOST_MAX 64

struct proto {
	const struct proto_ops *ops;
	const struct jm4lw_config *cfg; /* owned by the server */
	const char *mode;               /* srvr's Mode: line */
	struct proto_stats st;
	struct timespec started; /* CLOCK_MONOTONIC */
	unsigned long dump_seq;
	struct timespec last_dump_at; /* CLOCK_MONOTONIC of the last prof.dump */
	int dumped;                   /* last_dump_at is set */
	time_t last_dump_time;        /* wall clock, for mntr */
	size_t alloc_at_dump;         /* stats.allocated then (growth) */
	int alloc_known;              /* growth has a baseline */
	char stage[4096 + 128];       /* private dir jemalloc writes in, or "" */
	long stage_pid;               /* the process that made it */
	struct timespec stats_at;     /* CLOCK_MONOTONIC of mntr's last epoch */
	int stats_fresh;              /* stats_at is set */
	/* Where proto logs what no reply carries (retention, schedules). */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
	char last_dump[4096 + 128];
	struct proto_hostword host[PROTO_HOST_MAX];
	int nhost;
};

/* What a host word's handler writes to (opaque in jm4lw.h). */
struct jm4lw_reply {
	struct proto *p;
	struct proto_out *out;
};

/* Word flags in the command table (the same bit as JM4LW_WORD_MUTATES). */
#define PROTO_F_MUTATES JM4LW_WORD_MUTATES /* changes allocator/disk state */

struct proto_word {
	const char *name; /* exactly 4 bytes + NUL */
	int (*fn)(struct proto *, struct proto_out *);
	int flags;
	const char *help;
};

/* proto_dispatch() results. */
#define PROTO_OK 0
#define PROTO_ERROR 1 /* an error line was written */

/* Initialise @p p with the allocator ops and configuration. */
void proto_init(struct proto *p, const struct proto_ops *ops,
    const struct jm4lw_config *cfg);

/* Release what proto_init and the dumps made (the staging directory). */
void proto_fini(struct proto *p);

/*
 * Look at the first bytes of a request. Returns 4 and copies the word
 * when at least 4 bytes are there, 0 when more are needed. Bytes after
 * the word are never looked at.
 */
size_t proto_frame(const void *buf, size_t len, char word[4]);

/* Run @p word and write its reply to @p out. */
int proto_dispatch(struct proto *p, const char word[4], struct proto_out *out);

/* The built-in word table entry for @p word (exact match), or NULL. */
const struct proto_word *proto_lookup(const char word[4]);

/* The built-in words, NULL-name terminated. */
extern const struct proto_word proto_words[];

/*
 * Is @p word, with table flags @p flags, allowed by the allow list
 * @p allow? Items: "*" (everything), "readonly" (words without
 * PROTO_F_MUTATES) or a word.
 */
int proto_allowed(const char *allow, const char word[4], int flags);

/* Is @p word 4 printable ASCII bytes without spaces or commas? */
int proto_word_valid(const char *word);

/* Has the host added @p word? */
int proto_host_known(struct proto *p, const char word[4]);

/* Add or replace a host word; -1 if the table is full or @p word bad. */
int proto_add_word(struct proto *p, const char *word, jm4lw_word_fn fn,
    void *arg, int flags);

/* The completeness check reads a profile backwards in windows this big
 * (the maps section it looks for is a few KiB: one read, usually). */
#define PROTO_DUMP_TAIL_CHUNK 16384

/* Write a heap profile now (jmfp, or a schedule when @p scheduled);
 * the reply is its path. */
int proto_dump(struct proto *p, struct proto_out *out, int scheduled);

/* Is a dump_on_growth dump due? 1 yes, 0 no (or growth is off). */
int proto_growth_due(struct proto *p);

/* Apply dump_keep/dump_max_bytes to dump_dir @p dir; @p newest stays. */
void dumps_retain(struct proto *p, const char *dir, const char *newest);

/* jmls: our dumps in dump_dir, newest first. */
int dumps_list(struct proto *p, struct proto_out *out);

/* Is @p name one of ours: "<prefix>.<pid>.<seq>.heap"? */
int dumps_match(const char *prefix, const char *name);

/* Is @p name a staging directory's: ".<prefix>.<pid>.XXXXXX"? Its pid
 * goes to @p pid. */
int dumps_stage_match(const char *prefix, const char *name, long *pid);

/* Remove the staging directories in @p dir of processes that are gone. */
void dumps_sweep_stages(struct proto *p, const char *dir);

/* Shared by words.c and dumps.c. */
int ctl_size(struct proto *p, const char *name, size_t *v);
void ctl_epoch(struct proto *p);
void ctl_epoch_coalesced(struct proto *p);
const char *fmt_bytes(char *buf, size_t len, size_t n);
void proto_log(struct proto *p, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Output helpers. */
void out_write(struct proto_out *out, const void *buf, size_t len);
void out_printf(struct proto_out *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* JM4LW_PROTO_H */

/*
 * proto — the four-letter-word face: framing, the const word table and the
 * rendering of core's results as text. No I/O, no mallctl: it asks core
 * and writes what core answered through struct out (lib/out.h).
 */
#ifndef JM4LW_PROTO_H
#define JM4LW_PROTO_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "dumper.h"
#include "jm4lw.h"
#include "job.h"
#include "out.h"
#include "reason.h"
#include "result.h"
#include "view.h"

/* A word the host added with jm4lw_add_word(). */
struct proto_hostword {
	char name[5];
	jm4lw_word_fn fn;
	void *arg;
	int flags;
};

#define PROTO_HOST_MAX 64

/* How `conf` shows a field of the configuration. */
enum proto_conf_type {
	PROTO_CONF_TEXT,   /* a string field, as it is */
	PROTO_CONF_NUMBER, /* an unsigned */
	PROTO_CONF_BYTES,  /* an unsigned long long, in plain digits */
	PROTO_CONF_FORMAT, /* a typed field, as its format prints it */
};

/* The longest value PROTO_CONF_FORMAT prints, and its NUL. */
#define PROTO_CONF_FORMAT_MAX 4096

/* One line of `conf`: the key and where its value lies in core->cfg. The
 * module hands these over (config_conf_keys()): the face renders conf
 * from them, live, and knows nothing of the config's table or rules. */
struct proto_conf_key {
	const char *name;
	size_t off;  /* of the field in struct jm4lw_config */
	size_t size; /* of a text field */
	enum proto_conf_type type;
	/* A typed field's value as text (PROTO_CONF_FORMAT). */
	void (*format)(const void *field, char *buf, size_t len);
};

#define PROTO_CONF_MAX 64

/* The face's state: the engine it renders, the configuration's keys for
 * conf, and the host's words. */
struct proto {
	struct core *core;
	struct dumper *dumper; /* for a dump run in place (reply_builtin) */
	struct proto_conf_key conf[PROTO_CONF_MAX];
	size_t nconf;
	struct proto_hostword host[PROTO_HOST_MAX];
	int nhost;
	enum core_reason why; /* a handler's failure, for proto_dispatch */
};

/* What a host word's handler writes to (opaque in jm4lw.h). */
struct jm4lw_reply {
	struct proto *p;
	struct out *out;
};

/* Word flags in the command table (the same bit as JM4LW_WORD_MUTATES). */
#define PROTO_F_MUTATES JM4LW_WORD_MUTATES /* changes allocator/disk state */

struct proto_word {
	const char *name; /* exactly 4 bytes + NUL */
	int (*fn)(struct proto *, struct out *);
	const struct job_kind *job; /* instead of fn: core's kind (&job_dump) */
	enum dump_answer answer;    /* what the job answers with: */
	enum dump_view view;        /* with DUMP_ANSWER_VIEW, this view */
	int flags;
	const char *help;
};

/* proto_dispatch() results. */
#define PROTO_OK 0
#define PROTO_ERROR 1 /* an error line was written */
#define PROTO_JOB 2   /* nothing written: run the job, then render it */

/* What proto_dispatch() says besides the reply it wrote. */
struct proto_result {
	enum core_reason why; /* PROTO_ERROR: why it was refused or
	                         failed (HTTP's status) */
	struct job_req req;   /* PROTO_JOB: the work to hand over, as asked */
};

/* What core's lines say a person can do next, in our words. */
extern const struct core_hints proto_hints;

/* Set up @p p over @p core. */
void proto_init(struct proto *p, struct core *core, struct dumper *dumper);

/*
 * Look at the first bytes of a request. Returns 4 and copies the word
 * when at least 4 bytes are there, 0 when more are needed. Bytes after
 * the word are never looked at.
 */
size_t proto_frame(const void *buf, size_t len, char word[4]);

/* Run @p word and write its reply to @p out (PROTO_OK, or PROTO_ERROR
 * with @p res->why), or return PROTO_JOB with the work in @p res->req,
 * for any face to hand to the worker as it is. */
int proto_dispatch(struct proto *p, const char word[4], struct out *out,
    struct proto_result *res);

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

/* @p word's flags as dispatch finds it (a host word first), or -1 when
 * nobody serves it; *@p builtin is its table entry when it is ours. */
int proto_word_flags(struct proto *p, const char word[4],
    const struct proto_word **builtin);

/* Add or replace a host word; -1 if the table is full or @p word bad. */
int proto_add_word(struct proto *p, const char *word, jm4lw_word_fn fn,
    void *arg, int flags);

#endif /* JM4LW_PROTO_H */

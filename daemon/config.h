/* Internals of the configuration (config.c) that the server, the tests and
 * other parsers share. */
#ifndef JM4LW_CONFIG_H
#define JM4LW_CONFIG_H

#include <stddef.h>

#include "config_struct.h"
#include "core.h"
#include "jm4lw.h"
#include "proto.h"

/* The largest configuration file jm4lw_config_load() reads (1 MiB; the
 * sample with every key is 6 KiB): a bigger one is refused, not read. */
#define JM4LW_CONFIG_MAX (1 << 20)

/* Checker flag: allow may name words the host adds later. */
#define CONFIG_HOST_WORDS 0x1

/* Checks a string value; writes its normal form (never longer) to norm. */
typedef int (*config_check_fn)(const char *v, int flags, char *norm,
    size_t normlen, char *err, size_t errlen);

/* Parses a typed key's text, once, when it is set: its value into
 * @p field (of the key's type), its normal form (never longer) to norm. */
typedef int (*config_parse_fn)(const char *v, void *field, char *norm,
    size_t normlen, char *err, size_t errlen);

/* A typed key's value back to its normal form, for a key whose text is
 * not kept: the same bytes its parser wrote to norm. */
typedef void (*config_format_fn)(const void *field, char *buf, size_t len);

/* One key: a string field with a checker, a typed field with a parser,
 * or a number with a range. */
struct config_key {
	const char *name;
	size_t off;  /* of the field in struct jm4lw_config */
	size_t size; /* of a string field, or the longest text (and its NUL)
	              * a typed one takes; 0 for a number */
	config_check_fn check;   /* a string field's */
	config_parse_fn parse;   /* a typed field's */
	size_t tsize;            /* of the typed field */
	size_t text;             /* where its text is kept, when it is */
	config_format_fn format; /* else how it prints */
	unsigned min, max;
	const char *unit;
	int bytes;        /* an unsigned long long with a K/M/G suffix */
	const char *def;  /* default, as it is written in a file */
	const char *help; /* one line, as in docs/CONFIG.md's key table */
};

/* Fill @p cfg with every key's default (jm4lw_config_new() for hosts). */
void config_defaults(struct jm4lw_config *cfg);

/* The @p i-th key of the table, NULL past the last. */
const struct config_key *config_key_at(size_t i);

/* The keys for `conf` (how the word face shows each), in the table's
 * order, at most @p max; returns how many. */
size_t config_conf_keys(struct proto_conf_key *keys, size_t max);

/* The policy core serves by (struct core_policy), copied from @p cfg's
 * typed fields when a configuration is taken: 0, or -1 with a reason. */
int config_policy(const struct jm4lw_config *cfg, struct core_policy *pol,
    char *err, size_t errlen);

/* jm4lw_config_check() that accepts any well-formed word in allow, since
 * the host may add words later. */
int config_check_module(const struct jm4lw_config *cfg, char *err,
    size_t errlen);

#endif

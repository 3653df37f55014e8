/*
 * The configuration: defaults, one key at a time from its text form, an INI
 * file, and a check of a whole struct. All four share one set of rules, so
 * a host that fills the struct by hand gets the same errors as a file does.
 * Every error is one line saying what is wrong and what is accepted.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ini.h>

#include "addr.h"
#include "config.h"
#include "config_struct.h"
#include "core.h"
#include "fold.h"
#include "hostport.h"
#include "jm4lw.h"
#include "proto.h"
#include "util.h"

#define FIELD_SIZE(f) sizeof(((struct jm4lw_config *)0)->f)

/* The biggest string field: every value fits here or is too long. */
#define VALUE_MAX FIELD_SIZE(dump_dir)

#define ADDR_HINT                                                              \
	"want ADDR:PORT or [ADDR6]:PORT, e.g. 127.0.0.1:9181 or [::1]:9181; "  \
	"port 0 picks a free one"
#define PREFIX_HINT "want 1-63 of A-Z a-z 0-9 . _ -, not starting with ."

static int check_listen(const char *, int, char *, size_t, char *, size_t);
static int check_allow(const char *, int, char *, size_t, char *, size_t);
static int check_http_listen(const char *, int, char *, size_t, char *, size_t);
static int check_hosts(const char *, int, char *, size_t, char *, size_t);
static int check_dump_dir(const char *, int, char *, size_t, char *, size_t);
static int check_dump_prefix(const char *, int, char *, size_t, char *, size_t);
static int check_allow_from(const char *, int, char *, size_t, char *, size_t);
static int check_debug_dirs(const char *, int, char *, size_t, char *, size_t);
static int check_cgroup_root(const char *, int, char *, size_t, char *, size_t);
static int parse_growth_key(const char *, void *, char *, size_t, char *,
    size_t);
static int parse_lg_key(const char *, void *, char *, size_t, char *, size_t);
static int parse_symbolized(const char *, void *, char *, size_t, char *,
    size_t);
static int parse_jemalloc_dumps(const char *, void *, char *, size_t, char *,
    size_t);
static int parse_debuginfod(const char *, void *, char *, size_t, char *,
    size_t);
static int parse_fold(const char *, void *, char *, size_t, char *, size_t);
static int parse_memory_key(const char *, void *, char *, size_t, char *,
    size_t);
static int parse_psi_key(const char *, void *, char *, size_t, char *, size_t);
static void format_switch(const void *, char *, size_t);
static void format_jemalloc_dumps(const void *, char *, size_t);
static void format_fold(const void *, char *, size_t);

#define STRING_KEY(f, fn)                                                      \
	.name = #f, .off = offsetof(struct jm4lw_config, f),                   \
	.size = FIELD_SIZE(f), .check = fn
#define NUMBER_KEY(f, lo, hi, u)                                               \
	.name = #f, .off = offsetof(struct jm4lw_config, f), .min = lo,        \
	.max = hi, .unit = u
#define BYTES_KEY(f)                                                           \
	.name = #f, .off = offsetof(struct jm4lw_config, f), .bytes = 1
/* A typed key whose text is kept in cfg->text for printing back. */
#define PARSED_KEY(f, fn)                                                      \
	.name = #f, .off = offsetof(struct jm4lw_config, f),                   \
	.size = FIELD_SIZE(text.f), .parse = fn, .tsize = FIELD_SIZE(f),       \
	.text = offsetof(struct jm4lw_config, text.f)
/* A typed key printed back from its value by @p fmt; its text is at most
 * @p len - 1 bytes. */
#define TYPED_KEY(f, fn, fmt, len)                                             \
	.name = #f, .off = offsetof(struct jm4lw_config, f), .size = len,      \
	.parse = fn, .tsize = FIELD_SIZE(f), .format = fmt

/*
 * Every key once, as tmux keeps its options: the field, the rules, the
 * default and the help line. Defaults are text, read as a file's values
 * are, so config_defaults(), conf/jm4lwd.conf and docs/CONFIG.md's table
 * can all be held to this table (test_config does).
 */
static const struct config_key config_keys[] = {
    {STRING_KEY(listen, check_listen), .def = JM4LW_DEFAULT_LISTEN,
        .help = "comma list of `ADDR:PORT` / `[ADDR6]:PORT`; port 0 picks "
                "a free one"},
    {STRING_KEY(allow, check_allow), .def = "*",
        .help = "words served; others get the whitelist line. `readonly` "
                "= words that change nothing"},
    {STRING_KEY(dump_dir, check_dump_dir), .def = "/tmp/jm4lw-%u",
        .help = "where `jmfp` writes; `%u` is the effective uid, and a "
                "`dump_dir` naming it is made (mode 0700) when missing"},
    {STRING_KEY(dump_prefix, check_dump_prefix), .def = "jm4lw",
        .help = "file name prefix, `[A-Za-z0-9._-]`"},
    {NUMBER_KEY(max_connections, 1, 100000, ""), .def = "64",
        .help = "connections beyond this get one error line and are "
                "closed"},
    {NUMBER_KEY(max_connections_per_peer, 1, 100000, ""), .def = "48",
        .help = "connections one peer address may hold at once; a new one "
                "beyond it replaces that peer's oldest connection still "
                "waiting for its word, or is refused"},
    {NUMBER_KEY(read_timeout, 1, 3600, " seconds"), .def = "5",
        .help = "seconds a peer has to send its word"},
    {NUMBER_KEY(write_timeout, 1, 3600, " seconds"), .def = "30",
        .help = "seconds a reply may make no progress before the peer is "
                "dropped"},
    {STRING_KEY(allow_from, check_allow_from), .def = JM4LW_DEFAULT_ALLOW_FROM,
        .help = "peers that may connect: `*` or IPv4/IPv6 addresses and "
                "networks"},
    {NUMBER_KEY(dump_min_interval, 0, 86400, " seconds"), .def = "1",
        .help = "seconds between dumps; a `jmfp` sooner is refused with "
                "the time to retry"},
    {BYTES_KEY(dump_min_free), .def = "64M",
        .help = "refuse a dump when `dump_dir`'s filesystem has less free "
                "(K/M/G/T suffixes)"},
    {NUMBER_KEY(dump_interval, 0, 604800, " seconds"), .def = "0",
        .help = "seconds between scheduled dumps; 0 is off"},
    {PARSED_KEY(dump_on_growth, parse_growth_key), .def = "0",
        .help = "dump when `stats.allocated` has grown this much since the "
                "last dump: bytes (K/M/G/T) or a percentage (`50%`); 0 is "
                "off"},
    {NUMBER_KEY(growth_check_interval, 1, 3600, " seconds"), .def = "10",
        .help = "seconds between two looks at `stats.allocated` for "
                "`dump_on_growth`"},
    {NUMBER_KEY(dump_keep, 0, 1000000, ""), .def = "0",
        .help = "keep at most this many of our dumps in `dump_dir`, "
                "deleting the oldest; 0 keeps all"},
    {BYTES_KEY(dump_max_bytes), .def = "0",
        .help = "keep our dumps under this many bytes in total (K/M/G/T), "
                "deleting the oldest but never the newest; 0 is no limit"},
    {PARSED_KEY(prof_reset_lg_sample, parse_lg_key), .def = "keep",
        .help = "sample rate `jmrs` sets: `keep` (the current one) or "
                "0-62 (every 2^N bytes)"},
    {TYPED_KEY(dump_symbolized, parse_symbolized, format_switch, 8),
        .def = "off",
        .help = "`on`: each kept dump also gets `<dump>.symbolized`, which "
                "jeprof and `jm4lw-prof` read without the program"},
    {TYPED_KEY(jemalloc_dumps, parse_jemalloc_dumps, format_jemalloc_dumps, 8),
        .def = "adopt",
        .help = "`adopt`: jemalloc's own dumps (`lg_prof_interval`, "
                "`prof_gdump`, `prof_final`) go into `dump_dir` and are "
                "kept like ours, unless the host set its own `prof_prefix`; "
                "`leave`: where jemalloc puts them"},
    {STRING_KEY(http_listen, check_http_listen),
        .def = JM4LW_DEFAULT_HTTP_LISTEN,
        .help = "the HTTP face's addresses, like `listen`; empty turns HTTP "
                "off"},
    {STRING_KEY(http_allowed_hosts, check_hosts), .def = "",
        .help = "host names an HTTP request's `Host` may name besides IP "
                "literals and `localhost` (DNS rebinding guard)"},
    {NUMBER_KEY(http_max_header_bytes, 1024, 1048576, " bytes"), .def = "8192",
        .help = "largest HTTP request header block; bigger gets 431"},
    {BYTES_KEY(http_max_body_bytes), .def = "4M",
        .help = "largest HTTP request body (a `/pprof/symbol` lookup); "
                "bigger gets 413"},
    {NUMBER_KEY(http_keepalive_requests, 1, 100000, ""), .def = "100",
        .help = "requests one HTTP connection may make before it is "
                "closed"},
    {NUMBER_KEY(scrape_waiters_max, 1, 4096, ""), .def = "64",
        .help = "scrapes (`/debug/pprof/heap`, `/allocs`) that may wait "
                "at once for a shared dump; one more gets 503"},
    /* Where in-process symbolization finds debug info. */
    {STRING_KEY(debug_dirs, check_debug_dirs), .def = "",
        .help = "debug file directories besides `/usr/lib/debug`, `:` or "
                "`,` between them: build-ID trees and `.gnu_debuglink` dirs"},
    {TYPED_KEY(symbolize_debuginfod, parse_debuginfod, format_switch, 8),
        .def = "off",
        .help = "`on`: symbolizing in the process may fetch debug files "
                "from `DEBUGINFOD_URLS`' servers, on the worker"},
    {NUMBER_KEY(symbolize_timeout, 1, 3600, " seconds"), .def = "10",
        .help = "seconds debuginfod may take in all per symbolization; "
                "then frames keep `object+0x...` names"},
    {TYPED_KEY(fold_wrappers, parse_fold, format_fold, 1024), .def = "",
        .help = "allocation wrappers to fold into their callers in `jmtp`, "
                "`jmlk`, `jmth` and the page besides those found: names, "
                "`,` or space between; `!NAME` never folds NAME (a "
                "constructor the rule takes for a wrapper); `off` folds none"},
    /* The figures' history ring. */
    {NUMBER_KEY(history_interval, 1, 86400, " seconds"), .def = "10",
        .help = "seconds between two rows of the figures' history "
                "(`/jemalloc/history`, `jmhi`)"},
    {NUMBER_KEY(history_points, 0, 100000, ""), .def = "8640",
        .help = "rows of history kept (8640: a day at 10 s; 104 bytes "
                "each, mapped once); 0 is off"},
    /* Rolling profile snapshots in memory, for growth after the fact. */
    {NUMBER_KEY(snapshot_interval, 1, 86400, " seconds"), .def = "60",
        .help = "seconds between two in-memory profile snapshots, taken "
                "while `prof.active` is true (`jmgr`, `jmpk`, "
                "`/jemalloc/profile?since=`)"},
    {NUMBER_KEY(snapshot_count, 0, 10000, ""), .def = "30",
        .help = "profile snapshots kept in memory, the oldest dropped "
                "first; 0 is off"},
    {BYTES_KEY(snapshot_max_bytes), .def = "4M",
        .help = "memory the snapshots may take in all (K/M/G/T), the "
                "oldest dropped first"},
    /* Recent sampled allocations (jemalloc 5.3's prof_recent). */
    {NUMBER_KEY(recent_max, 0, 100000, ""), .def = "64",
        .help = "recent sampled allocations jemalloc keeps with both stacks "
                "(`jmrc`, `/jemalloc/recent`); 0 is off"},
    /* dump_on_memory: a dump before the OOM killer comes. */
    {PARSED_KEY(dump_on_memory, parse_memory_key), .def = "0",
        .help = "dump when memory use reaches this much of the process's "
                "limit (cgroup v2, v1, RLIMIT_AS, else the machine): a "
                "percentage (`90%`) or bytes (K/M/G/T); 0 is off"},
    {PARSED_KEY(dump_on_memory_psi, parse_psi_key), .def = "off",
        .help = "dump when memory pressure's avg10 reaches this: "
                "`some 10%` or `full 5%` (PSI); off is off"},
    {NUMBER_KEY(memory_check_interval, 1, 3600, " seconds"), .def = "1",
        .help = "seconds between two looks at the memory limit, usage and "
                "pressure, off the loop"},
    {STRING_KEY(memory_cgroup_root, check_cgroup_root), .def = "/sys/fs/cgroup",
        .help = "where the cgroup file systems are mounted, for containers "
                "with unusual mounts and tests"},
};
#define NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))

/* The table for those outside this file that check it or list it. */
const struct config_key *config_key_at(size_t i)
{
	return i < NKEYS ? &config_keys[i] : NULL;
}

/* The key table is the one list of keys, so conf cannot leave one out. */
_Static_assert(NKEYS <= PROTO_CONF_MAX, "conf cannot show every key");

/*
 * The keys as `conf` shows them, in the table's order, for the word face:
 * where each value lies and how to print it. Returns how many.
 */
size_t config_conf_keys(struct proto_conf_key *keys, size_t max)
{
	const struct config_key *k;
	size_t i;

	for (i = 0; i < NKEYS && i < max; i++) {
		k = &config_keys[i];
		keys[i] = (struct proto_conf_key){
		    .name = k->name,
		    .off = k->parse != NULL && k->format == NULL ? k->text
		                                                 : k->off,
		    .size = k->size,
		    .type = k->bytes        ? PROTO_CONF_BYTES
		        : k->format != NULL ? PROTO_CONF_FORMAT
		        : k->size == 0      ? PROTO_CONF_NUMBER
		                            : PROTO_CONF_TEXT,
		    .format = k->format,
		};
	}
	return i;
}

/* Write a one-line reason to err (if the caller gave room) and return -1. */
static int config_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int config_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Append item to a normalised list being built in norm. */
static int list_append(char *norm, size_t normlen, size_t *used,
    const char *item, size_t n)
{
	size_t need = n + (*used > 0 ? 1 : 0);

	if (*used + need >= normlen)
		return -1;
	if (*used > 0)
		norm[(*used)++] = ',';
	memcpy(norm + *used, item, n);
	*used += n;
	norm[*used] = '\0';
	return 0;
}

/* One listen address: explicit numeric address and port, as addr_parse. */
static int check_addr(const char *a, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct hostport hp;
	unsigned long port;
	socklen_t sslen;
	char q[96];

	quote(q, sizeof(q), a, strlen(a));
	switch (hostport_split(a, strlen(a), &hp)) {
	case HOSTPORT_NO_CLOSE:
		return config_err(err, errlen,
		    "listen: %s has no closing ] (" ADDR_HINT ")", q);
	case HOSTPORT_JUNK:
		return config_err(err, errlen,
		    "listen: %s has junk after ] (" ADDR_HINT ")", q);
	case HOSTPORT_COLONS:
		/* "::1" would parse as [::]:1 and listen everywhere. */
		return config_err(err, errlen,
		    "listen: %s: an IPv6 address goes in brackets, "
		    "e.g. [::1]:9181",
		    q);
	default:
		break;
	}
	if (hp.port == NULL || hp.plen == 0)
		return config_err(err, errlen,
		    "listen: %s has no port (" ADDR_HINT ")", q);
	if (strspn(hp.port, "0123456789") != hp.plen)
		return config_err(err, errlen,
		    "listen: %s: the port is not a number (want 0-65535)", q);
	if (!hostport_digits(hp.port, hp.plen, &port) || port > 65535)
		return config_err(err, errlen,
		    "listen: %s: port out of range (want 0-65535)", q);
	/* The server binds with addr_parse: accept exactly what it takes. */
	if (addr_parse(a, &ss, &sslen) == -1)
		return config_err(err, errlen,
		    "listen: %s is not a numeric IPv4 or IPv6 address (host "
		    "names are not resolved; " ADDR_HINT ")",
		    q);
	return 0;
}

/* listen: 1 to 16 comma-separated addresses. */
static int check_listen(const char *v, int flags, char *norm, size_t normlen,
    char *err, size_t errlen)
{
	char a[FIELD_SIZE(listen)];
	const char *s = v, *item;
	size_t n, used = 0;
	int count = 0;

	(void)flags;
	norm[0] = '\0';
	while (s != NULL) {
		item = list_next(&s, &n);
		if (n == 0)
			return config_err(err, errlen,
			    "listen: %s (want "
			    "ADDR:PORT or [ADDR6]:PORT, several separated by "
			    "commas)",
			    count == 0 && s == NULL
			        ? "no address"
			        : "empty entry in the list");
		if (++count > JM4LW_LISTENERS_MAX)
			return config_err(err, errlen,
			    "listen: more than %d addresses",
			    JM4LW_LISTENERS_MAX);
		if (n >= sizeof(a))
			return config_err(err, errlen,
			    "listen: value too long");
		memcpy(a, item, n);
		a[n] = '\0';
		if (check_addr(a, err, errlen) == -1)
			return -1;
		if (list_append(norm, normlen, &used, item, n) == -1)
			return config_err(err, errlen,
			    "listen: value too long");
	}
	return 0;
}

/* http_listen: listen's rules, or empty for no HTTP. */
static int check_http_listen(const char *v, int flags, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	size_t n = strlen(v);

	if (trim(v, &n) != NULL && n == 0) {
		norm[0] = '\0';
		return 0;
	}
	if (check_listen(v, flags, norm, normlen, err, errlen) == -1) {
		/* Its errors name listen: say which key. */
		char why[256];
		snprintf(why, sizeof(why), "%s", err);
		return config_err(err, errlen, "http_%s", why);
	}
	return 0;
}

/* http_allowed_hosts: host names, letters, digits, '.', '-'. */
static int check_hosts(const char *v, int flags, char *norm, size_t normlen,
    char *err, size_t errlen)
{
	const char *s = v, *item;
	size_t n, i, used = 0;
	char q[80];

	(void)flags;
	norm[0] = '\0';
	while (s != NULL) {
		item = list_next(&s, &n);
		if (n == 0 && s == NULL && used == 0)
			break; /* empty: none */
		for (i = 0; i < n; i++)
			if (!isalnum((unsigned char)item[i]) &&
			    item[i] != '.' && item[i] != '-')
				break;
		if (n == 0 || i < n || n > 253)
			return config_err(err, errlen,
			    "http_allowed_hosts: %s is not a host name (want "
			    "letters, digits, '.' and '-', several separated "
			    "by commas)",
			    quote(q, sizeof(q), item, n));
		if (list_append(norm, normlen, &used, item, n) == -1)
			return config_err(err, errlen,
			    "http_allowed_hosts: value too long");
	}
	return 0;
}

/* A 4-byte list item that could name a host word. */
static int item_word_valid(const char *item)
{
	char w[5];

	memcpy(w, item, 4);
	w[4] = '\0';
	return proto_word_valid(w);
}

/* The built-in words, space-separated, for error messages. */
static const char *known_words(char *buf, size_t len)
{
	const struct proto_word *w;
	size_t o = 0;

	buf[0] = '\0';
	for (w = proto_words; w->name != NULL && o + 6 < len; w++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? " " : "",
		    w->name);
	return buf;
}

/*
 * allow: "*", or a list of built-in words and "readonly". readonly is kept
 * as it is rather than expanded: proto_allowed() understands it, and then
 * it also covers host words added without JM4LW_WORD_MUTATES. With
 * CONFIG_HOST_WORDS (a module checking its own configuration) any
 * well-formed word is accepted: the host may add words after jm4lw_new(),
 * and the module warns about ones that match nothing once it listens.
 */
static int check_allow(const char *v, int flags, char *norm, size_t normlen,
    char *err, size_t errlen)
{
	const char *s = v, *item;
	char q[96], words[128];
	size_t n, used = 0;
	int count = 0, star = 0;

	norm[0] = '\0';
	while (s != NULL) {
		item = list_next(&s, &n);
		if (n == 0 && count == 0 && s == NULL)
			return config_err(err, errlen,
			    "allow: empty; use * to allow every word, readonly "
			    "for the words that change nothing, or a "
			    "comma-separated list of words");
		if (n == 0)
			return config_err(err, errlen,
			    "allow: empty entry in the list (want words "
			    "separated by single commas)");
		count++;
		if (n == 1 && item[0] == '*')
			star = 1;
		else if (!(n == 8 && memcmp(item, "readonly", 8) == 0) &&
		    !(n == 4 && proto_lookup(item) != NULL) &&
		    !(n == 4 && (flags & CONFIG_HOST_WORDS) &&
		        item_word_valid(item)))
			return config_err(err, errlen,
			    "allow: unknown word %s (want *, readonly, or "
			    "comma-separated words from: %s)",
			    quote(q, sizeof(q), item, n),
			    known_words(words, sizeof(words)));
		if (list_append(norm, normlen, &used, item, n) == -1)
			return config_err(err, errlen, "allow: value too long");
	}
	if (star && count > 1)
		return config_err(err, errlen,
		    "allow: * already allows every word; use it alone");
	return 0;
}

/* allow_from: "*" alone, or addresses and networks, IPv4 and IPv6. */
static int check_allow_from(const char *v, int flags, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	const char *s = v, *item;
	struct cidr c;
	char q[96];
	size_t n, used = 0;
	int count = 0, star = 0;

	(void)flags;
	norm[0] = '\0';
	while (s != NULL) {
		item = list_next(&s, &n);
		if (n == 0)
			return config_err(err, errlen,
			    "allow_from: empty %s (want *, or addresses and "
			    "networks such as 127.0.0.0/8, ::1, fd00::/8)",
			    count == 0 && s == NULL ? "value" : "list entry");
		count++;
		if (cidr_parse(item, n, &c) == -1)
			return config_err(err, errlen,
			    "allow_from: %s is not an address or network "
			    "(want e.g. 10.0.0.0/8, 192.0.2.7, fd00::/8, ::1; "
			    "no host bits after the /)",
			    quote(q, sizeof(q), item, n));
		if (c.family == 0)
			star = 1;
		if (list_append(norm, normlen, &used, item, n) == -1)
			return config_err(err, errlen,
			    "allow_from: value too long");
	}
	if (star && count > 1)
		return config_err(err, errlen,
		    "allow_from: * already allows everyone; use it alone");
	return 0;
}

/*
 * A byte count: digits with an optional K, M, G or T (powers of 1024),
 * e.g. 64M. Nothing else, so "64MB" or "1.5G" are errors, not guesses.
 */
static int parse_bytes(const char *name, const char *v, unsigned long long *out,
    char *err, size_t errlen)
{
	unsigned long long n = 0, mul = 1;
	const char *p = v;
	char q[96];

	quote(q, sizeof(q), v, strlen(v));
	if (*p < '0' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (~0ULL - 9) / 10)
			goto range;
		n = n * 10 + (unsigned long long)(*p - '0');
	}
	switch (*p) {
	case '\0':
		break;
	case 'K':
	case 'k':
		mul = 1ULL << 10;
		break;
	case 'M':
	case 'm':
		mul = 1ULL << 20;
		break;
	case 'G':
	case 'g':
		mul = 1ULL << 30;
		break;
	case 'T':
	case 't':
		mul = 1ULL << 40;
		break;
	default:
		goto bad;
	}
	if (*p != '\0' && p[1] != '\0')
		goto bad;
	if (n > ~0ULL / mul)
		goto range;
	*out = n * mul;
	return 0;
bad:
	return config_err(err, errlen,
	    "%s: %s is not a size (want bytes, or a number with K, M, G or T, "
	    "e.g. 64M; 0 turns the check off)",
	    name, q);
range:
	return config_err(err, errlen, "%s: %s is out of range", name, q);
}

/* How a size-or-percentage key takes a percentage: the key, the top of
 * its range, and what its error says after "is not a percentage". */
struct amount_rule {
	const char *name;
	unsigned long pct_max;
	const char *pct_hint;
};

static const struct amount_rule growth_rule = {"dump_on_growth", 10000,
    " (want 1%-10000%)"};
static const struct amount_rule memory_rule = {"dump_on_memory", 100,
    " of the limit (want 1%-100%, e.g. 90%, or bytes such as 3G; 0 is "
    "off)"};

/*
 * The one size-or-percentage parser: 0, a size (512M, parse_bytes) or a
 * percentage (1% up to @p r's top). One of a->bytes and a->pct gets the
 * value, the other 0; both 0 is off.
 */
static int parse_amount(const struct amount_rule *r, const char *v,
    struct config_amount *a, char *err, size_t errlen)
{
	unsigned long p = 0;
	size_t i, n = strlen(v);
	char q[96];

	a->bytes = 0;
	a->pct = 0;
	if (n == 0 || v[n - 1] != '%')
		return parse_bytes(r->name, v, &a->bytes, err, errlen);
	for (i = 0; i + 1 < n; i++) {
		if (v[i] < '0' || v[i] > '9' || p > r->pct_max)
			break;
		p = p * 10 + (unsigned long)(v[i] - '0');
	}
	if (n == 1 || i + 1 < n || p < 1 || p > r->pct_max)
		return config_err(err, errlen, "%s: %s is not a percentage%s",
		    r->name, quote(q, sizeof(q), v, n), r->pct_hint);
	a->pct = (unsigned)p;
	return 0;
}

/*
 * dump_on_memory_psi: off (or 0), or "some N%" / "full N%", N 1-100:
 * memory pressure's avg10 at or above N. t->avg10 is N x100 (avg10's
 * hundredths), 0 when off.
 */
static int parse_memory_psi(const char *v, struct config_psi *t, char *err,
    size_t errlen)
{
	unsigned long p = 0;
	const char *s;
	size_t i, n;
	char q[96];

	t->avg10 = 0;
	t->full = 0;
	if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0)
		return 0;
	if (strncmp(v, "some ", 5) == 0)
		s = v + 5;
	else if (strncmp(v, "full ", 5) == 0) {
		s = v + 5;
		t->full = 1;
	} else
		goto bad;
	while (*s == ' ')
		s++;
	n = strlen(s);
	for (i = 0; i < n && s[i] >= '0' && s[i] <= '9' && p <= 100; i++)
		p = p * 10 + (unsigned long)(s[i] - '0');
	if (i == 0 || p < 1 || p > 100 ||
	    !(i == n || (i + 1 == n && s[i] == '%')))
		goto bad;
	t->avg10 = (unsigned)p * 100;
	return 0;
bad:
	return config_err(err, errlen,
	    "dump_on_memory_psi: %s (want off, or some N%% or full N%% with N "
	    "1-100: memory pressure's avg10, e.g. some 10%%)",
	    quote(q, sizeof(q), v, strlen(v)));
}

/* prof_reset_lg_sample: "keep" (-1 in *lg) or 0-62 (jemalloc's range). */
static int parse_lg_sample(const char *v, int *lg, char *err, size_t errlen)
{
	size_t n = strlen(v);
	char q[96];

	if (strcmp(v, "keep") == 0) {
		*lg = -1;
		return 0;
	}
	if (!(n >= 1 && n <= 2 && v[0] >= '0' && v[0] <= '9' &&
	        (n == 1 || (v[1] >= '0' && v[1] <= '9')) && atoi(v) <= 62))
		return config_err(err, errlen,
		    "prof_reset_lg_sample: %s "
		    "(want keep, or 0-62: sample every 2^N bytes)",
		    quote(q, sizeof(q), v, n));
	*lg = atoi(v);
	return 0;
}

/* A value a checker accepts as it is: its own normal form. */
static int copy_norm(const char *name, const char *v, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	size_t n = strlen(v);

	if (n >= normlen)
		return config_err(err, errlen, "%s: value too long", name);
	memcpy(norm, v, n + 1);
	return 0;
}

/* on/off, and the spellings people use for them: 1 on, 0 off, -1 not
 * one of them. */
static int parse_onoff(const char *v)
{
	static const char *const on[] = {"on", "yes", "true", "1"};
	static const char *const off[] = {"off", "no", "false", "0"};
	size_t i;

	for (i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
		if (strcasecmp(v, on[i]) == 0)
			return 1;
		if (strcasecmp(v, off[i]) == 0)
			return 0;
	}
	return -1;
}

/* A switch's value as it prints: on or off ("" for neither, which its
 * parser refuses). */
static const char *switch_name(enum config_switch b)
{
	return b == CONFIG_ON ? "on" : b == CONFIG_OFF ? "off" : "";
}

/* Key @p key, a switch, into @p field (an enum config_switch); written
 * back as on or off. */
static int parse_switch(const char *key, const char *v, void *field, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	char q[64];
	int b = parse_onoff(v);

	if (b == -1)
		return config_err(err, errlen,
		    "%s: %s is not a switch (want on or off)", key,
		    quote(q, sizeof(q), v, strlen(v)));
	*(enum config_switch *)field = b ? CONFIG_ON : CONFIG_OFF;
	return copy_norm(key, b ? "on" : "off", norm, normlen, err, errlen);
}

/* A switch's field as text, for conf and jm4lw_config_get(). */
static void format_switch(const void *field, char *buf, size_t len)
{
	snprintf(buf, len, "%s",
	    switch_name(*(const enum config_switch *)field));
}

/* dump_symbolized: a switch. */
static int parse_symbolized(const char *v, void *field, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	return parse_switch("dump_symbolized", v, field, norm, normlen, err,
	    errlen);
}

/* jemalloc_dumps' value as it prints ("" for neither). */
static const char *jemalloc_dumps_name(enum config_jemalloc_dumps d)
{
	return d == CONFIG_JEDUMPS_ADOPT ? "adopt"
	    : d == CONFIG_JEDUMPS_LEAVE  ? "leave"
	                                 : "";
}

/* jemalloc_dumps: adopt or leave, any case. */
static int parse_jemalloc_dumps(const char *v, void *field, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	enum config_jemalloc_dumps *d = field;
	char q[64];

	if (strcasecmp(v, "adopt") == 0)
		*d = CONFIG_JEDUMPS_ADOPT;
	else if (strcasecmp(v, "leave") == 0)
		*d = CONFIG_JEDUMPS_LEAVE;
	else
		return config_err(err, errlen,
		    "jemalloc_dumps: %s is neither adopt nor leave",
		    quote(q, sizeof(q), v, strlen(v)));
	return copy_norm("jemalloc_dumps", jemalloc_dumps_name(*d), norm,
	    normlen, err, errlen);
}

/* jemalloc_dumps' field as text. */
static void format_jemalloc_dumps(const void *field, char *buf, size_t len)
{
	snprintf(buf, len, "%s",
	    jemalloc_dumps_name(*(const enum config_jemalloc_dumps *)field));
}

/* fold_wrappers: off, or names (fold_parse), written back in one form,
 * which must fit the key's @p normlen as the text it was set from did. */
static int parse_fold(const char *v, void *field, char *norm, size_t normlen,
    char *err, size_t errlen)
{
	char buf[VALUE_MAX];

	if (fold_parse(v, field, err, errlen) == -1)
		return -1;
	fold_format(field, buf, sizeof(buf));
	return copy_norm("fold_wrappers", buf, norm, normlen, err, errlen);
}

/* fold_wrappers' field as text: fold_format's one form. */
static void format_fold(const void *field, char *buf, size_t len)
{
	fold_format(field, buf, len);
}

/* symbolize_debuginfod: a switch. */
static int parse_debuginfod(const char *v, void *field, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	return parse_switch("symbolize_debuginfod", v, field, norm, normlen,
	    err, errlen);
}

/* debug_dirs: absolute directories, ':' or ',' between them (a relative
 * one would depend on the host's working directory). */
static int check_debug_dirs(const char *v, int flags, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	const char *p = v;
	char q[96];
	size_t n;

	(void)flags;
	for (; *p != '\0'; p += n + (p[n] != '\0')) {
		n = strcspn(p, ":,");
		if (n > 0 && p[0] != '/')
			return config_err(err, errlen,
			    "debug_dirs: %s is not an absolute directory "
			    "(want /DIR, ':' or ',' between them)",
			    quote(q, sizeof(q), p, n));
	}
	return copy_norm("debug_dirs", v, norm, normlen, err, errlen);
}

/* dump_on_growth: a size or a percentage, its text kept as set. */
static int parse_growth_key(const char *v, void *field, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	if (parse_amount(&growth_rule, v, field, err, errlen) == -1)
		return -1;
	return copy_norm("dump_on_growth", v, norm, normlen, err, errlen);
}

/* dump_on_memory: a percentage of the limit or a size, its text kept. */
static int parse_memory_key(const char *v, void *field, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	if (parse_amount(&memory_rule, v, field, err, errlen) == -1)
		return -1;
	return copy_norm("dump_on_memory", v, norm, normlen, err, errlen);
}

/* dump_on_memory_psi: parse_memory_psi(), its text kept. */
static int parse_psi_key(const char *v, void *field, char *norm, size_t normlen,
    char *err, size_t errlen)
{
	if (parse_memory_psi(v, field, err, errlen) == -1)
		return -1;
	return copy_norm("dump_on_memory_psi", v, norm, normlen, err, errlen);
}

/* memory_cgroup_root: an absolute directory, no control characters. */
static int check_cgroup_root(const char *v, int flags, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	size_t i, n = strlen(v);
	char q[96];

	(void)flags;
	if (v[0] != '/')
		return config_err(err, errlen,
		    "memory_cgroup_root: %s is not an absolute directory "
		    "(want e.g. /sys/fs/cgroup)",
		    quote(q, sizeof(q), v, n));
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return config_err(err, errlen,
			    "memory_cgroup_root: control character 0x%02x at "
			    "byte %zu (want a plain path)",
			    (unsigned char)v[i], i + 1);
	return copy_norm("memory_cgroup_root", v, norm, normlen, err, errlen);
}

/* prof_reset_lg_sample: parse_lg_sample(), its text kept. */
static int parse_lg_key(const char *v, void *field, char *norm, size_t normlen,
    char *err, size_t errlen)
{
	if (parse_lg_sample(v, field, err, errlen) == -1)
		return -1;
	return copy_norm("prof_reset_lg_sample", v, norm, normlen, err, errlen);
}

/* dump_dir: any path without control characters; existence is checked
 * at dump time, so a missing directory can be created later. */
static int check_dump_dir(const char *v, int flags, char *norm, size_t normlen,
    char *err, size_t errlen)
{
	size_t i, n = strlen(v);

	(void)flags;
	if (n == 0)
		return config_err(err, errlen,
		    "dump_dir: empty (want a directory, e.g. /var/tmp)");
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return config_err(err, errlen,
			    "dump_dir: control character 0x%02x at byte %zu "
			    "(want a plain path)",
			    (unsigned char)v[i], i + 1);
	return copy_norm("dump_dir", v, norm, normlen, err, errlen);
}

/* dump_prefix: part of a file name, never a path or a hidden file. */
static int check_dump_prefix(const char *v, int flags, char *norm,
    size_t normlen, char *err, size_t errlen)
{
	size_t i, n = strlen(v);
	char c, q[96], shown[8];

	(void)flags;
	if (n == 0)
		return config_err(err, errlen,
		    "dump_prefix: empty (" PREFIX_HINT ")");
	if (n >= FIELD_SIZE(dump_prefix) || n >= normlen)
		return config_err(err, errlen,
		    "dump_prefix: %zu bytes, at most %zu", n,
		    FIELD_SIZE(dump_prefix) - 1);
	/* A leading dot is how the temporary file of a dump is named. */
	if (v[0] == '.')
		return config_err(err, errlen,
		    "dump_prefix: %s starts with . (" PREFIX_HINT ")",
		    quote(q, sizeof(q), v, n));
	for (i = 0; i < n; i++) {
		c = v[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		        (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		        c == '-')) {
			if (c > ' ' && c < 0x7f)
				snprintf(shown, sizeof(shown), "'%c'", c);
			else
				snprintf(shown, sizeof(shown), "0x%02x",
				    (unsigned char)c);
			return config_err(err, errlen,
			    "dump_prefix: %s: byte %zu (%s) not allowed (" PREFIX_HINT
			    ")",
			    quote(q, sizeof(q), v, n), i + 1, shown);
		}
	}
	memcpy(norm, v, n + 1);
	return 0;
}

/*
 * A number key from text: decimal digits only, so no sign, no 0x, no
 * unit and nothing after; strtoul's overflow is out of range too.
 */
static int parse_number(const struct config_key *k, const char *v,
    unsigned *out, char *err, size_t errlen)
{
	unsigned long n;
	const char *p;
	char q[96];

	quote(q, sizeof(q), v, strlen(v));
	if (*v == '\0')
		return config_err(err, errlen, "%s: empty (want %u-%u%s)",
		    k->name, k->min, k->max, k->unit);
	for (p = v; *p != '\0'; p++)
		if (*p < '0' || *p > '9')
			return config_err(err, errlen,
			    "%s: %s is not a whole number (want %u-%u%s)",
			    k->name, q, k->min, k->max, k->unit);
	errno = 0;
	n = strtoul(v, NULL, 10);
	if (errno == ERANGE || n < k->min || n > k->max)
		return config_err(err, errlen,
		    "%s: %s is out of range (want %u-%u%s)", k->name, q, k->min,
		    k->max, k->unit);
	*out = (unsigned)n;
	return 0;
}

/* The key named @p name, or NULL. */
static const struct config_key *key_find(const char *name)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(config_keys[i].name, name) == 0)
			return &config_keys[i];
	return NULL;
}

/* "unknown key" with the list of keys there are. */
static int unknown_key(const char *name, char *err, size_t errlen)
{
	char q[96], keys[1024];
	size_t i, o = 0;

	keys[0] = '\0';
	for (i = 0; i < NKEYS; i++)
		o += (size_t)snprintf(keys + o, sizeof(keys) - o, "%s%s",
		    i ? " " : "", config_keys[i].name);
	return config_err(err, errlen, "unknown key %s (known keys: %s)",
	    quote(q, sizeof(q), name, strlen(name)), keys);
}

/* Any typed key's value, for a parser to write into before it is copied
 * to its field. */
union config_typed {
	struct config_amount amount;
	struct config_psi psi;
	int lg;
	enum config_switch sw;
	enum config_jemalloc_dumps jedumps;
	struct fold_list fold;
};

/* A typed key from @p v: parsed once, into its field and, when the key
 * keeps it, its text; cfg is unchanged on error. @p norm, VALUE_MAX
 * bytes, is the caller's (a host's thread may have a small stack). */
static int key_parse(struct jm4lw_config *cfg, const struct config_key *k,
    const char *v, char *norm, char *err, size_t errlen)
{
	union config_typed t;

	memset(&t, 0, sizeof(t));
	/* A key of a type the union lacks: test_config's defaults fail. */
	if (k->tsize > sizeof(t))
		return config_err(err, errlen,
		    "%s: its type is not in union config_typed", k->name);
	if (k->parse(v, &t, norm, k->size, err, errlen) == -1)
		return -1;
	memcpy((char *)cfg + k->off, &t, k->tsize);
	if (k->format == NULL)
		memcpy((char *)cfg + k->text, norm, strlen(norm) + 1);
	return 0;
}

/* Set key @p k from its text form; cfg is unchanged on error. */
static int key_set(struct jm4lw_config *cfg, const struct config_key *k,
    const char *value, char *err, size_t errlen)
{
	char v[VALUE_MAX], norm[VALUE_MAX];
	const char *s;
	size_t n;
	unsigned num = 0;
	unsigned long long bytes = 0;

	n = strlen(value);
	s = trim(value, &n);
	/* Too long is an error: a cut path or address would be another. */
	if (n >= (k->size != 0 ? k->size : sizeof(v)))
		return config_err(err, errlen,
		    "%s: value too long (%zu bytes, at most %zu)", k->name, n,
		    (k->size != 0 ? k->size : sizeof(v)) - 1);
	memcpy(v, s, n);
	v[n] = '\0';

	if (k->bytes) {
		if (parse_bytes(k->name, v, &bytes, err, errlen) == -1)
			return -1;
		memcpy((char *)cfg + k->off, &bytes, sizeof(bytes));
		return 0;
	}
	if (k->size == 0) {
		if (parse_number(k, v, &num, err, errlen) == -1)
			return -1;
		memcpy((char *)cfg + k->off, &num, sizeof(num));
		return 0;
	}
	if (k->parse != NULL)
		return key_parse(cfg, k, v, norm, err, errlen);
	if (k->check(v, 0, norm, k->size, err, errlen) == -1)
		return -1;
	memcpy((char *)cfg + k->off, norm, strlen(norm) + 1);
	return 0;
}

/*
 * Fill cfg with the defaults (also what `conf` shows when nothing is set),
 * read from the key table as a file's values are; test_config checks that
 * every default is accepted. Private, as the struct
 * is: hosts get a filled one from jm4lw_config_new().
 */
void config_defaults(struct jm4lw_config *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < NKEYS; i++)
		key_set(cfg, &config_keys[i], config_keys[i].def, NULL, 0);
}

/* Set one key from text; cfg is unchanged on error. */
JM4LW_API int jm4lw_config_set(struct jm4lw_config *cfg, const char *key,
    const char *value, char *err, size_t errlen)
{
	const struct config_key *k;

	if (cfg == NULL || key == NULL)
		return config_err(err, errlen, "no configuration or key");
	if ((k = key_find(key)) == NULL)
		return unknown_key(key, err, errlen);
	if (value == NULL)
		return config_err(err, errlen, "%s: no value", k->name);
	return key_set(cfg, k, value, err, errlen);
}

/* A configuration at its defaults, for a host that cannot see the
 * struct (its size may grow with every key). */
JM4LW_API struct jm4lw_config *jm4lw_config_new(void)
{
	struct jm4lw_config *cfg = malloc(sizeof(*cfg));

	if (cfg != NULL)
		config_defaults(cfg);
	return cfg;
}

/* Free jm4lw_config_new()'s configuration. */
JM4LW_API void jm4lw_config_free(struct jm4lw_config *cfg)
{
	free(cfg);
}

/* One key's value as text, the form jm4lw_config_set() takes back. */
JM4LW_API int jm4lw_config_get(const struct jm4lw_config *cfg, const char *key,
    char *buf, size_t len)
{
	const struct config_key *k;
	unsigned long long bytes;
	unsigned num;
	char text[VALUE_MAX];
	int n;

	if (buf == NULL || len == 0)
		return -1;
	buf[0] = '\0';
	if (cfg == NULL || key == NULL || (k = key_find(key)) == NULL)
		return -1;
	if (k->bytes) {
		memcpy(&bytes, (const char *)cfg + k->off, sizeof(bytes));
		n = snprintf(buf, len, "%llu", bytes);
	} else if (k->size == 0) {
		memcpy(&num, (const char *)cfg + k->off, sizeof(num));
		n = snprintf(buf, len, "%u", num);
	} else if (k->format != NULL) {
		k->format((const char *)cfg + k->off, text, sizeof(text));
		n = snprintf(buf, len, "%s", text);
	} else
		n = snprintf(buf, len, "%.*s", (int)k->size,
		    (const char *)cfg + (k->parse != NULL ? k->text : k->off));
	if (n < 0 || (size_t)n >= len) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

/* The string field of @p k in @p cfg (a typed key's kept text), or NULL
 * and why if it has no NUL. */
static const char *key_string(const struct jm4lw_config *cfg,
    const struct config_key *k, char *err, size_t errlen)
{
	const char *field =
	    (const char *)cfg + (k->parse != NULL ? k->text : k->off);

	if (memchr(field, '\0', k->size) == NULL) {
		config_err(err, errlen,
		    "%s: not NUL-terminated (at most %zu bytes)", k->name,
		    k->size - 1);
		return NULL;
	}
	return field;
}

/*
 * A typed key of a struct however it was filled: its kept text parses,
 * or its value prints as text that does (an enum out of range prints as
 * "" and is refused as that). @p norm is the caller's VALUE_MAX bytes.
 */
static int check_typed(const struct jm4lw_config *cfg,
    const struct config_key *k, char *norm, char *err, size_t errlen)
{
	union config_typed t;
	char text[VALUE_MAX];
	const char *v = text;

	if (k->format != NULL)
		k->format((const char *)cfg + k->off, text, sizeof(text));
	else if ((v = key_string(cfg, k, err, errlen)) == NULL)
		return -1;
	return k->parse(v, &t, norm, k->size, err, errlen);
}

/*
 * Check every field of a struct however it was filled; @p flags go to
 * the checkers, so a module's check differs from a host's by an argument.
 */
static int check_config(const struct jm4lw_config *cfg, int flags, char *err,
    size_t errlen)
{
	const struct config_key *k;
	char norm[VALUE_MAX];
	const char *field;
	unsigned num;
	size_t i;

	if (cfg == NULL)
		return config_err(err, errlen, "no configuration");
	for (i = 0; i < NKEYS; i++) {
		k = &config_keys[i];
		if (k->bytes)
			continue; /* every value means something */
		if (k->size == 0) {
			memcpy(&num, (const char *)cfg + k->off, sizeof(num));
			if (num < k->min || num > k->max)
				return config_err(err, errlen,
				    "%s: %u is out of range (want %u-%u%s)",
				    k->name, num, k->min, k->max, k->unit);
			continue;
		}
		if (k->parse != NULL) {
			if (check_typed(cfg, k, norm, err, errlen) == -1)
				return -1;
			continue;
		}
		if ((field = key_string(cfg, k, err, errlen)) == NULL ||
		    k->check(field, flags, norm, k->size, err, errlen) == -1)
			return -1;
	}
	return 0;
}

/* Check a whole struct as a host fills it: built-in words only. */
JM4LW_API int jm4lw_config_check(const struct jm4lw_config *cfg, char *err,
    size_t errlen)
{
	return check_config(cfg, 0, err, errlen);
}

/* jm4lw_config_check() as a module does it: host words allowed. */
int config_check_module(const struct jm4lw_config *cfg, char *err,
    size_t errlen)
{
	return check_config(cfg, CONFIG_HOST_WORDS, err, errlen);
}

/*
 * The values the server acts on, as core keeps them: the configuration's
 * typed fields, parsed once when each key was set, never text again.
 */
int config_policy(const struct jm4lw_config *cfg, struct core_policy *pol,
    char *err, size_t errlen)
{
	if (cfg == NULL || pol == NULL)
		return config_err(err, errlen, "no configuration");
	*pol = (struct core_policy){
	    .growth_bytes = cfg->dump_on_growth.bytes,
	    .growth_pct = cfg->dump_on_growth.pct,
	    .reset_lg = cfg->prof_reset_lg_sample,
	    .symbolized = cfg->dump_symbolized == CONFIG_ON,
	    .mem =
	        {
	            .bytes = cfg->dump_on_memory.bytes,
	            .pct = cfg->dump_on_memory.pct,
	            .psi = cfg->dump_on_memory_psi.avg10,
	            .psi_full = cfg->dump_on_memory_psi.full,
	        },
	    .jemalloc_dumps = cfg->jemalloc_dumps == CONFIG_JEDUMPS_ADOPT,
	    .fold = cfg->fold_wrappers,
	};
	return 0;
}

/* State of one jm4lw_config_load(). */
struct config_load {
	struct jm4lw_config cfg; /* filled here, copied out on success */
	char *text;              /* the whole file, read before parsing */
	size_t len, pos;         /* its length, and what inih has had */
	int line;                /* lines read so far: inih's line number */
	int line_bad;            /* the current line is already an error */
	int seen[NKEYS];         /* line each key was set on */
	int err_line;            /* first line we found wrong, 0 if none */
	char err[1024];          /* and why (unknown_key lists every key) */
};

/* Note the first error we find; inih reports only the first as well. */
static void load_error(struct config_load *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void load_error(struct config_load *l, const char *fmt, ...)
{
	va_list ap;

	if (l->err_line != 0)
		return;
	l->err_line = l->line;
	va_start(ap, fmt);
	vsnprintf(l->err, sizeof(l->err), fmt, ap);
	va_end(ap);
}

/*
 * inih's reader, over the file read whole (load_file): fgets's contract
 * (a line and its newline, at most num - 1 bytes, NUL-terminated) plus
 * what inih cannot see. A NUL byte would end the line where inih reads it
 * and cut the value silently: an error. A line longer than inih's buffer
 * would reach the handler cut short and its tail be read as more lines:
 * the tail is skipped and that is an error. A section header is checked
 * here so an empty unknown section is caught.
 */
static char *load_read(char *str, int num, void *arg)
{
	struct config_load *l = arg;
	const char *s, *end, *nl;
	size_t n, take;
	int cut;
	char q[96];

	if (l->pos >= l->len || num < 2)
		return NULL;
	s = l->text + l->pos;
	nl = memchr(s, '\n', l->len - l->pos);
	n = nl != NULL ? (size_t)(nl - s) + 1 : l->len - l->pos;
	l->pos += n;
	l->line++;
	take = n < (size_t)num - 1 ? n : (size_t)num - 1;
	cut = take < n;
	memcpy(str, s, take);
	str[take] = '\0';
	l->line_bad = 0;
	if (memchr(s, '\0', n) != NULL) {
		l->line_bad = 1;
		load_error(l, "a NUL byte in the line (the file must be text)");
		return str;
	}
	s = str;
	if (l->line == 1 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3; /* inih skips a UTF-8 BOM too */
	while (is_blank((unsigned char)*s))
		s++;
	/* A long comment is harmless: inih ignores what it did read. */
	l->line_bad = cut && *s != '#' && *s != ';';
	if (l->line_bad)
		load_error(l, "line too long (at most %d bytes)", num - 3);
	else if (*s == '[' && (end = strchr(s, ']')) != NULL &&
	    !(end - s - 1 == 5 && memcmp(s + 1, "jm4lw", 5) == 0))
		load_error(l,
		    "unknown section %s (put keys at the top of the "
		    "file or under [jm4lw])",
		    quote(q, sizeof(q), s + 1, (size_t)(end - s - 1)));
	return str;
}

/* What kind of file @p mode is, for "not a regular file (a FIFO)". */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a file";
}

/*
 * Read the file at @p path whole into l->text: a regular file of at most
 * JM4LW_CONFIG_MAX bytes, else one line in @p err. Opened non-blocking so
 * that a FIFO (no writer) or a device does not block the open; the type is
 * checked on the open descriptor (no race with a swap), and the size by
 * what read() returns too, in case the file grows after fstat(). A
 * regular file ignores O_NONBLOCK, so the reads need no change of flags.
 */
static int load_file(struct config_load *l, const char *path, char *err,
    size_t errlen)
{
	struct stat st;
	ssize_t n;
	int fd, rv = -1;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1)
		return config_err(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) == -1) {
		config_err(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		config_err(err, errlen, "%s: not a regular file (%s)", path,
		    file_kind(st.st_mode));
		goto out;
	}
	if (st.st_size > JM4LW_CONFIG_MAX)
		goto big;
	/* One byte more than the cap: a file that grew is caught too. */
	if ((l->text = malloc(JM4LW_CONFIG_MAX + 1)) == NULL) {
		config_err(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	while (l->len <= JM4LW_CONFIG_MAX &&
	    (n = read(fd, l->text + l->len, JM4LW_CONFIG_MAX + 1 - l->len)) !=
	        0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			config_err(err, errlen, "%s: %s", path,
			    strerror(errno));
			goto out;
		}
		l->len += (size_t)n;
	}
	if (l->len > JM4LW_CONFIG_MAX)
		goto big;
	rv = 0;
	goto out;
big:
	config_err(err, errlen,
	    "%s: larger than %d MiB (a configuration is "
	    "a few KiB)",
	    path, JM4LW_CONFIG_MAX >> 20);
out:
	close(fd);
	return rv;
}

/* inih's handler: one key = value. Returns 1, or 0 after load_error(). */
static int load_key(void *arg, const char *section, const char *name,
    const char *value)
{
	struct config_load *l = arg;
	const struct config_key *k;
	char why[1024], q[96];

	if (name == NULL)
		return 1; /* a section start, if inih was built to report it */
	if (l->line_bad)
		return 0; /* the value was cut: already an error */
	if (strcmp(section, "") != 0 && strcmp(section, "jm4lw") != 0) {
		load_error(l,
		    "unknown section %s (put keys at the top of the "
		    "file or under [jm4lw])",
		    quote(q, sizeof(q), section, strlen(section)));
		return 0;
	}
	/* A second value is a leftover or an indented continuation line. */
	if ((k = key_find(name)) != NULL && l->seen[k - config_keys] != 0) {
		load_error(l,
		    "%s set again (first on line %d); set each key "
		    "once, on one line",
		    k->name, l->seen[k - config_keys]);
		return 0;
	}
	if (jm4lw_config_set(&l->cfg, name, value, why, sizeof(why)) == -1) {
		load_error(l, "%s", why);
		return 0;
	}
	l->seen[k - config_keys] = l->line;
	return 1;
}

/* Read an INI file into a copy of cfg; copy it back only if all is well. */
JM4LW_API int jm4lw_config_load(struct jm4lw_config *cfg, const char *path,
    char *err, size_t errlen)
{
	struct config_load *l;
	int r, rv = -1;

	if (cfg == NULL || path == NULL)
		return config_err(err, errlen, "no configuration or path");
	/* About 5 KiB: keep it off the stack of whatever thread calls us. */
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return config_err(err, errlen, "%s: %s", path, strerror(errno));
	l->cfg = *cfg;
	if (load_file(l, path, err, errlen) == -1)
		goto out;
	r = ini_parse_stream(load_read, l, load_key, l);
	if (r == -2) {
		config_err(err, errlen, "%s: out of memory", path);
		goto out;
	}
	/* Whichever came first: our error or inih's syntax error. */
	if (l->err_line != 0 && (r <= 0 || l->err_line <= r)) {
		config_err(err, errlen, "%s:%d: %s", path, l->err_line, l->err);
		goto out;
	}
	if (r != 0) {
		config_err(err, errlen,
		    "%s:%d: syntax error (expected key = value)", path, r);
		goto out;
	}
	/* Fields the file left alone came from the caller: check them too. */
	if (jm4lw_config_check(&l->cfg, err, errlen) == -1)
		goto out;
	*cfg = l->cfg;
	rv = 0;
out:
	free(l->text);
	free(l);
	return rv;
}

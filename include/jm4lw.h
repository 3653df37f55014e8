/*
 * jm4lw.h — jemalloc's heap profiler and statistics on a four-letter-word
 * admin port.
 *
 * The module lives on the caller's libevent event_base (the evhttp model):
 *
 *	struct jm4lw_config cfg;
 *	char err[256];
 *	jm4lw_config_init(&cfg);
 *	struct jm4lw *m = jm4lw_new(base, &cfg, err, sizeof(err));
 *	if (m == NULL || jm4lw_listen(m, NULL) == -1) ...
 *	event_base_dispatch(base);
 *	jm4lw_free(m);
 *
 * The module never calls exit(), never installs signal handlers and never
 * writes to a socket in a way that can raise SIGPIPE (it sends with
 * MSG_NOSIGNAL). It logs through a callback the host sets (default: stderr).
 *
 * The executable must run on jemalloc: its own malloc() must be the
 * jemalloc the module asks (link it with -ljemalloc, which `pkg-config
 * --libs jm4lw` and the CMake package give, or run it with
 * LD_PRELOAD=libjemalloc.so.2). libjm4lw loads jemalloc anyway, but a
 * program whose malloc binds to libc's would be described as an idle heap,
 * so jm4lw_new() and jm4lw_start_thread() refuse it.
 *
 * A NULL module, thread, reply or configuration never crashes a call: it
 * does nothing, and a call that returns int returns -1 (NULL for a
 * constructor), with a reason in @p err where the call has one.
 */
#ifndef JM4LW_H
#define JM4LW_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of jm4lw, reported by `mntr`, `srvr` and `jm4lwd -h`. */
#define JM4LW_VERSION "0.1.0"

/** Every error reply starts with this prefix; scripts test for it. */
#define JM4LW_ERROR_PREFIX "error: "

/** Tail of the reply to a word outside the allow list (ZooKeeper's text). */
#define JM4LW_NOT_ALLOWED " is not executed because it is not in the whitelist."

/** Default listen address: loopback only. */
#define JM4LW_DEFAULT_LISTEN "127.0.0.1:9181"

/** Default allow_from: loopback peers only, so binding a routable address
 *  by mistake exposes nothing until allow_from is set too. */
#define JM4LW_DEFAULT_ALLOW_FROM "127.0.0.0/8,::1"

/** Where the HTTP face listens by default, next to the words. */
#define JM4LW_DEFAULT_HTTP_LISTEN "127.0.0.1:9182"

/* Public symbols are the only ones the shared library exports. */
#if defined(JM4LW_BUILDING) && defined(__GNUC__)
#define JM4LW_API __attribute__((visibility("default")))
#else
#define JM4LW_API
#endif

struct event_base;
struct jm4lw;

/** Log levels passed to a ::jm4lw_log_fn. */
enum jm4lw_log_level {
	JM4LW_LOG_ERR = 0,  /**< the module could not do what it was asked */
	JM4LW_LOG_WARN = 1, /**< something is off but service goes on */
	JM4LW_LOG_INFO = 2, /**< listening, dumps written, reloads */
	JM4LW_LOG_DEBUG = 3 /**< one line per connection */
};

/**
 * Log callback. @p msg is one line without a trailing newline; it is only
 * valid during the call.
 */
typedef void (*jm4lw_log_fn)(int level, const char *msg, void *arg);

/**
 * Configuration of a module. Plain data with fixed-size strings, so it can
 * be copied by assignment; fill it with jm4lw_config_init() and then change
 * fields directly, through jm4lw_config_set() or with jm4lw_config_load().
 */
struct jm4lw_config {
	/** Comma-separated listen addresses, `ADDR:PORT` or `[ADDR6]:PORT`.
	 *  `conf` shows the addresses bound, not this list. */
	char listen[512];
	/** `*` (every word) or a comma-separated list of words. */
	char allow[512];
	/** Directory heap profiles are written to (default `/tmp`). */
	char dump_dir[4096];
	/** File name prefix of heap profiles (default `jm4lw`). */
	char dump_prefix[64];
	/** Connections open at once (default 64). At the cap a new peer
	 *  takes the slot of the oldest peer that has not sent its word
	 *  yet; it is refused only when every slot is answering a word. */
	unsigned max_connections;
	/** Connections one peer address may hold at once; a new one beyond
	 *  it replaces that peer's oldest connection still waiting for its
	 *  word, or is refused (default 48). */
	unsigned max_connections_per_peer;
	/** Seconds a peer has to send its word (default 5). */
	unsigned read_timeout;
	/** Seconds a reply may make no progress before the peer is dropped
	 *  (default 30). */
	unsigned write_timeout;
	/** Peers allowed to connect: `*` or a comma-separated list of
	 *  addresses and networks, IPv4 and IPv6 (default
	 *  `127.0.0.0/8,::1`). Others are closed without a reply. */
	char allow_from[512];
	/** Seconds between two heap profile dumps; a `jmfp` sooner is
	 *  refused with the time to retry (default 1; 0: no limit). */
	unsigned dump_min_interval;
	/** Refuse a dump when the dump directory's filesystem has fewer free
	 *  bytes than this (default 64 MiB; 0: no check). */
	unsigned long long dump_min_free;
	/** Dump a heap profile every this many seconds (default 0: off). */
	unsigned dump_interval;
	/** Dump when `stats.allocated` has grown this much since the last
	 *  dump: bytes with K/M/G/T (`512M`), or a percentage (`50%`);
	 *  `0` (default) is off. */
	char dump_on_growth[32];
	/** Seconds between two looks at `stats.allocated` for
	 *  dump_on_growth (default 10). */
	unsigned growth_check_interval;
	/** Keep at most this many dumps of our prefix in dump_dir, deleting
	 *  the oldest (default 0: no limit). */
	unsigned dump_keep;
	/** Keep the dumps of our prefix under this many bytes in total,
	 *  deleting the oldest; the newest is always kept (default 0: no
	 *  limit). */
	unsigned long long dump_max_bytes;
	/** `lg_sample` that `jmrs` passes to `prof.reset`: `keep` (default,
	 *  the current rate) or 0-62. */
	char prof_reset_lg_sample[8];
	/** `on`: every kept dump (`jmfp`, `jmdf`, the schedule) also gets
	 *  `<dump>.symbolized`, jeprof's symbolized profile, which reads
	 *  anywhere without the program; retention treats the pair as one
	 *  (default `off`). */
	char dump_symbolized[8];
	/** Comma-separated listen addresses of the HTTP face (`/metrics`,
	 *  pprof, `/jemalloc`, `/4lw/<word>`); empty: no HTTP (default
	 *  `127.0.0.1:9182`). Only jm4lw_http_listen() binds it: `conf`
	 *  shows the addresses bound, empty until then. */
	char http_listen[512];
	/** Host names (besides IP literals and `localhost`) an HTTP request
	 *  may name in its `Host` header; others are refused, against DNS
	 *  rebinding (default empty). */
	char http_allowed_hosts[512];
	/** Largest HTTP request header block, bytes (default 8192). */
	unsigned http_max_header_bytes;
	/** Largest HTTP request body, bytes (a `/pprof/symbol` lookup;
	 *  default 4 MiB). */
	unsigned long long http_max_body_bytes;
	/** Requests one HTTP connection may make before it is closed
	 *  (keep-alive cap; default 100). */
	unsigned http_keepalive_requests;
	/* Issue 23 (history, leaks): moved to the private struct at merge. */
	/** Seconds between two rows of the figures' history ring
	 *  (`/jemalloc/history`, `jmhi`; default 10). */
	unsigned history_interval;
	/** Rows the history ring keeps (default 8640, a day at 10 s); 0 turns
	 *  the history off. 104 bytes a row, mapped once. */
	unsigned history_points;
};

/** Fill @p cfg with the defaults. */
JM4LW_API void jm4lw_config_init(struct jm4lw_config *cfg);

/**
 * Set one configuration key from its text form, as it would appear in the
 * config file. Returns 0, or -1 with a one-line reason in @p err.
 */
JM4LW_API int jm4lw_config_set(struct jm4lw_config *cfg, const char *key,
    const char *value, char *err, size_t errlen);

/**
 * Read an INI config file into @p cfg (keys at top level or in a `[jm4lw]`
 * section). Unknown keys and bad values are errors. Returns 0, or -1 with
 * `path:line: reason` (or `path: reason`) in @p err; @p cfg is left
 * untouched on error.
 */
JM4LW_API int jm4lw_config_load(struct jm4lw_config *cfg, const char *path,
    char *err, size_t errlen);

/**
 * Check a whole configuration (every field in range, listen addresses
 * parse, allowed words exist). Returns 0, or -1 with a reason in @p err.
 */
JM4LW_API int jm4lw_config_check(const struct jm4lw_config *cfg, char *err,
    size_t errlen);

/**
 * Create a module on @p base. It does not listen yet: call jm4lw_listen().
 * Returns NULL with a reason in @p err if @p cfg is invalid, or if the
 * process's malloc() is not the jemalloc the module would report on (a
 * program linked -ljm4lw without -ljemalloc mallocs from libc: the line
 * says how to link or preload jemalloc; see the top of this file). Heavy
 * work (a dump) runs on a worker thread the module starts at the first
 * dump; the module's own allocations on @p base's thread are not sampled.
 */
JM4LW_API struct jm4lw *jm4lw_new(struct event_base *base,
    const struct jm4lw_config *cfg, char *err, size_t errlen);

/**
 * Set the log callback (NULL restores the default, which writes
 * `jm4lw: msg` lines to stderr for levels up to JM4LW_LOG_INFO).
 */
JM4LW_API void jm4lw_set_log(struct jm4lw *m, jm4lw_log_fn fn, void *arg);

/**
 * Log levels above @p max_level are neither formatted nor passed to the
 * callback: a line per connection costs a busy port measurable CPU. The
 * default sink starts at JM4LW_LOG_INFO; jm4lw_set_log() with a callback
 * sets JM4LW_LOG_DEBUG (the callback sees everything), so call this after
 * it.
 */
JM4LW_API void jm4lw_set_log_level(struct jm4lw *m, int max_level);

/**
 * Listen on @p addr (`127.0.0.1:9181`, `[::1]:9181`; port 0 picks a free
 * port), or on every address of the configuration's `listen` when @p addr
 * is NULL. Returns 0, or -1 after logging why.
 */
JM4LW_API int jm4lw_listen(struct jm4lw *m, const char *addr);

/**
 * Write the @p i-th bound address as `ADDR:PORT` (IPv6 in brackets) into
 * @p buf. Returns 0, or -1 when there is no such listener.
 */
JM4LW_API int jm4lw_bound_addr(const struct jm4lw *m, int i, char *buf,
    size_t len);

/**
 * Apply a new configuration to a running module: allow list, dump settings,
 * limits and timeouts take effect for new connections. `listen` is not
 * re-bound (a changed value is logged and ignored). Returns 0, or -1 with
 * a reason in @p err and the old configuration still in force.
 */
JM4LW_API int jm4lw_reconfigure(struct jm4lw *m, const struct jm4lw_config *cfg,
    char *err, size_t errlen);

/**
 * Close every listener and connection and free the module. NULL is ok.
 * It returns at once even while a dump runs on the module's worker
 * thread: the worker finishes that dump, removes its staging directory
 * and exits by itself.
 */
JM4LW_API void jm4lw_free(struct jm4lw *m);

/**
 * Serve an already-bound socket @p fd (listening or not: it is put into
 * listen state if needed). The module owns it from now on and closes it
 * in jm4lw_free(). Returns 0, or -1 after logging why (@p fd is then
 * still the caller's).
 */
JM4LW_API int jm4lw_listen_fd(struct jm4lw *m, int fd);

/**
 * Serve the HTTP face (Prometheus `/metrics`, `/debug/pprof/heap` for
 * `go tool pprof`, jeprof's remote `/pprof/heap`, Keeper's `/jemalloc`
 * paths, every word as `/4lw/<word>`) on @p addr (`ADDR:PORT`), or on
 * every address of the configuration's `http_listen` when @p addr is
 * NULL (none when it is empty). The same module, loop, allow lists and
 * caps as the words. `conf`'s `http_listen` is what is bound (the real
 * port for port 0; empty if this is never called), and
 * jm4lw_http_bound_addr() gives each address. Returns 0, or -1 (logged)
 * if an address could not be bound.
 */
JM4LW_API int jm4lw_http_listen(struct jm4lw *m, const char *addr);

/**
 * Write the @p i-th bound address of the HTTP face as `ADDR:PORT` (IPv6
 * in brackets) into @p buf, as jm4lw_bound_addr() does for the words:
 * the real port of a listener asked for on port 0. Returns 0, or -1 when
 * there is no such listener (none before jm4lw_http_listen()).
 */
JM4LW_API int jm4lw_http_bound_addr(const struct jm4lw *m, int i, char *buf,
    size_t len);

/** @name Host words
 * A host adds its own words, or replaces a built-in one, with a handler
 * that writes its reply through a struct jm4lw_reply.
 * @{
 */

/** Flag for jm4lw_add_word(): the word changes state (dumps, profiling,
 *  the host's own state). `allow = readonly` leaves such words out. */
#define JM4LW_WORD_MUTATES 0x1

/** The reply being built for one word; valid only during the handler. */
struct jm4lw_reply;

/**
 * A host word's handler. Write the reply with jm4lw_reply_printf() /
 * jm4lw_reply_write(); return 0, or -1 after jm4lw_reply_error().
 * It runs on the module's event loop: keep it short.
 */
typedef int (*jm4lw_word_fn)(struct jm4lw_reply *r, void *arg);

/**
 * Add word @p word (exactly 4 printable ASCII bytes, no spaces) served by
 * @p fn. A word of the same name, built-in or added earlier, is replaced.
 * @p flags is 0 or JM4LW_WORD_MUTATES. Returns 0, or -1 (bad word, no
 * handler, or more than 64 host words).
 */
JM4LW_API int jm4lw_add_word(struct jm4lw *m, const char *word,
    jm4lw_word_fn fn, void *arg, int flags);

/** Append @p len raw bytes to the reply. */
JM4LW_API void jm4lw_reply_write(struct jm4lw_reply *r, const void *buf,
    size_t len);

/** Append printf-style text to the reply. */
JM4LW_API void jm4lw_reply_printf(struct jm4lw_reply *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Append one error line, `error: <text>\n`, and return -1 so a handler
 * can `return jm4lw_reply_error(r, "...")`.
 */
JM4LW_API int jm4lw_reply_error(struct jm4lw_reply *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Append the reply of built-in word @p word (e.g. a host's own `mntr`
 * that adds its figures to ours). Returns 0, or -1 if @p word is not
 * built in or its reply was an error line. `jmfp` asked this way dumps in
 * place, on the calling loop (the word itself dumps on the worker).
 */
JM4LW_API int jm4lw_reply_builtin(struct jm4lw_reply *r, const char *word);

/** @} */

/** @name Thread mode
 * For hosts that do not run libevent: the module on a thread of its own.
 * @{
 */

/** A module running on its own thread. */
struct jm4lw_thread;

/** Optional settings for jm4lw_start_thread_ex(). */
struct jm4lw_thread_opts {
	/** Log callback (NULL: stderr). Called on the module's thread. */
	jm4lw_log_fn log;
	/** Argument for @ref log. */
	void *log_arg;
	/** Called once, before the thread starts, to add host words. */
	void (*setup)(struct jm4lw *m, void *arg);
	/** Argument for @ref setup. */
	void *setup_arg;
};

/**
 * Start the module on a new thread named `jm4lw`, listening on the
 * configuration's addresses. All signals are blocked on that thread. When
 * idle it sleeps in the kernel: no timers, zero wake-ups. Returns NULL
 * with a reason in @p err if the configuration is bad, the process does
 * not run on jemalloc (its malloc() is another allocator's, even with
 * jemalloc loaded: checked as in jm4lw_new(), before anything starts), or
 * an address cannot be bound.
 */
JM4LW_API struct jm4lw_thread *
jm4lw_start_thread(const struct jm4lw_config *cfg, char *err, size_t errlen);

/** jm4lw_start_thread() with a log callback and a setup hook. */
JM4LW_API struct jm4lw_thread *
jm4lw_start_thread_ex(const struct jm4lw_config *cfg,
    const struct jm4lw_thread_opts *opts, char *err, size_t errlen);

/**
 * Stop the thread promptly (a reply being written is abandoned), join it
 * and free everything. In a child process after fork() the thread does
 * not exist: the child's copies of the listening sockets were closed at
 * fork, and this call only forgets the handle (it frees nothing, because
 * the event loop's kernel state is shared with the parent). NULL is ok.
 */
JM4LW_API void jm4lw_stop_thread(struct jm4lw_thread *t);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* JM4LW_H */

/*
 * jm4lw.h — jemalloc's heap profiler and statistics on a four-letter-word
 * admin port.
 *
 * The module lives on the caller's libevent event_base (the evhttp model):
 *
 *	struct jm4lw_config *cfg = jm4lw_config_new();
 *	char err[256];
 *	struct jm4lw *m = cfg ? jm4lw_new(base, cfg, err, sizeof(err)) : NULL;
 *	jm4lw_config_free(cfg);
 *	if (m == NULL) ... err says why
 *	if (jm4lw_listen(m, NULL) == -1) ... jm4lw_errmsg(m) says why
 *	event_base_dispatch(base);
 *	jm4lw_free(m);          // or jm4lw_free_wait(m, ms): see there
 *	event_base_free(base);  // after: the module's events live in it
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
 * Configuration of a module, opaque so that a new key never changes the
 * ABI: make one with jm4lw_config_new() (every key at its default), set
 * keys by name with jm4lw_config_set() or jm4lw_config_load(), read them
 * with jm4lw_config_get(), and free it with jm4lw_config_free(). The keys
 * are those of jm4lwd.conf (docs/CONFIG.md's table). jm4lw_new(),
 * jm4lw_reconfigure() and jm4lw_start_thread() copy it: free it whenever
 * the call returns.
 */
struct jm4lw_config;

/**
 * A configuration with every key at its default, or NULL if memory ran
 * out. Free it with jm4lw_config_free().
 */
JM4LW_API struct jm4lw_config *jm4lw_config_new(void);

/** Free a configuration from jm4lw_config_new(). NULL is ok. */
JM4LW_API void jm4lw_config_free(struct jm4lw_config *cfg);

/**
 * Write key @p key's value in its text form (as jm4lw_config_set() takes
 * it and a config file writes it; numbers in plain digits) into @p buf.
 * Returns 0, or -1 with @p buf set to "" for an unknown key or a @p buf
 * too small for the value (see the keys' limits in docs/CONFIG.md).
 */
JM4LW_API int jm4lw_config_get(const struct jm4lw_config *cfg, const char *key,
    char *buf, size_t len);

/**
 * Set one configuration key from its text form, as it would appear in the
 * config file. Returns 0, or -1 with a one-line reason in @p err.
 */
JM4LW_API int jm4lw_config_set(struct jm4lw_config *cfg, const char *key,
    const char *value, char *err, size_t errlen);

/**
 * Read an INI config file into @p cfg (keys at top level or in a `[jm4lw]`
 * section). Unknown keys and bad values are errors, as are a NUL byte in
 * a line, a path that is not a regular file (a FIFO, a device: refused
 * without blocking) and a file larger than 1 MiB. Returns 0, or -1 with
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
 * is NULL. Returns 0, or -1 with the reason in jm4lw_errmsg() (and the
 * log), e.g. `listen 127.0.0.1:80: Permission denied` or `listen X: more
 * than 16 listeners`.
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
 * a reason in @p err (and in jm4lw_errmsg()) and the old configuration
 * still in force.
 */
JM4LW_API int jm4lw_reconfigure(struct jm4lw *m, const struct jm4lw_config *cfg,
    char *err, size_t errlen);

/**
 * Why the last jm4lw_listen(), jm4lw_listen_fd(), jm4lw_http_listen(),
 * jm4lw_add_word() or jm4lw_reconfigure() on @p m failed, as one line
 * naming the argument and the limit it broke (sqlite's errmsg style), so
 * a host learns it without a log callback. Each of those calls clears it
 * first: "" after a call that succeeded (but see jm4lw_add_word() for a
 * replaced built-in). Never NULL; "" for a NULL module. Valid until the
 * next call on @p m. jm4lw_new() and the configuration calls, which have
 * no module to keep it on, fill their @p err buffer instead.
 */
JM4LW_API const char *jm4lw_errmsg(const struct jm4lw *m);

/**
 * Close every listener and connection and free the module. NULL is ok.
 * It returns at once. A job running on the module's worker thread (a
 * `jmfp`, `jmtp`... dump, or a rendering) is cancelled: its staging
 * directory (`.PREFIX.PID.xxxxxx/` in dump_dir) and everything in it are
 * removed before this returns, so a process that exits next leaves
 * nothing behind and no half-written file under a dump's name; the peer
 * that waited for it gets one `error: ... cancelled ...` line. A dump
 * that had already ended is answered as usual. prof.dump itself cannot
 * be interrupted: the worker thread finishes it into the removed
 * directory and exits by itself (use jm4lw_free_wait() to wait for it).
 *
 * Lifecycle rules:
 * - **Order with the event_base:** call jm4lw_free() *before*
 *   event_base_free() of the base the module was made on; the module's
 *   events live in that base. The mistake is caught in every build: the
 *   module sees that event_base_free() deleted its events, logs one
 *   `jm4lw_free: the event_base was freed before the module` line at
 *   JM4LW_LOG_ERR and frees what is its own without touching the freed
 *   base, leaving its libevent objects (events, listeners, the HTTP
 *   face) and their descriptors unfreed, and a waiting peer unanswered.
 *   A base freed and another made at the same address is not told apart.
 * - **Inside a callback:** jm4lw_free() from a word handler (a `quit`
 *   word), from the log callback, or from any other callback the module
 *   makes into the host is safe: the free is deferred to the end of the
 *   module's outermost callback (as evhttp defers freeing a connection
 *   whose callback runs), and then done. The reply the handler wrote is
 *   sent as far as the socket takes it at once, then the connection is
 *   closed cleanly (FIN, not a reset). Do not use @p m after the call,
 *   even though the module still exists until the callback returns.
 *   Not from thread mode's setup hook (jm4lw_thread_opts): stop the
 *   thread with jm4lw_stop_thread().
 * - **Twice, or after:** like free(), a second jm4lw_free() of the same
 *   module is a mistake. It is caught (a process-wide list of live
 *   modules is looked up, no freed memory is read): one
 *   `jm4lw: jm4lw_free(0x...): not a live module` line on stderr, and
 *   nothing else happens. jm4lw_add_word() on a freed module is caught
 *   the same way and returns -1. Other calls on a freed module are
 *   undefined, as with any freed pointer; a new module that happens to
 *   get the freed one's address is taken for it.
 * - **After fork():** a child that goes on with the module (serves on,
 *   or calls jm4lw_free()) first calls event_reinit() on the base, as
 *   libevent requires of any use of a base in a child. The connections
 *   the child got from its parent stay the parent's: the child never
 *   reads, writes or shuts them down, and closes its copies at their
 *   first event or at jm4lw_free(). Its listeners are copies of the
 *   parent's too (both processes accept on them): a child that should
 *   answer apart calls jm4lw_listen() for a port of its own.
 */
JM4LW_API void jm4lw_free(struct jm4lw *m);

/**
 * jm4lw_free(), but wait up to @p timeout_ms milliseconds for a job
 * running on the worker (a dump, a rendering) to end first: an ended job
 * answers its peer as usual (a `jmfp` gets its path), and the worker
 * thread has exited when this returns 0. On timeout (and with
 * @p timeout_ms <= 0 while a job runs) the job is cancelled as by
 * jm4lw_free(), the module is freed all the same, and -1 is returned:
 * nothing is left in dump_dir (no staging directory, nothing
 * half-written under a dump's name), but the worker thread still runs
 * until its prof.dump returns. Called inside a callback of the module
 * the free is deferred as jm4lw_free()'s is, the wait happening then,
 * and this returns -1 at once. NULL: 0.
 */
JM4LW_API int jm4lw_free_wait(struct jm4lw *m, int timeout_ms);

/**
 * Serve an already-bound socket @p fd (listening or not: it is put into
 * listen state if needed). The module owns it from now on and closes it
 * in jm4lw_free(). Returns 0, or -1 with the reason in jm4lw_errmsg()
 * (@p fd is then still the caller's).
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
 * jm4lw_http_bound_addr() gives each address. Returns 0, or -1 with the
 * reason in jm4lw_errmsg() if an address could not be bound.
 *
 * evhttp writes with writev(), which raises SIGPIPE when a peer resets
 * mid-reply: a host serving HTTP on its own loop ignores SIGPIPE (or
 * blocks it on the loop's thread) first; this logs one warning line at
 * JM4LW_LOG_WARN when it does neither. Thread mode needs nothing: its
 * thread blocks every signal.
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

/** Largest reply a host word's handler may write (16 MiB). A handler
 *  that writes more has its reply thrown away (the memory is freed at
 *  once) and the peer gets one `error:` line naming the word and this
 *  limit instead; further writes in the same handler are dropped. */
#define JM4LW_REPLY_MAX (16u * 1024 * 1024)

/**
 * A host word's handler. Write the reply with jm4lw_reply_printf() /
 * jm4lw_reply_write(); return 0, or -1 after jm4lw_reply_error().
 * It runs on the module's event loop, which is the host's: keep it short.
 * A handler that blocks blocks that loop, and everything on it: no other
 * peer is read, answered or timed out meanwhile, and a finished dump is
 * not collected. The limits are timers of that loop, so they fire late,
 * when the handler returns: a peer whose own read_timeout ran out
 * meanwhile is then closed unanswered (a reset: its word is unread) even
 * if the word arrived in time, and the others are served. The reply is
 * sent when the handler returns; the handler may call jm4lw_free() (see
 * there).
 */
typedef int (*jm4lw_word_fn)(struct jm4lw_reply *r, void *arg);

/**
 * Add word @p word (exactly 4 printable ASCII bytes, no space or comma)
 * served by @p fn. A word of the same name, built-in or added earlier, is
 * replaced. @p flags is 0 or JM4LW_WORD_MUTATES. Returns 0, or -1 with
 * the reason in jm4lw_errmsg(): a bad name (the line says the rule), no
 * handler, or the table full (64 host words); or -1 if @p m was already
 * freed, which is caught as jm4lw_free() says. Replacing a built-in word
 * succeeds but says so: 0, an INFO log line, and jm4lw_errmsg() is
 * `add_word mntr: replaces the built-in word` (otherwise "").
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

/**
 * Optional settings for jm4lw_start_thread_ex(). The caller allocates it,
 * so it carries its own size: set @ref size to `sizeof(struct
 * jm4lw_thread_opts)` (as JM4LW_THREAD_OPTS_INIT does). A library built
 * with more fields reads only the @ref size bytes a program was built
 * with, and treats the rest as zero; a size smaller than this version's
 * first four fields is refused with a line in @p err.
 */
struct jm4lw_thread_opts {
	/** `sizeof(struct jm4lw_thread_opts)` as the caller compiled it. */
	size_t size;
	/** Log callback (NULL: stderr). Called on the module's thread. */
	jm4lw_log_fn log;
	/** Argument for @ref log. */
	void *log_arg;
	/** Called once, before the thread starts, to add host words. */
	void (*setup)(struct jm4lw *m, void *arg);
	/** Argument for @ref setup. */
	void *setup_arg;
};

/** An initializer that sets the size, for designated fields after it:
 *  `struct jm4lw_thread_opts o = {JM4LW_THREAD_OPTS_INIT, .log = fn};` */
#define JM4LW_THREAD_OPTS_INIT .size = sizeof(struct jm4lw_thread_opts)

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
 * Stop the thread promptly (a reply being written is abandoned, a dump
 * running on the worker is cancelled as by jm4lw_free()), join it and
 * free everything. In a child process after fork() the thread does
 * not exist: the child's copies of the listening sockets were closed at
 * fork, and this call only forgets the handle (it frees nothing, because
 * the event loop's kernel state is shared with the parent). NULL is ok.
 */
JM4LW_API void jm4lw_stop_thread(struct jm4lw_thread *t);

/** @} */

/**
 * Name the calling thread in heap profiles: jemalloc's thread.prof.name,
 * which every dump's header line for the thread ends with, so `jmth`,
 * `-f threads` and pprof's `thread` label show @p name instead of
 * `t<N>`. Needs no module; call it from the thread itself, as it starts.
 * @p name is at most 15 bytes (what the kernel keeps of a thread's name,
 * so names given here and the system's look alike) of printable ASCII,
 * space or tab, but '"' and '\\': jemalloc writes the name unescaped into
 * its recent allocations' JSON (`jmrc`, /jemalloc/recent), where those
 * two would break the string. "" clears it. jemalloc keeps a copy: the
 * caller's buffer may go once the call returns. Returns 0, or -1 with
 * errno:
 * - EINVAL: @p name is NULL or has another byte;
 * - ENAMETOOLONG: @p name is longer than 15 bytes;
 * - ENOENT: no heap profiling (jemalloc without it, or opt.prof off:
 *   start with `MALLOC_CONF=prof:true`);
 * - EBUSY: MALLOC_CONF has `prof_sys_thread_name:true`, so jemalloc
 *   takes each thread's name from the system: use
 *   pthread_setname_np() instead;
 * - ENOSYS: the process's malloc() is not jemalloc's;
 * - EAGAIN: jemalloc had no memory for it.
 */
JM4LW_API int jm4lw_thread_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* JM4LW_H */

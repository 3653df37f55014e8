/*
 * The configuration's fields, private since struct jm4lw_config
 * became opaque: hosts go through jm4lw_config_new/set/get/load,
 * so a new key is a new field here and a row in daemon/config.c's key
 * table, never an ABI change. core reads the fields (it runs by them);
 * daemon/config.c fills and checks them; unit tests may include this.
 * A key whose value is not plain text (a switch, a size or percentage, a
 * list of names) is parsed once, when it is set, into a typed field that
 * everyone reads; its text is kept (in text, below) only when the typed
 * value would not print back as it was set. The fields come in blocks,
 * one per feature, each under a line naming it; a new key's field goes
 * in its feature's block, or in a new block before the printed forms.
 * (conf lists the keys in the key table's order, not this one.)
 */
#ifndef JM4LW_CONFIG_STRUCT_H
#define JM4LW_CONFIG_STRUCT_H

#include "fold.h"

/* A switch (dump_symbolized, symbolize_debuginfod), from on/off or the
 * spellings people use for them; shown as on or off. */
enum config_switch {
	CONFIG_OFF = 0,
	CONFIG_ON = 1,
};

/* jemalloc_dumps: leave jemalloc's own dumps be, or adopt them. */
enum config_jemalloc_dumps {
	CONFIG_JEDUMPS_LEAVE = 0,
	CONFIG_JEDUMPS_ADOPT = 1,
};

/* A size or a percentage (dump_on_growth, dump_on_memory): one of the
 * two is set, the other 0; both 0 is off. */
struct config_amount {
	unsigned long long bytes; /* bytes, K/M/G/T applied */
	unsigned pct;             /* a percentage */
};

/* dump_on_memory_psi: memory pressure's avg10 threshold. */
struct config_psi {
	unsigned avg10; /* the threshold x100 (avg10's hundredths); 0: off */
	int full;       /* the "full" line, else "some" */
};

struct jm4lw_config {
	/* The words port: where it listens, who may connect, what they may
	 *  ask, and how long a connection may take. */
	/* Comma-separated listen addresses, `ADDR:PORT` or `[ADDR6]:PORT`.
	 *  `conf` shows the addresses bound, not this list. */
	char listen[512];
	/* `*` (every word) or a comma-separated list of words. */
	char allow[512];
	/* Peers allowed to connect: `*` or a comma-separated list of
	 *  addresses and networks, IPv4 and IPv6 (default
	 *  `127.0.0.0/8,::1`). Others are closed without a reply. */
	char allow_from[512];
	/* Connections open at once (default 64). At the cap a new peer
	 *  takes the slot of the oldest peer that has not sent its word
	 *  yet; it is refused only when every slot is answering a word. */
	unsigned max_connections;
	/* Connections one peer address may hold at once; a new one beyond
	 *  it replaces that peer's oldest connection still waiting for its
	 *  word, or is refused (default 48). */
	unsigned max_connections_per_peer;
	/* Seconds a peer has to send its word (default 5). */
	unsigned read_timeout;
	/* Seconds a reply may make no progress before the peer is dropped
	 *  (default 30). */
	unsigned write_timeout;

	/* The HTTP face. */
	/* Comma-separated listen addresses of the HTTP face (`/metrics`,
	 *  pprof, `/jemalloc`, `/4lw/<word>`); empty: no HTTP (default
	 *  `127.0.0.1:9182`). Only jm4lw_http_listen() binds it: `conf`
	 *  shows the addresses bound, empty until then. */
	char http_listen[512];
	/* Host names (besides IP literals and `localhost`) an HTTP request
	 *  may name in its `Host` header; others are refused, against DNS
	 *  rebinding (default empty). */
	char http_allowed_hosts[512];
	/* Largest HTTP request header block, bytes (default 8192). */
	unsigned http_max_header_bytes;
	/* Largest HTTP request body, bytes (a `/pprof/symbol` lookup;
	 *  default 4 MiB). */
	unsigned long long http_max_body_bytes;
	/* Requests one HTTP connection may make before it is closed
	 *  (keep-alive cap; default 100). */
	unsigned http_keepalive_requests;
	/* Scrapes (/debug/pprof/heap, /allocs) that may wait at once for
	 *  a shared dump; one more gets 503 with Retry-After (default 64). */
	unsigned scrape_waiters_max;

	/* Dumps: where they go, how often, what comes with them. */
	/* Directory heap profiles are written to (default `/tmp/jm4lw-%u`,
	 *  `%u` the effective uid). */
	char dump_dir[4096];
	/* File name prefix of heap profiles (default `jm4lw`). */
	char dump_prefix[64];
	/* Seconds between two heap profile dumps; a `jmfp` sooner is
	 *  refused with the time to retry (default 1; 0: no limit). */
	unsigned dump_min_interval;
	/* Refuse a dump when the dump directory's filesystem has fewer free
	 *  bytes than this (default 64 MiB; 0: no check). */
	unsigned long long dump_min_free;
	/* `on`: every kept dump (`jmfp`, `jmdf`, the schedule) also gets
	 *  `<dump>.symbolized`, jeprof's symbolized profile, which reads
	 *  anywhere without the program; retention treats the pair as one
	 *  (default `off`). */
	enum config_switch dump_symbolized;

	/* The dump schedule: by the clock and on growth. */
	/* Dump a heap profile every this many seconds (default 0: off). */
	unsigned dump_interval;
	/* Dump when `stats.allocated` has grown this much since the last
	 *  dump: bytes with K/M/G/T (`512M`), or a percentage (`50%`);
	 *  `0` (default) is off. */
	struct config_amount dump_on_growth;
	/* Seconds between two looks at `stats.allocated` for
	 *  dump_on_growth (default 10). */
	unsigned growth_check_interval;

	/* Retention of our dumps in dump_dir. */
	/* Keep at most this many dumps of our prefix in dump_dir, deleting
	 *  the oldest (default 0: no limit). */
	unsigned dump_keep;
	/* Keep the dumps of our prefix under this many bytes in total,
	 *  deleting the oldest; the newest is always kept (default 0: no
	 *  limit). */
	unsigned long long dump_max_bytes;

	/* jemalloc's own dumps. */
	/* `adopt`: jemalloc's own dumps (lg_prof_interval, prof_gdump,
	 *  prof_final, an unnamed prof.dump) go into dump_dir under
	 *  dump_prefix and are kept like ours, unless the host set its own
	 *  prof_prefix; `leave`: where jemalloc puts them (default adopt). */
	enum config_jemalloc_dumps jemalloc_dumps;

	/* Resetting the profile (jmrs). */
	/* `lg_sample` that `jmrs` passes to `prof.reset`: `keep` (default,
	 *  the current rate, -1 here) or 0-62. */
	int prof_reset_lg_sample;

	/* Symbolization in the process, and the views' folding. */
	/* Directories of debug files besides the objects' own and
	 *  `/usr/lib/debug`, `:` or `,` between them, each searched as a
	 *  build-ID tree (`DIR/.build-id/xx/rest.debug`) and as a
	 *  `.gnu_debuglink` directory (default empty). */
	char debug_dirs[1024];
	/* `on`: symbolizing in the process (`jmtp`, `jmfg`, ...) may fetch
	 *  debug files from the debuginfod servers of `DEBUGINFOD_URLS`, on
	 *  the worker, within symbolize_timeout (default `off`). */
	enum config_switch symbolize_debuginfod;
	/* Seconds debuginfod may take in all for one symbolization; then
	 *  the objects not got keep their symbol tables' names and the reply
	 *  says which (default 10). */
	unsigned symbolize_timeout;
	/* The allocator's wrappers folded into their callers in the ranked
	 *  views (jmtp, jmlk, jmth, the page): names to fold besides those
	 *  found and the default list, `,` or white space between them;
	 *  `off` folds none (default empty: found and default ones). */
	struct fold_list fold_wrappers;

	/* The figures' history ring (jmhi, /jemalloc/history). */
	/* Seconds between two rows of the figures' history ring
	 *  (`/jemalloc/history`, `jmhi`; default 10). */
	unsigned history_interval;
	/* Rows the history ring keeps (default 8640, a day at 10 s); 0 turns
	 *  the history off. 104 bytes a row, mapped once. */
	unsigned history_points;

	/* Profile snapshots in memory (jmgr, jmpk). */
	/* Rolling profile snapshots in memory, while prof.active: seconds
	 *  between two (default 60), how many are kept (default 30; 0 turns
	 *  them off) and their bytes at most (default 4M): jmgr, jmpk,
	 *  /jemalloc/profile?since= and ?at=peak. */
	unsigned snapshot_interval;
	unsigned snapshot_count;
	unsigned long long snapshot_max_bytes;

	/* Recent sampled allocations (jmrc, /jemalloc/recent). */
	/* Records jemalloc keeps of the last sampled allocations, each with
	 *  its stack and, once freed, its free's
	 *  (experimental.prof_recent.alloc_max), set at start and on reload;
	 *  0 turns them off (default 64). */
	unsigned recent_max;

	/* dump_on_memory: a dump before the OOM killer comes. */
	/* Dump when the process's memory use reaches this much of its limit
	 *  (cgroup v2, cgroup v1, RLIMIT_AS, else the machine): a percentage
	 *  (`90%`) or bytes (`3G`); `0` (default) is off. */
	struct config_amount dump_on_memory;
	/* Dump when memory pressure's avg10 reaches a percentage: `some 10%`
	 *  or `full 5%` (PSI); `off` (default). */
	struct config_psi dump_on_memory_psi;
	/* Seconds between two looks at the limit, usage and pressure
	 *  (default 1). */
	unsigned memory_check_interval;
	/* Where the cgroup file systems are mounted (default
	 *  `/sys/fs/cgroup`), for containers with unusual mounts and tests. */
	char memory_cgroup_root[256];

	/* The printed form of the typed keys whose value does not give back
	 *  the text it was set from (`0512M`, `some  10`, `07`): what `conf`
	 *  and jm4lw_config_get() show. Nothing else reads these. */
	struct {
		char dump_on_growth[32];
		char prof_reset_lg_sample[8];
		char dump_on_memory[32];
		char dump_on_memory_psi[32];
	} text;
};

#endif

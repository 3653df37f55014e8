/*
 * core — the engine's state: struct core, owned by the module's event
 * loop, with the counters mntr and srvr report and the typed parts of the
 * configuration. What the engine does with it has a header per concern
 * (ctl.h, figures.h, doctor.h, history.h, job.h, dumps.h...). No sockets,
 * no libevent, no reply text: every call answers with a struct, and each
 * face renders it.
 */
#ifndef JM4LW_CORE_H
#define JM4LW_CORE_H

#include <stdint.h>
#include <time.h>

#include "config_struct.h"
#include "fold.h"
#include "history.h"
#include "memory.h"
#include "ops.h"
#include "reason.h"
#include "util.h"

/* Counters kept by the module and reported by mntr/srvr. */
struct core_stats {
	uint64_t conns_open;
	uint64_t conns_total;
	uint64_t conns_rejected; /* every slot held a peer being answered */
	uint64_t conns_evicted;  /* idle peers closed to make room */
	uint64_t conns_denied;   /* outside allow_from */
	uint64_t words_served;   /* every dispatched word */
	uint64_t words_unknown;
	uint64_t words_refused; /* not in the allow list */
	uint64_t dumps_written;
	uint64_t dumps_failed;
	uint64_t dumps_refused;   /* dump_min_interval, dump_min_free, busy */
	uint64_t dumps_scheduled; /* written by dump_interval/on_growth */
	uint64_t dumps_deleted;   /* by dump_keep/dump_max_bytes */
	uint64_t profiles_served; /* jmtp, jmcs, jmfg, jmdf answered */
	uint64_t http_requests;   /* requests the HTTP face took */
	/* jemalloc's own dumps taken into dump_dir (core/jedumps.c), and
	 * the prof_gdump rate limit's pauses. */
	uint64_t jemalloc_interval_dumps; /* lg_prof_interval's */
	uint64_t jemalloc_gdumps;         /* prof_gdump's */
	uint64_t jemalloc_manual_dumps;   /* a host's unnamed prof.dump */
	uint64_t gdump_paused;            /* prof.gdump held off */
};

/* What core serves by, copied from the configuration's typed fields
 * (parsed once, when each key was set) when a configuration is taken. */
struct core_policy {
	unsigned long long growth_bytes; /* dump_on_growth in bytes, or 0 */
	unsigned growth_pct;             /* dump_on_growth in %, or 0 */
	int reset_lg;                    /* prof_reset_lg_sample; -1: keep */
	int symbolized;                  /* dump_symbolized */
	struct memory_policy mem; /* dump_on_memory, dump_on_memory_psi */
	int jemalloc_dumps;       /* 1: adopt, 0: leave */
	struct fold_list fold;    /* fold_wrappers */
};

/* The engine's state, owned by the module's event loop. */
struct core {
	const struct core_ops *ops;
	const struct jm4lw_config *cfg; /* owned by the module */
	struct core_policy pol;
	const char *mode; /* srvr's Mode: line */
	struct core_stats st;
	struct core_log log;
	const struct core_hints *hints; /* the words' face's */
	struct timespec started;        /* CLOCK_MONOTONIC */
	struct timespec stats_at;       /* of the last coalesced epoch */
	int stats_fresh;
	/* Dumps, as the loop sees them. */
	struct timespec last_dump_at; /* CLOCK_MONOTONIC a dump last began */
	int dumped;                   /* last_dump_at is set */
	int dump_running;             /* a dump job is out on the worker */
	time_t last_dump_time;        /* wall clock of the last written dump */
	char last_dump[CORE_PATH_MAX];
	size_t alloc_at_dump;    /* stats.allocated then (growth) */
	int alloc_known;         /* growth has a baseline */
	struct ctl_mib tpa;      /* thread.prof.active */
	struct history hist;     /* history_points rows of the figures */
	long dump_pid;           /* the process dump_running is about */
	struct memory_state mem; /* dump_on_memory's watch, on the loop */
	/* The newest dump's profile (a sealed memfd a dump job lent, see
	 * job_kind.lends) and when it began: a view asked for within
	 * dump_min_interval of it is drawn from it, not refused (admit.c). */
	int have_last_fd;
	int last_fd;
	struct timespec last_fd_at; /* CLOCK_MONOTONIC */
	/* Sampling's clock, so an empty or partial profile says since
	 * when: prof.active as last seen (-1: not read yet), the wall
	 * clock (ns) of its last change or prof.reset (0: not known), and
	 * whether it has been so since the process started. */
	int samp_active;
	long long samp_since_ns;
	int samp_reset;
	int samp_from_start;
};

/* Initialise @p c with the allocator ops, configuration and policy. */
void core_init(struct core *c, const struct core_ops *ops,
    const struct jm4lw_config *cfg, const struct core_policy *pol);

/* Seconds since core_init(). */
long long core_uptime(const struct core *c);

#endif /* JM4LW_CORE_H */

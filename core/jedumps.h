/*
 * jedumps — jemalloc's own dumps made ours (core/jedumps.c): its
 * prof.prefix pointed into dump_dir, so lg_prof_interval's, prof_gdump's,
 * prof_final's and a host's unnamed prof.dump's files land beside ours
 * (core/cause.h names them); prof.gdump switched for its rate limit; and
 * job_adopt's step, which treats such a file like a dump we kept.
 */
#ifndef JM4LW_JEDUMPS_H
#define JM4LW_JEDUMPS_H

#include <stddef.h>

#include "config_struct.h"
#include "ops.h"

struct core;
struct job;

/* What core_jemalloc_prefix() did. */
enum jedumps_prefix {
	JEDUMPS_SET,    /* prof.prefix is <dump_dir>/<dump_prefix> */
	JEDUMPS_OFF,    /* no profiling here: nothing to point */
	JEDUMPS_HOST,   /* the host's own prof_prefix (MALLOC_CONF): left */
	JEDUMPS_LEAVE,  /* jemalloc_dumps = leave */
	JEDUMPS_UNSAFE, /* dump_dir not trusted (or not there): left */
	JEDUMPS_FAILED, /* prof.prefix refused it */
};

/*
 * Point jemalloc's prof.prefix at "<dump_dir resolved>/<dump_prefix>"
 * when @p adopt (jemalloc_dumps = adopt), dump_dir is trusted, profiling
 * is on and the host left opt.prof_prefix at jemalloc's "jeprof" (or at
 * this very prefix). @p dir gets dump_dir resolved (JEDUMPS_SET), @p line
 * one line for the log (every case but JEDUMPS_OFF). With @p was_set (an
 * earlier call set it) and a case that does not set, prof.prefix goes
 * back to opt.prof_prefix, so jemalloc's files stop landing where nobody
 * adopts them.
 */
enum jedumps_prefix core_jemalloc_prefix(const struct core_ops *ops,
    const struct jm4lw_config *cfg, int adopt, int was_set, char *dir,
    size_t dirlen, char *line, size_t linelen);

/* prof.gdump: with @p on 0 or 1, set it; the value before (1 or 0), or
 * -1 when there is none (no profiling). A bool under prof_gdump_mtx, no
 * profiling lock: cheap enough for the loop. */
int core_jemalloc_gdump(const struct core_ops *ops, int on);

/* job_adopt's step, on the worker: the file jemalloc closed in dump_dir
 * (j->path) checked, its symbolized companion (dump_symbolized), its leak
 * index queued for the idle worker, retention. */
int jedumps_adopt(struct job *j);

/* Back on the loop: an adopted dump's counter, log line, and jmdf's last
 * kept dump when it is the newer. */
void jedumps_done(struct core *c, const struct job *j);

#endif /* JM4LW_JEDUMPS_H */

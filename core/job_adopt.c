/*
 * job_adopt — a dump jemalloc itself closed in dump_dir (its
 * lg_prof_interval, prof_gdump and prof_final dumps, daemon/jedumps.c
 * saw it), taken as ours: kept like ours, nobody waiting; no dump of
 * ours, so it counts in its own figures (jedumps_done), not in
 * dumps_written.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "admit.h"
#include "core.h"
#include "jedumps.h"
#include "job.h"
#include "reason.h"

/* A free worker; the job gets the path (req->name) and cause of the dump
 * jemalloc wrote. */
static int adopt_admit(const struct job_kind *k, struct core *c, struct job *j,
    struct dumper *d, const struct job_req *req, struct dump_result *r)
{
	const char *slash;

	if (job_free_admit(k, c, j, d, r) == -1)
		return -1;
	if (req->name == NULL || req->name[0] != '/' ||
	    strlen(req->name) >= sizeof(j->path) ||
	    (slash = strrchr(req->name, '/')) == NULL ||
	    (size_t)(slash - req->name) >= sizeof(j->dir)) {
		dump_why(r, DUMP_FAILED, REASON_FAILED, EINVAL,
		    "%s: not a dump's path", k->name);
		return -1;
	}
	snprintf(j->path, sizeof(j->path), "%s", req->name);
	snprintf(j->dir, sizeof(j->dir), "%.*s", (int)(slash - req->name),
	    req->name);
	j->cause = req->cause;
	j->symbolized = c->pol.symbolized;
	dump_begin(c);
	return 0;
}

const struct job_kind job_adopt = {
    .name = "adopting jemalloc's dump",
    .admit = adopt_admit,
    .steps = {jedumps_adopt},
    .done = jedumps_done,
    .unasked = 1,
};

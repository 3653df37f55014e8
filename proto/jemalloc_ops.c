/*
 * The real allocator behind struct proto_ops: jemalloc as linked into the
 * process. Tests substitute their own table to inject each errno.
 */
#include <jemalloc/jemalloc.h>

#include "proto.h"

const struct proto_ops proto_jemalloc_ops = {
	.mallctl = mallctl,
	.stats_print = malloc_stats_print,
	.version = JEMALLOC_VERSION,
};

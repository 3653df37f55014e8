/*
 * host — what the test hosts that embed the module on a loop of their
 * own (frag_host, leak_host, snap_host) do alike: their allocation
 * sites, the module's configuration from JM4LW_CONF and DUMP_DIR, the
 * module listening for words and HTTP, SIGTERM (tests/host/host.c).
 */
#ifndef JM4LW_TEST_HOST_H
#define JM4LW_TEST_HOST_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "jm4lw.h"

/* An allocation site: a function and a frame of its own (noinline; the
 * hosts build at -O1), its pages touched. */
#define HOST_SITE(fn)                                                          \
	__attribute__((noinline)) void *fn(size_t size)                        \
	{                                                                      \
		void *p = malloc(size);                                        \
		if (p != NULL)                                                 \
			memset(p, 1, size);                                    \
		__asm__ volatile("" : : "r"(p) : "memory");                    \
		return p;                                                      \
	}

/* The module's configuration: the file JM4LW_CONF names, if set, and
 * dump_dir @p dump_dir. NULL with "NAME: why" on stderr. */
struct jm4lw_config *host_config(const char *name, const char *dump_dir);

/* The module on @p base with @p cfg (freed here), listening for words
 * and HTTP on ports of its own on 127.0.0.1, whose addresses go to
 * @p addr and @p haddr (@p len bytes each). NULL when it cannot be made
 * (why on stderr, as "NAME: why") or cannot listen. */
struct jm4lw *host_module(struct event_base *base, struct jm4lw_config *cfg,
    const char *name, char *addr, char *haddr, size_t len);

/* An event by which SIGTERM leaves @p base's loop, added; or NULL. */
struct event *host_sigterm(struct event_base *base);

#endif /* JM4LW_TEST_HOST_H */

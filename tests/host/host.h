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

/*
 * A host's start: its command line `NAME DUMP_DIR` (else usage and exit
 * 2), SIGPIPE ignored, the configuration from JM4LW_CONF's file, if set,
 * and DUMP_DIR (exit 2 on an error in it), a new loop into @p base, and
 * the module on it listening for words and HTTP on ports of its own on
 * 127.0.0.1, whose addresses go to @p addr and @p haddr (@p len bytes
 * each). NULL when it cannot be made (why on stderr, as "NAME: why");
 * @p base is then NULL or the loop to free.
 */
struct jm4lw *host_start(int argc, char *argv[], const char *name,
    struct event_base **base, char *addr, char *haddr, size_t len);

/* Say the addresses on stdout ("listening on A", "http on H") and run
 * @p base's loop: 0 when it ended (SIGTERM), 1 on its error. */
int host_serve(struct event_base *base, const char *addr, const char *haddr);

/* An event by which SIGTERM leaves @p base's loop, added; or NULL. */
struct event *host_sigterm(struct event_base *base);

#endif /* JM4LW_TEST_HOST_H */

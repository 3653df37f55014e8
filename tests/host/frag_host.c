/*
 * frag_host: known allocation sites at known sizes and lifetimes, for
 * fragmentation by site (tests/integration/frag.sh), embedding the module
 * on its own loop (words and HTTP).
 *
 *	MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:12 \
 *	    frag_host DUMP_DIR
 *
 * Before the port is printed, on one thread:
 *   - frag_host_site_a(): 100000 objects of 300 B (in the 320 B class:
 *     20 B of internal waste each), of which 80 % are then freed at
 *     random: their slabs stay, mostly free;
 *   - frag_host_site_b(): 40000 objects of 48 B, all kept: full slabs.
 * Nothing else of 320 B or 48 B is allocated by the host afterwards.
 * JM4LW_CONF=FILE is the module's configuration (allow ...).
 * Prints "listening on ADDR" and "http on ADDR" once bound; exits 0 on
 * SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

#define A_SIZE 300
#define A_COUNT 100000
#define B_SIZE 48
#define B_COUNT 40000

void *frag_host_site_a(size_t size);
void *frag_host_site_b(size_t size);

static void *a[A_COUNT], *b[B_COUNT];

/* One allocation site each, a frame of its own (host.h). */
HOST_SITE(frag_host_site_a)
HOST_SITE(frag_host_site_b)

/* Fill both sites, then free 80 % of A's at random (a fixed seed). */
static void fill(void)
{
	size_t i, j;
	void *t;

	for (i = 0; i < A_COUNT; i++)
		a[i] = frag_host_site_a(A_SIZE);
	for (i = 0; i < B_COUNT; i++)
		b[i] = frag_host_site_b(B_SIZE);
	srandom(1);
	for (i = A_COUNT; i-- > 1;) { /* Fisher-Yates, then free a prefix */
		j = (size_t)random() % (i + 1);
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	for (i = 0; i < A_COUNT / 5 * 4; i++) {
		free(a[i]);
		a[i] = NULL;
	}
}

int main(int argc, char *argv[])
{
	struct event_base *base = NULL;
	struct jm4lw *module = NULL;
	struct event *ev = NULL;
	char addr[128], haddr[128];
	int status = 1;
	size_t i;

	fill();
	if ((module = host_start(argc, argv, "frag_host", &base, addr, haddr,
	         sizeof(addr))) == NULL ||
	    (ev = host_sigterm(base)) == NULL)
		goto done;
	status = host_serve(base, addr, haddr);
done:
	if (ev != NULL)
		event_free(ev);
	jm4lw_free(module);
	if (base != NULL)
		event_base_free(base);
	for (i = 0; i < A_COUNT; i++)
		free(a[i]);
	for (i = 0; i < B_COUNT; i++)
		free(b[i]);
	return status;
}

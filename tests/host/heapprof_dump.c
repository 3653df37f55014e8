/*
 * heapprof_dump: what prof/heapprof.c reads in a heap_v2 profile, for the
 * differential test against jeprof (tests/integration/heapprof.sh).
 *
 *	heapprof_dump [--base OLD] PROFILE
 *
 * Prints "period N", "stacks N", "frames N", "maps N (M executable)",
 * then the unsampled totals, "inuse_objects X" and "inuse_space X", with
 * six decimals; or one line on stderr and exit 1. With --base, the totals
 * are of PROFILE minus OLD (heapprof_subtract, jeprof's --base), to the
 * byte, which jm4lw-prof's text table in MB cannot show. Then a line per
 * thread of the header, "thread TID BYTES NAME" (NAME "-" for none), and
 * "thread_lines N", the stacks' tN: lines kept.
 */
#include <stdio.h>
#include <string.h>

#include "heapprof.h"

int main(int argc, char *argv[])
{
	struct heap_profile hp, base = {0};
	const char *basepath = NULL;
	char err[512];
	size_t i, exec = 0;

	if (argc == 4 && strcmp(argv[1], "--base") == 0) {
		basepath = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: heapprof_dump [--base OLD] PROFILE\n");
		return 2;
	}
	if (heapprof_load(argv[1], &hp, err, sizeof(err)) == -1) {
		fprintf(stderr, "heapprof_dump: %s\n", err);
		return 1;
	}
	if (basepath != NULL &&
	    (heapprof_load(basepath, &base, err, sizeof(err)) == -1 ||
	        heapprof_subtract(&hp, &base) == -1)) {
		fprintf(stderr, "heapprof_dump: %s\n",
		    base.pcs != NULL ? "out of memory" : err);
		heapprof_free(&hp);
		return 1;
	}
	for (i = 0; i < hp.nmaps; i++)
		exec += hp.maps[i].exec;
	printf("period %llu\nstacks %zu\nframes %zu\nmaps %zu (%zu "
	       "executable)\ninuse_objects %.6f\ninuse_space %.6f\n",
	    (unsigned long long)hp.period, hp.nstacks, hp.npcs, hp.nmaps, exec,
	    hp.u_objs, hp.u_bytes);
	for (i = 0; i < hp.nthreads; i++)
		printf("thread %llu %llu %s\n",
		    (unsigned long long)hp.threads[i].c.tid,
		    (unsigned long long)hp.threads[i].c.bytes,
		    hp.threads[i].name != NULL ? hp.threads[i].name : "-");
	printf("thread_lines %zu\n", hp.ntcounts);
	heapprof_free(&hp);
	heapprof_free(&base);
	return 0;
}

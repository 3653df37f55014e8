/*
 * libFuzzer target: core/heapprof.c on any bytes. It must never crash,
 * leak or read out of bounds; a parse either fails with one line of error
 * and an empty profile, or yields a profile whose every stack points into
 * its frames and whose totals are the sums of its stacks.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with what broke: the input is the crash artifact. */
#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_heapprof: %s:%d: %s\n",          \
			    __FILE__, __LINE__, #cond);                        \
			abort();                                               \
		}                                                              \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct heap_profile hp;
	char err[256] = "";
	double bytes = 0, objs = 0;
	size_t i, frames = 0;

	if (heapprof_parse((const char *)data, size, &hp, err, sizeof(err)) ==
	    -1) {
		CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
		CHECK(hp.stacks == NULL && hp.nstacks == 0 && hp.pcs == NULL);
		return 0;
	}
	for (i = 0; i < hp.nstacks; i++) {
		const struct hp_stack *st = &hp.stacks[i];
		CHECK(st->depth > 0 && st->pc >= hp.pcs &&
		    st->pc + st->depth <= hp.pcs + hp.npcs);
		CHECK(st->u_bytes >= (double)st->bytes &&
		    st->u_objs >= (double)st->objs);
		frames += st->depth;
		bytes += st->u_bytes;
		objs += st->u_objs;
	}
	CHECK(frames == hp.npcs);
	CHECK(bytes == hp.u_bytes && objs == hp.u_objs);
	for (i = 0; i < hp.nmaps; i++)
		CHECK(
		    hp.maps[i].path != NULL && strlen(hp.maps[i].path) < size);
	heapprof_free(&hp);
	return 0;
}

/*
 * libFuzzer target: prof/heapprof.c on any bytes. It must never crash,
 * leak or read out of bounds; a parse either fails with one line of error
 * and an empty profile, or yields a profile whose every stack points into
 * its frames and its thread lines, whose threads' names are lines, and
 * whose totals are the sums of its stacks. A symbolized
 * profile's table then answers every address of it through the table
 * backend (prof/symbolize_table.c): at least one named frame each. (No
 * object backend: that would open whatever files the input names.)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof.h"
#include "render_threads.h"
#include "symbolize.h"

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

/* Every address of @p hp, as a leaf and as a caller, through its table. */
static void check_table(const struct heap_profile *hp)
{
	struct sym_frame fr[SYM_INLINE_MAX];
	struct symbolizer *s;
	char err[256];
	size_t i;
	int n, k, leaf;

	if ((s = sym_new(hp, NULL, err, sizeof(err))) == NULL)
		return; /* out of memory, under the fuzzer's limit */
	for (i = 0; i < hp->npcs; i++)
		for (leaf = 0; leaf < 2; leaf++) {
			n = sym_lookup(s, hp->pcs[i], leaf, fr, SYM_INLINE_MAX);
			CHECK(n >= 1 && n <= SYM_INLINE_MAX);
			for (k = 0; k < n; k++)
				CHECK(fr[k].func != NULL &&
				    fr[k].name != NULL &&
				    fr[k].func[0] != '\0');
			(void)sym_in_allocator(s, hp->pcs[i]);
		}
	sym_free(s);
}

/* The split by thread (render_threads.c, without a symbolizer) of any
 * parsed profile: the rows add up to the totals, each within 1 of its
 * own value, and none past the profile's total (a thread's lines that
 * claim more than their stack are nobody's). */
static void check_threads(const struct heap_profile *hp)
{
	struct thread_split s;
	long long b = 0, o = 0;
	size_t i;

	CHECK(threads_split(hp, NULL, RENDER_SPACE, 2, NULL, &s) == 0);
	CHECK(s.n <= 3);
	for (i = 0; i < s.n; i++) {
		CHECK(s.rows[i].u_bytes <= hp->u_bytes * (1 + 1e-9) + 1);
		CHECK(s.rows[i].u_objs <= hp->u_objs * (1 + 1e-9) + 1);
		CHECK(fabs((double)s.rows[i].bytes - s.rows[i].u_bytes) <=
		    1 + s.rows[i].u_bytes * 1e-12);
		b += s.rows[i].bytes;
		o += s.rows[i].objs;
	}
	CHECK(b == s.bytes && o == s.objs);
	threads_split_free(&s);
}

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
	for (i = 1; i < hp.nsyms; i++)
		CHECK(hp.syms[i - 1].addr < hp.syms[i].addr);
	/* Threads' names (any bytes but a newline) and each stack's tN:
	 * lines, all within the one array. */
	for (i = 0; i < hp.nthreads; i++)
		CHECK(hp.threads[i].name == NULL ||
		    (strlen(hp.threads[i].name) < size &&
		        strchr(hp.threads[i].name, '\n') == NULL));
	for (i = 0, frames = 0; i < hp.nstacks; i++) {
		const struct hp_stack *st = &hp.stacks[i];
		CHECK(st->ntc == 0 ||
		    (st->tc >= hp.tcounts &&
		        st->tc + st->ntc <= hp.tcounts + hp.ntcounts));
		frames += st->ntc;
	}
	CHECK(frames == hp.ntcounts);
	if (hp.symbolized)
		check_table(&hp);
	check_threads(&hp);
	heapprof_free(&hp);
	return 0;
}

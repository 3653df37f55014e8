/*
 * libFuzzer target: prof/recent.c's parser of jemalloc's prof_recent JSON
 * on any bytes, whole and as a reader's cut. It must never crash, leak or
 * read out of bounds; a parse either fails with one line of error and
 * nothing kept, or yields records whose stacks lie inside its addresses.
 * Those records then render as jmrc's text and /jemalloc/recent's JSON
 * through a symbolizer of no objects (every frame hex: no file the input
 * names is opened).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof.h"
#include "recent.h"
#include "symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with what broke: the input is the crash artifact. */
#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_recent: %s:%d: %s\n", __FILE__,  \
			    __LINE__, #cond);                                  \
			abort();                                               \
		}                                                              \
	} while (0)

/* Render @p r both ways into memory, filtered and not. */
static void render(const struct recent *r)
{
	struct recent_opts o = {.now_ns = 5000000000ull, .cap_bytes = 1 << 24};
	struct heap_profile hp;
	struct symbolizer *s;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f;

	memset(&hp, 0, sizeof(hp));
	if ((s = sym_new(&hp, NULL, err, sizeof(err))) == NULL)
		return; /* out of memory, under the fuzzer's limit */
	if ((f = open_memstream(&buf, &len)) != NULL) {
		CHECK(recent_render_text(f, r, s, &o) == 0);
		o.live_only = 1;
		o.min_size = 4096;
		CHECK(recent_render_json(f, r, s, &o) == 0);
		fclose(f);
		free(buf);
	}
	sym_free(s);
}

/* Parse @p data as alloc_dump's JSON, cut or not, and check it. */
static void one(const char *data, size_t size, int cut)
{
	struct recent r;
	char err[256] = "";
	size_t i;

	if (recent_parse(data, size, cut, &r, err, sizeof(err)) == -1) {
		CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
		CHECK(r.rec == NULL && r.pcs == NULL && r.n == 0);
		return;
	}
	CHECK(r.n <= RECENT_RECS_MAX && r.npcs <= r.pcap);
	CHECK(r.cut == 0 || cut);
	for (i = 0; i < r.n; i++) {
		const struct recent_rec *x = &r.rec[i];
		CHECK(x->alloc.off + x->alloc.n <= r.npcs);
		CHECK(x->alloc.n <= RECENT_FRAMES_MAX);
		CHECK(!x->has_free || x->released);
		CHECK(!x->has_free || x->free.off + x->free.n <= r.npcs);
		CHECK(strlen(x->alloc.thread) < RECENT_NAME_MAX);
		CHECK(strlen(x->free.thread) < RECENT_NAME_MAX);
	}
	CHECK(r.max >= -1);
	render(&r);
	recent_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one((const char *)data, size, 0);
	one((const char *)data, size, 1);
	return 0;
}

/*
 * libFuzzer target on dump_on_memory's engine (core/memory.c): any bytes
 * as /proc/self/cgroup and as a PSI file (no crash, paths that never
 * climb), then as a series of readings through the state machine, whose
 * promise is checked on each: a trigger fires at most once until its
 * figure has fallen below the re-arm line, and never while a dump is
 * out.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"

#define CHECK(x)                                                               \
	do {                                                                   \
		if (!(x))                                                      \
			abort();                                               \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct memory_policy p = {0};
	struct memory_state s = {0};
	struct memory_reading r = {0};
	char text[4097], v2[256], v1[256];
	unsigned some, full;
	enum memory_trigger t;
	int may_usage = 1, may_psi = 1;
	size_t i, n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	uint64_t th;

	memcpy(text, data, n);
	text[n] = '\0';
	memory_cgroup_paths(text, v2, sizeof(v2), v1, sizeof(v1));
	CHECK(v2[0] == '\0' || (v2[0] == '/' && strstr(v2, "/..") == NULL));
	CHECK(v1[0] == '\0' || (v1[0] == '/' && strstr(v1, "/..") == NULL));
	if (memory_parse_psi(text, &some, &full) == 0)
		CHECK(some <= 10000 && full <= 10000);

	/* The first bytes choose a policy, each 4 after a reading. */
	if (size < 4)
		return 0;
	p.pct = data[0] % 101;
	p.bytes = p.pct == 0 ? (uint64_t)data[1] << 4 : 0;
	p.psi = (unsigned)(data[2] % 101) * 100;
	p.psi_full = data[3] & 1;
	for (i = 4; i + 4 <= size; i += 4) {
		r.source = data[i] & 1 ? MEMORY_CGROUP_V2 : MEMORY_NONE;
		r.limit = 4096;
		r.usage = (uint64_t)data[i + 1] << 5;
		r.have_psi = data[i] & 2;
		r.psi_some = r.psi_full = (unsigned)data[i + 2] * 40;
		t = memory_check(&s, &p, &r);
		th = s.threshold;
		if (r.source != MEMORY_NONE && th != 0 &&
		    r.usage < th - th / 20)
			may_usage = 1;
		if (r.have_psi && p.psi != 0 && r.psi_some < p.psi / 2)
			may_psi = 1;
		if (t == MEMORY_NONE)
			continue;
		CHECK(t == MEMORY_PSI ? may_psi : may_usage);
		CHECK(s.asking);
		CHECK(memory_check(&s, &p, &r) == MEMORY_NONE); /* one out */
		memory_dumped(&s, data[i + 3] & 1);
		if (data[i + 3] & 1) {
			if (t == MEMORY_PSI)
				may_psi = 0;
			else
				may_usage = 0;
		}
	}
	return 0;
}

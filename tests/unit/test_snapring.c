/*
 * prof/snapring.c, the rolling snapshots' ring, on hand-written heap_v2
 * profiles: stacks are interned once across snapshots and swept when no
 * snapshot names them; the oldest go first past snapshot_count and past
 * snapshot_max_bytes; a snapshot written back parses to the counts it was
 * taken with; since and peak pick the snapshots they should.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof.h"
#include "snapring.h"

#define S 1000000000LL /* ns a second */

/* A heap_v2 profile of stacks "@ 0x<base+k> 0x10" (k < @p n), stack k
 * with k+1 objects of 4096 bytes each, parsed into @p hp. */
static void profile(struct heap_profile *hp, unsigned base, size_t n)
{
	char *buf, err[256];
	size_t cap = 256 + n * 128, o = 0, k;

	assert_non_null(buf = malloc(cap));
	o += (size_t)snprintf(buf + o, cap - o,
	    "heap_v2/1\n  t*: 0: 0 [0: 0]\n");
	for (k = 0; k < n; k++)
		o += (size_t)snprintf(buf + o, cap - o,
		    "@ 0x%x 0x10\n  t*: %zu: %zu [0: 0]\n", base + (unsigned)k,
		    k + 1, (k + 1) * 4096);
	o += (size_t)snprintf(buf + o, cap - o, "\nMAPPED_LIBRARIES:\n");
	assert_int_equal(heapprof_parse(buf, o, hp, err, sizeof(err)), 0);
	free(buf);
}

/* Add a profile of @p n stacks from @p base at @p t seconds with
 * @p alloc allocated. */
static int add(struct snapring *r, unsigned base, size_t n, long long t,
    uint64_t alloc)
{
	struct heap_profile hp;
	char err[256];
	int rv;

	profile(&hp, base, n);
	rv = snapring_add(r, &hp, t * S, alloc, 1, err, sizeof(err));
	heapprof_free(&hp);
	return rv;
}

/* The same stacks in many snapshots are stored once. */
static void test_interned(void **state)
{
	struct snapring r;
	size_t one;

	(void)state;
	snapring_init(&r, 10, 0);
	assert_int_equal(add(&r, 0x1000, 50, 1, 100), 0);
	one = r.bytes;
	assert_int_equal(r.live_stacks, 50);
	assert_int_equal(add(&r, 0x1000, 50, 2, 100), 0);
	assert_int_equal(add(&r, 0x1000, 50, 3, 100), 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.live_stacks, 50);
	/* Two more snapshots cost their triples only, not the frames. */
	assert_true(r.bytes - one ==
	    2 * (sizeof(struct snapshot) + 50 * sizeof(struct snap_entry)));
	/* Half new stacks: only those are added. */
	assert_int_equal(add(&r, 0x1000 + 25, 50, 4, 100), 0);
	assert_int_equal(r.live_stacks, 75);
	snapring_free(&r);
}

/* Past snapshot_count the oldest go, and stacks no snapshot names with
 * them; the table still finds the stacks left. */
static void test_evict_count(void **state)
{
	struct snapring r;
	int i;

	(void)state;
	snapring_init(&r, 3, 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(add(&r, 0x1000u * (unsigned)(i + 1), 10, i, 1),
		    0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.dropped, 2);
	assert_int_equal(r.live_stacks, 30);
	assert_true(snapring_at(&r, 0)->time_ns == 2 * S);
	/* The stacks of a kept snapshot are found again, not added; the
	 * oldest (0x3000's) went with its snapshot. */
	assert_int_equal(add(&r, 0x5000, 10, 5, 1), 0);
	assert_int_equal(r.live_stacks, 20);
	/* Slots are reused: no more than count + 1 snapshots' stacks were
	 * ever live at once (the new one's interned before the oldest
	 * goes). */
	assert_int_equal(r.nst, 40);
	/* Fewer kept on a reload: the oldest go at once. */
	assert_int_equal(snapring_limits(&r, 1, 0), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.live_stacks, 10);
	assert_true(snapring_at(&r, 0)->time_ns == 5 * S);
	assert_int_equal(snapring_limits(&r, 0, 0), 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.live_stacks, 0);
	assert_int_equal(r.bytes, 0);
	/* Off (snapshot_count 0 by a reload): all of its memory goes, the
	 * slots, the stacks' table and its hash, not only the snapshots;
	 * what was taken and dropped is still counted. */
	assert_null(r.s);
	assert_null(r.st);
	assert_int_equal(r.nst, 0);
	assert_int_equal(r.stcap, 0);
	assert_null(r.tab.slot);
	assert_int_equal(r.cap, 0);
	assert_int_equal(r.taken, 6);
	assert_int_equal(r.dropped, 6);
	snapring_free(&r);
}

/* Past snapshot_max_bytes the oldest go; one alone past it is refused. */
static void test_evict_bytes(void **state)
{
	struct snapring r;
	size_t one;
	int i;

	(void)state;
	snapring_init(&r, 100, 0);
	assert_int_equal(add(&r, 0x1000, 100, 0, 1), 0);
	one = r.bytes; /* one snapshot of 100 stacks of its own */
	snapring_free(&r);
	snapring_init(&r, 100, 3 * one + one / 2);
	for (i = 0; i < 10; i++) {
		assert_int_equal(add(&r, 0x10000u * (unsigned)(i + 1), 100, i,
		                     1),
		    0);
		assert_true(r.bytes <= r.max_bytes);
	}
	assert_int_equal(r.n, 3);
	assert_true(snapring_at(&r, 0)->time_ns == 7 * S);
	assert_int_equal(r.live_stacks, 300);
	/* A snapshot bigger than the cap alone: not kept, the ring as it
	 * was. */
	assert_int_equal(add(&r, 0x900000, 400, 11, 1), -1);
	assert_true(r.bytes <= r.max_bytes);
	assert_int_equal(r.live_stacks, 0 + r.n * 100);
	snapring_free(&r);
}

/* A snapshot written back parses to the counts it was taken with. */
static void test_write_back(void **state)
{
	struct heap_profile hp, back;
	struct snapring r;
	char *buf = NULL, err[256];
	size_t len = 0, k;
	FILE *f;

	(void)state;
	snapring_init(&r, 4, 0);
	profile(&hp, 0x2000, 20);
	assert_int_equal(snapring_add(&r, &hp, 1, 5, 1, err, sizeof(err)), 0);
	assert_non_null(f = open_memstream(&buf, &len));
	assert_int_equal(snapring_write(&r, 0, f), 0);
	fputs("\nMAPPED_LIBRARIES:\n", f);
	fclose(f);
	assert_int_equal(heapprof_parse(buf, len, &back, err, sizeof(err)), 0);
	assert_int_equal(back.nstacks, hp.nstacks);
	for (k = 0; k < hp.nstacks; k++) {
		assert_int_equal(back.stacks[k].depth, hp.stacks[k].depth);
		assert_memory_equal(back.stacks[k].pc, hp.stacks[k].pc,
		    hp.stacks[k].depth * sizeof(uint64_t));
		assert_true(back.stacks[k].u_bytes == hp.stacks[k].u_bytes);
		assert_true(back.stacks[k].u_objs == hp.stacks[k].u_objs);
	}
	assert_true(back.u_bytes == hp.u_bytes);
	heapprof_free(&back);
	heapprof_free(&hp);
	free(buf);
	snapring_free(&r);
}

/* since: the youngest at least that old (less the slack); peak: the
 * highest allocated in the window, the newest of equals. Ages at 300 s:
 * 200, 140, 80, 20. */
static void test_pick(void **state)
{
	struct snapring r;

	(void)state;
	snapring_init(&r, 10, 0);
	assert_int_equal(add(&r, 0x1000, 1, 100, 10), 0); /* 0 */
	assert_int_equal(add(&r, 0x1000, 1, 160, 50), 0); /* 1 */
	assert_int_equal(add(&r, 0x1000, 1, 220, 30), 0); /* 2 */
	assert_int_equal(add(&r, 0x1000, 1, 280, 40), 0); /* 3 */
	assert_int_equal(snapring_since(&r, 300 * S, 60, 0), 2);
	assert_int_equal(snapring_since(&r, 300 * S, 90, 30), 2);
	assert_int_equal(snapring_since(&r, 300 * S, 150, 0), 0);
	assert_int_equal(snapring_since(&r, 300 * S, 10, 0), 3);
	assert_int_equal(snapring_since(&r, 300 * S, 300, 30), -1);
	assert_int_equal(snapring_peak(&r, 300 * S, 0), 1);
	assert_int_equal(snapring_peak(&r, 300 * S, 100), 3);
	assert_int_equal(snapring_peak(&r, 300 * S, 10), -1);
	/* The newest of equals. */
	assert_int_equal(add(&r, 0x1000, 1, 290, 50), 0); /* 4 */
	assert_int_equal(snapring_peak(&r, 300 * S, 0), 4);
	snapring_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_interned),
	    cmocka_unit_test(test_evict_count),
	    cmocka_unit_test(test_evict_bytes),
	    cmocka_unit_test(test_write_back),
	    cmocka_unit_test(test_pick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The memory doctor (core/doctor.c) over a fake mallctl that
 * models jemalloc's books: arenas with slabs per size class, large
 * extents, dirty and muzzy pages, base metadata and thread caches, from
 * which every stats.* figure is derived as jemalloc derives it. The
 * arithmetic, each advice threshold from both sides, a jemalloc without
 * stats, arenas made and destroyed at run time, narenas:1 and the cap
 * on arenas read one by one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "answer.h"
#include "doctor.h"
#include "ops.h"
#include "proto.h"
#include "reason.h"

#define PAGE 4096
#define NBINS 4
#define NARENAS 80
#define LMIN 16384
#define MiB (1024ULL * 1024)

/* jemalloc's first classes' shapes (4 KiB pages), and one larger. */
static const struct {
	size_t size;
	uint32_t nregs;
	size_t slab;
} shape[NBINS] = {
    {8, 512, 4096},
    {48, 256, 12288},
    {64, 64, 4096},
    {1024, 16, 16384},
};

struct farena {
	bool init;
	unsigned nthreads;
	ssize_t ddecay, mdecay;
	size_t pdirty, pmuzzy; /* pages */
	size_t base, internal, tcache;
	size_t large_alloc, large_pages, lext0;
	size_t curregs[NBINS], curslabs[NBINS];
};

static struct {
	bool stats; /* config.stats */
	unsigned narenas;
	struct farena a[NARENAS];
	bool prof, prof_active, prof_stats, background;
	size_t lg_sample;
	uint64_t live_count[NBINS], live_req[NBINS];
	int epochs;
} F;

/* Arena @p i's figure or the sum over initialized arenas (4096). */
static size_t sum(size_t i, size_t (*fn)(const struct farena *))
{
	size_t k, s = 0;

	if (i != 4096)
		return fn(&F.a[i]);
	for (k = 0; k < F.narenas; k++)
		if (F.a[k].init)
			s += fn(&F.a[k]);
	return s;
}

/* Active pages: slabs and large extents. */
static size_t f_pactive(const struct farena *a)
{
	size_t j, p = a->large_pages;

	for (j = 0; j < NBINS; j++)
		p += a->curslabs[j] * shape[j].slab / PAGE;
	return p;
}
/* Small bytes allocated: regions in use times their size. */
static size_t f_small(const struct farena *a)
{
	size_t j, s = 0;

	for (j = 0; j < NBINS; j++)
		s += a->curregs[j] * shape[j].size;
	return s;
}
/* Large bytes allocated. */
static size_t f_large(const struct farena *a)
{
	return a->large_alloc;
}
/* All bytes allocated. */
static size_t f_alloc(const struct farena *a)
{
	return f_small(a) + a->large_alloc;
}
/* Dirty pages. */
static size_t f_pdirty(const struct farena *a)
{
	return a->pdirty;
}
/* Muzzy pages. */
static size_t f_pmuzzy(const struct farena *a)
{
	return a->pmuzzy;
}
/* Base metadata bytes. */
static size_t f_base(const struct farena *a)
{
	return a->base;
}
/* Internal metadata bytes (inside allocated). */
static size_t f_internal(const struct farena *a)
{
	return a->internal;
}
/* Bytes in thread caches. */
static size_t f_tcache(const struct farena *a)
{
	return a->tcache;
}
/* Live extents of the smallest large class. */
static size_t f_lext0(const struct farena *a)
{
	return a->lext0;
}
/* Threads bound to the arena. */
static size_t f_nthreads(const struct farena *a)
{
	return a->nthreads;
}
/* jemalloc: base pages + (active + dirty) pages. */
static size_t f_resident(const struct farena *a)
{
	return a->base + (f_pactive(a) + a->pdirty) * PAGE;
}
/* stats.metadata: base and internal. */
static size_t f_meta(const struct farena *a)
{
	return a->base + a->internal;
}

/* Copy @p v of exactly @p want bytes, as jemalloc checks lengths. */
static int put(void *oldp, size_t *oldlenp, const void *v, size_t want)
{
	if (oldp == NULL || oldlenp == NULL || *oldlenp != want)
		return EINVAL;
	memcpy(oldp, v, want);
	return 0;
}
/* A size_t answer. */
static int put_size(void *oldp, size_t *oldlenp, size_t v)
{
	return put(oldp, oldlenp, &v, sizeof(v));
}
/* A bool answer. */
static int put_bool(void *oldp, size_t *oldlenp, bool v)
{
	return put(oldp, oldlenp, &v, sizeof(v));
}

/* stats.arenas.<i>.<rest>: one arena's figure, or ENOENT. */
static int arena_stat(size_t i, const char *rest, void *oldp, size_t *oldlenp)
{
	static const struct {
		const char *name;
		size_t (*fn)(const struct farena *);
		int pages;
	} t[] = {
	    {"pactive", f_pactive, 0},
	    {"pdirty", f_pdirty, 0},
	    {"pmuzzy", f_pmuzzy, 0},
	    {"resident", f_resident, 0},
	    {"small.allocated", f_small, 0},
	    {"large.allocated", f_large, 0},
	    {"tcache_bytes", f_tcache, 0},
	    {"base", f_base, 0},
	    {"internal", f_internal, 0},
	    {"lextents.0.curlextents", f_lext0, 0},
	};
	unsigned nt, j;
	size_t k;
	ssize_t d;

	if (i != 4096 && (i >= F.narenas || !F.a[i].init))
		return ENOENT;
	for (k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		if (strcmp(rest, t[k].name) == 0)
			return put_size(oldp, oldlenp, sum(i, t[k].fn));
	if (strcmp(rest, "nthreads") == 0) {
		nt = (unsigned)sum(i, f_nthreads);
		return put(oldp, oldlenp, &nt, sizeof(nt));
	}
	if (strcmp(rest, "dirty_decay_ms") == 0 ||
	    strcmp(rest, "muzzy_decay_ms") == 0) {
		d = i == 4096        ? -1
		    : rest[0] == 'd' ? F.a[i].ddecay
		                     : F.a[i].mdecay;
		return put(oldp, oldlenp, &d, sizeof(d));
	}
	if (sscanf(rest, "bins.%u.", &j) == 1 && j < NBINS) {
		size_t s = 0, a;

		for (a = 0; a < F.narenas; a++) {
			if ((i != 4096 && a != i) || !F.a[a].init)
				continue;
			s += strstr(rest, "curregs") != NULL
			    ? F.a[a].curregs[j]
			    : F.a[a].curslabs[j];
		}
		return put_size(oldp, oldlenp, s);
	}
	return ENOENT;
}

/* mallctl as jemalloc answers it, for the names the doctor reads. */
static int doc_mallctl(const char *name, void *oldp, size_t *oldlenp,
    void *newp, size_t newlen)
{
	size_t i, j;
	uint64_t e = 1;
	int n = 0;

	(void)newlen;
	if (strcmp(name, "epoch") == 0) {
		F.epochs++;
		return oldp != NULL ? put(oldp, oldlenp, &e, sizeof(e)) : 0;
	}
	if (newp != NULL)
		return EPERM;
	if (strcmp(name, "config.stats") == 0)
		return put_bool(oldp, oldlenp, F.stats);
	if (strcmp(name, "opt.prof") == 0)
		return put_bool(oldp, oldlenp, F.prof);
	if (strcmp(name, "prof.active") == 0)
		return F.prof ? put_bool(oldp, oldlenp, F.prof_active) : ENOENT;
	if (strcmp(name, "opt.prof_stats") == 0)
		return put_bool(oldp, oldlenp, F.prof_stats);
	if (strcmp(name, "opt.cache_oblivious") == 0)
		return put_bool(oldp, oldlenp, true);
	if (strcmp(name, "background_thread") == 0)
		return put_bool(oldp, oldlenp, F.background);
	if (strcmp(name, "prof.lg_sample") == 0)
		return F.prof ? put_size(oldp, oldlenp, F.lg_sample) : ENOENT;
	if (strcmp(name, "arenas.page") == 0)
		return put_size(oldp, oldlenp, PAGE);
	if (strcmp(name, "arenas.lextent.0.size") == 0)
		return put_size(oldp, oldlenp, LMIN);
	if (strcmp(name, "arenas.nbins") == 0) {
		unsigned nb = NBINS;
		return put(oldp, oldlenp, &nb, sizeof(nb));
	}
	if (strcmp(name, "arenas.narenas") == 0 ||
	    strcmp(name, "opt.narenas") == 0)
		return put(oldp, oldlenp, &F.narenas, sizeof(F.narenas));
	if (sscanf(name, "arenas.bin.%zu.%n", &j, &n) == 1 && n > 0 &&
	    j < NBINS) {
		if (strcmp(name + n, "size") == 0)
			return put_size(oldp, oldlenp, shape[j].size);
		if (strcmp(name + n, "slab_size") == 0)
			return put_size(oldp, oldlenp, shape[j].slab);
		if (strcmp(name + n, "nregs") == 0)
			return put(oldp, oldlenp, &shape[j].nregs,
			    sizeof(uint32_t));
		return ENOENT;
	}
	if (sscanf(name, "arena.%zu.initialized", &i) == 1)
		return i < F.narenas ? put_bool(oldp, oldlenp, F.a[i].init)
		                     : EFAULT;
	if (sscanf(name, "prof.stats.bins.%zu.live", &j) == 1) {
		uint64_t v[2];

		if (!F.prof_stats || j >= NBINS)
			return ENOENT;
		v[0] = F.live_req[j];
		v[1] = F.live_count[j];
		return put(oldp, oldlenp, v, sizeof(v));
	}
	if (!F.stats && strncmp(name, "stats.", 6) == 0)
		return ENOENT;
	if (sscanf(name, "stats.arenas.%zu.%n", &i, &n) == 1 && n > 0)
		return arena_stat(i, name + n, oldp, oldlenp);
	if (strcmp(name, "stats.allocated") == 0)
		return put_size(oldp, oldlenp, sum(4096, f_alloc));
	if (strcmp(name, "stats.active") == 0)
		return put_size(oldp, oldlenp, sum(4096, f_pactive) * PAGE);
	if (strcmp(name, "stats.resident") == 0)
		return put_size(oldp, oldlenp, sum(4096, f_resident));
	if (strcmp(name, "stats.metadata") == 0)
		return put_size(oldp, oldlenp, sum(4096, f_meta));
	if (strcmp(name, "stats.metadata_thp") == 0)
		return put_size(oldp, oldlenp, 0);
	if (strcmp(name, "stats.mapped") == 0 ||
	    strcmp(name, "stats.retained") == 0)
		return put_size(oldp, oldlenp, 64 * MiB);
	return ENOENT;
}

/* malloc_stats_print: the doctor never calls it. */
static void doc_stats_print(void (*cb)(void *, const char *), void *arg,
    const char *opts)
{
	(void)opts;
	cb(arg, "");
}

static const struct core_ops doc_ops = {
    .mallctl = doc_mallctl,
    .stats_print = doc_stats_print,
    .version = "5.3.0-doctor",
};

/* One arena: arena 0 with the given slabs, large bytes and dirty pages. */
static void one_arena(void)
{
	memset(&F, 0, sizeof(F));
	F.stats = true;
	F.narenas = 1;
	F.lg_sample = 19;
	F.a[0].init = true;
	F.a[0].nthreads = 1;
	F.a[0].ddecay = 10000;
	F.a[0].mdecay = 0;
	F.a[0].base = 2 * MiB;
	F.a[0].internal = 10000;
	F.a[0].tcache = 50000;
	/* 8 B: 10 slabs, 5120 regions, 5000 used. */
	F.a[0].curslabs[0] = 10;
	F.a[0].curregs[0] = 5000;
	/* 48 B: 100 slabs (25600 regions), 2000 used: 7.8% */
	F.a[0].curslabs[1] = 100;
	F.a[0].curregs[1] = 2000;
	/* 1 MiB of large, in 257 pages (a page of padding). */
	F.a[0].large_alloc = MiB;
	F.a[0].large_pages = 257;
	F.a[0].pdirty = 10;
}

static struct doctor D;

/* The advice line of @p kind, or NULL. */
static const struct doctor_advice *find_advice(enum doctor_advice_kind kind)
{
	unsigned i;

	for (i = 0; i < D.nadvice; i++)
		if (D.advice[i].kind == kind)
			return &D.advice[i];
	return NULL;
}

/* The parts add up to resident; each is what jemalloc's books say. */
static void test_arithmetic(void **state)
{
	uint64_t s = 0;
	int k;

	(void)state;
	one_arena();
	doctor_diagnose(&doc_ops, 1, &D);
	assert_true(D.ok);
	assert_int_equal(F.epochs, 1);
	assert_int_equal(D.allocated, 5000 * 8 + 2000 * 48 + MiB);
	assert_int_equal(D.active, (10 + 100 * 3 + 257) * PAGE);
	assert_int_equal(D.resident, 2 * MiB + (10 + 300 + 257 + 10) * PAGE);
	assert_int_equal(D.small_frag,
	    (10 * 4096 - 5000 * 8) + (100 * 12288 - 2000 * 48));
	assert_int_equal(D.large_pad, PAGE);
	assert_int_equal(D.dirty, 10 * PAGE);
	assert_int_equal(D.purge_gain, 10 * PAGE);
	assert_int_equal(D.part[DOCTOR_TCACHE], 50000);
	assert_int_equal(D.part[DOCTOR_PROGRAM], D.allocated - 50000);
	assert_int_equal(D.part[DOCTOR_METADATA], 2 * MiB);
	assert_int_equal(D.residue, 0);
	for (k = 0; k < DOCTOR_PARTS; k++)
		s += D.part[k];
	assert_int_equal(s, D.resident);
	/* The worst class is 48 B, at 7.8%. */
	assert_true(D.nworst_bins >= 2);
	assert_int_equal(D.bins[D.worst_bins[0]].size, 48);
	assert_true(D.bins[D.worst_bins[0]].util < 0.11);
	assert_int_equal(D.bins[D.worst_bins[0]].waste, 100 * 12288 - 96000);
	/* One arena: nothing to rank. */
	assert_int_equal(D.narenas, 1);
	assert_int_equal(D.nworst_arenas, 0);
}

/* The advice on dirty pages, from both sides of its threshold. */
static void test_dirty_thresholds(void **state)
{
	const struct doctor_advice *a;

	(void)state;
	one_arena();
	/* 1 MiB less a page: below the floor, whatever the share. */
	F.a[0].pdirty = MiB / PAGE - 1;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_null(find_advice(ADVICE_PURGE));
	assert_null(find_advice(ADVICE_BACKGROUND));
	/* Past 1 MiB and a twentieth of resident: jmpg, and background
	 * threads are off. */
	F.a[0].pdirty = 2 * MiB / PAGE;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_non_null(a = find_advice(ADVICE_PURGE));
	assert_int_equal(a->gain, 2 * MiB);
	assert_int_equal(a->figure, 2 * MiB);
	assert_non_null(find_advice(ADVICE_BACKGROUND));
	assert_null(find_advice(ADVICE_DECAY)); /* 10 s is the default */
	F.background = true;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_null(find_advice(ADVICE_BACKGROUND));
	/* Long decay: the advice names the value and jemalloc's default. */
	F.a[0].ddecay = 600000;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_non_null(a = find_advice(ADVICE_DECAY));
	assert_int_equal(a->value, 600000);
	assert_int_equal(a->value2, 10000);
	assert_int_equal(a->gain, 2 * MiB);
	F.a[0].ddecay = -1;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_non_null(a = find_advice(ADVICE_DECAY));
	assert_int_equal(a->value, -1);
	/* Big process: 2 MiB is under a twentieth of 100 MiB resident. */
	F.a[0].base = 100 * MiB;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_null(find_advice(ADVICE_PURGE));
	assert_null(find_advice(ADVICE_DECAY));
}

/* Size classes: under half used and 1 MiB free, or no advice. */
static void test_size_class_thresholds(void **state)
{
	const struct doctor_advice *a;

	(void)state;
	one_arena();
	/* 48 B: 1.1 MiB free at 7.8%: advised. */
	doctor_diagnose(&doc_ops, 1, &D);
	assert_non_null(a = find_advice(ADVICE_SIZE_CLASS));
	assert_int_equal(a->size, 48);
	assert_int_equal(a->figure, 100 * 12288 - 96000);
	assert_int_equal(a->count, 2000);
	/* 60% used: fragmented, but not worth a line. */
	F.a[0].curregs[1] = 15360;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_null(find_advice(ADVICE_SIZE_CLASS));
	/* 10% used but under 1 MiB free: no line either. */
	F.a[0].curslabs[1] = 50;
	F.a[0].curregs[1] = 1280;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_true(D.bins[1].waste < MiB);
	assert_null(find_advice(ADVICE_SIZE_CLASS));
}

/* Thread caches: 8 MiB and a tenth of resident. */
static void test_tcache_threshold(void **state)
{
	(void)state;
	one_arena();
	F.a[0].large_alloc = 40 * MiB;
	F.a[0].large_pages = 40 * MiB / PAGE;
	F.a[0].tcache = 8 * MiB - 1;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_null(find_advice(ADVICE_TCACHE));
	F.a[0].tcache = 9 * MiB;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_non_null(find_advice(ADVICE_TCACHE));
	assert_int_equal(D.part[DOCTOR_TCACHE], 9 * MiB);
}

/* A struct out into a NUL-terminated buffer of the test's. */
static void out_buf(void *arg, const void *buf, size_t len)
{
	strncat(arg, buf, len);
}

/* --disable-stats: the doctor refuses, in one line jmdr sends as its
 * error line; the answer renders only a diagnosis, not a refusal. */
static void test_no_stats(void **state)
{
	(void)state;
	one_arena();
	F.stats = false;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_false(D.ok);
	assert_int_equal(D.why, REASON_NO_STATS);
	assert_non_null(strstr(D.reason, "--disable-stats"));
	assert_null(strchr(D.reason, '\n'));
}

/* arenas.create, arena.<i>.destroy: the index left behind is skipped,
 * and each call sees the arenas as they are then. */
static void test_arenas_come_and_go(void **state)
{
	(void)state;
	one_arena();
	F.narenas = 3;
	F.a[2] = F.a[0];
	F.a[2].pdirty = 300;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_int_equal(D.narenas, 2);
	assert_int_equal(D.narena_rows, 2);
	assert_int_equal(D.arenas[1].index, 2);
	assert_int_equal(D.dirty, 310 * PAGE);
	/* The worst by waste: arena 2, with its dirty pages. */
	assert_int_equal(D.nworst_arenas, 2);
	assert_int_equal(D.arenas[D.worst_arenas[0]].index, 2);
	/* Arena 1 made; arena 2 destroyed. */
	F.a[1] = F.a[0];
	memset(&F.a[2], 0, sizeof(F.a[2]));
	doctor_diagnose(&doc_ops, 1, &D);
	assert_int_equal(D.narenas, 2);
	assert_int_equal(D.arenas[1].index, 1);
	assert_int_equal(D.dirty, 20 * PAGE);
}

/* narenas:1: no advice about arenas; many idle arenas: advice. */
static void test_narenas(void **state)
{
	const struct doctor_advice *a;
	unsigned i;

	(void)state;
	one_arena();
	doctor_diagnose(&doc_ops, 1, &D);
	assert_null(find_advice(ADVICE_NARENAS));
	/* 8 arenas: 0 and 1 busy, six holding 1 KiB among 64 slabs each. */
	F.narenas = 8;
	F.a[1] = F.a[0];
	for (i = 2; i < 8; i++) {
		memset(&F.a[i], 0, sizeof(F.a[i]));
		F.a[i].init = true;
		F.a[i].curslabs[3] = 64;
		F.a[i].curregs[3] = 1;
		F.a[i].pdirty = 16;
	}
	doctor_diagnose(&doc_ops, 1, &D);
	assert_non_null(a = find_advice(ADVICE_NARENAS));
	assert_int_equal(a->value, 6);
	assert_int_equal(a->count, 8);
	assert_int_equal(a->value2, 2);
	assert_int_equal(a->gain, 6 * (64 * 16384 + 16 * PAGE - 1024));
	/* The same arenas, busy: nothing to say. */
	for (i = 2; i < 8; i++)
		F.a[i].curregs[3] = 1024;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_null(find_advice(ADVICE_NARENAS));
}

/* Past DOCTOR_ARENAS_MAX, the rest are one "other" row, and the rows
 * still add up to the merged figures. */
static void test_arena_cap(void **state)
{
	const struct doctor_arena *o;
	uint64_t dirty = 0, frag = 0;
	unsigned i;

	(void)state;
	one_arena();
	F.narenas = NARENAS;
	for (i = 1; i < NARENAS; i++) {
		F.a[i] = F.a[0];
		F.a[i].pdirty = i;
	}
	doctor_diagnose(&doc_ops, 1, &D);
	assert_int_equal(D.narenas, NARENAS);
	assert_int_equal(D.narena_rows, DOCTOR_ARENAS_MAX + 1);
	o = &D.arenas[DOCTOR_ARENAS_MAX];
	assert_int_equal(o->index, DOCTOR_OTHER);
	assert_int_equal(o->narenas, NARENAS - DOCTOR_ARENAS_MAX);
	for (i = 0; i < D.narena_rows; i++) {
		dirty += D.arenas[i].dirty;
		frag += D.arenas[i].frag;
	}
	assert_int_equal(dirty, D.dirty);
	assert_int_equal(frag, D.active - D.allocated);
	/* The worst arena is the one with the most dirty pages: "other". */
	assert_int_equal(D.arenas[D.worst_arenas[0]].index, DOCTOR_OTHER);
}

/* Profiling's cost: exact from prof.stats; estimated without. */
static void test_prof_cost(void **state)
{
	const struct doctor_advice *a;

	(void)state;
	one_arena();
	F.prof = F.prof_active = true;
	F.prof_stats = true;
	F.lg_sample = 12;
	F.live_count[1] = 100; /* 100 sampled 48 B objects */
	F.live_req[1] = 100 * 40;
	F.a[0].large_alloc += 100 * LMIN;
	F.a[0].large_pages += 100 * (LMIN + PAGE) / PAGE;
	F.a[0].lext0 = 100;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_true(D.prof_exact);
	assert_int_equal(D.prof_samples, 100);
	assert_int_equal(D.prof_cost, 100 * (LMIN + PAGE) - 4000);
	assert_int_equal(D.part[DOCTOR_PROFILING], 100 * (LMIN - 48));
	/* 2 MiB of 5 MiB resident, at lg 12: advise 19. */
	assert_non_null(a = find_advice(ADVICE_SAMPLING));
	assert_int_equal(a->value, 12);
	assert_int_equal(a->value2, 19);
	assert_int_equal(a->gain, D.prof_cost - (D.prof_cost >> 7));
	/* At jemalloc's default rate: no advice. */
	F.lg_sample = 19;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_null(find_advice(ADVICE_SAMPLING));
	/* Without prof.stats: an estimate, no more than the 16 KiB extents
	 * there are. */
	F.prof_stats = false;
	F.lg_sample = 12;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_false(D.prof_exact);
	assert_true(D.prof_samples > 0 && D.prof_samples <= 100);
	/* 5000 x 8 B and 2000 x 48 B live at p = 1 - exp(-s/4096):
	 * ~9.8 + ~23.7 samples. */
	assert_in_range(D.prof_samples, 30, 37);
	/* Profiling off: nothing. */
	F.prof = false;
	doctor_diagnose(&doc_ops, 1, &D);
	assert_int_equal(D.prof_cost, 0);
	assert_int_equal(D.part[DOCTOR_PROFILING], 0);
}

/* jmdr's screen: the parts, the worst class and the advice, with sizes. */
static void test_jmdr_text(void **state)
{
	static char text[16384];
	struct out out = {.write = out_buf, .arg = text};

	(void)state;
	one_arena();
	F.a[0].pdirty = 2 * MiB / PAGE;
	text[0] = '\0';
	doctor_diagnose(&doc_ops, 1, &D);
	assert_int_equal(answer_doctor(&out, ANSWER_TEXT, &D), 0);
	assert_non_null(strstr(text, "free regions in small slabs"));
	assert_non_null(strstr(text, "dirty pages"));
	assert_non_null(strstr(text, "jmpg returns ~2.0 MiB now"));
	assert_non_null(strstr(text, "size class 48 B is 8% used"));
	assert_non_null(strstr(text, "retained"));
}

/* The suite. */
int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arithmetic),
	    cmocka_unit_test(test_dirty_thresholds),
	    cmocka_unit_test(test_size_class_thresholds),
	    cmocka_unit_test(test_tcache_threshold),
	    cmocka_unit_test(test_no_stats),
	    cmocka_unit_test(test_arenas_come_and_go),
	    cmocka_unit_test(test_narenas),
	    cmocka_unit_test(test_arena_cap),
	    cmocka_unit_test(test_prof_cost),
	    cmocka_unit_test(test_jmdr_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Unit tests of prof/render_pprof.c: a tiny profile of this program's
 * own functions rendered, gunzipped and decoded field by field with a
 * decoder written here from profile.proto, so the wire format is checked
 * without go tool pprof (tests/integration/pprof.sh has the real
 * consumer): the string table, Go's heap sample types, the addresses
 * (the leaf's as dumped, a caller's minus 1), the functions found, an
 * unknown object left unsymbolized with its mapping, and negative values
 * of a difference as int64's ten-byte varints.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "heapprof.h"
#include "render_pprof.h"
#include "symbolize.h"
#include "view.h"

/* Two functions of ours, the stack a profile names. */
__attribute__((noinline)) int pp_test_leaf(int x);
__attribute__((noinline)) int pp_test_caller(int x);

__attribute__((noinline)) int pp_test_leaf(int x)
{
	return x * 3 + (x >> 2);
}

__attribute__((noinline)) int pp_test_caller(int x)
{
	return pp_test_leaf(x + 1) * 7 + pp_test_leaf(x);
}

/* A fake object's mapping: nothing on disk names its addresses. */
#define FAKE_START 0x10000ull
#define FAKE_PATH "/nonexistent/libpp_test_fake.so"

/* What the decoder keeps of a Profile. */
struct dec {
	char *str[256];
	size_t nstr;
	uint64_t stype[4][2], period_type[2], period, dflt;
	size_t nstype;
	uint64_t time, duration, comment[4];
	size_t ncomment;
	struct {
		uint64_t loc[8];
		int64_t val[4];
		size_t nloc, nval;
		uint64_t label_key, label_str; /* its one label, if any */
	} sample[8];
	size_t nsample;
	struct {
		uint64_t id, mapping, addr, fn[4], line[4];
		size_t nline;
	} loc[16];
	size_t nloc;
	struct {
		uint64_t id, name, sys, file;
	} fn[16];
	size_t nfn;
	struct {
		uint64_t id, start, limit, file, build, flags[4];
	} map[64];
	size_t nmap;
};

/* Read a varint at *@p p (before @p end). */
static uint64_t varint(const unsigned char **p, const unsigned char *end)
{
	uint64_t x = 0;
	int shift = 0;

	while (*p < end) {
		unsigned char c = *(*p)++;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return x;
		shift += 7;
		assert_true(shift < 70);
	}
	fail_msg("a varint runs past its message");
	return 0;
}

/* Walk the fields of [p, end): for each, @p fn with its number, wire
 * type, varint value or bytes. */
typedef void field_fn(void *ctx, int field, uint64_t v, const unsigned char *b,
    size_t n);

static void fields(const unsigned char *p, const unsigned char *end,
    field_fn *fn, void *ctx)
{
	uint64_t key, v, n;

	while (p < end) {
		key = varint(&p, end);
		if ((key & 7) == 0) {
			v = varint(&p, end);
			fn(ctx, (int)(key >> 3), v, NULL, 0);
		} else {
			assert_int_equal(key & 7, 2); /* all we write */
			n = varint(&p, end);
			assert_true(n <= (uint64_t)(end - p));
			fn(ctx, (int)(key >> 3), 0, p, (size_t)n);
			p += n;
		}
	}
}

/* The varints of a packed field. */
static size_t packed(const unsigned char *b, size_t n, uint64_t *out,
    size_t max)
{
	const unsigned char *end = b + n;
	size_t k = 0;

	while (b < end) {
		assert_true(k < max);
		out[k++] = varint(&b, end);
	}
	return k;
}

static void on_pair(void *ctx, int f, uint64_t v, const unsigned char *b,
    size_t n)
{
	(void)b;
	(void)n;
	if (f == 1 || f == 2)
		((uint64_t *)ctx)[f - 1] = v;
}

static void on_label(void *ctx, int f, uint64_t v, const unsigned char *b,
    size_t n)
{
	struct dec *d = ctx;

	(void)b;
	(void)n;
	if (f == 1)
		d->sample[d->nsample].label_key = v;
	if (f == 2)
		d->sample[d->nsample].label_str = v;
}

static void on_sample(void *ctx, int f, uint64_t v, const unsigned char *b,
    size_t n)
{
	struct dec *d = ctx;
	uint64_t vals[4];
	size_t i;

	(void)v;
	if (f == 3) {
		assert_int_equal(d->sample[d->nsample].label_key, 0); /* one */
		fields(b, b + n, on_label, d);
	}
	if (f == 1)
		d->sample[d->nsample].nloc =
		    packed(b, n, d->sample[d->nsample].loc, 8);
	if (f == 2) {
		d->sample[d->nsample].nval = packed(b, n, vals, 4);
		for (i = 0; i < d->sample[d->nsample].nval; i++)
			d->sample[d->nsample].val[i] = (int64_t)vals[i];
	}
}

static void on_line(void *ctx, int f, uint64_t v, const unsigned char *b,
    size_t n)
{
	struct dec *d = ctx;

	(void)b;
	(void)n;
	if (f == 1)
		d->loc[d->nloc].fn[d->loc[d->nloc].nline] = v;
	if (f == 2)
		d->loc[d->nloc].line[d->loc[d->nloc].nline] = v;
}

static void on_location(void *ctx, int f, uint64_t v, const unsigned char *b,
    size_t n)
{
	struct dec *d = ctx;

	if (f == 1)
		d->loc[d->nloc].id = v;
	if (f == 2)
		d->loc[d->nloc].mapping = v;
	if (f == 3)
		d->loc[d->nloc].addr = v;
	if (f == 4) {
		assert_true(d->loc[d->nloc].nline < 4);
		fields(b, b + n, on_line, d);
		d->loc[d->nloc].nline++;
	}
}

static void on_function(void *ctx, int f, uint64_t v, const unsigned char *b,
    size_t n)
{
	uint64_t *fn = ctx;

	(void)b;
	(void)n;
	if (f >= 1 && f <= 4)
		fn[f - 1] = v;
}

static void on_mapping(void *ctx, int f, uint64_t v, const unsigned char *b,
    size_t n)
{
	struct dec *d = ctx;

	(void)b;
	(void)n;
	switch (f) {
	case 1:
		d->map[d->nmap].id = v;
		break;
	case 2:
		d->map[d->nmap].start = v;
		break;
	case 3:
		d->map[d->nmap].limit = v;
		break;
	case 5:
		d->map[d->nmap].file = v;
		break;
	case 6:
		d->map[d->nmap].build = v;
		break;
	case 7:
	case 8:
	case 9:
	case 10:
		d->map[d->nmap].flags[f - 7] = v;
		break;
	}
}

static void on_profile(void *ctx, int f, uint64_t v, const unsigned char *b,
    size_t n)
{
	struct dec *d = ctx;

	switch (f) {
	case 1:
		assert_true(d->nstype < 4);
		fields(b, b + n, on_pair, d->stype[d->nstype++]);
		break;
	case 2:
		assert_true(d->nsample < 8);
		fields(b, b + n, on_sample, d);
		d->nsample++;
		break;
	case 3:
		assert_true(d->nmap < 64);
		fields(b, b + n, on_mapping, d);
		d->nmap++;
		break;
	case 4:
		assert_true(d->nloc < 16);
		fields(b, b + n, on_location, d);
		d->nloc++;
		break;
	case 5:
		assert_true(d->nfn < 16);
		fields(b, b + n, on_function, &d->fn[d->nfn++]);
		break;
	case 6:
		assert_true(d->nstr < 256);
		d->str[d->nstr] = strndup((const char *)b, n);
		d->nstr++;
		break;
	case 11:
		fields(b, b + n, on_pair, d->period_type);
		break;
	case 12:
		d->period = v;
		break;
	case 9:
		d->time = v;
		break;
	case 10:
		d->duration = v;
		break;
	case 13:
		assert_true(d->ncomment < 4);
		d->comment[d->ncomment++] = v;
		break;
	case 14:
		d->dflt = v;
		break;
	default:
		fail_msg("field %d: we do not write it", f);
	}
}

/* String @p i of the table. */
static const char *str(const struct dec *d, uint64_t i)
{
	assert_true(i < d->nstr);
	return d->str[i];
}

/* A heap_v2 profile: stacks @p stacks (lines) over this process's own
 * mappings and the fake object's. */
static void make_profile(struct heap_profile *hp, const char *stacks)
{
	char *maps = NULL, *text, err[256];
	size_t len = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	assert_non_null(f);
	assert_true(getdelim(&maps, &len, '\0', f) > 0);
	fclose(f);
	assert_true(
	    asprintf(&text,
	        "heap_v2/524288\n  t*: 0: 0 [0: 0]\n%sMAPPED_LIBRARIES:\n"
	        "%llx-%llx r-xp 00000000 00:00 0 " FAKE_PATH "\n%s",
	        stacks, FAKE_START, FAKE_START + 0x10000, maps) > 0);
	assert_int_equal(heapprof_parse(text, strlen(text), hp, err,
	                     sizeof(err)),
	    0);
	free(text);
	free(maps);
}

/* Render @p hp with @p o, gunzip, decode into @p d. */
static void render_decode_opts(const struct heap_profile *hp,
    const struct pprof_opts *o, struct dec *d)
{
	char *gz = NULL, err[256];
	size_t gzlen = 0;
	unsigned char *pb = malloc(1 << 20);
	struct symbolizer *sym = sym_new(hp, NULL, err, sizeof(err));
	z_stream z = {0};
	FILE *out = open_memstream(&gz, &gzlen);

	assert_non_null(pb);
	assert_non_null(sym);
	assert_non_null(out);
	assert_int_equal(render_pprof(out, hp, sym, o), 0);
	fclose(out);
	sym_free(sym);
	assert_true(gzlen > 18);
	assert_int_equal((unsigned char)gz[0], 0x1f); /* gzip's magic */
	assert_int_equal((unsigned char)gz[1], 0x8b);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = pb;
	z.avail_out = 1 << 20;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	memset(d, 0, sizeof(*d));
	fields(pb, pb + z.total_out, on_profile, d);
	inflateEnd(&z);
	free(pb);
	free(gz);
}

/* Render @p hp as the offline tools do, with nothing known besides. */
static void render_decode(const struct heap_profile *hp, struct dec *d)
{
	render_decode_opts(hp, NULL, d);
}

static void dec_free(struct dec *d)
{
	size_t i;

	for (i = 0; i < d->nstr; i++)
		free(d->str[i]);
}

/* The location of id @p id. */
static size_t loc_of(const struct dec *d, uint64_t id)
{
	size_t i;

	for (i = 0; i < d->nloc; i++)
		if (d->loc[i].id == id)
			return i;
	fail_msg("no location %llu", (unsigned long long)id);
	return 0;
}

/* The name of function @p id. */
static const char *fn_name(const struct dec *d, uint64_t id)
{
	size_t i;

	for (i = 0; i < d->nfn; i++)
		if (d->fn[i].id == id)
			return str(d, d->fn[i].name);
	fail_msg("no function %llu", (unsigned long long)id);
	return NULL;
}

/* The mapping of id @p id. */
static size_t map_of(const struct dec *d, uint64_t id)
{
	size_t i;

	for (i = 0; i < d->nmap; i++)
		if (d->map[i].id == id)
			return i;
	fail_msg("no mapping %llu", (unsigned long long)id);
	return 0;
}

static void test_heap_layout(void **state)
{
	uintptr_t leaf = (uintptr_t)pp_test_leaf + 1;
	uintptr_t caller = (uintptr_t)pp_test_caller + 2;
	char stacks[256];
	struct heap_profile hp;
	struct dec d;
	size_t i, l, m;

	(void)state;
	snprintf(stacks, sizeof(stacks),
	    "@ 0x%llx 0x%llx\n  t*: 2: 1048576 [0: 0]\n"
	    "@ 0x%llx\n  t*: 1: 4096 [0: 0]\n",
	    (unsigned long long)leaf, (unsigned long long)caller,
	    (unsigned long long)FAKE_START + 0x123);
	make_profile(&hp, stacks);
	render_decode(&hp, &d);

	assert_string_equal(str(&d, 0), ""); /* as the format wants */
	assert_int_equal(d.nstype, 2);
	assert_string_equal(str(&d, d.stype[0][0]), "inuse_objects");
	assert_string_equal(str(&d, d.stype[0][1]), "count");
	assert_string_equal(str(&d, d.stype[1][0]), "inuse_space");
	assert_string_equal(str(&d, d.stype[1][1]), "bytes");
	assert_string_equal(str(&d, d.dflt), "inuse_space");
	assert_string_equal(str(&d, d.period_type[0]), "space");
	assert_string_equal(str(&d, d.period_type[1]), "bytes");
	assert_int_equal(d.period, 524288);
	for (i = 1; i < d.nstr; i++) /* each string once */
		for (l = 0; l < i; l++)
			assert_string_not_equal(d.str[i], d.str[l]);

	/* The unsampled values, as jeprof has them. */
	assert_int_equal(d.nsample, 2);
	assert_int_equal(d.sample[0].nval, 2);
	assert_int_equal(d.sample[0].val[0], llround(hp.stacks[0].u_objs));
	assert_int_equal(d.sample[0].val[1], llround(hp.stacks[0].u_bytes));
	assert_true(d.sample[0].val[1] > 1048576); /* unsampled */

	/* Leaf first: the leaf at its pc, the caller at pc - 1. */
	assert_int_equal(d.sample[0].nloc, 2);
	l = loc_of(&d, d.sample[0].loc[0]);
	assert_int_equal(d.loc[l].addr, leaf);
	assert_int_equal(d.loc[l].nline, 1);
	assert_string_equal(fn_name(&d, d.loc[l].fn[0]), "pp_test_leaf");
	m = map_of(&d, d.loc[l].mapping);
	assert_true(d.map[m].start <= leaf && leaf < d.map[m].limit);
	assert_int_equal(d.map[m].flags[0], 1);             /* has_functions */
	assert_true(strlen(str(&d, d.map[m].build)) >= 32); /* hex */
	assert_int_equal(strspn(str(&d, d.map[m].build), "0123456789abcdef"),
	    strlen(str(&d, d.map[m].build)));
	l = loc_of(&d, d.sample[0].loc[1]);
	assert_int_equal(d.loc[l].addr, caller - 1);
	assert_string_equal(fn_name(&d, d.loc[l].fn[0]), "pp_test_caller");

	/* What nothing names: an address and its mapping, for a server. */
	assert_int_equal(d.sample[1].nloc, 1);
	l = loc_of(&d, d.sample[1].loc[0]);
	assert_int_equal(d.loc[l].addr, FAKE_START + 0x123);
	assert_int_equal(d.loc[l].nline, 0);
	m = map_of(&d, d.loc[l].mapping);
	assert_string_equal(str(&d, d.map[m].file), FAKE_PATH);
	assert_int_equal(d.map[m].build, 0);
	assert_int_equal(d.map[m].flags[0], 0);
	assert_int_equal(d.map[m].start, FAKE_START);

	dec_free(&d);
	heapprof_free(&hp);
}

/* Thread labels: a stack two threads hold is two samples, its values
 * split by the threads' lines at the stack's scale, each labelled
 * thread=<its name> (t<N> without one); the values add up as before.
 * Without the option, one sample a stack and no label. */
static void test_thread_labels(void **state)
{
	uintptr_t leaf = (uintptr_t)pp_test_leaf + 1;
	struct pprof_opts labels = {.thread_labels = 1};
	struct heap_profile hp;
	char stacks[512];
	long long objs = 0, bytes = 0;
	double sc;
	struct dec d;
	size_t i;

	(void)state;
	snprintf(stacks, sizeof(stacks),
	    "  t0: 3: 3000 [0: 0] main\n"
	    "  t1: 2: 2000 [0: 0]\n"
	    "@ 0x%llx\n  t*: 4: 4000 [0: 0]\n"
	    "  t0: 3: 3000 [0: 0]\n  t1: 1: 1000 [0: 0]\n"
	    "@ 0x%llx\n  t*: 1: 1000 [0: 0]\n  t1: 1: 1000 [0: 0]\n",
	    (unsigned long long)leaf, (unsigned long long)FAKE_START + 8);
	make_profile(&hp, stacks);
	render_decode_opts(&hp, &labels, &d);
	assert_int_equal(d.nsample, 3);
	for (i = 0; i < d.nsample; i++) {
		assert_string_equal(str(&d, d.sample[i].label_key), "thread");
		objs += d.sample[i].val[0];
		bytes += d.sample[i].val[1];
	}
	assert_string_equal(str(&d, d.sample[0].label_str), "main");
	assert_string_equal(str(&d, d.sample[1].label_str), "t1");
	assert_string_equal(str(&d, d.sample[2].label_str), "t1");
	/* Three quarters of the first stack is main's. */
	sc = heapprof_scale(4, 4000, 524288);
	assert_true(llabs(d.sample[0].val[1] - llround(3000 * sc)) <= 1);
	assert_true(llabs(d.sample[1].val[1] - llround(1000 * sc)) <= 1);
	assert_int_equal(objs, llround(hp.u_objs));
	assert_int_equal(bytes, llround(hp.u_bytes));
	dec_free(&d);

	render_decode(&hp, &d);
	assert_int_equal(d.nsample, 2);
	for (i = 0; i < d.nsample; i++)
		assert_int_equal(d.sample[i].label_key, 0);
	dec_free(&d);
	heapprof_free(&hp);

	/* A name's control bytes and bytes that are not UTF-8 reach no
	 * terminal through go tool pprof -tags: '?' as in the threads
	 * view. */
	snprintf(stacks, sizeof(stacks),
	    "  t0: 1: 1000 [0: 0] a\x1b[2J\xff\xfe\tb\xc3\xa9\n"
	    "@ 0x%llx\n  t*: 1: 1000 [0: 0]\n  t0: 1: 1000 [0: 0]\n",
	    (unsigned long long)leaf);
	make_profile(&hp, stacks);
	render_decode_opts(&hp, &labels, &d);
	assert_int_equal(d.nsample, 1);
	assert_string_equal(str(&d, d.sample[0].label_str),
	    "a?[2J???b\xc3\xa9");
	dec_free(&d);
	heapprof_free(&hp);

	/* Thread lines that claim more than their stack: not split. */
	snprintf(stacks, sizeof(stacks),
	    "@ 0x%llx\n  t*: 1: 1000 [0: 0]\n"
	    "  t0: 1: 1000 [0: 0]\n  t1: 18446744073709551615: 1 [0: 0]\n",
	    (unsigned long long)leaf);
	make_profile(&hp, stacks);
	render_decode_opts(&hp, &labels, &d);
	assert_int_equal(d.nsample, 1);
	assert_int_equal(d.sample[0].label_key, 0);
	assert_int_equal(d.sample[0].val[1], llround(hp.u_bytes));
	dec_free(&d);
	heapprof_free(&hp);
}

/* A difference: what shrank is negative, int64 as ten-byte varints; the
 * values carry their rounding, so they add up to the total. */
static void test_difference(void **state)
{
	char now[256], before[256];
	struct heap_profile hp, base;
	uintptr_t leaf = (uintptr_t)pp_test_leaf + 1;
	struct dec d;
	long long objs = 0, bytes = 0;
	size_t i;

	(void)state;
	snprintf(now, sizeof(now),
	    "@ 0x%llx\n  t*: 1: 100 [0: 0]\n"
	    "@ 0x%llx\n  t*: 3: 300 [0: 0]\n",
	    (unsigned long long)leaf, (unsigned long long)FAKE_START + 8);
	snprintf(before, sizeof(before), "@ 0x%llx\n  t*: 5: 500 [0: 0]\n",
	    (unsigned long long)leaf);
	make_profile(&hp, now);
	make_profile(&base, before);
	assert_int_equal(heapprof_subtract(&hp, &base), 0);
	render_decode(&hp, &d);
	assert_int_equal(d.nsample, 2);
	/* 4 objects of 100 bytes fewer, unsampled: ~ -2 MB. */
	assert_true(d.sample[0].val[0] < 0);
	assert_true(d.sample[0].val[1] < -1000000);
	assert_true(
	    llabs(d.sample[0].val[1] - llround(hp.stacks[0].u_bytes)) <= 1);
	for (i = 0; i < d.nsample; i++) {
		objs += d.sample[i].val[0];
		bytes += d.sample[i].val[1];
	}
	assert_int_equal(objs, llround(hp.u_objs));
	assert_int_equal(bytes, llround(hp.u_bytes));
	dec_free(&d);
	heapprof_free(&hp);
	heapprof_free(&base);
}

/* Go's /allocs: alloc_space first when the process accumulates (zeros
 * included: they are data then); with prof_accum off, no alloc pair, no
 * alloc default, and one comment that says why; the times as given. */
static void test_allocs_layout(void **state)
{
	struct pprof_opts on = {.default_type = "alloc_space",
	    .accum = 1,
	    .time_ns = 1700000000123456789LL,
	    .duration_ns = 5000000000LL};
	struct pprof_opts off = {.default_type = "alloc_space", .accum = -1};
	struct heap_profile hp;
	char stacks[128];
	struct dec d;

	(void)state;
	snprintf(stacks, sizeof(stacks), "@ 0x%llx\n  t*: 1: 100 [0: 0]\n",
	    (unsigned long long)FAKE_START + 8);
	make_profile(&hp, stacks);
	render_decode_opts(&hp, &on, &d);
	assert_int_equal(d.nstype, 4);
	assert_string_equal(str(&d, d.stype[0][0]), "alloc_objects");
	assert_string_equal(str(&d, d.stype[1][0]), "alloc_space");
	assert_string_equal(str(&d, d.dflt), "alloc_space");
	assert_int_equal(d.ncomment, 0);
	assert_int_equal(d.time, 1700000000123456789ULL);
	assert_int_equal(d.duration, 5000000000ULL);
	dec_free(&d);
	render_decode_opts(&hp, &off, &d);
	assert_int_equal(d.nstype, 2);
	assert_string_equal(str(&d, d.dflt), "inuse_space");
	assert_int_equal(d.ncomment, 1);
	assert_non_null(strstr(str(&d, d.comment[0]), "prof_accum is off"));
	assert_int_equal(d.time, 0);
	assert_int_equal(d.duration, 0);
	dec_free(&d);
	heapprof_free(&hp);
}

/* The program as its process is named (Debian's redis-server, a link to
 * redis-check-rdb): the main Mapping's file is the link, pprof's
 * "File:"; a comment names it with the mapped file; the other Mappings
 * keep their paths. view_program words it, or keeps the file's name
 * where the process has no name of its own (offline). */
static void test_program_name(void **state)
{
	uintptr_t leaf = (uintptr_t)pp_test_leaf + 1;
	struct view_args named = {.process = "redis-server"}, none = {0};
	char stacks[128], name[VIEW_PROGRAM_MAX];
	struct pprof_opts o = {.main_file = "/usr/bin/redis-server"};
	struct heap_profile hp;
	struct dec d;
	size_t m;

	(void)state;
	snprintf(stacks, sizeof(stacks),
	    "@ 0x%llx\n  t*: 1: 100 [0: 0]\n@ 0x%llx\n  t*: 1: 100 [0: 0]\n",
	    (unsigned long long)FAKE_START + 8, (unsigned long long)leaf);
	make_profile(&hp, stacks);
	assert_string_equal(view_program(&hp, &none, name, sizeof(name)),
	    FAKE_PATH);
	o.program = view_program(&hp, &named, name, sizeof(name));
	assert_string_equal(o.program, "redis-server (" FAKE_PATH ")");
	render_decode_opts(&hp, &o, &d);
	/* Its own comment, beside the one on prof_accum. */
	assert_int_equal(d.ncomment, 2);
	assert_string_equal(str(&d, d.comment[1]),
	    "redis-server (" FAKE_PATH ")");
	m = map_of(&d, d.loc[loc_of(&d, d.sample[0].loc[0])].mapping);
	assert_int_equal(d.map[m].start, FAKE_START);
	assert_string_equal(str(&d, d.map[m].file), "/usr/bin/redis-server");
	m = map_of(&d, d.loc[loc_of(&d, d.sample[1].loc[0])].mapping);
	assert_true(d.map[m].start <= leaf && leaf < d.map[m].limit);
	assert_string_not_equal(str(&d, d.map[m].file),
	    "/usr/bin/redis-server");
	assert_string_not_equal(str(&d, d.map[m].file), FAKE_PATH);
	dec_free(&d);
	heapprof_free(&hp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_heap_layout),
	    cmocka_unit_test(test_thread_labels),
	    cmocka_unit_test(test_difference),
	    cmocka_unit_test(test_allocs_layout),
	    cmocka_unit_test(test_program_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

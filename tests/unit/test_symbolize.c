/*
 * Unit tests of the symbolizer: a symbolized profile read back (its
 * symbol section parsed by prof/heapprof.c, answered by the table
 * backend, rendered by prof/render.c), the odd shapes jeprof accepts,
 * one clear error for each broken one; and the ELF backend on this very
 * process, against its own function addresses, its build ID as the
 * loader has it in memory, and libdw's answers when built with libdw.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapprof.h"
#include "prof_util.h"
#include "render.h"
#include "symbolize.h"
#include "symbolize_impl.h"

#ifdef JM4LW_HAVE_LIBDW
#include <zlib.h>
#endif

static struct heap_profile hp;
static char err[256];

/* Parse @p text; the result in hp and err. */
static int parse(const char *text)
{
	return heapprof_parse(text, strlen(text), &hp, err, sizeof(err));
}

#define MAPS                                                                   \
	"MAPPED_LIBRARIES:\n"                                                  \
	"00001000-00009000 r-xp 00001000 fd:01 1 /usr/bin/x\n"                 \
	"7f0000000000-7f0000100000 r-xp 00000000 fd:01 2 "                     \
	"/usr/lib/libjemalloc.so.2\n"

/* A symbolized profile as jm4lw-prof and ClickHouse write it: callers'
 * addresses at pc - 1, inline chains callers first. */
static const char symbolized[] = "--- symbol\n"
                                 "binary=/usr/bin/x\n"
                                 "0x0000000000001000 main\n"
                                 "0x1fff outer_fn--mid_fn--leaf_fn\n"
                                 "0x2fff ns::foo(int) const\n"
                                 "0x3fff X::operator--(int)--inner_fn\n"
                                 "0x4000 dup_old\n"
                                 "0x4000 dup_new\n"
                                 "0x6000 malloc\n"
                                 "0x6fff _Z3bari\n"
                                 "---\n"
                                 "--- heap\n"
                                 "heap_v2/524288\n"
                                 "@ 0x1000 0x2000 0x3000 0x4001 0x5000\n"
                                 "  t*: 1: 100 [0: 0]\n"
                                 "@ 0x6000 0x7000 0x2000\n"
                                 "  t*: 1: 1048576 [0: 0]\n" MAPS;

/* A stand-in for __cxa_demangle that knows one name. */
static char *fake_demangle(const char *mangled, char *buf, size_t *len,
    int *status)
{
	(void)buf;
	(void)len;
	*status = strcmp(mangled, "_Z3bari") == 0 ? 0 : -2;
	return *status == 0 ? strdup("bar(int)") : NULL;
}

/* The frames of @p pc, "func|func|..." innermost first. */
static const char *frames(struct symbolizer *s, uint64_t pc, int leaf)
{
	static char buf[512];
	struct sym_frame fr[SYM_INLINE_MAX];
	size_t len = 0;
	int n, i;

	n = sym_lookup(s, pc, leaf, fr, SYM_INLINE_MAX);
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
		    i ? "|" : "", fr[i].func);
	return buf;
}

/* The section is read; the profile after it is the profile. */
static void test_table_parse(void **state)
{
	(void)state;
	assert_int_equal(parse(symbolized), 0);
	assert_true(hp.symbolized);
	assert_string_equal(hp.binary, "/usr/bin/x");
	assert_int_equal(hp.nsyms, 7); /* the two 0x4000 lines are one */
	assert_int_equal(hp.syms[0].addr, 0x1000);
	assert_string_equal(hp.syms[0].names, "main");
	assert_int_equal(hp.syms[4].addr, 0x4000);
	assert_string_equal(hp.syms[4].names, "dup_new"); /* the last */
	assert_int_equal(hp.nstacks, 2);
	assert_int_equal(hp.stacks[0].depth, 5);
	assert_int_equal(hp.nmaps, 2);
	assert_memory_equal(symbolized + hp.profile_offset, "heap_v2/", 8);
	heapprof_free(&hp);
}

/* Each address as its line names it, looked up as jeprof does. */
static void test_table_lookup(void **state)
{
	struct symbolizer *s;
	struct sym_frame fr[SYM_INLINE_MAX];

	(void)state;
	sym_set_demangler(fake_demangle);
	assert_int_equal(parse(symbolized), 0);
	assert_non_null(s = sym_new(&hp, NULL, err, sizeof(err)));
	assert_string_equal(frames(s, 0x1000, 1), "main");
	/* A caller: the line of pc - 1, innermost first, jeprof's marks. */
	assert_string_equal(frames(s, 0x2000, 0),
	    "leaf_fn (inline)|mid_fn (inline)|outer_fn");
	assert_int_equal(sym_lookup(s, 0x2000, 0, fr, SYM_INLINE_MAX), 3);
	assert_string_equal(fr[2].name, "outer_fn");
	assert_null(fr[0].file);
	/* Short names without parameters; the full one kept. */
	assert_string_equal(frames(s, 0x3000, 0), "ns::foo");
	sym_lookup(s, 0x3000, 0, fr, 1);
	assert_string_equal(fr[0].name, "ns::foo(int) const");
	/* operator-- is a name, not a separator. */
	assert_string_equal(frames(s, 0x4000, 0),
	    "inner_fn (inline)|X::operator--");
	assert_string_equal(frames(s, 0x4001, 0), "dup_new");
	/* Mangled names are demangled as an object's would be. */
	assert_string_equal(frames(s, 0x7000, 0), "bar");
	/* Not in the table: hex, of the address looked up. */
	assert_string_equal(frames(s, 0x5000, 0), "0x4fff");
	assert_string_equal(frames(s, 0x1000, 0), "0xfff");
	assert_string_equal(frames(s, 0x5000, 1), "0x5000");
	/* Twice, from the cache. */
	assert_string_equal(frames(s, 0x2000, 0),
	    "leaf_fn (inline)|mid_fn (inline)|outer_fn");
	/* The allocator: by its library's mapping. */
	assert_true(sym_in_allocator(s, 0x7f0000000100));
	assert_false(sym_in_allocator(s, 0x1000));
	assert_int_equal(sym_build_id(s, &hp.maps[0],
	                     &(const unsigned char *){NULL}),
	    0);
	sym_free(s);
	heapprof_free(&hp);
	sym_set_demangler(NULL);
}

/* A demangler whose names run past a kilobyte, as C++ templates' do. */
static char *long_demangle(const char *mangled, char *buf, size_t *len,
    int *status)
{
	char *d = malloc(3000 + sizeof("(int)"));

	(void)mangled;
	(void)buf;
	(void)len;
	if (d == NULL)
		return NULL;
	memset(d, 'a', 3000);
	memcpy(d + 3000, "(int)", sizeof("(int)"));
	*status = 0;
	return d;
}

/* A name's forms are whole, however long: they were cut at 1023 bytes,
 * and a cut name does not read back as the same function. */
static void test_long_name(void **state)
{
	struct symbolizer *s;
	struct sym_frame fr[SYM_INLINE_MAX];

	(void)state;
	sym_set_demangler(long_demangle);
	assert_int_equal(parse(symbolized), 0);
	assert_non_null(s = sym_new(&hp, NULL, err, sizeof(err)));
	assert_int_equal(sym_lookup(s, 0x7000, 0, fr, SYM_INLINE_MAX), 1);
	assert_int_equal(strlen(fr[0].func), 3000);
	assert_int_equal(strlen(fr[0].name), 3005);
	sym_free(s);
	heapprof_free(&hp);
	sym_set_demangler(NULL);
}

/* What the renderers make of it: the inline frames count, the
 * allocator's entry point and what it called are cut. */
static void test_table_render(void **state)
{
	struct symbolizer *s;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	sym_set_demangler(fake_demangle);
	assert_int_equal(parse(symbolized), 0);
	assert_non_null(s = sym_new(&hp, NULL, err, sizeof(err)));
	assert_non_null(out = open_memstream(&text, &len));
	assert_int_equal(render_collapsed(out, &hp, s, RENDER_OBJECTS), 0);
	fclose(out);
	/* Unsampled object counts, 1 / (1 - exp(-(B/N)/period)) each:
	 * 1 / (1 - exp(-100/524288)) = 5243.4 and 1 / (1 - exp(-2)) =
	 * 1.16; callers first; malloc and what it called cut. */
	assert_string_equal(text,
	    "0x4fff;dup_new;ns::foo;outer_fn;mid_fn (inline);leaf_fn "
	    "(inline);main 5243\n"
	    "outer_fn;mid_fn (inline);leaf_fn (inline);bar 1\n");
	free(text);
	sym_free(s);
	heapprof_free(&hp);
	sym_set_demangler(NULL);
}

/* A symbolized profile with the allocator's frames leading its stacks,
 * as a dump of a process on a stripped libjemalloc has them (its
 * internal functions reached by tail calls: no name jeprof cuts). */
static const char alloc_led[] =
    "--- symbol\n"
    "0x1fff outer_fn\n"
    "0xfff main\n"
    "0x7f0000000100 libjemalloc.so.2+0x100\n"
    "0x7f00000001ff libjemalloc.so.2+0x1c0\n"
    "0x7f00000002ff libjemalloc.so.2+0x2c0\n"
    "---\n"
    "--- heap\n"
    "heap_v2/524288\n"
    "  t*: 2: 200 [0: 0]\n"
    "@ 0x7f0000000100 0x7f0000000200 0x2000 0x1000\n"
    "  t*: 1: 100 [0: 0]\n"
    "@ 0x7f0000000100 0x7f0000000300\n"
    "  t*: 1: 100 [0: 0]\n" MAPS;

/* The symbolized file we write cuts them off each stack (its new leaf at
 * pc - 1, named as the caller it is), as every format of ours does, so
 * jeprof reading it shows the stacks we show; a stack of the allocator's
 * frames only stays whole. Before render_dump, jeprof put
 * "libjemalloc.so.2+0x..." at the top of every stack. */
static void test_symbolized_cuts_allocator(void **state)
{
	struct symbolizer *s;
	const char *heap;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	assert_int_equal(parse(alloc_led), 0);
	assert_non_null(s = sym_new(&hp, NULL, err, sizeof(err)));
	heap = alloc_led + hp.profile_offset;
	assert_non_null(out = open_memstream(&text, &len));
	assert_int_equal(render_symbolized(out, &hp, s, "/usr/bin/x", heap,
	                     strlen(heap)),
	    0);
	fclose(out);
	assert_string_equal(text,
	    "--- symbol\n"
	    "binary=/usr/bin/x\n"
	    "0x1fff outer_fn\n"
	    "0xfff main\n"
	    "0x7f0000000100 libjemalloc.so.2+0x100\n"
	    "0x7f00000002ff libjemalloc.so.2+0x2c0\n"
	    "---\n"
	    "--- heap\n"
	    "heap_v2/524288\n"
	    "  t*: 2: 200 [0: 0]\n"
	    "@ 0x1fff 0x1000\n"
	    "  t*: 1: 100 [0: 0]\n"
	    "@ 0x7f0000000100 0x7f0000000300\n"
	    "  t*: 1: 100 [0: 0]\n" MAPS);
	sym_free(s);
	heapprof_free(&hp);
	/* Read back: the same totals, the same stacks, and cut again it
	 * is itself. */
	assert_int_equal(heapprof_parse(text, len, &hp, err, sizeof(err)), 0);
	assert_int_equal(hp.nstacks, 2);
	assert_int_equal(hp.stacks[0].depth, 2);
	assert_int_equal(hp.stacks[0].pc[0], 0x1fff);
	assert_non_null(s = sym_new(&hp, NULL, err, sizeof(err)));
	{
		char *again = NULL;
		size_t alen = 0;
		heap = text + hp.profile_offset;
		assert_non_null(out = open_memstream(&again, &alen));
		assert_int_equal(render_symbolized(out, &hp, s, "/usr/bin/x",
		                     heap, strlen(heap)),
		    0);
		fclose(out);
		assert_string_equal(strstr(again, "--- heap\n"),
		    strstr(text, "--- heap\n"));
		free(again);
	}
	sym_free(s);
	heapprof_free(&hp);
	free(text);
}

/* Shapes jeprof reads too. */
static void test_table_odd(void **state)
{
	struct symbolizer *s;

	(void)state;
	/* Commands before the marker, CRLF, other variables and lines,
	 * no "--- heap" (the --- line ends the symbols), empty pieces. */
	assert_int_equal(parse("%warn something\r\n"
	                       "---symbol\r\n"
	                       "build=1234\r\n"
	                       "whatever\r\n"
	                       "0x10\ta----b\r\n"
	                       "--- heap\r\n"
	                       "heap_v2/4096\r\n"
	                       "@ 0x11\r\n  t*: 1: 8 [0: 0]\r\n"
	                       "MAPPED_LIBRARIES:\r\n"),
	    0);
	assert_true(hp.symbolized);
	assert_null(hp.binary);
	assert_non_null(s = sym_new(&hp, NULL, err, sizeof(err)));
	assert_string_equal(frames(s, 0x11, 0), "b (inline)|a");
	sym_free(s);
	heapprof_free(&hp);
	/* No symbols at all, a growth marker: every address in hex. */
	assert_int_equal(parse("--- symbol\n---\n--- growth\nheap_v2/4096\n"
	                       "@ 0x11\n  t*: 1: 8 [0: 0]\n" MAPS),
	    0);
	assert_int_equal(hp.nsyms, 0);
	assert_non_null(s = sym_new(&hp, NULL, err, sizeof(err)));
	assert_string_equal(frames(s, 0x11, 1), "0x11");
	sym_free(s);
	heapprof_free(&hp);
	/* A bare "--- heap" before a raw profile: not symbolized. */
	assert_int_equal(parse("--- heap\nheap_v2/4096\n" MAPS), 0);
	assert_false(hp.symbolized);
	heapprof_free(&hp);
}

/* Each broken symbolized profile: -1, one line, nothing kept. */
static void test_table_errors(void **state)
{
	static const struct {
		const char *in, *why;
	} bad[] = {
	    {"--- symbol\n0x1 f\n",
	        "the symbolized profile is cut short (its symbol section has "
	        "no --- line)"},
	    {"--- symbol\n0x1 f",
	        "the symbolized profile is cut short (its symbol section has "
	        "no --- line)"},
	    {"--- symbol\n",
	        "the symbolized profile is cut short (its symbol "
	        "section has no --- line)"},
	    {"--- symbol\n0xzz f\n---\n",
	        "line 2: a symbol's address is not an address"},
	    {"--- symbol\n0x12x f\n---\n",
	        "line 2: a symbol's address is not an address"},
	    {"--- symbol\n0x11112222333344445 f\n---\n",
	        "line 2: a symbol's address is not an address"},
	    {"--- symbol\n0x12\n---\n",
	        "line 2: a symbol's address with no name"},
	    {"--- symbol\n0x12  \t\n---\n",
	        "line 2: a symbol's address with no name"},
	    {"--- symbol\n---\n--- profile\n\x01\x02\x03",
	        "line 3: the symbolized profile holds no jemalloc heap profile "
	        "(no heap_v2/ header after its symbols)"},
	    {"--- symbol\n---\n",
	        "line 2: the symbolized profile holds no jemalloc heap profile "
	        "(no heap_v2/ header after its symbols)"},
	    {"--- symbol\n0x1 f\n---\n--- heap\nheap_v2/4096\n@ 0x1 0x",
	        "the profile is cut short (it ends inside a line, with no "
	        "MAPPED_LIBRARIES section)"},
	    {"--- symbol\n0x1 f\n---\n--- heap\nheap_v2/4096\n@ 0x1\n",
	        "the profile is cut short (no MAPPED_LIBRARIES section at its "
	        "end)"},
	    {"\x7f"
	     "ELF\x02\x01\x01",
	        "not a jemalloc heap profile (no heap_v2/ header)"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (heapprof_parse(bad[i].in, strlen(bad[i].in), &hp, err,
		        sizeof(err)) != -1)
			fail_msg("case %zu parsed", i);
		assert_string_equal(err, bad[i].why);
		assert_null(strchr(err, '\n'));
		assert_null(hp.syms);
		assert_int_equal(hp.nsyms, 0);
		assert_false(hp.symbolized);
	}
}

/* --base between two symbolized profiles: the base's names for the
 * stacks only it has. */
static void test_table_subtract(void **state)
{
	struct heap_profile base;
	struct symbolizer *s;
	static const char a[] = "--- symbol\n0x1fff old_name\n0x2fff gone\n"
	                        "---\nheap_v2/1\n@ 0x1 0x3000\n"
	                        "  t*: 1: 8 [0: 0]\n" MAPS;
	static const char b[] = "--- symbol\n0x1fff new_name\n---\n"
	                        "heap_v2/1\n@ 0x1 0x2000\n"
	                        "  t*: 1: 8 [0: 0]\n" MAPS;

	(void)state;
	assert_int_equal(heapprof_parse(a, strlen(a), &base, err, sizeof(err)),
	    0);
	assert_int_equal(parse(b), 0);
	assert_int_equal(heapprof_subtract(&hp, &base), 0);
	assert_int_equal(hp.nsyms, 2);
	assert_non_null(s = sym_new(&hp, NULL, err, sizeof(err)));
	assert_string_equal(frames(s, 0x2000, 0), "new_name");
	assert_string_equal(frames(s, 0x3000, 0), "gone");
	sym_free(s);
	heapprof_free(&hp);
	heapprof_free(&base);
}

/* Functions of this program to look up: not inlined, not merged. */
__attribute__((noinline, used)) int sym_test_target_a(int x);
__attribute__((noinline, used)) int sym_test_target_b(int x);

int sym_test_target_a(int x)
{
	return x * 3 + (int)getpid();
}

int sym_test_target_b(int x)
{
	return sym_test_target_a(x) + 7;
}

/* This process as a profile: its maps and one stack of @p n pcs. */
static void self_profile(const uint64_t *pcs, int n)
{
	char *text = NULL, line[512];
	size_t len = 0;
	FILE *out, *maps;
	int i;

	assert_non_null(out = open_memstream(&text, &len));
	fprintf(out, "heap_v2/1\n@");
	for (i = 0; i < n; i++)
		fprintf(out, " 0x%llx", (unsigned long long)pcs[i]);
	fprintf(out, "\n  t*: 1: 8 [0: 0]\nMAPPED_LIBRARIES:\n");
	assert_non_null(maps = fopen("/proc/self/maps", "re"));
	while (fgets(line, sizeof(line), maps) != NULL)
		fputs(line, out);
	fclose(maps);
	fclose(out);
	assert_int_equal(heapprof_parse(text, len, &hp, err, sizeof(err)), 0);
	free(text);
}

/* dl_iterate_phdr: the main program's build ID, from its notes in
 * memory (the first object the loader reports). */
static int self_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct {
		const unsigned char *id;
		size_t len;
	} *want = arg;
	const ElfW(Nhdr) * nh;
	const unsigned char *p, *end;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(info->dlpi_addr +
		    info->dlpi_phdr[i].p_vaddr);
		end = p + info->dlpi_phdr[i].p_memsz;
		while (p + sizeof(*nh) <= end) {
			nh = (const void *)p;
			p += sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID) {
				want->id = p;
				want->len = nh->n_descsz;
				return 1;
			}
			p += (nh->n_descsz + 3) & ~3u;
		}
	}
	return 1; /* only the first: the program */
}

/* The ELF backend names this program's functions, at a leaf and at a
 * return address; finds its build ID; and libc is not the allocator. */
static void test_elf_self(void **state)
{
	struct {
		const unsigned char *id;
		size_t len;
	} mem = {NULL, 0};
	uint64_t pcs[3] = {(uintptr_t)sym_test_target_a,
	    (uintptr_t)sym_test_target_b + 4, (uintptr_t)getpid};
	struct symbolizer *s;
	const unsigned char *bits;
	const struct hp_map *main_map = NULL;
	size_t i, n;

	(void)state;
	assert_int_equal(sym_test_target_b(1) > 0, 1);
	self_profile(pcs, 3);
	assert_non_null(s = sym_elf_open(&hp, NULL, 0, err, sizeof(err)));
	assert_string_equal(frames(s, pcs[0], 1), "sym_test_target_a");
	assert_string_equal(frames(s, pcs[1], 0), "sym_test_target_b");
	assert_non_null(strstr(frames(s, pcs[2], 1), "getpid"));
	assert_false(sym_in_allocator(s, pcs[2]));
	assert_false(sym_in_allocator(s, pcs[0]));
	for (i = 0; i < hp.nmaps && main_map == NULL; i++)
		if (hp.maps[i].exec && hp.maps[i].path[0] == '/')
			main_map = &hp.maps[i];
	assert_non_null(main_map);
	dl_iterate_phdr(self_build_id, &mem);
	n = sym_build_id(s, main_map, &bits);
	assert_int_equal(n, mem.len);
	assert_true(n >= 16);
	assert_memory_equal(bits, mem.id, n);
	sym_free(s);
	/* In-process, through /proc/self/map_files: the same. */
	assert_non_null(s = sym_new_self(&hp, err, sizeof(err)));
	assert_string_equal(frames(s, pcs[0], 1), "sym_test_target_a");
	sym_free(s);
	heapprof_free(&hp);
}

/* Where a second copy of libc goes in the profile's maps: far from
 * anything a process maps (16 TiB up), as Graphviz's dlmopen namespace
 * maps its own libc.so.6 elsewhere. */
#define LIBC_COPY_BASE 0x100000000000ULL

/*
 * This process as a profile whose maps list libc twice: first a copy at
 * LIBC_COPY_BASE (a namespace's copy comes first in the maps when mapped
 * lower), then this process's own. The stack: @p pc, and @p pc as the
 * copy would have it, into *@p copy.
 */
static void twice_profile(uint64_t pc, uint64_t *copy)
{
	char *text = NULL, line[512], path[256];
	unsigned long long lo, hi, base = 0, off;
	size_t len = 0;
	FILE *out, *maps;
	int pass, in;

	assert_non_null(out = open_memstream(&text, &len));
	/* libc's path and load base: the mapping holding @p pc. */
	path[0] = '\0';
	assert_non_null(maps = fopen("/proc/self/maps", "re"));
	while (fgets(line, sizeof(line), maps) != NULL)
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %255s", &lo, &hi,
		        &off, path) == 4 &&
		    pc >= lo && pc < hi) {
			base = lo - off;
			break;
		}
	fclose(maps);
	assert_true(base != 0 && path[0] == '/');
	*copy = pc - base + LIBC_COPY_BASE;
	fprintf(out, "heap_v2/1\n@ 0x%llx 0x%llx\n  t*: 1: 8 [0: 0]\n",
	    (unsigned long long)pc, (unsigned long long)*copy);
	fprintf(out, "MAPPED_LIBRARIES:\n");
	for (pass = 0; pass < 2; pass++) {
		assert_non_null(maps = fopen("/proc/self/maps", "re"));
		while (fgets(line, sizeof(line), maps) != NULL) {
			in = strstr(line, path) != NULL;
			if (pass == 1)
				fputs(line, out);
			else if (in && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
				fprintf(out, "%llx-%llx %s",
				    lo - base + LIBC_COPY_BASE,
				    hi - base + LIBC_COPY_BASE,
				    strchr(line, ' ') + 1);
		}
		fclose(maps);
	}
	fclose(out);
	assert_int_equal(heapprof_parse(text, len, &hp, err, sizeof(err)), 0);
	free(text);
}

/* A library mapped twice at two bases (libc.so.6 of the process and of
 * Graphviz's dlmopen namespace, after the first call graph) is two
 * objects: each address is named through the copy that holds it, with
 * that copy's base, by every backend; the copy listed first does not
 * stand for the other. */
static void test_mapped_twice(void **state)
{
	sym_open_fn *const open[] = {
	    sym_elf_open,
#ifdef JM4LW_HAVE_LIBDW
	    sym_dwfl_open,
#endif
	};
	uint64_t pc = (uintptr_t)getpid, copy;
	struct symbolizer *s;
	size_t i;

	(void)state;
	twice_profile(pc, &copy);
	for (i = 0; i < sizeof(open) / sizeof(open[0]); i++) {
		assert_non_null(s = open[i](&hp, NULL, 0, err, sizeof(err)));
		assert_non_null(strstr(frames(s, pc, 1), "getpid"));
		assert_non_null(strstr(frames(s, copy, 1), "getpid"));
		sym_free(s);
	}
	heapprof_free(&hp);
}

/* Built with libdw: the two backends agree on names and build IDs. */
static void test_elf_as_libdw(void **state)
{
#ifdef JM4LW_HAVE_LIBDW
	/* This program's functions: a library's aliases (fopen,
	 * _IO_new_fopen, fopen@@GLIBC_2.2.5 at one address) are picked in
	 * an order libdwfl does not promise. */
	uint64_t pcs[2] = {(uintptr_t)sym_test_target_a,
	    (uintptr_t)sym_test_target_b + 4};
	struct symbolizer *e, *d;
	struct sym_frame fe[SYM_INLINE_MAX], fd[SYM_INLINE_MAX];
	const unsigned char *be, *bd;
	size_t i, ne, nd;
	int k, n;

	(void)state;
	assert_string_equal(sym_backend(), "libdw");
	self_profile(pcs, 2);
	assert_non_null(e = sym_elf_open(&hp, NULL, 0, err, sizeof(err)));
	assert_non_null(d = sym_dwfl_open(&hp, NULL, 0, err, sizeof(err)));
	for (k = 0; k < 2; k++) {
		sym_lookup(e, pcs[k], k != 1, fe, SYM_INLINE_MAX);
		/* libdw's outermost frame is the function the symbol
		 * table names. */
		n = sym_lookup(d, pcs[k], k != 1, fd, SYM_INLINE_MAX);
		assert_string_equal(fe[0].func, fd[n - 1].func);
	}
	for (i = 0; i < hp.nmaps; i++) {
		if (!hp.maps[i].exec || hp.maps[i].path[0] != '/')
			continue;
		ne = sym_build_id(e, &hp.maps[i], &be);
		nd = sym_build_id(d, &hp.maps[i], &bd);
		assert_int_equal(ne, nd);
		if (ne > 0)
			assert_memory_equal(be, bd, ne);
	}
	sym_free(e);
	sym_free(d);
	heapprof_free(&hp);
#else
	(void)state;
	assert_string_equal(sym_backend(), "elf");
	skip();
#endif
}

/*
 * libc's frames through dw_part (its debug file's compressed
 * DWARF inflated as far as the profile needs: the libdw backend without
 * file:line) are the frames libdwfl's whole DWARF gives (the backend
 * with file:line, which does not take dw_part), inline chains included,
 * at addresses spread over several of libc's units. Without libc6-dbg
 * both read libc's symbol table, and agree as well.
 */
static void test_dw_part_as_libdwfl(void **state)
{
#ifdef JM4LW_HAVE_LIBDW
	static const int offs[] = {0, 5, 17, 40, 77, 130, 201};
	const uintptr_t fns[] = {(uintptr_t)getpid, (uintptr_t)qsort,
	    (uintptr_t)strtol, (uintptr_t)fopen, (uintptr_t)snprintf,
	    (uintptr_t)atexit, (uintptr_t)open_memstream};
	enum { NF = sizeof(fns) / sizeof(fns[0]), NO = 7 };
	uint64_t pcs[NF * NO];
	struct symbolizer *part, *whole;
	char a[512];
	int i, k;

	(void)state;
	for (i = 0; i < NF; i++)
		for (k = 0; k < NO; k++)
			pcs[i * NO + k] = fns[i] + (uintptr_t)offs[k];
	self_profile(pcs, NF * NO);
	assert_non_null(part = sym_dwfl_open(&hp, NULL, 0, err, sizeof(err)));
	assert_non_null(whole = sym_dwfl_open(&hp, NULL, 0, err, sizeof(err)));
	sym_want_lines(whole);
	for (i = 0; i < NF * NO; i++) {
		snprintf(a, sizeof(a), "%s", frames(part, pcs[i], 1));
		assert_string_equal(a, frames(whole, pcs[i], 1));
	}
	sym_free(part);
	sym_free(whole);
	heapprof_free(&hp);
#else
	(void)state;
	skip();
#endif
}

#ifdef JM4LW_HAVE_LIBDW
/* Run the shell command @p fmt, ...; assert it succeeded. */
__attribute__((format(printf, 1, 2))) static void run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

/* @p path's bytes, in a buffer of *@p len (malloc'd). */
static unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *buf;
	struct stat sb;
	FILE *f;

	assert_non_null(f = fopen(path, "rb"));
	assert_int_equal(fstat(fileno(f), &sb), 0);
	assert_non_null(buf = malloc((size_t)sb.st_size + 1));
	assert_int_equal(fread(buf, 1, (size_t)sb.st_size, f), sb.st_size);
	fclose(f);
	*len = (size_t)sb.st_size;
	return buf;
}

/* Write @p len bytes of @p buf to @p path. */
static void spill(const char *path, const void *buf, size_t len)
{
	FILE *f;

	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}
#endif

/*
 * An object whose .gnu_debuglink names an absolute
 * path (written by hand: objcopy keeps a base name only). This program
 * stripped of all but .dynsym (sym_test_target_a is not there), its
 * debug file linked by absolute name: the right file names the
 * function; a file of another build (the same one with a byte of its
 * build ID changed) and random bytes are refused, so nothing names it,
 * and nothing leaks (ASan's LSan).
 */
static void test_abs_debuglink(void **state)
{
#ifdef JM4LW_HAVE_LIBDW
	struct {
		const unsigned char *id;
		size_t len;
	} mem = {NULL, 0};
	char dir[] = "/tmp/jm4lw-abslink.XXXXXX", exe[4096], obj[128],
	     good[128], link[128], sect[128], line[4608], *text = NULL;
	unsigned char *buf, *at, sec[256];
	uint64_t pc = (uintptr_t)sym_test_target_a;
	struct symbolizer *s;
	size_t len, n, tlen = 0, k;
	FILE *out, *maps;
	ssize_t el;
	uLong crc;
	int c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_true(
	    (el = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0);
	exe[el] = '\0';
	snprintf(obj, sizeof(obj), "%s/obj", dir);
	snprintf(good, sizeof(good), "%s/good.debug", dir);
	snprintf(link, sizeof(link), "%s/linked.debug", dir);
	snprintf(sect, sizeof(sect), "%s/section", dir);
	run("objcopy --only-keep-debug '%s' '%s'", exe, good);
	run("strip --strip-all -o '%s' '%s'", obj, exe);
	/* The section: the name, NUL, padding to 4, the good file's CRC. */
	buf = slurp(good, &len);
	crc = crc32(crc32(0, Z_NULL, 0), buf, (uInt)len);
	n = strlen(link) + 1;
	memcpy(sec, link, n);
	while (n % 4 != 0)
		sec[n++] = '\0';
	for (k = 0; k < 4; k++)
		sec[n++] = (unsigned char)(crc >> (8 * k));
	spill(sect, sec, n);
	run("objcopy --add-section .gnu_debuglink='%s' '%s'", sect, obj);
	/* This process's maps, the program's lines naming the copy. */
	assert_non_null(out = open_memstream(&text, &tlen));
	fprintf(out,
	    "heap_v2/1\n@ 0x%llx\n  t*: 1: 8 [0: 0]\n"
	    "MAPPED_LIBRARIES:\n",
	    (unsigned long long)pc);
	assert_non_null(maps = fopen("/proc/self/maps", "re"));
	while (fgets(line, sizeof(line), maps) != NULL) {
		n = strlen(line);
		if (n > strlen(exe) + 1 &&
		    strncmp(line + n - 1 - strlen(exe), exe, strlen(exe)) ==
		        0 &&
		    line[n - 1] == '\n')
			fprintf(out, "%.*s%s\n", (int)(n - 1 - strlen(exe)),
			    line, obj);
		else
			fputs(line, out);
	}
	fclose(maps);
	fclose(out);
	assert_int_equal(heapprof_parse(text, tlen, &hp, err, sizeof(err)), 0);
	free(text);
	for (c = 0; c < 3; c++) {
		if (c == 0) {
			spill(link, buf, len);
		} else if (c == 1) {
			/* Another build: one byte of its build ID changed. */
			dl_iterate_phdr(self_build_id, &mem);
			assert_true(mem.len >= 16);
			at = memmem(buf, len, mem.id, mem.len);
			assert_non_null(at);
			at[mem.len - 1] ^= 0x5a;
			spill(link, buf, len);
		} else {
			for (k = 0; k < len; k++)
				buf[k] = (unsigned char)(k * 131 + 7);
			spill(link, buf, len);
		}
		assert_non_null(
		    s = sym_dwfl_open(&hp, NULL, 0, err, sizeof(err)));
		if (c == 0)
			assert_string_equal(frames(s, pc, 1),
			    "sym_test_target_a");
		else
			assert_null(
			    strstr(frames(s, pc, 1), "sym_test_target"));
		sym_free(s);
	}
	free(buf);
	heapprof_free(&hp);
	run("rm -rf '%s'", dir);
#else
	(void)state;
	skip();
#endif
}

/* A file that is no ELF, or not there: its addresses stay hex. */
static void test_elf_missing(void **state)
{
	struct symbolizer *s;

	(void)state;
	assert_int_equal(parse("heap_v2/1\n@ 0x1010\n  t*: 1: 8 [0: 0]\n"
	                       "MAPPED_LIBRARIES:\n"
	                       "00001000-00009000 r-xp 00000000 fd:01 1 "
	                       "/proc/self/status\n"
	                       "00010000-00019000 r-xp 00000000 fd:01 1 "
	                       "/nonexistent/lib.so\n"),
	    0);
	assert_non_null(s = sym_elf_open(&hp, NULL, 0, err, sizeof(err)));
	assert_string_equal(frames(s, 0x1010, 1), "0x1010");
	assert_string_equal(frames(s, 0x10010, 1), "0x10010");
	assert_int_equal(sym_build_id(s, &hp.maps[0],
	                     &(const unsigned char *){NULL}),
	    0);
	sym_free(s);
	heapprof_free(&hp);
}

/* The bytes of descriptor @p fd's file, in a buffer of @p n. */
static void read_all(int fd, char *buf, size_t n)
{
	assert_int_equal(pread(fd, buf, n, 0), (ssize_t)n);
}

/* Write @p text to @p path whole, through a new file renamed over it (a
 * new inode, as a deploy's install does) when @p rename_over. */
static void put_file(const char *path, const char *text, int rename_over)
{
	char tmp[64];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	assert_non_null(f = fopen(rename_over ? tmp : path, "wb"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	if (rename_over)
		assert_int_equal(rename(tmp, path), 0);
}

/*
 * The sealed copies are cached: a second symbolizer over this very
 * program copies nothing; a file unchanged gets the same bytes on a
 * descriptor of its own; a file rewritten in place (a new mtime) or
 * replaced (a new inode) is copied again and read as it is now, while a
 * copy handed out before keeps the old bytes, never faulting; past the
 * cap nothing is kept.
 */
static void test_object_cache(void **state)
{
	const char *path = "objcache.txt";
	uint64_t pcs[1] = {(uintptr_t)sym_test_target_a}, c;
	struct timespec ts[2] = {{1000000, 0}, {1000000, 0}};
	struct symbolizer *s;
	char buf[16];
	const char *m;
	int a, b;

	(void)state;
	self_profile(pcs, 1);
	assert_non_null(s = sym_elf_open(&hp, NULL, 0, err, sizeof(err)));
	sym_free(s);
	c = prof_objcache_copies();
	assert_non_null(s = sym_elf_open(&hp, NULL, 0, err, sizeof(err)));
	assert_string_equal(frames(s, pcs[0], 1), "sym_test_target_a");
	sym_free(s);
	assert_int_equal(prof_objcache_copies(), c);
	/* The in-process symbolizer (libdwfl's where built with it) too. */
	assert_non_null(s = sym_new_self(&hp, err, sizeof(err)));
	sym_free(s);
	c = prof_objcache_copies();
	assert_non_null(s = sym_new_self(&hp, err, sizeof(err)));
	assert_string_equal(frames(s, pcs[0], 1), "sym_test_target_a");
	sym_free(s);
	assert_int_equal(prof_objcache_copies(), c);
	heapprof_free(&hp);

	put_file(path, "first version\n", 0);
	assert_int_not_equal(a = prof_open_object(path, err, sizeof(err)), -1);
	assert_int_equal(prof_objcache_copies(), c + 1);
	assert_int_not_equal(b = prof_open_object(path, err, sizeof(err)), -1);
	assert_int_equal(prof_objcache_copies(), c + 1);
	assert_int_not_equal(a, b);
	read_all(b, buf, 14);
	assert_memory_equal(buf, "first version\n", 14);
	close(b);
	/* Rewritten in place, same size, its mtime set back to one it
	 * never had: another copy all the same (mtime and ctime moved). */
	assert_non_null(m = mmap(NULL, 14, PROT_READ, MAP_PRIVATE, a, 0));
	assert_int_equal(truncate(path, 0), 0);
	put_file(path, "other version\n", 0);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	assert_int_not_equal(b = prof_open_object(path, err, sizeof(err)), -1);
	assert_int_equal(prof_objcache_copies(), c + 2);
	read_all(b, buf, 14);
	assert_memory_equal(buf, "other version\n", 14);
	assert_memory_equal(m, "first version\n", 14); /* no SIGBUS */
	munmap((void *)m, 14);
	close(a);
	close(b);
	/* Replaced by a new file: another copy. */
	put_file(path, "third version\n", 1);
	assert_int_not_equal(b = prof_open_object(path, err, sizeof(err)), -1);
	assert_int_equal(prof_objcache_copies(), c + 3);
	read_all(b, buf, 14);
	assert_memory_equal(buf, "third version\n", 14);
	close(b);
	assert_int_not_equal(b = prof_open_object(path, err, sizeof(err)), -1);
	assert_int_equal(prof_objcache_copies(), c + 3);
	close(b);
	/* A cap of 0 keeps nothing: each open copies. */
	assert_int_equal(prof_objcache_set_cap(0), PROF_OBJCACHE_CAP_DEFAULT);
	assert_int_not_equal(b = prof_open_object(path, err, sizeof(err)), -1);
	close(b);
	assert_int_not_equal(b = prof_open_object(path, err, sizeof(err)), -1);
	close(b);
	assert_int_equal(prof_objcache_copies(), c + 5);
	prof_objcache_set_cap(PROF_OBJCACHE_CAP_DEFAULT);
	prof_objcache_clear();
	unlink(path);
}

/* A low RLIMIT_NOFILE caps the copies kept open (one slot per 16
 * descriptors): with 16, one slot, so a second object's copy evicts the
 * first's; under 16 nothing is kept. */
static void test_object_cache_fds(void **state)
{
	const char *p1 = "objcache1.txt", *p2 = "objcache2.txt";
	struct rlimit old, low;
	uint64_t c;
	int fd;

	(void)state;
	prof_objcache_clear();
	put_file(p1, "one\n", 0);
	put_file(p2, "two\n", 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 16;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	c = prof_objcache_copies();
	assert_int_not_equal(fd = prof_open_object(p1, err, sizeof(err)), -1);
	close(fd);
	assert_int_not_equal(fd = prof_open_object(p1, err, sizeof(err)), -1);
	close(fd);
	assert_int_equal(prof_objcache_copies(), c + 1); /* kept */
	assert_int_not_equal(fd = prof_open_object(p2, err, sizeof(err)), -1);
	close(fd);
	assert_int_not_equal(fd = prof_open_object(p1, err, sizeof(err)), -1);
	close(fd);
	assert_int_equal(prof_objcache_copies(), c + 3); /* p1 was evicted */
	low.rlim_cur = 15;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	assert_int_not_equal(fd = prof_open_object(p2, err, sizeof(err)), -1);
	close(fd);
	assert_int_not_equal(fd = prof_open_object(p2, err, sizeof(err)), -1);
	close(fd);
	assert_int_equal(prof_objcache_copies(), c + 5); /* none kept */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	prof_objcache_clear();
	unlink(p1);
	unlink(p2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_parse),
	    cmocka_unit_test(test_table_lookup),
	    cmocka_unit_test(test_table_render),
	    cmocka_unit_test(test_symbolized_cuts_allocator),
	    cmocka_unit_test(test_long_name),
	    cmocka_unit_test(test_table_odd),
	    cmocka_unit_test(test_table_errors),
	    cmocka_unit_test(test_table_subtract),
	    cmocka_unit_test(test_elf_self),
	    cmocka_unit_test(test_mapped_twice),
	    cmocka_unit_test(test_elf_as_libdw),
	    cmocka_unit_test(test_elf_missing),
	    cmocka_unit_test(test_dw_part_as_libdwfl),
	    cmocka_unit_test(test_abs_debuglink),
	    cmocka_unit_test(test_object_cache),
	    cmocka_unit_test(test_object_cache_fds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * heapprof — jemalloc's heap_v2 profiles read back: the stacks with their
 * counts, unsampled exactly as jeprof does, and the mappings. The first
 * step of the profile pipeline (parse, unsample, then symbolize, render).
 *
 *	heap_v2/<period>
 *	  t*: <objs>: <bytes> [<accum objs>: <accum bytes>]   (totals)
 *	  t<N>: ... <its name, if it has one>                  (per thread)
 *	@ 0x<pc> 0x<pc> ...
 *	  t*: <objs>: <bytes> [<accum objs>: <accum bytes>]
 *	  t<N>: ...
 *	...
 *	MAPPED_LIBRARIES:
 *	<a copy of /proc/self/maps>
 *
 * Lines it does not know (a jemalloc fork's "f:" lines, blank lines) are
 * skipped; a profile that is not heap_v2, or is cut short, is one error.
 *
 * jeprof's symbolized profile (what `jeprof --raw`, `jm4lw-prof -f
 * symbolized` and ClickHouse's .heap.symbolized write) is read too: the
 * profile above after a symbol section that names its addresses:
 *
 *	--- symbol
 *	binary=<the program>
 *	0x<addr> <function>                  (addr: a caller's pc - 1)
 *	0x<addr> <outer>--<inlined>--<inner> (an inline chain, callers first)
 *	---
 *	--- heap
 *	heap_v2/<period>
 *	...
 */
#ifndef JM4LW_HEAPPROF_H
#define JM4LW_HEAPPROF_H

#include <stddef.h>
#include <stdint.h>

#include "prof_util.h"

/* The most warnings a profile keeps. */
#define HP_WARN_MAX 4

/* The largest profile read: a dump of a real heap is tens of MB; a file
 * past this is refused before it is read. */
#define HEAPPROF_MAX_BYTES ((size_t)2 << 30)

/* One thread's counts on a tN: line, as dumped (sampled): in the header
 * its totals, under a stack its share of the stack. */
struct hp_tcount {
	uint64_t tid; /* jemalloc's thr_uid */
	uint64_t objs, bytes, accum_objs, accum_bytes;
};

/* A thread of the header's tN: lines. jemalloc 5.3 writes its name
 * (prof_sys_thread_name, thread.prof.name) after the counts: any bytes
 * but a newline, spaces included. */
struct hp_thread {
	struct hp_tcount c;
	const char *name; /* NULL: none; else into heap_profile.text */
};

/* One stack: its frames (leaf first, as dumped) and its counts. */
struct hp_stack {
	const uint64_t *pc; /* into heap_profile.pcs */
	size_t depth;
	uint64_t objs, bytes;             /* sampled, as dumped (t*) */
	uint64_t accum_objs, accum_bytes; /* since start, when prof_accum */
	double u_objs, u_bytes;           /* unsampled, as jeprof does */
	double u_accum_objs, u_accum_bytes;
	double b_objs, b_bytes;     /* the base's unsampled counts, after
	                               heapprof_subtract (0 otherwise) */
	const struct hp_tcount *tc; /* its tN: lines, into
	                               heap_profile.tcounts */
	size_t ntc;
};

/* One line of MAPPED_LIBRARIES. */
struct hp_map {
	uint64_t start, end, offset;
	int exec;         /* r-x or rwx */
	const char *path; /* "" for anonymous; into heap_profile.text */
};

/* One line of a symbolized profile's symbol section: an address as
 * jeprof looks it up (a caller's return address minus 1) and its names,
 * as written: one function, or an inline chain "outer--...--inner". */
struct hp_symbol {
	uint64_t addr;
	const char *names; /* into heap_profile.text */
};

struct heap_profile {
	uint64_t period; /* the mean bytes between samples */
	struct hp_stack *stacks;
	size_t nstacks;
	uint64_t *pcs; /* every stack's frames, one array */
	size_t npcs;
	struct hp_map *maps;
	size_t nmaps;
	struct hp_thread *threads; /* the header's tN: lines, as dumped */
	size_t nthreads;
	struct hp_tcount *tcounts; /* every stack's tN: lines, one array */
	size_t ntcounts;
	char *text;             /* the mappings' paths, the threads' names */
	double u_objs, u_bytes; /* totals of the unsampled counts */
	int diff;               /* heapprof_subtract made it a difference */
	int other_base;         /* ... with a base of another process */
	int symbolized;         /* a symbolized profile: syms name its pcs */
	struct hp_symbol *syms; /* its symbol section, by address */
	size_t nsyms;
	const char *binary;    /* its binary= line, NULL if none */
	size_t profile_offset; /* where heap_v2/ starts in the input */
	/* What is wrong with it but still lets it be read: one line each,
	 * static strings, for the caller to show (heapprof_parse and
	 * heapprof_subtract add them). */
	const char *warn[HP_WARN_MAX];
	size_t nwarn;
};

/* The factor jeprof multiplies a stack's counts by: a stack of @p objs
 * objects of @p bytes in all, sampled once per @p period bytes on
 * average, was sampled with probability 1 - exp(-(bytes/objs)/period). */
double heapprof_scale(uint64_t objs, uint64_t bytes, uint64_t period);

/* The header's total (its "t*: OBJS: BYTES [...]" line, as sampled)
 * from the first bytes of a dump, without reading the rest: 0, or -1
 * when @p buf does not start a heap_v2 profile with a whole count line. */
int heapprof_header_total(const char *buf, size_t len, uint64_t *objs,
    uint64_t *bytes);

/* Parse @p len bytes, a heap_v2 profile or a symbolized one: 0, or -1
 * with one line in @p err (and @p hp empty). Numbers take uint64's whole
 * range; a profile whose unsampled totals pass 2^62 (bytes or objects)
 * is refused, so sums over it and differences of two stay in int64.
 * Free with heapprof_free(). */
int heapprof_parse(const char *buf, size_t len, struct heap_profile *hp,
    char *err, size_t errlen);

/* Read and parse the file at @p path, opened with prof_open_file (no
 * FIFO, device or directory; symlinks followed: the user named it). */
int heapprof_load(const char *path, struct heap_profile *hp, char *err,
    size_t errlen);

/*
 * Read and parse the profile open at @p fd, a regular file (open it with
 * prof_open_file), @p path its name in messages: 0, or -1 with one line
 * in @p err. The descriptor is
 * neither closed nor moved (pread only): a caller that goes on to copy
 * the file (profile_symbolized) reads the very file that was parsed.
 * The header is checked on the first bytes before anything else is read.
 * The file is read into memory, never mapped, up to the size fstat gave
 * (a file that shrinks meanwhile is read as far as it goes, and parses
 * as cut short): a mapping of a file anyone truncates, our own user
 * included, faults with SIGBUS on its next read.
 */
int heapprof_load_fd(int fd, const char *path, struct heap_profile *hp,
    char *err, size_t errlen);

void heapprof_free(struct heap_profile *hp);

/* What tells one process's dumps from another's, as far as their
 * mappings tell: the main program (the first mapping with a path, as
 * jeprof takes it), where it starts, and where the [stack] ends (it
 * grows down: its end stays). */
struct hp_origin {
	int known; /* 0: no mapping with a path (a symbolized file may
	              have none): the benefit of the doubt */
	char main[4096];
	uint64_t main_start, stack_end;
};

/* @p hp's origin into *@p o (kept when @p hp is freed). */
void heapprof_origin(const struct heap_profile *hp, struct hp_origin *o);

/* Can @p a and @p b be one process's? The same main program at the same
 * place and the same stack; 1 when either is not known. */
int heapprof_origin_same(const struct hp_origin *a, const struct hp_origin *b);

/*
 * @p hp minus @p base, stack by stack (the same frames, in order): what
 * grew is positive, what shrank negative, and a stack only in @p base is
 * added with its counts negated (its frames stay @p base's: keep @p base
 * until @p hp is done with; a symbolized @p hp also takes @p base's
 * symbols for addresses it has none for, pointing into @p base's text).
 * The unsampled counts and totals change; the
 * sampled ones stay as dumped; b_objs and b_bytes keep the base's, so a
 * stack's new value is u_bytes + b_bytes (what differential flame graphs
 * want). A base that is not of the same process (another main
 * program, or the same one mapped elsewhere, as another run is) adds a
 * warning to @p hp. 0, or -1 when memory runs out.
 */
int heapprof_subtract(struct heap_profile *hp, const struct heap_profile *base);

#endif

/*
 * symbolize — addresses of a heap profile to functions, with inline frames
 * and file:line where DWARF has them, through elfutils' libdwfl (ELF symbol
 * tables, .debug_* and separate debuginfo found by build ID). Offline: the
 * objects named in the profile's MAPPED_LIBRARIES as found on this machine,
 * or another file for the main program. Built without libdw, the objects'
 * ELF symbol tables only (no inline frames, no file:line); sym_backend()
 * says which. A symbolized profile is answered from its own table.
 */
#ifndef JM4LW_SYMBOLIZE_H
#define JM4LW_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "heapprof.h"

struct symbolizer;

/* One frame of a pc, innermost inline first. Strings live in the
 * symbolizer until sym_free(). */
struct sym_frame {
	const char *func; /* what people read: demangled, without its
	                     parameters (jeprof's short form);
	                     "object+0xSTART" where no symbol contains the
	                     address (START its function's first byte from
	                     .eh_frame, an ELF virtual address of the
	                     object); "0x7f12..." in no object; an inlined
	                     function's with " (inline)", as jeprof shows
	                     it */
	const char *name; /* demangled, with its parameters, no mark */
	const char *raw;  /* as the object has it (mangled) */
	const char *file; /* NULL when unknown */
	int line;         /* 0 when unknown */
};

#define SYM_INLINE_MAX 16

/* A symbolizer over @p hp's executable mappings; @p binary, if not NULL,
 * stands for the mapping of the main program (the first one with a
 * path). A symbolized @p hp (hp->symbolized) gets sym_new_table()'s:
 * its own names, whatever is on this machine. NULL with a reason in
 * @p err: a @p binary that is not there, not a regular file (a
 * directory, a FIFO) or not an ELF object. A @p binary that is another
 * object than the profile's main program (another GNU build ID than the
 * file the profile maps, where that is here and has one; else another
 * name or size of code) is taken, with a warning (sym_warning). */
struct symbolizer *sym_new(const struct heap_profile *hp, const char *binary,
    char *err, size_t errlen);

/*
 * Where a symbolizer looks for debug info beyond the object itself,
 * in this order: build ID under @p system_dir, the
 * object's .gnu_debuglink beside it, in its .debug/ and under
 * @p system_dir; each of @p dirs as a build-ID tree
 * (DIR/.build-id/xx/rest.debug) and as a debuglink directory
 * (DIR/<object's dir>/NAME, DIR/NAME); last the debuginfod servers of
 * DEBUGINFOD_URLS when @p debuginfod, all of them within @p timeout
 * seconds, after which the objects not got keep their symbol tables'
 * names and a warning (sym_warning) names them.
 */
struct sym_debug {
	const char *dirs;       /* ':'- or ','-separated, or NULL */
	const char *system_dir; /* the distribution's; NULL: /usr/lib/debug */
	int debuginfod;         /* ask DEBUGINFOD_URLS's servers */
	unsigned timeout;       /* seconds for debuginfod in all; 0: 10 */
};

/* The default timeout of struct sym_debug, seconds. */
#define SYM_DEBUGINFOD_TIMEOUT 10

/* sym_new with @p dbg's places for debug info (NULL: sym_new's own,
 * debuginfod on when DEBUGINFOD_URLS is set). The objects' debug info
 * is fetched from debuginfod here, before the first lookup, so its
 * warning is there before anything is rendered. */
struct symbolizer *sym_new_debug(const struct heap_profile *hp,
    const char *binary, const struct sym_debug *dbg, char *err, size_t errlen);

/* The frames of @p pc (a return address unless @p leaf: looked up at
 * pc - 1), innermost first: how many (at least 1). */
int sym_lookup(struct symbolizer *s, uint64_t pc, int leaf,
    struct sym_frame *out, int max);

/* The same for the running process, whose heap profile @p hp is: each
 * object is opened through /proc/self/map_files when it can be, so a
 * program or library replaced on disk since it was started (an upgrade
 * in place) is still read as the process has it mapped. */
struct symbolizer *sym_new_self(const struct heap_profile *hp, char *err,
    size_t errlen);

/* sym_new_self with @p dbg's places for debug info (NULL: no
 * debuginfod, the system's places only, as sym_new_self). */
struct symbolizer *sym_new_self_debug(const struct heap_profile *hp,
    const struct sym_debug *dbg, char *err, size_t errlen);

/* The GNU build ID of the object mapped at @p m (by its path), for
 * pprof's mappings: its length, with the bytes in *@p bits (valid until
 * sym_free), or 0 when the object has none or was not found. */
size_t sym_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits);

/* Is @p pc in the allocator's shared library (one, other than the
 * program, that defines mallctl)? Its frames lead every stack, and a
 * stripped libjemalloc names its internal functions after the nearest
 * exported symbol (malloc_usable_size), which no skip list can catch. */
int sym_in_allocator(struct symbolizer *s, uint64_t pc);

/* A symbolizer answering from @p hp's symbol table (a symbolized
 * profile's, see heapprof.h; copied, @p hp may go first): each address
 * as its line names it (an inline chain split at "--" into frames,
 * innermost first, jeprof's " (inline)" on all but the outermost), any
 * other as hex. No file:line and no build IDs. NULL with a reason in
 * @p err. */
struct symbolizer *sym_new_table(const struct heap_profile *hp, char *err,
    size_t errlen);

/* Fill sym_frame's file and line too. Off by default: reading a unit's
 * line table is a third of the time on a program with much DWARF, and
 * only pprof shows lines. Call before the first lookup (the cache made
 * without them is dropped). */
void sym_want_lines(struct symbolizer *s);

/* Warning @p i (from 0) about what @p s was made from, one line, or NULL
 * past the last: for the caller to show. */
const char *sym_warning(const struct symbolizer *s, size_t i);

void sym_free(struct symbolizer *s);

/* Where this build's symbolizer reads objects: "libdw" (elfutils:
 * symbols, DWARF inline frames and file:line, separate debuginfo) or
 * "elf" (built without libdw: the objects' ELF symbol tables only), for
 * conf and mntr. */
const char *sym_backend(void);

/* __cxa_demangle's shape. */
typedef char *sym_demangle_fn(const char *mangled, char *buf, size_t *len,
    int *status);

/* The demangler symbolizers made from now on use; by default the
 * process's own __cxa_demangle, if it has one. */
void sym_set_demangler(sym_demangle_fn *fn);

#endif

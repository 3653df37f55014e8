/*
 * symbolize_impl — what the symbolizer's backends share, private to
 * prof/symbolize*.c. symbolize_common.c owns the part every backend
 * needs (the symbolizer, names in their three forms, the demangler,
 * strings we made, the objects to open); symbolize.c the per-pc cache and
 * the choice of backend; a backend (libdwfl, our own ELF reader, a
 * symbolized file's table) only answers "which functions are at this
 * address" through struct sym_ops.
 */
#ifndef JM4LW_SYMBOLIZE_IMPL_H
#define JM4LW_SYMBOLIZE_IMPL_H

#include "symbolize.h"

/* The most warnings a symbolizer keeps. */
#define SYM_WARN_MAX 4

/* A name as the object has it, and as people read it. */
struct sym_name {
	const char *raw;  /* the key: a string the backend keeps stable
	                     (and unique per name) until sym_free */
	const char *full; /* demangled, with its parameters */
	const char *func; /* demangled, without them (jeprof's short form) */
	const char *inl;  /* func + " (inline)" */
};

/* What a backend does. */
struct sym_ops {
	/* The frames at @p addr (already a call's address, not a return
	 * address), innermost first, at most @p max: how many, 0 when
	 * nothing names it (the caller writes it in hex). */
	int (*resolve)(struct symbolizer *s, uint64_t addr,
	    struct sym_frame *out, int max);
	int (*in_allocator)(struct symbolizer *s, uint64_t pc);
	size_t (*build_id)(struct symbolizer *s, const struct hp_map *m,
	    const unsigned char **bits);
	void (*free)(struct symbolizer *s); /* the backend's state only */
	/* Optional: fetch what @p hp's objects need before the first
	 * lookup (debuginfod's files, within s->dbg's timeout); what it
	 * could not get, one line in @p warn (left empty if nothing). */
	void (*prepare)(struct symbolizer *s, const struct heap_profile *hp,
	    char *warn, size_t warnlen);
};

struct symbolizer {
	const struct sym_ops *ops;
	void *be;  /* the backend's state */
	int lines; /* file:line wanted (sym_want_lines) */
	sym_demangle_fn *demangle;
	struct sym_name *names; /* each name once, made by sym_name */
	size_t cap_names, nnames;
	struct hmap name_ix; /* raw pointer -> index in names */
	struct hmap cache;   /* symbolize.c's: pc -> its frames */
	struct sym_frame *frames;
	size_t nframes, cap_frames;
	char **strs; /* names we made (hex fallbacks, demangled forms) */
	size_t nstrs, cap_strs;
	const char *warn[SYM_WARN_MAX]; /* sym_warning's, kept in strs */
	size_t nwarn;
	struct sym_debug dbg; /* where debug info is (strings in strs) */
	struct hmap offnames; /* sym_intern's: each string we made once */
};

/* A symbolizer with @p ops and no backend state yet; NULL (with the
 * reason in @p err) when memory runs out. */
struct symbolizer *sym_alloc(const struct sym_ops *ops, char *err,
    size_t errlen);

/* The forms of @p raw, made once per (pointer to a) name; NULL when
 * memory runs out. */
const struct sym_name *sym_name(struct symbolizer *s, const char *raw);

/*
 * The name of an address no symbol contains: "object+0xOFF",
 * object the file name of @p path, OFF the function's first byte from
 * .eh_frame (or the address itself where no FDE holds it) as an ELF
 * virtual address of the object, the address nm, eu-addr2line -e and
 * llvm-symbolizer --obj take. One name (one pointer) per string; NULL
 * when memory runs out.
 */
const struct sym_name *sym_offset_name(struct symbolizer *s, const char *path,
    uint64_t off);

/* The one copy of @p str the symbolizer keeps (names are keyed by
 * pointer: a name made twice must be one pointer); NULL when memory
 * runs out. */
const char *sym_intern(struct symbolizer *s, const char *str);

/* Fill @p out with the one frame of name @p nm: 1, or 0 if @p nm is NULL. */
int sym_frame_of(const struct sym_name *nm, struct sym_frame *out);

/* A copy of @p str owned by @p s until sym_free(). */
const char *sym_keep(struct symbolizer *s, const char *str);

/* Keep warning @p w (one line) for sym_warning (at most SYM_WARN_MAX:
 * the rest are dropped). A backend's own, as it finds them. */
void sym_warn(struct symbolizer *s, const char *w);

/* Is @p m one of the profile's mappings an object backend reports (an
 * executable mapping of a file)? */
int sym_reportable(const struct hp_map *m);

/* The file an object backend opens for mapping @p i of @p hp: @p binary
 * for the main program if given, else the path the profile names, or
 * with @p self the mapping as this process has it
 * (/proc/self/map_files/..., written into @p buf). NULL when the mapping
 * is not one to report, or its object was reported for an earlier mapping
 * of the same load (a file loaded twice is two objects at two bases). */
const char *sym_object_path(const struct heap_profile *hp, size_t i,
    const char *binary, int self, char *buf, size_t len);

/* The path of the main program in @p hp: the first mapping with a path
 * (jeprof's reading); NULL if none. */
const char *sym_main_path(const struct heap_profile *hp);

/* An object backend's opening: the objects of @p hp's executable
 * mappings (@p binary for the main program, through /proc/self/map_files
 * when @p self); NULL with the reason in @p err. */
typedef struct symbolizer *sym_open_fn(const struct heap_profile *hp,
    const char *binary, int self, char *err, size_t errlen);

/* The object backends (symbolize.c's table of them). */
#ifdef JM4LW_HAVE_LIBDW
sym_open_fn sym_dwfl_open;
int dw_load_failed(void); /* dw_load.h: libdw's load ran and failed */
#endif
sym_open_fn sym_elf_open;

#endif

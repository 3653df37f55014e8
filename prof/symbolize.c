/*
 * The symbolizer's front: the per-pc cache (a profile's stacks share most
 * of their addresses) and the choice of backend. Where the frames come
 * from is a backend's business (struct sym_ops): libdwfl
 * (symbolize_dwfl.c, when built with elfutils), our own ELF symbol-table
 * reader (symbolize_elf.c), or the table of a symbolized profile
 * (symbolize_table.c). What the front and the backends both use (the
 * symbolizer itself, names in the forms people read, the demangler, the
 * objects to open) is symbolize_common.c's, so the backends never call
 * back into this file.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize_impl.h"

/*
 * The objects' backends, by name. The first is the one this build reads
 * objects with: libdw's (symbols, DWARF inline frames, file:line,
 * separate debuginfo) when built with elfutils, else the ELF symbol
 * tables'; the next is tried where one cannot open (sym_open_objects).
 * A symbolized profile needs no objects: sym_new_table.
 */
static const struct sym_backend_def {
	const char *name;
	sym_open_fn *open;
	const char *names; /* what its names come from, for a warning */
} sym_backends[] = {
#ifdef JM4LW_HAVE_LIBDW
    {.name = "libdw", .open = sym_dwfl_open, .names = "symbols and DWARF"},
#endif
    {.name = "elf",
        .open = sym_elf_open,
        .names = "the ELF symbol tables only: no inline frames, no "
                 "file:line"},
};

/* The name of this build's objects' backend, the table's first; the
 * next once libdw failed to load (it is loaded on the first use). */
const char *sym_backend(void)
{
#ifdef JM4LW_HAVE_LIBDW
	if (dw_load_failed())
		return sym_backends[1].name;
#endif
	return sym_backends[0].name;
}

/* Lines wanted: the cache made without them goes. */
void sym_want_lines(struct symbolizer *s)
{
	if (s->lines)
		return;
	s->lines = 1;
	hmap_clear(&s->cache);
	s->nframes = 0;
}

/* What sym_new checks of an object: an ELF64 file's GNU build ID and
 * the size of its executable segments. */
struct sym_objinfo {
	unsigned char id[64];
	size_t idlen;
	uint64_t text; /* the executable PT_LOADs' memory size */
};

/* Read @p oi from the ELF object open at @p fd: 0, or -1 if it is not an
 * ELF64 object. Hand-written over <elf.h> and pread: the ELF-only build
 * has no libelf, and only the headers and notes are wanted. */
static int sym_objinfo(int fd, struct sym_objinfo *oi)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Nhdr nh;
	unsigned char note[1024];
	size_t off, k;
	int i;

	memset(oi, 0, sizeof(*oi));
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(ph))
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph),
		        (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			return -1;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			oi->text += ph.p_memsz;
		if (ph.p_type != PT_NOTE || oi->idlen > 0 ||
		    ph.p_filesz > sizeof(note) ||
		    pread(fd, note, ph.p_filesz, (off_t)ph.p_offset) !=
		        (ssize_t)ph.p_filesz)
			continue;
		/* Notes: header, name and descriptor, each 4-aligned. */
		for (off = 0; off + sizeof(nh) <= ph.p_filesz;) {
			memcpy(&nh, note + off, sizeof(nh));
			off += sizeof(nh);
			k = off + ((nh.n_namesz + 3u) & ~3u);
			if (k > ph.p_filesz || nh.n_descsz > ph.p_filesz - k)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(note + off, "GNU", 4) == 0 &&
			    nh.n_descsz <= sizeof(oi->id)) {
				memcpy(oi->id, note + k, nh.n_descsz);
				oi->idlen = nh.n_descsz;
				break;
			}
			off = k + ((nh.n_descsz + 3u) & ~3u);
		}
	}
	return 0;
}

/* The extent of the executable mappings of @p path in @p hp. */
static uint64_t sym_mapped_text(const struct heap_profile *hp, const char *path)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < hp->nmaps; i++)
		if (hp->maps[i].exec && strcmp(hp->maps[i].path, path) == 0)
			n += hp->maps[i].end - hp->maps[i].start;
	return n;
}

/*
 * Is @p binary fit to stand for @p hp's main program? -1 with @p err
 * when it cannot be read as an object at all; else 0, with in @p warn
 * (empty if none) why it looks like another object: the GNU build ID of
 * the file the profile maps, when that file is here and has one, else
 * its name and the size of its code.
 */
static int sym_check_binary(const struct heap_profile *hp, const char *binary,
    char *warn, size_t warnlen, char *err, size_t errlen)
{
	const char *main_path = sym_main_path(hp), *a, *b;
	struct sym_objinfo bi, mi;
	uint64_t mapped, page = 4096;
	char why[256];
	int fd, r;

	warn[0] = '\0';
	if ((fd = prof_open_file(binary, 0, NULL, why, sizeof(why))) == -1) {
		snprintf(err, errlen, "--binary %s", why);
		return -1;
	}
	r = sym_objinfo(fd, &bi);
	close(fd);
	if (r == -1) {
		snprintf(err, errlen, "--binary %s: not an ELF object", binary);
		return -1;
	}
	if (main_path == NULL || strcmp(main_path, binary) == 0)
		return 0;
	if (bi.idlen > 0 &&
	    (fd = prof_open_file(main_path, 0, NULL, why, sizeof(why))) != -1) {
		r = sym_objinfo(fd, &mi);
		close(fd);
		if (r == 0 && mi.idlen > 0) {
			if (mi.idlen != bi.idlen ||
			    memcmp(mi.id, bi.id, bi.idlen) != 0)
				snprintf(warn, warnlen,
				    "--binary %s is another build than the "
				    "profile's main program %s (their GNU build "
				    "IDs differ): names may be wrong",
				    binary, main_path);
			return 0;
		}
	}
	/* Not here to compare with: by name, and by size of code (the
	 * mappings are whole pages; a segment's start is in a page). */
	a = strrchr(main_path, '/');
	b = strrchr(binary, '/');
	a = a != NULL ? a + 1 : main_path;
	b = b != NULL ? b + 1 : binary;
	mapped = sym_mapped_text(hp, main_path);
	if (strcmp(a, b) != 0)
		snprintf(warn, warnlen,
		    "--binary %s is not named as the profile's main program "
		    "%s: names may be wrong",
		    binary, main_path);
	else if (mapped > 0 && bi.text > 0 &&
	    (bi.text > mapped || bi.text + 2 * page < mapped))
		snprintf(warn, warnlen,
		    "--binary %s has %llu bytes of code where the profile "
		    "maps %llu for %s: names may be wrong",
		    binary, (unsigned long long)bi.text,
		    (unsigned long long)mapped, main_path);
	return 0;
}

/*
 * Take @p dbg's places for debug info into @p s (its strings kept in
 * @p s), then let the backend fetch what the profile's objects need
 * (prepare): done before the first lookup, so a debuginfod that is slow
 * or down costs its timeout once, and its warning is known before
 * anything is rendered. Returns @p s.
 */
static struct symbolizer *sym_debug_take(struct symbolizer *s,
    const struct heap_profile *hp, const struct sym_debug *dbg)
{
	char warn[512];

	/* sym_keep gives "?" when memory runs out: a directory not there. */
	s->dbg = *dbg;
	if (dbg->dirs != NULL)
		s->dbg.dirs = sym_keep(s, dbg->dirs);
	if (dbg->system_dir != NULL)
		s->dbg.system_dir = sym_keep(s, dbg->system_dir);
	if (s->dbg.timeout == 0)
		s->dbg.timeout = SYM_DEBUGINFOD_TIMEOUT;
	if (s->ops->prepare != NULL) {
		warn[0] = '\0';
		s->ops->prepare(s, hp, warn, sizeof(warn));
		if (warn[0] != '\0')
			sym_warn(s, warn);
	}
	return s;
}

/*
 * The objects' symbolizer from the first backend that opens, the next
 * tried when one cannot (libdw's is loaded on first use and may be
 * missing on this machine: dw_load.h); why the one before failed is the
 * symbolizer's first warning, one line, so the reply or the log says
 * what the names lack. NULL with the last backend's reason in @p err.
 */
static struct symbolizer *sym_open_objects(const struct heap_profile *hp,
    const char *binary, int self, char *err, size_t errlen)
{
	struct symbolizer *s = NULL;
	char why[384], line[512];
	size_t i, n = sizeof(sym_backends) / sizeof(sym_backends[0]);

	why[0] = '\0';
	for (i = 0; i < n; i++) {
		if ((s = sym_backends[i].open(hp, binary, self, err, errlen)) !=
		    NULL)
			break;
		snprintf(why, sizeof(why), "%s", err);
	}
	if (s != NULL && i > 0) {
		snprintf(line, sizeof(line), "%s; names from %s", why,
		    sym_backends[i].names);
		sym_warn(s, line);
	}
	return s;
}

/* A profile's symbolizer: its own table, or its objects'. Offline, so
 * debuginfod is asked when DEBUGINFOD_URLS names servers (as gdb and
 * eu-addr2line do). */
struct symbolizer *sym_new(const struct heap_profile *hp, const char *binary,
    char *err, size_t errlen)
{
	return sym_new_debug(hp, binary, NULL, err, errlen);
}

/* sym_new with the places for debug info of @p dbg. */
struct symbolizer *sym_new_debug(const struct heap_profile *hp,
    const char *binary, const struct sym_debug *dbg, char *err, size_t errlen)
{
	static const struct sym_debug offline = {.debuginfod = 1};
	struct symbolizer *s;
	char warn[512];

	/* A symbolized profile names its own addresses: the objects it was
	 * made from need not be on this machine. */
	if (hp->symbolized)
		return sym_new_table(hp, err, errlen);
	if (binary != NULL &&
	    sym_check_binary(hp, binary, warn, sizeof(warn), err, errlen) == -1)
		return NULL;
	if ((s = sym_open_objects(hp, binary, 0, err, errlen)) == NULL)
		return NULL;
	if (binary != NULL && warn[0] != '\0')
		sym_warn(s, warn);
	return sym_debug_take(s, hp, dbg != NULL ? dbg : &offline);
}

/* Warning @p i, or NULL. */
const char *sym_warning(const struct symbolizer *s, size_t i)
{
	return i < s->nwarn ? s->warn[i] : NULL;
}

/* The running process's: its objects as it has them mapped. */
struct symbolizer *sym_new_self(const struct heap_profile *hp, char *err,
    size_t errlen)
{
	return sym_new_self_debug(hp, NULL, err, errlen);
}

/* The running process's, with @p dbg's places for debug info: no
 * debuginfod unless asked (symbolize_debuginfod), for a server's
 * process should not reach out to the network by default. */
struct symbolizer *sym_new_self_debug(const struct heap_profile *hp,
    const struct sym_debug *dbg, char *err, size_t errlen)
{
	static const struct sym_debug self = {.debuginfod = 0};
	struct symbolizer *s;

	if ((s = sym_open_objects(hp, NULL, 1, err, errlen)) == NULL)
		return NULL;
	return sym_debug_take(s, hp, dbg != NULL ? dbg : &self);
}

/* The backend's answer: the GNU build ID of a mapping's object. */
size_t sym_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits)
{
	return s->ops->build_id(s, m, bits);
}

/* The backend's answer: is @p pc in the allocator's library? */
int sym_in_allocator(struct symbolizer *s, uint64_t pc)
{
	return s->ops->in_allocator(s, pc);
}

/*
 * The frames of @p pc, from the cache if it was looked up before. The
 * cache maps pc << 1 | leaf to where its frames are in s->frames: the
 * first's index << 8 | how many (at most SYM_INLINE_MAX).
 */
int sym_lookup(struct symbolizer *s, uint64_t pc, int leaf,
    struct sym_frame *out, int max)
{
	struct sym_frame tmp[SYM_INLINE_MAX];
	uint64_t key = pc << 1 | (leaf != 0), addr, *v;
	char hex[32];
	int n, i;

	if ((v = hmap_get(&s->cache, key)) != NULL) {
		n = (int)(*v & 0xff) < max ? (int)(*v & 0xff) : max;
		memcpy(out, s->frames + (*v >> 8), (size_t)n * sizeof(*out));
		return n;
	}
	/* A return address points past its call: look at the call. */
	addr = leaf || pc == 0 ? pc : pc - 1;
	if ((n = s->ops->resolve(s, addr, tmp, SYM_INLINE_MAX)) <= 0) {
		/* Nothing names it: its address, as jeprof shows it. */
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
		memset(&tmp[0], 0, sizeof(tmp[0]));
		tmp[0].func = tmp[0].name = tmp[0].raw = sym_keep(s, hex);
		n = 1;
	}
	if (hp_grow((void **)&s->frames, &s->cap_frames, s->nframes + (size_t)n,
	        sizeof(*s->frames)) == -1 ||
	    (v = hmap_put(&s->cache, key, NULL)) == NULL)
		goto nocache;
	memcpy(s->frames + s->nframes, tmp, (size_t)n * sizeof(*tmp));
	*v = (uint64_t)s->nframes << 8 | (uint64_t)n;
	s->nframes += (size_t)n;
nocache:
	for (i = 0; i < n && i < max; i++)
		out[i] = tmp[i];
	return i;
}

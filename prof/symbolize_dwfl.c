/*
 * The libdwfl backend (elfutils): it finds each object's symbol table,
 * its DWARF (in the file, or separate debuginfo by build ID) and maps
 * addresses to modules and compile units. We add the mappings a heap
 * profile names, and two indexes libdw does not keep, because a profile
 * asks about thousands of addresses in the same objects:
 *   - a module's function symbols sorted by address: elfutils 0.188's
 *     dwfl_module_addrname() scans the whole symbol table per address
 *     (61% of the time on a clang-14 profile, libLLVM's 44k symbols);
 *   - a compile unit's functions and inline instances by address range,
 *     built in one walk of its DIEs: dwarf_getscopes() walks the unit's
 *     DIE tree from its root for every address (25x slower than jeprof
 *     on a program with 54 MB of DWARF).
 */
#include <sys/stat.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdwfl.h>
#include <zlib.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dw_load.h" /* after libdw's headers: calls go through dw_funcs */
#include "dw_part.h"
#include "symbolize_impl.h"

/* A module's function symbols by address, for the one that contains an
 * address: never jeprof's nearest one below, which names a
 * stripped library's static functions after the exported one before
 * them. */
struct sym_module {
	Dwfl_Module *mod;
	struct sym_addr {
		GElf_Addr addr;
		GElf_Addr end; /* st_size's end; for a size-0 symbol the next
		                  symbol's address or its section's end */
		const char *name;
		int rank;  /* among aliases: global 0, weak 1, local 2 */
		int sized; /* st_size > 0 */
	} * syms;
	size_t n;
	int mallctl; /* it defines mallctl or je_mallctl (dw_in_allocator) */
	/* .eh_frame_hdr and .eh_frame, read on first use (sym_eh_read):
	 * libelf makes a new chunk at each elf_getdata_rawchunk. */
	const unsigned char *ehh; /* NULL: none, or not one we read */
	size_t nehh;
	GElf_Addr ehh_vaddr;
	Elf_Data *eh; /* .eh_frame to its segment's end */
	GElf_Addr eh_vaddr;
	const unsigned char *ident; /* e_ident, for dwarf_next_cfi */
	Dwarf_Off cie_off;          /* the last CIE read, and its */
	int cie_enc;                /* FDEs' pointer encoding */
	int ehh_read;
};

/* A function or inline instance of a compile unit, and where its code
 * is: ranges sorted by (parent, start), so the instances inside one are
 * a contiguous run that a binary search finds the address in. */
struct cu_node {
	Dwarf_Off off;   /* its DIE */
	int inlined;     /* DW_TAG_inlined_subroutine */
	size_t first, n; /* its children's ranges */
};
struct cu_range {
	Dwarf_Addr lo, hi;
	long parent; /* node, -1 at the unit's top */
	size_t node;
};
struct cu_index {
	Dwarf *dbg;
	Dwarf_Off cu_off;
	struct cu_node *nodes;
	size_t nnodes, cap_nodes;
	struct cu_range *ranges;
	size_t nranges, cap_ranges;
	size_t top_n; /* ranges [0, top_n) are the unit's own functions */
	/* Namespaces, for the functions whose DWARF has no linkage name
	 * (GCC gives a static function none): each namespace's DIE and the
	 * one around it (-1: none), and such a function's DIE -> 1 + the
	 * namespace it is declared in. */
	struct cu_scope {
		Dwarf_Off off;
		long up;
	} * scopes;
	size_t nscopes, cap_scopes;
	struct hmap quals;
};

/* Is a module the allocator's own library? */
struct sym_alloc {
	Dwfl_Module *mod;
	int alloc;
};

/* The backend's state. */
struct sym_dwfl {
	Dwfl *dwfl;
	Dwfl_Module *main_mod; /* the program's, NULL if not found */
	struct sym_alloc *allocs;
	size_t nallocs;
	struct sym_module *mods;
	size_t nmods;
	struct hmap cus; /* hash of (dbg, unit) -> its struct cu_index */
	/* debuginfod: the client, the modules asked, the deadline of all
	 * the asking (monotonic ms, 0 before the first), what it missed. */
	debuginfod_client *dfd;
	Dwfl_Module **asked;
	size_t nasked, cap_asked;
	uint64_t deadline;
	int timed_out, no_lib;
	size_t nmissing, nrefused;
	char missing[256];
	/* Answers not used (sym_dfd_refused): one in full, whether it is
	 * the program's, its object's name, the others' names. */
	char refused[400], refused_name[64], refused_more[160];
	int refused_main;
	/* The profile's frames (sym_part reads those in a module) and
	 * each module's DWARF from dw_part, NULL where libdwfl's. */
	const uint64_t *pcs;
	size_t npcs;
	struct sym_part {
		Dwfl_Module *mod;
		struct dw_part *part;
	} * parts;
	size_t nparts, cap_parts;
	int no_dfd; /* sym_find_debuginfo: not debuginfod (sym_part) */
};

static int dw_resolve(struct symbolizer *s, uint64_t addr,
    struct sym_frame *out, int max);
static int dw_in_allocator(struct symbolizer *s, uint64_t pc);
static size_t dw_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits);
static void dw_free(struct symbolizer *s);
static void dw_prepare(struct symbolizer *s, const struct heap_profile *hp,
    char *warn, size_t warnlen);

static const struct sym_ops dw_ops = {
    .resolve = dw_resolve,
    .in_allocator = dw_in_allocator,
    .build_id = dw_build_id,
    .free = dw_free,
    .prepare = dw_prepare,
};

static int sym_find_debuginfo(Dwfl_Module *mod, void **userdata,
    const char *modname, GElf_Addr base, const char *file_name,
    const char *debuglink, GElf_Word crc, char **debuginfo_name);

/* libdwfl's dwfl_build_id_find_elf, called through dw_funcs: loaded at
 * run time, it is no constant for sym_callbacks' initializer. */
static int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	return dwfl_build_id_find_elf(mod, userdata, modname, base, file_name,
	    elfp);
}

/* libdwfl's dwfl_offline_section_address, through dw_funcs (as above). */
static int sym_section_address(Dwfl_Module *mod, void **userdata,
    const char *modname, Dwarf_Addr base, const char *secname, GElf_Word shndx,
    const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
	return dwfl_offline_section_address(mod, userdata, modname, base,
	    secname, shndx, shdr, addr);
}

/* Every object is opened by us and handed to libdwfl as a descriptor
 * (find_elf is never asked); debug files through sym_find_debuginfo. */
static const Dwfl_Callbacks sym_callbacks = {
    .find_elf = sym_find_elf,
    .find_debuginfo = sym_find_debuginfo,
    .section_address = sym_section_address,
};

/* The ELF type of the file open at @p fd: ET_EXEC, ET_DYN..., or -1. */
static int sym_elf_type(int fd)
{
	GElf_Ehdr eh;
	Elf *elf;
	int t = -1;

	if ((elf = elf_begin(fd, ELF_C_READ, NULL)) != NULL &&
	    gelf_getehdr(elf, &eh) != NULL)
		t = eh.e_type;
	elf_end(elf);
	return t;
}

/* Is the debug file open at @p fd the one for @p mod: the same GNU build
 * ID when the module has one, else the CRC its .gnu_debuglink names (the
 * check libdwfl makes on the files it finds itself). */
static int sym_debug_matches(Dwfl_Module *mod, int fd, GElf_Word crc)
{
	const unsigned char *want;
	const void *got;
	unsigned char buf[65536];
	uLong sum = crc32(0, Z_NULL, 0);
	GElf_Addr vaddr;
	ssize_t n, len;
	off_t off = 0;
	Elf *elf;
	int ok = 0;

	if ((len = dwfl_module_build_id(mod, &want, &vaddr)) > 0) {
		if ((elf = elf_begin(fd, ELF_C_READ, NULL)) != NULL &&
		    dwelf_elf_gnu_build_id(elf, &got) == len &&
		    memcmp(got, want, (size_t)len) == 0)
			ok = 1;
		elf_end(elf);
		return ok;
	}
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		sum = crc32(sum, buf, (uInt)n);
		off += n;
	}
	return n == 0 && (GElf_Word)sum == crc;
}

/*
 * libdebuginfod, loaded on first use (dlopen): linked, it would map
 * libcurl and its TLS, GSSAPI and LDAP libraries into every host at
 * start, where most never ask debuginfod for anything. Called directly
 * rather than through libdwfl's dwfl_standard_find_debuginfo (which
 * dlopens it too) for the progress callback: DEBUGINFOD_TIMEOUT bounds
 * one transfer's stall, not the time all of a profile's objects take,
 * and the callback can cancel at our deadline.
 */
static struct sym_dfd {
	void *lib;
	debuginfod_client *(*begin)(void);
	int (*find)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
	void (*end)(debuginfod_client *);
} sym_dfd;
static pthread_once_t sym_dfd_once = PTHREAD_ONCE_INIT;

/* The functions of libdebuginfod we call, by name, into sym_dfd. */
static const struct {
	const char *name;
	size_t off;
} sym_dfd_fns[] = {
    {"debuginfod_begin", offsetof(struct sym_dfd, begin)},
    {"debuginfod_find_debuginfo", offsetof(struct sym_dfd, find)},
    {"debuginfod_set_progressfn", offsetof(struct sym_dfd, set_progressfn)},
    {"debuginfod_set_user_data", offsetof(struct sym_dfd, set_user_data)},
    {"debuginfod_get_user_data", offsetof(struct sym_dfd, get_user_data)},
    {"debuginfod_end", offsetof(struct sym_dfd, end)},
};

/* pthread_once: load libdebuginfod and its functions, or leave
 * sym_dfd.lib NULL. It stays loaded: libcurl does not unload cleanly. */
static void sym_dfd_load(void)
{
	void *lib, *fn;
	size_t i;

	if ((lib = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return;
	for (i = 0; i < sizeof(sym_dfd_fns) / sizeof(sym_dfd_fns[0]); i++) {
		if ((fn = dlsym(lib, sym_dfd_fns[i].name)) == NULL) {
			dlclose(lib);
			return;
		}
		memcpy((char *)&sym_dfd + sym_dfd_fns[i].off, &fn, sizeof(fn));
	}
	sym_dfd.lib = lib;
}

/* Now on the monotonic clock, in milliseconds. */
static uint64_t sym_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* libdebuginfod's progress callback, about once a second and per chunk
 * received: nonzero cancels the transfer once our deadline is past. */
static int sym_dfd_progress(debuginfod_client *c, long a, long b)
{
	struct sym_dwfl *d = sym_dfd.get_user_data(c);

	(void)a;
	(void)b;
	if (sym_now_ms() < d->deadline)
		return 0;
	d->timed_out = 1;
	return 1;
}

/* Add @p modname's file name to the list in @p list (@p size bytes,
 * ", " between names), cut short with "..." if long. */
static void sym_list_add(char *list, size_t size, const char *modname)
{
	const char *base = strrchr(modname, '/');
	size_t len = strlen(list);

	base = base != NULL ? base + 1 : modname;
	if (len + strlen(base) + 8 < size)
		snprintf(list + len, size - len, "%s%s", len > 0 ? ", " : "",
		    base);
	else if (len > 0 && strcmp(list + len - 3, "...") != 0 &&
	    len + 6 < size)
		snprintf(list + len, size - len, ", ...");
}

/* Note @p mod's object as one debuginfod did not give, for the
 * warning: its file name, in a list cut short if long. */
static void sym_dfd_missing(struct sym_dwfl *d, const char *modname)
{
	d->nmissing++;
	sym_list_add(d->missing, sizeof(d->missing), modname);
}

/* @p id (@p len bytes) in hex into @p out, cut at 64 bytes. */
static void sym_hex_id(char *out, size_t outlen, const unsigned char *id,
    size_t len)
{
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; i < len && i < 64 && n + 3 <= outlen; i++, n += 2)
		snprintf(out + n, outlen - n, "%02x", id[i]);
}

/*
 * Is debuginfod's answer for @p mod, open at @p fd, unfit: not an ELF
 * file, or not the build asked for (its GNU build ID note, read by libdw,
 * is not @p id, @p len bytes)? A server is checked as strictly as a file
 * in a build-ID tree (sym_debug_matches): it can be wrong, misconfigured
 * or hostile, and a wrong name is worse than none. Each unfit answer is
 * noted for dw_prepare's warning: the program's own (else the first) in
 * full, the others by their objects' names.
 */
static int sym_dfd_refused(struct sym_dwfl *d, Dwfl_Module *mod,
    const char *modname, const unsigned char *id, size_t len, int fd)
{
	char want[2 * 64 + 1], got_hex[2 * 64 + 1], why[160];
	const char *base;
	const void *got = NULL;
	ssize_t glen = -1;
	int elf_ok;
	Elf *elf;

	elf_ok = (elf = elf_begin(fd, ELF_C_READ, NULL)) != NULL &&
	    elf_getident(elf, NULL) != NULL;
	if (elf_ok)
		glen = dwelf_elf_gnu_build_id(elf, &got);
	if (elf_ok && glen == (ssize_t)len && memcmp(got, id, len) == 0) {
		elf_end(elf);
		return 0;
	}
	if (!elf_ok)
		snprintf(why, sizeof(why), "is not an ELF file");
	else if (glen <= 0)
		snprintf(why, sizeof(why), "has no build ID");
	else {
		sym_hex_id(got_hex, sizeof(got_hex), got, (size_t)glen);
		snprintf(why, sizeof(why), "is another build (%s)", got_hex);
	}
	elf_end(elf);
	d->nrefused++;
	if (d->refused[0] != '\0' && (mod != d->main_mod || d->refused_main)) {
		sym_list_add(d->refused_more, sizeof(d->refused_more), modname);
		return 1;
	}
	/* The program's own answer displaces the first one into the list. */
	if (d->refused[0] != '\0')
		sym_list_add(d->refused_more, sizeof(d->refused_more),
		    d->refused_name);
	sym_hex_id(want, sizeof(want), id, len);
	base = strrchr(modname, '/');
	snprintf(d->refused_name, sizeof(d->refused_name), "%s",
	    base != NULL ? base + 1 : modname);
	snprintf(d->refused, sizeof(d->refused),
	    "debuginfod: the answer for %s (%s) %s; not used", want,
	    d->refused_name, why);
	d->refused_main = mod == d->main_mod;
	return 1;
}

/*
 * @p mod's debug file from the debuginfod servers of DEBUGINFOD_URLS,
 * within what is left of the symbolizer's timeout (counted from the
 * first ask): a descriptor of the file in libdebuginfod's cache
 * (DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client), or
 * -1 with the object noted as missing. Each module is asked once: libdwfl
 * asks for its symbol table and for its DWARF apart.
 */
static int sym_dfd_find(struct symbolizer *s, Dwfl_Module *mod,
    const char *modname, char **debuginfo_name)
{
	struct sym_dwfl *d = s->be;
	const unsigned char *id;
	GElf_Addr vaddr;
	char *path = NULL;
	size_t i;
	int len, fd;

	for (i = 0; i < d->nasked; i++)
		if (d->asked[i] == mod)
			return -1;
	if (hp_grow((void **)&d->asked, &d->cap_asked, d->nasked + 1,
	        sizeof(*d->asked)) == -1)
		return -1;
	d->asked[d->nasked++] = mod;
	if ((len = dwfl_module_build_id(mod, &id, &vaddr)) <= 0)
		return -1; /* debuginfod knows files by build ID only */
	if (d->deadline == 0)
		d->deadline = sym_now_ms() + (uint64_t)s->dbg.timeout * 1000;
	if (d->timed_out || sym_now_ms() >= d->deadline) {
		d->timed_out = 1;
		sym_dfd_missing(d, modname);
		return -1;
	}
	(void)pthread_once(&sym_dfd_once, sym_dfd_load);
	if (sym_dfd.lib == NULL) {
		d->no_lib = 1;
		sym_dfd_missing(d, modname);
		return -1;
	}
	if (d->dfd == NULL) {
		if ((d->dfd = sym_dfd.begin()) == NULL) {
			sym_dfd_missing(d, modname);
			return -1;
		}
		sym_dfd.set_user_data(d->dfd, d);
		sym_dfd.set_progressfn(d->dfd, sym_dfd_progress);
	}
	if ((fd = sym_dfd.find(d->dfd, id, len, &path)) < 0) {
		free(path);
		sym_dfd_missing(d, modname);
		return -1;
	}
	if (sym_dfd_refused(d, mod, modname, id, (size_t)len, fd)) {
		/*
		 * Removed from libdebuginfod's cache rather than skipped each
		 * time: a cached answer is not asked again, so kept it would
		 * stand between us (and gdb, and every other client of that
		 * cache) and a server that has since been fixed. The next
		 * run asks again, and checks again. The path is the one
		 * libdebuginfod returned for this ID, inside its cache.
		 */
		if (path != NULL)
			(void)unlink(path);
		free(path);
		close(fd);
		return -1;
	}
	*debuginfo_name = path;
	return fd;
}

/*
 * @p cand as @p mod's debug file: a descriptor, with its name in
 * *@p debuginfo_name, if it is there, is not the object itself
 * (@p main_sb) and matches it (sym_debug_matches); else -1.
 */
static int sym_try_debug(Dwfl_Module *mod, const char *cand, GElf_Word crc,
    const struct stat *main_sb, char **debuginfo_name)
{
	struct stat sb;
	char why[128];
	int fd, copy = -1;

	/* Checked by pread (ELF_C_READ, the CRC), which a file cut short
	 * cannot fault; only the match is copied for libdwfl to map. */
	if ((fd = prof_open_file(cand, 0, &sb, why, sizeof(why))) == -1)
		return -1;
	if ((sb.st_dev != main_sb->st_dev || sb.st_ino != main_sb->st_ino) &&
	    sym_debug_matches(mod, fd, crc) &&
	    (copy = prof_copy_object(fd, cand, why, sizeof(why))) != -1 &&
	    (*debuginfo_name = strdup(cand)) == NULL) {
		close(copy);
		copy = -1;
	}
	close(fd);
	return copy;
}

/* @p mod's debug file by build ID in the tree under @p root
 * (ROOT/.build-id/xx/rest.debug), or -1. */
static int sym_try_build_id(Dwfl_Module *mod, const char *root,
    const struct stat *main_sb, char **debuginfo_name)
{
	const unsigned char *id;
	char cand[4096 + 300];
	GElf_Addr vaddr;
	size_t k, n;
	int len, i;

	if ((len = dwfl_module_build_id(mod, &id, &vaddr)) < 2 || len > 64)
		return -1;
	n = (size_t)snprintf(cand, sizeof(cand), "%s/.build-id/%02x/", root,
	    id[0]);
	for (i = 1; i < len && n + 3 < sizeof(cand); i++, n += 2)
		snprintf(cand + n, sizeof(cand) - n, "%02x", id[i]);
	k = (size_t)snprintf(cand + n, sizeof(cand) - n, ".debug");
	if (n + k >= sizeof(cand))
		return -1;
	return sym_try_debug(mod, cand, 0, main_sb, debuginfo_name);
}

/*
 * libdwfl's find_debuginfo, with every file we open ourselves opened by
 * prof_open_file: the debuglink is read from an object a dump named, and
 * the directories searched are that object's, so a FIFO placed there
 * must not block us. In the order production keeps debug files
 * (struct sym_debug): by build ID under the system's debug directory;
 * .gnu_debuglink beside the object, in its .debug/ and under the
 * system's directory (libdwfl's own order); each configured directory as
 * a build-ID tree and as a debuglink directory; last debuginfod. libdwfl
 * has already looked in the object itself.
 */
static int sym_find_debuginfo(Dwfl_Module *mod, void **userdata,
    const char *modname, GElf_Addr base, const char *file_name,
    const char *debuglink, GElf_Word crc, char **debuginfo_name)
{
	struct symbolizer *s = *userdata;
	char dir[4096], cand[2 * 4096 + 300], link[300], one[4096];
	const char *urls, *slash = NULL, *sys, *p, *q;
	struct stat main_sb;
	size_t i, n;
	int fd;

	(void)base;
	sys = s != NULL && s->dbg.system_dir != NULL ? s->dbg.system_dir
	                                             : "/usr/lib/debug";
	if (file_name == NULL || stat(file_name, &main_sb) == -1)
		memset(&main_sb, 0, sizeof(main_sb));
	if (file_name != NULL && debuglink != NULL && debuglink[0] == '/') {
		/*
		 * An absolute name: that file only, checked as a relative
		 * link's target is (build ID, else the link's CRC). Unchecked,
		 * another build's file put its symbols in place of the
		 * object's own .dynsym; and one libdwfl then failed to open
		 * as ELF left the name we gave it to be overwritten (leaked)
		 * when it asked again. Refused, the object keeps its own
		 * symbol table.
		 */
		if ((fd = sym_try_debug(mod, debuglink, crc, &main_sb,
		         debuginfo_name)) >= 0)
			return fd;
		errno = 0;
		return -1;
	}
	if ((fd = sym_try_build_id(mod, sys, &main_sb, debuginfo_name)) >= 0)
		return fd;
	/* In the process the file is /proc/self/map_files/START-END: its
	 * debuglink is looked for where the module's path says it is. */
	if (file_name != NULL && strncmp(file_name, "/proc/", 6) == 0 &&
	    modname != NULL && modname[0] == '/')
		file_name = modname;
	if (file_name != NULL && (slash = strrchr(file_name, '/')) != NULL) {
		/* Where libdwfl looks: beside, in .debug/, under the root. */
		const char *pre[] = {"", "", sys};
		static const char *const post[] = {"", "/.debug", ""};

		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file_name),
		    file_name);
		if (debuglink != NULL)
			snprintf(link, sizeof(link), "%s", debuglink);
		else
			snprintf(link, sizeof(link), "%s.debug", slash + 1);
		for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
			snprintf(cand, sizeof(cand), "%s%s%s/%s", pre[i], dir,
			    post[i], link);
			if ((fd = sym_try_debug(mod, cand, crc, &main_sb,
			         debuginfo_name)) >= 0)
				return fd;
		}
	}
	/* The configured directories, ':' or ',' between them. */
	for (p = s != NULL ? s->dbg.dirs : NULL; p != NULL && *p != '\0';
	     p = *q != '\0' ? q + 1 : q) {
		q = p + strcspn(p, ":,");
		if ((n = (size_t)(q - p)) == 0 || n >= sizeof(one))
			continue;
		memcpy(one, p, n);
		one[n] = '\0';
		if ((fd = sym_try_build_id(mod, one, &main_sb,
		         debuginfo_name)) >= 0)
			return fd;
		if (slash == NULL)
			continue;
		snprintf(cand, sizeof(cand), "%s%s/%s", one, dir, link);
		if ((fd = sym_try_debug(mod, cand, crc, &main_sb,
		         debuginfo_name)) >= 0)
			return fd;
		snprintf(cand, sizeof(cand), "%s/%s", one, link);
		if ((fd = sym_try_debug(mod, cand, crc, &main_sb,
		         debuginfo_name)) >= 0)
			return fd;
	}
	if (s != NULL && s->dbg.debuginfod &&
	    !((struct sym_dwfl *)s->be)->no_dfd &&
	    (urls = getenv("DEBUGINFOD_URLS")) != NULL && urls[0] != '\0')
		return sym_dfd_find(s, mod, modname, debuginfo_name);
	errno = 0;
	return -1;
}

/* dwfl_getmodules: each module's userdata is its symbolizer, for
 * sym_find_debuginfo. */
static int sym_set_userdata(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr start, void *arg)
{
	(void)mod;
	(void)name;
	(void)start;
	*userdata = arg;
	return DWARF_CB_OK;
}

/*
 * sym_ops.prepare: with debuginfod asked, look up the debug info of
 * every object the profile's stacks are in now, so all the fetching
 * happens here within the timeout, and say in one warning what it did
 * not get. Without it the lookups stay lazy (nothing to wait for).
 */
static void dw_prepare(struct symbolizer *s, const struct heap_profile *hp,
    char *warn, size_t warnlen)
{
	struct sym_dwfl *d = s->be;
	Dwfl_Module *mod, *last = NULL;
	const char *urls = getenv("DEBUGINFOD_URLS");
	Dwarf_Addr bias;
	size_t i;

	if (!s->dbg.debuginfod || urls == NULL || urls[0] == '\0')
		return;
	for (i = 0; i < hp->npcs; i++) {
		if ((mod = dwfl_addrmodule(d->dwfl, hp->pcs[i])) == NULL ||
		    mod == last)
			continue;
		last = mod;
		(void)dwfl_module_getdwarf(mod, &bias);
		(void)dwfl_module_getsymtab(mod);
	}
	if (d->nrefused > 1) {
		char line[640];

		snprintf(line, sizeof(line),
		    "%s; nor for %zu more object%s (%s)", d->refused,
		    d->nrefused - 1, d->nrefused == 2 ? "" : "s",
		    d->refused_more);
		sym_warn(s, line);
	} else if (d->nrefused == 1)
		sym_warn(s, d->refused);
	if (d->nmissing == 0)
		return;
	snprintf(warn, warnlen,
	    "no debug info from debuginfod for %zu object%s (%s)%s: %s",
	    d->nmissing, d->nmissing == 1 ? "" : "s", d->missing,
	    d->no_lib          ? ": libdebuginfod.so.1 cannot be loaded"
	        : d->timed_out ? ": the timeout was reached"
	                       : "",
	    "their functions are named from their symbol tables, or "
	    "object+0x...");
}

struct symbolizer *sym_dwfl_open(const struct heap_profile *hp,
    const char *binary, int self, char *err, size_t errlen)
{
	char mapfile[64], why[256];
	struct symbolizer *s;
	struct sym_dwfl *d;
	const char *main_path = sym_main_path(hp), *path;
	size_t i;
	int t, fd;

	/* libdw is loaded here, on the first profile (dw_load.h). */
	if (dw_load(err, errlen) == -1)
		return NULL;
	elf_version(EV_CURRENT);
	if ((s = sym_alloc(&dw_ops, err, errlen)) == NULL)
		return NULL;
	if ((d = s->be = calloc(1, sizeof(*d))) == NULL ||
	    (d->dwfl = dwfl_begin(&sym_callbacks)) == NULL) {
		snprintf(err, errlen, "cannot start libdwfl: %s",
		    d != NULL ? dwfl_errmsg(-1) : strerror(ENOMEM));
		sym_free(s);
		return NULL;
	}
	d->pcs = hp->pcs;
	d->npcs = hp->npcs;
	dwfl_report_begin(d->dwfl);
	for (i = 0; i < hp->nmaps; i++) {
		const struct hp_map *m = &hp->maps[i];
		if ((path = sym_object_path(hp, i, binary, self, mapfile,
		         sizeof(mapfile))) == NULL)
			continue;
		/* A missing object leaves its addresses as hex, as jeprof
		 * does; libdwfl ignores the base of an ET_EXEC. Opened by
		 * us (no FIFO, no device; another user's file copied, for
		 * libdwfl maps it) and handed over as a descriptor, which
		 * libdwfl keeps when it takes the module. */
		if ((fd = prof_open_object(path, why, sizeof(why))) == -1) {
			if (errno == ESTALE) /* replaced while we read it */
				sym_warn(s, why);
			continue;
		}
		if ((t = sym_elf_type(fd)) == -1 ||
		    dwfl_report_elf(d->dwfl, m->path, path, fd,
		        t == ET_EXEC ? 0 : m->start - m->offset, false) == NULL)
			close(fd);
	}
	if (dwfl_report_end(d->dwfl, NULL, NULL) != 0) {
		snprintf(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
		sym_free(s);
		return NULL;
	}
	(void)dwfl_getmodules(d->dwfl, sym_set_userdata, s, 0);
	for (i = 0; i < hp->nmaps && d->main_mod == NULL; i++)
		if (main_path != NULL && sym_reportable(&hp->maps[i]) &&
		    strcmp(hp->maps[i].path, main_path) == 0)
			d->main_mod =
			    dwfl_addrmodule(d->dwfl, hp->maps[i].start);
	return s;
}

/* dwfl_getmodules: stop at the module named in *arg's path. */
static int sym_find_module(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr start, void *arg)
{
	struct {
		const char *path;
		Dwfl_Module *mod;
	} *want = arg;

	(void)userdata;
	(void)start;
	if (strcmp(name, want->path) != 0)
		return DWARF_CB_OK;
	want->mod = mod;
	return DWARF_CB_ABORT;
}

/* sym_build_id: libdwfl read the note when it reported the module. */
static size_t dw_build_id(struct symbolizer *s, const struct hp_map *m,
    const unsigned char **bits)
{
	struct sym_dwfl *d = s->be;
	struct {
		const char *path;
		Dwfl_Module *mod;
	} want = {m->path, NULL};
	GElf_Addr vaddr;
	int n;

	(void)dwfl_getmodules(d->dwfl, sym_find_module, &want, 0);
	if (want.mod == NULL ||
	    (n = dwfl_module_build_id(want.mod, bits, &vaddr)) <= 0)
		return 0;
	return (size_t)n;
}

/* What sym_free needs of this backend. */
static void dw_free(struct symbolizer *s)
{
	struct sym_dwfl *d = s->be;
	size_t i, it;
	uint64_t v;

	if (d == NULL)
		return;
	if (d->dwfl != NULL)
		dwfl_end(d->dwfl);
	if (d->dfd != NULL)
		sym_dfd.end(d->dfd);
	free(d->asked);
	for (i = 0; i < d->nparts; i++)
		dw_part_free(d->parts[i].part);
	free(d->parts);
	for (i = 0; i < d->nmods; i++)
		free(d->mods[i].syms);
	free(d->mods);
	free(d->allocs);
	for (it = 0; hmap_next(&d->cus, &it, &v);) {
		struct cu_index *ix = (struct cu_index *)(uintptr_t)v;
		free(ix->nodes);
		free(ix->ranges);
		free(ix->scopes);
		hmap_free(&ix->quals);
		free(ix);
	}
	hmap_free(&d->cus);
	free(d);
}

/* By address, then global before weak before local (the choice libdwfl
 * makes among aliases), then by name for a stable choice. */
static int sym_addr_cmp(const void *a, const void *b)
{
	const struct sym_addr *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name);
}

/*
 * Sort @p n symbols as sym_addr_cmp orders them: a stable LSD radix sort
 * on the address (a byte a pass, passes where every address has the
 * same byte skipped), then each run of one address by sym_addr_cmp
 * (insertion: aliases are few). Not qsort: glibc's merge sort of these
 * 32-byte elements through a comparator was 27 % of jm4lw-prof's
 * instructions on a clang-14 profile (libLLVM's and libclang-cpp's 73k
 * symbols). Both are stable, so the order is qsort's. -1 when memory
 * runs out (then qsort sorts them).
 */
static int sym_sort(struct sym_addr *a, size_t n)
{
	struct sym_addr *tmp, *src = a, *dst, *t, x;
	size_t cnt[256], i, j, sh, pos, c;

	if (n < 2)
		return 0;
	if ((tmp = malloc(n * sizeof(*tmp))) == NULL)
		return -1;
	dst = tmp;
	for (sh = 0; sh < 64; sh += 8) {
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(src[i].addr >> sh) & 0xff]++;
		if (cnt[(src[0].addr >> sh) & 0xff] == n)
			continue;
		for (i = 0, pos = 0; i < 256; i++) {
			c = cnt[i];
			cnt[i] = pos;
			pos += c;
		}
		for (i = 0; i < n; i++)
			dst[cnt[(src[i].addr >> sh) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	for (i = 1; i < n; i++) {
		if (a[i - 1].addr != a[i].addr ||
		    sym_addr_cmp(&a[i - 1], &a[i]) <= 0)
			continue;
		x = a[i];
		for (j = i; j > 0 && a[j - 1].addr == x.addr &&
		     sym_addr_cmp(&a[j - 1], &x) > 0;
		     j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
	return 0;
}

/* Where the section @p shndx of @p elf ends, at run time (@p bias
 * added); the largest address if it is not a section of @p elf. */
static GElf_Addr sym_section_end(Elf *elf, GElf_Word shndx, GElf_Addr bias)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (elf == NULL || (scn = elf_getscn(elf, shndx)) == NULL ||
	    gelf_getshdr(scn, &sh) == NULL || sh.sh_size == 0)
		return (GElf_Addr)-1;
	return sh.sh_addr + sh.sh_size + bias;
}

/* The table of @p mod's function symbols, made on first use. */
static struct sym_module *sym_module(struct sym_dwfl *d, Dwfl_Module *mod)
{
	struct sym_module *m, *nm;
	GElf_Sym sym;
	GElf_Addr addr, bias, above;
	GElf_Word shndx;
	Elf *elf;
	const char *name;
	size_t i;
	int k, nsyms;

	for (i = 0; i < d->nmods; i++)
		if (d->mods[i].mod == mod)
			return &d->mods[i];
	if ((nm = realloc(d->mods, (d->nmods + 1) * sizeof(*nm))) == NULL)
		return NULL;
	d->mods = nm;
	m = &d->mods[d->nmods++];
	memset(m, 0, sizeof(*m));
	m->mod = mod;
	if ((nsyms = dwfl_module_getsymtab(mod)) <= 0 ||
	    (m->syms = calloc((size_t)nsyms, sizeof(*m->syms))) == NULL)
		return m;
	for (k = 1; k < nsyms; k++) {
		name = dwfl_module_getsym_info(mod, k, &sym, &addr, &shndx,
		    &elf, &bias);
		if (name != NULL && sym.st_shndx != SHN_UNDEF &&
		    (strcmp(name, "mallctl") == 0 ||
		        strcmp(name, "je_mallctl") == 0))
			m->mallctl = 1;
		if (name != NULL && name[0] != '\0' &&
		    (GELF_ST_TYPE(sym.st_info) == STT_FUNC ||
		        GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC) &&
		    sym.st_shndx != SHN_UNDEF) {
			m->syms[m->n].addr = addr;
			m->syms[m->n].end = sym.st_size > 0
			    ? addr + sym.st_size
			    : sym_section_end(elf, shndx, bias);
			m->syms[m->n].sized = sym.st_size > 0;
			m->syms[m->n].name = name;
			m->syms[m->n].rank =
			    GELF_ST_BIND(sym.st_info) == STB_GLOBAL ? 0
			    : GELF_ST_BIND(sym.st_info) == STB_WEAK ? 1
			                                            : 2;
			m->n++;
		}
	}
	if (sym_sort(m->syms, m->n) == -1)
		qsort(m->syms, m->n, sizeof(*m->syms), sym_addr_cmp);
	/* A size-0 symbol stops at the next symbol above it, where that
	 * comes before its section's end. */
	for (i = m->n, above = (GElf_Addr)-1; i-- > 0;) {
		if (i + 1 < m->n && m->syms[i + 1].addr > m->syms[i].addr)
			above = m->syms[i + 1].addr;
		if (!m->syms[i].sized && above < m->syms[i].end)
			m->syms[i].end = above;
	}
	return m;
}

/* The function symbol of @p mod that contains @p addr ([value, value +
 * size), a size-0 one up to the next symbol or its section's end), or
 * NULL: then no symbol names it. */
static const char *sym_containing(struct sym_dwfl *d, Dwfl_Module *mod,
    uint64_t addr)
{
	struct sym_module *m = sym_module(d, mod);
	size_t lo = 0, hi, mid, k;

	if (m == NULL || m->n == 0 || m->syms[0].addr > addr)
		return NULL;
	hi = m->n;
	while (hi - lo > 1) { /* syms[lo].addr <= addr < syms[hi].addr */
		mid = lo + (hi - lo) / 2;
		if (m->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	while (lo > 0 && m->syms[lo - 1].addr == m->syms[lo].addr)
		lo--; /* the first alias is the preferred one */
	/* The nearest below, or, should symbols nest (a function's local
	 * entry point), one of the few before it; among aliases the first
	 * that reaches the address. */
	for (k = lo; k < m->n && m->syms[k].addr == m->syms[lo].addr; k++)
		if (addr < m->syms[k].end)
			return m->syms[k].name;
	for (k = 1; k <= 4 && k <= lo; k++)
		if (addr < m->syms[lo - k].end)
			return m->syms[lo - k].name;
	return NULL;
}

/* The size of a value of DWARF pointer encoding @p enc (its low four
 * bits) in an object of ELF class @p cls; 0 for one we do not read. */
static size_t sym_enc_size(unsigned char enc, int cls)
{
	switch (enc & 0x0f) {
	case 0x00: /* DW_EH_PE_absptr */
		return cls == ELFCLASS64 ? 8 : 4;
	case 0x02: /* udata2 */
	case 0x0a: /* sdata2 */
		return 2;
	case 0x03: /* udata4 */
	case 0x0b: /* sdata4 */
		return 4;
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		return 8;
	default:
		return 0;
	}
}

/* The unsigned value of @p n bytes at @p p in the object's byte order. */
static uint64_t sym_get_uint(const unsigned char *p, size_t n, int msb)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * (msb ? n - 1 - i : i));
	return v;
}

/* Read @p m's .eh_frame_hdr and .eh_frame on first use (sym_fde_start);
 * -1 when there is no table we read. */
static int sym_eh_read(struct sym_module *m)
{
	GElf_Addr bias, ehv;
	GElf_Phdr ph;
	Elf_Data *d;
	const unsigned char *b;
	Elf *elf;
	size_t n, i;
	uint32_t count;
	int32_t ptr;

	if (m->ehh_read)
		return m->ehh != NULL && m->eh != NULL ? 0 : -1;
	m->ehh_read = 1;
	if ((elf = dwfl_module_getelf(m->mod, &bias)) == NULL ||
	    elf_getphdrnum(elf, &n) != 0 ||
	    (m->ident = (const unsigned char *)elf_getident(elf, NULL)) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) != NULL &&
		    ph.p_type == PT_GNU_EH_FRAME)
			break;
	if (i == n ||
	    (d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
	         ELF_T_BYTE)) == NULL ||
	    d->d_size < 12)
		return -1;
	b = d->d_buf;
	memcpy(&count, b + 8, 4);
	memcpy(&ptr, b + 4, 4);
	if (b[0] != 1 || (b[1] != 0x1b && b[1] != 0x03 && b[1] != 0x0b) ||
	    b[2] != 0x03 || b[3] != 0x3b || count == 0 ||
	    count > (d->d_size - 12) / 8 || m->ident[EI_DATA] != ELFDATA2LSB)
		return -1;
	m->ehh_vaddr = ph.p_vaddr;
	/* eh_frame_ptr: pcrel from its own field, or absolute. */
	ehv = b[1] == 0x1b ? ph.p_vaddr + 4 + (GElf_Addr)(int64_t)ptr
	                   : (GElf_Addr)(int64_t)ptr;
	/* .eh_frame: to its segment's end (each entry's length is checked
	 * against it by dwarf_next_cfi). */
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) != NULL &&
		    ph.p_type == PT_LOAD && ehv >= ph.p_vaddr &&
		    ehv - ph.p_vaddr < ph.p_filesz)
			break;
	if (i == n ||
	    (m->eh = elf_getdata_rawchunk(elf,
	         (int64_t)(ph.p_offset + (ehv - ph.p_vaddr)),
	         ph.p_filesz - (ehv - ph.p_vaddr), ELF_T_BYTE)) == NULL)
		return -1;
	m->eh_vaddr = ehv;
	m->ehh = b;
	m->nehh = count;
	m->cie_off = (Dwarf_Off)-1;
	return 0;
}

/*
 * The pointer encoding of the FDEs of the CIE at @p off of .eh_frame
 * (its augmentation 'R'), or -1. libdw parses the CIE (dwarf_next_cfi);
 * the augmentation data is ours to read.
 */
static int sym_cie_enc(struct sym_module *m, Dwarf_Off off)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	const unsigned char *p, *end;
	const char *aug;
	size_t sz;
	int enc = 0x00; /* DW_EH_PE_absptr where no 'R' says otherwise */

	if (off == m->cie_off)
		return m->cie_enc;
	if (dwarf_next_cfi(m->ident, m->eh, true, off, &next, &e) != 0 ||
	    !dwarf_cfi_cie_p(&e))
		return -1;
	aug = e.cie.augmentation;
	p = e.cie.augmentation_data;
	end = p + e.cie.augmentation_data_size;
	if (aug[0] != '\0' && aug[0] != 'z')
		return -1;
	for (aug += aug[0] == 'z'; *aug != '\0'; aug++) {
		if (*aug == 'R' && p < end)
			enc = *p++;
		else if (*aug == 'L' && p < end)
			p++;
		else if (*aug == 'P' && p < end &&
		    (sz = sym_enc_size(*p, m->ident[EI_CLASS])) != 0 &&
		    (size_t)(end - p) > sz)
			p += 1 + sz;
		else if (*aug != 'S' && *aug != 'B')
			return -1;
	}
	m->cie_off = off;
	m->cie_enc = enc;
	return enc;
}

/*
 * The start of the FDE that covers @p a (an ELF virtual address of
 * @p mod's object), found through .eh_frame_hdr's sorted table of FDE
 * starts: 0 with *@p start set, or -1 (no table we read, or no FDE
 * covers @p a: the entry below it ends before it).
 *
 * Not libdw's dwarf_cfi_addrframe: elfutils 0.188's
 * dwarf_getcfi_elf takes .eh_frame_hdr's table only when that section
 * comes before .eh_frame, and lld puts it after (Debian's libLLVM-14,
 * libclang-cpp); libdw then reads and tree-inserts every FDE up to the
 * address, 169k of them on a clang-14 profile, 42 % of jm4lw-prof's
 * instructions. And its Dwarf_Frame tells the range of a CFI row, not
 * the FDE's start. So the table is read here: the header (version 1,
 * eh_frame_ptr pcrel or absolute sdata4/udata4, the count as udata4)
 * and the table as datarel sdata4 pairs, what GNU ld, gold, lld and mold
 * write; the FDE and its CIE are parsed by libdw (dwarf_next_cfi), and
 * only the FDE's address_range is decoded here, whose size its CIE's
 * pointer encoding gives.
 */
static int sym_fde_start(struct sym_module *m, Dwarf_Addr a, Dwarf_Addr *start)
{
	const unsigned char *b;
	Dwarf_CFI_Entry e;
	Dwarf_Off next, off;
	GElf_Addr fde;
	size_t lo = 0, hi, mid, sz;
	int32_t pair[2];
	int enc;

	if (sym_eh_read(m) == -1)
		return -1;
	b = m->ehh;
	hi = m->nehh;
	while (hi - lo > 1) { /* entry lo starts at or below a */
		mid = lo + (hi - lo) / 2;
		memcpy(&pair[0], b + 12 + mid * 8, 4);
		if (m->ehh_vaddr + (Dwarf_Addr)(int64_t)pair[0] <= a)
			lo = mid;
		else
			hi = mid;
	}
	memcpy(pair, b + 12 + lo * 8, 8);
	if ((*start = m->ehh_vaddr + (Dwarf_Addr)(int64_t)pair[0]) > a)
		return -1;
	fde = m->ehh_vaddr + (GElf_Addr)(int64_t)pair[1];
	if (fde < m->eh_vaddr || (off = fde - m->eh_vaddr) >= m->eh->d_size ||
	    dwarf_next_cfi(m->ident, m->eh, true, off, &next, &e) != 0 ||
	    dwarf_cfi_cie_p(&e) ||
	    (enc = sym_cie_enc(m, e.fde.CIE_pointer)) == -1 ||
	    (sz = sym_enc_size((unsigned char)enc, m->ident[EI_CLASS])) == 0 ||
	    e.fde.end - e.fde.start < (ptrdiff_t)(2 * sz))
		return -1;
	return a - *start < sym_get_uint(e.fde.start + sz, sz, 0) ? 0 : -1;
}

/*
 * The name of @p addr of @p mod where no symbol contains it:
 * "object+0xSTART", START the first byte of the function from the FDE
 * that covers it (sym_fde_start), so every address of one unnamed
 * function is one frame; where no FDE covers it, "object+0xADDR". Both
 * as the object's ELF virtual addresses.
 */
static const struct sym_name *sym_unnamed(struct symbolizer *s,
    struct sym_dwfl *d, Dwfl_Module *mod, uint64_t addr)
{
	struct sym_module *m = sym_module(d, mod);
	Dwarf_Addr bias = 0, start;
	const char *modname;

	modname =
	    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	(void)dwfl_module_getelf(mod, &bias);
	if (m == NULL || sym_fde_start(m, addr - bias, &start) == -1)
		start = addr - bias;
	return sym_offset_name(s, modname != NULL ? modname : "?", start);
}

/* The name of @p die, through its abstract origin for an inline. */
static const char *sym_die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name;

	if ((name = dwarf_formstring(
	         dwarf_attr_integrate(die, DW_AT_linkage_name, &a))) != NULL)
		return name;
	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

/*
 * The name of @p die as people write it: its linkage name (demangled
 * later), or where it has none (GCC gives a static function none) its
 * name with the namespaces it was declared in, "ns::inner::f", as
 * llvm-symbolizer prints it. The declaring DIE is the one with the name,
 * reached through DW_AT_abstract_origin and DW_AT_specification; its
 * namespaces are the ones cu_walk saw around it (none if it is in
 * another unit). NULL if nothing names it.
 */
static const char *sym_qual_name(struct symbolizer *s,
    const struct cu_index *ix, Dwarf_Die *die)
{
	const char *name, *part[16];
	Dwarf_Attribute a;
	Dwarf_Die org = *die, next, nsd;
	char buf[1024];
	uint64_t *q;
	size_t len = 0;
	long sc;
	int k, n = 0;

	if ((name = sym_die_name(die)) == NULL ||
	    dwarf_attr_integrate(die, DW_AT_linkage_name, &a) != NULL)
		return name;
	for (k = 0; k < 8 && dwarf_attr(&org, DW_AT_name, &a) == NULL; k++) {
		if (dwarf_formref_die(dwarf_attr(&org, DW_AT_abstract_origin,
		                          &a),
		        &next) == NULL &&
		    dwarf_formref_die(dwarf_attr(&org, DW_AT_specification, &a),
		        &next) == NULL)
			break;
		org = next;
	}
	if (dwarf_cu_getdwarf(org.cu) != ix->dbg ||
	    (q = hmap_get(&ix->quals, dwarf_dieoffset(&org))) == NULL)
		return name;
	for (sc = (long)*q - 1; sc != -1 && n < 16; sc = ix->scopes[sc].up) {
		part[n] =
		    dwarf_offdie(ix->dbg, ix->scopes[sc].off, &nsd) != NULL
		    ? dwarf_diename(&nsd)
		    : NULL;
		if (part[n] == NULL)
			part[n] = "(anonymous namespace)";
		n++;
	}
	buf[0] = '\0';
	while (n-- > 0 && len < sizeof(buf))
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
		    "%s::", part[n]);
	if (len < sizeof(buf))
		snprintf(buf + len, sizeof(buf) - len, "%s", name);
	return sym_intern(s, buf);
}

/* The file an inline was called from (DW_AT_call_file) in @p cu. */
static const char *sym_call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t nfiles;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* Grow an index array; -1 when memory runs out. */
#define CU_GROW(arr, n, cap)                                                   \
	hp_grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)))

/* By (parent, start): a node's children in one run, in address order. */
static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return 0;
}

/*
 * May a DIE of this tag hold functions with code among its children?
 * Types, parameters, variables and call sites do not, and in C++ they are
 * most of a unit's DIEs: a member function's code is a DIE at namespace
 * level pointing back into its class (DW_AT_specification), where GCC and
 * clang both put it.
 */
static int cu_holds_code(int tag)
{
	switch (tag) {
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_entry_point:
		return 1;
	default:
		return 0;
	}
}

/* Index @p die's subtree into @p ix, @p parent the node around it (-1:
 * none): every function and inline instance with code, with its ranges.
 * Iterative, so a deep unit cannot exhaust the worker's stack. */
static int cu_walk(struct cu_index *ix, Dwarf_Die *cu)
{
	struct walk {
		Dwarf_Die die;
		long parent; /* the node around this DIE's children */
		long scope;  /* the namespace around it, -1: none */
	} *stack = NULL;
	Dwarf_Attribute a;
	uint64_t *q;
	long scope;
	size_t depth = 0, cap = 0;
	Dwarf_Addr base, lo, hi;
	Dwarf_Die child;
	ptrdiff_t off;
	long node, parent;
	int tag, r, rv = -1;

	if (dwarf_child(cu, &child) != 0)
		return 0;
	if (hp_grow((void **)&stack, &cap, 1, sizeof(*stack)) == -1)
		return -1;
	stack[depth].die = child;
	stack[depth].scope = -1;
	stack[depth++].parent = -1;
	while (depth > 0) {
		Dwarf_Die die = stack[--depth].die;
		parent = stack[depth].parent;
		scope = stack[depth].scope;
		/* Its next sibling waits under the same parent. */
		if ((r = dwarf_siblingof(&die, &child)) == 0) {
			stack[depth].die = child;
			stack[depth].scope = scope;
			stack[depth++].parent = parent;
		}
		tag = dwarf_tag(&die);
		node = parent;
		if (tag == DW_TAG_namespace) {
			if (CU_GROW(ix->scopes, ix->nscopes, ix->cap_scopes) ==
			    -1)
				goto out;
			ix->scopes[ix->nscopes].off = dwarf_dieoffset(&die);
			ix->scopes[ix->nscopes].up = scope;
			scope = (long)ix->nscopes++;
		} else if (tag == DW_TAG_subprogram && scope != -1 &&
		    dwarf_attr(&die, DW_AT_linkage_name, &a) == NULL &&
		    dwarf_attr(&die, DW_AT_MIPS_linkage_name, &a) == NULL &&
		    dwarf_attr(&die, DW_AT_name, &a) != NULL) {
			if ((q = hmap_put(&ix->quals, dwarf_dieoffset(&die),
			         NULL)) == NULL)
				goto out;
			*q = (uint64_t)scope + 1;
		}
		if (tag == DW_TAG_subprogram ||
		    tag == DW_TAG_inlined_subroutine) {
			off = 0;
			node = (long)ix->nnodes;
			while ((off = dwarf_ranges(&die, off, &base, &lo,
			            &hi)) > 0) {
				if (lo >= hi)
					continue;
				if (CU_GROW(ix->ranges, ix->nranges,
				        ix->cap_ranges) == -1)
					goto out;
				ix->ranges[ix->nranges].lo = lo;
				ix->ranges[ix->nranges].hi = hi;
				ix->ranges[ix->nranges].parent = parent;
				ix->ranges[ix->nranges++].node = (size_t)node;
			}
			if (ix->nranges == 0 ||
			    ix->ranges[ix->nranges - 1].node != (size_t)node)
				continue; /* no code: a declaration, an
				             abstract instance; nothing in it
				             has code either */
			if (CU_GROW(ix->nodes, ix->nnodes, ix->cap_nodes) == -1)
				goto out;
			ix->nodes[node].off = dwarf_dieoffset(&die);
			ix->nodes[node].inlined =
			    tag == DW_TAG_inlined_subroutine;
			ix->nodes[node].first = ix->nodes[node].n = 0;
			ix->nnodes++;
		}
		if (cu_holds_code(tag) && dwarf_haschildren(&die) &&
		    dwarf_child(&die, &child) == 0) {
			if (hp_grow((void **)&stack, &cap, depth + 1,
			        sizeof(*stack)) == -1)
				goto out;
			stack[depth].die = child;
			stack[depth].scope = scope;
			stack[depth++].parent = node;
		}
	}
	rv = 0;
out:
	free(stack);
	return rv;
}

/* Is @p v (a struct cu_index) the unit @p arg names? */
static int cu_eq(const void *arg, uint64_t v)
{
	const struct cu_index *k = arg, *ix = (struct cu_index *)(uintptr_t)v;

	return ix->cu_off == k->cu_off && ix->dbg == k->dbg;
}

/* The index of unit @p cu, made on first use; NULL when memory runs
 * out. */
static struct cu_index *cu_index(struct sym_dwfl *d, Dwarf_Die *cu)
{
	struct cu_index key = {.dbg = dwarf_cu_getdwarf(cu->cu),
	    .cu_off = dwarf_dieoffset(cu)};
	uint64_t h = hash_int(key.cu_off ^ hash_int((uintptr_t)key.dbg)), *v;
	struct cu_index *ix;
	size_t k;

	if ((v = hmap_find(&d->cus, h, cu_eq, &key)) != NULL)
		return (struct cu_index *)(uintptr_t)*v;
	if ((ix = calloc(1, sizeof(*ix))) == NULL)
		return NULL;
	ix->dbg = key.dbg;
	ix->cu_off = key.cu_off;
	if (cu_walk(ix, cu) == -1 ||
	    (v = hmap_add(&d->cus, h, cu_eq, &key, NULL)) == NULL) {
		free(ix->nodes);
		free(ix->ranges);
		free(ix->scopes);
		hmap_free(&ix->quals);
		free(ix);
		return NULL;
	}
	*v = (uintptr_t)ix;
	qsort(ix->ranges, ix->nranges, sizeof(*ix->ranges), cu_range_cmp);
	/* Each node's run of children; the top's run comes first. */
	for (k = 0; k < ix->nranges && ix->ranges[k].parent == -1; k++)
		;
	ix->top_n = k;
	for (; k < ix->nranges; k++) {
		struct cu_node *p = &ix->nodes[ix->ranges[k].parent];
		if (p->n++ == 0)
			p->first = k;
	}
	return ix;
}

/* The range among @p n ranges from @p first that holds @p addr, or -1:
 * the last one starting at or before it (siblings do not overlap), or,
 * should a compiler's ranges overlap, one of the few before it. */
static long cu_find(const struct cu_index *ix, size_t first, size_t n,
    Dwarf_Addr addr)
{
	size_t lo = first, hi = first + n, mid, k;

	if (n == 0 || ix->ranges[first].lo > addr)
		return -1;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (ix->ranges[mid].lo <= addr)
			lo = mid;
		else
			hi = mid;
	}
	for (k = 0; k < 8 && lo >= first + k; k++)
		if (addr < ix->ranges[lo - k].hi)
			return (long)(lo - k);
	return -1;
}

/* The DIEs at @p addr, outermost function first, into @p chain: how
 * many (0: the unit has no function there). */
static int cu_chain(const struct cu_index *ix, Dwarf_Addr addr,
    Dwarf_Off *chain, int max)
{
	size_t first = 0, n = ix->top_n;
	int depth = 0;
	long r;

	while (depth < max && (r = cu_find(ix, first, n, addr)) != -1) {
		const struct cu_node *node = &ix->nodes[ix->ranges[r].node];
		chain[depth++] = node->off;
		first = node->first;
		n = node->n;
	}
	return depth;
}

/* Has @p elf a section named @p name? Its address in *@p addr. */
static int sym_has_section(Elf *elf, const char *name, GElf_Addr *addr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *n;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) != NULL &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) != NULL &&
		    strcmp(n, name) == 0) {
			*addr = sh.sh_addr;
			return 1;
		}
	return 0;
}

/*
 * @p mod's DWARF as dw_part gives it: for an object without
 * DWARF of its own whose separate debug file has it compressed (Debian's
 * libc6-dbg), only as much as the profile's addresses in it need,
 * instead of libdwfl's inflating all of it. Made on first use; NULL
 * where libdwfl's is used: the object has DWARF, the debug file's is not
 * compressed, or file:line is wanted (libdwfl's line lookup is kept).
 */
static struct dw_part *sym_part(struct symbolizer *s, struct sym_dwfl *d,
    Dwfl_Module *mod)
{
	struct sym_part *p;
	Dwarf_Addr start, end, bias;
	GElf_Addr text = 0, dinfo;
	GElf_Word crc = 0;
	const char *name, *mainfile = NULL, *link;
	char *dname = NULL;
	uint64_t *addrs = NULL, last = 0;
	void *ud = s;
	size_t i, n = 0, cap = 0;
	Elf *elf;
	int fd;

	for (i = 0; i < d->nparts; i++)
		if (d->parts[i].mod == mod)
			return d->parts[i].part;
	if (hp_grow((void **)&d->parts, &d->cap_parts, d->nparts + 1,
	        sizeof(*d->parts)) == -1)
		return NULL;
	p = &d->parts[d->nparts++];
	p->mod = mod;
	p->part = NULL;
	if (s->lines || (elf = dwfl_module_getelf(mod, &bias)) == NULL ||
	    sym_has_section(elf, ".debug_info", &dinfo) ||
	    !sym_has_section(elf, ".text", &text))
		return NULL;
	name = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, &mainfile,
	    NULL);
	/* Each frame as a return address and as the call before it. */
	for (i = 0; i < d->npcs; i++) {
		if (d->pcs[i] < start || d->pcs[i] >= end || d->pcs[i] == last)
			continue;
		last = d->pcs[i];
		if (hp_grow((void **)&addrs, &cap, n + 2, sizeof(*addrs)) ==
		    -1) {
			free(addrs);
			return NULL;
		}
		addrs[n++] = last - bias;
		addrs[n++] = last - 1 - bias;
	}
	/* Where libdwfl would look, debuginfod aside: each module is asked
	 * of it once, and that ask is libdwfl's (a file fetched there is
	 * libdwfl's to open). */
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	d->no_dfd = 1;
	if (n > 0 &&
	    (fd = sym_find_debuginfo(mod, &ud, name, start, mainfile, link, crc,
	         &dname)) >= 0) {
		free(dname);
		p->part = dw_part_open(fd, addrs, n, text);
		close(fd);
	}
	d->no_dfd = 0;
	free(addrs);
	return p->part;
}

/* Look @p addr up: the inline chain, innermost first, into @p out. */
static int dw_resolve(struct symbolizer *s, uint64_t addr,
    struct sym_frame *out, int max)
{
	struct sym_dwfl *d = s->be;
	Dwfl_Module *mod = dwfl_addrmodule(d->dwfl, addr);
	Dwarf_Off chain[SYM_INLINE_MAX * 2];
	struct cu_index *ix;
	Dwarf_Die *cu, die;
	Dwarf_Addr bias;
	Dwarf_Attribute a;
	Dwarf_Word line;
	Dwfl_Line *l;
	const char *file = NULL, *name;
	const struct sym_name *nm;
	struct dw_part *part;
	Dwarf_Die cumem;
	int n = 0, depth = 0, i, lineno = 0, own = 0, bad = 0;

	if (mod == NULL)
		return 0;
	if (s->lines && (l = dwfl_module_getsrc(mod, addr)) != NULL)
		file = dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL);
	/* The unit from dw_part where it has it, else from libdwfl. */
	if ((part = sym_part(s, d, mod)) != NULL) {
		(void)dwfl_module_getelf(mod, &bias);
		own = (cu = dw_part_cudie(part, addr - bias, &cumem)) != NULL;
	}
again:
	if ((own || (cu = dwfl_module_addrdie(mod, addr, &bias)) != NULL) &&
	    (ix = cu_index(d, cu)) != NULL)
		depth = cu_chain(ix, addr - bias, chain,
		    (int)(sizeof(chain) / sizeof(chain[0])));
	/*
	 * Innermost first, as eu-addr2line -i gives them: the function
	 * inlined deepest at addr, at the line the line table says; each
	 * caller at the place its inlined callee was called from
	 * (DW_AT_call_file/line of the callee's instance).
	 */
	for (i = depth; i-- > 0 && n < max;) {
		if (dwarf_offdie(ix->dbg, chain[i], &die) == NULL ||
		    (name = sym_qual_name(s, ix, &die)) == NULL ||
		    (nm = sym_name(s, name)) == NULL) {
			bad = 1;
			continue;
		}
		out[n].name = nm->full;
		out[n].raw = nm->raw;
		/* jeprof's mark for a function inlined at this pc. */
		out[n].func = i > 0 ? nm->inl : nm->func;
		out[n].file = file;
		out[n].line = lineno;
		n++;
		/* The unit's file table costs its whole line program in
		 * libdw: only when lines are wanted. */
		if (!s->lines)
			continue;
		file = sym_call_file(cu, &die);
		lineno = dwarf_formudata(dwarf_attr(&die, DW_AT_call_line, &a),
		             &line) == 0
		    ? (int)line
		    : 0;
	}
	/* A name dw_part's cut DWARF could not give (a reference into a
	 * unit past its cut): all of it from libdwfl. */
	if (own && bad) {
		own = bad = n = depth = 0;
		goto again;
	}
	if (n > 0)
		return n;
	/* No DWARF: the symbol that contains it, else the function's start
	 * from its FDE, else the address itself. */
	if ((name = sym_containing(d, mod, addr)) != NULL)
		nm = sym_name(s, name);
	else
		nm = sym_unnamed(s, d, mod, addr);
	if (nm == NULL)
		return 0;
	out[0].func = nm->func;
	out[0].name = nm->full;
	out[0].raw = nm->raw;
	out[0].file = file;
	out[0].line = lineno;
	return 1;
}

/* sym_in_allocator: a module other than the program's that defines
 * mallctl. */
static int dw_in_allocator(struct symbolizer *s, uint64_t pc)
{
	struct sym_dwfl *d = s->be;
	Dwfl_Module *mod = dwfl_addrmodule(d->dwfl, pc);
	struct sym_module *m;
	struct sym_alloc *na;
	size_t i;

	/* A jemalloc linked into the program is named, and cut by name. */
	if (mod == NULL || mod == d->main_mod)
		return 0;
	for (i = 0; i < d->nallocs; i++)
		if (d->allocs[i].mod == mod)
			return d->allocs[i].alloc;
	if ((na = realloc(d->allocs, (d->nallocs + 1) * sizeof(*na))) == NULL)
		return 0;
	d->allocs = na;
	na[d->nallocs].mod = mod;
	/* Read with its function symbols, which are read once (a scan of
	 * its own per module was 13 % of a clang-14 profile's time). */
	na[d->nallocs].alloc =
	    (m = sym_module(d, mod)) != NULL ? m->mallctl : 0;
	return na[d->nallocs++].alloc;
}

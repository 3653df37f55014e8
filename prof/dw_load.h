/*
 * dw_load — elfutils' libdw (and the libelf it needs), loaded on the
 * first symbolization rather than linked: linked,
 * libdw.so.1, libelf.so.1, liblzma and libbz2 are mapped into every host
 * at start, their relocations, data and TLS with them, where most hosts
 * never ask for a profile. Loaded by dw_load() on the worker, once.
 *
 * Include after <elfutils/libdw.h>, <elfutils/libdwfl.h>,
 * <elfutils/libdwelf.h>, <libelf.h> and <gelf.h>: each pointer has its
 * function's own type from those headers (__typeof__), so no prototype
 * is written here. Then every call of a listed function in the including
 * file goes through the pointer (the macros at the end); a call of one
 * not listed is an undefined symbol, which the agent's --no-undefined
 * link and the executables' links refuse.
 */
#ifndef JM4LW_DW_LOAD_H
#define JM4LW_DW_LOAD_H

#include <stddef.h>

/* The library dlopen()ed: libdw's soname (elfutils has never changed
 * it); the libelf.so.1 it needs comes as its dependency. */
#define DW_SONAME "libdw.so.1"

/* The libdw and libelf functions the symbolizer calls, one row each. */
#define DW_FUNCS(X)                                                            \
	X(dwarf_attr)                                                          \
	X(dwarf_attr_integrate)                                                \
	X(dwarf_begin_elf)                                                     \
	X(dwarf_child)                                                         \
	X(dwarf_cu_getdwarf)                                                   \
	X(dwarf_diename)                                                       \
	X(dwarf_dieoffset)                                                     \
	X(dwarf_end)                                                           \
	X(dwarf_filesrc)                                                       \
	X(dwarf_formref_die)                                                   \
	X(dwarf_formstring)                                                    \
	X(dwarf_formudata)                                                     \
	X(dwarf_getsrcfiles)                                                   \
	X(dwarf_haschildren)                                                   \
	X(dwarf_next_cfi)                                                      \
	X(dwarf_next_unit)                                                     \
	X(dwarf_offdie)                                                        \
	X(dwarf_ranges)                                                        \
	X(dwarf_siblingof)                                                     \
	X(dwarf_tag)                                                           \
	X(dwelf_elf_gnu_build_id)                                              \
	X(dwelf_elf_gnu_debuglink)                                             \
	X(dwfl_addrmodule)                                                     \
	X(dwfl_begin)                                                          \
	X(dwfl_build_id_find_elf)                                              \
	X(dwfl_end)                                                            \
	X(dwfl_errmsg)                                                         \
	X(dwfl_getmodules)                                                     \
	X(dwfl_lineinfo)                                                       \
	X(dwfl_module_addrdie)                                                 \
	X(dwfl_module_build_id)                                                \
	X(dwfl_module_getdwarf)                                                \
	X(dwfl_module_getelf)                                                  \
	X(dwfl_module_getsrc)                                                  \
	X(dwfl_module_getsym_info)                                             \
	X(dwfl_module_getsymtab)                                               \
	X(dwfl_module_info)                                                    \
	X(dwfl_offline_section_address)                                        \
	X(dwfl_report_begin)                                                   \
	X(dwfl_report_elf)                                                     \
	X(dwfl_report_end)                                                     \
	X(elf_begin)                                                           \
	X(elf_end)                                                             \
	X(elf_getdata_rawchunk)                                                \
	X(elf_getident)                                                        \
	X(elf_getphdrnum)                                                      \
	X(elf_getscn)                                                          \
	X(elf_getshdrstrndx)                                                   \
	X(elf_ndxscn)                                                          \
	X(elf_newdata)                                                         \
	X(elf_newscn)                                                          \
	X(elf_nextscn)                                                         \
	X(elf_rawdata)                                                         \
	X(elf_strptr)                                                          \
	X(elf_update)                                                          \
	X(elf_version)                                                         \
	X(gelf_getchdr)                                                        \
	X(gelf_getclass)                                                       \
	X(gelf_getehdr)                                                        \
	X(gelf_getphdr)                                                        \
	X(gelf_getshdr)                                                        \
	X(gelf_newehdr)                                                        \
	X(gelf_update_ehdr)                                                    \
	X(gelf_update_shdr)

/* One pointer per function, typed as the headers declare it. */
#define DW_POINTER(f) __typeof__(f) *f;
struct dw_funcs {
	DW_FUNCS(DW_POINTER)
};
#undef DW_POINTER

/* Filled by dw_load(); read only after it returned 0. */
extern struct dw_funcs dw_funcs;

/* Load libdw and every function of DW_FUNCS, once per process (later
 * calls give the first's answer): 0, or -1 with why, one line, in
 * @p err. It stays loaded: a host that asked for one profile asks again,
 * and unloading would race a symbolizer still open elsewhere. */
int dw_load(char *err, size_t errlen);

/* 1 if dw_load() ran and failed (libdw is missing or too old), without
 * loading it: what conf and mntr name as the symbolizer then. */
int dw_load_failed(void);

/*
 * Calls through the pointers. Hand-written, one line per row of DW_FUNCS
 * (the preprocessor cannot define a macro from a list): a row without
 * its line links to the real symbol and fails the link (above); a line
 * without its row fails to compile. Not in dw_load.c, which names the
 * members themselves.
 */
#ifndef DW_LOAD_NO_CALLS
#define dwarf_attr (*dw_funcs.dwarf_attr)
#define dwarf_attr_integrate (*dw_funcs.dwarf_attr_integrate)
#define dwarf_begin_elf (*dw_funcs.dwarf_begin_elf)
#define dwarf_child (*dw_funcs.dwarf_child)
#define dwarf_cu_getdwarf (*dw_funcs.dwarf_cu_getdwarf)
#define dwarf_diename (*dw_funcs.dwarf_diename)
#define dwarf_dieoffset (*dw_funcs.dwarf_dieoffset)
#define dwarf_end (*dw_funcs.dwarf_end)
#define dwarf_filesrc (*dw_funcs.dwarf_filesrc)
#define dwarf_formref_die (*dw_funcs.dwarf_formref_die)
#define dwarf_formstring (*dw_funcs.dwarf_formstring)
#define dwarf_formudata (*dw_funcs.dwarf_formudata)
#define dwarf_getsrcfiles (*dw_funcs.dwarf_getsrcfiles)
#define dwarf_haschildren (*dw_funcs.dwarf_haschildren)
#define dwarf_next_cfi (*dw_funcs.dwarf_next_cfi)
#define dwarf_next_unit (*dw_funcs.dwarf_next_unit)
#define dwarf_offdie (*dw_funcs.dwarf_offdie)
#define dwarf_ranges (*dw_funcs.dwarf_ranges)
#define dwarf_siblingof (*dw_funcs.dwarf_siblingof)
#define dwarf_tag (*dw_funcs.dwarf_tag)
#define dwelf_elf_gnu_build_id (*dw_funcs.dwelf_elf_gnu_build_id)
#define dwelf_elf_gnu_debuglink (*dw_funcs.dwelf_elf_gnu_debuglink)
#define dwfl_addrmodule (*dw_funcs.dwfl_addrmodule)
#define dwfl_begin (*dw_funcs.dwfl_begin)
#define dwfl_build_id_find_elf (*dw_funcs.dwfl_build_id_find_elf)
#define dwfl_end (*dw_funcs.dwfl_end)
#define dwfl_errmsg (*dw_funcs.dwfl_errmsg)
#define dwfl_getmodules (*dw_funcs.dwfl_getmodules)
#define dwfl_lineinfo (*dw_funcs.dwfl_lineinfo)
#define dwfl_module_addrdie (*dw_funcs.dwfl_module_addrdie)
#define dwfl_module_build_id (*dw_funcs.dwfl_module_build_id)
#define dwfl_module_getdwarf (*dw_funcs.dwfl_module_getdwarf)
#define dwfl_module_getelf (*dw_funcs.dwfl_module_getelf)
#define dwfl_module_getsrc (*dw_funcs.dwfl_module_getsrc)
#define dwfl_module_getsym_info (*dw_funcs.dwfl_module_getsym_info)
#define dwfl_module_getsymtab (*dw_funcs.dwfl_module_getsymtab)
#define dwfl_module_info (*dw_funcs.dwfl_module_info)
#define dwfl_offline_section_address (*dw_funcs.dwfl_offline_section_address)
#define dwfl_report_begin (*dw_funcs.dwfl_report_begin)
#define dwfl_report_elf (*dw_funcs.dwfl_report_elf)
#define dwfl_report_end (*dw_funcs.dwfl_report_end)
#define elf_begin (*dw_funcs.elf_begin)
#define elf_end (*dw_funcs.elf_end)
#define elf_getdata_rawchunk (*dw_funcs.elf_getdata_rawchunk)
#define elf_getident (*dw_funcs.elf_getident)
#define elf_getphdrnum (*dw_funcs.elf_getphdrnum)
#define elf_getscn (*dw_funcs.elf_getscn)
#define elf_getshdrstrndx (*dw_funcs.elf_getshdrstrndx)
#define elf_ndxscn (*dw_funcs.elf_ndxscn)
#define elf_newdata (*dw_funcs.elf_newdata)
#define elf_newscn (*dw_funcs.elf_newscn)
#define elf_nextscn (*dw_funcs.elf_nextscn)
#define elf_rawdata (*dw_funcs.elf_rawdata)
#define elf_strptr (*dw_funcs.elf_strptr)
#define elf_update (*dw_funcs.elf_update)
#define elf_version (*dw_funcs.elf_version)
#define gelf_getchdr (*dw_funcs.gelf_getchdr)
#define gelf_getclass (*dw_funcs.gelf_getclass)
#define gelf_getehdr (*dw_funcs.gelf_getehdr)
#define gelf_getphdr (*dw_funcs.gelf_getphdr)
#define gelf_getshdr (*dw_funcs.gelf_getshdr)
#define gelf_newehdr (*dw_funcs.gelf_newehdr)
#define gelf_update_ehdr (*dw_funcs.gelf_update_ehdr)
#define gelf_update_shdr (*dw_funcs.gelf_update_shdr)
#endif

#endif

/*
 * merge — heap profiles of one program taken in many processes (a fleet's
 * hosts) summed into one, stack by stack, for every view to render as it
 * renders one process's.
 *
 * A stack is a list of addresses in its own process's mappings, and ASLR
 * puts the same object at another address in every process: addresses
 * are only comparable as (object, offset in its file). Each frame is
 * moved into one address space, the first profile's: an object the first
 * profile maps (the same GNU build ID, or the same path when the file
 * has none or is not on this machine) at the place the first profile
 * has it, an object only later profiles map after every mapping so far.
 * Stacks whose frames are then equal are one stack, their unsampled
 * counts (each profile's own period) summed. One symbolizer over the
 * merged mappings names them all, and each object is read once.
 *
 * Why not by names: a stack's names depend on the symbolizer (inline
 * chains, objects without symbols named object+0xSTART), and pprof keeps
 * addresses and mappings, which a sum by name would have to invent.
 */
#ifndef JM4LW_MERGE_H
#define JM4LW_MERGE_H

#include <stddef.h>

#include "heapprof.h"
#include "symbolize.h"

/*
 * Sum the @p n profiles @p in (raw heap_v2 dumps, not differences, not
 * symbolized files: their addresses have no mappings to move them by),
 * whose names for messages are @p names, into *@p out (free it with
 * heapprof_free; it owns all it points to). @p binary, when not NULL,
 * stands for every profile's main program, as sym_new takes it; @p dbg
 * as sym_new_debug's, for reading the objects' build IDs. When the main
 * program or a library (a library by its file name up to ".so") is of
 * another build ID in one profile than in an earlier one, one line
 * saying so goes to @p warn (else it is ""). 0, or -1 with one line in
 * @p err.
 */
int heapprof_merge(struct heap_profile *const *in, const char *const *names,
    size_t n, const char *binary, const struct sym_debug *dbg,
    struct heap_profile *out, char *warn, size_t warnlen, char *err,
    size_t errlen);

#endif

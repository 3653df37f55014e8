/*
 * sym_table — the stand-in for prof/symbolize.c that the unit tests on
 * hand-built profiles link (tests/unit/sym_table.c): each address is one
 * frame, named by the test's own table, and none is in the allocator's
 * library. The test defines the table:
 *
 *	SYM_TABLE(names);
 */
#ifndef JM4LW_TEST_SYM_TABLE_H
#define JM4LW_TEST_SYM_TABLE_H

#include <stddef.h>

/* Address N is named sym_table[N]; one at or past sym_table_n is "?". */
extern const char *const *const sym_table;
extern const size_t sym_table_n;

/* The test's table @p t (an array) as the stand-in's. */
#define SYM_TABLE(t)                                                           \
	const char *const *const sym_table = (t);                              \
	const size_t sym_table_n = sizeof(t) / sizeof((t)[0])

#endif /* JM4LW_TEST_SYM_TABLE_H */

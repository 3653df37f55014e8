/*
 * bytes — the one byte formatter: a size as a person reads it, "12.1
 * MiB", for every face and the pipeline's text (jmdr, jmhi, jmpg, the
 * disk guard's refusal, the leak suspects, the flame graph's titles).
 */
#ifndef JM4LW_BYTES_H
#define JM4LW_BYTES_H

#include <stddef.h>

/* How fmt_bytes_as writes a size; 0 is fmt_bytes's way. BYTES_SIGN:
 * "+" before a positive size (a growth); BYTES_DECIMAL: one decimal below
 * 1 KiB too ("12.0 B"); BYTES_UPTO_TIB: no unit past TiB, as the flame
 * graph's own script and the leak report have it. */
#define BYTES_SIGN 0x1
#define BYTES_DECIMAL 0x2
#define BYTES_UPTO_TIB 0x4

/*
 * @p n in binary units with one decimal ("12.1 MiB"), plain bytes below
 * 1 KiB ("1023 B"), "-" before a negative size; into @p buf, which it
 * returns.
 */
const char *fmt_bytes_as(char *buf, size_t len, double n, int how);

/* An unsigned size, fmt_bytes_as's default way: "0 B", "1.5 KiB". */
const char *fmt_bytes(char *buf, size_t len, unsigned long long n);

#endif

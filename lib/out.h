/*
 * out — where a reply's bytes go, one interface for every sink: a word's
 * connection, an HTTP reply's evbuffer, a FILE on the worker. A renderer
 * writes through it and never learns which; each sink is an adapter of a
 * few lines beside its owner (the FILE one here, the evbuffer one in
 * http/, the connection's in daemon/).
 */
#ifndef JM4LW_OUT_H
#define JM4LW_OUT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* A sink: @p write appends @p len bytes at @p buf to @p arg's output. */
struct out {
	void (*write)(void *arg, const void *buf, size_t len);
	void *arg;
};

/* Append raw bytes (nothing when @p len is 0). */
void out_write(struct out *out, const void *buf, size_t len);

/* Append a NUL-terminated string. */
void out_puts(struct out *out, const char *s);

/* Append formatted text of any length (a stack or a host word's reply
 * can be long). */
void out_vprintf(struct out *out, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void out_printf(struct out *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A sink onto @p f (its errors are the FILE's: check ferror()). */
struct out out_file(FILE *f);

#endif

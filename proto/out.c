/*
 * Where a reply's bytes go: the output helpers every word and the framing
 * write through. Below both words.c and proto.c, so the word table can
 * write without calling back into the dispatcher that looks it up.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto.h"

/* Append raw bytes to the reply. */
void out_write(struct proto_out *out, const void *buf, size_t len)
{
	if (len > 0)
		out->write(out->arg, buf, len);
}

/* Append formatted text of any length (host words can be long). */
void out_vprintf(struct proto_out *out, const char *fmt, va_list ap)
{
	char buf[1024], *big;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n >= 0 && (size_t)n < sizeof(buf))
		out_write(out, buf, (size_t)n);
	else if (n >= 0 && (big = malloc((size_t)n + 1)) != NULL) {
		vsnprintf(big, (size_t)n + 1, fmt, again);
		out_write(out, big, (size_t)n);
		free(big);
	}
	va_end(again);
}

/* Append formatted text. */
void out_printf(struct proto_out *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vprintf(out, fmt, ap);
	va_end(ap);
}

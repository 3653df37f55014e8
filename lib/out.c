/*
 * The output interface (see out.h): the helpers every renderer writes
 * through, and the FILE adapter.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

void out_write(struct out *out, const void *buf, size_t len)
{
	if (len > 0)
		out->write(out->arg, buf, len);
}

void out_puts(struct out *out, const char *s)
{
	out_write(out, s, strlen(s));
}

/* One vsnprintf into the stack in the usual case; a line longer than
 * the buffer is formatted again into the heap rather than cut. */
void out_vprintf(struct out *out, const char *fmt, va_list ap)
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

void out_printf(struct out *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vprintf(out, fmt, ap);
	va_end(ap);
}

/* The FILE adapter's write. */
static void file_write(void *arg, const void *buf, size_t len)
{
	fwrite(buf, 1, len, arg);
}

struct out out_file(FILE *f)
{
	struct out o = {.write = file_write, .arg = f};

	return o;
}

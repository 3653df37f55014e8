/*
 * The JSON string writer (see json.h). Written here rather than taken
 * from a library: jansson and json-c, the JSON libraries Debian ships,
 * refuse a string that is not valid UTF-8 (json_string() returns NULL)
 * instead of replacing its bad bytes, so names from profiles would still
 * need this scan first; and either would be one more library in every
 * host the module is linked or preloaded into, for one function.
 */
#include <stddef.h>

#include "json.h"

/* The length of the valid UTF-8 sequence at @p s (RFC 3629's table), or
 * 0 if the bytes there are not one. @p s is NUL-terminated, and NUL is
 * never a continuation byte, so no read passes the end. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below */
		else if (c == 0xed)
			hi = 0x9f; /* the surrogates above */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong below */
		else if (c == 0xf4)
			hi = 0x8f; /* past U+10FFFF above */
	} else
		return 0; /* 0x80-0xc1 (continuation, overlong), 0xf5-0xff */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

void json_string(struct out *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *run = p;
	char esc[8];
	size_t n;

	out_write(out, "\"", 1);
	for (;;) {
		const char *e = NULL;

		n = 1;
		if (*p == '\0')
			break;
		if (*p == '"')
			e = "\\\"";
		else if (*p == '\\')
			e = "\\\\";
		else if (*p == '\n')
			e = "\\n";
		else if (*p == '\r')
			e = "\\r";
		else if (*p == '\t')
			e = "\\t";
		else if (*p < 0x20) {
			esc[0] = '\\';
			esc[1] = 'u';
			esc[2] = esc[3] = '0';
			esc[4] = hex[*p >> 4];
			esc[5] = hex[*p & 0xf];
			esc[6] = '\0';
			e = esc;
		} else if (*p >= 0x80) {
			if ((n = utf8_len(p)) == 0) {
				n = 1;
				e = "\\ufffd";
			} else if (n == 3 && p[0] == 0xe2 && p[1] == 0x80 &&
			    (p[2] == 0xa8 || p[2] == 0xa9))
				e = p[2] == 0xa8 ? "\\u2028" : "\\u2029";
		}
		if (e != NULL) {
			if (p > run)
				out_write(out, run, (size_t)(p - run));
			out_puts(out, e);
			p += n;
			run = p;
		} else
			p += n;
	}
	if (p > run)
		out_write(out, run, (size_t)(p - run));
	out_write(out, "\"", 1);
}

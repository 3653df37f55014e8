/*
 * Small helpers every part of jm4lw shares: lists, quoting for messages,
 * sizes for people, log lines, the dump directory's absolute name.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

/* Is @p c white space as inih strips it? */
int is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
	    c == '\f';
}

/* Cut the white space around s[0..*n); returns the new start. */
const char *trim(const char *s, size_t *n)
{
	while (*n > 0 && is_blank((unsigned char)s[0])) {
		s++;
		(*n)--;
	}
	while (*n > 0 && is_blank((unsigned char)s[*n - 1]))
		(*n)--;
	return s;
}

/* The next comma-separated item, trimmed; *s is NULL after the last. */
const char *list_next(const char **s, size_t *n)
{
	const char *item = *s, *comma = strchr(item, ',');

	if (comma != NULL) {
		*n = (size_t)(comma - item);
		*s = comma + 1;
	} else {
		*n = strlen(item);
		*s = NULL;
	}
	return trim(item, n);
}

/*
 * @p s in double quotes, safe to show: whatever a peer or a file sent,
 * the message stays one short printable line.
 */
const char *quote(char *buf, size_t len, const char *s, size_t n)
{
	size_t i, o = 0;
	unsigned char c;

	buf[o++] = '"';
	for (i = 0; i < n && o + 8 < len; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
	}
	if (i < n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

/* "12.1 MiB": one decimal is what a person compares at a glance. */
const char *fmt_bytes(char *buf, size_t len, unsigned long long n)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB",
	    "EiB"};
	double v = (double)n;
	int i = 0;

	while (v >= 1024 && i < 6) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", n);
	else
		snprintf(buf, len, "%.1f %s", v, unit[i]);
	return buf;
}

/* Format a line for the module's log, if it gave core one. */
void core_logf(const struct core_log *log, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (log == NULL || log->fn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log->fn(log->arg, level, buf);
}

/* The one place dump_dir becomes the absolute name replies show. */
int core_dump_dir(const char *d, int real, char *buf, size_t len)
{
	char cwd[PATH_MAX], res[PATH_MAX];
	size_t n;
	int r;

	if (d[0] == '/')
		r = snprintf(buf, len, "%s", d);
	else if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	else
		r = snprintf(buf, len, "%s/%s", cwd, d);
	if (r < 0 || (size_t)r >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (n = strlen(buf); n > 1 && buf[n - 1] == '/'; n--)
		buf[n - 1] = '\0';
	/* The canonical name: no "./" or ".." in a reply. */
	if (real && realpath(buf, res) != NULL && strlen(res) < len)
		memcpy(buf, res, strlen(res) + 1);
	return 0;
}

/*
 * The one ADDR:PORT parser (hostport.h): only the syntax, libc only.
 */
#include <string.h>

#include "hostport.h"

/* "[host]", "[host]:port", "host", "host:port"; an unbracketed string
 * with two colons or more is a bare IPv6 address or a mistake, for the
 * caller to say which. */
enum hostport_err hostport_split(const char *s, size_t len, struct hostport *hp)
{
	const char *end, *colon;

	memset(hp, 0, sizeof(*hp));
	hp->host = s;
	hp->hlen = len;
	if (len > 0 && s[0] == '[') {
		if ((end = memchr(s, ']', len)) == NULL)
			return HOSTPORT_NO_CLOSE;
		hp->bracketed = 1;
		hp->host = s + 1;
		hp->hlen = (size_t)(end - s - 1);
		if (end + 1 == s + len)
			return HOSTPORT_OK;
		if (end[1] != ':')
			return HOSTPORT_JUNK;
		hp->port = end + 2;
		hp->plen = (size_t)(s + len - hp->port);
		return HOSTPORT_OK;
	}
	if ((colon = memchr(s, ':', len)) == NULL)
		return HOSTPORT_OK;
	if (memchr(colon + 1, ':', (size_t)(s + len - colon - 1)) != NULL)
		return HOSTPORT_COLONS;
	hp->hlen = (size_t)(colon - s);
	hp->port = colon + 1;
	hp->plen = (size_t)(s + len - hp->port);
	return HOSTPORT_OK;
}

/* 1 to 5 digits, nothing else: a port's shape, whatever its range. */
int hostport_digits(const char *p, size_t n, unsigned long *v)
{
	unsigned long x = 0;
	size_t i;

	if (n == 0 || n > 5)
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		x = x * 10 + (unsigned long)(p[i] - '0');
	}
	*v = x;
	return 1;
}

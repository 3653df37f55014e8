/* Listen address parsing: numeric addresses only, an explicit port. */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdlib.h>
#include <string.h>

#include "addr.h"

/* Parse "1.2.3.4:PORT" or "[v6]:PORT" into @p ss. */
int addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *port, *end;
	unsigned long p;
	char *ep;
	size_t n;
	int bracketed = s[0] == '[';

	memset(ss, 0, sizeof(*ss));
	if (bracketed) {
		if ((end = strchr(s, ']')) == NULL || end[1] != ':')
			return -1;
		n = (size_t)(end - s - 1);
		port = end + 2;
		s++;
	} else {
		if ((end = strrchr(s, ':')) == NULL)
			return -1;
		n = (size_t)(end - s);
		port = end + 1;
	}
	if (n == 0 || n >= sizeof(host))
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	/* "::1:9181" is ambiguous; IPv6 goes in brackets. */
	if (!bracketed && strchr(host, ':') != NULL)
		return -1;
	if (port[0] < '0' || port[0] > '9')
		return -1;
	p = strtoul(port, &ep, 10);
	if (*ep != '\0' || p > 65535 || ep - port > 5)
		return -1;

	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr)) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((unsigned short)p);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr)) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((unsigned short)p);
		*len = sizeof(*s6);
		return 0;
	}
	return -1;
}

/* Parse "*", "ADDR" or "ADDR/BITS". */
int cidr_parse(const char *s, size_t n, struct cidr *c)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = memchr(s, '/', n);
	size_t hn = slash != NULL ? (size_t)(slash - s) : n;
	unsigned long bits;
	char *ep;
	int max, i;

	memset(c, 0, sizeof(*c));
	if (n == 1 && s[0] == '*')
		return 0;
	if (hn == 0 || hn >= sizeof(host))
		return -1;
	memcpy(host, s, hn);
	host[hn] = '\0';
	if (inet_pton(AF_INET, host, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, host, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else
		return -1;
	c->bits = max;
	if (slash != NULL) {
		if (slash + 1 == s + n || slash[1] < '0' || slash[1] > '9' ||
		    s + n - slash > 4)
			return -1;
		bits = strtoul(slash + 1, &ep, 10);
		if (ep != s + n || bits > (unsigned long)max)
			return -1;
		c->bits = (int)bits;
	}
	/* No host bits: they would be silently ignored. */
	for (i = c->bits; i < max; i++)
		if (c->addr[i / 8] & (0x80 >> (i % 8)))
			return -1;
	return 0;
}

/* Compare the first c->bits bits of the peer's address. */
int cidr_match(const struct cidr *c, const struct sockaddr *sa)
{
	const unsigned char *a;
	int i;

	if (c->family == 0)
		return 1;
	if (sa->sa_family != c->family)
		return 0;
	if (sa->sa_family == AF_INET)
		a = (const unsigned char *)&((const struct sockaddr_in *)sa)
			->sin_addr;
	else
		a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	for (i = 0; i + 8 <= c->bits; i += 8)
		if (a[i / 8] != c->addr[i / 8])
			return 0;
	if (i < c->bits) {
		unsigned char mask = (unsigned char)(0xff << (8 - (c->bits - i)));
		if ((a[i / 8] & mask) != c->addr[i / 8])
			return 0;
	}
	return 1;
}

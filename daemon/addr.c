/*
 * Addresses: listen addresses (numeric only, an explicit port), and the
 * allow_from networks peers are checked against.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "hostport.h"
#include "util.h"

/* Parse "1.2.3.4:PORT" or "[v6]:PORT" into @p ss: hostport_split(), then
 * numeric addresses only and an explicit port. */
int addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 1];
	struct hostport hp;
	unsigned long p;

	memset(ss, 0, sizeof(*ss));
	/* "::1:9181" is ambiguous (HOSTPORT_COLONS); IPv6 goes in brackets. */
	if (hostport_split(s, strlen(s), &hp) != HOSTPORT_OK || hp.port == NULL)
		return -1;
	if (hp.hlen == 0 || hp.hlen >= sizeof(host))
		return -1;
	memcpy(host, hp.host, hp.hlen);
	host[hp.hlen] = '\0';
	if (!hostport_digits(hp.port, hp.plen, &p) || p > 65535)
		return -1;

	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr)) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((unsigned short)p);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, host,
	        &((struct sockaddr_in6 *)ss)->sin6_addr)) {
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
		unsigned char mask =
		    (unsigned char)(0xff << (8 - (c->bits - i)));
		if ((a[i / 8] & mask) != c->addr[i / 8])
			return 0;
	}
	return 1;
}

/* Parse a whole allow_from list into @p acl (at most ACL_MAX entries). */
int acl_parse(const char *list, struct cidr *acl, int *n, char *err,
    size_t errlen)
{
	const char *s = list, *item;
	size_t len;
	int k = 0;

	while (s != NULL) {
		item = list_next(&s, &len);
		if (len == 0)
			continue;
		if (k == ACL_MAX) {
			snprintf(err, errlen,
			    "allow_from: more than %d entries", ACL_MAX);
			return -1;
		}
		if (cidr_parse(item, len, &acl[k]) == -1) {
			snprintf(err, errlen, "allow_from: bad entry");
			return -1;
		}
		k++;
	}
	*n = k;
	return 0;
}

/* Is @p sa in one of the @p n networks of @p acl? */
int acl_match(const struct cidr *acl, int n, const struct sockaddr *sa)
{
	int i;

	for (i = 0; i < n; i++)
		if (cidr_match(&acl[i], sa))
			return 1;
	return 0;
}

/* The same host, whatever the ports: one peer for the per-peer cap. */
int addr_same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return 0;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		    ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		           &((const struct sockaddr_in6 *)b)->sin6_addr,
		           sizeof(struct in6_addr)) == 0;
	return 0;
}

/* "1.2.3.4:5" or "[::1]:5". */
void addr_format(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(s6->sin6_port));
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(s4->sin_port));
	} else
		snprintf(buf, len, "(family %d)", sa->sa_family);
}

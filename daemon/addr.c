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

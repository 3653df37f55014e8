/* Addresses and networks, shared by the config checker and the server. */
#ifndef JM4LW_ADDR_H
#define JM4LW_ADDR_H

#include <sys/socket.h>

#include <stddef.h>

/*
 * Parse "1.2.3.4:PORT" or "[v6addr]:PORT" (numeric only; PORT 0..65535,
 * 0 = any free port). libevent's evutil_parse_sockaddr_port() refuses
 * port 0, which tests and embedders need. Returns 0 or -1.
 */
int addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len);

/* One allow_from entry: a network, or every address. */
struct cidr {
	int family; /* AF_INET, AF_INET6, or 0 for "*" */
	unsigned char addr[16];
	int bits;
};

/*
 * Parse one allow_from entry of @p n bytes: "*", an address ("10.1.2.3",
 * "::1") or a network ("10.0.0.0/8", "fd00::/8"). Host bits must be zero,
 * so "10.1.2.3/8" (a typo for what?) is refused. Returns 0 or -1.
 */
int cidr_parse(const char *s, size_t n, struct cidr *c);

/* Does @p sa fall in @p c? */
int cidr_match(const struct cidr *c, const struct sockaddr *sa);

/* "1.2.3.4:5" or "[::1]:5", for logs, bound addresses and conf. */
void addr_format(const struct sockaddr *sa, char *buf, size_t len);

/* Listen addresses (and so listeners) a module has at most. */
#define JM4LW_LISTENERS_MAX 16

/* allow_from entries a module keeps at most. */
#define ACL_MAX 64

/* Parse a checked allow_from list into @p acl; 0, or -1 with a reason. */
int acl_parse(const char *list, struct cidr *acl, int *n, char *err,
    size_t errlen);

/* Is @p sa in one of the @p n networks of @p acl? */
int acl_match(const struct cidr *acl, int n, const struct sockaddr *sa);

/* Are @p a and @p b the same host address (ports aside)? */
int addr_same_host(const struct sockaddr *a, const struct sockaddr *b);

#endif

/*
 * The one ADDR:PORT parser: "host", "host:port", "[v6]" and "[v6]:port"
 * split into their parts, for the listen addresses (addr.c, config.c),
 * HTTP's Host header (http.c) and the client's -H entries (client/jm4lw.c).
 * Plain C and libc only, so the client compiles it too. It only splits:
 * what a host or a port may be is each caller's rule.
 */
#ifndef JM4LW_HOSTPORT_H
#define JM4LW_HOSTPORT_H

#include <stddef.h>

/* Why a string does not split. */
enum hostport_err {
	HOSTPORT_OK,
	HOSTPORT_NO_CLOSE, /* "[" without "]" */
	HOSTPORT_JUNK,     /* something other than ":port" after "]" */
	HOSTPORT_COLONS,   /* more than one colon outside brackets: IPv6
	                      without them (host is then the whole string) */
};

struct hostport {
	const char *host; /* brackets off */
	size_t hlen;
	const char *port; /* after the ':', NULL when there is no ':' */
	size_t plen;
	int bracketed;
};

/* Split the @p len bytes at @p s; HOSTPORT_OK or why not. */
enum hostport_err hostport_split(const char *s, size_t len,
    struct hostport *hp);

/* Is @p p (@p n bytes) 1 to 5 digits? Its value then in *@p v. */
int hostport_digits(const char *p, size_t n, unsigned long *v);

#endif

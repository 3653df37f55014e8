/* Listen address parsing shared by the config checker and the server. */
#ifndef JM4LW_ADDR_H
#define JM4LW_ADDR_H

#include <sys/socket.h>

/*
 * Parse "1.2.3.4:PORT" or "[v6addr]:PORT" (numeric only; PORT 0..65535,
 * 0 = any free port). libevent's evutil_parse_sockaddr_port() refuses
 * port 0, which tests and embedders need. Returns 0 or -1.
 */
int addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len);

#endif

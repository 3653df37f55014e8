/*
 * log — the module's log (daemon/log.c): the host's sink and level, lines
 * about peers, and the line a failed public call leaves in
 * jm4lw_errmsg().
 */
#ifndef JM4LW_LOG_H
#define JM4LW_LOG_H

#include <stdarg.h>

struct jm4lw;
struct sockaddr;

/* The default sink (stderr, INFO) and core's lines through it; after
 * core_init(). */
void log_init(struct jm4lw *m);
void log_msg(struct jm4lw *m, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void log_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* log_peer with a va_list (conn.c's lines about its connections). */
void vlog_peer(struct jm4lw *m, int level, const struct sockaddr *sa,
    const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
/* A public call failed: the line goes to jm4lw_errmsg() and the log. */
void module_fail(struct jm4lw *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A public call starts: jm4lw_errmsg() forgets the previous one's line. */
void module_clear_error(struct jm4lw *m);

#endif

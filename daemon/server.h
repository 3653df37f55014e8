/* Internals of the server module shared with thread.c and agent.c. */
#ifndef JM4LW_SERVER_H
#define JM4LW_SERVER_H

#include "config.h" /* config_check_module(), which server.c calls */
#include "jm4lw.h"

/* srvr's "Mode:" line: standalone, embedded, thread, agent. */
void server_set_mode(struct jm4lw *m, const char *mode);

/* Copy up to @p max listening descriptors into @p fds; returns how many. */
int server_listen_fds(const struct jm4lw *m, int *fds, int max);

#endif

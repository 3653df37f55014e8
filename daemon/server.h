/* Internals of the server module shared with thread.c and agent.c. */
#ifndef JM4LW_SERVER_H
#define JM4LW_SERVER_H

#include "jm4lw.h"

/* srvr's "Mode:" line: standalone, embedded, thread, agent. */
void server_set_mode(struct jm4lw *m, const char *mode);

/* Copy up to @p max listening descriptors into @p fds; returns how many. */
int server_listen_fds(const struct jm4lw *m, int *fds, int max);

/* jm4lw_config_check() that accepts any well-formed word in allow, since
 * the host may add words later (config.c). */
int config_check_module(const struct jm4lw_config *cfg, char *err,
    size_t errlen);

#endif

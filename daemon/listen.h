/*
 * listen — the words' listeners (daemon/listen.c): bind, accept, pause
 * on EMFILE, the allow_from check; and the sockets the HTTP face binds
 * through. Its listeners are the module object's (module.h: struct
 * listener).
 */
#ifndef JM4LW_LISTEN_H
#define JM4LW_LISTEN_H

struct jm4lw;

/* @p bind for each address of the comma list @p list; -1 if one failed
 * (each failure logged by @p bind). */
int listen_each(struct jm4lw *m, const char *list,
    int (*bind)(struct jm4lw *m, const char *addr));
/* A listening socket on @p addr, or -1 logged under @p key. */
int listen_socket(struct jm4lw *m, const char *key, const char *addr);
int listen_init(struct jm4lw *m);
/* Warn about allow entries that name no word this module serves. */
void listen_check_allow(struct jm4lw *m);
void listen_free(struct jm4lw *m);
/* The listening descriptors (thread mode closes them in a fork child). */
int server_listen_fds(const struct jm4lw *m, int *fds, int max);

#endif

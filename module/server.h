/*
 * server — the module's assembler (module/server.c): besides the API
 * (jm4lw_new, jm4lw_reconfigure, jm4lw_free, jm4lw_add_word in jm4lw.h),
 * what thread mode, the agent and jm4lwd set on a module.
 */
#ifndef JM4LW_SERVER_H
#define JM4LW_SERVER_H

struct jm4lw;

/* srvr's Mode: line ("thread" in thread mode; "standalone" else). */
void server_set_mode(struct jm4lw *m, const char *mode);

/* jm4lwd: the process is the module, and profiles itself; its loop's
 * allocations stay sampled (see module_unsampled_enter). */
void server_keep_sampling(struct jm4lw *m);

/* thread.c, at exit(): remove the module's staging directory now. */
void server_unstage(struct jm4lw *m);

#endif

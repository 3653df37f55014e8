/*
 * life — the module's lifecycle (daemon/life.c): the depth of its
 * callbacks on the stack, and a jm4lw_free() asked for inside one (from a
 * word handler or the log callback), run when the last returns.
 */
#ifndef JM4LW_LIFE_H
#define JM4LW_LIFE_H

struct jm4lw;

/* Around every callback from the loop into the module, and every API
 * call that can call the host back (a word handler, the log): a free
 * asked for meanwhile happens at the last leave. */
void module_enter(struct jm4lw *m);
void module_leave(struct jm4lw *m);

#endif

/*
 * The module's lifetime inside its own callbacks. A host may call
 * jm4lw_free() from a word handler (a `quit` word) or from its log
 * callback; the module's code that called it still runs afterwards, on
 * the connection and the module. So, as evhttp defers freeing a
 * connection whose callback is running, each callback from the loop into
 * the module (and each API call that can call the host back) counts
 * itself here, and a free asked for meanwhile runs when the outermost one
 * returns. Below every other file: it calls the teardown only through the
 * pointer server.c set.
 */
#include "life.h"
#include "module.h"

/* A callback of the module begins. */
void module_enter(struct jm4lw *m)
{
	m->depth++;
}

/* A callback ends: the last one out does the free the host asked for. */
void module_leave(struct jm4lw *m)
{
	if (--m->depth == 0 && m->free_requested)
		m->destroy(m);
}

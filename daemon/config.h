/* The configuration's internals, shared by the module and its tests. */
#ifndef JM4LW_CONFIG_H
#define JM4LW_CONFIG_H

#include <stddef.h>

#include "core.h"
#include "jm4lw.h"

/* jm4lw_config_check() that accepts any well-formed word in allow, since
 * the host may add words later. */
int config_check_module(const struct jm4lw_config *cfg, char *err,
    size_t errlen);

/* The typed policy of a checked configuration: 0, or -1 with a reason. */
int config_policy(const struct jm4lw_config *cfg, struct core_policy *pol,
    char *err, size_t errlen);

#endif

/* Internals of the configuration (config.c) that the server, the tests and
 * other parsers share. */
#ifndef JM4LW_CONFIG_H
#define JM4LW_CONFIG_H

#include <stddef.h>

#include "jm4lw.h"

/* Checker flag: allow may name words the host adds later. */
#define CONFIG_HOST_WORDS 0x1

/* jm4lw_config_check() that accepts any well-formed word in allow, since
 * the host may add words later. */
int config_check_module(const struct jm4lw_config *cfg, char *err,
    size_t errlen);

#endif

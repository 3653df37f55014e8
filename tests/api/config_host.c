/*
 * config_host: the opaque configuration and the sized thread options as
 * a host meets them: jm4lw_config_new() gives the
 * defaults, jm4lw_config_get() reads back what jm4lw_config_set() and
 * jm4lw_config_load() wrote, and jm4lw_start_thread_ex() refuses options
 * whose size was not set. Ends with "all right" or names what is wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jm4lw.h"

static int failed;

/* Key @p key of @p cfg must read @p want (NULL: the get must fail). */
static void get_is(const struct jm4lw_config *cfg, const char *key,
    const char *want)
{
	char buf[64] = "junk";
	int rc = jm4lw_config_get(cfg, key, buf, sizeof(buf));
	int ok = want == NULL ? rc == -1 && buf[0] == '\0'
	                      : rc == 0 && strcmp(buf, want) == 0;

	printf("get %s: %d \"%s\"%s\n", key, rc, buf, ok ? "" : " (WRONG)");
	if (!ok)
		failed = 1;
}

/* A setup hook: proves the options' fields were read. */
static void setup(struct jm4lw *m, void *arg)
{
	(void)m;
	*(int *)arg = 1;
}

/* The defaults, a set, a load, a too-small buffer, then the options. */
int main(int argc, char **argv)
{
	int ran = 0;
	struct jm4lw_config *cfg = jm4lw_config_new();
	struct jm4lw_thread_opts bad = {.size = 0};
	struct jm4lw_thread_opts good = {JM4LW_THREAD_OPTS_INIT, .setup = setup,
	    .setup_arg = &ran};
	struct jm4lw_thread *t;
	char err[256] = "", small[4];

	if (cfg == NULL || argc != 2)
		return 2;
	get_is(cfg, "listen", "127.0.0.1:9181");
	get_is(cfg, "max_connections", "64");
	get_is(cfg, "dump_min_free", "67108864");
	get_is(cfg, "dump_prefix", "jm4lw");
	get_is(cfg, "no_such_key", NULL);
	get_is(NULL, "listen", NULL);
	if (jm4lw_config_set(cfg, "listen", "127.0.0.1:0", err, sizeof(err)) ||
	    jm4lw_config_set(cfg, "http_listen", "", err, sizeof(err)) ||
	    jm4lw_config_set(cfg, "dump_min_free", "1M", err, sizeof(err)) ||
	    jm4lw_config_load(cfg, argv[1], err, sizeof(err))) {
		printf("set/load: %s (WRONG)\n", err);
		return 1;
	}
	get_is(cfg, "listen", "127.0.0.1:0");
	get_is(cfg, "http_listen", "");
	get_is(cfg, "dump_min_free", "1048576");
	get_is(cfg, "dump_keep", "7"); /* from the file */
	if (jm4lw_config_get(cfg, "listen", small, sizeof(small)) != -1 ||
	    small[0] != '\0') {
		printf("get into 4 bytes: not refused (WRONG)\n");
		failed = 1;
	} else
		printf("get into 4 bytes: -1 \"\"\n");

	t = jm4lw_start_thread_ex(cfg, &bad, err, sizeof(err));
	printf("start_thread_ex, size 0: %s \"%s\"\n", t ? "ok" : "NULL", err);
	if (t != NULL ||
	    strstr(err,
	        "jm4lw_thread_opts: size is 0, want "
	        "sizeof(struct jm4lw_thread_opts)") == NULL)
		failed = 1;
	jm4lw_stop_thread(t);
	err[0] = '\0';
	t = jm4lw_start_thread_ex(cfg, &good, err, sizeof(err));
	printf("start_thread_ex, sized: %s \"%s\", setup %s\n",
	    t ? "ok" : "NULL", err, ran ? "ran" : "did not run");
	if (t == NULL || !ran)
		failed = 1;
	jm4lw_stop_thread(t);
	jm4lw_config_free(cfg);
	printf(failed ? "something is wrong\n" : "all right\n");
	return failed;
}

/*
 * null_host: every entry point of jm4lw.h called with NULL where a host
 * could pass one by mistake (jm4lw_listen(NULL, ...) was a
 * SIGSEGV). Each must return its failure value and crash nothing; the
 * program prints one line per call and "all survived" at the end.
 */
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "jm4lw.h"

static int failed;

/* One call's verdict: it must have returned @p want. */
static void expect(const char *call, int got, int want)
{
	printf("%s: %d%s\n", call, got, got == want ? "" : " (WRONG)");
	if (got != want)
		failed = 1;
}

/* A word handler that never runs: jm4lw_add_word needs one. */
static int word_fn(struct jm4lw_reply *r, void *arg)
{
	(void)r;
	(void)arg;
	return 0;
}

/* Each NULL in turn; a crash ends the program before "all survived". */
int main(void)
{
	struct jm4lw_config *cfg;
	char err[256], buf[64];

	jm4lw_config_free(NULL);
	printf("jm4lw_config_free(NULL): returned\n");
	expect("jm4lw_config_get(NULL)",
	    jm4lw_config_get(NULL, "listen", buf, sizeof(buf)), -1);
	expect("jm4lw_errmsg(NULL) is \"\"", jm4lw_errmsg(NULL)[0], '\0');
	if ((cfg = jm4lw_config_new()) == NULL)
		return 2;
	expect("jm4lw_config_set(NULL)",
	    jm4lw_config_set(NULL, "listen", "x", err, sizeof(err)), -1);
	expect("jm4lw_config_load(NULL)",
	    jm4lw_config_load(NULL, "/dev/null", err, sizeof(err)), -1);
	expect("jm4lw_config_check(NULL)",
	    jm4lw_config_check(NULL, err, sizeof(err)), -1);
	expect("jm4lw_new(base NULL)",
	    jm4lw_new(NULL, cfg, err, sizeof(err)) == NULL, 1);
	expect("jm4lw_start_thread(cfg NULL)",
	    jm4lw_start_thread(NULL, err, sizeof(err)) == NULL, 1);
	jm4lw_set_log(NULL, NULL, NULL);
	jm4lw_set_log_level(NULL, JM4LW_LOG_INFO);
	printf("jm4lw_set_log(NULL), jm4lw_set_log_level(NULL): returned\n");
	expect("jm4lw_listen(NULL)", jm4lw_listen(NULL, "127.0.0.1:0"), -1);
	expect("jm4lw_listen_fd(NULL)", jm4lw_listen_fd(NULL, 0), -1);
	expect("jm4lw_http_listen(NULL)",
	    jm4lw_http_listen(NULL, "127.0.0.1:0"), -1);
	expect("jm4lw_bound_addr(NULL)",
	    jm4lw_bound_addr(NULL, 0, buf, sizeof(buf)), -1);
	expect("jm4lw_http_bound_addr(NULL)",
	    jm4lw_http_bound_addr(NULL, 0, buf, sizeof(buf)), -1);
	expect("jm4lw_reconfigure(NULL)",
	    jm4lw_reconfigure(NULL, cfg, err, sizeof(err)), -1);
	expect("jm4lw_add_word(NULL)",
	    jm4lw_add_word(NULL, "abcd", word_fn, NULL, 0), -1);
	jm4lw_reply_write(NULL, "x", 1);
	jm4lw_reply_printf(NULL, "%s", "x");
	printf("jm4lw_reply_write(NULL), jm4lw_reply_printf(NULL): returned\n");
	expect("jm4lw_reply_error(NULL)", jm4lw_reply_error(NULL, "x"), -1);
	expect("jm4lw_reply_builtin(NULL)", jm4lw_reply_builtin(NULL, "ruok"),
	    -1);
	expect("jm4lw_thread_name(NULL)", jm4lw_thread_name(NULL), -1);
	jm4lw_free(NULL);
	jm4lw_stop_thread(NULL);
	printf("jm4lw_free(NULL), jm4lw_stop_thread(NULL): returned\n");
	jm4lw_config_free(cfg);
	printf(failed ? "some returned the wrong value\n" : "all survived\n");
	return failed;
}

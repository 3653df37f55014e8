/*
 * errmsg_host: a libevent host that learns why each call failed from
 * jm4lw_errmsg() alone. Its log sink drops every line,
 * so nothing reaches it but what the API returns. Each check prints one
 * line; the program ends with "all messages right" or names the wrong one.
 */
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "jm4lw.h"

static int failed;

/* A log sink that hears nothing: the messages must come from the API. */
static void deaf(int level, const char *msg, void *arg)
{
	(void)level, (void)msg, (void)arg;
}

/* A word handler; never run here. */
static int word_fn(struct jm4lw_reply *r, void *arg)
{
	(void)r, (void)arg;
	return 0;
}

/* One call: it returned @p rc (want @p want) and left a message that
 * contains @p sub ("" wants an empty message). */
static void check(const char *what, int rc, int want, const char *msg,
    const char *sub)
{
	int ok = rc == want &&
	    (sub[0] == '\0' ? msg[0] == '\0' : strstr(msg, sub) != NULL);

	printf("%s: %d \"%s\"%s\n", what, rc, msg, ok ? "" : " (WRONG)");
	if (!ok)
		failed = 1;
}

/* Each failure the listen, add_word and reconfigure calls can meet. */
int main(void)
{
	struct event_base *base = event_base_new();
	struct jm4lw_config *cfg = jm4lw_config_new();
	struct jm4lw *m;
	char err[256] = "", addr[64], want[128];
	int i, rc;

	if (base == NULL || cfg == NULL ||
	    jm4lw_config_set(cfg, "http_listen", "", err, sizeof(err)) == -1)
		return 2;
	if ((m = jm4lw_new(base, cfg, err, sizeof(err))) == NULL) {
		printf("jm4lw_new: %s\n", err);
		return 2;
	}
	jm4lw_set_log(m, deaf, NULL);
	check("errmsg(NULL)", 0, 0, jm4lw_errmsg(NULL), "");
	check("fresh module", 0, 0, jm4lw_errmsg(m), "");

	/* listen: the address, then the kernel's reason, then the cap. */
	rc = jm4lw_listen(m, "nowhere");
	check("listen nowhere", rc, -1, jm4lw_errmsg(m),
	    "listen nowhere: not an address (want ADDR:PORT or [ADDR6]:PORT)");
	rc = jm4lw_listen(m, "127.0.0.1:0");
	check("listen 127.0.0.1:0 clears it", rc, 0, jm4lw_errmsg(m), "");
	if (jm4lw_bound_addr(m, 0, addr, sizeof(addr)) == -1)
		return 2;
	snprintf(want, sizeof(want),
	    "cannot listen on %s (listen): Address already in use", addr);
	rc = jm4lw_listen(m, addr);
	check("listen on a taken port", rc, -1, jm4lw_errmsg(m), want);
	rc = jm4lw_listen_fd(m, -1);
	check("listen_fd -1", rc, -1, jm4lw_errmsg(m),
	    "listen_fd -1: Bad file descriptor");
	for (i = 1; i < 16; i++)
		if (jm4lw_listen(m, "127.0.0.1:0") == -1)
			return 2;
	rc = jm4lw_listen(m, "127.0.0.1:0");
	check("17th listener", rc, -1, jm4lw_errmsg(m),
	    "listen 127.0.0.1:0: more than 16 listeners");
	rc = jm4lw_listen_fd(m, 0);
	check("17th listener by fd", rc, -1, jm4lw_errmsg(m),
	    "listen_fd 0: more than 16 listeners");

	/* The HTTP face says the same things under its own key. */
	rc = jm4lw_http_listen(m, "nowhere");
	check("http_listen nowhere", rc, -1, jm4lw_errmsg(m),
	    "http_listen nowhere: not an address");
	snprintf(want, sizeof(want),
	    "cannot listen on %s (http_listen): Address already in use", addr);
	rc = jm4lw_http_listen(m, addr);
	check("http_listen on a taken port", rc, -1, jm4lw_errmsg(m), want);
	rc = jm4lw_http_listen(m, "127.0.0.1:0");
	check("http_listen 127.0.0.1:0 clears it", rc, 0, jm4lw_errmsg(m), "");

	/* add_word: the rule, the handler, the cap, a replaced built-in. */
	rc = jm4lw_add_word(m, "ab", word_fn, NULL, 0);
	check("add_word ab", rc, -1, jm4lw_errmsg(m),
	    "add_word \"ab\": a word is exactly 4 printable ASCII bytes, "
	    "no space or comma");
	rc = jm4lw_add_word(m, "ab c", word_fn, NULL, 0);
	check("add_word \"ab c\"", rc, -1, jm4lw_errmsg(m),
	    "add_word \"ab c\": a word is exactly 4");
	rc = jm4lw_add_word(m, "ab\ncd", word_fn, NULL, 0);
	check("add_word with a newline", rc, -1, jm4lw_errmsg(m),
	    "add_word \"ab?cd\": a word is exactly 4");
	rc = jm4lw_add_word(m, NULL, word_fn, NULL, 0);
	check("add_word NULL", rc, -1, jm4lw_errmsg(m),
	    "add_word: word is NULL");
	rc = jm4lw_add_word(m, "abcd", NULL, NULL, 0);
	check("add_word without fn", rc, -1, jm4lw_errmsg(m),
	    "add_word abcd: fn is NULL (a word needs a handler)");
	rc = jm4lw_add_word(m, "mntr", word_fn, NULL, 0);
	check("add_word mntr", rc, 0, jm4lw_errmsg(m),
	    "add_word mntr: replaces the built-in word");
	rc = jm4lw_add_word(m, "mntr", word_fn, NULL, 0);
	check("add_word mntr again (ours now)", rc, 0, jm4lw_errmsg(m), "");
	for (i = 0; i < 63; i++) {
		snprintf(want, sizeof(want), "x%03d", i);
		if (jm4lw_add_word(m, want, word_fn, NULL, 0) == -1) {
			printf("add_word %s: %s (WRONG)\n", want,
			    jm4lw_errmsg(m));
			return 1;
		}
	}
	rc = jm4lw_add_word(m, "x063", word_fn, NULL, 0);
	check("65th host word", rc, -1, jm4lw_errmsg(m),
	    "add_word x063: the table is full (64 host words)");
	rc = jm4lw_add_word(m, "x000", word_fn, NULL, 0);
	check("replacing a host word in a full table", rc, 0, jm4lw_errmsg(m),
	    "");

	/* reconfigure: the reason in err, and in jm4lw_errmsg() too. */
	err[0] = '\0';
	rc = jm4lw_reconfigure(m, NULL, err, sizeof(err));
	check("reconfigure NULL (err)", rc, -1, err, "no configuration");
	check("reconfigure NULL (errmsg)", rc, -1, jm4lw_errmsg(m),
	    "reconfigure: no configuration");
	rc = jm4lw_reconfigure(m, cfg, err, sizeof(err));
	check("reconfigure clears it", rc, 0, jm4lw_errmsg(m), "");

	jm4lw_free(m);
	jm4lw_config_free(cfg);
	event_base_free(base);
	printf(failed ? "some message is wrong\n" : "all messages right\n");
	return failed;
}

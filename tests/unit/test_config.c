/*
 * Unit tests of daemon/config.c: defaults, every key good and bad, whole
 * struct checks, and INI files with their error lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/stat.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr.h"
#include "config.h"
#include "config_struct.h"
#include "core.h"
#include "jm4lw.h"
#include "proto.h"
#include "util.h"

static char err[1024]; /* the unknown-key line lists every key */
static char path[4096];

/* Set a key that must be accepted. */
static void set_ok(struct jm4lw_config *cfg, const char *key, const char *value)
{
	err[0] = '\0';
	if (jm4lw_config_set(cfg, key, value, err, sizeof(err)) != 0)
		fail_msg("%s = \"%s\" refused: %s", key, value, err);
}

/*
 * Set a key that must be refused with a reason containing @p want, and
 * leave the configuration exactly as it was.
 */
static void set_bad(const char *key, const char *value, const char *want)
{
	struct jm4lw_config cfg, before;

	config_defaults(&cfg);
	before = cfg;
	err[0] = '\0';
	if (jm4lw_config_set(&cfg, key, value, err, sizeof(err)) != -1)
		fail_msg("%s = \"%s\" accepted", key, value);
	if (strstr(err, want) == NULL)
		fail_msg("%s = \"%s\": \"%s\" does not say \"%s\"", key, value,
		    err, want);
	assert_null(strchr(err, '\n'));
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

/* A string of @p n copies of @p c (static, overwritten by the next call). */
static const char *repeat(char c, size_t n)
{
	static char buf[8192];

	assert_true(n < sizeof(buf));
	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

/* Write @p text to a new file under $TMPDIR; its name goes to path[]. */
static const char *write_conf(const char *text)
{
	const char *dir = getenv("TMPDIR");
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/test_config.XXXXXX",
	    dir != NULL && *dir != '\0' ? dir : "/tmp");
	assert_true((fd = mkstemp(path)) != -1);
	assert_non_null(f = fdopen(fd, "w"));
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Load @p text, expect failure, and return the message. */
static const char *load_bad(const char *text)
{
	struct jm4lw_config cfg, before;

	config_defaults(&cfg);
	before = cfg;
	write_conf(text);
	err[0] = '\0';
	assert_int_equal(jm4lw_config_load(&cfg, path, err, sizeof(err)), -1);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
	unlink(path);
	return err;
}

/* Does the error start with "<path>:<line>: " and then @p reason? */
static void assert_at(int line, const char *reason)
{
	char want[4200];

	snprintf(want, sizeof(want), "%s:%d: %s", path, line, reason);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("got \"%s\", want it to start with \"%s\"", err, want);
}

static void test_defaults(void **state)
{
	struct jm4lw_config cfg;

	(void)state;
	memset(&cfg, 0xa5, sizeof(cfg));
	config_defaults(&cfg);
	assert_string_equal(cfg.listen, JM4LW_DEFAULT_LISTEN);
	assert_string_equal(cfg.listen, "127.0.0.1:9181");
	assert_string_equal(cfg.allow, "*");
	assert_string_equal(cfg.dump_dir, "/tmp/jm4lw-%u");
	assert_string_equal(cfg.dump_prefix, "jm4lw");
	assert_int_equal(cfg.max_connections, 64);
	assert_int_equal(cfg.max_connections_per_peer, 48);
	assert_int_equal(cfg.read_timeout, 5);
	assert_int_equal(cfg.write_timeout, 30);
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), 0);
}

static void test_unknown_key(void **state)
{
	struct jm4lw_config cfg;

	(void)state;
	set_bad("foo", "1", "unknown key \"foo\"");
	set_bad("foo", "1", "listen"); /* the keys there are */
	set_bad("Listen", "1", "unknown key \"Listen\"");
	set_bad("", "1", "unknown key \"\"");
	set_bad("a\nb", "1", "unknown key \"a\\x0ab\"");
	config_defaults(&cfg);
	assert_int_equal(jm4lw_config_set(&cfg, "listen", NULL, err,
	                     sizeof(err)),
	    -1);
	assert_string_equal(err, "listen: no value");
	/* No room for a reason is fine too. */
	assert_int_equal(jm4lw_config_set(&cfg, "foo", "1", NULL, 0), -1);
}

static void test_listen_good(void **state)
{
	struct jm4lw_config cfg;
	char list[512];
	size_t o = 0;
	int i;

	(void)state;
	config_defaults(&cfg);
	set_ok(&cfg, "listen", "127.0.0.1:9181");
	assert_string_equal(cfg.listen, "127.0.0.1:9181");
	set_ok(&cfg, "listen", "0.0.0.0:0"); /* port 0: any free port */
	assert_string_equal(cfg.listen, "0.0.0.0:0");
	set_ok(&cfg, "listen", "127.0.0.1:65535");
	set_ok(&cfg, "listen", "[::1]:9181");
	assert_string_equal(cfg.listen, "[::1]:9181");
	set_ok(&cfg, "listen", "[::]:0");
	set_ok(&cfg, "listen", "[2001:db8::1]:1");
	set_ok(&cfg, "listen", "[::ffff:127.0.0.1]:9181");
	/* Several, white space around items and the value dropped. */
	set_ok(&cfg, "listen", "  127.0.0.1:1 ,\t[::1]:2,10.0.0.1:3  ");
	assert_string_equal(cfg.listen, "127.0.0.1:1,[::1]:2,10.0.0.1:3");
	/* Sixteen is the most. */
	for (i = 0; i < 16; i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o,
		    "%s127.0.0.%d:0", i ? "," : "", i + 1);
	set_ok(&cfg, "listen", list);
	assert_string_equal(cfg.listen, list);
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), 0);
}

static void test_listen_bad(void **state)
{
	char list[600];
	size_t o = 0;
	int i;

	(void)state;
	set_bad("listen", "127.0.0.1", "\"127.0.0.1\" has no port");
	set_bad("listen", "127.0.0.1:", "has no port");
	set_bad("listen", "[::1]", "\"[::1]\" has no port");
	set_bad("listen", "[::1]:", "has no port");
	set_bad("listen", "::1", "IPv6 address goes in brackets");
	set_bad("listen", "::1:9181", "IPv6 address goes in brackets");
	set_bad("listen", "[::1:9181", "no closing ]");
	set_bad("listen", "[::1]9181", "junk after ]");
	set_bad("listen", "localhost:9181", "not a numeric IPv4 or IPv6");
	set_bad("listen", "999.1.1.1:1", "not a numeric");
	set_bad("listen", "[fe80::1%lo]:1", "not a numeric");
	set_bad("listen", ":9181", "not a numeric");
	set_bad("listen", "127.0.0.1:65536",
	    "port out of range (want 0-65535)");
	set_bad("listen", "127.0.0.1:000001", "port out of range");
	set_bad("listen", "127.0.0.1:99999999999999999999", "out of range");
	set_bad("listen", "127.0.0.1:-1", "port is not a number");
	set_bad("listen", "127.0.0.1:+1", "port is not a number");
	set_bad("listen", "127.0.0.1:9181x", "port is not a number");
	set_bad("listen", "127.0.0.1:http", "port is not a number");
	set_bad("listen", "127.0.0.1 :9181", "not a numeric");
	set_bad("listen", "127.0.0.1:9181 9182", "port is not a number");
	set_bad("listen", "\x01\xff", "\"\\x01\\xff\" has no port");
	set_bad("listen", "",
	    "listen: no address (want ADDR:PORT or "
	    "[ADDR6]:PORT, several separated by commas)");
	set_bad("listen", "   ", "listen: no address");
	set_bad("listen", ",", "empty entry");
	set_bad("listen", "127.0.0.1:1,,127.0.0.1:2", "empty entry");
	set_bad("listen", "127.0.0.1:1,", "empty entry");
	set_bad("listen", "127.0.0.1:1,localhost", "\"localhost\" has no port");
	for (i = 0; i < 17; i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o,
		    "%s127.0.0.%d:0", i ? "," : "", i + 1);
	set_bad("listen", list, "more than 16 addresses");
	set_bad("listen", repeat('1', 512),
	    "value too long (512 bytes, at "
	    "most 511)");
}

static void test_allow_good(void **state)
{
	struct jm4lw_config cfg;
	const struct proto_word *w;
	char all[512];
	size_t o = 0;

	(void)state;
	config_defaults(&cfg);
	set_ok(&cfg, "allow", "ruok");
	assert_string_equal(cfg.allow, "ruok");
	set_ok(&cfg, "allow", " ruok , mntr\t,srvr ");
	assert_string_equal(cfg.allow, "ruok,mntr,srvr");
	set_ok(&cfg, "allow", "*");
	assert_string_equal(cfg.allow, "*");
	set_ok(&cfg, "allow", " * ");
	assert_string_equal(cfg.allow, "*");
	set_ok(&cfg, "allow", "readonly,jmfp");
	assert_string_equal(cfg.allow, "readonly,jmfp");
	set_ok(&cfg, "allow", "ruok,ruok"); /* harmless */
	/* Every built-in word by name. */
	for (w = proto_words; w->name != NULL; w++)
		o += (size_t)snprintf(all + o, sizeof(all) - o, "%s%s",
		    o ? "," : "", w->name);
	set_ok(&cfg, "allow", all);
	assert_string_equal(cfg.allow, all);
	for (w = proto_words; w->name != NULL; w++)
		assert_true(proto_allowed(cfg.allow, w->name, w->flags));
	/* What the server will do with a list. */
	set_ok(&cfg, "allow", "ruok, jmfp");
	assert_true(proto_allowed(cfg.allow, "ruok", 0));
	assert_true(proto_allowed(cfg.allow, "jmfp", PROTO_F_MUTATES));
	assert_false(proto_allowed(cfg.allow, "mntr", 0));
}

static void test_allow_readonly(void **state)
{
	static const char *const ro[] = {"ruok", "mntr", "srvr", "conf", "jmst",
	    "jmsj"};
	static const char *const rw[] = {"jmfp", "jmep", "jmdp", "jmpg"};
	const struct proto_word *w;
	struct jm4lw_config cfg;
	size_t i;

	(void)state;
	config_defaults(&cfg);
	set_ok(&cfg, "allow", "readonly");
	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
		assert_non_null(w = proto_lookup(ro[i]));
		assert_false(w->flags & PROTO_F_MUTATES);
		assert_true(proto_allowed(cfg.allow, w->name, w->flags));
	}
	for (i = 0; i < sizeof(rw) / sizeof(rw[0]); i++) {
		assert_non_null(w = proto_lookup(rw[i]));
		assert_true(w->flags & PROTO_F_MUTATES);
		assert_false(proto_allowed(cfg.allow, w->name, w->flags));
	}
	/* And nothing else in the table slips through either way. */
	for (w = proto_words; w->name != NULL; w++)
		assert_int_equal(proto_allowed(cfg.allow, w->name, w->flags),
		    !(w->flags & PROTO_F_MUTATES));
	/* readonly plus one mutating word. */
	set_ok(&cfg, "allow", "readonly, jmfp");
	assert_true(proto_allowed(cfg.allow, "jmfp", PROTO_F_MUTATES));
	assert_false(proto_allowed(cfg.allow, "jmep", PROTO_F_MUTATES));
	assert_true(proto_allowed(cfg.allow, "mntr", 0));
}

static void test_allow_bad(void **state)
{
	(void)state;
	set_bad("allow", "", "allow: empty; use *");
	set_bad("allow", "  ", "allow: empty; use *");
	set_bad("allow", ",", "empty entry");
	set_bad("allow", "ruok,", "empty entry");
	set_bad("allow", "ruok,,mntr", "empty entry");
	set_bad("allow", "nope", "unknown word \"nope\"");
	set_bad("allow", "nope", "ruok mntr srvr conf"); /* says what exists */
	set_bad("allow", "ruok,mntr,nope", "unknown word \"nope\"");
	set_bad("allow", "RUOK", "unknown word \"RUOK\""); /* exact match */
	set_bad("allow", "ruo", "unknown word \"ruo\"");
	set_bad("allow", "ruokx", "unknown word \"ruokx\"");
	set_bad("allow", "ruok mntr", "unknown word \"ruok mntr\"");
	set_bad("allow", "readonlyx", "unknown word");
	set_bad("allow", "**", "unknown word");
	set_bad("allow", "*,ruok", "use it alone");
	set_bad("allow", "ruok,*", "use it alone");
	set_bad("allow", repeat('x', 512), "value too long");
}

static void test_dump_dir(void **state)
{
	struct jm4lw_config cfg;

	(void)state;
	config_defaults(&cfg);
	set_ok(&cfg, "dump_dir", "/var/tmp/jm4lw");
	assert_string_equal(cfg.dump_dir, "/var/tmp/jm4lw");
	set_ok(&cfg, "dump_dir", "  relative/dir  ");
	assert_string_equal(cfg.dump_dir, "relative/dir");
	/* Need not exist now: that is checked at dump time. */
	set_ok(&cfg, "dump_dir", "/nonexistent/jm4lw/dumps");
	set_ok(&cfg, "dump_dir", "/with space/and-ütf8");
	set_ok(&cfg, "dump_dir", repeat('d', 4095));
	assert_int_equal(strlen(cfg.dump_dir), 4095);
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), 0);

	set_bad("dump_dir", "", "dump_dir: empty");
	set_bad("dump_dir", " \t", "dump_dir: empty");
	set_bad("dump_dir", repeat('d', 4096),
	    "dump_dir: value too long (4096 bytes, at most 4095)");
	set_bad("dump_dir", "/tmp/a\nb", "control character 0x0a at byte 7");
	set_bad("dump_dir", "/tmp/\x01", "control character 0x01");
	set_bad("dump_dir", "/tmp/\x7f", "control character 0x7f");
	set_bad("dump_dir", "/tmp/a\tb", "control character 0x09");
}

static void test_dump_prefix(void **state)
{
	struct jm4lw_config cfg;

	(void)state;
	config_defaults(&cfg);
	set_ok(&cfg, "dump_prefix", "x");
	set_ok(&cfg, "dump_prefix", "my-service_1.heap");
	assert_string_equal(cfg.dump_prefix, "my-service_1.heap");
	set_ok(&cfg, "dump_prefix", "AZaz09._-");
	set_ok(&cfg, "dump_prefix", repeat('p', 63));
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), 0);

	set_bad("dump_prefix", "", "dump_prefix: empty");
	set_bad("dump_prefix", repeat('p', 64),
	    "dump_prefix: value too long (64 bytes, at most 63)");
	set_bad("dump_prefix", ".hidden", "starts with .");
	set_bad("dump_prefix", "..", "starts with .");
	set_bad("dump_prefix", "a/b", "\"a/b\": byte 2 ('/') not allowed");
	set_bad("dump_prefix", "../x", "starts with .");
	set_bad("dump_prefix", "a b", "byte 2 (0x20) not allowed");
	set_bad("dump_prefix", "a%n", "byte 2 ('%') not allowed");
	set_bad("dump_prefix", "pr\xc3\xa9", "byte 3 (0xc3) not allowed");
}

/* The index of key @p name in the table, or -1. */
static int key_index(const char *name)
{
	const struct config_key *k;
	int i;

	for (i = 0; (k = config_key_at((size_t)i)) != NULL; i++)
		if (strcmp(k->name, name) == 0)
			return i;
	return -1;
}

/* The entry of the key table named @p name; the test fails without one. */
static const struct config_key *key_named(const char *name)
{
	int i = key_index(name);

	if (i == -1)
		fail_msg("no key %s in the table", name);
	return config_key_at((size_t)i);
}

/* Boundaries and every kind of bad number for one key. */
static void number_key(const char *key, unsigned min, unsigned max)
{
	struct jm4lw_config cfg;
	char v[32];
	unsigned got;

	config_defaults(&cfg);
	snprintf(v, sizeof(v), "%u", min);
	set_ok(&cfg, key, v);
	config_defaults(&cfg);
	snprintf(v, sizeof(v), " %u\t", max);
	set_ok(&cfg, key, v);
	memcpy(&got, (const char *)&cfg + key_named(key)->off, sizeof(got));
	assert_int_equal(got, max);
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), 0);
	set_ok(&cfg, key, "0010"); /* leading zeros are still decimal */

	snprintf(v, sizeof(v), "%u", min - 1);
	set_bad(key, v, "is out of range");
	snprintf(v, sizeof(v), "%u", max + 1);
	set_bad(key, v, "is out of range");
	set_bad(key, "4294967296", "is out of range");           /* 2^32 */
	set_bad(key, "18446744073709551616", "is out of range"); /* 2^64 */
	set_bad(key, repeat('9', 400), "is out of range");
	set_bad(key, "", "empty");
	set_bad(key, "  ", "empty");
	set_bad(key, "-1", "\"-1\" is not a whole number");
	set_bad(key, "+5", "is not a whole number");
	set_bad(key, "5s", "\"5s\" is not a whole number");
	set_bad(key, "1.5", "is not a whole number");
	set_bad(key, "0x10", "is not a whole number");
	set_bad(key, "1 0", "is not a whole number");
	set_bad(key, "lots", "is not a whole number");
	set_bad(key, repeat('9', 4096), "value too long");
	/* The reason names the key and the range. */
	snprintf(v, sizeof(v), "want %u-%u", min, max);
	set_bad(key, "x", key);
	set_bad(key, "x", v);
}

static void test_numbers(void **state)
{
	(void)state;
	number_key("max_connections", 1, 100000);
	number_key("max_connections_per_peer", 1, 100000);
	number_key("read_timeout", 1, 3600);
	number_key("write_timeout", 1, 3600);
	set_bad("read_timeout", "0", "(want 1-3600 seconds)");
}

static void test_check(void **state)
{
	struct jm4lw_config cfg;

	(void)state;
	config_defaults(&cfg);
	snprintf(cfg.listen, sizeof(cfg.listen), " 127.0.0.1:0 , [::1]:0");
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), 0);

	snprintf(cfg.listen, sizeof(cfg.listen), "localhost");
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "listen: \"localhost\" has no port (want "
	    "ADDR:PORT or [ADDR6]:PORT, e.g. 127.0.0.1:9181 or [::1]:9181; "
	    "port 0 picks a free one)");
	config_defaults(&cfg);
	cfg.listen[0] = '\0';
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "listen: no address"));

	config_defaults(&cfg);
	snprintf(cfg.allow, sizeof(cfg.allow), "ruok,bad!");
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "allow: unknown word \"bad!\""));

	config_defaults(&cfg);
	memset(cfg.dump_prefix, 'a', sizeof(cfg.dump_prefix));
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "dump_prefix: not NUL-terminated (at most "
	    "63 bytes)");

	config_defaults(&cfg);
	memset(cfg.dump_dir, 'a', sizeof(cfg.dump_dir));
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "dump_dir: not NUL-terminated"));

	config_defaults(&cfg);
	snprintf(cfg.dump_prefix, sizeof(cfg.dump_prefix), ".x");
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);

	config_defaults(&cfg);
	cfg.dump_dir[0] = '\0';
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);

	config_defaults(&cfg);
	cfg.max_connections = 0;
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "max_connections: 0 is out of range (want 1-100000)");
	config_defaults(&cfg);
	cfg.read_timeout = 3601;
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "read_timeout: 3601 is out of range (want 1-3600 seconds)");
	config_defaults(&cfg);
	cfg.write_timeout = (unsigned)-1;
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);

	assert_int_equal(jm4lw_config_check(NULL, err, sizeof(err)), -1);
}

static void test_load_good(void **state)
{
	static const char *const texts[] = {
	    /* top level */
	    "listen = 127.0.0.1:0, [::1]:0\n"
	    "allow = ruok,mntr\n"
	    "dump_dir = /var/tmp/jm4lw\n"
	    "dump_prefix = svc\n"
	    "max_connections = 8\n"
	    "read_timeout = 2\n"
	    "write_timeout = 9\n",
	    /* in [jm4lw], with comments and blank lines */
	    "# jm4lwd\n"
	    "; also a comment\n"
	    "\n"
	    "[jm4lw]\n"
	    "  listen=127.0.0.1:0,[::1]:0  \n"
	    "allow = ruok , mntr ; inline comment after white space\n"
	    "dump_dir = /var/tmp/jm4lw\n"
	    "dump_prefix = svc\n"
	    "max_connections = 8\n"
	    "\n"
	    "read_timeout = 2\n"
	    "write_timeout = 9\n",
	    /* some at the top, some in [jm4lw]; CRLF line ends */
	    "listen = 127.0.0.1:0,[::1]:0\r\n"
	    "allow = ruok,mntr\r\n"
	    "dump_dir = /var/tmp/jm4lw\r\n"
	    "[jm4lw]\r\n"
	    "dump_prefix = svc\r\n"
	    "max_connections = 8\r\n"
	    "read_timeout = 2\r\n"
	    "write_timeout = 9",
	};
	struct jm4lw_config cfg;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		config_defaults(&cfg);
		write_conf(texts[i]);
		err[0] = '\0';
		if (jm4lw_config_load(&cfg, path, err, sizeof(err)) != 0)
			fail_msg("text %zu: %s", i, err);
		unlink(path);
		assert_string_equal(cfg.listen, "127.0.0.1:0,[::1]:0");
		assert_string_equal(cfg.allow, "ruok,mntr");
		assert_string_equal(cfg.dump_dir, "/var/tmp/jm4lw");
		assert_string_equal(cfg.dump_prefix, "svc");
		assert_int_equal(cfg.max_connections, 8);
		assert_int_equal(cfg.read_timeout, 2);
		assert_int_equal(cfg.write_timeout, 9);
	}
}

static void test_load_partial_and_empty(void **state)
{
	struct jm4lw_config cfg, def;

	(void)state;
	config_defaults(&def);
	/* An empty file and a comments-only file leave every default. */
	config_defaults(&cfg);
	write_conf("");
	assert_int_equal(jm4lw_config_load(&cfg, path, err, sizeof(err)), 0);
	unlink(path);
	assert_memory_equal(&cfg, &def, sizeof(cfg));
	write_conf("# nothing\n[jm4lw]\n# still nothing\n");
	assert_int_equal(jm4lw_config_load(&cfg, path, err, sizeof(err)), 0);
	unlink(path);
	assert_memory_equal(&cfg, &def, sizeof(cfg));
	/* Keys the file does not set keep what cfg had. */
	set_ok(&cfg, "dump_prefix", "kept");
	write_conf("read_timeout = 7\n");
	assert_int_equal(jm4lw_config_load(&cfg, path, err, sizeof(err)), 0);
	unlink(path);
	assert_string_equal(cfg.dump_prefix, "kept");
	assert_int_equal(cfg.read_timeout, 7);
	assert_string_equal(cfg.listen, def.listen);
}

static void test_load_unknown_key(void **state)
{
	(void)state;
	load_bad("listen = 127.0.0.1:0\n\n# comment\nfoo = 1\n");
	assert_at(4, "unknown key \"foo\"");
	load_bad("[jm4lw]\nallow = ruok\nno_such_key = 1\n");
	assert_at(3,
	    "unknown key \"no_such_key\" (known keys: listen allow "
	    "dump_dir dump_prefix max_connections max_connections_per_peer "
	    "read_timeout write_timeout allow_from dump_min_interval "
	    "dump_min_free dump_interval dump_on_growth growth_check_interval "
	    "dump_keep dump_max_bytes prof_reset_lg_sample dump_symbolized jemalloc_dumps http_listen http_allowed_hosts http_max_header_bytes http_max_body_bytes http_keepalive_requests scrape_waiters_max "
	    "debug_dirs symbolize_debuginfod symbolize_timeout fold_wrappers "
	    "history_interval "
	    "history_points snapshot_interval snapshot_count "
	    "snapshot_max_bytes recent_max dump_on_memory dump_on_memory_psi "
	    "memory_check_interval memory_cgroup_root)");
}

/* The symbolizer's keys: debug_dirs takes absolute directories only (a
 * relative one would follow the host's working directory), the
 * debuginfod switch on/off (typed, printed back as on or off), the
 * timeout 1-3600 s. */
static void test_debug_keys(void **state)
{
	struct jm4lw_config c;
	char buf[16];

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.debug_dirs, "");
	assert_int_equal(c.symbolize_debuginfod, CONFIG_OFF);
	assert_int_equal(c.symbolize_timeout, 10);
	assert_int_equal(jm4lw_config_set(&c, "debug_dirs",
	                     "/srv/debug:/opt/dbg,/x", err, sizeof(err)),
	    0);
	assert_string_equal(c.debug_dirs, "/srv/debug:/opt/dbg,/x");
	assert_int_equal(jm4lw_config_set(&c, "debug_dirs", "/a:rel", err,
	                     sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "\"rel\" is not an absolute directory"));
	assert_int_equal(jm4lw_config_set(&c, "symbolize_debuginfod", "yes",
	                     err, sizeof(err)),
	    0);
	assert_int_equal(c.symbolize_debuginfod, CONFIG_ON);
	assert_int_equal(jm4lw_config_get(&c, "symbolize_debuginfod", buf,
	                     sizeof(buf)),
	    0);
	assert_string_equal(buf, "on");
	assert_int_equal(jm4lw_config_set(&c, "symbolize_debuginfod", "maybe",
	                     err, sizeof(err)),
	    -1);
	assert_string_equal(err,
	    "symbolize_debuginfod: \"maybe\" is not a "
	    "switch (want on or off)");
	assert_int_equal(c.symbolize_debuginfod, CONFIG_ON);
	assert_int_equal(jm4lw_config_set(&c, "symbolize_timeout", "0", err,
	                     sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(&c, "symbolize_timeout", "3", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(c.symbolize_timeout, 3);
}

/* fold_wrappers: empty (the found and default wrappers), names with
 * ',' or white space between them written back in one form, off; the
 * configuration and the policy hold them typed, as the jobs fold by them. */
static void test_fold_wrappers(void **state)
{
	struct jm4lw_config c;
	struct core_policy pol;
	char buf[64];

	(void)state;
	config_defaults(&c);
	assert_int_equal(jm4lw_config_get(&c, "fold_wrappers", buf,
	                     sizeof(buf)),
	    0);
	assert_string_equal(buf, "");
	assert_int_equal(config_policy(&c, &pol, err, sizeof(err)), 0);
	assert_false(pol.fold.off);
	assert_int_equal(pol.fold.n, 0);
	set_ok(&c, "fold_wrappers", "my_alloc  pool_get");
	assert_int_equal(c.fold_wrappers.n, 2);
	assert_int_equal(jm4lw_config_get(&c, "fold_wrappers", buf,
	                     sizeof(buf)),
	    0);
	assert_string_equal(buf, "my_alloc, pool_get");
	assert_int_equal(config_policy(&c, &pol, err, sizeof(err)), 0);
	assert_int_equal(pol.fold.n, 2);
	assert_string_equal(pol.fold.name[1], "pool_get");
	set_ok(&c, "fold_wrappers", "operator new, Pool<int>::get");
	assert_int_equal(config_policy(&c, &pol, err, sizeof(err)), 0);
	assert_string_equal(pol.fold.name[0], "operator new");
	set_ok(&c, "fold_wrappers", "off");
	assert_int_equal(config_policy(&c, &pol, err, sizeof(err)), 0);
	assert_true(pol.fold.off);
	set_bad("fold_wrappers", "a off",
	    "fold_wrappers: off stands alone (want off, or function names)");
	set_bad("fold_wrappers", repeat('f', 200), "is longer than 127 bytes");
}

static void test_allow_from(void **state)
{
	struct jm4lw_config c;
	const char *good[] = {"*", "127.0.0.1", "10.0.0.0/8, ::1",
	    "fd00::/8,192.0.2.0/24", "0.0.0.0/0", "::/0", "::1/128"};
	const char *bad[] = {"", "10.0.0.0/33", "10.1.2.3/8", "fd00::1/8",
	    "localhost", "10.0.0.0/", "10.0.0.0/x", "*, ::1", "10.0.0.0/8,,::1",
	    "::1/129", "1.2.3.4/-1"};
	size_t i;

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.allow_from, "127.0.0.0/8,::1");
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (jm4lw_config_set(&c, "allow_from", good[i], err,
		        sizeof(err)) != 0)
			fail_msg("allow_from=%s: %s", good[i], err);
	assert_string_equal(c.allow_from, "::1/128");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (jm4lw_config_set(&c, "allow_from", bad[i], err,
		        sizeof(err)) == 0)
			fail_msg("allow_from=%s accepted", bad[i]);
		assert_true(strncmp(err, "allow_from: ", 12) == 0);
	}
	assert_string_equal(c.allow_from, "::1/128");
}

/* Does the allow_from entry @p net admit address @p ip? */
static int admits(const char *net, const char *ip)
{
	struct sockaddr_storage ss;
	struct cidr c;
	char addr[64];
	socklen_t len;

	snprintf(addr, sizeof(addr), strchr(ip, ':') ? "[%s]:1" : "%s:1", ip);
	assert_int_equal(addr_parse(addr, &ss, &len), 0);
	assert_int_equal(cidr_parse(net, strlen(net), &c), 0);
	return cidr_match(&c, (struct sockaddr *)&ss);
}

static void test_cidr_match(void **state)
{
	(void)state;
	assert_true(admits("*", "192.0.2.1"));
	assert_true(admits("*", "::1"));
	assert_true(admits("127.0.0.0/8", "127.255.0.9"));
	assert_false(admits("127.0.0.0/8", "128.0.0.1"));
	assert_true(admits("10.1.2.3", "10.1.2.3"));
	assert_false(admits("10.1.2.3", "10.1.2.4"));
	assert_true(admits("192.168.4.0/22", "192.168.7.255"));
	assert_false(admits("192.168.4.0/22", "192.168.8.0"));
	assert_true(admits("0.0.0.0/0", "8.8.8.8"));
	assert_false(admits("0.0.0.0/0", "::1")); /* families apart */
	assert_false(admits("::/0", "127.0.0.1"));
	assert_true(admits("::1", "::1"));
	assert_false(admits("::1", "::2"));
	assert_true(admits("fd00::/8", "fdab:1::7"));
	assert_false(admits("fd00::/8", "fe80::1"));
	assert_true(admits("2001:db8::/33", "2001:db8:7fff::1"));
	assert_false(admits("2001:db8::/33", "2001:db8:8000::1"));
}

static void test_dump_limits(void **state)
{
	struct jm4lw_config c;

	(void)state;
	config_defaults(&c);
	assert_int_equal(c.dump_min_interval, 1);
	assert_true(c.dump_min_free == 64ULL << 20);
	assert_int_equal(jm4lw_config_set(&c, "dump_min_free", "0", err,
	                     sizeof(err)),
	    0);
	assert_true(c.dump_min_free == 0);
	assert_int_equal(jm4lw_config_set(&c, "dump_min_free", "512k", err,
	                     sizeof(err)),
	    0);
	assert_true(c.dump_min_free == 512ULL << 10);
	assert_int_equal(jm4lw_config_set(&c, "dump_min_free", "2G", err,
	                     sizeof(err)),
	    0);
	assert_true(c.dump_min_free == 2ULL << 30);
	assert_int_equal(jm4lw_config_set(&c, "dump_min_free", " 12345 ", err,
	                     sizeof(err)),
	    0);
	assert_true(c.dump_min_free == 12345);
	assert_int_equal(jm4lw_config_set(&c, "dump_min_free", "64MB", err,
	                     sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "is not a size"));
	assert_int_equal(jm4lw_config_set(&c, "dump_min_free", "1.5G", err,
	                     sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(&c, "dump_min_free", "-1", err,
	                     sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(&c, "dump_min_free", "M", err,
	                     sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(&c, "dump_min_free",
	                     "99999999999999999999", err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(jm4lw_config_set(&c, "dump_min_free", "17179869184G",
	                     err, sizeof(err)),
	    -1);
	assert_true(c.dump_min_free == 12345);

	assert_int_equal(jm4lw_config_set(&c, "dump_min_interval", "0", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(jm4lw_config_set(&c, "dump_min_interval", "86400", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(jm4lw_config_set(&c, "dump_min_interval", "86401", err,
	                     sizeof(err)),
	    -1);
	c.dump_min_interval = 90000;
	assert_int_equal(jm4lw_config_check(&c, err, sizeof(err)), -1);
}

static void test_schedule_keys(void **state)
{
	struct jm4lw_config c;
	const char *growth_ok[] = {"0", "512M", "1G", "12345", "50%", "1%",
	    "10000%"};
	const char *growth_bad[] = {"", "%", "0%", "10001%", "5.5%", "-1",
	    "1GB", "x%", "50 %"};
	const char *lg_ok[] = {"keep", "0", "19", "62"};
	const char *lg_bad[] = {"", "63", "-1", "19x", "100", "KEEP"};
	size_t i;

	(void)state;
	config_defaults(&c);
	assert_int_equal(c.dump_interval, 0);
	assert_true(c.dump_on_growth.bytes == 0 && c.dump_on_growth.pct == 0);
	assert_int_equal(c.growth_check_interval, 10);
	assert_int_equal(c.dump_keep, 0);
	assert_true(c.dump_max_bytes == 0);
	assert_int_equal(c.prof_reset_lg_sample, -1); /* keep */
	for (i = 0; i < sizeof(growth_ok) / sizeof(growth_ok[0]); i++)
		if (jm4lw_config_set(&c, "dump_on_growth", growth_ok[i], err,
		        sizeof(err)) != 0)
			fail_msg("dump_on_growth=%s: %s", growth_ok[i], err);
	for (i = 0; i < sizeof(growth_bad) / sizeof(growth_bad[0]); i++)
		if (jm4lw_config_set(&c, "dump_on_growth", growth_bad[i], err,
		        sizeof(err)) == 0)
			fail_msg("dump_on_growth=%s accepted", growth_bad[i]);
	for (i = 0; i < sizeof(lg_ok) / sizeof(lg_ok[0]); i++)
		if (jm4lw_config_set(&c, "prof_reset_lg_sample", lg_ok[i], err,
		        sizeof(err)) != 0)
			fail_msg("prof_reset_lg_sample=%s: %s", lg_ok[i], err);
	for (i = 0; i < sizeof(lg_bad) / sizeof(lg_bad[0]); i++)
		if (jm4lw_config_set(&c, "prof_reset_lg_sample", lg_bad[i], err,
		        sizeof(err)) == 0)
			fail_msg("prof_reset_lg_sample=%s accepted", lg_bad[i]);
	assert_int_equal(jm4lw_config_set(&c, "dump_max_bytes", "1G", err,
	                     sizeof(err)),
	    0);
	assert_true(c.dump_max_bytes == 1ULL << 30);
	assert_int_equal(jm4lw_config_set(&c, "dump_keep", "5", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(jm4lw_config_set(&c, "growth_check_interval", "0", err,
	                     sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(&c, "dump_interval", "604801", err,
	                     sizeof(err)),
	    -1);
}

static void test_load_bad_value(void **state)
{
	(void)state;
	load_bad("listen = 127.0.0.1:0\n\nmax_connections = lots\n");
	assert_at(3, "max_connections: \"lots\" is not a whole number");
	load_bad("allow = ruok,mntr,nope\n");
	assert_at(1, "allow: unknown word \"nope\"");
	load_bad("[jm4lw]\nlisten = ::1\n");
	assert_at(2, "listen: \"::1\": an IPv6 address goes in brackets");
	load_bad("dump_dir =\n");
	assert_at(1, "dump_dir: empty");
}

static void test_load_unknown_section(void **state)
{
	(void)state;
	load_bad("listen = 127.0.0.1:0\n[server]\nallow = ruok\n");
	assert_at(2,
	    "unknown section \"server\" (put keys at the top of the "
	    "file or under [jm4lw])");
	/* An empty one too: it was meant to hold something. */
	load_bad("listen = 127.0.0.1:0\n\n[jm4wl]\n");
	assert_at(3, "unknown section \"jm4wl\"");
	load_bad("[ jm4lw ]\nallow = ruok\n");
	assert_at(1, "unknown section \" jm4lw \"");
	load_bad("[JM4LW]\n");
	assert_at(1, "unknown section \"JM4LW\"");
}

static void test_load_syntax(void **state)
{
	(void)state;
	load_bad("listen = 127.0.0.1:0\nthis is not ini\n");
	assert_at(2, "syntax error (expected key = value)");
	assert_string_equal(strchr(err + strlen(path), ' ') + 1,
	    "syntax error (expected key = value)");
	load_bad("\n\n[jm4lw\nallow = ruok\n");
	assert_at(3, "syntax error (expected key = value)");
	load_bad("allow\n");
	assert_at(1, "syntax error");
}

static void test_load_first_error_wins(void **state)
{
	(void)state;
	/* inih keeps going after an error; the first one is reported. */
	load_bad("allow = ruok\nnot ini\nfoo = 1\n");
	assert_at(2, "syntax error");
	load_bad("allow = ruok\nfoo = 1\nnot ini\nbar = 2\n");
	assert_at(2, "unknown key \"foo\"");
	load_bad("read_timeout = 0\nwrite_timeout = 0\n");
	assert_at(1, "read_timeout:");
	load_bad("[x]\nnot ini\n");
	assert_at(1, "unknown section \"x\"");
}

static void test_load_duplicate(void **state)
{
	(void)state;
	load_bad("listen = 127.0.0.1:1\nallow = *\nlisten = 127.0.0.1:2\n");
	assert_at(3, "listen set again (first on line 1)");
	load_bad("allow = ruok\n[jm4lw]\nallow = mntr\n");
	assert_at(3, "allow set again (first on line 1)");
	/* An indented line continues the value in inih: not supported. */
	load_bad("allow = ruok,\n   mntr\n");
	assert_at(1, "allow: empty entry");
	load_bad("allow = ruok\n   mntr\n");
	assert_at(2, "allow set again (first on line 1)");
}

static void test_load_long_line(void **state)
{
	static char text[8400]; /* room for anything repeat() returns */
	const char *pre = "dump_dir = /";
	size_t n = 197 - strlen(pre);
	struct jm4lw_config cfg;

	(void)state;
	/* inih would hand us the first 190-odd bytes: an error, not a cut. */
	snprintf(text, sizeof(text), "allow = *\ndump_dir = /%s\n",
	    repeat('d', 300));
	load_bad(text);
	assert_at(2, "line too long (at most 197 bytes)");
	/* A long comment is fine, and later line numbers stay right. */
	snprintf(text, sizeof(text), "# %s\nallow = ruok\nfoo = 1\n",
	    repeat('c', 500));
	load_bad(text);
	assert_at(3, "unknown key \"foo\"");
	/* A long line without '=' is too long, not a syntax error. */
	snprintf(text, sizeof(text), "allow = *\n%s\n", repeat('k', 300));
	load_bad(text);
	assert_at(2, "line too long");
	/* 197 bytes and CR LF still fit. */
	snprintf(text, sizeof(text), "%s%s\r\nallow = ruok\n", pre,
	    repeat('d', n));
	config_defaults(&cfg);
	write_conf(text);
	if (jm4lw_config_load(&cfg, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	unlink(path);
	assert_int_equal(strlen(cfg.dump_dir), n + 1);
	assert_string_equal(cfg.allow, "ruok");
}

static void test_load_io_errors(void **state)
{
	struct jm4lw_config cfg, before;
	const char *dir = getenv("TMPDIR");
	char want[4200];

	(void)state;
	config_defaults(&cfg);
	set_ok(&cfg, "allow", "ruok");
	before = cfg;
	assert_int_equal(jm4lw_config_load(&cfg, "/nonexistent/jm4lwd.conf",
	                     err, sizeof(err)),
	    -1);
	assert_string_equal(err,
	    "/nonexistent/jm4lwd.conf: No such file or directory");
	assert_memory_equal(&cfg, &before, sizeof(cfg));

	/* A directory opens; it is refused by its type, not its read. */
	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	assert_int_equal(jm4lw_config_load(&cfg, dir, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: not a regular file (a directory)",
	    dir);
	assert_string_equal(err, want);
	assert_memory_equal(&cfg, &before, sizeof(cfg));

	assert_int_equal(jm4lw_config_load(&cfg, NULL, err, sizeof(err)), -1);
}

/* Load @p file, expect it refused with "<file>: <reason>", @p cfg kept. */
static void load_refused(const char *file, const char *reason)
{
	struct jm4lw_config cfg, before;
	char want[4200];

	config_defaults(&cfg);
	set_ok(&cfg, "allow", "ruok");
	before = cfg;
	err[0] = '\0';
	assert_int_equal(jm4lw_config_load(&cfg, file, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: %s", file, reason);
	assert_string_equal(err, want);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

/*
 * A FIFO with no writer blocked jm4lw_config_load() in
 * fopen() for ever, and /dev/zero (or a symlink to it) was read for ever
 * at 100 % CPU: the daemon's reload, jm4lwd -n and the agent hung with
 * it. Only a regular file of at most 1 MiB is read. The alarm turns the
 * old hang into a failure rather than a stuck suite.
 */
static void test_load_not_regular(void **state)
{
	const char *dir = getenv("TMPDIR");
	char fifo[4096], link[4096];

	(void)state;
	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	snprintf(fifo, sizeof(fifo), "%s/test_config.fifo.%ld", dir,
	    (long)getpid());
	snprintf(link, sizeof(link), "%s/test_config.zero.%ld", dir,
	    (long)getpid());
	unlink(fifo);
	unlink(link);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink("/dev/zero", link), 0);
	alarm(20);
	load_refused(fifo, "not a regular file (a FIFO)");
	load_refused("/dev/zero", "not a regular file (a character device)");
	load_refused(link, "not a regular file (a character device)");
	alarm(0);
	unlink(fifo);
	unlink(link);
}

/* The size cap, JM4LW_CONFIG_MAX (1 MiB), said in bytes. */
static void test_load_too_big(void **state)
{
	FILE *f;

	(void)state;
	write_conf("allow = ruok\n");
	/* A comment is harmless, but not 1 MiB of it. */
	assert_non_null(f = fopen(path, "a"));
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	while (ftell(f) <= JM4LW_CONFIG_MAX)
		assert_true(
		    fputs("# padding padding padding padding\n", f) >= 0);
	assert_int_equal(fclose(f), 0);
	load_refused(path, "larger than 1 MiB (a configuration is a few KiB)");
	/* At the cap itself: read. */
	assert_int_equal(truncate(path, JM4LW_CONFIG_MAX), 0);
	{
		struct jm4lw_config cfg;

		config_defaults(&cfg);
		if (jm4lw_config_load(&cfg, path, err, sizeof(err)) != 0)
			fail_msg("%s", err);
		assert_string_equal(cfg.allow, "ruok");
	}
	unlink(path);
}

/* A NUL byte inside a line cut the value where it was and
 * the rest of the line was lost, silently: "allow = ruok\0,jmfp" served
 * ruok alone. Now the line is refused, with its file and number. */
static void test_load_nul_byte(void **state)
{
	static const char text[] = "allow = ruok\nlisten = 127.0.0.1:0\0junk\n";
	static const char comment[] = "# a\0b\nallow = ruok\n";
	struct jm4lw_config cfg, before;
	FILE *f;

	(void)state;
	write_conf("");
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(text, 1, sizeof(text) - 1, f),
	    sizeof(text) - 1);
	assert_int_equal(fclose(f), 0);
	config_defaults(&cfg);
	before = cfg;
	assert_int_equal(jm4lw_config_load(&cfg, path, err, sizeof(err)), -1);
	assert_at(2, "a NUL byte in the line (the file must be text)");
	assert_memory_equal(&cfg, &before, sizeof(cfg));
	/* In a comment too: the file is not text. */
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(comment, 1, sizeof(comment) - 1, f),
	    sizeof(comment) - 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(jm4lw_config_load(&cfg, path, err, sizeof(err)), -1);
	assert_at(1, "a NUL byte in the line (the file must be text)");
	unlink(path);
}

static void test_load_untouched_on_error(void **state)
{
	struct jm4lw_config cfg, before;

	(void)state;
	config_defaults(&cfg);
	set_ok(&cfg, "listen", "[::1]:7");
	set_ok(&cfg, "max_connections", "3");
	before = cfg;
	/* Good keys before the bad one must not leak into cfg. */
	write_conf("listen = 127.0.0.1:0\nallow = ruok\ndump_dir = /x\n"
	           "max_connections = 9\nwrite_timeout = forever\n");
	assert_int_equal(jm4lw_config_load(&cfg, path, err, sizeof(err)), -1);
	unlink(path);
	assert_at(5, "write_timeout:");
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

static void test_load_checks_whole(void **state)
{
	struct jm4lw_config cfg;

	(void)state;
	/* A bad field the caller set by hand fails the load too. */
	config_defaults(&cfg);
	cfg.read_timeout = 0;
	write_conf("allow = ruok\n");
	assert_int_equal(jm4lw_config_load(&cfg, path, err, sizeof(err)), -1);
	unlink(path);
	assert_string_equal(err,
	    "read_timeout: 0 is out of range (want 1-3600 seconds)");
	assert_string_equal(cfg.allow, "*");
}

static void test_sample_conf(void **state)
{
#ifdef JM4LW_SOURCE_DIR
	struct jm4lw_config cfg, def;

	(void)state;
	snprintf(path, sizeof(path), "%s/conf/jm4lwd.conf", JM4LW_SOURCE_DIR);
	config_defaults(&cfg);
	if (jm4lw_config_load(&cfg, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	/* The sample shows the defaults, so it must load to them. */
	config_defaults(&def);
	assert_memory_equal(&cfg, &def, sizeof(cfg));
#else
	(void)state;
	printf("test_sample_conf: JM4LW_SOURCE_DIR not defined, "
	       "conf/jm4lwd.conf not checked\n");
	skip();
#endif
}

/* Every key has a default its own rules accept, and init applied it. */
static void test_key_table(void **state)
{
	const struct config_key *k;
	struct jm4lw_config cfg, def;
	size_t i, j;

	(void)state;
	config_defaults(&def);
	for (i = 0; (k = config_key_at(i)) != NULL; i++) {
		assert_non_null(k->def);
		assert_non_null(k->help);
		assert_true(k->help[0] != '\0');
		assert_null(strchr(k->help, '\n'));
		for (j = 0; j < i; j++)
			assert_string_not_equal(config_key_at(j)->name,
			    k->name);
		/* A default init had left out would change the struct. */
		cfg = def;
		set_ok(&cfg, k->name, k->def);
		assert_memory_equal(&cfg, &def, sizeof(cfg));
	}
	assert_true(i > 0);
}

/* dump_on_growth and prof_reset_lg_sample as the server gets them. */
static void test_policy(void **state)
{
	static const struct {
		const char *growth, *lg;
		unsigned long long bytes;
		unsigned pct;
		int reset_lg;
	} ok[] = {
	    {"0", "keep", 0, 0, -1},
	    {"0K", "0", 0, 0, 0},
	    {"512M", "19", 512ULL << 20, 0, 19},
	    {" 1k ", "07", 1024, 0, 7},
	    {"12345", "62", 12345, 0, 62},
	    {"2T", "keep", 2ULL << 40, 0, -1},
	    {"1%", "keep", 0, 1, -1},
	    {"10000%", "keep", 0, 10000, -1},
	};
	struct core_policy pol, before;
	struct jm4lw_config cfg;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		config_defaults(&cfg);
		set_ok(&cfg, "dump_on_growth", ok[i].growth);
		set_ok(&cfg, "prof_reset_lg_sample", ok[i].lg);
		memset(&pol, 0xa5, sizeof(pol));
		if (config_policy(&cfg, &pol, err, sizeof(err)) != 0)
			fail_msg("%s, %s: %s", ok[i].growth, ok[i].lg, err);
		assert_true(pol.growth_bytes == ok[i].bytes);
		assert_int_equal(pol.growth_pct, ok[i].pct);
		assert_int_equal(pol.reset_lg, ok[i].reset_lg);
	}

	/* Filled by hand: the check gives the parsers' reasons, for the
	 * kept text and for a typed value out of range alike. */
	memset(&pol, 0xa5, sizeof(pol));
	before = pol;
	config_defaults(&cfg);
	snprintf(cfg.text.dump_on_growth, sizeof(cfg.text.dump_on_growth),
	    "1.5G");
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "dump_on_growth: \"1.5G\" is not a size"));
	snprintf(cfg.text.dump_on_growth, sizeof(cfg.text.dump_on_growth),
	    "0%%");
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not a percentage"));
	config_defaults(&cfg);
	snprintf(cfg.text.prof_reset_lg_sample,
	    sizeof(cfg.text.prof_reset_lg_sample), "63");
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "prof_reset_lg_sample: \"63\""));
	memset(cfg.text.prof_reset_lg_sample, 'k',
	    sizeof(cfg.text.prof_reset_lg_sample));
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "prof_reset_lg_sample: not NUL-terminated "
	    "(at most 7 bytes)");
	config_defaults(&cfg);
	cfg.dump_symbolized = (enum config_switch)7;
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "dump_symbolized: \"\" is not a switch (want on or off)");
	config_defaults(&cfg);
	cfg.jemalloc_dumps = (enum config_jemalloc_dumps) - 1;
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "jemalloc_dumps: \"\" is neither adopt nor leave");
	assert_int_equal(config_policy(NULL, &pol, err, sizeof(err)), -1);
	assert_memory_equal(&pol, &before, sizeof(pol));
}

/* Key @p key's value as jm4lw_config_get() prints it. */
static const char *got(const struct jm4lw_config *cfg, const char *key)
{
	static char buf[1100];

	if (jm4lw_config_get(cfg, key, buf, sizeof(buf)) == -1)
		fail_msg("jm4lw_config_get(%s) failed", key);
	return buf;
}

/*
 * The typed keys: parsed once when set, into the fields everyone reads,
 * and printed back as they were set (the kept text, or the value's one
 * form); the one size-or-percentage parser's reasons, whole.
 */
static void test_typed_keys(void **state)
{
	struct jm4lw_config c;

	(void)state;
	config_defaults(&c);
	assert_string_equal(got(&c, "dump_on_growth"), "0");
	assert_string_equal(got(&c, "prof_reset_lg_sample"), "keep");
	assert_string_equal(got(&c, "dump_symbolized"), "off");
	assert_string_equal(got(&c, "jemalloc_dumps"), "adopt");
	assert_string_equal(got(&c, "dump_on_memory_psi"), "off");
	assert_int_equal(c.dump_symbolized, CONFIG_OFF);
	assert_int_equal(c.jemalloc_dumps, CONFIG_JEDUMPS_ADOPT);
	assert_int_equal(c.dump_on_memory_psi.avg10, 0);

	set_ok(&c, "dump_on_growth", " 0512m ");
	assert_true(c.dump_on_growth.bytes == 512ULL << 20);
	assert_int_equal(c.dump_on_growth.pct, 0);
	assert_string_equal(got(&c, "dump_on_growth"), "0512m");
	set_ok(&c, "dump_on_growth", "50%");
	assert_true(c.dump_on_growth.bytes == 0);
	assert_int_equal(c.dump_on_growth.pct, 50);
	set_ok(&c, "dump_on_memory", "90%");
	assert_int_equal(c.dump_on_memory.pct, 90);
	set_ok(&c, "dump_on_memory", "3G");
	assert_true(c.dump_on_memory.bytes == 3ULL << 30);
	assert_int_equal(c.dump_on_memory.pct, 0);
	set_ok(&c, "dump_on_memory_psi", "full  5");
	assert_int_equal(c.dump_on_memory_psi.avg10, 500);
	assert_true(c.dump_on_memory_psi.full);
	assert_string_equal(got(&c, "dump_on_memory_psi"), "full  5");
	set_ok(&c, "prof_reset_lg_sample", "07");
	assert_int_equal(c.prof_reset_lg_sample, 7);
	assert_string_equal(got(&c, "prof_reset_lg_sample"), "07");
	set_ok(&c, "dump_symbolized", "TRUE");
	assert_int_equal(c.dump_symbolized, CONFIG_ON);
	assert_string_equal(got(&c, "dump_symbolized"), "on");
	set_ok(&c, "jemalloc_dumps", "Leave");
	assert_int_equal(c.jemalloc_dumps, CONFIG_JEDUMPS_LEAVE);
	assert_string_equal(got(&c, "jemalloc_dumps"), "leave");
	assert_int_equal(jm4lw_config_check(&c, err, sizeof(err)), 0);

	set_bad("dump_on_growth", "0%", "");
	assert_string_equal(err,
	    "dump_on_growth: \"0%\" is not a percentage (want 1%-10000%)");
	set_bad("dump_on_memory", "101%", "");
	assert_string_equal(err,
	    "dump_on_memory: \"101%\" is not a percentage of the limit "
	    "(want 1%-100%, e.g. 90%, or bytes such as 3G; 0 is off)");
	set_bad("dump_on_memory", "3GB", "");
	assert_string_equal(err,
	    "dump_on_memory: \"3GB\" is not a size (want bytes, or a number "
	    "with K, M, G or T, e.g. 64M; 0 turns the check off)");
	set_bad("dump_on_growth", "99999999999999999999", "");
	assert_string_equal(err,
	    "dump_on_growth: \"99999999999999999999\" is out of range");
	set_bad("dump_on_memory_psi", "half 5%", "");
	assert_string_equal(err,
	    "dump_on_memory_psi: \"half 5%\" (want off, or some N% or full N% "
	    "with N 1-100: memory pressure's avg10, e.g. some 10%)");
	set_bad("dump_symbolized", "onn", "");
	assert_string_equal(err,
	    "dump_symbolized: \"onn\" is not a switch (want on or off)");
	set_bad("dump_symbolized", "verylong", "");
	assert_string_equal(err,
	    "dump_symbolized: value too long (8 bytes, at most 7)");
	set_bad("fold_wrappers", repeat('f', 1024), "");
	assert_string_equal(err,
	    "fold_wrappers: value too long (1024 bytes, at most 1023)");
}

/* A module takes words its host may add later; a host's check never. */
static void test_check_module(void **state)
{
	struct jm4lw_config cfg;

	(void)state;
	config_defaults(&cfg);
	snprintf(cfg.allow, sizeof(cfg.allow), "ruok,hwd1");
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "allow: unknown word \"hwd1\""));
	assert_int_equal(config_check_module(&cfg, err, sizeof(err)), 0);
	/* Nothing of the module's check is left behind for the next one. */
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	set_bad("allow", "hwd1", "unknown word \"hwd1\"");
	/* Well-formed words only, and the other rules still hold. */
	snprintf(cfg.allow, sizeof(cfg.allow), "ruok,hw d");
	assert_int_equal(config_check_module(&cfg, err, sizeof(err)), -1);
	snprintf(cfg.allow, sizeof(cfg.allow), "hwd12");
	assert_int_equal(config_check_module(&cfg, err, sizeof(err)), -1);
	snprintf(cfg.allow, sizeof(cfg.allow), "hwd1,*");
	assert_int_equal(config_check_module(&cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "use it alone"));
	snprintf(cfg.allow, sizeof(cfg.allow), "hwd1");
	cfg.read_timeout = 0;
	assert_int_equal(config_check_module(&cfg, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "read_timeout: 0 is out of range (want "
	    "1-3600 seconds)");
}

/* The list splitter and the quoting that other files may reuse. */
static void test_list_and_quote(void **state)
{
	static const char *const want[] = {"a", "b", "", "c d"};
	const char *s = " a ,b,,\tc d ", *item;
	char q[16], small[8];
	size_t i = 0, n;

	(void)state;
	while (s != NULL) {
		item = list_next(&s, &n);
		assert_true(i < sizeof(want) / sizeof(want[0]));
		assert_int_equal(n, strlen(want[i]));
		assert_int_equal(strncmp(item, want[i], n), 0);
		i++;
	}
	assert_int_equal(i, sizeof(want) / sizeof(want[0]));
	s = "";
	list_next(&s, &n);
	assert_int_equal(n, 0);
	assert_null(s);

	assert_string_equal(quote(q, sizeof(q), "a\"b\n", 4),
	    "\"a\\x22b\\x0a\"");
	assert_string_equal(quote(q, sizeof(q), repeat('x', 100), 100),
	    "\"xxxxxxx...\"");
	assert_string_equal(quote(small, sizeof(small), "abc", 3), "\"...\"");
}

#ifdef JM4LW_SOURCE_DIR
/* Open @p name in the source tree; its path goes to path[]. */
static FILE *open_source(const char *name)
{
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", JM4LW_SOURCE_DIR, name);
	if ((f = fopen(path, "r")) == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	return f;
}

/* Cut the white space around @p s in place. */
static char *strip(char *s)
{
	size_t n;

	s += strspn(s, " \t\r\n");
	n = strlen(s);
	while (n > 0 && strchr(" \t\r\n", s[n - 1]) != NULL)
		s[--n] = '\0';
	return s;
}

/*
 * Key @p name with value @p value, documented at @p line: the table has
 * the key, with that default, and it is documented only once.
 */
static int doc_key(int *seen, int line, const char *name, const char *value)
{
	int i = key_index(name);

	if (i == -1)
		fail_msg("%s:%d: key %s is not in config_keys[]", path, line,
		    name);
	if (strcmp(value, config_key_at((size_t)i)->def) != 0)
		fail_msg("%s:%d: %s = %s, but its default is %s", path, line,
		    name, value, config_key_at((size_t)i)->def);
	if (seen[i] != 0)
		fail_msg("%s:%d: %s again (first on line %d)", path, line, name,
		    seen[i]);
	seen[i] = line;
	return i;
}

/* Every key of the table was documented. */
static void doc_all_keys(const int *seen)
{
	const struct config_key *k;
	size_t i;

	for (i = 0; (k = config_key_at(i)) != NULL; i++)
		if (seen[i] == 0)
			fail_msg("%s does not document key %s", path, k->name);
}

/* conf/jm4lwd.conf sets every key of the table, once, to its default. */
static void check_conf_keys(void)
{
	char line[1024], *name, *eq;
	int seen[64] = {0}, n = 0;
	FILE *f = open_source("conf/jm4lwd.conf");

	while (fgets(line, sizeof(line), f) != NULL) {
		name = strip(line);
		n++;
		if (*name == '\0' || *name == '#' || *name == ';' ||
		    *name == '[')
			continue;
		if ((eq = strchr(name, '=')) == NULL)
			fail_msg("%s:%d: not key = value", path, n);
		*eq = '\0';
		doc_key(seen, n, strip(name), strip(eq + 1));
	}
	fclose(f);
	doc_all_keys(seen);
}

/* The text between the backticks of a docs table cell. */
static char *backticked(char *cell, int line)
{
	size_t n;

	cell = strip(cell);
	n = strlen(cell);
	if (n < 2 || cell[0] != '`' || cell[n - 1] != '`')
		fail_msg("%s:%d: want `...` in %s", path, line, cell);
	cell[n - 1] = '\0';
	return cell + 1;
}

/*
 * docs/CONFIG.md's key table: `key` | `default` | range | on reload | the
 * key's help line.
 */
static void check_doc_keys(void)
{
	char line[1024], *cell[5], *p;
	int seen[64] = {0}, n = 0, in_table = 0, i;
	size_t c;
	FILE *f = open_source("docs/CONFIG.md");

	while (fgets(line, sizeof(line), f) != NULL) {
		n++;
		if (!in_table) {
			in_table = strcmp(strip(line),
			               "| key | default | range | on "
			               "reload (`SIGHUP`) | meaning |") == 0;
			continue;
		}
		if (line[0] != '|')
			break;
		if (strncmp(line, "| ---", 5) == 0)
			continue;
		for (p = line + 1, c = 0; c < 5; c++) {
			cell[c] = p;
			if ((p = strchr(p, '|')) == NULL)
				fail_msg("%s:%d: want 5 cells", path, n);
			*p++ = '\0';
		}
		i = doc_key(seen, n, backticked(cell[0], n),
		    backticked(cell[1], n));
		cell[4] = strip(cell[4]);
		if (strcmp(cell[4], config_key_at((size_t)i)->help) != 0)
			fail_msg("%s:%d: \"%s\", but the help of %s is \"%s\"",
			    path, n, cell[4], config_key_at((size_t)i)->name,
			    config_key_at((size_t)i)->help);
	}
	fclose(f);
	assert_true(in_table);
	doc_all_keys(seen);
}

/*
 * The words in @p list (separated by spaces) are the built-in words, each
 * once; with @p ro, only and all those that change nothing.
 */
static void check_words(const char *list, int ro)
{
	const struct proto_word *w;
	int seen[64] = {0};
	size_t n;

	for (; *(list += strspn(list, " ")) != '\0'; list += n) {
		n = strcspn(list, " ");
		for (w = proto_words; w->name != NULL; w++)
			if (n == 4 && memcmp(list, w->name, 4) == 0)
				break;
		if (w->name == NULL)
			fail_msg("%s: allow's notes name %.*s, not a built-in "
			         "word",
			    path, (int)n, list);
		if (seen[w - proto_words]++ != 0)
			fail_msg("%s: allow's notes name %s twice", path,
			    w->name);
		if (ro && (w->flags & PROTO_F_MUTATES))
			fail_msg("%s: %s changes state, but allow's notes call "
			         "it readonly",
			    path, w->name);
	}
	for (w = proto_words; w->name != NULL; w++)
		if (seen[w - proto_words] == 0 &&
		    !(ro && (w->flags & PROTO_F_MUTATES)))
			fail_msg("%s: allow's notes leave out %s%s", path,
			    w->name, ro ? " from readonly" : "");
}

/*
 * The notes above `allow` in conf/jm4lwd.conf: their first (...) lists
 * every built-in word, the second, up to a comma, what readonly covers.
 */
static void check_conf_words(void)
{
	char line[1024], notes[4096], *lp, *rp;
	size_t o = 0;
	int found = 0;
	FILE *f = open_source("conf/jm4lwd.conf");

	notes[0] = '\0';
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		found = strncmp(line, "allow =", 7) == 0;
		if (line[0] == '#')
			o += (size_t)snprintf(notes + o, sizeof(notes) - o,
			    " %s", strip(line + 1));
		else if (!found)
			o = 0; /* a blank line or a key: the notes start over */
		assert_true(o < sizeof(notes));
	}
	fclose(f);
	assert_true(found);
	notes[o] = '\0';
	/* (every word) */
	assert_non_null(lp = strchr(notes, '('));
	assert_non_null(rp = strchr(lp, ')'));
	*rp = '\0';
	check_words(lp + 1, 0);
	/* (the readonly words, plus host words ...) */
	assert_non_null(lp = strchr(rp + 1, '('));
	assert_non_null(rp = strchr(lp, ','));
	*rp = '\0';
	check_words(lp + 1, 1);
}
#endif

/* The sample file and docs/CONFIG.md document exactly the keys and words. */
static void test_docs_match_tables(void **state)
{
	(void)state;
#ifdef JM4LW_SOURCE_DIR
	check_conf_keys();
	check_doc_keys();
	check_conf_words();
#else
	printf("test_docs_match_tables: JM4LW_SOURCE_DIR not defined, "
	       "conf/jm4lwd.conf and docs/CONFIG.md not checked\n");
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_unknown_key),
	    cmocka_unit_test(test_listen_good),
	    cmocka_unit_test(test_listen_bad),
	    cmocka_unit_test(test_allow_good),
	    cmocka_unit_test(test_allow_readonly),
	    cmocka_unit_test(test_allow_bad),
	    cmocka_unit_test(test_dump_dir),
	    cmocka_unit_test(test_dump_prefix),
	    cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_check),
	    cmocka_unit_test(test_load_good),
	    cmocka_unit_test(test_load_partial_and_empty),
	    cmocka_unit_test(test_load_unknown_key),
	    cmocka_unit_test(test_allow_from),
	    cmocka_unit_test(test_debug_keys),
	    cmocka_unit_test(test_fold_wrappers),
	    cmocka_unit_test(test_typed_keys),
	    cmocka_unit_test(test_dump_limits),
	    cmocka_unit_test(test_cidr_match),
	    cmocka_unit_test(test_schedule_keys),
	    cmocka_unit_test(test_load_bad_value),
	    cmocka_unit_test(test_load_unknown_section),
	    cmocka_unit_test(test_load_syntax),
	    cmocka_unit_test(test_load_first_error_wins),
	    cmocka_unit_test(test_load_duplicate),
	    cmocka_unit_test(test_load_long_line),
	    cmocka_unit_test(test_load_io_errors),
	    cmocka_unit_test(test_load_untouched_on_error),
	    cmocka_unit_test(test_load_checks_whole),
	    cmocka_unit_test(test_sample_conf),
	    cmocka_unit_test(test_load_not_regular),
	    cmocka_unit_test(test_load_too_big),
	    cmocka_unit_test(test_load_nul_byte),
	    cmocka_unit_test(test_key_table),
	    cmocka_unit_test(test_policy),
	    cmocka_unit_test(test_check_module),
	    cmocka_unit_test(test_list_and_quote),
	    cmocka_unit_test(test_docs_match_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

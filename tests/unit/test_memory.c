/*
 * Unit tests of dump_on_memory's engine (core/memory.c): the readers on
 * temporary trees laid out like /sys/fs/cgroup and /proc (cgroup v2 with
 * "max" and numbers, its ancestors' limits, memory.events and
 * memory.pressure; cgroup v1 with its "no limit" and the hierarchical
 * limit; RLIMIT_AS; the machine; garbage, missing files, huge numbers),
 * the hysteresis and retry of the state machine, and the pin that keeps
 * a memory dump out of retention until it is listed (core/dumps.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "config_struct.h"
#include "core.h"
#include "dumps.h"
#include "memory.h"

static char dir[PATH_MAX];

/* A fresh private directory under $TMPDIR for each case. */
static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_memory.XXXXXX",
	    t != NULL && t[0] != '\0' ? t : "/tmp");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

/* Remove the case's directory, whatever it holds. */
static int teardown(void **state)
{
	char cmd[PATH_MAX + 32];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write @p text to @p rel under the case's directory, making the
 * directories on the way. */
static void put(const char *rel, const char *text)
{
	char p[PATH_MAX + 256], *s;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	for (s = p + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		(void)mkdir(p, 0700);
		*s = '/';
	}
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* The case's tree read as the watcher reads it. */
static int read_tree(struct memory_reading *r, uint64_t rlimit)
{
	char root[PATH_MAX + 16], proc[PATH_MAX + 16];
	struct memory_where w = {.cgroup_root = root,
	    .proc = proc,
	    .rlimit_as = rlimit};

	snprintf(root, sizeof(root), "%s/cg", dir);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	return memory_read(&w, r);
}

#define STATUS "Name:\tx\nVmSize:\t  204800 kB\nVmRSS:\t   10240 kB\n"
#define MEMINFO "MemTotal:       16384000 kB\nMemFree: 1 kB\n"
#define PSI                                                                    \
	"some avg10=12.34 avg60=1.00 avg300=0.00 total=5\n"                    \
	"full avg10=3.05 avg60=0.00 avg300=0.00 total=1\n"

/* /proc/self/cgroup: the v2 line and the v1 memory line, whatever else. */
static void test_cgroup_paths(void **state)
{
	char v2[64], v1[64];

	(void)state;
	memory_cgroup_paths("12:pids:/a\n4:memory:/process_api/xyz\n0::/\n", v2,
	    sizeof(v2), v1, sizeof(v1));
	assert_string_equal(v2, "/");
	assert_string_equal(v1, "/process_api/xyz");
	memory_cgroup_paths("0::/system.slice/redis.service\n", v2, sizeof(v2),
	    v1, sizeof(v1));
	assert_string_equal(v2, "/system.slice/redis.service");
	assert_string_equal(v1, "");
	/* Joined controllers; a climbing path; garbage; nothing. */
	memory_cgroup_paths("3:cpu,memory,blkio:/j\n0::/../x\n", v2, sizeof(v2),
	    v1, sizeof(v1));
	assert_string_equal(v1, "/j");
	assert_string_equal(v2, "");
	memory_cgroup_paths("garbage\n:::\n1:memoryx:/no\n", v2, sizeof(v2), v1,
	    sizeof(v1));
	assert_string_equal(v1, "");
	assert_string_equal(v2, "");
	memory_cgroup_paths("", v2, sizeof(v2), v1, sizeof(v1));
	assert_string_equal(v1, "");
}

/* cgroup v2 (unified at the root): memory.max, memory.current, events,
 * pressure; a parent's smaller limit wins; "max" is none. */
static void test_v2(void **state)
{
	struct memory_reading r;

	(void)state;
	put("proc/self/cgroup", "0::/app/svc\n");
	put("proc/self/status", STATUS);
	put("proc/meminfo", MEMINFO);
	put("cg/cgroup.controllers", "cpu memory\n");
	put("cg/app/svc/memory.max", "536870912\n");
	put("cg/app/svc/memory.current", "503316480\n");
	put("cg/app/svc/memory.events",
	    "low 0\nhigh 7\nmax 3\noom 0\noom_kill 1\n");
	put("cg/app/svc/memory.pressure", PSI);
	assert_int_equal(read_tree(&r, UINT64_MAX), 0);
	assert_int_equal(r.source, MEMORY_CGROUP_V2);
	assert_int_equal(r.limit, 536870912);
	assert_int_equal(r.usage, 503316480);
	assert_true(r.have_events);
	assert_int_equal(r.events_high, 7);
	assert_int_equal(r.events_max, 3);
	assert_int_equal(r.events_oom_kill, 1);
	assert_true(r.have_psi);
	assert_int_equal(r.psi_some, 1234);
	assert_int_equal(r.psi_full, 305);
	/* The parent's limit is smaller: it is the one the kernel enforces. */
	put("cg/app/memory.max", "268435456\n");
	assert_int_equal(read_tree(&r, UINT64_MAX), 0);
	assert_int_equal(r.limit, 268435456);
	/* No limit anywhere: not v2's; the machine's then. */
	put("cg/app/svc/memory.max", "max\n");
	put("cg/app/memory.max", "max\n");
	assert_int_equal(read_tree(&r, UINT64_MAX), 0);
	assert_int_equal(r.source, MEMORY_MACHINE);
	assert_int_equal(r.limit, 16384000ULL * 1024);
	assert_int_equal(r.usage, 10240ULL * 1024);
	/* The machine's reading still has the cgroup's pressure. */
	assert_true(r.have_psi);
}

/* A FIFO where memory.current should be: not opened blocking (the
 * watcher would hang in open() for ever), not read, and named in the
 * reading for the loop's log line; the machine's memory instead. */
static void test_fifo(void **state)
{
	struct memory_reading r;
	char p[PATH_MAX + 64];

	(void)state;
	put("proc/self/cgroup", "0::/\n");
	put("proc/self/status", STATUS);
	put("proc/meminfo", MEMINFO);
	put("cg/cgroup.controllers", "cpu memory\n");
	put("cg/memory.max", "536870912\n");
	snprintf(p, sizeof(p), "%s/cg/memory.current", dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(read_tree(&r, UINT64_MAX), 0);
	assert_int_equal(r.source, MEMORY_MACHINE);
	assert_string_equal(r.refused, p);
}

/* Hybrid: v2 under unified/ without memory, v1's memory controller. */
static void test_v1(void **state)
{
	struct memory_reading r;

	(void)state;
	put("proc/self/cgroup", "4:memory:/jobs/a\n1:cpu:/\n0::/\n");
	put("proc/self/status", STATUS);
	put("proc/meminfo", MEMINFO);
	put("proc/pressure/memory", PSI);
	put("cg/unified/cgroup.controllers", "");
	put("cg/unified/memory.pressure", PSI);
	put("cg/memory/jobs/a/memory.limit_in_bytes", "268435456\n");
	put("cg/memory/jobs/a/memory.usage_in_bytes", "201326592\n");
	assert_int_equal(read_tree(&r, UINT64_MAX), 0);
	assert_int_equal(r.source, MEMORY_CGROUP_V1);
	assert_int_equal(r.limit, 268435456);
	assert_int_equal(r.usage, 201326592);
	assert_false(r.have_events);
	assert_true(r.have_psi); /* /proc/pressure/memory */
	/* The hierarchical limit, when smaller. */
	put("cg/memory/jobs/a/memory.stat",
	    "cache 0\nhierarchical_memory_limit 209715200\n");
	assert_int_equal(read_tree(&r, UINT64_MAX), 0);
	assert_int_equal(r.limit, 209715200);
	/* v1's "no limit": RLIMIT_AS next, against VmSize. */
	put("cg/memory/jobs/a/memory.limit_in_bytes", "9223372036854771712\n");
	put("cg/memory/jobs/a/memory.stat",
	    "hierarchical_memory_limit 9223372036854771712\n");
	assert_int_equal(read_tree(&r, 1ULL << 30), 0);
	assert_int_equal(r.source, MEMORY_RLIMIT);
	assert_int_equal(r.limit, 1ULL << 30);
	assert_int_equal(r.usage, 204800ULL * 1024);
	/* A container's own mount: the path is not there, the root is. */
	put("cg/memory/memory.limit_in_bytes", "104857600\n");
	put("cg/memory/memory.usage_in_bytes", "1048576\n");
	put("proc/self/cgroup", "4:memory:/docker/elsewhere\n");
	assert_int_equal(read_tree(&r, UINT64_MAX), 0);
	assert_int_equal(r.source, MEMORY_CGROUP_V1);
	assert_int_equal(r.limit, 104857600);
}

/* Garbage, missing files, NaN-ish and huge values read as no limit,
 * never as a number. */
static void test_garbage(void **state)
{
	static const char *const bad[] = {"", "\n", "-1\n", "nan\n", "1e9\n",
	    "0x100\n", "12 34\n", "99999999999999999999999\n", "max max\n",
	    " 5\n", "5kB\n"};
	struct memory_reading r;
	unsigned some, full;
	size_t i;

	(void)state;
	put("proc/self/cgroup", "0::/g\n");
	put("cg/cgroup.controllers", "memory\n");
	put("cg/g/memory.current", "1000\n");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put("cg/g/memory.max", bad[i]);
		assert_int_equal(read_tree(&r, UINT64_MAX), -1);
		assert_int_equal(r.source, MEMORY_NONE);
		assert_int_equal(r.limit, 0);
	}
	/* 0 is no limit either (a percentage of it would dump at once). */
	put("cg/g/memory.max", "0\n");
	assert_int_equal(read_tree(&r, UINT64_MAX), -1);
	/* The largest number there is, read exactly. */
	put("cg/g/memory.max", "18446744073709551614\n");
	assert_int_equal(read_tree(&r, UINT64_MAX), 0);
	assert_int_equal(r.limit, 18446744073709551614ULL);
	/* Usage that is garbage: not v2's. */
	put("cg/g/memory.current", "lots\n");
	assert_int_equal(read_tree(&r, UINT64_MAX), -1);
	/* Nothing at all: no proc, no cgroup. */
	assert_int_equal(memory_read(&(struct memory_where){.cgroup_root =
	                                                        "/nonexistent",
	                                 .proc = "/nonexistent",
	                                 .rlimit_as = UINT64_MAX},
	                     &r),
	    -1);
	/* PSI: junk, a percentage over 100, no "some" line. */
	assert_int_equal(memory_parse_psi("some avg10=abc\n", &some, &full),
	    -1);
	assert_int_equal(memory_parse_psi("some avg10=101.00\n", &some, &full),
	    -1);
	assert_int_equal(memory_parse_psi("full avg10=1.00\n", &some, &full),
	    -1);
	assert_int_equal(memory_parse_psi("some avg10=7\n", &some, &full), 0);
	assert_int_equal(some, 700);
	assert_int_equal(full, 0);
}

/* A reading of @p usage against a 1000-byte limit from cgroup v1. */
static struct memory_reading at(uint64_t usage)
{
	return (struct memory_reading){.source = MEMORY_CGROUP_V1,
	    .usage = usage,
	    .limit = 1000};
}

/* Fires once on crossing; not again above; re-armed below 95 % of the
 * threshold; a refused dump is asked again at the next reading. */
static void test_hysteresis(void **state)
{
	struct memory_policy p = {.pct = 90};
	struct memory_state s = {0};
	struct memory_reading r;

	(void)state;
	r = at(800);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	assert_int_equal(s.threshold, 900);
	r = at(900);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_CGROUP_V1);
	/* While the dump is out, nothing more is asked. */
	r = at(950);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	memory_dumped(&s, 0); /* refused: busy, dump_min_interval */
	assert_int_equal(s.dumps[MEMORY_CGROUP_V1], 0);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_CGROUP_V1);
	memory_dumped(&s, 1);
	assert_int_equal(s.dumps[MEMORY_CGROUP_V1], 1);
	/* Above, or fallen only a little: no second dump. */
	r = at(990);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	r = at(860); /* above 95 % of 900 (855) */
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	r = at(901);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	/* Below 855, then across again: the second dump. */
	r = at(854);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	r = at(900);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_CGROUP_V1);
	memory_dumped(&s, 1);
	assert_int_equal(s.dumps[MEMORY_CGROUP_V1], 2);
	/* A new policy re-arms, the counters stay. */
	assert_true(memory_policy_same(&p, &(struct memory_policy){.pct = 90}));
	assert_false(
	    memory_policy_same(&p, &(struct memory_policy){.pct = 91}));
	assert_false(memory_policy_same(&p,
	    &(struct memory_policy){.pct = 90, .psi = 100}));
	memory_rearm(&s);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_CGROUP_V1);
	memory_dumped(&s, 1);
	assert_int_equal(s.dumps[MEMORY_CGROUP_V1], 3);
	/* No limit: a percentage cannot fire; bytes need a usage too. */
	r = (struct memory_reading){.source = MEMORY_NONE};
	memory_rearm(&s);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	assert_int_equal(s.threshold, 0);
	/* Bytes: the threshold is the number, whatever the limit. */
	p = (struct memory_policy){.bytes = 500};
	r = at(499);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	r = at(500);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_CGROUP_V1);
	/* A huge limit does not overflow the percentage. */
	p = (struct memory_policy){.pct = 100};
	r = (struct memory_reading){.source = MEMORY_CGROUP_V2,
	    .usage = 1,
	    .limit = UINT64_MAX - 1};
	memory_dumped(&s, 1);
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	assert_int_equal(s.threshold, UINT64_MAX - 1);
}

/* PSI: some or full avg10 at the threshold fires; re-armed below half. */
static void test_psi(void **state)
{
	struct memory_policy p = {.psi = 1000};
	struct memory_state s = {0};
	struct memory_reading r = {.source = MEMORY_NONE, .have_psi = 1};

	(void)state;
	r.psi_some = 999;
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	r.psi_some = 1000;
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_PSI);
	memory_dumped(&s, 1);
	assert_int_equal(s.dumps[MEMORY_PSI], 1);
	r.psi_some = 600;
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	r.psi_some = 1500;
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	r.psi_some = 499;
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	r.psi_some = 1000;
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_PSI);
	memory_dumped(&s, 1);
	/* full reads the full line only. */
	p.psi_full = 1;
	memory_rearm(&s);
	r.psi_some = 5000;
	r.psi_full = 100;
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
	r.psi_full = 1000;
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_PSI);
	/* No pressure file: never. */
	memory_dumped(&s, 0);
	r.have_psi = 0;
	assert_int_equal(memory_check(&s, &p, &r), MEMORY_NONE);
}

/* The keys' text forms: what is accepted, what each means. */
static void test_config_keys(void **state)
{
	struct jm4lw_config *cfg = jm4lw_config_new();
	struct core_policy pol;
	char err[512];

	(void)state;
	assert_int_equal(config_policy(cfg, &pol, err, sizeof(err)), 0);
	assert_false(memory_policy_on(&pol.mem));
	assert_int_equal(jm4lw_config_set(cfg, "dump_on_memory", "90%", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(jm4lw_config_set(cfg, "dump_on_memory_psi", "full 5%",
	                     err, sizeof(err)),
	    0);
	assert_int_equal(config_policy(cfg, &pol, err, sizeof(err)), 0);
	assert_int_equal(pol.mem.pct, 90);
	assert_int_equal(pol.mem.bytes, 0);
	assert_int_equal(pol.mem.psi, 500);
	assert_true(pol.mem.psi_full);
	assert_int_equal(jm4lw_config_set(cfg, "dump_on_memory", "3G", err,
	                     sizeof(err)),
	    0);
	assert_int_equal(jm4lw_config_set(cfg, "dump_on_memory_psi", "some 10",
	                     err, sizeof(err)),
	    0);
	assert_int_equal(config_policy(cfg, &pol, err, sizeof(err)), 0);
	assert_int_equal(pol.mem.bytes, 3ULL << 30);
	assert_int_equal(pol.mem.pct, 0);
	assert_int_equal(pol.mem.psi, 1000);
	assert_false(pol.mem.psi_full);
	assert_int_equal(jm4lw_config_set(cfg, "dump_on_memory", "101%", err,
	                     sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "dump_on_memory: \"101%\""));
	assert_int_equal(jm4lw_config_set(cfg, "dump_on_memory", "0%", err,
	                     sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(cfg, "dump_on_memory", "lots", err,
	                     sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(cfg, "dump_on_memory_psi", "some",
	                     err, sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(cfg, "dump_on_memory_psi", "half 5%",
	                     err, sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(cfg, "dump_on_memory_psi", "some 0%",
	                     err, sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(cfg, "memory_cgroup_root",
	                     "relative/dir", err, sizeof(err)),
	    -1);
	assert_int_equal(jm4lw_config_set(cfg, "memory_check_interval", "0",
	                     err, sizeof(err)),
	    -1);
	jm4lw_config_free(cfg);
}

/* Plant dump @p name, @p age seconds old, with mode @p mode. */
static void plant(const char *name, int age, mode_t mode)
{
	char p[PATH_MAX + 64];
	struct timeval tv[2];

	put(name, "heap_v2/524288\n");
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	tv[0].tv_sec = tv[1].tv_sec = time(NULL) - age;
	tv[0].tv_usec = tv[1].tv_usec = 0;
	assert_int_equal(utimes(p, tv), 0);
	assert_int_equal(chmod(p, mode), 0);
}

/* Does the case's directory hold @p name? */
static int has(const char *name)
{
	char p[PATH_MAX + 64];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

/* A pinned memory dump survives a flood of later dumps under dump_keep
 * until it is listed; at most DUMPS_PINNED_MAX stay pinned. */
static void test_pin(void **state)
{
	struct jm4lw_config cfg;
	struct core c = {0};
	struct dump_list l;
	char newest[PATH_MAX + 64], name[64];
	struct stat st;
	int i;

	(void)state;
	config_defaults(&cfg);
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", dir);
	cfg.dump_keep = 2;
	plant("jm4lw.5.1.o.heap", 100, 0400); /* pinned */
	plant("jm4lw.5.2.o.heap", 90, 0600);  /* listed: not pinned */
	for (i = 3; i < 13; i++) {            /* the flood */
		snprintf(name, sizeof(name), "jm4lw.5.%d.w.heap", i);
		plant(name, 100 - i, 0600);
		snprintf(newest, sizeof(newest), "%s/%s", dir, name);
		dumps_retain(&cfg, dir, newest, NULL);
	}
	assert_true(has("jm4lw.5.1.o.heap"));
	assert_false(has("jm4lw.5.2.o.heap"));
	assert_true(has("jm4lw.5.12.w.heap"));
	assert_true(has("jm4lw.5.11.w.heap"));
	assert_false(has("jm4lw.5.10.w.heap"));
	/* jmls lists it: 0600 again, and the next dump rotates it away. */
	c.cfg = &cfg;
	assert_int_equal(core_dump_list(&c, &l), 0);
	assert_int_equal(l.n, 3);
	dump_list_free(&l);
	snprintf(newest, sizeof(newest), "%s/jm4lw.5.1.o.heap", dir);
	assert_int_equal(stat(newest, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	plant("jm4lw.5.13.w.heap", 80, 0600);
	snprintf(newest, sizeof(newest), "%s/jm4lw.5.13.w.heap", dir);
	dumps_retain(&cfg, dir, newest, NULL);
	assert_false(has("jm4lw.5.1.o.heap"));
	/* Six pinned: the two oldest are released and rotate as usual. */
	for (i = 20; i < 26; i++) {
		snprintf(name, sizeof(name), "jm4lw.5.%d.o.heap", i);
		plant(name, 60 - i, 0400);
	}
	plant("jm4lw.5.30.w.heap", 10, 0600);
	snprintf(newest, sizeof(newest), "%s/jm4lw.5.30.w.heap", dir);
	dumps_retain(&cfg, dir, newest, NULL);
	for (i = 22; i < 26; i++) {
		snprintf(name, sizeof(name), "jm4lw.5.%d.o.heap", i);
		assert_true(has(name));
	}
	/* The fifth fits dump_keep once released; the sixth does not. */
	snprintf(newest, sizeof(newest), "%s/jm4lw.5.21.o.heap", dir);
	assert_int_equal(stat(newest, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_false(has("jm4lw.5.20.o.heap"));
	snprintf(newest, sizeof(newest), "%s/jm4lw.5.30.w.heap", dir);
	/* A read-only dump of another cause is not a pin. */
	plant("jm4lw.5.40.w.heap", 200, 0400);
	dumps_retain(&cfg, dir, newest, NULL);
	assert_false(has("jm4lw.5.40.w.heap"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cgroup_paths),
	    cmocka_unit_test_setup_teardown(test_v2, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_v1, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
	    cmocka_unit_test(test_hysteresis),
	    cmocka_unit_test(test_psi),
	    cmocka_unit_test(test_config_keys),
	    cmocka_unit_test_setup_teardown(test_pin, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

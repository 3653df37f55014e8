/*
 * Thread mode against real loopback sockets and the real jemalloc: start,
 * serve, sleep without wake-ups, stop promptly, survive fork(). Run again
 * under valgrind and ThreadSanitizer by the suite.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_struct.h"
#include "jm4lw.h"

/* Connect to 127.0.0.1:@p port; -1 with errno on failure. */
static int dial(int port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int fd;

	sin.sin_port = htons((unsigned short)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Send @p word, read the whole reply into @p buf (NUL-terminated). */
static size_t ask(int port, const char *word, char *buf, size_t len)
{
	size_t have = 0;
	ssize_t n;
	int fd = dial(port);

	assert_true(fd != -1);
	assert_int_equal(send(fd, word, strlen(word), MSG_NOSIGNAL),
	    (ssize_t)strlen(word));
	while (
	    have < len - 1 && (n = recv(fd, buf + have, len - 1 - have, 0)) > 0)
		have += (size_t)n;
	buf[have] = '\0';
	close(fd);
	return have;
}

/* The port of the first listener of a thread's module, from `conf`. */
static int conf_port(const char *conf)
{
	const char *p = strstr(conf, "listen=127.0.0.1:");

	assert_non_null(p);
	return atoi(p + strlen("listen=127.0.0.1:"));
}

/* Words added through the setup hook. */
static int word_ping(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	jm4lw_reply_printf(r, "pong\n");
	return 0;
}

static int setup_port; /* where the setup hook's listener ended up */

/* Setup hook: a host word, and a socket the host bound itself. */
static void setup(struct jm4lw *m, void *arg)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);
	char addr[64];
	int fd;

	(void)arg;
	assert_int_equal(jm4lw_add_word(m, "ping", word_ping, NULL, 0), 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd != -1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	setup_port = ntohs(sin.sin_port);
	assert_int_equal(jm4lw_listen_fd(m, fd), 0);
	assert_int_equal(jm4lw_bound_addr(m, 0, addr, sizeof(addr)), 0);
	assert_int_equal(jm4lw_bound_addr(m, 1, addr, sizeof(addr)), -1);
	assert_non_null(strstr(addr, "127.0.0.1:"));
}

/*
 * Start a thread on a free loopback port (the config's 127.0.0.1:0), with
 * the setup hook adding a word and a second, host-bound listener; *port
 * is the latter's.
 */
static struct jm4lw_thread *start(int *port)
{
	struct jm4lw_thread_opts opts = {JM4LW_THREAD_OPTS_INIT,
	    .setup = setup};
	struct jm4lw_config cfg;
	struct jm4lw_thread *t;
	char err[256];

	config_defaults(&cfg);
	cfg.http_listen[0] = '\0'; /* not 9182: scripts/run.sh's may run */
	snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1:0");
	t = jm4lw_start_thread_ex(&cfg, &opts, err, sizeof(err));
	if (t == NULL)
		fail_msg("start: %s", err);
	*port = setup_port;
	return t;
}

static pid_t tid_named(const char *comm_nl);

/* The tid of our thread named "jm4lw", or 0. */
static pid_t jm4lw_tid(void)
{
	return tid_named("jm4lw\n");
}

/* The tid of our thread whose comm is @p comm_nl (with its newline), or 0. */
static pid_t tid_named(const char *comm_nl)
{
	char path[512], comm[64];
	struct dirent *d;
	pid_t tid = 0;
	DIR *dir = opendir("/proc/self/task");
	FILE *f;

	assert_non_null(dir);
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
		    d->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL &&
		    strcmp(comm, comm_nl) == 0)
			tid = (pid_t)atoi(d->d_name);
		fclose(f);
	}
	closedir(dir);
	return tid;
}

/* Context switches of task @p tid so far: each wake-up is one. */
static long switches(pid_t tid)
{
	char path[256], line[256];
	long n = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			n += v;
	fclose(f);
	return n;
}

static void test_serves_words(void **state)
{
	struct jm4lw_thread *t;
	char buf[65536];
	int port;

	(void)state;
	t = start(&port);
	assert_int_equal(ask(port, "ruok", buf, sizeof(buf)), 4);
	assert_string_equal(buf, "imok");
	ask(port, "ping\n", buf, sizeof(buf));
	assert_string_equal(buf, "pong\n");
	ask(port, "srvr\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, "\nMode: thread\n"));
	ask(port, "jmst\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, "--- End jemalloc statistics ---\n"));
	/* The configured listener (port 0) is there too. */
	ask(port, "conf\n", buf, sizeof(buf));
	assert_true(conf_port(buf) > 0);
	assert_int_equal(ask(conf_port(buf), "ruok", buf, sizeof(buf)), 4);
	jm4lw_stop_thread(t);
	/* Stopped means closed. */
	assert_int_equal(dial(port), -1);
	assert_int_equal(errno, ECONNREFUSED);
}

static void test_thread_is_named_and_sleeps(void **state)
{
	struct jm4lw_thread *t;
	char buf[64];
	pid_t tid;
	long before, after;
	int port, i;

	(void)state;
	t = start(&port);
	ask(port, "ruok", buf, sizeof(buf)); /* it has run at least once */
	tid = jm4lw_tid();
	assert_true(tid > 0);
	/*
	 * Let it finish with that connection (it closes once it reads our
	 * FIN), then idle for a second: an idle module must not wake up.
	 */
	for (i = 0, before = -1, after = switches(tid);
	     i < 50 && after != before; i++) {
		before = after;
		usleep(200 * 1000);
		after = switches(tid);
	}
	assert_int_equal(after, before);
	sleep(1);
	after = switches(tid);
	assert_int_equal(after, before);
	jm4lw_stop_thread(t);
	assert_int_equal(jm4lw_tid(), 0);
}

/* The staging directories (".jm4lw.<pid>.XXXXXX") left in @p dir. */
static int stages(const char *dir)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int n = 0;

	assert_non_null(dp);
	while ((d = readdir(dp)) != NULL)
		n += strncmp(d->d_name, ".jm4lw.", 7) == 0;
	closedir(dp);
	return n;
}

/*
 * jmfp in thread mode goes through the worker, and a stop right after a
 * jmfp, with the dump perhaps still running, returns at once: the worker
 * finishes that dump on its own and cleans up after it (valgrind and
 * ThreadSanitizer run this too).
 */
static void test_jmfp_and_stop_mid_dump(void **state)
{
	struct jm4lw_thread_opts opts = {JM4LW_THREAD_OPTS_INIT,
	    .setup = setup};
	struct jm4lw_config cfg;
	struct jm4lw_thread *t;
	char err[256], dir[512], buf[8192], path[1024];
	const char *tmp = getenv("TMPDIR");
	struct stat sb;
	int port, fd, i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_thread.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	config_defaults(&cfg);
	cfg.http_listen[0] = '\0'; /* not 9182: scripts/run.sh's may run */
	snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1:0");
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", dir);
	cfg.dump_min_interval = 0;
	cfg.dump_min_free = 0;
	t = jm4lw_start_thread_ex(&cfg, &opts, err, sizeof(err));
	if (t == NULL)
		fail_msg("start: %s", err);
	port = setup_port;
	/* A whole dump through the worker: its path, and the file. */
	ask(port, "jmfp", buf, sizeof(buf));
	if (strncmp(buf, "error: heap profiling is not enabled", 36) != 0) {
		assert_true(buf[0] == '/' && strchr(buf, '\n') != NULL);
		*strchr(buf, '\n') = '\0';
		assert_int_equal(stat(buf, &sb), 0);
		assert_int_equal(unlink(buf), 0);
	}
	/* Stop while a second dump may still run. */
	fd = dial(port);
	assert_true(fd != -1);
	assert_int_equal(send(fd, "jmfp\n", 5, MSG_NOSIGNAL), 5);
	usleep(2000); /* not a timing check: either way must be safe */
	jm4lw_stop_thread(t);
	close(fd);
	/* The worker finishes on its own and removes the staging dir. */
	for (i = 0; i < 100 && stages(dir) > 0; i++)
		usleep(50 * 1000);
	assert_int_equal(stages(dir), 0);
	{
		struct dirent *d;
		DIR *dp = opendir(dir);
		assert_non_null(dp);
		while ((d = readdir(dp)) != NULL)
			if (strncmp(d->d_name, "jm4lw.", 6) == 0) {
				snprintf(path, sizeof(path), "%s/%s", dir,
				    d->d_name);
				assert_int_equal(unlink(path), 0);
			}
		closedir(dp);
	}
	assert_int_equal(rmdir(dir), 0);
	/* The stopped module's worker may still be in prof.dump: let it end
	 * (jm4lw.h says it exits by itself), so that the next test's fork()
	 * does not copy a thread's memory into a child without the thread,
	 * which valgrind then reports lost at the child's exit. */
	for (i = 0; i < 600 && tid_named("jm4lw-worker\n") != 0; i++)
		usleep(50 * 1000);
	assert_int_equal(tid_named("jm4lw-worker\n"), 0);
}

/* The memory dump named so in @p dir, into @p path: 1 if there is one. */
static int memory_dump(const char *dir, char *path, size_t len)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	size_t n;
	int found = 0;

	assert_non_null(dp);
	while ((d = readdir(dp)) != NULL) {
		n = strlen(d->d_name);
		if (strncmp(d->d_name, "jm4lw.", 6) == 0 && n > 7 &&
		    strcmp(d->d_name + n - 7, ".o.heap") == 0) {
			snprintf(path, len, "%s/%s", dir, d->d_name);
			found = 1;
		}
	}
	closedir(dp);
	return found;
}

/*
 * dump_on_memory in thread mode: its watcher thread (jm4lw-memory) hands
 * readings to the module's loop and a threshold of one byte dumps at the
 * first one, pinned read-only; stopping the module stops the watcher,
 * also while the next reading or a dump may be under way (under
 * ThreadSanitizer in scripts/test.sh's tsan build).
 */
static void test_memory_watcher(void **state)
{
	struct jm4lw_config cfg;
	struct jm4lw_thread *t;
	char err[256], dir[512], path[1024];
	const char *tmp = getenv("TMPDIR"), *mc = getenv("MALLOC_CONF");
	int prof = mc != NULL && strstr(mc, "prof:true") != NULL;
	struct stat sb;
	int i, round;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_thread.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	for (round = 0; round < 2; round++) {
		config_defaults(&cfg);
		cfg.http_listen[0] = '\0';
		snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1:0");
		snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", dir);
		cfg.dump_min_interval = 0;
		cfg.dump_min_free = 0;
		assert_int_equal(jm4lw_config_set(&cfg, "dump_on_memory", "1",
		                     err, sizeof(err)),
		    0);
		t = jm4lw_start_thread(&cfg, err, sizeof(err));
		if (t == NULL)
			fail_msg("start: %s", err);
		for (i = 0; i < 200 && tid_named("jm4lw-memory\n") == 0; i++)
			usleep(10 * 1000);
		assert_int_not_equal(tid_named("jm4lw-memory\n"), 0);
		/* Round 0 waits for the dump (when profiling is on); round 1
		 * stops at once, mid-reading or mid-dump. */
		for (i = 0; round == 0 && prof && i < 200 &&
		     !memory_dump(dir, path, sizeof(path));
		     i++)
			usleep(50 * 1000);
		if (round == 0 && prof) {
			assert_true(memory_dump(dir, path, sizeof(path)));
			assert_int_equal(stat(path, &sb), 0);
			assert_int_equal(sb.st_mode & 0777, 0400);
		}
		jm4lw_stop_thread(t);
		/* A watcher stopped mid-reading leaves when its read
		 * returns (the stop never waits on a read). */
		for (i = 0; i < 200 && tid_named("jm4lw-memory\n") != 0; i++)
			usleep(10 * 1000);
		assert_int_equal(tid_named("jm4lw-memory\n"), 0);
	}
	/* A FIFO where memory.current should be: the watcher reads only
	 * regular files, so it never blocks in its open() and the stop
	 * returns (it hung there, joining the watcher). */
	snprintf(path, sizeof(path), "%s/cg", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/cg/memory.current", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	config_defaults(&cfg);
	cfg.http_listen[0] = '\0';
	snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1:0");
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", dir);
	snprintf(path, sizeof(path), "%s/cg", dir);
	assert_int_equal(jm4lw_config_set(&cfg, "memory_cgroup_root", path, err,
	                     sizeof(err)),
	    0);
	assert_int_equal(jm4lw_config_set(&cfg, "dump_on_memory", "90%", err,
	                     sizeof(err)),
	    0);
	t = jm4lw_start_thread(&cfg, err, sizeof(err));
	if (t == NULL)
		fail_msg("start: %s", err);
	for (i = 0; i < 200 && tid_named("jm4lw-memory\n") == 0; i++)
		usleep(10 * 1000);
	usleep(200 * 1000); /* its first reading, at the FIFO */
	jm4lw_stop_thread(t);
	for (i = 0; i < 600 && tid_named("jm4lw-worker\n") != 0; i++)
		usleep(50 * 1000);
	snprintf(path, sizeof(path), "rm -rf -- '%s'", dir);
	assert_int_equal(system(path), 0);
}

static void test_stop_with_open_connections(void **state)
{
	struct jm4lw_thread *t;
	int port, fds[8], i;
	char c;

	(void)state;
	t = start(&port);
	for (i = 0; i < 8; i++) {
		fds[i] = dial(port);
		assert_true(fds[i] != -1);
	}
	assert_int_equal(send(fds[0], "ru", 2, MSG_NOSIGNAL), 2);
	jm4lw_stop_thread(t);
	/* Every held connection was closed by the stop. */
	for (i = 0; i < 8; i++) {
		ssize_t n = recv(fds[i], &c, 1, 0);
		assert_true(n == 0 || (n == -1 && errno == ECONNRESET));
		close(fds[i]);
	}
}

static void test_start_errors(void **state)
{
	struct jm4lw_config cfg;
	struct jm4lw_thread *t, *t2;
	char err[256], buf[4096];
	int port;

	(void)state;
	t = start(&port);
	ask(port, "conf\n", buf, sizeof(buf));
	config_defaults(&cfg);
	cfg.http_listen[0] = '\0'; /* not 9182: scripts/run.sh's may run */
	snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1:%d", port);
	err[0] = '\0';
	t2 = jm4lw_start_thread(&cfg, err, sizeof(err));
	assert_null(t2);
	assert_non_null(strstr(err, "Address already in use"));
	cfg.max_connections = 0; /* invalid */
	assert_null(jm4lw_start_thread(&cfg, err, sizeof(err)));
	assert_true(err[0] != '\0');
	jm4lw_stop_thread(t);
	jm4lw_stop_thread(NULL);
}

/*
 * fork(): the child must not hold the port. If it kept a copy of the
 * listening socket, connecting after the parent stopped would succeed
 * (the kernel queues it on the child's copy) instead of being refused.
 */
static void test_fork_child_lets_go(void **state)
{
	struct jm4lw_thread *t;
	int port, up[2], down[2], status;
	char buf[64], c = 0;
	pid_t pid;

	(void)state;
	t = start(&port);
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	if ((pid = fork()) == 0) {
		jm4lw_stop_thread(t); /* forgets the handle, must not hang */
		if (write(up[1], "r", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(3);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(read(up[0], &c, 1), 1);
	assert_int_equal(ask(port, "ruok", buf, sizeof(buf)), 4);
	jm4lw_stop_thread(t);
	assert_int_equal(dial(port), -1);
	assert_int_equal(errno, ECONNREFUSED);
	assert_int_equal(write(down[1], "d", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/* An allow list may name host words: the module checks it knowing the
 * host adds words after jm4lw_new(); jm4lwd's strict check would not. */
static void test_allow_names_host_words(void **state)
{
	struct jm4lw_thread_opts opts = {JM4LW_THREAD_OPTS_INIT,
	    .setup = setup};
	struct jm4lw_config cfg;
	struct jm4lw_thread *t;
	char err[256], buf[256];

	(void)state;
	config_defaults(&cfg);
	cfg.http_listen[0] = '\0'; /* not 9182: scripts/run.sh's may run */
	snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1:0");
	snprintf(cfg.allow, sizeof(cfg.allow), "ruok,ping");
	assert_int_equal(jm4lw_config_check(&cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "ping"));
	t = jm4lw_start_thread_ex(&cfg, &opts, err, sizeof(err));
	if (t == NULL)
		fail_msg("start: %s", err);
	ask(setup_port, "ping", buf, sizeof(buf));
	assert_string_equal(buf, "pong\n");
	ask(setup_port, "jmst", buf, sizeof(buf));
	assert_string_equal(buf,
	    "jmst is not executed because it is not in the whitelist.\n");
	jm4lw_stop_thread(t);
}

static void test_many_starts_and_stops(void **state)
{
	struct jm4lw_thread *t;
	char buf[64];
	int i, port;

	(void)state;
	for (i = 0; i < 20; i++) {
		t = start(&port);
		assert_int_equal(ask(port, "ruok", buf, sizeof(buf)), 4);
		jm4lw_stop_thread(t);
	}
}

/* Debug lines seen by count_log (it runs on the module's thread). */
static int debug_lines;

static void count_log(int level, const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
	if (level == JM4LW_LOG_DEBUG)
		__atomic_add_fetch(&debug_lines, 1, __ATOMIC_SEQ_CST);
}

/* Setup hook: the usual one, and debug lines off. */
static void quiet_setup(struct jm4lw *m, void *arg)
{
	setup(m, arg);
	jm4lw_set_log_level(m, JM4LW_LOG_INFO);
}

/*
 * A host's log callback sees a line per connection, unless it lowered the
 * level: then the lines are not even made.
 */
static void test_log_level(void **state)
{
	struct jm4lw_thread_opts opts = {JM4LW_THREAD_OPTS_INIT,
	    .log = count_log};
	struct jm4lw_config cfg;
	struct jm4lw_thread *t;
	char err[256], buf[4096];
	int i, n;

	(void)state;
	config_defaults(&cfg);
	cfg.http_listen[0] = '\0'; /* not 9182: scripts/run.sh's may run */
	snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1:0");
	for (i = 0; i < 2; i++) {
		opts.setup = i == 0 ? setup : quiet_setup;
		t = jm4lw_start_thread_ex(&cfg, &opts, err, sizeof(err));
		if (t == NULL)
			fail_msg("start: %s", err);
		__atomic_store_n(&debug_lines, 0, __ATOMIC_SEQ_CST);
		assert_int_equal(ask(setup_port, "ruok", buf, sizeof(buf)), 4);
		jm4lw_stop_thread(t);
		n = __atomic_load_n(&debug_lines, __ATOMIC_SEQ_CST);
		if (i == 0)
			assert_true(n > 0);
		else
			assert_int_equal(n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_serves_words),
	    cmocka_unit_test(test_thread_is_named_and_sleeps),
	    cmocka_unit_test(test_stop_with_open_connections),
	    cmocka_unit_test(test_jmfp_and_stop_mid_dump),
	    cmocka_unit_test(test_start_errors),
	    cmocka_unit_test(test_fork_child_lets_go),
	    cmocka_unit_test(test_allow_names_host_words),
	    cmocka_unit_test(test_many_starts_and_stops),
	    cmocka_unit_test(test_log_level),
	    cmocka_unit_test(test_memory_watcher),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

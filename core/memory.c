/*
 * memory — the limit the kernel will enforce and how close the process
 * is to it, read from small text files under roots the caller names (so
 * tests lay out a tree like /sys/fs/cgroup and /proc in a temporary
 * directory), and when dump_on_memory calls for a dump.
 *
 * The order is the kernel's: a cgroup's limit is what the OOM killer
 * acts on, v2 first (memory.max, the smallest up the tree), then v1
 * (memory.limit_in_bytes, or memory.stat's hierarchical_memory_limit if
 * smaller); without either, RLIMIT_AS (mmap fails against VmSize), and
 * last the machine (MemTotal against our VmRSS). Every file is read with
 * open/read into a buffer on the stack: the watcher thread allocates
 * nothing, so it never meets jemalloc's locks or its profiles.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "memory.h"

const char *const memory_trigger_names[MEMORY_TRIGGERS] = {
    [MEMORY_NONE] = "none",
    [MEMORY_CGROUP_V2] = "cgroup_v2",
    [MEMORY_CGROUP_V1] = "cgroup_v1",
    [MEMORY_RLIMIT] = "rlimit",
    [MEMORY_MACHINE] = "machine",
    [MEMORY_PSI] = "psi",
};

const char *const memory_trigger_words[MEMORY_TRIGGERS] = {
    [MEMORY_NONE] = "no limit",
    [MEMORY_CGROUP_V2] = "cgroup v2",
    [MEMORY_CGROUP_V1] = "cgroup v1",
    [MEMORY_RLIMIT] = "RLIMIT_AS",
    [MEMORY_MACHINE] = "machine",
    [MEMORY_PSI] = "memory pressure",
};

/* cgroup v1 says "no limit" with the largest page-aligned long
 * (9223372036854771712); anything this big is none. */
#define V1_UNLIMITED (1ULL << 62)

/* Small files only: every one we read is a line or a few dozen. */
#define FILE_MAX 4096

/* @p dir/@p name, whole, into @p buf (NUL-terminated): 0, or -1. Only a
 * regular file is read, opened non-blocking: a FIFO or a device planted
 * where a cgroup file should be would block open() or read() for ever,
 * and the loop stops the watcher at reload and exit. A refused file is
 * named in @p r (the first one), for the loop's log line. */
static int read_small(const char *dir, const char *name, char *buf, size_t len,
    struct memory_reading *r)
{
	char path[PATH_MAX];
	size_t have = 0;
	struct stat sb;
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) ==
	    -1)
		return -1;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		if (r != NULL && r->refused[0] == '\0') {
			n = (ssize_t)strnlen(path, sizeof(r->refused) - 1);
			memcpy(r->refused, path, (size_t)n);
			r->refused[n] = '\0';
		}
		close(fd);
		return -1;
	}
	while (
	    have + 1 < len && (n = read(fd, buf + have, len - 1 - have)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			close(fd);
			return -1;
		}
		have += (size_t)n;
	}
	close(fd);
	buf[have] = '\0';
	return 0;
}

/* Decimal digits at @p s into @p v, then only blanks: 0, or -1 (empty,
 * a sign, junk, overflow). */
static int parse_u64(const char *s, const char **end, uint64_t *v)
{
	uint64_t n = 0, d;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		d = (uint64_t)(*s - '0');
		if (n > UINT64_MAX / 10 ||
		    (n == UINT64_MAX / 10 && d > UINT64_MAX % 10))
			return -1;
		n = n * 10 + d;
	}
	*v = n;
	if (end != NULL)
		*end = s;
	return 0;
}

/* A file that is one number and a newline; "max" is UINT64_MAX (v2). */
static int read_u64(const char *dir, const char *name, uint64_t *v,
    struct memory_reading *r)
{
	char buf[64];
	const char *e;

	if (read_small(dir, name, buf, sizeof(buf), r) == -1)
		return -1;
	if (strcmp(buf, "max\n") == 0 || strcmp(buf, "max") == 0) {
		*v = UINT64_MAX;
		return 0;
	}
	if (parse_u64(buf, &e, v) == -1)
		return -1;
	return strcmp(e, "\n") == 0 || *e == '\0' ? 0 : -1;
}

/* "key value" lines (memory.stat, memory.events, /proc/meminfo's
 * "Key: value kB"): the value of @p key. 0, or -1. */
static int keyed_u64(const char *text, const char *key, uint64_t *v)
{
	size_t n = strlen(key);
	const char *s = text;

	for (; s != NULL && *s != '\0'; s = strchr(s, '\n'), s = s ? s + 1 : s)
		if (strncmp(s, key, n) == 0 && (s[n] == ' ' || s[n] == '\t')) {
			s += n;
			while (*s == ' ' || *s == '\t')
				s++;
			return parse_u64(s, NULL, v);
		}
	return -1;
}

/* A path from /proc/self/cgroup is the kernel's, but one that climbs
 * (a cgroup namespace shows "/.." for what lies outside it) is not ours
 * to follow. */
static int path_ok(const char *p)
{
	return p[0] == '/' && strstr(p, "/..") == NULL;
}

void memory_cgroup_paths(const char *text, char *v2, size_t v2len, char *v1,
    size_t v1len)
{
	const char *s = text, *c1, *c2, *nl, *ctl;
	size_t n;

	v2[0] = v1[0] = '\0';
	for (; s != NULL && *s != '\0'; s = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		n = nl != NULL ? (size_t)(nl - s) : strlen(s);
		if ((c1 = memchr(s, ':', n)) == NULL ||
		    (c2 = memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - s))) ==
		        NULL)
			continue;
		n -= (size_t)(c2 + 1 - s);
		if (c1 == s + 1 && s[0] == '0' && c2 == c1 + 1) {
			if (n < v2len) {
				memcpy(v2, c2 + 1, n);
				v2[n] = '\0';
			}
			continue;
		}
		/* The controllers, comma-separated: "memory" among them. */
		for (ctl = c1 + 1; ctl < c2;) {
			size_t l = strcspn(ctl, ",:");
			if (l == 6 && memcmp(ctl, "memory", 6) == 0 &&
			    n < v1len) {
				memcpy(v1, c2 + 1, n);
				v1[n] = '\0';
			}
			ctl += l + 1;
		}
	}
	if (!path_ok(v2))
		v2[0] = '\0';
	if (!path_ok(v1))
		v1[0] = '\0';
}

/* "avg10=12.34" after @p key at the start of a line: x100. */
static int psi_line(const char *text, const char *key, unsigned *v)
{
	const char *s = text;
	size_t n = strlen(key);
	uint64_t whole, frac = 0;
	const char *e;

	for (; s != NULL && *s != '\0'; s = strchr(s, '\n'), s = s ? s + 1 : s)
		if (strncmp(s, key, n) == 0 &&
		    strncmp(s + n, " avg10=", 7) == 0)
			break;
	if (s == NULL || *s == '\0')
		return -1;
	s += n + 7;
	if (parse_u64(s, &e, &whole) == -1 || whole > 100)
		return -1;
	if (*e == '.') {
		if (e[1] < '0' || e[1] > '9')
			return -1;
		frac = (uint64_t)(e[1] - '0') * 10;
		if (e[2] >= '0' && e[2] <= '9')
			frac += (uint64_t)(e[2] - '0');
	}
	*v = (unsigned)(whole * 100 + frac);
	return *v <= 10000 ? 0 : -1;
}

int memory_parse_psi(const char *text, unsigned *some, unsigned *full)
{
	if (psi_line(text, "some", some) == -1)
		return -1;
	if (psi_line(text, "full", full) == -1)
		*full = 0; /* the system-wide file of older kernels has none */
	return 0;
}

/* The smaller of two limits; UINT64_MAX is none. */
static uint64_t lower(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int memory_read_v2(const char *base, const char *dir, struct memory_reading *r)
{
	char up[PATH_MAX], buf[FILE_MAX];
	uint64_t max, limit = UINT64_MAX, usage;
	size_t nb = strlen(base);
	char *slash;

	if (read_u64(dir, "memory.current", &usage, r) == -1)
		return -1;
	/* A parent's memory.max binds us as much as our own. */
	if (snprintf(up, sizeof(up), "%s", dir) >= (int)sizeof(up))
		return -1;
	for (;;) {
		if (read_u64(up, "memory.max", &max, r) == 0)
			limit = lower(limit, max);
		if (strlen(up) <= nb || (slash = strrchr(up, '/')) == NULL ||
		    slash < up + nb)
			break;
		*slash = '\0';
	}
	if (limit == UINT64_MAX || limit == 0)
		return -1;
	r->source = MEMORY_CGROUP_V2;
	r->usage = usage;
	r->limit = limit;
	if (read_small(dir, "memory.events", buf, sizeof(buf), r) == 0 &&
	    keyed_u64(buf, "high", &r->events_high) == 0 &&
	    keyed_u64(buf, "max", &r->events_max) == 0) {
		r->have_events = 1;
		if (keyed_u64(buf, "oom_kill", &r->events_oom_kill) == -1)
			r->events_oom_kill = 0;
	}
	return 0;
}

int memory_read_v1(const char *dir, struct memory_reading *r)
{
	char buf[FILE_MAX];
	uint64_t limit, usage, h;

	if (read_u64(dir, "memory.limit_in_bytes", &limit, r) == -1 ||
	    read_u64(dir, "memory.usage_in_bytes", &usage, r) == -1)
		return -1;
	/* A parent's limit, when use_hierarchy is on (it always is since
	 * 5.x), is in memory.stat. */
	if (read_small(dir, "memory.stat", buf, sizeof(buf), r) == 0 &&
	    keyed_u64(buf, "hierarchical_memory_limit", &h) == 0)
		limit = lower(limit, h);
	if (limit >= V1_UNLIMITED || limit == 0)
		return -1;
	r->source = MEMORY_CGROUP_V1;
	r->usage = usage;
	r->limit = limit;
	return 0;
}

/* "Key:   123 kB" of a /proc file, in bytes. */
static int proc_kb(const char *dir, const char *name, const char *key,
    uint64_t *v, struct memory_reading *r)
{
	char buf[FILE_MAX];

	if (read_small(dir, name, buf, sizeof(buf), r) == -1 ||
	    keyed_u64(buf, key, v) == -1 || *v > UINT64_MAX / 1024)
		return -1;
	*v *= 1024;
	return 0;
}

/* @p root/@p sub/@p path, the cgroup's directory; where the path is not
 * there (a container's own mount shows its group as the root), the
 * mount's root. */
static void cgroup_dir(char *out, size_t len, const char *mount,
    const char *path)
{
	char probe[PATH_MAX];

	snprintf(probe, sizeof(probe), "%s%s", mount, path);
	if (access(probe, F_OK) == 0)
		snprintf(out, len, "%s", probe);
	else
		snprintf(out, len, "%s", mount);
}

int memory_read(const struct memory_where *w, struct memory_reading *r)
{
	char self[PATH_MAX], text[FILE_MAX], v2[PATH_MAX / 2], v1[PATH_MAX / 2];
	char mount[PATH_MAX / 2], dir[PATH_MAX], v2dir[PATH_MAX], psi[FILE_MAX];
	const char *psi_dir = NULL;
	uint64_t vm;

	memset(r, 0, sizeof(*r));
	snprintf(self, sizeof(self), "%s/self", w->proc);
	v2[0] = v1[0] = '\0';
	if (read_small(self, "cgroup", text, sizeof(text), r) == 0)
		memory_cgroup_paths(text, v2, sizeof(v2), v1, sizeof(v1));
	if (v2[0] != '\0') {
		/* Unified alone at the root, or hybrid under unified/. */
		snprintf(mount, sizeof(mount), "%s/unified", w->cgroup_root);
		snprintf(dir, sizeof(dir), "%.*s/cgroup.controllers",
		    (int)(sizeof(mount) - 1), mount);
		if (access(dir, F_OK) != 0)
			snprintf(mount, sizeof(mount), "%s", w->cgroup_root);
		cgroup_dir(v2dir, sizeof(v2dir), mount,
		    strcmp(v2, "/") ? v2 : "");
		(void)memory_read_v2(mount, v2dir, r);
		psi_dir = v2dir; /* with a limit or without */
	}
	if (r->source == MEMORY_NONE && v1[0] != '\0') {
		snprintf(mount, sizeof(mount), "%s/memory", w->cgroup_root);
		cgroup_dir(dir, sizeof(dir), mount, strcmp(v1, "/") ? v1 : "");
		(void)memory_read_v1(dir, r);
	}
	if (r->source == MEMORY_NONE && w->rlimit_as != UINT64_MAX &&
	    proc_kb(self, "status", "VmSize:", &vm, r) == 0) {
		r->source = MEMORY_RLIMIT;
		r->usage = vm;
		r->limit = w->rlimit_as;
	}
	if (r->source == MEMORY_NONE &&
	    proc_kb(w->proc, "meminfo", "MemTotal:", &r->limit, r) == 0 &&
	    proc_kb(self, "status", "VmRSS:", &r->usage, r) == 0)
		r->source = MEMORY_MACHINE;
	if (r->source == MEMORY_NONE)
		r->usage = r->limit = 0;
	/* The pressure: the cgroup's own under v2, else the machine's. */
	if (psi_dir != NULL &&
	    read_small(psi_dir, "memory.pressure", psi, sizeof(psi), r) == 0 &&
	    memory_parse_psi(psi, &r->psi_some, &r->psi_full) == 0)
		r->have_psi = 1;
	else {
		snprintf(dir, sizeof(dir), "%s/pressure", w->proc);
		r->have_psi =
		    read_small(dir, "memory", psi, sizeof(psi), r) == 0 &&
		    memory_parse_psi(psi, &r->psi_some, &r->psi_full) == 0;
	}
	return r->source == MEMORY_NONE && !r->have_psi ? -1 : 0;
}

int memory_policy_on(const struct memory_policy *p)
{
	return p->bytes != 0 || p->pct != 0 || p->psi != 0;
}

enum memory_trigger memory_check(struct memory_state *s,
    const struct memory_policy *p, const struct memory_reading *r)
{
	unsigned psi = p->psi_full ? r->psi_full : r->psi_some;
	uint64_t t = 0;

	s->have = 1;
	s->last = *r;
	if (r->source != MEMORY_NONE && p->pct != 0)
		t = r->limit / 100 * p->pct + r->limit % 100 * p->pct / 100;
	else if (p->bytes != 0)
		t = p->bytes;
	s->threshold = t;
	/* Hysteresis: back below 95 % of the threshold re-arms usage; PSI's
	 * avg10 decays over tens of seconds, so half of its threshold. */
	if (t != 0 && r->source != MEMORY_NONE && r->usage < t - t / 20)
		s->fired_usage = 0;
	if (p->psi != 0 && r->have_psi && psi < p->psi / 2)
		s->fired_psi = 0;
	if (s->asking)
		return MEMORY_NONE;
	if (t != 0 && r->source != MEMORY_NONE && r->usage >= t &&
	    !s->fired_usage)
		s->pending = r->source;
	else if (p->psi != 0 && r->have_psi && psi >= p->psi && !s->fired_psi)
		s->pending = MEMORY_PSI;
	else
		return MEMORY_NONE;
	s->asking = 1;
	return s->pending;
}

void memory_dumped(struct memory_state *s, int ok)
{
	if (!s->asking)
		return;
	s->asking = 0;
	if (!ok)
		return;
	if (s->pending == MEMORY_PSI)
		s->fired_psi = 1;
	else
		s->fired_usage = 1;
	if ((unsigned)s->pending < MEMORY_TRIGGERS)
		s->dumps[s->pending]++;
}

void memory_rearm(struct memory_state *s)
{
	s->fired_usage = s->fired_psi = 0;
}

int memory_policy_same(const struct memory_policy *a,
    const struct memory_policy *b)
{
	return a->bytes == b->bytes && a->pct == b->pct && a->psi == b->psi &&
	    a->psi_full == b->psi_full;
}

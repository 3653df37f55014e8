/*
 * The words themselves. Each handler writes a complete reply to @p out and
 * returns PROTO_OK or PROTO_ERROR (an `error: ` line was written).
 */
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"

/* jemalloc's "select every arena" index, as in <jemalloc/jemalloc.h>. */
#define ARENAS_ALL_PURGE "arena.4096.purge"

#define PROF_HINT                                                              \
	"start it with MALLOC_CONF=prof:true,prof_active:false and send "      \
	"jmep to start sampling"

/* Read a bool mallctl; returns 0 or jemalloc's errno. */
static int ctl_bool(struct proto *p, const char *name, bool *v)
{
	size_t len = sizeof(*v);

	return p->ops->mallctl(name, v, &len, NULL, 0);
}

/* Read a size_t mallctl; returns 0 or jemalloc's errno. */
int ctl_size(struct proto *p, const char *name, size_t *v)
{
	size_t len = sizeof(*v);

	return p->ops->mallctl(name, v, &len, NULL, 0);
}

/* Refresh jemalloc's cached statistics; stats.* are stale without it. */
void ctl_epoch(struct proto *p)
{
	uint64_t epoch = 1;
	size_t len = sizeof(epoch);

	(void)p->ops->mallctl("epoch", &epoch, &len, &epoch, len);
}

/*
 * The same, at most once per STATS_MAX_AGE_NS, for words that only read.
 * An epoch merges every arena's statistics under the arenas' locks: ~10 us
 * of the host's CPU here, most of what a mntr costs, and contention with
 * the host's own allocations. A scraper storm (or a benchmark) then pays
 * for one merge a millisecond, not one a request; no reader can tell a
 * snapshot a millisecond old from a new one.
 */
#define STATS_MAX_AGE_NS 1000000L

void ctl_epoch_coalesced(struct proto *p)
{
	struct timespec now;
	long long age;

	clock_gettime(CLOCK_MONOTONIC, &now);
	age = (long long)(now.tv_sec - p->stats_at.tv_sec) * 1000000000LL +
	    (now.tv_nsec - p->stats_at.tv_nsec);
	if (p->stats_fresh && age >= 0 && age < STATS_MAX_AGE_NS)
		return;
	ctl_epoch(p);
	p->stats_at = now;
	p->stats_fresh = 1;
}

/* Seconds since proto_init(). */
static long long uptime(const struct proto *p)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)(now.tv_sec - p->started.tv_sec);
}

/* Human size for one-line replies: "12.1 MiB". */
const char *fmt_bytes(char *buf, size_t len, size_t n)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB",
	    "EiB"};
	double v = (double)n;
	int i = 0;

	while (v >= 1024 && i < 6) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%zu B", n);
	else
		snprintf(buf, len, "%.1f %s", v, unit[i]);
	return buf;
}

/*
 * Is heap profiling usable in this process? If not, say exactly what to
 * set: Keeper answers this case with silence, which nobody can act on.
 */
static int prof_ready(struct proto *p, struct proto_out *out)
{
	bool on = false;
	int e;

	if ((e = ctl_bool(p, "opt.prof", &on)) == ENOENT) {
		out_printf(out, JM4LW_ERROR_PREFIX
		    "this jemalloc was built without heap profiling "
		    "(config.prof is false); run on a jemalloc configured "
		    "with --enable-prof, such as Debian's libjemalloc2\n");
		return -1;
	}
	if (e != 0) {
		out_printf(out, JM4LW_ERROR_PREFIX "cannot read opt.prof: %s\n",
		    strerror(e));
		return -1;
	}
	if (!on) {
		out_printf(out, JM4LW_ERROR_PREFIX
		    "heap profiling is not enabled in this process; " PROF_HINT
		    "\n");
		return -1;
	}
	return 0;
}

/* ruok: the liveness probe, byte-identical to ZooKeeper's. */
static int word_ruok(struct proto *p, struct proto_out *out)
{
	(void)p;
	out_write(out, "imok", 4);
	return PROTO_OK;
}

/* Write "key\tvalue" for a size_t mallctl, or nothing if unavailable. */
static void mntr_size(struct proto *p, struct proto_out *out, const char *key,
    const char *name)
{
	size_t v;

	if (ctl_size(p, name, &v) == 0)
		out_printf(out, "%s\t%zu\n", key, v);
}

/* mntr: ZooKeeper's key<TAB>value shape, for exporters and scripts. */
static int word_mntr(struct proto *p, struct proto_out *out)
{
	const struct proto_stats *st = &p->st;
	bool b;

	ctl_epoch_coalesced(p);
	out_printf(out, "jm4lw_version\t%s\n", JM4LW_VERSION);
	out_printf(out, "jm4lw_uptime_seconds\t%lld\n", uptime(p));
	out_printf(out, "jm4lw_open_connections\t%" PRIu64 "\n",
	    st->conns_open);
	out_printf(out, "jm4lw_connections_total\t%" PRIu64 "\n",
	    st->conns_total);
	out_printf(out, "jm4lw_connections_rejected\t%" PRIu64 "\n",
	    st->conns_rejected);
	out_printf(out, "jm4lw_connections_denied\t%" PRIu64 "\n",
	    st->conns_denied);
	out_printf(out, "jm4lw_words_served\t%" PRIu64 "\n", st->words_served);
	out_printf(out, "jm4lw_words_unknown\t%" PRIu64 "\n",
	    st->words_unknown);
	out_printf(out, "jm4lw_words_refused\t%" PRIu64 "\n",
	    st->words_refused);
	out_printf(out, "jm4lw_dumps_written\t%" PRIu64 "\n",
	    st->dumps_written);
	out_printf(out, "jm4lw_dumps_failed\t%" PRIu64 "\n", st->dumps_failed);
	out_printf(out, "jm4lw_dumps_refused\t%" PRIu64 "\n",
	    st->dumps_refused);
	out_printf(out, "jm4lw_dumps_scheduled\t%" PRIu64 "\n",
	    st->dumps_scheduled);
	out_printf(out, "jm4lw_dumps_deleted\t%" PRIu64 "\n",
	    st->dumps_deleted);
	if (p->last_dump[0] != '\0') {
		char when[32];
		struct tm tm;
		gmtime_r(&p->last_dump_time, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		out_printf(out, "jm4lw_last_dump\t%s\n", p->last_dump);
		out_printf(out, "jm4lw_last_dump_time\t%s\n", when);
	}
	out_printf(out, "jemalloc_version\t%s\n", p->ops->version);
	if (ctl_bool(p, "opt.prof", &b) == 0)
		out_printf(out, "jemalloc_opt_prof\t%s\n", b ? "true" : "false");
	if (ctl_bool(p, "prof.active", &b) == 0)
		out_printf(out, "jemalloc_prof_active\t%s\n",
		    b ? "true" : "false");
	mntr_size(p, out, "jemalloc_lg_prof_sample", "prof.lg_sample");
	mntr_size(p, out, "jemalloc_allocated", "stats.allocated");
	mntr_size(p, out, "jemalloc_active", "stats.active");
	mntr_size(p, out, "jemalloc_metadata", "stats.metadata");
	mntr_size(p, out, "jemalloc_resident", "stats.resident");
	mntr_size(p, out, "jemalloc_mapped", "stats.mapped");
	mntr_size(p, out, "jemalloc_retained", "stats.retained");
	return PROTO_OK;
}

/* srvr: ZooKeeper's "Key: value" summary. */
static int word_srvr(struct proto *p, struct proto_out *out)
{
	const char *prof = "unavailable";
	bool b;

	if (ctl_bool(p, "opt.prof", &b) == 0) {
		prof = "off";
		if (b && ctl_bool(p, "prof.active", &b) == 0)
			prof = b ? "active" : "inactive";
	}
	out_printf(out, "jm4lw version: %s (jemalloc %s)\n", JM4LW_VERSION,
	    p->ops->version);
	out_printf(out, "Uptime: %lld\n", uptime(p));
	out_printf(out, "Connections: %" PRIu64 "\n", p->st.conns_open);
	out_printf(out, "Received: %" PRIu64 "\n", p->st.words_served);
	out_printf(out, "Dumps: %" PRIu64 "\n", p->st.dumps_written);
	out_printf(out, "Profiling: %s\n", prof);
	out_printf(out, "Mode: %s\n", p->mode);
	return PROTO_OK;
}

/* conf: the effective configuration, one key=value a line. */
static int word_conf(struct proto *p, struct proto_out *out)
{
	const struct jm4lw_config *c = p->cfg;

	out_printf(out, "listen=%s\n", c->listen);
	out_printf(out, "allow=%s\n", c->allow);
	out_printf(out, "dump_dir=%s\n", c->dump_dir);
	out_printf(out, "dump_prefix=%s\n", c->dump_prefix);
	out_printf(out, "max_connections=%u\n", c->max_connections);
	out_printf(out, "read_timeout=%u\n", c->read_timeout);
	out_printf(out, "write_timeout=%u\n", c->write_timeout);
	out_printf(out, "allow_from=%s\n", c->allow_from);
	out_printf(out, "dump_min_interval=%u\n", c->dump_min_interval);
	out_printf(out, "dump_min_free=%llu\n", c->dump_min_free);
	out_printf(out, "dump_interval=%u\n", c->dump_interval);
	out_printf(out, "dump_on_growth=%s\n", c->dump_on_growth);
	out_printf(out, "growth_check_interval=%u\n", c->growth_check_interval);
	out_printf(out, "dump_keep=%u\n", c->dump_keep);
	out_printf(out, "dump_max_bytes=%llu\n", c->dump_max_bytes);
	out_printf(out, "prof_reset_lg_sample=%s\n", c->prof_reset_lg_sample);
	return PROTO_OK;
}

/* malloc_stats_print() hands us NUL-terminated pieces. */
static void stats_cb(void *arg, const char *s)
{
	out_write(arg, s, strlen(s));
}

/*
 * jmst: jemalloc's statistics text, whole. malloc_stats_print() refreshes
 * the epoch itself before it reads anything (stats.c, 5.x): one of ours
 * would be a second merge of every arena for nothing.
 */
static int word_jmst(struct proto *p, struct proto_out *out)
{
	p->ops->stats_print(stats_cb, out, NULL);
	return PROTO_OK;
}

/* jmsj: the same as JSON, for scripts; jemalloc ends it without "\n". */
static int word_jmsj(struct proto *p, struct proto_out *out)
{
	p->ops->stats_print(stats_cb, out, "J");
	out_write(out, "\n", 1);
	return PROTO_OK;
}

/* The dump directory as an absolute path without trailing slashes. */
static int dump_dir(const struct proto *p, char *buf, size_t len)
{
	const char *d = p->cfg->dump_dir;
	char cwd[PATH_MAX];
	size_t n;
	int r;

	if (d[0] == '/')
		r = snprintf(buf, len, "%s", d);
	else if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	else
		r = snprintf(buf, len, "%s/%s", cwd, d);
	if (r < 0 || (size_t)r >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (n = strlen(buf); n > 1 && buf[n - 1] == '/'; n--)
		buf[n - 1] = '\0';
	return 0;
}

/*
 * Did jemalloc write the whole profile? It flags a failed write(), but not
 * a short one, which is what a filling disk gives: a cut-off profile that
 * prof.dump calls a success. A whole one ends with the MAPPED_LIBRARIES
 * section (the maps, ending in a newline), and a disk that filled during
 * the dump has no room left after it. The section is last, so the search
 * runs from the end backwards: a few pages read, not the whole profile.
 */
#define TAIL_CHUNK PROTO_DUMP_TAIL_CHUNK

static int dump_whole(int fd, const char *dir)
{
	static const char mark[] = "\nMAPPED_LIBRARIES:\n";
	const size_t mlen = sizeof(mark) - 1;
	char buf[TAIL_CHUNK + sizeof(mark)];
	struct statvfs fs;
	struct stat sb;
	off_t end, start;
	size_t want, got;
	ssize_t r;
	int found = 0;

	if (fstat(fd, &sb) == -1 || sb.st_size == 0)
		return 0;
	/* Windows [start, end + mlen - 1), overlapping so no mark is split. */
	for (end = sb.st_size; end > 0 && !found; end = start) {
		start = end > TAIL_CHUNK ? end - TAIL_CHUNK : 0;
		want = (size_t)(end - start) + mlen - 1;
		if ((off_t)want > sb.st_size - start)
			want = (size_t)(sb.st_size - start);
		for (got = 0; got < want; got += (size_t)r) {
			r = pread(fd, buf + got, want - got,
			    start + (off_t)got);
			if (r == -1 && errno == EINTR) {
				r = 0;
				continue;
			}
			if (r <= 0)
				return 0;
		}
		if (end == sb.st_size && buf[got - 1] != '\n')
			return 0; /* cut inside a line */
		found = memmem(buf, got, mark, mlen) != NULL;
	}
	return found && !(statvfs(dir, &fs) == 0 && fs.f_bavail == 0);
}

/* Count and report a failed dump. */
static int dump_failed(struct proto *p, struct proto_out *out,
    const char *dir, const char *why)
{
	p->st.dumps_failed++;
	out_printf(out, JM4LW_ERROR_PREFIX "heap profile dump to %s failed: %s\n",
	    dir, why);
	return PROTO_ERROR;
}

/* Seconds from @p a to @p b. */
static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	    (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/*
 * dump_min_interval: a dump costs the process a pause and the disk a file,
 * so a storm of jmfp (a script in a loop, many operators) gets one dump
 * and then a line saying when the next one may come.
 */
static int dump_too_soon(struct proto *p, struct proto_out *out,
    int scheduled)
{
	struct timespec now;
	double ago, min = (double)p->cfg->dump_min_interval;

	if (p->cfg->dump_min_interval == 0 || !p->dumped)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ago = elapsed(&p->last_dump_at, &now);
	/*
	 * A timer fires one interval after its last tick, and the last dump
	 * started a little after that tick: let a schedule of exactly
	 * dump_min_interval through.
	 */
	if (scheduled)
		min *= 0.9;
	if (ago >= min)
		return 0;
	p->st.dumps_refused++;
	out_printf(out, JM4LW_ERROR_PREFIX "%s refused: the last dump was "
	    "%.1f s ago and dump_min_interval is %u s; retry in %.1f s\n",
	    scheduled ? "dump" : "jmfp", ago, p->cfg->dump_min_interval,
	    (double)p->cfg->dump_min_interval - ago + 0.05);
	return 1;
}

/* dump_min_free: never be the one that fills the disk. */
static int dump_no_room(struct proto *p, struct proto_out *out,
    const char *dir)
{
	unsigned long long avail;
	struct statvfs fs;
	char b1[32], b2[32];

	if (p->cfg->dump_min_free == 0 || statvfs(dir, &fs) == -1)
		return 0; /* the dump itself will say what is wrong */
	avail = (unsigned long long)fs.f_bavail * fs.f_frsize;
	if (avail >= p->cfg->dump_min_free)
		return 0;
	p->st.dumps_refused++;
	out_printf(out, JM4LW_ERROR_PREFIX "heap profile dump to %s refused: "
	    "%s free, dump_min_free is %s\n", dir,
	    fmt_bytes(b1, sizeof(b1), (size_t)avail),
	    fmt_bytes(b2, sizeof(b2), (size_t)p->cfg->dump_min_free));
	return 1;
}

/*
 * The staging directory for dumps into @p dir: the one this process made
 * there, if it still is a 0700 directory of ours, or a new one
 * "<dir>/.<prefix>.<pid>.XXXXXX" (and the stale ones of processes that
 * are gone, swept first). -1 and errno if none can be made.
 */
static int stage_ready(struct proto *p, const char *dir)
{
	size_t n = strlen(dir);
	struct stat sb;
	int e;

	if (p->stage[0] != '\0' && p->stage_pid == (long)getpid() &&
	    strncmp(p->stage, dir, n) == 0 && p->stage[n] == '/' &&
	    strchr(p->stage + n + 1, '/') == NULL &&
	    lstat(p->stage, &sb) == 0 && S_ISDIR(sb.st_mode) &&
	    sb.st_uid == geteuid() && (sb.st_mode & 077) == 0)
		return 0;
	proto_fini(p); /* another dump_dir now, or it was removed */
	dumps_sweep_stages(p, dir);
	snprintf(p->stage, sizeof(p->stage), "%s/.%s.%ld.XXXXXX", dir,
	    p->cfg->dump_prefix, (long)getpid());
	if (mkdtemp(p->stage) == NULL) {
		e = errno;
		p->stage[0] = '\0';
		errno = e;
		return -1;
	}
	p->stage_pid = (long)getpid();
	return 0;
}

/*
 * jmfp: prof.dump to a file in the staging directory, then rename it into
 * the dump directory, so no reader ever sees half a profile (rename replaces a planted symlink
 * at the final name rather than following it). The name is built here from the
 * configuration and our pid, never from anything the peer sent.
 */
int proto_dump(struct proto *p, struct proto_out *out, int scheduled)
{
	char dir[PATH_MAX], real[PATH_MAX];
	char path[PATH_MAX + 128], tmp[sizeof(p->stage) + 128];
	const char *tp = tmp;
	struct stat sb;
	unsigned long seq;
	long pid = (long)getpid();
	int e, fd, tries, whole;

	if (prof_ready(p, out) == -1 || dump_too_soon(p, out, scheduled))
		return PROTO_ERROR;
	if (dump_dir(p, dir, sizeof(dir)) == -1)
		return dump_failed(p, out, p->cfg->dump_dir, strerror(errno));
	if (stat(dir, &sb) == -1)
		return dump_failed(p, out, dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return dump_failed(p, out, dir, strerror(ENOTDIR));
	/* The canonical name in the reply: no "./" or ".." in it. */
	if (realpath(dir, real) != NULL)
		memcpy(dir, real, sizeof(dir));
	if (dump_no_room(p, out, dir))
		return PROTO_ERROR;

	/* Skip names an earlier process with our pid left behind. */
	for (tries = 0;; tries++) {
		seq = p->dump_seq++;
		snprintf(path, sizeof(path), "%s/%s.%ld.%lu.heap", dir,
		    p->cfg->dump_prefix, pid, seq);
		if (lstat(path, &sb) == -1 && errno == ENOENT)
			break;
		if (tries == 1000)
			return dump_failed(p, out, dir,
			    "no free file name after 1000 tries");
	}
	/*
	 * jemalloc opens the profile with creat(), which follows symlinks: at
	 * a guessable name in a shared directory like /tmp, another user could
	 * point our dump at a file of their choosing, or open the 0644 file
	 * creat() makes and read the profile. So jemalloc writes in our
	 * staging directory (mkdtemp, 0700, kept for the process's next
	 * dumps), where nobody else can enter. The file is new there: an
	 * empty one made first with O_EXCL would be truncated by creat(),
	 * and a truncate makes ext4 (auto_da_alloc) start writeback of the
	 * whole profile in close(); a fresh directory per dump would cost an
	 * rmdir, 100-400 us on ext4 here. Both were measured (BENCHMARKS.md).
	 */
	if (stage_ready(p, dir) == -1)
		return dump_failed(p, out, dir, strerror(errno));
	snprintf(tmp, sizeof(tmp), "%s/%s.%ld.%lu.heap", p->stage,
	    p->cfg->dump_prefix, pid, seq);

	clock_gettime(CLOCK_MONOTONIC, &p->last_dump_at);
	p->dumped = 1;
	e = p->ops->mallctl("prof.dump", NULL, NULL, &tp, sizeof(tp));
	if (e != 0) {
		/* jemalloc says only EFAULT; ask the directory why. */
		int why = e;
		(void)unlink(tmp);
		if (e == EFAULT)
			why = access(dir, W_OK | X_OK) == -1 ? errno : 0;
		return dump_failed(p, out, dir,
		    why != 0 ? strerror(why)
			     : "jemalloc could not write the profile "
			       "(prof.dump returned EFAULT)");
	}
	/* Profiles show addresses and the maps: for our user only. */
	fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	whole = fd != -1 && dump_whole(fd, dir);
	e = fd == -1 ? errno : fchmod(fd, 0600) == -1 ? errno : 0;
	if (fd != -1)
		close(fd);
	if (!whole) {
		(void)unlink(tmp);
		return dump_failed(p, out, dir, "the profile was cut short "
		    "(is the disk full?)");
	}
	if (e != 0 || rename(tmp, path) == -1) {
		e = e != 0 ? e : errno;
		(void)unlink(tmp);
		return dump_failed(p, out, dir, strerror(e));
	}
	p->st.dumps_written++;
	snprintf(p->last_dump, sizeof(p->last_dump), "%s", path);
	p->last_dump_time = time(NULL);
	/* dump_on_growth's new baseline; an epoch costs tens of us under
	 * load, so only when growth is watched (a later reload that turns
	 * it on takes its first look as the baseline). */
	if (strcmp(p->cfg->dump_on_growth, "0") != 0 &&
	    p->cfg->dump_on_growth[0] != '\0') {
		ctl_epoch(p);
		p->alloc_known = ctl_size(p, "stats.allocated",
				     &p->alloc_at_dump) == 0;
	} else
		p->alloc_known = 0; /* an older baseline predates this dump */
	out_printf(out, "%s\n", path);
	dumps_retain(p, dir, path);
	return PROTO_OK;
}

/* jmfp: a heap profile now; the reply is its path. */
static int word_jmfp(struct proto *p, struct proto_out *out)
{
	return proto_dump(p, out, 0);
}

/* jmls: the dumps in dump_dir, newest first. */
static int word_jmls(struct proto *p, struct proto_out *out)
{
	return dumps_list(p, out);
}

/*
 * jmrs: prof.reset — forget the samples so far and start a fresh profile,
 * so an operator can profile a window: jmrs, wait, jmfp.
 */
static int word_jmrs(struct proto *p, struct proto_out *out)
{
	const char *want = p->cfg->prof_reset_lg_sample;
	size_t lg = 0;
	int e;

	if (prof_ready(p, out) == -1)
		return PROTO_ERROR;
	if (strcmp(want, "keep") == 0) {
		if ((e = ctl_size(p, "prof.lg_sample", &lg)) != 0) {
			out_printf(out, JM4LW_ERROR_PREFIX
			    "cannot read prof.lg_sample: %s\n", strerror(e));
			return PROTO_ERROR;
		}
	} else
		lg = (size_t)atoi(want);
	/* Passing the rate keeps it: prof.reset with none resets it to
	 * opt.lg_prof_sample. */
	e = p->ops->mallctl("prof.reset", NULL, NULL, &lg, sizeof(lg));
	if (e != 0) {
		out_printf(out, JM4LW_ERROR_PREFIX "prof.reset failed: %s\n",
		    strerror(e));
		return PROTO_ERROR;
	}
	out_printf(out, "ok: profile reset (lg_prof_sample=%zu)\n", lg);
	return PROTO_OK;
}

/* jmep/jmdp: switch sampling, and say what it was. */
static int set_active(struct proto *p, struct proto_out *out, bool on)
{
	bool old = false, nv = on;
	size_t len = sizeof(old);
	int e;

	if (prof_ready(p, out) == -1)
		return PROTO_ERROR;
	e = p->ops->mallctl("prof.active", &old, &len, &nv, sizeof(nv));
	if (e != 0) {
		out_printf(out, JM4LW_ERROR_PREFIX "cannot set prof.active: %s\n",
		    strerror(e));
		return PROTO_ERROR;
	}
	out_printf(out, "ok: profiling %s (prof.active=%s, was %s)\n",
	    on ? "active" : "inactive", on ? "true" : "false",
	    old ? "true" : "false");
	return PROTO_OK;
}

/* jmep: start sampling allocations. */
static int word_jmep(struct proto *p, struct proto_out *out)
{
	return set_active(p, out, true);
}

/* jmdp: stop sampling allocations. */
static int word_jmdp(struct proto *p, struct proto_out *out)
{
	return set_active(p, out, false);
}

/* jmpg: give unused dirty pages of every arena back to the kernel. */
static int word_jmpg(struct proto *p, struct proto_out *out)
{
	size_t before = 0, after = 0;
	char b1[32], b2[32];
	int e, known;

	ctl_epoch(p);
	known = ctl_size(p, "stats.resident", &before) == 0;
	if ((e = p->ops->mallctl(ARENAS_ALL_PURGE, NULL, NULL, NULL, 0)) != 0) {
		out_printf(out, JM4LW_ERROR_PREFIX "purge failed: %s\n",
		    strerror(e));
		return PROTO_ERROR;
	}
	ctl_epoch(p);
	if (known && ctl_size(p, "stats.resident", &after) == 0)
		out_printf(out, "ok: purged all arenas (resident %s -> %s)\n",
		    fmt_bytes(b1, sizeof(b1), before),
		    fmt_bytes(b2, sizeof(b2), after));
	else /* no stats in this jemalloc: say nothing false */
		out_printf(out, "ok: purged all arenas\n");
	return PROTO_OK;
}

/* The command table: one line a word. */
const struct proto_word proto_words[] = {
	{.name = "ruok", .fn = word_ruok, .help = "liveness: imok"},
	{.name = "mntr", .fn = word_mntr, .help = "figures, key<TAB>value"},
	{.name = "srvr", .fn = word_srvr, .help = "server summary"},
	{.name = "conf", .fn = word_conf, .help = "effective configuration"},
	{.name = "jmst", .fn = word_jmst, .help = "jemalloc statistics"},
	{.name = "jmsj", .fn = word_jmsj, .help = "jemalloc statistics, JSON"},
	{.name = "jmfp",
	    .fn = word_jmfp,
	    .flags = PROTO_F_MUTATES,
	    .help = "dump a heap profile"},
	{.name = "jmep",
	    .fn = word_jmep,
	    .flags = PROTO_F_MUTATES,
	    .help = "enable profiling (prof.active)"},
	{.name = "jmdp",
	    .fn = word_jmdp,
	    .flags = PROTO_F_MUTATES,
	    .help = "disable profiling"},
	{.name = "jmpg",
	    .fn = word_jmpg,
	    .flags = PROTO_F_MUTATES,
	    .help = "purge every arena"},
	{.name = "jmls", .fn = word_jmls, .help = "the dumps in dump_dir"},
	{.name = "jmrs",
	    .fn = word_jmrs,
	    .flags = PROTO_F_MUTATES,
	    .help = "reset the profile (prof.reset)"},
	{.name = NULL},
};

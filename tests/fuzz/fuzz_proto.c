/*
 * libFuzzer target: the framing and dispatch of one connection's bytes,
 * and the engine under the words (core/), with the allocator faked
 * (tests/unit/fake_jemalloc.c, shared with the unit tests). A jmfp comes
 * back from dispatch as a job and runs at once, as the module runs it
 * when it has no worker thread.
 *
 * The input is what a peer sends, byte for byte. The server looks at the
 * first 4 bytes only, so the bytes after them (c[0], c[1], ..., 0 when
 * absent) choose the world the word runs in. A bare word ("jmfp") runs on
 * the happy path: everything succeeds, profiling on, allow = *.
 *
 *   c[0]      where the server's two reads split (mod size + 1)
 *   c[1]      allow list: bits 0-1 mode (* / readonly / list /
 *             list+readonly), 2-4 separator (a comma with blanks, or
 *             two commas), 5 decoy items, 6 leading and trailing
 *             separators, 7 "*" inside the list; the configuration must
 *             accept exactly the lists a user could write
 *   c[2..3]   list items: item i is listed when bit i % 16 is set; items
 *             are hwid hbin herr, the fuzzer-named word, then proto_words
 *   c[4]      errno (% 6: none, ENOENT, EFAULT, EPERM, EINVAL, EAGAIN)
 *             and the mallctl it hits (/ 6 % NTARGETS; 0: every one)
 *   c[5]      bit 0 opt.prof false, 1 prof.active on, 2 host mntr,
 *             3-5 dump_dir variant, 6 a second connection, 7
 *             dump_min_interval 3600 (else 0)
 *   c[6]      bits 0-1 dump_min_free, 2 fuzzer-named host word, 3-7
 *             the built-in hbin asks for (< 6: a bad name)
 *   c[7]      hwid's printf width (* 1000); stats_print's pieces (% 64)
 *   c[8..11]  the name of the fuzzer-named host word
 *   c[12]     bits 0-1 prof_reset_lg_sample, 2 long herr text, 3-4
 *             dump_keep, 5 dump_max_bytes = 1, 6 dump_dir is P (below),
 *             7 core_growth_due() afterwards
 *   c[13]     dump_on_growth (% 8)
 *   c[14]     what prof.dump writes at the name core gave it: bits 0-1
 *             a whole profile / an empty file / one cut short / no final
 *             newline; bits 2-7 * 165 bytes of samples before the end
 *   c[16..19] the second connection's word (else the same word); c[16..]
 *             is also herr's text
 *
 * Every violated invariant is an abort(). A fake prof.dump writes only the
 * name core gave it, in the dumper's staging directory
 * (.<prefix>.<pid>.XXXXXX, 0700, empty between words, gone after
 * dumper_fini): the only files are that one and the final names, in one
 * of two directories made once under a mkdtemp root: D, empty, or P, where
 * old dumps and foreign files were planted once and are put back when
 * retention deletes them. Whatever core creates is removed after every
 * word, and everything at exit.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "answer.h"
#include "config.h"
#include "config_struct.h"
#include "core.h"
#include "dumper.h"
#include "fake_jemalloc.h"
#include "jm4lw.h"
#include "job.h"
#include "proto.h"
#include "result.h"
#include "schedule.h"

/* ZooKeeper's wording, spelled out here rather than taken from the header. */
#define WHITELIST_TAIL " is not executed because it is not in the whitelist.\n"
#define UNKNOWN_HEAD "error: unknown word \""

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cleanup(void);

/* Where a check failed; the input that got here is the crash artifact. */
#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_proto: %s:%d: %s\n", __FILE__,   \
			    __LINE__, #cond);                                  \
			cleanup();                                             \
			abort();                                               \
		}                                                              \
	} while (0)

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Made once: R (root), the dump directories D = R/d (empty) and P = R/p
 * (planted), and F = R/f (a file). Per dump directory: */
static char root[PATH_MAX], dfile[PATH_MAX];
static struct base {
	char dir[PATH_MAX];  /* R/d or R/p */
	char real[PATH_MAX]; /* its realpath: replies name it */
	char lng[4096];      /* dir + "/." ... just under 4 KiB */
	char rel[PATH_MAX];  /* dir relative to the working directory */
} bases[2];
static const struct base *B; /* this input's */
static char long_prefix[64]; /* 63 bytes: the longest dump_prefix */
static long self_pid;
static bool verbose; /* FUZZ_PROTO_VERBOSE=1: print every reply */

static struct jm4lw_config base_cfg, cfg;
static struct core core;
static struct dumper dumper;
static struct proto P;
static struct dump_result D; /* the last jmfp job's */

/* Config values we choose from; LLVMFuzzerInitialize checks config.c
 * accepts each, so the fuzzer only builds configurations a user could. */
static const char *const lg_samples[] = {"keep", "0", "19", "62"};
static const char *const growths[] = {"0", "1%", "50%", "10000%", "1", "1K",
    "512M", "16T"};
static const unsigned long long min_frees[] = {0, 0, 1, ~0ULL};

/* The world of one input, decoded from the bytes after the word. */
static struct world {
	uint8_t c[16];
	const char *hbin_target;
	int hwid_width;
	const uint8_t *text; /* herr's text */
	size_t textlen;
	int herr_pad;
	bool plant;      /* dump_dir is P, not D */
	bool dump_whole; /* the last prof.dump wrote a whole profile */
	bool hbin_ran,
	    hbin_known; /* hbin's handler ran; its target is built in */
	int hbin_rv;
} W;

/* A reply collected in memory: a static buffer, no per-input malloc. */
static struct {
	char buf[1 << 20];
	size_t len;
} R;

/* struct out callback: append to R. */
static void collect(void *arg, const void *buf, size_t len)
{
	(void)arg;
	CHECK(len <= sizeof(R.buf) - R.len);
	memcpy(R.buf + R.len, buf, len);
	R.len += len;
}

/* core's log: one line, whatever it is about. */
static void fuzz_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	CHECK(msg != NULL && strchr(msg, '\n') == NULL);
}

/* The mallctl names a failure can target (index 0: every name; a name
 * ending in "." every name it starts). */
static const char *const fail_targets[] = {
    "*",
    "opt.prof",
    "prof.active",
    "prof.dump",
    "epoch",
    "stats.",
    "arena.4096.purge",
    "prof.lg_sample",
    "stats.resident",
    "prof.reset",
    "stats.allocated",
};
#define NTARGETS NELEM(fail_targets)

static const int fail_errnos[] = {0, ENOENT, EFAULT, EPERM, EINVAL, EAGAIN};

/* The fake allocator found core calling it wrongly: this input crashes. */
static void fake_broken(const char *file, int line, const char *what)
{
	fprintf(stderr, "fuzz_proto: fake_jemalloc %s:%d: %s\n", file, line,
	    what);
	cleanup();
	abort();
}

/* The profile the fake prof.dump writes, in pieces. */
static const char prof_head[] = "heap_v2/524288\n"
                                "  t*: 1: 4096 [0: 0]\n";
static const char prof_sample[] = "@ 0x1 0x2\n  t*: 1: 4096 [0: 0]\n";
static const char prof_tail[] = "\nMAPPED_LIBRARIES:\n"
                                "5555-5556 r-xp 00000000 00:00 0 /bin/fake\n";

/*
 * prof.dump's hook: the fake checked that @p path is our memfd, or new
 * and directly in the dumper's 0700 staging directory; that directory
 * must be in this input's dump directory. Fill the file with what c[14] says.
 */
static int write_profile(FILE *f, const char *path)
{
	static char buf[sizeof(prof_head) + 64 * 5 * sizeof(prof_sample) +
	    sizeof(prof_tail)];
	const char *s = dumper.stage;
	size_t n = strlen(B->real), i, len = 0;
	int mode = W.c[14] & 3;

	/* Into our memfd (the fake checked it is one), or where there is
	 * none, in the staging directory. */
	CHECK(fake.dump_memfd ||
	    (strncmp(path, B->real, n) == 0 && path[n] == '/' &&
	        path[n + 1] == '.'));
	CHECK(strncmp(s, B->real, n) == 0 && s[n] == '/' &&
	    strchr(s + n + 1, '/') == NULL);
	W.dump_whole = mode == 0;
	if (mode == 1)
		return 0; /* an empty file */
#define PUT(s, n)                                                              \
	do {                                                                   \
		memcpy(buf + len, s, n);                                       \
		len += n;                                                      \
	} while (0)
	PUT(prof_head, sizeof(prof_head) - 1);
	for (i = 0; i < (size_t)(W.c[14] >> 2) * 5; i++)
		PUT(prof_sample, sizeof(prof_sample) - 1);
	if (mode != 2)
		PUT(prof_tail, sizeof(prof_tail) - 1 - (mode == 3));
#undef PUT
	CHECK(fwrite(buf, 1, len, f) == len);
	return 0;
}

/* What we believe the host word table holds, to predict dispatch. */
static struct model_word {
	char name[5];
	int flags;
	jm4lw_word_fn fn;
} model[8];
static int nmodel;

/* Add a host word to proto and to the model; check validity agrees. */
static void host_add(const char name[5], jm4lw_word_fn fn, int flags)
{
	bool valid = name[4] == '\0';
	int i;

	for (i = 0; i < 4; i++) {
		unsigned char ch = (unsigned char)name[i];
		if (ch <= ' ' || ch > '~' || ch == ',')
			valid = false;
	}
	CHECK((proto_add_word(&P, name, fn, NULL, flags) == 0) == valid);
	if (!valid)
		return;
	for (i = 0; i < nmodel; i++)
		if (memcmp(model[i].name, name, 4) == 0)
			break;
	CHECK(i < (int)NELEM(model));
	memcpy(model[i].name, name, 5);
	model[i].flags = flags & JM4LW_WORD_MUTATES;
	model[i].fn = fn;
	if (i == nmodel)
		nmodel++;
}

/* The model's host word named @p w, or NULL. */
static const struct model_word *model_host(const char w[4])
{
	int i;

	for (i = 0; i < nmodel; i++)
		if (memcmp(model[i].name, w, 4) == 0)
			return &model[i];
	return NULL;
}

/* hwid: a host reply longer than any stack buffer. */
static int host_hwid(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	jm4lw_reply_printf(r, "%*s\n", W.hwid_width, "w");
	return 0;
}

/* hbin: a host word built on a built-in's reply (or on a bad name). */
static int host_hbin(struct jm4lw_reply *r, void *arg)
{
	const char *t = W.hbin_target;
	bool known = t != NULL && strlen(t) == 4 && proto_lookup(t) != NULL;
	int rv;

	(void)arg;
	/* A host word's reply is held until the handler returns, so what
	 * the built-in wrote is checked after dispatch (check_hbin). */
	rv = jm4lw_reply_builtin(r, t);
	CHECK(rv == 0 || rv == -1);
	W.hbin_ran = true;
	W.hbin_known = known;
	W.hbin_rv = rv;
	if (!known) {
		CHECK(rv == -1);
		return jm4lw_reply_error(r, "hbin: %s is not built in",
		    t != NULL ? t : "(null)");
	}
	if (rv == 0 && strcmp(t, "ruok") == 0)
		jm4lw_reply_write(r, "\n", 1);
	return rv;
}

/* What hbin's peer got: for a name not built in, our error line alone
 * (reply_builtin wrote nothing); else the built-in's reply, or its own
 * error line when it failed. */
static void check_hbin(void)
{
	char want[64];
	const char *t = W.hbin_target;

	CHECK(W.hbin_ran);
	if (!W.hbin_known) {
		snprintf(want, sizeof(want),
		    "error: hbin: %s is not built in\n",
		    t != NULL ? t : "(null)");
		CHECK(R.len == strlen(want) && memcmp(R.buf, want, R.len) == 0);
		return;
	}
	if (W.hbin_rv == 0 && strcmp(t, "ruok") == 0)
		CHECK(R.len == 5 && memcmp(R.buf, "imok\n", 5) == 0);
	else if (W.hbin_rv == -1)
		CHECK(R.len > 7 && memcmp(R.buf, "error: ", 7) == 0);
	else
		CHECK(R.len > 0 && R.buf[R.len - 1] == '\n');
}

/* herr: a host error with newlines in it, and peer bytes as text. */
static int host_herr(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	return jm4lw_reply_error(r, "host failed\nbecause:\r\n%.*s%*s\nend",
	    (int)W.textlen, (const char *)W.text, W.herr_pad, "");
}

/* The host's own mntr: a figure of its own, then ours. */
static int host_mntr(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	jm4lw_reply_printf(r, "host_requests\t%d\n", 42);
	return jm4lw_reply_builtin(r, "mntr");
}

/* The fuzzer-named host word. */
static int host_dyn(struct jm4lw_reply *r, void *arg)
{
	(void)arg;
	jm4lw_reply_printf(r, "dyn ok\n");
	return 0;
}

/* Items the allow list can name: host words, then every built-in. */
static const char *list_items[4 + 64];
static int nitems;
static char dyn_name[5];

/* Allow list decoys: none of these may allow anything but a host word
 * named exactly like one (RUOK), and all but RUOK make the list one the
 * configuration refuses. */
static const char *const decoys[] = {"ruokk", "jmf", "**", "readonlyx", "*x",
    "READONLY", "RUOK"};

/* The allow list of this input, and the model of what it allows. */
static struct {
	bool star, ro, decoys;
	uint16_t mask;
	bool valid; /* config_check_module() must accept it */
} A;

/* Is list item @p i in this input's list? */
static bool item_listed(int i)
{
	return list_items[i] != NULL && (A.mask & (1u << (i % 16)));
}

/* Build cfg.allow from c[1..3]. */
static void build_allow(void)
{
	/* Items are separated by commas only; blanks around them are
	 * trimmed. Two commas make an empty entry. */
	static const char *const seps[] = {",", ", ", " ,", ",\t", ",,", " ,\t",
	    " , ", "\t,\t"};
	const char *sep = seps[(W.c[1] >> 2) & 7];
	char *s = cfg.allow;
	size_t left = sizeof(cfg.allow), n, i;
	int mode = W.c[1] & 3, items = 0;
	bool first = true;

	memset(&A, 0, sizeof(A));
#define ADD(item, is_item)                                                     \
	do {                                                                   \
		n = (size_t)snprintf(s, left, "%s%s", first ? "" : sep, item); \
		CHECK(n < left);                                               \
		s += n;                                                        \
		left -= n;                                                     \
		first = false;                                                 \
		items += (is_item);                                            \
	} while (0)
	cfg.allow[0] = '\0';
	if (W.c[1] & 0x40)
		ADD(sep, 0); /* an empty entry */
	if (mode == 0) {
		ADD("*", 1);
		A.star = true;
	}
	if (mode == 1 || mode == 3) {
		ADD("readonly", 1);
		A.ro = true;
	}
	if (mode >= 2) {
		A.mask = (uint16_t)(W.c[2] | W.c[3] << 8);
		for (i = 0; i < (size_t)nitems; i++)
			if (item_listed((int)i))
				ADD(list_items[i], 1);
		if (W.c[1] & 0x80) {
			ADD("*", 1);
			A.star = true;
		}
	}
	if (W.c[1] & 0x20) {
		for (i = 0; i < NELEM(decoys); i++)
			ADD(decoys[i], 1);
		A.decoys = true;
	}
	if (W.c[1] & 0x40)
		ADD(sep, 0); /* an empty entry */
#undef ADD
	/* What a user could configure: items, no empty entry, no decoy
	 * but a host word's name, "*" alone. */
	A.valid = items > 0 && !(W.c[1] & 0x40) &&
	    !(items > 1 && strcmp(sep, ",,") == 0) && !A.decoys &&
	    !(A.star && items > 1);
}

/* The module takes the allow list exactly when the model says a user
 * could configure it (checked on the defaults, so only allow decides). */
static void check_allow_valid(void)
{
	static struct jm4lw_config probe;
	char err[256];

	probe = base_cfg;
	memcpy(probe.allow, cfg.allow, sizeof(probe.allow));
	CHECK((config_check_module(&probe, err, sizeof(err)) == 0) == A.valid);
}

/* Does the model's allow list let @p w (with @p flags) through? */
static bool model_allowed(const char w[4], int flags)
{
	int i;

	if (A.star || (A.ro && !(flags & JM4LW_WORD_MUTATES)))
		return true;
	for (i = 0; i < nitems; i++)
		if (item_listed(i) && strlen(list_items[i]) == 4 &&
		    memcmp(list_items[i], w, 4) == 0)
			return true;
	for (i = 0; A.decoys && i < (int)NELEM(decoys); i++)
		if (strlen(decoys[i]) == 4 && memcmp(decoys[i], w, 4) == 0)
			return true;
	return false;
}

/* Set the dump directory, limits and retention from c[5], c[6], c[12]. */
static void build_dump(void)
{
	static const unsigned keeps[] = {0, 1, 2, 3};

	snprintf(cfg.dump_prefix, sizeof(cfg.dump_prefix), "%s",
	    base_cfg.dump_prefix);
	B = &bases[W.plant];
	switch ((W.c[5] >> 3) & 7) {
	case 1:
		snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s///", B->dir);
		break;
	case 2:
		snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s/missing",
		    root);
		break;
	case 3:
		snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", dfile);
		break;
	case 4:
		memcpy(cfg.dump_dir, B->lng, sizeof(B->lng));
		break;
	case 5:
		snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", B->dir);
		memcpy(cfg.dump_prefix, long_prefix, sizeof(long_prefix));
		break;
	case 6:
		snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", B->rel);
		break;
	case 7:
		/* One path component longer than NAME_MAX. */
		snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s/%0300d",
		    B->dir, 0);
		break;
	default:
		snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", B->dir);
		break;
	}
	cfg.dump_min_interval = (W.c[5] & 0x80) ? 3600 : 0;
	cfg.dump_min_free = min_frees[W.c[6] & 3];
	CHECK(jm4lw_config_set(&cfg, "prof_reset_lg_sample",
	          lg_samples[W.c[12] & 3], NULL, 0) == 0);
	cfg.dump_keep = keeps[(W.c[12] >> 3) & 3];
	cfg.dump_max_bytes = (W.c[12] & 0x20) ? 1 : 0;
	CHECK(jm4lw_config_set(&cfg, "dump_on_growth",
	          growths[W.c[13] % NELEM(growths)], NULL, 0) == 0);
}

/*
 * What P holds, for each of the two prefixes we use: two old dumps (any
 * pid is ours) and things retention must never delete and jmls never
 * list: a directory and a symlink with our names, a temporary file, near
 * misses; and a file of a third prefix. Each prefix's dumps are the other
 * prefix's foreign files.
 */
enum { K_OLD, K_NEWER, K_DIR, K_LINK, K_TMP, K_NEAR1, K_NEAR2, K_N };
static const struct {
	const char *head, *tail; /* the name: head, the prefix, tail */
} plant_fmt[K_N] = {
    [K_OLD] = {"", ".1.1.heap"},   /* 10 bytes, from 2001 */
    [K_NEWER] = {"", ".1.2.heap"}, /* 20 bytes, from 2096: newer than
                                    * proto's own, which stays anyway */
    [K_DIR] = {"", ".1.3.heap"},
    [K_LINK] = {"", ".1.4.heap"}, /* to F */
    [K_TMP] = {".", ".1.5.heap.Ab12Cd"},
    [K_NEAR1] = {"", ".x.1.heap"},
    [K_NEAR2] = {"", ".1.6.heap.bak"},
};
#define PLANT_OURS 2 /* K_OLD and K_NEWER */
#define NPLANT (2 * K_N + 1)
static struct {
	char name[128];
	int prefix; /* 0 default, 1 long, -1 neither */
	int kind;
} plants[NPLANT];

/* Create planted entry @p i in P. */
static void plant_one(int i)
{
	char path[PATH_MAX + 256];
	struct timespec ts[2];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", bases[1].dir, plants[i].name);
	switch (plants[i].kind) {
	case K_DIR:
		CHECK(mkdir(path, 0700) == 0);
		break;
	case K_LINK:
		CHECK(symlink(dfile, path) == 0);
		break;
	default:
		CHECK(
		    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) != -1);
		CHECK(write(fd, "0123456789abcdefghij",
		          plants[i].kind == K_NEWER ? 20 : 10) > 0);
		ts[0].tv_sec = ts[1].tv_sec =
		    (plants[i].kind == K_NEWER ? 4000000000 : 1000000000) + i;
		ts[0].tv_nsec = ts[1].tv_nsec = 0;
		CHECK(futimens(fd, ts) == 0);
		close(fd);
		break;
	}
}

/* Name and create everything P holds. */
static void plant_all(void)
{
	const char *prefix[2] = {base_cfg.dump_prefix, long_prefix};
	int i, k, n = 0;

	for (i = 0; i < 2; i++)
		for (k = 0; k < K_N; k++) {
			snprintf(plants[n].name, sizeof(plants[n].name),
			    "%s%s%s", plant_fmt[k].head, prefix[i],
			    plant_fmt[k].tail);
			plants[n].prefix = i;
			plants[n].kind = k;
			plant_one(n++);
		}
	snprintf(plants[n].name, sizeof(plants[n].name), "other.1.1.heap");
	plants[n].prefix = -1;
	plants[n].kind = K_OLD;
	plant_one(n);
}

/* Is planted entry @p i one of this input's dumps (prefix and kind)? */
static bool plant_ours(int i)
{
	int pfx = strcmp(cfg.dump_prefix, long_prefix) == 0;

	return plants[i].prefix == pfx && plants[i].kind < PLANT_OURS;
}

/* The planted entry named @p name, or -1. */
static int planted(const char *name)
{
	int i;

	for (i = 0; i < NPLANT; i++)
		if (strcmp(name, plants[i].name) == 0)
			return i;
	return -1;
}

/* Does directory @p path hold nothing? */
static bool dir_empty(const char *path)
{
	struct dirent *de;
	DIR *dp;
	int n = 0;

	CHECK((dp = opendir(path)) != NULL);
	while ((de = readdir(dp)) != NULL)
		n += strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0;
	closedir(dp);
	return n == 0;
}

/*
 * Put the dump directory back after a word. Nothing may be there but
 * @p newest (the dump the reply named, removed here) and, in P, what we
 * planted; of that, only this input's old dumps may be gone, and are put
 * back. Returns how many of them were left.
 */
static int settle_dump_dir(const char *newest)
{
	char path[PATH_MAX * 2];
	bool seen[NPLANT] = {false};
	struct dirent *de;
	struct stat sb;
	DIR *dp;
	int kept = 0, ours = 0, k, i;

	CHECK((dp = opendir(B->dir)) != NULL);
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", B->dir, de->d_name);
		if (newest != NULL && strcmp(de->d_name, newest) == 0) {
			kept++;
			CHECK(unlink(path) == 0);
		} else if (newest != NULL &&
		    strncmp(de->d_name, newest, strlen(newest)) == 0 &&
		    strcmp(de->d_name + strlen(newest), ".trend") == 0) {
			/* The new dump's leak index goes with it. */
			CHECK(unlink(path) == 0);
		} else if (W.plant && (k = planted(de->d_name)) >= 0) {
			seen[k] = true;
			ours += plant_ours(k);
		} else if (dumper.stage[0] != '\0' &&
		    strcmp(de->d_name, strrchr(dumper.stage, '/') + 1) == 0) {
			/* The staging directory: ours, 0700, empty. */
			CHECK(lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) &&
			    (sb.st_mode & 077) == 0);
			CHECK(dir_empty(path));
		} else {
			/* A leftover temporary file or a stray name. */
			fprintf(stderr, "fuzz_proto: left behind: %s\n", path);
			closedir(dp);
			CHECK(!"no file left in the dump directory");
		}
	}
	closedir(dp);
	CHECK(newest == NULL || kept == 1);
	for (i = 0; W.plant && i < NPLANT; i++)
		if (!seen[i]) {
			CHECK(plant_ours(i));
			plant_one(i);
		}
	/* The symlinks' target is never touched. */
	CHECK(lstat(dfile, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0);
	return ours;
}

/* Is @p s (@p n bytes) exactly one line: no '\n' or '\r' but a final '\n'? */
static bool one_line(const char *s, size_t n)
{
	return n > 0 && s[n - 1] == '\n' && memchr(s, '\n', n - 1) == NULL &&
	    memchr(s, '\r', n) == NULL;
}

/* Does R start with @p prefix? */
static bool starts(const char *prefix)
{
	size_t n = strlen(prefix);

	return R.len >= n && memcmp(R.buf, prefix, n) == 0;
}

/* How many times does @p c occur in R? */
static size_t count(char c)
{
	size_t i, n = 0;

	for (i = 0; i < R.len; i++)
		n += R.buf[i] == c;
	return n;
}

/* The unknown-word reply: our escape of the word, printable, one line. */
static void check_unknown(const char w[4])
{
	char shown[sizeof(UNKNOWN_HEAD) + 4 * 4 + 2], *d;
	size_t i;

	d = shown + snprintf(shown, sizeof(shown), "%s", UNKNOWN_HEAD);
	for (i = 0; i < 4; i++) {
		unsigned char ch = (unsigned char)w[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\')
			*d++ = (char)ch;
		else
			d += snprintf(d, 5, "\\x%02x", ch);
	}
	*d++ = '"';
	*d = '\0';
	CHECK(starts(shown));
	CHECK(one_line(R.buf, R.len));
	for (i = 0; i + 1 < R.len; i++)
		CHECK(R.buf[i] >= 0x20 && R.buf[i] < 0x7f);
	CHECK(memmem(R.buf, R.len, "known words:", 12) != NULL);
}

/* jmls: a "#" line, then one line for each of our regular files only. */
static void check_jmls(void)
{
	char needle[256];
	size_t i, n;

	CHECK(starts("# "));
	n = W.plant ? PLANT_OURS : 0;
	CHECK(count('\n') == 1 + n);
	for (i = 0; W.plant && i < NPLANT; i++) {
		snprintf(needle, sizeof(needle), "/%s\t", plants[i].name);
		CHECK((memmem(R.buf, R.len, needle, strlen(needle)) != NULL) ==
		    plant_ours((int)i));
	}
}

/* A jmfp success: the path of a new profile in the dump directory. */
static int check_dump_reply(void)
{
	char want[PATH_MAX + 64], *base, *line = R.buf;
	size_t n, len = R.len;
	int ours;

	/* jmdf's table comes first: the path is the last line. */
	CHECK(len > 0 && R.buf[len - 1] == '\n');
	for (n = len - 1; n > 0; n--)
		if (R.buf[n - 1] == '\n') {
			line = R.buf + n;
			len = R.len - n;
			break;
		}
	n = (size_t)snprintf(want, sizeof(want), "%s/%s.%ld.", B->real,
	    cfg.dump_prefix, self_pid);
	CHECK(len > n && memcmp(line, want, n) == 0);
	CHECK(one_line(line, len));
	CHECK(len > 6 && memcmp(line + len - 6, ".heap\n", 6) == 0);
	R.buf[R.len - 1] = '\0';
	base = strrchr(line, '/') + 1;
	ours = settle_dump_dir(base);
	R.buf[R.len - 1] = '\n';
	return ours;
}

/* Run @p w once (one connection) and check every invariant on its reply. */
static void dispatch(const char w[4], uint64_t *unknown, uint64_t *refused)
{
	struct out out = {.write = collect, .arg = NULL};
	const struct proto_word *bw = NULL;
	const struct model_word *hw;
	struct proto_result res = {.req.kind = NULL};
	int flags = 0, r, ours, keep;
	bool is_unknown, is_refused, is_job, before_active = fake.prof_active;
	uint64_t written = core.st.dumps_written;
	uint64_t deleted = core.st.dumps_deleted;
	int dumps = fake.dumps, resets = fake.resets;

	if ((hw = model_host(w)) != NULL)
		flags = hw->flags;
	else if ((bw = proto_lookup(w)) != NULL)
		flags = bw->flags;
	is_unknown = hw == NULL && bw == NULL;
	is_refused = !is_unknown && !model_allowed(w, flags);
	is_job = hw == NULL && bw != NULL && !is_refused && bw->job != NULL;

	R.len = 0;
	W.hbin_ran = false;
	r = proto_dispatch(&P, w, &out, &res);
	CHECK(r == PROTO_OK || r == PROTO_ERROR || r == PROTO_JOB);
	/* Only a built-in with a job (the dump words, jmlk), allowed, is a
	 * job; it wrote nothing yet, and the module runs it: here on this
	 * thread, as without a worker. */
	CHECK((r == PROTO_JOB) == is_job);
	CHECK(res.req.kind == (is_job ? bw->job : NULL));
	CHECK(r != PROTO_JOB ||
	    (res.req.who == bw->name && res.req.view == bw->view));
	if (r == PROTO_JOB) {
		CHECK(R.len == 0 && !core.dump_running);
		core_job_sync(&core, &dumper, &res.req, &D);
		CHECK(res.req.kind != &job_leaks || !D.kept);
		CHECK(D.kept == (core.st.dumps_written == written + 1));
		/* A view's body first, as the module sends it. */
		if (D.status == DUMP_OK && D.body) {
			char buf[4096];
			ssize_t got;
			while ((got = read(D.body_fd, buf, sizeof(buf))) > 0)
				collect(NULL, buf, (size_t)got);
		}
		r = answer_dump(&out, &D) == 0 ? PROTO_OK : PROTO_ERROR;
		dump_result_release(&D);
	}
	/* Every dump has ended, a host word's in-place jmfp too. */
	CHECK(!core.dump_running);
	CHECK(R.len > 0);
	CHECK(R.len < sizeof(R.buf));
	R.buf[R.len] = '\0';
	if (verbose)
		fprintf(stderr, "fuzz_proto: %.4s (allow \"%s\") -> %s: %s%s",
		    w, cfg.allow, r == PROTO_OK ? "ok" : "error",
		    R.len > 300 ? "(long)" : R.buf,
		    R.len > 300 || R.buf[R.len - 1] != '\n' ? "\n" : "");

	if (is_unknown) {
		++*unknown;
		CHECK(r == PROTO_ERROR);
		check_unknown(w);
	} else if (is_refused) {
		++*refused;
		CHECK(r == PROTO_ERROR);
		CHECK(R.len == 4 + strlen(WHITELIST_TAIL));
		CHECK(memcmp(R.buf, w, 4) == 0);
		CHECK(memcmp(R.buf + 4, WHITELIST_TAIL, R.len - 4) == 0);
	} else if (r == PROTO_ERROR) {
		CHECK(starts(JM4LW_ERROR_PREFIX) && starts("error: "));
		CHECK(one_line(R.buf, R.len));
	} else if (bw != NULL && memcmp(w, "ruok", 4) == 0) {
		CHECK(R.len == 4 && memcmp(R.buf, "imok", 4) == 0);
	} else {
		CHECK(R.buf[R.len - 1] == '\n');
		CHECK(!starts("error: "));
	}

	/* Word-specific replies on success. */
	if (r == PROTO_OK && bw != NULL) {
		if (memcmp(w, "jmep", 4) == 0 || memcmp(w, "jmdp", 4) == 0) {
			bool on = w[2] == 'e';
			char want[192];
			snprintf(want, sizeof(want),
			    "ok: profiling %s (prof.active=%s, was %s)%s\n",
			    on ? "active" : "inactive", on ? "true" : "false",
			    before_active ? "true" : "false",
			    on && !before_active
			        ? "; profiles hold only allocations made from "
			          "now on"
			        : "");
			CHECK(strcmp(R.buf, want) == 0);
			CHECK(fake.prof_active == on);
		}
		if (memcmp(w, "jmst", 4) == 0)
			CHECK(starts("___ Begin jemalloc statistics ___\n"));
		if (memcmp(w, "jmrs", 4) == 0) {
			int lg = cfg.prof_reset_lg_sample; /* -1: keep */
			CHECK(fake.resets == resets + 1);
			CHECK(fake.reset_lg ==
			    (lg < 0 ? fake.lg_sample : (size_t)lg));
			CHECK(starts("ok: ") && one_line(R.buf, R.len));
		}
		if (memcmp(w, "jmls", 4) == 0)
			check_jmls();
	}
	if (hw != NULL && hw->fn == host_hbin && !is_refused)
		check_hbin();
	if (r == PROTO_OK && hw != NULL && hw->fn == host_hwid)
		CHECK(
		    R.len == (size_t)(W.hwid_width > 1 ? W.hwid_width : 1) + 1);

	/* A dump: exactly one new file, named in the reply; else none. */
	if (core.st.dumps_written != written) {
		CHECK(core.st.dumps_written == written + 1);
		CHECK(fake.dumps == dumps + 1 && r == PROTO_OK);
		/* Only a whole profile is a dump. */
		CHECK(W.dump_whole);
		ours = check_dump_reply();
		/* Retention: at most dump_keep of ours, the new one kept. */
		keep = (int)cfg.dump_keep;
		if (cfg.dump_max_bytes == 1)
			CHECK(ours == 0);
		if (keep > 0)
			CHECK(ours + 1 <= (keep > 1 ? keep : 1));
		if (keep == 0 && cfg.dump_max_bytes == 0)
			CHECK(ours == (W.plant ? PLANT_OURS : 0));
	} else {
		ours = settle_dump_dir(NULL);
		CHECK(ours == (W.plant ? PLANT_OURS : 0));
	}
	CHECK(core.st.dumps_deleted - deleted ==
	    (uint64_t)((W.plant ? PLANT_OURS : 0) - ours));
}

/* Empty directory @p dir (one level of subdirectories) and remove it. */
static void rm_dir(const char *dir)
{
	char path[PATH_MAX * 2];
	struct dirent *de;
	DIR *dp;

	if ((dp = opendir(dir)) != NULL) {
		while ((de = readdir(dp)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (unlink(path) == -1)
				(void)rmdir(path);
		}
		closedir(dp);
	}
	(void)rmdir(dir);
}

/* Remove everything at exit, or before a failed check aborts. */
static void cleanup(void)
{
	if (root[0] == '\0')
		return;
	rm_dir(bases[0].dir);
	rm_dir(bases[1].dir);
	(void)unlink(dfile);
	(void)rmdir(root);
	root[0] = '\0';
}

/* Make dump directory @p b as R/@p name, and its variants. */
static void make_base(struct base *b, const char *name, const char *cwd)
{
	size_t n;

	snprintf(b->dir, sizeof(b->dir), "%s/%s", root, name);
	CHECK(mkdir(b->dir, 0700) == 0);
	CHECK(realpath(b->dir, b->real) != NULL);
	/* dir/./././... up to just under the field's 4 KiB. */
	n = (size_t)snprintf(b->lng, sizeof(b->lng), "%s", b->dir);
	while (n + 2 < sizeof(b->lng) - 1) {
		memcpy(b->lng + n, "/.", 3);
		n += 2;
	}
	/* ../../dir: relative, through "..", resolved from getcwd(). */
	b->rel[0] = '\0';
	for (n = 0; cwd[n] != '\0'; n++)
		if (cwd[n] == '/' && cwd[n + 1] != '\0')
			strcat(b->rel, "../");
	CHECK(strlen(b->rel) + strlen(b->dir) < sizeof(b->rel));
	strcat(b->rel, b->dir + 1);
}

/* Make the directories once, and the defaults every input starts from. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *t = getenv("TMPDIR");
	struct jm4lw_config scratch;
	char tmpl[PATH_MAX], cwd[PATH_MAX], err[256];
	size_t n;
	FILE *f;

	(void)argc;
	(void)argv;
	snprintf(tmpl, sizeof(tmpl), "%s/fuzz_proto.XXXXXX",
	    t != NULL && t[0] != '\0' ? t : "/tmp");
	if (mkdtemp(tmpl) == NULL || realpath(tmpl, root) == NULL) {
		fprintf(stderr, "fuzz_proto: mkdtemp %s: %s\n", tmpl,
		    strerror(errno));
		exit(1);
	}
	atexit(cleanup);
	snprintf(dfile, sizeof(dfile), "%s/f", root);
	CHECK((f = fopen(dfile, "w")) != NULL);
	fclose(f);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	make_base(&bases[0], "d", cwd);
	make_base(&bases[1], "p", cwd);
	memset(long_prefix, 'p', sizeof(long_prefix) - 1);
	self_pid = (long)getpid();
	verbose = getenv("FUZZ_PROTO_VERBOSE") != NULL;

	/* Only values a user could configure. */
	config_defaults(&scratch);
	for (n = 0; n < NELEM(lg_samples); n++)
		CHECK(jm4lw_config_set(&scratch, "prof_reset_lg_sample",
		          lg_samples[n], err, sizeof(err)) == 0);
	for (n = 0; n < NELEM(growths); n++)
		CHECK(jm4lw_config_set(&scratch, "dump_on_growth", growths[n],
		          err, sizeof(err)) == 0);
	CHECK(jm4lw_config_set(&scratch, "dump_prefix", long_prefix, err,
	          sizeof(err)) == 0);
	CHECK(jm4lw_config_set(&scratch, "dump_dir", bases[0].lng, err,
	          sizeof(err)) == 0);

	config_defaults(&base_cfg);
	plant_all();
	return 0;
}

/* One connection's bytes: frame them as the server does, then dispatch. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const bad_names[] = {NULL, "nope", "ruo", "hbin",
	    "ruokk", ""};
	const struct proto_word *pw;
	char head[4], word[4], w2[4];
	size_t have = 0, split, take, i, nbuiltin = 0;
	uint64_t unknown = 0, refused = 0;
	struct core_policy pol;
	char err[256];
	int dispatched = 0, t;

	/* The world: bytes after the word, 0 when absent. */
	memset(&W, 0, sizeof(W));
	for (i = 0; i < sizeof(W.c) && 4 + i < size; i++)
		W.c[i] = data[4 + i];
	for (pw = proto_words; pw->name != NULL; pw++)
		nbuiltin++;
	fake_reset();
	fake.violation = fake_broken;
	fake.profile = write_profile;
	fake.stage = dumper.stage;
	fake.fail_errno = fail_errnos[W.c[4] % 6];
	fake.fail_name = fail_targets[(W.c[4] / 6) % NTARGETS];
	fake.opt_prof = !(W.c[5] & 1);
	fake.prof_active = (W.c[5] & 2) != 0;
	fake.stats_pieces = W.c[7] % 64;
	fake.allocated = fake.stats = (size_t)12345678 * (W.c[13] + 1);
	t = W.c[6] >> 3;
	W.hbin_target = t < (int)NELEM(bad_names)
	    ? bad_names[t]
	    : proto_words[(size_t)(t - (int)NELEM(bad_names)) % nbuiltin].name;
	W.hwid_width = W.c[7] * 1000;
	W.herr_pad = (W.c[12] & 4) ? 3000 : 0;
	W.plant = (W.c[12] & 0x40) != 0;
	if (size > 20) {
		W.text = data + 20;
		W.textlen = size - 20;
	} else {
		W.text = (const uint8_t *)"";
		W.textlen = 0;
	}

	/* The configuration: defaults, then what this input chose. */
	cfg = base_cfg;
	memset(&dumper, 0, sizeof(dumper));
	proto_init(&P, &core, &dumper);
	/* As jm4lw_new() does: conf shows the config's keys. */
	P.nconf = config_conf_keys(P.conf, PROTO_CONF_MAX);
	nmodel = 0;
	host_add("hwid", host_hwid, 0);
	host_add("hbin", host_hbin, 0);
	host_add("herr", host_herr, JM4LW_WORD_MUTATES);
	if (W.c[5] & 4)
		host_add("mntr", host_mntr, 0);
	memcpy(dyn_name, &W.c[8], 4);
	dyn_name[4] = '\0';
	if (W.c[6] & 4)
		host_add(dyn_name, host_dyn, 0);
	nitems = 0;
	list_items[nitems++] = "hwid";
	list_items[nitems++] = "hbin";
	list_items[nitems++] = "herr";
	list_items[nitems++] =
	    (W.c[6] & 4) && model_host(dyn_name) != NULL ? dyn_name : NULL;
	for (pw = proto_words; pw->name != NULL; pw++) {
		CHECK(nitems < (int)NELEM(list_items));
		list_items[nitems++] = pw->name;
	}
	build_allow();
	check_allow_valid();
	build_dump();
	/* The engine over it, with the policy parsed as the module does. */
	CHECK(config_policy(&cfg, &pol, err, sizeof(err)) == 0);
	core_init(&core, &fake_ops, &cfg, &pol);
	core.log.fn = fuzz_log;

	/* The whole input in one buffer: 4 bytes are a word, fewer are not. */
	CHECK(proto_frame(data, size, w2) == (size >= 4 ? 4 : 0));
	if (size >= 4)
		CHECK(memcmp(w2, data, 4) == 0);

	/* As the server reads: two reads split where the fuzzer chose. */
	split = W.c[0] % (size + 1);
	if (split == 0)
		split = size;
	for (i = 0; i < 2 && !dispatched; i++) {
		const uint8_t *chunk = i == 0 ? data : data + split;
		size_t n = i == 0 ? split : size - split;

		if (n == 0)
			break; /* EOF before 4 bytes: no reply */
		take = 4 - have < n ? 4 - have : n;
		memcpy(head + have, chunk, take);
		have += take;
		if (proto_frame(head, have, word) == 4) {
			CHECK(have == 4 && memcmp(word, data, 4) == 0);
			dispatch(word, &unknown, &refused);
			dispatched = 1;
		} else
			CHECK(have < 4);
	}
	CHECK(dispatched == (size >= 4));
	/* The next connection, on the same module: mntr after a dump... */
	if (dispatched && (W.c[5] & 0x40)) {
		if (size >= 24)
			memcpy(word, data + 20, 4);
		dispatch(word, &unknown, &refused);
		dispatched++;
	}
	/* ...and the growth timer's look at stats.allocated. */
	if (W.c[12] & 0x80) {
		int due = core_growth_due(&core);
		CHECK(due == 0 || due == 1);
	}

	CHECK(core.st.words_served == (uint64_t)dispatched);
	CHECK(core.st.words_unknown == unknown);
	CHECK(core.st.words_refused == refused);

	/* The module's end takes its staging directory with it. */
	if (dumper.stage[0] != '\0') {
		char stage[sizeof(dumper.stage)];
		struct stat sb;
		snprintf(stage, sizeof(stage), "%s", dumper.stage);
		dumper_fini(&dumper);
		CHECK(dumper.stage[0] == '\0');
		CHECK(lstat(stage, &sb) == -1 && errno == ENOENT);
	} else
		dumper_fini(&dumper); /* the snapshots' ring (jmgr, jmpk) */
	return 0;
}

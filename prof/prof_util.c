/*
 * The profile pipeline's array growth and its one hash table (see
 * prof_util.h). Every table of the pipeline is hit once per frame of a
 * profile (10^5-10^6 of them): the probe is a loop over 16-byte slots,
 * one multiply to place a key, and a call to the caller's comparison only
 * when a slot's hash matches.
 */
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof_util.h"

/* Grow *@p arr (of @p size-byte items) to hold @p need, doubling; -1 if
 * memory runs out. The one growth rule of the profile pipeline. */
int hp_grow_more(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 64;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if (ncap > SIZE_MAX / size || (n = realloc(*arr, ncap * size)) == NULL)
		return -1;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* FNV-1a's: short names and keys, where it is as good as any. */
#define FNV_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

/* FNV-1a of the bytes. */
uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = FNV_BASIS;

	while (n-- > 0)
		h = (h ^ *s++) * FNV_PRIME;
	return h;
}

/* hash_bytes of the string, without measuring it first. */
uint64_t hash_str(const char *s)
{
	uint64_t h = FNV_BASIS;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * FNV_PRIME;
	return h;
}

/* The slot holding @p key (and, with @p eq, what @p eq calls @p arg's),
 * or the free slot where it would go. The table has a free slot. */
static struct hmap_slot *hmap_probe(const struct hmap *m, uint64_t key,
    hmap_eq_fn *eq, const void *arg)
{
	size_t mask = m->cap - 1, i = (size_t)hash_int(key) & mask;
	struct hmap_slot *s;

	for (;; i = (i + 1) & mask) {
		s = &m->slot[i];
		if (s->key == 0 ||
		    (s->key == key && (eq == NULL || eq(arg, s->val))))
			return s;
	}
}

/* Double the table (16 slots at first); -1 when memory runs out. */
static int hmap_grow(struct hmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16, i, j;
	struct hmap_slot *t;

	if (cap > SIZE_MAX / sizeof(*t) ||
	    (t = calloc(cap, sizeof(*t))) == NULL)
		return -1;
	for (i = 0; i < m->cap; i++) {
		if (m->slot[i].key == 0)
			continue;
		for (j = (size_t)hash_int(m->slot[i].key) & (cap - 1);
		     t[j].key != 0; j = (j + 1) & (cap - 1))
			;
		t[j] = m->slot[i];
	}
	free(m->slot);
	m->slot = t;
	m->cap = cap;
	return 0;
}

/* hmap_put and hmap_add: the slot of @p key, made if new. */
static uint64_t *hmap_insert(struct hmap *m, uint64_t key, hmap_eq_fn *eq,
    const void *arg, int *added)
{
	struct hmap_slot *s;
	int is_new;

	if (key == 0) {
		if ((is_new = !m->has_zero)) {
			m->has_zero = 1;
			m->zero = 0;
		}
		if (added != NULL)
			*added = is_new;
		return &m->zero;
	}
	if ((m->n + 1) * 2 > m->cap && hmap_grow(m) == -1)
		return NULL;
	s = hmap_probe(m, key, eq, arg);
	if ((is_new = s->key == 0)) {
		s->key = key;
		s->val = 0;
		m->n++;
	}
	if (added != NULL)
		*added = is_new;
	return &s->val;
}

/* hmap_insert with the key alone. */
uint64_t *hmap_put(struct hmap *m, uint64_t key, int *added)
{
	return hmap_insert(m, key, NULL, NULL, added);
}

/* A hash is kept with its low bit set: never 0, the free slot's key. */
uint64_t *hmap_find(const struct hmap *m, uint64_t hash, hmap_eq_fn *eq,
    const void *arg)
{
	struct hmap_slot *s;

	if (m->cap == 0)
		return NULL;
	s = hmap_probe(m, hash | 1, eq, arg);
	return s->key != 0 ? &s->val : NULL;
}

/* hmap_insert with the caller's comparison. */
uint64_t *hmap_add(struct hmap *m, uint64_t hash, hmap_eq_fn *eq,
    const void *arg, int *added)
{
	return hmap_insert(m, hash | 1, eq, arg, added);
}

/* The slots in order, then key 0's. */
int hmap_next(const struct hmap *m, size_t *it, uint64_t *val)
{
	for (; *it < m->cap; (*it)++)
		if (m->slot[*it].key != 0) {
			*val = m->slot[(*it)++].val;
			return 1;
		}
	if (*it == m->cap && m->has_zero) {
		(*it)++;
		*val = m->zero;
		return 1;
	}
	return 0;
}

/* Every slot free again. */
void hmap_clear(struct hmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		m->slot[i].key = 0;
	m->n = 0;
	m->has_zero = 0;
}

/* The slots, and the table back to empty. */
void hmap_free(struct hmap *m)
{
	free(m->slot);
	*m = (struct hmap){0};
}

/* Open, check the descriptor, then make it blocking (see prof_util.h). */
int prof_open_file(const char *path, int flags, struct stat *sb, char *err,
    size_t errlen)
{
	struct stat st;
	int fd, fl;

	if ((fd = open(path,
	         O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
	             (flags & PROF_OPEN_NOFOLLOW ? O_NOFOLLOW : 0))) == -1) {
		snprintf(err, errlen, "%s: %s", path,
		    errno == ELOOP && (flags & PROF_OPEN_NOFOLLOW)
		        ? "a symbolic link, not a file"
		        : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if ((flags & PROF_OPEN_OURS) && st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: not ours (owned by uid %lu)", path,
		    (unsigned long)st.st_uid);
		goto fail;
	}
	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (sb != NULL)
		*sb = st;
	return fd;
fail:
	close(fd);
	return -1;
}

/* Copy [@p off, @p off + @p len) of @p fd into @p mfd at the same offset:
 * 0, or -1 (a short read: the file shrank). sendfile, as the whole copy:
 * copy_file_range refuses two file systems. */
static int copy_range(int mfd, int fd, off_t off, off_t len)
{
	off_t in = off;
	ssize_t n;

	if (lseek(mfd, off, SEEK_SET) == -1)
		return -1;
	while (len > 0) {
		if ((n = sendfile(mfd, fd, &in, (size_t)len)) <= 0)
			return -1;
		len -= n;
	}
	return 0;
}

/* Is section @p name with @p flags one the symbolizers never read? The
 * code (executable) and the program's data (.rodata, .data): most of a
 * stripped binary's bytes. */
static int section_unread(const char *name, uint64_t flags)
{
	return (flags & SHF_EXECINSTR) != 0 ||
	    strncmp(name, ".rodata", 7) == 0 ||
	    strncmp(name, ".data", 5) == 0 ||
	    strncmp(name, ".lrodata", 8) == 0 ||
	    strncmp(name, ".ldata", 6) == 0;
}

/*
 * Copy of ELF64 file @p fd (@p size bytes) into @p mfd (as long, sparse)
 * with only what a symbolizer reads: the headers and every section but
 * the code and the program's data. Pages never written take no memory,
 * so a process symbolized near its memory limit (a dump before the OOM
 * killer) pays for its symbol tables, unwind and debug sections, not for
 * its whole text. 1 when copied, 0 when @p fd is not such a file (copy it
 * whole), -1 on a read that failed.
 */
static int copy_elf_parts(int mfd, int fd, off_t size)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL, *str;
	char *names = NULL;
	size_t i, shsz;
	int r = 0;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
	    eh.e_shstrndx >= eh.e_shnum || eh.e_shoff > (uint64_t)size ||
	    (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) >
	        (uint64_t)size - eh.e_shoff ||
	    eh.e_phoff > (uint64_t)size ||
	    (uint64_t)eh.e_phnum * eh.e_phentsize > (uint64_t)size - eh.e_phoff)
		return 0;
	shsz = (size_t)eh.e_shnum * sizeof(Elf64_Shdr);
	if ((sh = malloc(shsz)) == NULL ||
	    pread(fd, sh, shsz, (off_t)eh.e_shoff) != (ssize_t)shsz)
		goto out;
	str = &sh[eh.e_shstrndx];
	if (str->sh_type != SHT_STRTAB || str->sh_offset > (uint64_t)size ||
	    str->sh_size > (uint64_t)size - str->sh_offset ||
	    str->sh_size == 0 || str->sh_size > (64u << 20))
		goto out;
	if ((names = malloc(str->sh_size + 1)) == NULL ||
	    pread(fd, names, str->sh_size, (off_t)str->sh_offset) !=
	        (ssize_t)str->sh_size)
		goto out;
	names[str->sh_size] = '\0';
	if (ftruncate(mfd, size) == -1 ||
	    copy_range(mfd, fd, 0, (off_t)sizeof(eh)) == -1 ||
	    copy_range(mfd, fd, (off_t)eh.e_phoff,
	        (off_t)eh.e_phnum * eh.e_phentsize) == -1 ||
	    copy_range(mfd, fd, (off_t)eh.e_shoff, (off_t)shsz) == -1) {
		r = -1;
		goto out;
	}
	for (i = 0; i < eh.e_shnum; i++) {
		const char *name =
		    sh[i].sh_name < str->sh_size ? names + sh[i].sh_name : "";
		if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_size == 0 ||
		    section_unread(name, sh[i].sh_flags))
			continue;
		if (sh[i].sh_offset > (uint64_t)size ||
		    sh[i].sh_size > (uint64_t)size - sh[i].sh_offset)
			continue; /* the readers refuse it as they would */
		if (copy_range(mfd, fd, (off_t)sh[i].sh_offset,
		        (off_t)sh[i].sh_size) == -1) {
			r = -1;
			goto out;
		}
	}
	r = 1;
out:
	free(names);
	free(sh);
	return r;
}

/* A sealed copy of the file open at @p fd, whose fstat is @p sb (see
 * prof_copy_object): made now, never from the cache. */
static int copy_object(int fd, const struct stat *sb_in, const char *path,
    char *err, size_t errlen)
{
	struct stat sb = *sb_in, after;
	off_t off = 0;
	ssize_t n = 0;
	int mfd, parts;

	if ((mfd = memfd_create("jm4lw-object",
	         MFD_CLOEXEC | MFD_ALLOW_SEALING)) == -1) {
		snprintf(err, errlen, "%s: cannot copy: %s", path,
		    strerror(errno));
		return -1;
	}
	if ((parts = copy_elf_parts(mfd, fd, sb.st_size)) == 1)
		off = sb.st_size;
	else if (parts == 0)
		while (off < sb.st_size &&
		    (n = sendfile(mfd, fd, &off, (size_t)(sb.st_size - off))) >
		        0)
			;
	else
		n = -1;
	/* Cut short, grown or rewritten meanwhile (a deploy's cp over it):
	 * a mix of two builds would name frames wrongly. */
	if (n == -1 || off != sb.st_size || fstat(fd, &after) == -1 ||
	    after.st_size != sb.st_size ||
	    after.st_mtim.tv_sec != sb.st_mtim.tv_sec ||
	    after.st_mtim.tv_nsec != sb.st_mtim.tv_nsec) {
		snprintf(err, errlen,
		    "%s: %s while it was read (%lld of %lld bytes); its "
		    "frames are not named",
		    path,
		    n == -1 && parts != -1 ? strerror(errno)
		                           : "changed on disk",
		    (long long)off, (long long)sb.st_size);
		close(mfd);
		errno = ESTALE;
		return -1;
	}
	/* Nobody can change the copy either (it is ours, but sealed it is
	 * so by construction). */
	(void)fcntl(mfd, F_ADD_SEALS,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	return mfd;
}

/*
 * The sealed copies, kept for the next symbolizer: each request that
 * symbolizes opens the same objects again, and copying a big binary's
 * debug sections every time cost more than the symbolizing. A copy is
 * named by what the file was when it was copied (device, inode, size,
 * mtime, ctime): a file replaced (a new inode) or rewritten in place (a
 * new mtime, and ctime, which nobody can set back) is another key, so a
 * copy of the old file is never handed out for the new one. Fixed slots,
 * no allocation: nothing of the cache shows in the profiles it helps to
 * write, and its copies are memfds, outside the allocator. Past the byte
 * cap the least recently used copies are closed (their holders keep
 * theirs); a copy bigger than the cap is made for its caller only.
 */
#define OBJCACHE_SLOTS 32

/* One cached copy: its file's identity, the copy, its pages' bytes. */
struct objcache_slot {
	int live;
	int mfd;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim, ctim;
	uint64_t bytes;
	uint64_t used; /* the tick of its last use, for LRU */
};

static struct {
	pthread_mutex_t lock;
	struct objcache_slot slot[OBJCACHE_SLOTS];
	uint64_t bytes, cap, tick, copies;
} objcache = {.lock = PTHREAD_MUTEX_INITIALIZER,
    .cap = PROF_OBJCACHE_CAP_DEFAULT};

/* fork(): the child gets the lock as the parent had it, and a thread
 * of the parent's that held it does not exist there (the worker, mid-
 * copy): the lock is taken around the fork and released on both sides,
 * so a child that symbolizes (a host forked beside the worker) never
 * waits on it forever. */
static void objcache_fork_lock(void)
{
	pthread_mutex_lock(&objcache.lock);
}

static void objcache_fork_unlock(void)
{
	pthread_mutex_unlock(&objcache.lock);
}

static pthread_once_t objcache_once = PTHREAD_ONCE_INIT;

static void objcache_init(void)
{
	(void)pthread_atfork(objcache_fork_lock, objcache_fork_unlock,
	    objcache_fork_unlock);
}

/* The cache's lock, its fork handlers set on first use. */
static void objcache_lock(void)
{
	pthread_once(&objcache_once, objcache_init);
	pthread_mutex_lock(&objcache.lock);
}

/* Is @p s the copy of the file whose fstat is @p sb? */
static int objcache_same(const struct objcache_slot *s, const struct stat *sb)
{
	return s->live && s->dev == sb->st_dev && s->ino == sb->st_ino &&
	    s->size == sb->st_size && s->mtim.tv_sec == sb->st_mtim.tv_sec &&
	    s->mtim.tv_nsec == sb->st_mtim.tv_nsec &&
	    s->ctim.tv_sec == sb->st_ctim.tv_sec &&
	    s->ctim.tv_nsec == sb->st_ctim.tv_nsec;
}

/* A descriptor of its own on memfd @p mfd (its own offset, unlike dup's),
 * or -1. */
static int objcache_reopen(int mfd)
{
	char p[32];

	snprintf(p, sizeof(p), "/proc/self/fd/%d", mfd);
	return open(p, O_RDONLY | O_CLOEXEC);
}

/* Close slot @p s's copy. Under the lock. */
static void objcache_drop(struct objcache_slot *s)
{
	close(s->mfd);
	objcache.bytes -= s->bytes;
	s->live = 0;
}

/* Keep a descriptor of copy @p mfd of the file @p sb if it fits under the
 * cap, closing the least recently used copies to make room. Under the
 * lock. */
/*
 * The slots a process may fill: each holds a descriptor open between
 * requests, and a daemon run with a low RLIMIT_NOFILE (64, a container's
 * default of 1024) needs its descriptors for peers. At most one in 16 of
 * the soft limit, up to OBJCACHE_SLOTS; none under 16.
 */
static int objcache_slots(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY)
		return OBJCACHE_SLOTS;
	return rl.rlim_cur / 16 < OBJCACHE_SLOTS ? (int)(rl.rlim_cur / 16)
	                                         : OBJCACHE_SLOTS;
}

static void objcache_put(int mfd, const struct stat *sb)
{
	struct objcache_slot *s, *lru;
	struct stat msb;
	uint64_t bytes;
	int i, own, n = objcache_slots();

	/* Slots past the limit (it was lowered): let go of them first. */
	for (i = n; i < OBJCACHE_SLOTS; i++)
		if (objcache.slot[i].live)
			objcache_drop(&objcache.slot[i]);
	if (n == 0 || fstat(mfd, &msb) == -1)
		return;
	bytes = (uint64_t)msb.st_blocks * 512;
	if (bytes > objcache.cap)
		return;
	for (i = 0; i < OBJCACHE_SLOTS; i++)
		if (objcache_same(&objcache.slot[i], sb))
			return; /* another thread copied it meanwhile */
	if ((own = objcache_reopen(mfd)) == -1)
		return;
	for (;;) {
		s = lru = NULL;
		for (i = 0; i < n; i++) {
			struct objcache_slot *c = &objcache.slot[i];
			if (!c->live)
				s = c;
			else if (lru == NULL || c->used < lru->used)
				lru = c;
		}
		if (s != NULL && objcache.bytes + bytes <= objcache.cap)
			break;
		objcache_drop(lru); /* bytes <= cap: one is live */
	}
	*s = (struct objcache_slot){.live = 1,
	    .mfd = own,
	    .dev = sb->st_dev,
	    .ino = sb->st_ino,
	    .size = sb->st_size,
	    .mtim = sb->st_mtim,
	    .ctim = sb->st_ctim,
	    .bytes = bytes,
	    .used = ++objcache.tick};
	objcache.bytes += bytes;
}

/* An object safe to map (see prof_util.h): a sealed copy of it, the
 * cache's when it has one of the file as it is now. */
int prof_copy_object(int fd, const char *path, char *err, size_t errlen)
{
	struct stat sb;
	int i, mfd = -1;

	if (fstat(fd, &sb) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	objcache_lock();
	for (i = 0; i < OBJCACHE_SLOTS && mfd == -1; i++)
		if (objcache_same(&objcache.slot[i], &sb) &&
		    (mfd = objcache_reopen(objcache.slot[i].mfd)) != -1)
			objcache.slot[i].used = ++objcache.tick;
	pthread_mutex_unlock(&objcache.lock);
	if (mfd != -1)
		return mfd;
	/* Copied outside the lock: another thread's copy of another
	 * object need not wait for this one. */
	if ((mfd = copy_object(fd, &sb, path, err, errlen)) == -1)
		return -1;
	objcache_lock();
	objcache.copies++;
	objcache_put(mfd, &sb);
	pthread_mutex_unlock(&objcache.lock);
	return mfd;
}

/* The cache's byte cap (see prof_util.h). */
uint64_t prof_objcache_set_cap(uint64_t cap)
{
	uint64_t old;
	int i;

	objcache_lock();
	old = objcache.cap;
	objcache.cap = cap;
	for (i = 0; i < OBJCACHE_SLOTS && objcache.bytes > cap; i++)
		if (objcache.slot[i].live)
			objcache_drop(&objcache.slot[i]);
	pthread_mutex_unlock(&objcache.lock);
	return old;
}

/* How many copies were made (see prof_util.h). */
uint64_t prof_objcache_copies(void)
{
	uint64_t n;

	objcache_lock();
	n = objcache.copies;
	pthread_mutex_unlock(&objcache.lock);
	return n;
}

/* Close every cached copy (see prof_util.h). */
void prof_objcache_clear(void)
{
	int i;

	objcache_lock();
	for (i = 0; i < OBJCACHE_SLOTS; i++)
		if (objcache.slot[i].live)
			objcache_drop(&objcache.slot[i]);
	pthread_mutex_unlock(&objcache.lock);
}

int prof_open_object(const char *path, char *err, size_t errlen)
{
	int fd, mfd, e;

	if ((fd = prof_open_file(path, 0, NULL, err, errlen)) == -1)
		return -1;
	mfd = prof_copy_object(fd, path, err, errlen);
	e = errno;
	close(fd);
	errno = e;
	return mfd;
}

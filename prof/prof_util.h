/*
 * prof_util — what every file of the profile pipeline uses and nothing of
 * core/ (jm4lw-prof links prof/ alone): hp_grow, the one growth rule of
 * its arrays, and one open-addressing hash table with its two hash
 * functions, one for integers and pointers, one for bytes.
 *
 * The table maps 64-bit keys to 64-bit values: linear probing over a
 * power-of-two array of {key, value} slots, doubled at half full. Two
 * ways to use it:
 *   - the key is the whole key (an address, a pointer, an id):
 *     hmap_get / hmap_put;
 *   - the key is a hash of something bigger (a string, a stack, a pair)
 *     that lives in the caller's own array: hmap_find / hmap_add with the
 *     hash and a function telling whether the value (typically an index
 *     into that array) is the thing sought.
 * A value pointer is good until the next hmap_put / hmap_add.
 */
#ifndef JM4LW_PROF_UTIL_H
#define JM4LW_PROF_UTIL_H

#include <sys/stat.h>

#include <stddef.h>
#include <stdint.h>

/* hp_grow when the array is full: the doubling. */
int hp_grow_more(void **arr, size_t *cap, size_t need, size_t size);

/* Grow *@p arr (of @p size-byte items, *@p cap of them) to hold @p need,
 * doubling: 0, or -1 if memory runs out (the array is left as it was).
 * Inline: the parser calls it once per address of a profile. */
static inline int hp_grow(void **arr, size_t *cap, size_t need, size_t size)
{
	return need <= *cap ? 0 : hp_grow_more(arr, cap, need, size);
}

/* @p x mixed so that every bit of it reaches the low bits a table indexes
 * by (a pointer's low bits are zero): Fibonacci hashing, folded. */
static inline uint64_t hash_int(uint64_t x)
{
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 32);
}

/* FNV-1a of the @p n bytes at @p p. */
uint64_t hash_bytes(const void *p, size_t n);

/* FNV-1a of the string @p s. */
uint64_t hash_str(const char *s);

/* One slot: key 0 is a free one (the key 0 itself is kept aside). */
struct hmap_slot {
	uint64_t key, val;
};

/* The table; all zeros is an empty one. */
struct hmap {
	struct hmap_slot *slot;
	size_t cap, n; /* cap: 0 or a power of two */
	int has_zero;  /* hmap_put's key 0, in zero */
	uint64_t zero;
};

/* Is @p val (an entry's value) the one @p arg describes? */
typedef int hmap_eq_fn(const void *arg, uint64_t val);

/* The value of @p key, or NULL. Inline: the symbolizer's cache asks once
 * per frame of a profile. */
static inline uint64_t *hmap_get(const struct hmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i;
	struct hmap_slot *s;

	if (key == 0 || m->cap == 0)
		return key == 0 && m->has_zero ? (uint64_t *)&m->zero : NULL;
	for (i = (size_t)hash_int(key) & mask;; i = (i + 1) & mask) {
		s = &m->slot[i];
		if (s->key == key)
			return &s->val;
		if (s->key == 0)
			return NULL;
	}
}

/* The value of @p key, added as 0 if new (*@p added says which); NULL
 * when memory runs out. */
uint64_t *hmap_put(struct hmap *m, uint64_t key, int *added);

/* The value of the entry of hash @p hash that @p eq says is @p arg's,
 * or NULL. */
uint64_t *hmap_find(const struct hmap *m, uint64_t hash, hmap_eq_fn *eq,
    const void *arg);

/* The same, added as 0 if there is none (*@p added says which): the
 * caller sets the value. NULL when memory runs out. */
uint64_t *hmap_add(struct hmap *m, uint64_t hash, hmap_eq_fn *eq,
    const void *arg, int *added);

/* Walk the entries: start with *@p it = 0; 1 with the next one's value
 * in *@p val, 0 at the end. In no particular order. */
int hmap_next(const struct hmap *m, size_t *it, uint64_t *val);

/* Forget every entry, keeping the memory. */
void hmap_clear(struct hmap *m);

void hmap_free(struct hmap *m);

/* prof_open_file's flags. */
#define PROF_OPEN_NOFOLLOW 0x1 /* the last component may not be a symlink */
#define PROF_OPEN_OURS 0x2     /* owned by our effective user */

/*
 * The one way the pipeline opens a file it reads (a profile, --binary, an
 * object a dump's MAPPED_LIBRARIES names, a debug file): every such path
 * may be a peer's or another local user's choice. Opened without blocking
 * (a FIFO or a device would block open() or read() forever), then the
 * opened descriptor is checked, never the path again: a regular file
 * only, ours with PROF_OPEN_OURS. The descriptor is then blocking again,
 * close-on-exec, and the only handle later reads use. Its fstat goes to
 * *@p sb if not NULL. The descriptor, or -1 with "PATH: why" in @p err.
 */
int prof_open_file(const char *path, int flags, struct stat *sb, char *err,
    size_t errlen);

/*
 * prof_open_file for an object a library maps (libdwfl maps what it is
 * handed; symbolize_elf.c maps it too): never the file itself. Anyone
 * who can write the file (its owner, root, a deploy's `cp new.so old.so`
 * over a library of ours) can truncate it under a mapping, and the next
 * read through the mapping is a SIGBUS, in the module the host's death.
 * So the file is copied into an anonymous memory file (memfd, not
 * malloc: the module's own memory stays out of the profiles it writes),
 * sealed, and that copy is handed out. A file that changes while it is
 * copied is refused (errno ESTALE). The descriptor, or -1 with
 * "PATH: why" in @p err.
 */
int prof_open_object(const char *path, char *err, size_t errlen);

/* prof_open_object's copy of the file open at @p fd (named @p path in
 * messages), for a file already checked through that descriptor. The
 * copies are cached, process-wide: a file unchanged since (same device,
 * inode, size, mtime and ctime) gets a new descriptor on the same sealed
 * copy; one replaced or rewritten gets a new copy. */
int prof_copy_object(int fd, const char *path, char *err, size_t errlen);

/* The copies' cache keeps at most this many bytes (the copies' pages:
 * they are sparse) unless told otherwise. */
#define PROF_OBJCACHE_CAP_DEFAULT ((uint64_t)64 << 20)

/* Set the cache's byte cap (0: cache nothing), closing copies past it;
 * the cap it had. */
uint64_t prof_objcache_set_cap(uint64_t cap);

/* How many copies prof_copy_object made (cached or not) since the start:
 * what a test of the cache counts. */
uint64_t prof_objcache_copies(void);

/* Close every cached copy (their holders keep theirs). */
void prof_objcache_clear(void);

#endif

/*
 * truncate_shim: LD_PRELOADed into jm4lw-prof or jm4lwd by
 * tests/integration/hostile_dumps.sh, it plays a deploy's `cp new.so
 * old.so` at the worst moment, every time: the first time the process
 * maps the file named by JM4LW_TEST_TRUNCATE, the file is truncated to
 * nothing right after the mapping is made, so the next read through
 * that mapping faults (SIGBUS) unless the mapping is of a copy. A race
 * with a loop of cp is the same bug, but won only now and then.
 */
#include <sys/mman.h>
#include <sys/types.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);

/* Is @p fd the victim? */
static int is_victim(int fd, const char *victim)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof(path) - 1)) <= 0)
		return 0;
	path[n] = '\0';
	return strcmp(path, victim) == 0;
}

/* The real mmap, then the truncation when it mapped the victim. */
static void *shim_mmap(void *addr, size_t len, int prot, int flags, int fd,
    off_t off)
{
	static mmap_fn real;
	static int done;
	const char *victim = getenv("JM4LW_TEST_TRUNCATE");
	void *p;

	if (real == NULL)
		real = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
	p = real(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && fd >= 0 && victim != NULL && !done &&
	    is_victim(fd, victim) && truncate(victim, 0) == 0) {
		done = 1;
		dprintf(2, "truncate_shim: %s truncated after it was mapped\n",
		    victim);
	}
	return p;
}

/* Both names: libelf may call either. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return shim_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return shim_mmap(addr, len, prot, flags, fd, off);
}

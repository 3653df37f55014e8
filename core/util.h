/*
 * util — small helpers the engine and the layers above share: lists,
 * quoting for messages, sizes for people, log lines, dump_dir's absolute
 * and trusted name (core/util.c).
 */
#ifndef JM4LW_UTIL_H
#define JM4LW_UTIL_H

#include <limits.h>
#include <stddef.h>

#define CORE_PATH_MAX (PATH_MAX + 128)

/* Where core sends lines no result carries (retention, sweeps). */
struct core_log {
	void (*fn)(void *arg, int level, const char *msg);
	void *arg;
};

void core_logf(const struct core_log *log, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Is @p c white space (as inih strips it)? */
int is_blank(int c);

/* Cut the white space around s[0..*n); returns the new start. */
const char *trim(const char *s, size_t *n);

/* The next item of a comma-separated list, blanks around it trimmed.
 * Returns its start (length in *n) and moves *s past the comma; *s is
 * NULL after the last item. */
const char *list_next(const char **s, size_t *n);

/* @p s (@p n bytes) in double quotes for a message: bytes that are not
 * printable ASCII as \xNN and a long value cut with "...". */
const char *quote(char *buf, size_t len, const char *s, size_t n);

/* dump_dir as an absolute path without trailing slashes, "%u" as the
 * effective uid; with @p real, resolved through realpath() when it exists.
 * -1 and errno on error. */
int core_dump_dir(const char *dump_dir, int real, char *buf, size_t len);

/* dump_dir where dumps may go: canonical, made (0700) if it names "%u"
 * and is missing, and trusted (core_dump_dir_trusted). 0; -1 with errno;
 * -2 when not trusted, with a one-line @p why. */
int core_dump_dir_safe(const char *dump_dir, char *buf, size_t len, char *why,
    size_t whylen);

/* Is the absolute directory @p dump_dir, and every directory and symlink
 * on the way to it, owned by us or root and not writable by others unless
 * sticky? 0, or -1 with a one-line @p why. */
int core_dump_dir_trusted(const char *dump_dir, char *why, size_t len);

/* A descriptor of its own on file @p fd, for one more reader (a view
 * drawn from a dump's memfd, one more reply's body): the file opened
 * again through /proc, with an offset of its own, else a dup, whose
 * offset is shared (libevent never reads by it: a file segment is mapped,
 * or read at its offset). -1 and errno. */
int fd_again(int fd);

#endif /* JM4LW_UTIL_H */

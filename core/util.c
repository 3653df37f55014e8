/*
 * Small helpers every part of jm4lw shares: lists, quoting for messages, log
 * lines, the dump directory's absolute name.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Is @p c white space as inih strips it? */
int is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
	    c == '\f';
}

/* Cut the white space around s[0..*n); returns the new start. */
const char *trim(const char *s, size_t *n)
{
	while (*n > 0 && is_blank((unsigned char)s[0])) {
		s++;
		(*n)--;
	}
	while (*n > 0 && is_blank((unsigned char)s[*n - 1]))
		(*n)--;
	return s;
}

/* The next comma-separated item, trimmed; *s is NULL after the last. */
const char *list_next(const char **s, size_t *n)
{
	const char *item = *s, *comma = strchr(item, ',');

	if (comma != NULL) {
		*n = (size_t)(comma - item);
		*s = comma + 1;
	} else {
		*n = strlen(item);
		*s = NULL;
	}
	return trim(item, n);
}

/*
 * @p s in double quotes, safe to show: whatever a peer or a file sent,
 * the message stays one short printable line.
 */
const char *quote(char *buf, size_t len, const char *s, size_t n)
{
	size_t i, o = 0;
	unsigned char c;

	buf[o++] = '"';
	for (i = 0; i < n && o + 8 < len; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
	}
	if (i < n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

/* Format a line for the module's log, if it gave core one. */
void core_logf(const struct core_log *log, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (log == NULL || log->fn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log->fn(log->arg, level, buf);
}

/* The one place dump_dir becomes the absolute name replies show; "%u"
 * in it is the effective uid (the default, /tmp/jm4lw-%u, is a private
 * directory per user, as tmux's /tmp/tmux-UID). */
int core_dump_dir(const char *d, int real, char *buf, size_t len)
{
	char cwd[PATH_MAX], res[PATH_MAX], exp[PATH_MAX];
	size_t n, o = 0;
	int r;

	for (; *d != '\0' && o + 12 < sizeof(exp); d++) {
		if (d[0] == '%' && d[1] == 'u') {
			o += (size_t)snprintf(exp + o, sizeof(exp) - o, "%u",
			    (unsigned)geteuid());
			d++;
		} else
			exp[o++] = *d;
	}
	if (*d != '\0') {
		errno = ENAMETOOLONG;
		return -1;
	}
	exp[o] = '\0';
	if (exp[0] == '/')
		r = snprintf(buf, len, "%s", exp);
	else if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	else
		r = snprintf(buf, len, "%s/%s", cwd, exp);
	if (r < 0 || (size_t)r >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (n = strlen(buf); n > 1 && buf[n - 1] == '/'; n--)
		buf[n - 1] = '\0';
	/* The canonical name: no "./" or ".." in a reply. */
	if (real && realpath(buf, res) != NULL && strlen(res) < len)
		memcpy(buf, res, strlen(res) + 1);
	return 0;
}

/*
 * dump_dir as the directory dumps go to, canonical, and only if it is
 * ours to write (core_dump_dir_trusted, on the name as configured and on
 * where it leads: after that nobody else can move it). A dump_dir naming
 * "%u" is made, mode 0700, when it is not there yet. 0; -1 with errno
 * (it is not there, say); -2 when it is not trusted, with @p why.
 */
int core_dump_dir_safe(const char *dump_dir, char *buf, size_t len, char *why,
    size_t whylen)
{
	char abs[PATH_MAX], res[PATH_MAX];

	if (core_dump_dir(dump_dir, 0, abs, sizeof(abs)) == -1)
		return -1;
	if (core_dump_dir_trusted(abs, why, whylen) == -1)
		return -2;
	if (strstr(dump_dir, "%u") != NULL && mkdir(abs, 0700) == -1 &&
	    errno != EEXIST)
		return -1;
	if (realpath(abs, res) == NULL)
		return -1;
	/* Again, now that it exists: what we made, or someone else did. */
	if (core_dump_dir_trusted(abs, why, whylen) == -1 ||
	    core_dump_dir_trusted(res, why, whylen) == -1)
		return -2;
	if (strlen(res) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, res, strlen(res) + 1);
	return 0;
}

/* Symlinks followed at most while checking dump_dir (the kernel's own
 * limit, MAXSYMLINKS). */
#define TRUST_HOPS 40

/*
 * May dumps be written in @p st (named @p path)? Only if nobody but us or
 * root can change it: owned by one of them, and not writable by group or
 * others unless sticky (then others cannot rename what is ours). 0, or
 * -1 with @p why. Our own file where a directory should be passes: the
 * dump then fails with the system's "Not a directory".
 */
static int trusted_node(const char *dir, const char *path,
    const struct stat *st, char *why, size_t len)
{
	/* Another user's file planted at the default path is no directory
	 * (not "a directory owned by uid N", which it is not). */
	const char *what = S_ISLNK(st->st_mode) ? "a symlink"
	    : S_ISDIR(st->st_mode)              ? "a directory"
	    : S_ISREG(st->st_mode)              ? "not a directory but a file"
	                           : "not a directory but a special file";

	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(why, len,
		    "dump_dir %s: %s is %s owned by uid %u, neither us nor "
		    "root: not trusted with dumps",
		    dir, path, what, (unsigned)st->st_uid);
		return -1;
	}
	if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(st->st_mode & S_ISVTX)) {
		snprintf(why, len,
		    "dump_dir %s: %s is writable by others (mode %04o) and "
		    "not sticky: not trusted with dumps",
		    dir, path, (unsigned)(st->st_mode & 07777));
		return -1;
	}
	return 0;
}

/*
 * Is the absolute directory @p dir one only we (or root) control? Walks it
 * as the kernel would, following symlinks, and checks every directory and
 * symlink on the way with trusted_node(): a dump_dir that is, or passes
 * through, something another user owns or may rewrite would let them
 * point our dumps (written by root, often) anywhere. What does not exist
 * yet is fine: the dump then fails, or makes it, as ours. 0, or -1 with
 * @p why.
 *
 * Written here rather than with realpath(): that resolves but cannot say
 * who owned each step.
 */
int core_dump_dir_trusted(const char *dir, char *why, size_t len)
{
	char path[PATH_MAX], rest[2 * PATH_MAX], link[PATH_MAX],
	    tmp[2 * PATH_MAX];
	const char *p, *e;
	struct stat st;
	size_t n, plen;
	ssize_t ln;
	int hops = 0;

	if (snprintf(rest, sizeof(rest), "%s", dir) >= (int)sizeof(rest))
		goto toolong;
	path[0] = '\0';
	plen = 0;
	p = rest;
	for (;;) {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n == 1 && p[0] == '.') {
			p += n;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (plen > 0 && path[plen - 1] != '/')
				plen--;
			if (plen > 0)
				plen--;
			path[plen] = '\0';
			p += n;
			continue;
		}
		if (plen + 1 + n >= sizeof(path))
			goto toolong;
		path[plen] = '/';
		memcpy(path + plen + 1, p, n);
		path[plen + 1 + n] = '\0';
		p += n;
		/* What is not there (or not a directory) cannot be written
		 * through either: the dump then fails with the system's own
		 * reason, as for any missing directory. */
		if (lstat(path, &st) == -1)
			return 0;
		if (trusted_node(dir, path, &st, why, len) == -1)
			return -1;
		if (!S_ISLNK(st.st_mode)) {
			plen += 1 + n;
			continue;
		}
		if (++hops > TRUST_HOPS) {
			snprintf(why, len, "dump_dir %s: %s", dir,
			    strerror(ELOOP));
			return -1;
		}
		if ((ln = readlink(path, link, sizeof(link) - 1)) == -1) {
			snprintf(why, len, "dump_dir %s: %s: %s", dir, path,
			    strerror(errno));
			return -1;
		}
		link[ln] = '\0';
		/* The link's target, then what was left of the walk. */
		if (snprintf(tmp, sizeof(tmp), "%s/%s", link, p) >=
		    (int)sizeof(tmp))
			goto toolong;
		memcpy(rest, tmp, strlen(tmp) + 1);
		p = rest;
		if (link[0] == '/')
			plen = 0;
		path[plen] = '\0';
	}
	/* The root directory itself is root's. */
	return 0;
toolong:
	snprintf(why, len, "dump_dir %s: %s", dir, strerror(ENAMETOOLONG));
	return -1;
}

/* Opened again by /proc/self/fd, else duplicated (see util.h). */
int fd_again(int fd)
{
	char p[64];
	int nfd;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	if ((nfd = open(p, O_RDONLY | O_CLOEXEC)) != -1)
		return nfd;
	return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

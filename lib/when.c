/* The time format of our replies (see when.h). */
#include <sys/stat.h>

#include <stdio.h>
#include <time.h>

#include "when.h"

const char *fmt_time(char *buf, size_t len, time_t t)
{
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "?");
	return buf;
}

long long file_mtime_ns(int fd, const char *path)
{
	struct stat sb;

	if ((fd != -1 ? fstat(fd, &sb) : stat(path, &sb)) == -1)
		return 0;
	return (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
}

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

/* An age: seconds, minutes, hours or days, one decimal (see when.h). */
const char *fmt_age(char *buf, size_t len, double s, int compact)
{
	static const char *const unit[2][4] = {{" s", " min", " h", " d"},
	    {"s", "m", "h", "d"}};
	const char *const *u = unit[compact != 0];

	if (s < 100)
		snprintf(buf, len, "%.1f%s", s, u[0]);
	else if (s < 6000)
		snprintf(buf, len, "%.1f%s", s / 60, u[1]);
	else if (s < 48 * 3600)
		snprintf(buf, len, "%.1f%s", s / 3600, u[2]);
	else
		snprintf(buf, len, "%.1f%s", s / 86400, u[3]);
	return buf;
}

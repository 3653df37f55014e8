/* The time format of our replies (see when.h). */
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

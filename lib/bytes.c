/*
 * The byte formatter (see bytes.h). One decimal is what a person
 * compares at a glance; the callers differ only in sign, in the
 * decimal below 1 KiB and in the largest unit, which are flags rather
 * than formatters of their own, so the units never drift apart.
 */
#include <math.h>
#include <stdio.h>

#include "bytes.h"

const char *fmt_bytes_as(char *buf, size_t len, double n, int how)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB",
	    "PiB", "EiB"};
	const char *sign = "";
	int last = (how & BYTES_UPTO_TIB) ? 4 : 6, i = 0;
	double v = fabs(n);

	if (n < 0)
		sign = "-";
	else if ((how & BYTES_SIGN) && n > 0)
		sign = "+";
	while (v >= 1024 && i < last) {
		v /= 1024;
		i++;
	}
	if (i == 0 && !(how & BYTES_DECIMAL))
		snprintf(buf, len, "%s%.0f B", sign, v);
	else
		snprintf(buf, len, "%s%.1f %s", sign, v, unit[i]);
	return buf;
}

const char *fmt_bytes(char *buf, size_t len, unsigned long long n)
{
	return fmt_bytes_as(buf, len, (double)n, 0);
}

/*
 * sampling — why a profile is empty or partial, in one line every format
 * shows its own way (view.h's view_sampling_note): from the state of
 * sampling the engine saw when it dumped, or offline from the dump alone.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bytes.h"
#include "heapprof.h"
#include "view.h"
#include "when.h"

/* Is @p hp empty: nothing sampled in it (for a difference, in either
 * profile)? */
int view_profile_empty(const struct heap_profile *hp)
{
	size_t k;

	for (k = 0; k < hp->nstacks; k++)
		if (hp->stacks[k].u_bytes != 0 || hp->stacks[k].u_objs != 0 ||
		    hp->stacks[k].b_bytes != 0 || hp->stacks[k].b_objs != 0)
			return 0;
	return 1;
}

/* The 95% error of a sampled total (see view.h). */
double view_sampling_error(const struct heap_profile *hp)
{
	double n;

	if (hp->diff || hp->period == 0 || hp->u_bytes <= 0)
		return 0;
	/* About u_bytes / period samples; a count of n errs by about
	 * sqrt(n), 1.96 of which cover 95%. */
	n = hp->u_bytes / (double)hp->period;
	return n > 0 ? 1.96 / sqrt(n) : 0;
}

/* "sampled estimate, ±N% at 95%", one decimal under 10%. */
const char *view_estimate_of(const struct heap_profile *hp, char *buf,
    size_t len)
{
	double e = view_sampling_error(hp);

	if (e <= 0)
		return NULL;
	snprintf(buf, len, "sampled estimate, \xc2\xb1%.*f%% at 95%%",
	    e < 0.1 ? 1 : 0, e * 100 > 999 ? 999 : e * 100);
	return buf;
}

/* " since TIME", or since the start, or nothing (@p s's). */
static const char *since_of(const struct view_sampling *s, char *buf,
    size_t len)
{
	char t[64];

	if (s->since_ns > 0)
		snprintf(buf, len, " since %s%s",
		    fmt_time(t, sizeof(t), (time_t)(s->since_ns / 1000000000)),
		    s->since_reset ? " (prof.reset)" : "");
	else if (s->from_start)
		snprintf(buf, len, " since the process started");
	else
		buf[0] = '\0';
	return buf;
}

/* "one allocation per 512.0 KiB allocated (lg_prof_sample=19)". */
static const char *interval_of(unsigned long long iv, char *buf, size_t len)
{
	char b[32];

	if (iv == 0)
		snprintf(buf, len, "one allocation per sample interval");
	else
		snprintf(buf, len,
		    "one allocation per %s allocated on average "
		    "(lg_prof_sample=%d)",
		    fmt_bytes(b, sizeof(b), iv), (int)lround(log2((double)iv)));
	return buf;
}

/* One line on why @p hp is empty or partial (see view.h). */
const char *view_sampling_note(const struct heap_profile *hp,
    const struct view_args *a, char *buf, size_t len)
{
	const struct view_sampling *s = &a->sampling;
	unsigned long long iv = s->interval != 0 ? s->interval
	    : hp != NULL                         ? hp->period
	                                         : 0;
	int empty = hp != NULL && view_profile_empty(hp);
	char since[96], ivs[128];
	size_t n = 0;

	buf[0] = '\0';
	if (s->other_base)
		n += (size_t)snprintf(buf, len,
		    "the base is another process's dump: this difference "
		    "compares two processes; ");
	if (n >= len)
		n = len - 1;
	switch (s->state) {
	case SAMPLING_OFF:
		snprintf(buf + n, len - n,
		    "heap profiling is off in this process (opt.prof is "
		    "false), so nothing is sampled: start it with "
		    "MALLOC_CONF=prof:true,prof_active:false%s%s",
		    s->start_with != NULL ? " and " : "",
		    s->start_with != NULL ? s->start_with : "");
		break;
	case SAMPLING_INACTIVE:
		snprintf(buf + n, len - n,
		    "sampling is inactive (prof.active is false)%s: "
		    "nothing allocated since then is sampled%s%s",
		    since_of(s, since, sizeof(since)),
		    s->turn_on != NULL ? "; " : "",
		    s->turn_on != NULL ? s->turn_on : "");
		break;
	case SAMPLING_ACTIVE:
		if (empty)
			snprintf(buf + n, len - n,
			    "no sample yet: jemalloc samples %s, and none "
			    "sampled%s is still live; allocate more, or "
			    "sample more often (prof_reset_lg_sample, then "
			    "jmrs)",
			    interval_of(iv, ivs, sizeof(ivs)),
			    s->since_ns > 0 ? since_of(s, since, sizeof(since))
			                    : "");
		else if (s->since_ns > 0)
			snprintf(buf + n, len - n,
			    "sampling active%s: allocations made before "
			    "then are not in this profile",
			    since_of(s, since, sizeof(since)));
		else if (n > 0)
			buf[n - 2] = '\0';
		break;
	default:
		if (empty)
			snprintf(buf + n, len - n,
			    "no samples in this dump (sampling was inactive, "
			    "or none of the allocations it sampled, %s, was "
			    "still live)",
			    interval_of(iv, ivs, sizeof(ivs)));
		else if (n > 0)
			buf[n - 2] = '\0';
	}
	return buf[0] != '\0' ? buf : NULL;
}

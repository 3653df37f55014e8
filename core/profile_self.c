/*
 * profile_self — addresses of this process named against its mappings
 * now: /pprof/symbol's lookup and the recent allocations' stacks, on the
 * worker.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapprof.h"
#include "prof_util.h"
#include "profile.h"
#include "profile_int.h"
#include "recent.h"
#include "recentjob.h"
#include "symbolize.h"
#include "util.h"
#include "view.h"

long profile_parse_addrs(const char *addrs, size_t len, uint64_t *out,
    size_t max, char *err, size_t errlen)
{
	const char *p = addrs, *end = addrs + len, *tok;
	char shown[64];
	uint64_t v;
	size_t n = 0;
	int digits;

	for (;;) {
		while (p < end &&
		    (*p == '+' || *p == ' ' || *p == '\t' || *p == '\r' ||
		        *p == '\n'))
			p++;
		if (p == end)
			return (long)n;
		tok = p;
		if (end - p < 3 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
			goto bad;
		for (p += 2, v = 0, digits = 0;
		     p < end && isxdigit((unsigned char)*p); p++, digits++) {
			if (digits == 16)
				goto bad; /* wider than 64 bits */
			v = v << 4 |
			    (uint64_t)(isdigit((unsigned char)*p)
			            ? *p - '0'
			            : (tolower((unsigned char)*p) - 'a' + 10));
		}
		if (digits == 0 ||
		    (p < end && *p != '+' && !isspace((unsigned char)*p)))
			goto bad;
		if (n == max) {
			snprintf(err, errlen,
			    "too many addresses (at most %zu at a time)", max);
			return -1;
		}
		out[n++] = v;
	}
bad:
	while (p < end && *p != '+' && !isspace((unsigned char)*p))
		p++;
	snprintf(err, errlen,
	    "%s is not an address (want 0x<hex> separated by +)",
	    quote(shown, sizeof(shown), tok, (size_t)(p - tok)));
	return -1;
}

/* The process's own mappings, as a heap profile the symbolizer reads:
 * what a dump's MAPPED_LIBRARIES would say now. */
static int profile_self_maps(struct heap_profile *hp, char *err, size_t errlen)
{
	static const char head[] = "heap_v2/1\nMAPPED_LIBRARIES:\n";
	char *buf = NULL, chunk[16384];
	size_t len = 0, cap = 0, n;
	FILE *f;
	int r = -1;

	if ((f = fopen("/proc/self/maps", "re")) == NULL) {
		snprintf(err, errlen, "/proc/self/maps: %s", strerror(errno));
		return -1;
	}
	if (hp_grow((void **)&buf, &cap, sizeof(head), 1) == 0) {
		memcpy(buf, head, sizeof(head) - 1);
		len = sizeof(head) - 1;
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			if (hp_grow((void **)&buf, &cap, len + n, 1) == -1)
				break;
			memcpy(buf + len, chunk, n);
			len += n;
		}
		if (!ferror(f) && n == 0)
			r = heapprof_parse(buf, len, hp, err, errlen);
		else
			snprintf(err, errlen, "/proc/self/maps: %s",
			    strerror(ferror(f) ? EIO : ENOMEM));
	} else
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	free(buf);
	fclose(f);
	return r;
}

int profile_symbols(struct profile_ctx *c, const char *addrs, size_t len,
    FILE *out, char *err, size_t errlen)
{
	struct sym_frame fr[SYM_INLINE_MAX];
	struct heap_profile hp;
	struct symbolizer *sym;
	uint64_t *pcs;
	long n, i;
	int k, nf;

	/* At most one address per 3 bytes ("0x1+"): no bigger array. */
	if ((pcs = calloc(len / 3 + 1, sizeof(*pcs))) == NULL) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	if ((n = profile_parse_addrs(addrs, len, pcs, PROFILE_ADDRS_MAX, err,
	         errlen)) == -1) {
		free(pcs);
		return PROFILE_BAD_ADDRS;
	}
	if (profile_self_maps(&hp, err, errlen) == -1) {
		free(pcs);
		return -1;
	}
	if ((sym = profile_sym(c, &hp, err, errlen)) == NULL) {
		heapprof_free(&hp);
		free(pcs);
		return -1;
	}
	for (i = 0; i < n; i++) {
		/* Callers come adjusted (pc - 1): look each up as is. */
		nf = sym_lookup(sym, pcs[i], 1, fr, SYM_INLINE_MAX);
		fprintf(out, "0x%llx ", (unsigned long long)pcs[i]);
		for (k = nf; k-- > 0;)
			fprintf(out, "%s%s", fr[k].name, k ? "--" : "\n");
	}
	sym_free(sym);
	heapprof_free(&hp);
	free(pcs);
	if (ferror(out)) {
		snprintf(err, errlen, "cannot write the symbols: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

int profile_recent(struct profile_ctx *c, const char *buf, size_t len,
    const struct profile_recent_args *a, FILE *out, char *err, size_t errlen)
{
	struct recent_opts o = {.live_only = a->live_only,
	    .min_size = a->min_size,
	    .now_ns = a->now_ns,
	    .cap_bytes = RECENT_JSON_MAX};
	struct view_args va = {.sampling = c->sampling};
	struct heap_profile hp;
	struct symbolizer *sym;
	struct recent r;
	char note[512];
	int rv;

	o.note = view_sampling_note(NULL, &va, note, sizeof(note));
	if (recent_parse(buf != NULL ? buf : "", len, a->cut, &r, err,
	        errlen) == -1)
		return -1;
	/* The records' addresses are this process's: its mappings now, as
	 * for a symbol lookup. */
	if (profile_self_maps(&hp, err, errlen) == -1) {
		recent_free(&r);
		return -1;
	}
	if ((sym = profile_sym(c, &hp, err, errlen)) == NULL) {
		heapprof_free(&hp);
		recent_free(&r);
		return -1;
	}
	rv = a->json ? recent_render_json(out, &r, sym, &o)
	             : recent_render_text(out, &r, sym, &o);
	if (rv == -1)
		snprintf(err, errlen, "cannot write the recent allocations: %s",
		    strerror(errno ? errno : EIO));
	sym_free(sym);
	heapprof_free(&hp);
	recent_free(&r);
	return rv;
}

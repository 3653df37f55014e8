/*
 * job_symbols — name the addresses of a request body (/pprof/symbol,
 * jeprof's and go tool pprof's symbol lookup), into a body file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "body.h"
#include "job.h"
#include "profile.h"
#include "reason.h"

/* A free worker (no rate limit: jeprof asks right after its dump); the
 * job owns a copy of the addresses. */
static int symbols_admit(const struct job_kind *k, struct core *c,
    struct job *j, struct dumper *d, const struct job_req *req,
    struct dump_result *r)
{
	struct job_symbols_state *s = &j->state.symbols;
	const char *addrs = req->addrs != NULL ? req->addrs : "";
	size_t len = req->addrs_len;

	if (job_free_admit(k, c, j, d, r) == -1)
		return -1;
	if ((s->addrs = malloc(len + 1)) == NULL) {
		dump_why(r, DUMP_FAILED, REASON_FAILED, ENOMEM, "%s failed: %s",
		    k->name, strerror(ENOMEM));
		return -1;
	}
	memcpy(s->addrs, addrs, len);
	s->len = len;
	dump_begin(c);
	return 0;
}

/* The addresses named, one a line. */
static int symbols_render(struct job *j, const char *dump, FILE *out, char *err,
    size_t errlen)
{
	const struct job_symbols_state *s = &j->state.symbols;

	(void)dump;
	return profile_symbols(&j->prof, s->addrs, s->len, out, err, errlen);
}

/* The copy of the addresses. */
static void symbols_release(struct job *j)
{
	free(j->state.symbols.addrs);
	j->state.symbols.addrs = NULL;
	j->state.symbols.len = 0;
}

const struct job_kind job_symbols = {
    .name = "symbol lookup",
    .admit = symbols_admit,
    .steps = {body_answer},
    .render = symbols_render,
    .release = symbols_release,
    .counted = 1,
};

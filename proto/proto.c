/*
 * Framing and dispatch of the four-letter words. No I/O happens here: the
 * server hands in bytes and gets a reply through struct out.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "answer.h"
#include "core.h"
#include "dumper.h"
#include "job.h"
#include "proto.h"
#include "reason.h"
#include "result.h"
#include "util.h"

/* What core's lines say a person can do next, in words. */
const struct core_hints proto_hints = {
    .base_kept_by = "jmfp and jmdf keep one",
    .base_next = "the next jmdf compares with this one",
    .sampling_on = "jmep turns it on",
    .sampling_start = "send jmep to start sampling",
};

/* The face over @p core, whose lines name our words; host words come
 * later, from the host. */
void proto_init(struct proto *p, struct core *core, struct dumper *dumper)
{
	memset(p, 0, sizeof(*p));
	p->core = core;
	p->dumper = dumper;
	core->hints = &proto_hints;
}

/* Copy out the word once 4 bytes are there; never look past them. */
size_t proto_frame(const void *buf, size_t len, char word[4])
{
	if (len < 4)
		return 0;
	memcpy(word, buf, 4);
	return 4;
}

/* Exact 4-byte match against the table: no prefixes, no case folding. */
const struct proto_word *proto_lookup(const char word[4])
{
	const struct proto_word *w;

	for (w = proto_words; w->name != NULL; w++)
		if (memcmp(w->name, word, 4) == 0)
			return w;
	return NULL;
}

/* Match @p word against the allow list (normalised by the config). */
int proto_allowed(const char *allow, const char word[4], int flags)
{
	const char *s = allow, *item;
	size_t n;

	while (s != NULL) {
		item = list_next(&s, &n);
		if (n == 1 && *item == '*')
			return 1;
		if (n == 8 && memcmp(item, "readonly", 8) == 0 &&
		    !(flags & PROTO_F_MUTATES))
			return 1;
		if (n == 4 && memcmp(item, word, 4) == 0)
			return 1;
	}
	return 0;
}

/* 4 printable ASCII bytes, none of them a separator of the allow list. */
int proto_word_valid(const char *word)
{
	int i;

	for (i = 0; i < 4; i++)
		if (word[i] <= ' ' || word[i] > '~' || word[i] == ',')
			return 0;
	return word[4] == '\0';
}

/* Add or replace a host word. */
int proto_add_word(struct proto *p, const char *word, jm4lw_word_fn fn,
    void *arg, int flags)
{
	struct proto_hostword *h;
	int i;

	if (word == NULL || !proto_word_valid(word) || fn == NULL)
		return -1;
	for (i = 0; i < p->nhost; i++)
		if (memcmp(p->host[i].name, word, 4) == 0)
			break;
	if (i == PROTO_HOST_MAX)
		return -1;
	h = &p->host[i];
	memcpy(h->name, word, 5);
	h->fn = fn;
	h->arg = arg;
	h->flags = flags & PROTO_F_MUTATES;
	if (i == p->nhost)
		p->nhost++;
	return 0;
}

/* The host word named @p word, or NULL. */
static struct proto_hostword *host_lookup(struct proto *p, const char word[4])
{
	int i;

	for (i = 0; i < p->nhost; i++)
		if (memcmp(p->host[i].name, word, 4) == 0)
			return &p->host[i];
	return NULL;
}

/* Has the host added @p word? */
int proto_word_flags(struct proto *p, const char word[4],
    const struct proto_word **builtin)
{
	const struct proto_hostword *h;

	*builtin = NULL;
	if ((h = host_lookup(p, word)) != NULL)
		return h->flags;
	if ((*builtin = proto_lookup(word)) != NULL)
		return (*builtin)->flags;
	return -1;
}

int proto_host_known(struct proto *p, const char word[4])
{
	return host_lookup(p, word) != NULL;
}

/* The reply to a word we do not know: show it safely, list what we know. */
static void reply_unknown(struct proto *p, struct out *out, const char word[4])
{
	const struct proto_word *w;
	char shown[32]; /* 4 bytes as \xNN, quoted, and room to spare */
	int i;

	out_printf(out, JM4LW_ERROR_PREFIX "unknown word %s; known words:",
	    quote(shown, sizeof(shown), word, 4));
	for (w = proto_words; w->name != NULL; w++)
		if (host_lookup(p, w->name) == NULL)
			out_printf(out, " %s", w->name);
	for (i = 0; i < p->nhost; i++)
		out_printf(out, " %s", p->host[i].name);
	out_write(out, "\n", 1);
}

/* A host word's reply, held whole until its handler returns, so that one
 * over JM4LW_REPLY_MAX can be dropped rather than half sent. */
struct host_reply {
	char *buf;
	size_t len, cap;
	int over; /* went past JM4LW_REPLY_MAX: dropped */
};

/* The struct out write for a host word: append, or drop it all once the
 * reply would pass JM4LW_REPLY_MAX. */
static void host_reply_write(void *arg, const void *buf, size_t len)
{
	struct host_reply *h = arg;
	size_t want = h->len + len, cap;
	char *nb;

	if (h->over)
		return;
	if (want > JM4LW_REPLY_MAX || want < h->len) {
		free(h->buf);
		*h = (struct host_reply){.over = 1};
		return;
	}
	if (want > h->cap) {
		cap = h->cap ? h->cap : 4096;
		while (cap < want)
			cap *= 2;
		if ((nb = realloc(h->buf, cap)) == NULL) {
			free(h->buf);
			*h = (struct host_reply){.over = 1};
			return;
		}
		h->buf = nb;
		h->cap = cap;
	}
	memcpy(h->buf + h->len, buf, len);
	h->len = want;
}

/* Run host word @p h; its reply goes to @p out whole, or as one error
 * line if it passed JM4LW_REPLY_MAX. */
static int host_run(struct proto *p, const struct proto_hostword *h,
    struct out *out)
{
	struct host_reply hr = {0};
	struct out held = {.write = host_reply_write, .arg = &hr};
	struct jm4lw_reply r = {.p = p, .out = &held};
	int rv = h->fn(&r, h->arg) == 0 ? PROTO_OK : PROTO_ERROR;

	if (hr.over) {
		out_printf(out,
		    JM4LW_ERROR_PREFIX "the reply of %s was over %u bytes "
		                       "(JM4LW_REPLY_MAX) or out of memory, "
		                       "and was dropped\n",
		    h->name, JM4LW_REPLY_MAX);
		return PROTO_ERROR;
	}
	out_write(out, hr.buf, hr.len);
	free(hr.buf);
	return rv;
}

/* The job word @p w asks for: its row's kind, answer and view, named after it. */
static void word_req(const struct proto_word *w, struct job_req *req)
{
	memset(req, 0, sizeof(*req));
	req->kind = w->job;
	req->who = w->name;
	req->answer = w->answer;
	req->view = w->view;
	req->cause = CAUSE_WORD;
}

/* Run one word: a host word, a built-in, unknown, or refused. */
int proto_dispatch(struct proto *p, const char word[4], struct out *out,
    struct proto_result *res)
{
	struct core_stats *st = &p->core->st;
	const struct proto_hostword *h;
	const struct proto_word *w = NULL;
	const char *name;
	int flags, rv;

	memset(res, 0, sizeof(*res));
	st->words_served++;
	if ((h = host_lookup(p, word)) != NULL) {
		name = h->name;
		flags = h->flags;
	} else if ((w = proto_lookup(word)) != NULL) {
		name = w->name;
		flags = w->flags;
	} else {
		st->words_unknown++;
		reply_unknown(p, out, word);
		res->why = REASON_UNKNOWN;
		return PROTO_ERROR;
	}
	if (!proto_allowed(p->core->cfg->allow, word, flags)) {
		/* Only table names reach this format, never network bytes. */
		st->words_refused++;
		out_printf(out, "%s" JM4LW_NOT_ALLOWED "\n", name);
		res->why = REASON_NOT_ALLOWED;
		return PROTO_ERROR;
	}
	if (w != NULL && w->job != NULL) {
		word_req(w, &res->req);
		return PROTO_JOB;
	}
	p->why = REASON_NONE;
	if (h != NULL)
		rv = host_run(p, h, out);
	else
		rv = w->fn(p, out);
	/* A handler that failed without saying why: it failed. */
	if (rv == PROTO_ERROR)
		res->why = p->why != REASON_NONE ? p->why : REASON_FAILED;
	return rv;
}

JM4LW_API void jm4lw_reply_write(struct jm4lw_reply *r, const void *buf,
    size_t len)
{
	if (r == NULL || buf == NULL)
		return;
	out_write(r->out, buf, len);
}

JM4LW_API void jm4lw_reply_printf(struct jm4lw_reply *r, const char *fmt, ...)
{
	va_list ap;

	if (r == NULL || fmt == NULL)
		return;
	va_start(ap, fmt);
	out_vprintf(r->out, fmt, ap);
	va_end(ap);
}

JM4LW_API int jm4lw_reply_error(struct jm4lw_reply *r, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	size_t n;

	if (r == NULL || fmt == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One line, whatever the host passed in. */
	for (n = 0; buf[n] != '\0'; n++)
		if (buf[n] == '\n' || buf[n] == '\r')
			buf[n] = ' ';
	out_printf(r->out, JM4LW_ERROR_PREFIX "%s\n", buf);
	return -1;
}

JM4LW_API int jm4lw_reply_builtin(struct jm4lw_reply *r, const char *word)
{
	const struct proto_word *w;
	struct dump_result *d;
	struct job_req req;
	char buf[16384];
	ssize_t n;
	int rv;

	if (r == NULL || word == NULL || strlen(word) != 4 ||
	    (w = proto_lookup(word)) == NULL)
		return -1;
	if (w->job == NULL)
		return w->fn(r->p, r->out) == PROTO_OK ? 0 : -1;
	/* The host asked for the reply now: the dump runs in place, on its
	 * loop (admission still keeps it to one dump at a time). */
	if ((d = malloc(sizeof(*d))) == NULL)
		return jm4lw_reply_error(r, "%s", strerror(errno));
	word_req(w, &req);
	core_job_sync(r->p->core, r->p->dumper, &req, d);
	if (d->status == DUMP_OK && d->body)
		while ((n = read(d->body_fd, buf, sizeof(buf))) > 0)
			out_write(r->out, buf, (size_t)n);
	rv = answer_dump(r->out, d);
	dump_result_release(d);
	free(d);
	return rv;
}

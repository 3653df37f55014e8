/*
 * Framing and dispatch of the four-letter words. No I/O happens here: the
 * server hands in bytes and gets a reply through struct proto_out.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto.h"

/* Start counting uptime and remember where the allocator and config are. */
void proto_init(struct proto *p, const struct proto_ops *ops,
    const struct jm4lw_config *cfg)
{
	memset(p, 0, sizeof(*p));
	p->ops = ops;
	p->cfg = cfg;
	p->mode = "standalone";
	clock_gettime(CLOCK_MONOTONIC, &p->started);
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

/* Match @p word against "*" or a comma list; spaces around items are ok. */
int proto_allowed(const char *allow, const char word[4])
{
	const char *s = allow, *e;

	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == ',')
			s++;
		if (*s == '\0')
			return 0;
		e = s;
		while (*e != '\0' && *e != ',' && *e != ' ' && *e != '\t')
			e++;
		if (e - s == 1 && *s == '*')
			return 1;
		if (e - s == 4 && memcmp(s, word, 4) == 0)
			return 1;
		s = e;
	}
}

/* Append raw bytes to the reply. */
void out_write(struct proto_out *out, const void *buf, size_t len)
{
	if (len > 0)
		out->write(out->arg, buf, len);
}

/* Append formatted text; replies are short, longer ones go in pieces. */
void out_printf(struct proto_out *out, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1; /* callers keep lines well under 1 KiB */
	out_write(out, buf, (size_t)n);
}

/* The reply to a word we do not know: show it safely, list what we know. */
static void reply_unknown(struct proto_out *out, const char word[4])
{
	const struct proto_word *w;
	char shown[4 * 4 + 1], *d = shown;
	int i;

	for (i = 0; i < 4; i++) {
		unsigned char c = (unsigned char)word[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			*d++ = (char)c;
		else
			d += snprintf(d, 5, "\\x%02x", c);
	}
	*d = '\0';
	out_printf(out, JM4LW_ERROR_PREFIX "unknown word \"%s\"; known words:",
	    shown);
	for (w = proto_words; w->name != NULL; w++)
		out_printf(out, " %s", w->name);
	out_write(out, "\n", 1);
}

/* Run one word: unknown, refused by the allow list, or its handler. */
int proto_dispatch(struct proto *p, const char word[4], struct proto_out *out)
{
	const struct proto_word *w;

	p->st.words_served++;
	if ((w = proto_lookup(word)) == NULL) {
		p->st.words_unknown++;
		reply_unknown(out, word);
		return PROTO_ERROR;
	}
	if (!proto_allowed(p->cfg->allow, word)) {
		/* Only table names reach this format, never network bytes. */
		p->st.words_refused++;
		out_printf(out, "%s" JM4LW_NOT_ALLOWED "\n", w->name);
		return PROTO_ERROR;
	}
	return w->fn(p, out);
}

/*
 * A dump job's answer after its body, the same on the words' port and
 * over HTTP (a word's route): the new dump's path where the view keeps
 * one (jmfp, jmdf after its table), or the one error line.
 */
#include "answer.h"
#include "jm4lw.h"
#include "result.h"
#include "view.h"

/* The path, or the error line; a view's body (jmtp's table, jmfg's
 * SVG) is the face's to send first, from r->body_fd. */
int answer_dump(struct out *out, const struct dump_result *r)
{
	if (r->status != DUMP_OK) {
		out_printf(out, JM4LW_ERROR_PREFIX "%s\n", r->reason);
		return -1;
	}
	if (dump_keeps(r)) /* jmfp, jmdf: where the dump is */
		out_printf(out, "%s\n", r->path);
	return 0;
}

/* ANSWER_DUMP's text cell. */
void answer_dump_text(struct out *out, const struct dump_result *r)
{
	(void)answer_dump(out, r);
}

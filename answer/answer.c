/*
 * The table of answers x formats (see answer.h): one row per answer, a
 * render function per cell. Adding a format to an answer is a cell here
 * and its function in the answer's file; the face that wants it names
 * the format, and nothing else moves.
 */
#include "answer.h"

/* Columns in enum answer_format's order: text, JSON, Prometheus. */
const struct answer answers[ANSWER_KINDS] = {
    [ANSWER_DOCTOR] = {"doctor",
        {answer_doctor_text, answer_doctor_json, answer_doctor_prometheus}},
    [ANSWER_HISTORY] = {"history",
        {answer_history_text, answer_history_json, NULL}},
    [ANSWER_FIGURES] = {"figures",
        {answer_figures_text, answer_figures_json, answer_figures_prometheus}},
    [ANSWER_SUMMARY] = {"summary", {answer_summary_text, NULL, NULL}},
    [ANSWER_DUMPS] = {"dumps", {answer_dumps_text, answer_dumps_json, NULL}},
    [ANSWER_DUMP] = {"dump", {answer_dump_text, NULL, NULL}},
};

int answer_render(enum answer_kind kind, enum answer_format format,
    const void *result, struct out *out)
{
	answer_fn *fn;

	if ((unsigned)kind >= ANSWER_KINDS ||
	    (unsigned)format >= ANSWER_FORMATS ||
	    (fn = answers[kind].render[format]) == NULL)
		return -1;
	fn(out, result);
	return 0;
}

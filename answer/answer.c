/*
 * The table of answers x formats (see answer.h): one row per answer, a
 * render function per cell, of the row's type. Adding a format to an
 * answer is a cell here and its function in the answer's file; the face
 * that wants it names the format, and nothing else moves.
 */
#include "answer.h"

/* Columns in enum answer_format's order: text, JSON, Prometheus. */
const struct answer answers[ANSWER_KINDS] = {
    [ANSWER_DOCTOR] = {"doctor",
        .doctor = {answer_doctor_text, answer_doctor_json,
            answer_doctor_prometheus}},
    [ANSWER_HISTORY] = {"history",
        .history = {answer_history_text, answer_history_json, NULL}},
    [ANSWER_FIGURES] = {"figures",
        .figures = {answer_figures_text, answer_figures_json,
            answer_figures_prometheus}},
    [ANSWER_SUMMARY] = {"summary",
        .figures = {answer_summary_text, NULL, NULL}},
    [ANSWER_DUMPS] = {"dumps",
        .dumps = {answer_dumps_text, answer_dumps_json, NULL}},
    [ANSWER_DUMP] = {"dump", .dump = {answer_dump_text, NULL, NULL}},
};

/* The row's cell of its own type, looked at as the row's kind says. */
int answer_has(enum answer_kind kind, enum answer_format format)
{
	const struct answer *a;

	if ((unsigned)kind >= ANSWER_KINDS ||
	    (unsigned)format >= ANSWER_FORMATS)
		return 0;
	a = &answers[kind];
	switch (kind) {
	case ANSWER_DOCTOR:
		return a->doctor[format] != NULL;
	case ANSWER_HISTORY:
		return a->history[format] != NULL;
	case ANSWER_FIGURES:
	case ANSWER_SUMMARY:
		return a->figures[format] != NULL;
	case ANSWER_DUMPS:
		return a->dumps[format] != NULL;
	case ANSWER_DUMP:
		return a->dump[format] != NULL;
	default:
		return 0;
	}
}

/* The doctor in @p format, through its row's cell. */
int answer_doctor(struct out *out, enum answer_format format,
    const struct doctor *d)
{
	if (!answer_has(ANSWER_DOCTOR, format))
		return -1;
	answers[ANSWER_DOCTOR].doctor[format](out, d);
	return 0;
}

/* The history in @p format, through its row's cell. */
int answer_history(struct out *out, enum answer_format format,
    const struct answer_history *a)
{
	if (!answer_has(ANSWER_HISTORY, format))
		return -1;
	answers[ANSWER_HISTORY].history[format](out, a);
	return 0;
}

/* The figures in @p format, through its row's cell. */
int answer_figures(struct out *out, enum answer_format format,
    const struct answer_figures *a)
{
	if (!answer_has(ANSWER_FIGURES, format))
		return -1;
	answers[ANSWER_FIGURES].figures[format](out, a);
	return 0;
}

/* srvr's summary in @p format, through its row's cell. */
int answer_summary(struct out *out, enum answer_format format,
    const struct answer_figures *a)
{
	if (!answer_has(ANSWER_SUMMARY, format))
		return -1;
	answers[ANSWER_SUMMARY].figures[format](out, a);
	return 0;
}

/* The kept dumps in @p format, through its row's cell. */
int answer_dumps(struct out *out, enum answer_format format,
    const struct answer_dumps *a)
{
	if (!answer_has(ANSWER_DUMPS, format))
		return -1;
	answers[ANSWER_DUMPS].dumps[format](out, a);
	return 0;
}

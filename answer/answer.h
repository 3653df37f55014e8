/*
 * answer — every answer that is not a profile, rendered in one place: the
 * doctor, the figures' history, the figures themselves (and srvr's
 * summary of them) and the kept dumps, each as text (a word's reply), JSON (an
 * HTTP route's) and Prometheus' text format (/metrics) where that format exists
 * for it. A face asks core for the typed result, chooses the format and hands
 * both to the answer's own call (answer_doctor, answer_history...) with
 * where the bytes go; it words nothing itself. Above core (whose results it
 * reads), below proto/ and http/.
 */
#ifndef JM4LW_ANSWER_H
#define JM4LW_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"

struct view_sampling;

struct doctor;
struct dump_list;
struct dump_result;
struct figure_value;
struct history;
struct answer_history;
struct answer_figures;
struct answer_dumps;

/* What is answered: the row of the table. */
enum answer_kind {
	ANSWER_DOCTOR,  /* a doctor that is d->ok */
	ANSWER_HISTORY, /* the history's ring, h->ring set */
	ANSWER_FIGURES, /* the figures */
	ANSWER_SUMMARY, /* the same: srvr's few of them, and the mode */
	ANSWER_DUMPS,   /* the kept dumps */
	ANSWER_DUMP,    /* a dump job's tail */
	ANSWER_KINDS
};

/* How: the column of the table. */
enum answer_format {
	ANSWER_TEXT,       /* a word's reply */
	ANSWER_JSON,       /* a route's body, one object and "\n" */
	ANSWER_PROMETHEUS, /* families for /metrics, text format 0.0.4 */
	ANSWER_FORMATS
};

/* The cells of each row's type: its result onto @p out. */
typedef void answer_doctor_fn(struct out *out, const struct doctor *d);
typedef void answer_history_fn(struct out *out, const struct answer_history *a);
typedef void answer_figures_fn(struct out *out, const struct answer_figures *a);
typedef void answer_dumps_fn(struct out *out, const struct answer_dumps *a);
typedef void answer_dump_fn(struct out *out, const struct dump_result *r);

/* One row: its name (for messages) and a cell per format, NULL where
 * the answer has no such rendering; the cells are the member of the
 * row's kind. */
struct answer {
	const char *name;
	union {
		answer_doctor_fn *doctor[ANSWER_FORMATS];
		answer_history_fn *history[ANSWER_FORMATS];
		answer_figures_fn *figures[ANSWER_FORMATS]; /* and SUMMARY */
		answer_dumps_fn *dumps[ANSWER_FORMATS];
		answer_dump_fn *dump[ANSWER_FORMATS];
	};
};

/* The table, indexed by enum answer_kind. */
extern const struct answer answers[ANSWER_KINDS];

/* Has answer @p kind a cell for @p format? */
int answer_has(enum answer_kind kind, enum answer_format format);

/* Render the result as its answer in @p format onto @p out, one call per
 * answer: 0, or -1 (nothing written) when there is no such cell. */
int answer_doctor(struct out *out, enum answer_format format,
    const struct doctor *d);
int answer_history(struct out *out, enum answer_format format,
    const struct answer_history *a);
int answer_figures(struct out *out, enum answer_format format,
    const struct answer_figures *a);
int answer_summary(struct out *out, enum answer_format format,
    const struct answer_figures *a);
int answer_dumps(struct out *out, enum answer_format format,
    const struct answer_dumps *a);

/* ANSWER_HISTORY: the ring, and for JSON only the rows after @p since
 * (seconds since the epoch; 0: every row). */
struct answer_history {
	const struct history *h;
	uint64_t since;
};

/* ANSWER_FIGURES, ANSWER_SUMMARY: the figures' values (figures_read's,
 * figures_count of them) and what runs (jm4lw_build_info, srvr). */
struct answer_figures {
	const struct figure_value *v;
	const char *jemalloc;   /* core_version() */
	const char *symbolizer; /* the backend this build symbolizes with */
	const char *mode;       /* core->mode: how the module runs (srvr) */
	/* The state of sampling (core_sampling), for /jemalloc/status's
	 * "sampling"; NULL: not said. */
	const struct view_sampling *sampling;
};

/* ANSWER_DUMPS: the kept dumps, and the prefix they are named with. */
struct answer_dumps {
	const struct dump_list *l;
	const char *prefix;
};

/* ANSWER_DUMP, typed: what follows a dump job's body, if any, on either
 * face: the new dump's path where the view keeps one (jmfp, jmdf), or
 * the error line. 0, or -1 when it was the error line. */
int answer_dump(struct out *out, const struct dump_result *r);

/* The cells, one file per answer (the table's rows). */
answer_doctor_fn answer_doctor_text, answer_doctor_json,
    answer_doctor_prometheus;
answer_history_fn answer_history_text, answer_history_json;
answer_figures_fn answer_figures_text, answer_figures_json,
    answer_figures_prometheus, answer_summary_text;
answer_dumps_fn answer_dumps_text, answer_dumps_json;
answer_dump_fn answer_dump_text;

#endif

/*
 * answer — every answer that is not a profile, rendered in one place: the
 * doctor, the figures' history, the figures themselves (and srvr's
 * summary of them) and the kept dumps, each as text (a word's reply), JSON (an
 * HTTP route's) and Prometheus' text format (/metrics) where that format exists
 * for it. A face asks core for the typed result, chooses the format and hands
 * both to answer_render with where the bytes go; it words nothing
 * itself. Above core (whose results it reads), below proto/ and http/.
 */
#ifndef JM4LW_ANSWER_H
#define JM4LW_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"

struct view_sampling;

struct dump_list;
struct dump_result;
struct figure_value;
struct history;

/* What is answered: the row of the table. */
enum answer_kind {
	ANSWER_DOCTOR,  /* const struct doctor *, one that is d->ok */
	ANSWER_HISTORY, /* const struct answer_history *, h->ring set */
	ANSWER_FIGURES, /* const struct answer_figures * */
	ANSWER_SUMMARY, /* the same: srvr's few of them, and the mode */
	ANSWER_DUMPS,   /* const struct answer_dumps * */
	ANSWER_DUMP,    /* const struct dump_result *: a dump job's tail */
	ANSWER_KINDS
};

/* How: the column of the table. */
enum answer_format {
	ANSWER_TEXT,       /* a word's reply */
	ANSWER_JSON,       /* a route's body, one object and "\n" */
	ANSWER_PROMETHEUS, /* families for /metrics, text format 0.0.4 */
	ANSWER_FORMATS
};

/* One cell: @p result, of the row's type, onto @p out. */
typedef void answer_fn(struct out *out, const void *result);

/* One row: its name (for messages) and a cell per format, NULL where
 * the answer has no such rendering. */
struct answer {
	const char *name;
	answer_fn *render[ANSWER_FORMATS];
};

/* The table, indexed by enum answer_kind. */
extern const struct answer answers[ANSWER_KINDS];

/* Render @p result as answer @p kind in @p format onto @p out: 0, or -1
 * (nothing written) when there is no such cell. */
int answer_render(enum answer_kind kind, enum answer_format format,
    const void *result, struct out *out);

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
void answer_doctor_text(struct out *out, const void *d);
void answer_doctor_json(struct out *out, const void *d);
void answer_doctor_prometheus(struct out *out, const void *d);
void answer_history_text(struct out *out, const void *h);
void answer_history_json(struct out *out, const void *h);
void answer_figures_text(struct out *out, const void *f);
void answer_figures_json(struct out *out, const void *f);
void answer_figures_prometheus(struct out *out, const void *f);
void answer_summary_text(struct out *out, const void *f);
void answer_dumps_text(struct out *out, const void *l);
void answer_dumps_json(struct out *out, const void *l);
void answer_dump_text(struct out *out, const void *r);

#endif

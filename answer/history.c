/*
 * The figures' history (core/history.c keeps the ring): jmhi's text, a
 * line per column with a sparkline of the whole ring, and
 * /jemalloc/history's JSON, which the page draws whole on opening and
 * then asks for the rows since its last.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "answer.h"
#include "bytes.h"
#include "history.h"

/* Characters of a jmhi sparkline: the whole ring, bucketed. */
#define SPARK_WIDTH 60

/* One jmhi line: column @p col's newest value, least, most, and the ring
 * as a sparkline of SPARK_WIDTH buckets (each its bucket's last row). */
static void history_line(struct out *out, const struct history *h, size_t col)
{
	static const char *const bars[] = {"\u2581", "\u2582", "\u2583",
	    "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
	uint64_t v, lo = UINT64_MAX, hi = 0, last = HISTORY_NONE;
	size_t i, w = h->n < SPARK_WIDTH ? h->n : SPARK_WIDTH, b;
	char a1[32], a2[32], a3[32];
	int bytes = col < 7; /* the allocator's columns; then counters */

	for (i = 0; i < h->n; i++) {
		v = history_row(h, i)[col + 1];
		if (v == HISTORY_NONE)
			continue;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		last = v;
	}
	if (last == HISTORY_NONE)
		return;
	if (bytes)
		out_printf(out, "%-14s %10s %10s %10s  ",
		    history_cols[col].name, fmt_bytes(a1, sizeof(a1), last),
		    fmt_bytes(a2, sizeof(a2), lo),
		    fmt_bytes(a3, sizeof(a3), hi));
	else
		out_printf(out,
		    "%-14s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "  ",
		    history_cols[col].name, last, lo, hi);
	for (b = 0; b < w; b++) {
		v = history_row(h, (b + 1) * h->n / w - 1)[col + 1];
		i = v == HISTORY_NONE || hi == lo
		    ? 0
		    : (size_t)((double)(v - lo) * 7.999 / (double)(hi - lo));
		out_printf(out, "%s", bars[i]);
	}
	out_printf(out, "\n");
}

/* jmhi: the figures' history, a line per column: now, least, most, and
 * a sparkline of the whole ring, oldest on the left. The ring exists
 * (h->ring): without one the face answers with its error line. */
void answer_history_text(struct out *out, const struct answer_history *ah)
{
	const struct history *h = ah->h;
	char a[32];
	size_t i;

	out_printf(out,
	    "# history: %zu of %zu rows every %u s (%llu s), %s mapped; "
	    "now, least, most, then oldest to newest\n",
	    h->n, h->cap, h->interval, (unsigned long long)h->n * h->interval,
	    fmt_bytes(a, sizeof(a), history_bytes(h->cap)));
	for (i = 0; i < HISTORY_COLS; i++)
		history_line(out, h, i);
}

/* /jemalloc/history[?since=T]: {"interval", "points", "bytes",
 * "columns", "rows"}, rows oldest first, each [time, value...] with
 * null for a value this process lacks; with since, only rows after it.
 * The whole ring is ~1 MB of JSON at the default size: a few ms on the
 * loop, once per page opened (BENCHMARKS.md); polls ask for a few rows. */
void answer_history_json(struct out *out, const struct answer_history *a)
{
	const struct history *h = a->h;
	const uint64_t *row;
	size_t i, c, n = 0;

	out_printf(out,
	    "{\"interval\": %u, \"points\": %zu, \"bytes\": %zu, "
	    "\"columns\": [\"time\"",
	    h->interval, h->cap, history_bytes(h->cap));
	for (c = 0; c < HISTORY_COLS; c++)
		out_printf(out, ", \"%s\"", history_cols[c].name);
	out_printf(out, "], \"rows\": [");
	for (i = 0; i < h->n; i++) {
		row = history_row(h, i);
		if (row[0] <= a->since)
			continue;
		out_printf(out, "%s[%llu", n++ ? ",\n" : "\n",
		    (unsigned long long)row[0]);
		for (c = 1; c < HISTORY_ROW; c++)
			if (row[c] == HISTORY_NONE)
				out_printf(out, ", null");
			else
				out_printf(out, ", %llu",
				    (unsigned long long)row[c]);
		out_printf(out, "]");
	}
	out_printf(out, "]}\n");
}

/*
 * The kept dumps (core_dump_list): jmls's text, a "#" summary line then
 * "path<TAB>size<TAB>time<TAB>cause<TAB>pid<TAB>whose" per dump, and
 * /jemalloc/dumps's JSON, which the page lists. dump_dir is shared by
 * every process of the user (by default): this process's dumps come
 * first, and each line says whose it is. The cause (core/cause.h) and
 * whose come last so scripts that cut the first three columns read on.
 */
#include <stdio.h>

#include "answer.h"
#include "cause.h"
#include "dumps.h"
#include "json.h"
#include "when.h"

/* The most other processes the summary line names. */
#define OTHERS_NAMED 8

/* The summary's tail: how many dumps are this process's, and which
 * other processes wrote the rest (pid and name, where known). */
static void dumps_others(struct out *out, const struct dump_list *l)
{
	long named[OTHERS_NAMED];
	size_t i, j, k = 0, more = 0;

	out_printf(out, "; %zu of this process (pid %ld%s%s) first", l->nmine,
	    l->pid, l->program[0] != '\0' ? ", " : "", l->program);
	if (l->nmine == l->n)
		return;
	out_printf(out, ", %zu of other processes (pid", l->n - l->nmine);
	for (i = l->nmine; i < l->n; i++) {
		for (j = 0; j < k && named[j] != l->d[i].pid; j++)
			;
		if (j < k)
			continue;
		if (k == OTHERS_NAMED) {
			more++;
			continue;
		}
		named[k++] = l->d[i].pid;
		out_printf(out, "%s %ld%s%s", k > 1 ? "," : "", l->d[i].pid,
		    l->d[i].program[0] != '\0' ? " " : "", l->d[i].program);
	}
	if (more > 0)
		out_printf(out, " and more");
	out_printf(out, ")");
}

/* jmls: the summary keeps the reply non-empty when there is nothing,
 * and scripts skip it with grep -v '^#'; this process's dumps first,
 * each part newest first, time in UTC ISO 8601; the last column says
 * whose: "this", or another process's name ("-": gone, not known). */
void answer_dumps_text(struct out *out, const struct answer_dumps *a)
{
	const struct dump_list *l = a->l;
	char when[32];
	size_t i;

	out_printf(out, "# %zu dumps, %llu bytes in %s (%s.*.heap)", l->n,
	    l->total, l->dir, a->prefix);
	dumps_others(out, l);
	out_printf(out, "\n");
	for (i = 0; i < l->n; i++)
		out_printf(out, "%s/%s\t%lld\t%s\t%s\t%ld\t%s\n", l->dir,
		    l->d[i].name, l->d[i].size,
		    fmt_time(when, sizeof(when), l->d[i].mtime.tv_sec),
		    cause_name(l->d[i].cause), l->d[i].pid,
		    l->d[i].mine                     ? "this"
		        : l->d[i].program[0] != '\0' ? l->d[i].program
		                                     : "-");
}

/* /jemalloc/dumps: {"dir", "pid", "program", "mine", "dumps": [{"name",
 * "size", "time", "cause", "pid", "this", "program"}...]}: this
 * process's first; "program" null where not known. */
void answer_dumps_json(struct out *out, const struct answer_dumps *a)
{
	const struct dump_list *l = a->l;
	size_t i;

	out_printf(out, "{\"dir\": ");
	json_string(out, l->dir);
	out_printf(out, ", \"pid\": %ld, \"program\": ", l->pid);
	json_string(out, l->program);
	out_printf(out, ", \"mine\": %zu, \"dumps\": [", l->nmine);
	for (i = 0; i < l->n; i++) {
		out_printf(out, "%s{\"name\": ", i ? ", " : "");
		json_string(out, l->d[i].name);
		out_printf(out, ", \"size\": %lld, \"time\": %lld, \"cause\": ",
		    l->d[i].size, (long long)l->d[i].mtime.tv_sec);
		json_string(out, cause_name(l->d[i].cause));
		out_printf(out,
		    ", \"pid\": %ld, \"this\": %s, \"program\": ", l->d[i].pid,
		    l->d[i].mine ? "true" : "false");
		if (l->d[i].program[0] != '\0')
			json_string(out, l->d[i].program);
		else
			out_printf(out, "null");
		out_printf(out, "}");
	}
	out_printf(out, "]}\n");
}

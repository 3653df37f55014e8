/*
 * The kept dumps (core_dump_list): jmls's text, a "#" summary line then
 * "path<TAB>size<TAB>time<TAB>cause" per dump, and /jemalloc/dumps's
 * JSON, which the page lists. The cause (core/cause.h) comes last so
 * scripts that cut the first three columns read on.
 */
#include <stdio.h>

#include "answer.h"
#include "cause.h"
#include "dumps.h"
#include "json.h"
#include "when.h"

/* jmls: the summary keeps the reply non-empty when there is nothing,
 * and scripts skip it with grep -v '^#'; newest first, time in UTC ISO
 * 8601. */
void answer_dumps_text(struct out *out, const void *result)
{
	const struct answer_dumps *a = result;
	const struct dump_list *l = a->l;
	char when[32];
	size_t i;

	out_printf(out, "# %zu dumps, %llu bytes in %s (%s.*.heap)\n", l->n,
	    l->total, l->dir, a->prefix);
	for (i = 0; i < l->n; i++)
		out_printf(out, "%s/%s\t%lld\t%s\t%s\n", l->dir, l->d[i].name,
		    l->d[i].size,
		    fmt_time(when, sizeof(when), l->d[i].mtime.tv_sec),
		    cause_name(l->d[i].cause));
}

/* /jemalloc/dumps: {"dir", "dumps": [{"name", "size", "time",
 * "cause"}...]}. */
void answer_dumps_json(struct out *out, const void *result)
{
	const struct dump_list *l = ((const struct answer_dumps *)result)->l;
	size_t i;

	out_printf(out, "{\"dir\": ");
	json_string(out, l->dir);
	out_printf(out, ", \"dumps\": [");
	for (i = 0; i < l->n; i++) {
		out_printf(out, "%s{\"name\": ", i ? ", " : "");
		json_string(out, l->d[i].name);
		out_printf(out, ", \"size\": %lld, \"time\": %lld, \"cause\": ",
		    l->d[i].size, (long long)l->d[i].mtime.tv_sec);
		json_string(out, cause_name(l->d[i].cause));
		out_printf(out, "}");
	}
	out_printf(out, "]}\n");
}

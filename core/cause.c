/* The causes' table, and reading a dump name's tag back. */
#include <string.h>

#include "cause.h"

const struct cause_entry causes[CAUSE_COUNT] = {
    [CAUSE_NONE] = {.name = "-"},
    [CAUSE_WORD] = {.letter = 'w', .name = "word"},
    [CAUSE_HTTP] = {.letter = 'h', .name = "http"},
    [CAUSE_SCHEDULE] = {.letter = 's', .name = "schedule"},
    [CAUSE_GROWTH] = {.letter = 'g', .name = "growth"},
    [CAUSE_MEMORY] = {.letter = 'o', .name = "memory"},
    [CAUSE_INTERVAL] = {.letter = 'i',
        .jemalloc = 1,
        .numbered = 1,
        .name = "interval"},
    [CAUSE_GDUMP] = {.letter = 'u',
        .jemalloc = 1,
        .numbered = 1,
        .name = "gdump"},
    [CAUSE_FINAL] = {.letter = 'f', .jemalloc = 1, .name = "final"},
    [CAUSE_MANUAL] = {.letter = 'm',
        .jemalloc = 1,
        .numbered = 1,
        .name = "manual"},
};

int cause_of_tag(const char *tag)
{
	const char *s;
	int c;

	if (strcmp(tag, "heap") == 0)
		return CAUSE_NONE;
	for (c = CAUSE_NONE + 1; c < CAUSE_COUNT; c++) {
		if (tag[0] != causes[c].letter)
			continue;
		s = tag + 1;
		if (causes[c].numbered) {
			if (*s < '0' || *s > '9')
				return -1;
			while (*s >= '0' && *s <= '9')
				s++;
		}
		return strcmp(s, ".heap") == 0 ? c : -1;
	}
	return -1;
}

const char *cause_name(int cause)
{
	if (cause <= CAUSE_NONE || cause >= CAUSE_COUNT)
		return causes[CAUSE_NONE].name;
	return causes[cause].name;
}

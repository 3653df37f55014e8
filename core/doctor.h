/*
 * doctor — where resident memory goes and what to do about it, from
 * mallctl figures alone: reading them (core/doctor.c) and the advice
 * (core/doctor_advice.c).
 */
#ifndef JM4LW_DOCTOR_H
#define JM4LW_DOCTOR_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "ops.h"
#include "reason.h"

struct core;

/* Arenas read one by one; the rest are summed as one "other" row. */
#define DOCTOR_ARENAS_MAX 64
/* Small size classes read (jemalloc has 36 with 4 KiB pages, 39 with 64
 * KiB); classes beyond are left out of the table, not of the totals. */
#define DOCTOR_BINS_MAX 64
/* The worst size classes and arenas shown. */
#define DOCTOR_WORST 5
#define DOCTOR_ADVICE_MAX 12
/* The arena index of the "other" row. */
#define DOCTOR_OTHER UINT_MAX

/* The parts resident memory is split into; they add up to resident. */
enum doctor_part {
	DOCTOR_PROGRAM,    /* allocated, less the two below */
	DOCTOR_PROFILING,  /* sampled small objects promoted to 16 KiB */
	DOCTOR_TCACHE,     /* allocated, but idle in thread caches */
	DOCTOR_SMALL_FRAG, /* free regions inside small-class slabs */
	DOCTOR_LARGE_PAD,  /* large extents past what was allocated */
	DOCTOR_DIRTY,      /* freed pages not yet given back (pdirty) */
	DOCTOR_METADATA,   /* jemalloc's base allocator */
	DOCTOR_RESIDUE,    /* what the figures do not explain */
	DOCTOR_PARTS
};

/* A part's name for every face: its JSON/metric key and a label. */
struct doctor_part_name {
	const char *key;
	const char *label;
};
extern const struct doctor_part_name doctor_parts[DOCTOR_PARTS];

/* One small size class (merged over arenas, or of one arena). */
struct doctor_bin {
	unsigned index;
	size_t size;       /* arenas.bin.<j>.size */
	unsigned nregs;    /* regions per slab */
	size_t slab_size;  /* bytes per slab */
	uint64_t curregs;  /* regions in use */
	uint64_t curslabs; /* slabs */
	uint64_t nonfull;  /* slabs with a free region (doctor_bins_of) */
	uint64_t waste;    /* curslabs * slab_size - curregs * size */
	double util;       /* curregs / (curslabs * nregs); 1 when empty */
};

/* One arena (or the sum of those past DOCTOR_ARENAS_MAX). */
struct doctor_arena {
	unsigned index;   /* DOCTOR_OTHER for the sum */
	unsigned narenas; /* arenas in this row: 1, or the others' count */
	unsigned nthreads;
	long dirty_decay_ms; /* -1: never decays; (other: the max) */
	long muzzy_decay_ms;
	uint64_t allocated; /* small + large */
	uint64_t active;
	uint64_t resident;
	uint64_t dirty;
	uint64_t muzzy;
	uint64_t frag; /* active - allocated: slabs' free regions and
	                  large padding */
	uint64_t tcache;
	uint64_t waste; /* frag + dirty: what ranks arenas */
};

/* What an advice line says; faces word it (proto_doctor_advice). */
enum doctor_advice_kind {
	ADVICE_PURGE,      /* jmpg returns ~gain now */
	ADVICE_DECAY,      /* dirty_decay_ms is long: value ms */
	ADVICE_BACKGROUND, /* background_thread:true */
	ADVICE_NARENAS,    /* value arenas of count are idle */
	ADVICE_SIZE_CLASS, /* size class @size at @util */
	ADVICE_TCACHE,     /* thread caches hold much */
	ADVICE_SAMPLING,   /* lg_prof_sample value -> value2 */
	ADVICE_KINDS
};

/* One advice line: what, the figure that justifies it, the gain. */
struct doctor_advice {
	enum doctor_advice_kind kind;
	uint64_t figure; /* the bytes that justify it */
	uint64_t gain;   /* expected bytes back */
	long value;      /* decay ms, lg_prof_sample, arenas... */
	long value2;     /* the value advised */
	size_t size;     /* ADVICE_SIZE_CLASS: the class */
	double util;     /* ADVICE_SIZE_CLASS: its utilization */
	uint64_t count;  /* regions, arenas */
};

/* The diagnosis: figures in bytes, read after one epoch. */
struct doctor {
	int ok;
	enum core_reason why; /* when not ok */
	char reason[256];
	size_t page;
	uint64_t allocated, active, resident, mapped, retained;
	uint64_t metadata, base, internal, metadata_thp;
	uint64_t tcache, dirty, muzzy, small_frag, large_pad;
	int64_t residue;             /* resident minus every part explained */
	uint64_t part[DOCTOR_PARTS]; /* add up to resident (residue >= 0) */
	uint64_t purge_gain;         /* what jmpg would return now: dirty */
	int background_thread;       /* background_thread is on */
	unsigned narenas;            /* initialized arenas */
	unsigned narenas_opt;        /* opt.narenas */
	/* Profiling's own cost. */
	int prof; /* opt.prof */
	int prof_active;
	int prof_exact; /* from prof.stats (opt.prof_stats) */
	size_t lg_sample;
	uint64_t prof_samples; /* small objects sampled, live */
	uint64_t prof_cost;    /* bytes they hold beyond their size */
	/* Size classes, merged over every arena. */
	struct doctor_bin bins[DOCTOR_BINS_MAX];
	unsigned nbins;
	unsigned worst_bins[DOCTOR_WORST]; /* indexes into bins, by waste */
	unsigned nworst_bins;
	/* Arenas: the first DOCTOR_ARENAS_MAX, then "other". */
	struct doctor_arena arenas[DOCTOR_ARENAS_MAX + 1];
	unsigned narena_rows;
	unsigned worst_arenas[DOCTOR_WORST]; /* indexes into arenas */
	unsigned nworst_arenas;
	struct doctor_advice advice[DOCTOR_ADVICE_MAX];
	unsigned nadvice;
};

/* The diagnosis of the allocator behind @p ops, after an epoch (@p
 * epoch: refresh first). Bounded: DOCTOR_ARENAS_MAX arenas x
 * DOCTOR_BINS_MAX classes at most. d->ok, or d->why and d->reason. */
void doctor_diagnose(const struct core_ops *ops, int epoch, struct doctor *d);

/* The same for the module's allocator (a coalesced epoch: jmdr, the
 * route and /metrics read one snapshot at most once a millisecond). */
void core_doctor(struct core *c, struct doctor *d);

/* The arena index of every arena's merged statistics (jemalloc's
 * MALLCTL_ARENAS_ALL). */
#define DOCTOR_MERGED 4096

/* Arena @p arena's (or DOCTOR_MERGED's) counts of the first @p nbins
 * small classes (curregs, curslabs, nonfull_slabs) into @p bins, through
 * the doctor's lookups: for fragmentation by arena and class. 0, or -1
 * when the classes cannot be read. */
int doctor_bins_of(const struct core_ops *ops, size_t arena,
    struct doctor_bin *bins, unsigned nbins);

/* The advice lines of @p d, from its figures (core/doctor_advice.c). */
void doctor_advise(struct doctor *d);

#endif /* JM4LW_DOCTOR_H */

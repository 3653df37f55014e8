/*
 * job_dump — what a person's dump (core/job_dump.c) and a scraper's
 * (core/job_scrape.c) share. For those two files only.
 */
#ifndef JM4LW_JOB_DUMP_H
#define JM4LW_JOB_DUMP_H

#include "publish.h"
#include "stage.h"

/* A dump's steps on the worker, one list for both: its target, prof.dump
 * (the lock window), the check, published when kept, the answer. */
#define JOB_DUMP_STEPS                                                         \
	{                                                                      \
		stage_target, stage_prof_dump, stage_check, publish_dump,      \
		    publish_answer                                             \
	}

#endif /* JM4LW_JOB_DUMP_H */

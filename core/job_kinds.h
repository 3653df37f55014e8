/*
 * The job table's lines, one a kind (each a const struct job_kind in
 * core/job_<kind>.c): core/job.h declares them for the faces, and
 * core/job_table.c lists them in job_table[]. Each line is JOB_KIND(the
 * kind's name); the includer defines JOB_KIND. No include guard: read
 * once per use.
 */
JOB_KIND(job_dump)
JOB_KIND(job_scrape)
JOB_KIND(job_symbols)
JOB_KIND(job_render)
JOB_KIND(job_leaks)
JOB_KIND(job_recent)
JOB_KIND(job_adopt)
JOB_KIND(job_review)
JOB_KIND(job_snap)
JOB_KIND(job_since)
JOB_KIND(job_peak)
JM4LW_IF_EXAMPLE(JOB_KIND(job_example))

/*
 * plan.h -- what the job keeps for the framework beyond the public API
 * (job.c: the planning input, its index, the indexes' tally, the steps'
 * reach) and the list of files a run reads and writes (run_files.c).
 *
 * Private to framework/; kernels and io/ must not include it. Used by plan/,
 * step/ (the reach), run/ (the tally and reach), out/output_check.c and
 * resume/ (the files).
 */
#ifndef SS_PLAN_H
#define SS_PLAN_H

#include <stdint.h>

#include "../driver.h"

/* The kernel the job was opened for (ss_job_open). Any thread. */
const ss_kernel_t *ss_job_kernel(const ss_job_t *job);
/* The job's first input, open on the main thread for planning only (job.c). */
samFile *ss_job_file(const ss_job_t *job);
hts_idx_t *ss_job_index(const ss_job_t *job);
/* What the BAM inputs' indexes count, as a run's tally (ss_io_tally_expect); NULL: no BAM. */
const uint64_t *ss_job_tally_want(const ss_job_t *job);
/* The chain's reach (the sums of its steps'), as ss_job_steps_prepare keeps it in the job. */
ss_step_reach_t ss_job_step_reach(const ss_job_t *job);
void ss_job_set_step_reach(ss_job_t *job, ss_step_reach_t r);

/* ---- the files a run reads and writes (run_files.c) ---- */

/* One file of a run: its path, what it is in messages, and a key. */
typedef struct {
    char *path;      /* owned */
    char *role;      /* owned: "an input", "the --known VCF's index", "-o" */
    const char *key; /* static. Reads: its --resume identity line's key ("input", "index",
                      * "reference", "bed", "file"); writes: the option naming it ("-o") */
} ss_run_file_t;

typedef struct {
    ss_run_file_t *f;
    int n, m;
} ss_run_files_t;

/*
 * Every file the run may read: each input and every name htslib may load its
 * index from, the reference with its .fai and .gzi, the -l/-b BED, then the
 * -b lists and the kernel's files (ss_common_add_read, with their .tbi/.csi
 * when indexed), in that order; names that do not exist are listed too.
 * ss_run_writes: every file it may write: the side streams (a BED.gz one
 * with its .csi) and the kernel's other files (ss_common_add_write), -o with
 * the index names beside it when it is indexed, --report. 0, or -1 after
 * ss_error() (out of memory; *l is then empty). Free with ss_run_files_free.
 * Main thread.
 */
int ss_run_reads(const ss_common_opts_t *o, ss_run_files_t *l);
int ss_run_writes(const ss_common_opts_t *o, const ss_out_spec_t *spec, ss_run_files_t *l);
void ss_run_files_free(ss_run_files_t *l);

#endif

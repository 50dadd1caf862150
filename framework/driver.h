/*
 * driver.h -- the framework's own entry points, which run a kernel: the
 * options' life, the job (inputs opened once on the main thread), the plan
 * and the engine. ss_main (cli.c; entry.h) calls them in that order.
 *
 * Private to framework/ (and its tests): kernels never include it; they see
 * the job through ss_framework.h's accessors. It includes every header a
 * kernel may, so framework files include this one.
 */
#ifndef DRIVER_H
#define DRIVER_H

#include "entry.h"
#include "ss_framework.h"
#include "ss_framework_extra.h"

/* Exit codes: 0 ok, 1 bad input or run failure, 2 bad usage (SS_EXIT_USAGE). */
#define SS_EXIT_OK   0
#define SS_EXIT_FAIL 1

/*
 * The output a shard may make, estimated (ss_out_spec_t). Not a memory bound
 * (text past the output buffers' memory budget leaves memory): the balance between what a
 * shard costs per input (a CRAM slice decoded per shard) and the records a
 * CRAM input's window holds, which grow with the shard's length. At 1000
 * inputs (a third CRAM, 30x) 256 MiB gives 8 shards, 87 s of CPU and 470 MB;
 * 128 MiB gave 14 shards, 134 s and 397 MB (docs/benchmarks.md, cohorts).
 */
#define SS_SHARD_OUTPUT ((size_t)256 << 20)

/*
 * A file a kernel reads or writes besides the ones the framework knows
 * (inputs, indexes, reference, -l/-b BED, -o, --report, side streams):
 * registered by the kernel's parser (ss_common_add_read, ss_common_add_write)
 * so that --resume's identity and the clash check before any work see it.
 */
typedef struct ss_side_file_s {
    char *path;       /* owned */
    const char *role; /* static: what it is, in messages ("the --known VCF") */
    const char *opt;  /* writes, static: the option that names it, for the fix ("--mosdepth") */
    int indexed;      /* reads: its index (path.tbi, path.csi) is read too */
} ss_side_file_t;

/* The shared options' defaults, and their memory (the steps' options too). Main thread. */
void ss_common_opts_init(ss_common_opts_t *o);
void ss_common_opts_free(ss_common_opts_t *o);

/* ---- the job: inputs opened once on the main thread for planning ---- */

/*
 * Open every input's header and index, check sort order and index presence,
 * load the reference index, for kernel (borrowed: it outlives the job; what
 * it reads, ss_kernel_t.stdin_ok and the like, shapes the checks and the
 * plan). Returns NULL after ss_error() on failure. Main thread only. Freed
 * with ss_job_close.
 */
ss_job_t *ss_job_open(const ss_common_opts_t *opts, const ss_kernel_t *kernel);
void ss_job_close(ss_job_t *job);

/* ---- the plan ---- */

/*
 * Cut the job's scope (the regions in the order given, or whole contigs in
 * header order; either intersected with the -l BED intervals) into shards of
 * balanced estimated work, numbered in that order. A region "*" is one shard
 * of tid SS_TID_UNPLACED. The plan depends only on the inputs and options,
 * never on threads or ranks. With spec (may be NULL), shards are also cut
 * where their estimated output would pass SS_SHARD_OUTPUT bytes (or
 * SEQSHARD_SHARD_OUTPUT's). Returns 0 and a malloc'ed array in *shards (caller frees; may be
 * NULL when *n is 0), or -1 after ss_error(). Main thread.
 */
int ss_plan_build(const ss_job_t *job, const ss_out_spec_t *spec, ss_shard_t **shards, int *n);

/* ---- the engine ---- */

/*
 * Run kernel over the job, with the run state and output spec its prepare
 * made (the engine takes spec's header). Returns the process exit status (0
 * ok, 1 failure). Main thread; collective under mpirun.
 */
int ss_engine_run(const ss_kernel_t *kernel, void *kopts, const void *run, ss_out_spec_t *spec,
                  ss_job_t *job);

#endif

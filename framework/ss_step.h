/*
 * ss_step.h -- record steps (contract 8): a kernel's transform of records
 * (realignment; duplicate marking) that runs in front of another kernel in
 * the same pass, nothing written between them.
 *
 * A step wraps a record source and is one: a query of [beg, end) returns
 * what a region query of the step's output file would (every record whose
 * final alignment overlaps the range, in samtools sort's order, b->id their
 * order in the range), so the kernel behind it, and the step behind that,
 * reads it as it would read that file. The framework builds the chain from
 * the command line (each step's --NAME, in the steps' fixed order), puts it
 * in front of every input (ss_reader_source gives the outer end), reports
 * each step's counters, and widens the shard's reading window by the
 * chain's reach. A kernel never knows which steps are in front of it; it
 * may ask whether any is (ss_job_n_steps), to leave out paths that read the
 * file itself (view's block copy).
 *
 * Included by ss_framework.h. Threads: the option and prepare hooks run on
 * the main thread; a step's source belongs to one worker thread.
 */
#ifndef SS_STEP_H
#define SS_STEP_H

#include <htslib/sam.h>
#include <stdint.h>

#include "../io/ss_source.h"
#include "ss_cmdline.h"

struct ss_common_opts_s;
struct ss_job_s;

/* How many steps a program may register, and counters each may report. */
#define SS_STEPS_MAX     4
#define SS_STEP_COUNTERS 6

/* What a step reads around a range and how far it may move a record (contract 7). */
typedef struct {
    hts_pos_t max_shift; /* farthest a record's POS moves from where it was read */
    hts_pos_t halo;      /* what a query reads beyond each end of its range (>= max_shift) */
} ss_step_reach_t;

typedef struct ss_step_s {
    const char *name;     /* "realign": --NAME turns it on; messages and --report name it */
    const char *help;     /* --NAME's line in --help */
    int order;            /* place in a chain: lower is nearer the file */
    const char *title;    /* its group in --help ("Realignment") */
    const char *note;     /* the group's paragraph, or NULL */
    const ss_opt_t *opts; /* its options besides --NAME (keys from 0x2000 up), SS_OPT_END */
    int cram_md;          /* it writes or reads MD/NM: while it is on, CRAM inputs rebuild
                           * them (ss_kernel_t.cram_md) */

    /*
     * Its options' defaults; NULL when out of memory. opts_free accepts NULL.
     * Both NULL for a step without options.
     */
    void *(*opts_new)(void);
    void (*opts_free)(void *sopts);
    /* One of its options, on command cmd: 0, or -1 after a one-line usage message. */
    int (*opt)(void *sopts, int key, const char *arg, struct ss_common_opts_s *co, const char *cmd);
    /*
     * The step is on and every option was read: check them together (the
     * reference it needs, say). cmd names the command in messages. 0, or -1
     * after a one-line usage message.
     */
    int (*check)(const void *sopts, struct ss_common_opts_s *co, const char *cmd);
    /* The job is open: check the inputs; fill *reach. 0, or -1 after ss_error(). */
    int (*prepare)(const void *sopts, const struct ss_job_s *job, ss_step_reach_t *reach);

    /*
     * A worker's source over inner (borrowed: the file, or the step nearer
     * it). When reading inner fails during a query with htslib's code (< -1,
     * not SS_IO_REPORTED: the file's fault, unsaid), the query returns 0 and
     * the next call to next returns that code, so the kernel names the file's
     * cause as it does for its own reads. NULL after ss_error(). close
     * accepts NULL.
     */
    ss_source_t *(*open)(const void *sopts, const struct ss_job_s *job, ss_source_t *inner);
    void (*close)(ss_source_t *src);

    /*
     * Counters for --report, NULL-terminated, at most SS_STEP_COUNTERS, each
     * named as the report prints it ("realign_windows"), or NULL: none.
     * shard: a shard starts; from now on the source counts what it decides
     * for [beg, end) only, once however often it is asked (so the sums do
     * not depend on the shard size). counts: add the shard's counts to out.
     */
    const char *const *counter_names;
    void (*shard)(ss_source_t *src, hts_pos_t beg, hts_pos_t end);
    void (*counts)(const ss_source_t *src, uint64_t *out);
} ss_step_t;

/*
 * Sort order[0..n) (indexes into recs) as samtools sort orders one
 * contig's records: POS, forward strand first, then the index. For a step
 * handing out the records it moved. Any thread.
 */
void ss_step_sort(bam1_t *const *recs, int *order, int n);

/*
 * A query's records for a step that edits one record at a time (step_recs.c;
 * realign, which decides windows of reads, keeps its own): load reads the
 * inner source over [lo, hi) (the range widened by what the edits may move
 * into it), calls edit on each record, keeps those whose edited span
 * overlaps [beg, end) and sorts them (ss_step_sort); next hands them out with
 * b->id their order. The unplaced reads (tid SS_IO_UNPLACED) stream through,
 * edited, never held. A read error of the file is kept for next, as the step
 * contract says. load: 0, or -1 after ss_error(); next: as ss_source_next.
 * init: NULL after ss_error(); destroy accepts NULL. The step's thread.
 */
typedef void (*ss_step_edit_fn)(void *ctx, bam1_t *b);
typedef struct ss_step_recs_s ss_step_recs_t;
ss_step_recs_t *ss_step_recs_init(void);
void ss_step_recs_destroy(ss_step_recs_t *p);
int ss_step_recs_load(ss_step_recs_t *p, ss_source_t *inner, int tid, hts_pos_t beg, hts_pos_t end,
                      hts_pos_t lo, hts_pos_t hi, ss_step_edit_fn edit, void *ctx);
int ss_step_recs_next(ss_step_recs_t *p, bam1_t *b);

/*
 * The steps a kernel that reads records serves, in chain order, and their
 * options (the job's): NULL when i >= ss_job_n_steps(job). Any thread.
 */
int ss_job_n_steps(const struct ss_job_s *job);
const ss_step_t *ss_job_step(const struct ss_job_s *job, int i, const void **sopts);

#endif

/*
 * ss_framework_extra.h -- the framework's calls that one or two kernels use,
 * beside ss_framework.h's, which every kernel uses. Each section names its
 * users; a kernel includes this header only when it calls one of them.
 *
 *   side streams, reductions, the finish hook's files   depth (--mosdepth), markdup (-f)
 *   the census' constants                                mpileup
 *   how text output is framed and indexed                mpileup (-O, --write-index)
 *   view's BGZF block copy, the BGZF EOF block           view
 *   the shard's output length so far                     depth, view
 *   the default shard size                               mpileup, view
 *   a shared option passed on, by its code               mpileup (--call's -o)
 *   a precision variable                                 depth (--mosdepth)
 *   a step's record writer                               realign (the command)
 *
 * The framework's own files include it through driver.h.
 */
#ifndef SS_FRAMEWORK_EXTRA_H
#define SS_FRAMEWORK_EXTRA_H

#include "ss_framework.h"

/* ---- side streams, reductions and the finish hook's files (ss_out_spec_t's last fields) */

/*
 * Side stream k (0 <= k < spec.n_streams): the shard's text for it, as
 * ss_out_text is for the main output; the framework compresses, orders and
 * writes it. Worker thread, during process.
 */
kstring_t *ss_out_stream(ss_out_t *o, int k);
/*
 * The worker's reduced values (spec.n_values, starting at each op's identity).
 * They live across the worker's shards; add what each shard contributes, once
 * (count a position in the shard that owns it), so the result does not depend
 * on the shard size. Worker thread, during process.
 */
int64_t *ss_out_values(ss_out_t *o);
/*
 * Add bins[0..n) to histogram h (0 <= h < spec.n_hists), which the framework
 * sums over workers and ranks; it grows to the longest n added. Add a shard's
 * counts at once, at its end: the rank holds one copy of each histogram,
 * under a lock. 0, or -1 after ss_error() (out of memory). Worker thread,
 * during process.
 */
int ss_out_hist_add(ss_out_t *o, int h, const int64_t *bins, size_t n);

/*
 * The finish hook's view (ss_kernel_t.finish): the reduced values and
 * histograms, and small files to write. ss_finish_values: spec.n_values
 * values. ss_finish_hist: histogram h and its length in *len (NULL, 0 when
 * no worker touched it). ss_finish_file: the text of a new file at path,
 * written under a temporary name and renamed with every other output, all or
 * none; NULL after ss_error(). All owned by the framework. Main thread of
 * rank 0, during finish.
 */
const int64_t *ss_finish_values(const ss_finish_t *f);
const int64_t *ss_finish_hist(const ss_finish_t *f, int h, size_t *len);
kstring_t *ss_finish_file(ss_finish_t *f, const char *path);

/* ---- the census (ss_kernel_t.census) ---- */

/*
 * In a run of one rank the census is not taken before the run: shards
 * run in plan order, so the shards ahead of one have mostly finished
 * and reported their counts (ss_shard_stats_t.census, which process
 * must fill). When some are still running, process sees `before`
 * SS_BEFORE_UNKNOWN; as long as its output does not depend on it, it
 * goes on; once it would, it returns SS_SHARD_NEEDS_BEFORE, and the
 * framework throws its output away, counts the shards still running
 * with the census hook, and runs process again with `before` known.
 */

/* ss_shard_t.before when shards ahead of this one are still running (ss_kernel_t.census). */
#define SS_BEFORE_UNKNOWN UINT64_MAX
/* process's answer when its output would depend on a `before` it was not given. */
#define SS_SHARD_NEEDS_BEFORE 2

/* ---- text output's framing and index (ss_out_spec_t.text_bgzf, text_index) ---- */

/*
 * How text output is framed: BGZF when -o's name ends in .gz/.bgz (samtools' and
 * tabix's rule), always (bcftools' -Oz/-Ob), or never (-Ov/-Ou, whatever the name).
 */
typedef enum {
    SS_TEXT_BGZF_BY_NAME = 0,
    SS_TEXT_BGZF_ALWAYS = 1,
    SS_TEXT_BGZF_NEVER = -1
} ss_text_bgzf_t;

/* How BGZF text output is indexed: tabix -s1 -b2 -e2, none, or as `bcftools index` does. */
typedef enum {
    SS_TEXT_INDEX_TABIX = 0,
    SS_TEXT_INDEX_NONE = 1,
    SS_TEXT_INDEX_VCF = 2,    /* a CSI (min_shift 14) of the BCF or VCF.gz written */
    SS_TEXT_INDEX_VCF_TBI = 3 /* a TBI of the VCF.gz written (bcftools index -t) */
} ss_text_index_t;

/* ---- view's BGZF block copy ---- */

/*
 * BAM output only, with no record written yet in the shard: the shard's
 * buffer, for appending whole BGZF blocks that hold whole records in the
 * run's order (view's block copy). NULL after ss_error() otherwise.
 */
kstring_t *ss_out_bgzf_blocks(ss_out_t *o);
/* 1 when the output's index is built from what the shards note: then a kernel that
 * appends BGZF blocks itself notes their records with ss_out_index_copied. */
int ss_out_indexing(const ss_out_t *o);
/*
 * With ss_out_bgzf_blocks: note record b of the blocks appended, in file order,
 * for the output's index. end_voff is where htslib's reader stands after it
 * (bgzf_tell), its block address counted from the shard's first output byte.
 * 0, or -1 out of memory (the index is then built by reading the file).
 * Worker thread, during process.
 */
int ss_out_index_copied(ss_out_t *o, const bam1_t *b, uint64_t end_voff);

/* The 28-byte empty BGZF block that ends every BGZF/BAM file (SAM spec 4.1.2). */
extern const unsigned char ss_bgzf_eof[28];

/* ---- the shard's output so far ---- */

/* Bytes of output the shard has made so far. */
size_t ss_out_length(const ss_out_t *o);

/* ---- the reference ---- */

/*
 * Before any work: the -f FASTA holds every contig the run reads (its regions
 * or -l intervals, else the contigs with mapped reads), at the header's
 * length. When it does not, one line naming the FASTA, the input and the
 * contig, and -1; with allowed set (the kernel's allow_opt given), a warning
 * that the run goes on as tool does, and 0. 0 also without -f. Main thread.
 */
int ss_job_check_reference(const ss_job_t *job, const char *tool, const char *allow_opt,
                           int allowed);

/* ---- options ---- */

/* Defaults shared by all kernels (threads 0, shard size SS_DEFAULT_SHARD_SIZE). */
#define SS_DEFAULT_SHARD_SIZE 262144

/*
 * The framework's option codes (the keys of ss_opts_run and the output groups in
 * ss_cmdline.h): ss_cmd_parse passes them, and '@', to ss_common_opt.
 */
#define SS_OPT_SHARD_SIZE    0x1001
#define SS_OPT_REPORT        0x1002
#define SS_OPT_TMP_DIR       0x1003
#define SS_OPT_QUIET         0x1004
#define SS_OPT_BIND          0x1005
#define SS_OPT_PRINT_BINDING 0x1006
#define SS_OPT_RESUME        0x1007
#define SS_OPT_OUTPUT        0x1008 /* -o FILE[##idx##INDEX] */
#define SS_OPT_OUTPUT_FMT    0x1009 /* -O / --output-fmt FMT[,level=N] */
#define SS_OPT_FMT_OPTION    0x100a /* --output-fmt-option level=N */
#define SS_OPT_WRITE_INDEX   0x100b /* --write-index */
#define SS_OPT_FIRST_SHARED  0x1001 /* the codes ss_common_opt handles, with '@' */
#define SS_OPT_LAST_SHARED   0x100b
/*
 * Handle option c. Returns 1 if it was a common option (stored in *o), 0 if
 * not, -1 after printing a one-line error naming the option and the bad value.
 * Sizes accept k/m/g suffixes. Main thread.
 */
int ss_common_opt(int c, const char *arg, ss_common_opts_t *o);
/*
 * A precision variable (MOSDEPTH_PRECISION) as mosdepth 0.3.3 reads it: Nim's parseInt,
 * -1 to 32; dflt when unset or empty. Other values never reach a run: the environment
 * check (env.c) refuses them first. Any thread.
 */
int ss_env_precision(const char *name, int dflt);

/* ---- a step's record writer (ss_step.h) ---- */

/*
 * The record writer behind a step that is a command of its own (`seqshard
 * realign`): a worker's writer of its input 0 (rd, borrowed), and one
 * shard: the records it owns (POS in its range; a region's first shard also
 * those reaching into the region from before it, its last those placed past
 * the contig's end), read through the chain, written to out in the run's
 * format. init: NULL after ss_error(). shard: 0, or -1 after ss_error()
 * named the file and shard. destroy accepts NULL. Worker thread.
 */
typedef struct ss_step_writer_s ss_step_writer_t;
ss_step_writer_t *ss_step_writer_init(const ss_job_t *job, ss_reader_t *rd);
int ss_step_writer_shard(ss_step_writer_t *w, const ss_shard_t *sh, ss_out_t *out,
                         ss_shard_stats_t *st);
void ss_step_writer_destroy(ss_step_writer_t *w);

#endif

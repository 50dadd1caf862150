/*
 * ss_framework.h -- the public face of the seqshard framework: jobs, shards,
 * the kernel interface and the engine that runs a kernel over a plan.
 *
 * Data flow (see docs/architecture.md):
 *   ss_job_t (inputs + options) -> ss_plan_build() -> shards
 *   -> ss_engine_run(): workers call kernel->process(shard) -> bytes
 *   -> ordered writer -> one output file, genomic order.
 *
 * Kernels never call MPI; only framework/ does.
 */
#ifndef SS_FRAMEWORK_H
#define SS_FRAMEWORK_H

#include <stdint.h>
#include <stdio.h>
#include <getopt.h>
#include <htslib/hts.h>
#include <htslib/kstring.h>
#include <htslib/sam.h>

#include "../alloc/ss_alloc.h" /* ss_alloc_private: worker state kernels write per read */
#include "../io/ss_io.h"

#define SS_VERSION "0.1.0"

/* Exit codes: 0 ok, 1 bad input or run failure, 2 bad usage. */
#define SS_EXIT_OK 0
#define SS_EXIT_FAIL 1
#define SS_EXIT_USAGE 2

/* What a kernel's bytes are; the writer frames the file accordingly. */
typedef enum {
    SS_OUT_TEXT = 0, /* plain text lines (pileup) */
    SS_OUT_BGZF = 1, /* BGZF blocks, EOF block appended by the writer */
    SS_OUT_BAM = 2   /* BAM: header blocks first, EOF block last */
} ss_out_kind_t;

/* A shard with this tid holds the unplaced unmapped reads (the file's end). */
#define SS_TID_UNPLACED (-1)

/*
 * One region of the user's region list: [beg, end) 0-based on contig tid.
 * end is the END given, which may lie past the contig's length (HTS_POS_MAX
 * for CONTIG or CONTIG:BEG): records placed past the end of a contig belong
 * to a region whose END reaches them, as in an htslib region query; clip to
 * the contig for positions. tid SS_TID_UNPLACED is the region "*" (the
 * unplaced unmapped reads; beg = end = 0).
 */
typedef struct {
    int tid;
    hts_pos_t beg, end;
} ss_interval_t;

/*
 * A shard: a half-open range [beg, end) on contig tid. Shards are numbered
 * in plan order: the regions in the order the user gave them (each region's
 * shards in genomic order), or, without regions, the contigs in header
 * order; shard i's output precedes shard i+1's in the file. scope_beg and
 * scope_end bound the shard's own region (or its contig), so a kernel knows
 * where the reference tool would have started reading for that region.
 */
typedef struct {
    int idx;              /* 0-based position in plan order */
    int tid;              /* contig id in the first input's header, or SS_TID_UNPLACED */
    hts_pos_t beg, end;   /* positions this shard owns */
    hts_pos_t scope_beg;  /* start of the shard's region (or 0 for a whole contig) */
    hts_pos_t scope_end;  /* end of the region as given (HTS_POS_MAX for a whole contig):
                           * may pass the contig's length, unlike end */
    uint64_t est_work;    /* planner's estimate (compressed bytes), for progress */
} ss_shard_t;

/*
 * Options every kernel shares, filled by the kernel's parser (samtools'
 * names where they exist) and read by the framework.
 */
typedef struct {
    char **inputs;           /* BAM/CRAM paths, owned */
    int n_inputs;
    char **index_paths;      /* -X: index file of each input, owned; NULL = beside it */
    char **fmt_opts;         /* --input-fmt-option values (hts_opt syntax), owned */
    int n_fmt_opts;
    char *reference;         /* -f / -T / --reference, owned, may be NULL */
    char **regions;          /* regions in the order given (-r, view's arguments), owned */
    int n_regions;           /* 0: the whole genome */
    int merge_regions;       /* read the regions as one set: in header order ("*" last),
                              * overlapping and touching ones merged (samtools view -M) */
    char *bed;               /* -l, owned, may be NULL */
    char *output;            /* -o, owned, NULL means stdout */
    char *report;            /* --report FILE.json, owned, may be NULL */
    char *tmp_dir;           /* --tmp-dir, owned, may be NULL */
    int threads;             /* -@; 0 = as many as the cores we may run on */
    hts_pos_t shard_size;    /* --shard-size in bp-equivalents of work */
    int quiet;               /* --quiet */
    int bind;                /* --bind: an ss_bind_mode_t (ss_topology.h); 0 = auto */
    int print_binding;       /* --print-binding: print each worker's placement on stderr */
    int all_contigs;         /* plan contigs with no reads too (pileup -aa) */
    int unplaced;            /* kernel reads the unplaced unmapped reads: a whole-genome plan
                              * ends with their shard (tid SS_TID_UNPLACED), and the regions
                              * "*" (them) and "." (the whole file) are allowed */
    int input_list;          /* inputs came from -b: file arguments are ignored, as samtools does */
} ss_common_opts_t;

/* Counters a kernel fills per shard; summed per worker for --report. */
typedef struct {
    uint64_t reads;   /* records read from the inputs */
    uint64_t bases;   /* reference positions produced (pileup) or bases emitted */
} ss_shard_stats_t;

/* Defaults shared by all kernels (threads 0, shard size SS_DEFAULT_SHARD_SIZE). */
#define SS_DEFAULT_SHARD_SIZE 262144
void ss_common_opts_init(ss_common_opts_t *o);
void ss_common_opts_free(ss_common_opts_t *o);

/*
 * Options every kernel accepts. Put SS_COMMON_LONG_OPTS in the kernel's
 * getopt_long table, "@:" in its short string, and pass each option to
 * ss_common_opt before the kernel's own switch.
 */
#define SS_OPT_SHARD_SIZE 0x1001
#define SS_OPT_REPORT 0x1002
#define SS_OPT_TMP_DIR 0x1003
#define SS_OPT_QUIET 0x1004
#define SS_OPT_BIND 0x1005
#define SS_OPT_PRINT_BINDING 0x1006
#define SS_COMMON_LONG_OPTS                                                \
    {"threads", required_argument, NULL, '@'},                             \
    {"shard-size", required_argument, NULL, SS_OPT_SHARD_SIZE},            \
    {"report", required_argument, NULL, SS_OPT_REPORT},                    \
    {"tmp-dir", required_argument, NULL, SS_OPT_TMP_DIR},                  \
    {"quiet", no_argument, NULL, SS_OPT_QUIET},                            \
    {"bind", required_argument, NULL, SS_OPT_BIND},                        \
    {"print-binding", no_argument, NULL, SS_OPT_PRINT_BINDING}
/*
 * Handle option c. Returns 1 if it was a common option (stored in *o), 0 if
 * not, -1 after printing a one-line error naming the option and the bad value.
 * Sizes accept k/m/g suffixes. Main thread.
 */
int ss_common_opt(int c, const char *arg, ss_common_opts_t *o);
/* Print the common options block of a kernel's --help. */
void ss_common_usage(FILE *fp);
/*
 * Read a file of input paths (-b) into o->inputs. As in samtools mpileup, a
 * later -b replaces an earlier one, and once a list was read, file arguments
 * (ss_common_add_input) are ignored with a warning. Returns 0 or -1 after ss_error.
 */
int ss_common_add_input_list(ss_common_opts_t *o, const char *list_path);
/* Add one input path. Returns 0 (also when ignored after -b) or -1 after ss_error. */
int ss_common_add_input(ss_common_opts_t *o, const char *path);
/*
 * Append a region to the ordered list (view's "in.bam r1 r2 ..."). The text is
 * checked against the header when the job opens. Returns 0 or -1 after ss_error.
 * Main thread.
 */
int ss_common_add_region(ss_common_opts_t *o, const char *region);
/* Make region the only one (-r: a later -r replaces an earlier one). 0 or -1 after ss_error. */
int ss_common_set_region(ss_common_opts_t *o, const char *region);

/* The one process-wide view of the inputs the plan and kernels share. */
typedef struct ss_job_s ss_job_t;

/*
 * The kernel interface. A kernel is one file in kernels/ that fills this
 * struct, plus one line in kernels/registry.c.
 *
 * Threading: parse/usage/header run on the main thread before workers start;
 * worker_init/process/worker_destroy run on one worker thread each, with
 * that worker's own state; process is called once per shard, in any order.
 */
typedef struct ss_kernel_s {
    const char *name;
    const char *summary;        /* one line for `seqshard --help` */
    ss_out_kind_t out_kind;

    /* Print `seqshard NAME --help` text, with defaults. */
    void (*usage)(FILE *fp);

    /*
     * Parse argv (argv[0] is the kernel name). Fills *common and returns the
     * kernel's own options in *kopts (freed with opts_free). Returns 0 ok,
     * SS_EXIT_USAGE after printing a one-line error naming the option, or
     * -1 when --help was printed (caller exits 0).
     */
    int (*parse)(int argc, char **argv, ss_common_opts_t *common, void **kopts);
    void (*opts_free)(void *kopts);

    /*
     * Called once on the main thread after the job is opened and before any
     * worker starts: validate options against the inputs (contigs, reference).
     * Returns 0, or -1 after ss_error() explained why.
     */
    int (*prepare)(void *kopts, const ss_job_t *job);

    /* Bytes that open the file (a BAM header, say); may be NULL. */
    int (*header)(void *kopts, const ss_job_t *job, kstring_t *out);

    /* Per-worker state: opened once, reused across shards. */
    int (*worker_init)(void **wstate, void *kopts, const ss_job_t *job, ss_reader_t *rd,
                       int worker_id);
    /*
     * Append the shard's output to *out (cleared by the caller). Returns 0,
     * or -1 after ss_error() named the file, shard and cause. stats, when
     * not NULL, receives reads and bases processed for progress/--report.
     */
    int (*process)(void *wstate, const ss_shard_t *shard, kstring_t *out, ss_shard_stats_t *stats);
    void (*worker_destroy)(void *wstate);

    /* Optional. The output kind given the options; NULL: out_kind. Main thread. */
    ss_out_kind_t (*out_kind_of)(const void *kopts);
    /* Optional. Bytes after the last shard, before the BGZF EOF if any. Main thread. */
    int (*trailer)(void *kopts, const ss_job_t *job, kstring_t *out);
    /*
     * Optional. A step on the finished output before it is renamed into place,
     * such as building its index: path is the temporary file (NULL when the
     * output is standard output or a device), and an index written beside it as
     * path + .csi/.crai/.tbi is renamed with it (or removed if the run fails).
     * Messages name ss_job_opts(job)->output. 0, or -1 after ss_error(): then
     * nothing is renamed. The rank that owns the output.
     */
    int (*finish)(void *kopts, const ss_job_t *job, const char *path);
} ss_kernel_t;
#define SS_KERNEL_HOOKS_V2 1

/*
 * An empty record, as bam_init1() makes it, but on private cache lines
 * (ss_alloc_private): for records a worker fills per read. bam_destroy1() frees it.
 */
static inline bam1_t *ss_bam_private(void)
{
    return ss_alloc_private(sizeof(bam1_t));
}

/* The 28-byte empty BGZF block that ends every BGZF/BAM file (SAM spec 4.1.2). */
extern const unsigned char ss_bgzf_eof[28];

/* Registry: kernels/registry.c. */
const ss_kernel_t *ss_kernel_find(const char *name);
int ss_kernel_count(void);
const ss_kernel_t *ss_kernel_at(int i);

/* ---- the job: inputs opened once on the main thread for planning ---- */

/*
 * Open every input's header and index, check sort order and index presence,
 * load the reference index. Returns NULL after ss_error() on failure.
 * Main thread only. Freed with ss_job_close.
 */
ss_job_t *ss_job_open(const ss_common_opts_t *opts, const char *kernel_name);
void ss_job_close(ss_job_t *job);
const ss_common_opts_t *ss_job_opts(const ss_job_t *job);
sam_hdr_t *ss_job_header(const ss_job_t *job); /* first input's header; do not free */
const ss_io_inputs_t *ss_job_inputs(const ss_job_t *job);
/* The parsed -l file, or NULL. */
const ss_bed_t *ss_job_bed(const ss_job_t *job);
/*
 * The regions in the order given, each parsed ("." expanded to every contig
 * and "*"); with merge_regions, sorted (header order, "*" last) and merged
 * instead, so no two share a position or touch. *n receives the count. NULL
 * and 0 when none was given (the whole genome). Owned by the job; any thread
 * may read.
 */
const ss_interval_t *ss_job_regions(const ss_job_t *job, int *n);
/* The region when exactly one was given (pileup's -r), else NULL. */
const ss_interval_t *ss_job_region(const ss_job_t *job);

/* ---- the plan ---- */

/*
 * Cut the job's scope (the regions in the order given, or whole contigs in
 * header order; either intersected with the -l BED intervals) into shards of
 * balanced estimated work, numbered in that order. A region "*" is one shard
 * of tid SS_TID_UNPLACED. The plan depends only on the inputs and options,
 * never on threads or ranks. Returns 0 and a malloc'ed array in *shards (caller frees; may be
 * NULL when *n is 0), or -1 after ss_error(). Main thread.
 */
int ss_plan_build(const ss_job_t *job, ss_shard_t **shards, int *n);

/* ---- the engine ---- */

/* Run kernel over the job; returns process exit status (0 ok, 1 failure). */
int ss_engine_run(const ss_kernel_t *kernel, void *kopts, ss_job_t *job);

/* ---- errors and messages ---- */

/*
 * Record the first error of the run (thread-safe; later ones are dropped)
 * and print it as one line "seqshard: <message>" on stderr. Never exits.
 */
void ss_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Nonzero once any thread called ss_error(); workers poll it to stop early. */
int ss_error_raised(void);
void ss_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The first error as printed ("seqshard: ..."), without the newline; "" if none. Any thread. */
const char *ss_error_message(void);
/* Forget the recorded error (tests, and a new run in the same process). Main thread. */
void ss_error_reset(void);

/* Top-level entry: `seqshard ...`. */
int ss_main(int argc, char **argv);

#endif

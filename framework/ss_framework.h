/*
 * ss_framework.h -- what every kernel needs: the kernel interface
 * (ss_kernel_t), the shard, the job's inputs, the options a parser fills,
 * the output spec and the output calls. Records are read through io/'s
 * ss_source_t (ss_reader_source); errors go through ss_error() (base/).
 *
 * Data flow (see docs/architecture.md):
 *   ss_job_t (inputs + options) -> the plan -> shards
 *   -> the engine: workers call kernel->process(shard), which reads
 *      records (ss_source_t) and writes text or records (ss_out_t)
 *   -> the sink (ordered writer, or the MPI merge) -> one output file.
 *
 * Rarer calls, each used by one or two kernels (side streams, reductions and
 * the finish hook's files, view's BGZF block copy, the census' constants, a
 * step's record writer, ...) are in ss_framework_extra.h; a kernel includes
 * it only when it uses one. The program's driver (job, plan, engine, entry)
 * is private to framework/ (driver.h, entry.h).
 *
 * Kernels never call MPI; only framework/ does.
 */
#ifndef SS_FRAMEWORK_H
#define SS_FRAMEWORK_H

#include <getopt.h>
#include <htslib/hts.h>
#include <htslib/kstring.h>
#include <htslib/sam.h>
#include <stdint.h>
#include <stdio.h>

#include "../alloc/ss_alloc.h" /* ss_alloc_private: worker state kernels write per read */
#include "../base/ss_base.h"
#include "../io/ss_bed.h"
#include "../io/ss_reader.h"
#include "ss_cmdline.h"
#include "ss_step.h"

/* The release (man pages); the build's own version, which @PG VN and --version name, is
 * ss_build_version: the release at its tag, release+gHASH on any other commit. */
#define SS_VERSION "0.1.0"
extern const char ss_build_version[]; /* generated at build time (cmake/build_info.cmake) */
extern const char ss_build_type[];
extern const char ss_build_compiler[];

/* parse's answer to a bad option, and the program's exit status then (driver.h has the others). */
#define SS_EXIT_USAGE 2

/* The one process-wide view of the inputs the plan and kernels share. */
typedef struct ss_job_s ss_job_t;
/* A worker's output for the shard it is processing (framework/out/out_shard.c). */
typedef struct ss_out_s ss_out_t;
/* The finish hook's view of the run's totals (ss_framework_extra.h). */
typedef struct ss_finish_s ss_finish_t;

/* ---- the shard ---- */

/* A shard with this tid holds the unplaced unmapped reads (the file's end). */
#define SS_TID_UNPLACED (-1)

/*
 * A shard: a half-open range [beg, end) on contig tid. Shards are numbered
 * in plan order: the regions in the order the user gave them (each region's
 * shards in genomic order), or, without regions, the contigs in header
 * order; shard i's output precedes shard i+1's in the file. scope_beg and
 * scope_end bound the shard's own region (or its contig), so a kernel knows
 * where the reference tool would have started reading for that region.
 */
typedef struct {
    int idx;             /* 0-based position in plan order */
    int tid;             /* contig id in the first input's header, or SS_TID_UNPLACED */
    hts_pos_t beg, end;  /* positions this shard owns */
    hts_pos_t scope_beg; /* start of the shard's region (or 0 for a whole contig) */
    hts_pos_t scope_end; /* end of the region as given (HTS_POS_MAX for a whole contig):
                          * may pass the contig's length, unlike end */
    uint64_t est_work;   /* planner's estimate (compressed bytes), for progress */
    hts_pos_t query_end; /* where a query for the shard's own records ends: end, or for the
                          * last shard of its scope the scope's END as given, so records
                          * placed past the contig's length are the last shard's */
    uint64_t before;     /* with a census (ss_kernel_t.census): the sum of the counts of
                          * every shard before this one in plan order, or
                          * SS_BEFORE_UNKNOWN while some of them are still running;
                          * else 0 */
} ss_shard_t;

/*
 * How many counters a run may report: the kernel's own (ss_kernel_t.counter_names,
 * at most 6), then its steps' (ss_step_t.counter_names).
 */
#define SS_KERNEL_COUNTERS 16

/* Run-wide counters a kernel may add to per shard, for its summary hook. */
#define SS_SUMMARY_N 4

/* Counters a kernel fills per shard; summed per worker (and over ranks) for --report. */
typedef struct {
    uint64_t reads; /* records read from the inputs */
    uint64_t bases; /* reference positions produced (pileup) or bases emitted */
    uint64_t counts[SS_KERNEL_COUNTERS]; /* the kernel's own (counter_names), then its steps' */
    uint64_t summary[SS_SUMMARY_N];      /* summed over every shard and rank for the summary hook */
    uint64_t census; /* with a census: what the census hook counts for this shard, as the
                      * shard's own pass counted it (ss_kernel_t.census) */
} ss_shard_stats_t;

/* ---- the options a kernel's parser fills ---- */

/*
 * Options every kernel shares, filled by the kernel's parser (samtools'
 * names where they exist) and read by the framework. What a kernel is on
 * every run (reads standard input, the unplaced reads, ...) is not here but
 * in its ss_kernel_t.
 */
typedef struct ss_common_opts_s {
    char **inputs; /* BAM/CRAM paths, owned */
    int n_inputs;
    char **index_paths; /* -X: index file of each input, owned; NULL = beside it */
    char **fmt_opts;    /* --input-fmt-option values (hts_opt syntax), owned */
    int n_fmt_opts;
    char *reference;        /* -f / -T / --reference, owned, may be NULL */
    const char *ref_option; /* the kernel's name for it in messages ("-f", "-T"), static */
    char **regions;         /* regions in the order given (-r, view's arguments), owned */
    int n_regions;          /* 0: the whole genome, unless no_regions */
    int no_regions;         /* a region list was given and named none: nothing is read */
    int merge_regions;      /* read the regions as one set: in header order ("*" last),
                             * overlapping and touching ones merged (samtools view -M) */
    char *bed;              /* -l, owned, may be NULL */
    char *output;           /* -o, owned, NULL means stdout */
    char *index_out;        /* the INDEX of -o FILE##idx##INDEX, owned, or NULL: beside FILE */
    int out_format;         /* -O: SS_FMT_SAM/BAM/CRAM, or -1: from -o's name (ss_out_choose) */
    int out_level;          /* level=N of -O or --output-fmt-option; -1: htslib's default */
    int write_index;        /* --write-index */
    char *report;           /* --report FILE.json, owned, may be NULL */
    char *tmp_dir;          /* --tmp-dir, owned, may be NULL */
    int threads;            /* -@; 0 = as many as the cores we may run on */
    hts_pos_t shard_size;   /* --shard-size in bp-equivalents of work */
    int shard_size_given;   /* --shard-size was on the command line */
    int quiet;              /* --quiet */
    int bind;          /* --bind: an ss_bind_mode_t (framework/topology/topology.h); 0 = auto */
    int print_binding; /* --print-binding: print each worker's placement on stderr */
    int resume;        /* --resume: reuse the shards an interrupted run of the same
                        * command wrote beside -o FILE (framework/resume/resume.c) */
    int all_contigs;   /* plan contigs with no reads too (pileup -aa) */
    int input_list;    /* inputs came from -b: file arguments are ignored, as samtools does */
    struct ss_side_file_s *side_reads; /* files the kernel reads besides the framework's,
                                        * and the -b lists: ss_common_add_read; owned
                                        * (ss_side_file_t, driver.h) */
    int n_side_reads;
    struct ss_side_file_s *side_writes; /* files the kernel writes besides -o (its finish
                                         * files, its side streams): ss_common_add_write;
                                         * owned */
    int n_side_writes;
    void *step_opts[SS_STEPS_MAX]; /* each registered step's options, by registry index, once
                                    * one of them was given; owned (ss_step_t.opts_free) */
    int step_on[SS_STEPS_MAX];     /* the step is in front of the kernel (--NAME) */
} ss_common_opts_t;

/*
 * Option helpers for kernels' parsers. ss_opt_int: arg as a whole number in
 * [lo, hi] into *out; 0, or -1 after a one-line usage message naming opt and
 * arg. ss_opt_string: replace *dst by a copy of arg; 0, or -1 out of memory.
 */
int ss_opt_int(const char *opt, const char *arg, int lo, int hi, int *out);
int ss_opt_string(char **dst, const char *arg);
/*
 * Read a file of input paths (-b) into o->inputs. As in samtools mpileup, a
 * later -b replaces an earlier one, and once a list was read, file arguments
 * (ss_common_add_input) are ignored with a warning. Returns 0 or -1 after ss_error.
 */
int ss_common_add_input_list(ss_common_opts_t *o, const char *list_path);
/*
 * Register a file the kernel reads (a VCF, a BED, a list): path (copied) and
 * role (static, "the --known VCF"); indexed: its .tbi/.csi is read too. It
 * becomes part of the run's identity for --resume, and no output may be it.
 * ss_common_add_write: a file the kernel writes besides -o (its finish files,
 * its side streams), named by option opt (static, for the fix: "give OPT
 * another name"), which no other output and no read file may be. 0, or -1
 * after ss_error() (out of memory). Main thread, during parse.
 */
int ss_common_add_read(ss_common_opts_t *o, const char *path, const char *role, int indexed);
int ss_common_add_write(ss_common_opts_t *o, const char *path, const char *role, const char *opt);
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

/* ---- what the kernel says its output is ---- */

/*
 * What a run writes, decided once, before any work (out_run.c): text lines
 * (BGZF + tabix when -o ends in .gz/.bgz), or records as SAM (BGZF when -o
 * ends in .sam.gz, as samtools does), BAM or CRAM. The framework owns every
 * encoder, the header, the framing (BGZF EOF, CRAM EOF container) and the
 * index; a kernel only says which.
 */
typedef enum {
    SS_FMT_TEXT = 0, /* text lines (pileup) */
    SS_FMT_SAM = 1,  /* records, as SAM text */
    SS_FMT_BAM = 2,  /* records, as BAM */
    SS_FMT_CRAM = 3  /* records, as CRAM 3.0 */
} ss_out_format_t;

/*
 * A record kernel's output format: -O's, else what -o's name says (.bam,
 * .cram, .sam, .sam.gz), else dflt. Main thread, in parse or prepare.
 */
ss_out_format_t ss_out_format_from(const ss_common_opts_t *co, ss_out_format_t dflt);

/* How many side streams a run may write besides its main output. */
#define SS_OUT_STREAMS 8

/* A side stream's file: plain text, or BGZF text with a CSI index (tabix -p bed --csi). */
typedef enum { SS_STREAM_TEXT = 0, SS_STREAM_BED_GZ = 1 } ss_stream_format_t;

/* One side stream (ss_out_stream): its final name, opening bytes, format and level. */
typedef struct {
    const char *path;   /* the file it becomes; copied by the framework */
    const char *header; /* bytes that open it (compressed like the rest), or NULL */
    ss_stream_format_t format;
    int level; /* BGZF level 0-9, -1 htslib's default */
} ss_stream_spec_t;

/* How a reduced value combines over workers and ranks. Identities: 0, INT64_MAX, INT64_MIN. */
typedef enum { SS_REDUCE_SUM = 0, SS_REDUCE_MIN = 1, SS_REDUCE_MAX = 2 } ss_reduce_op_t;

/*
 * A kernel's output, filled by its prepare hook. The framework frees header
 * (it takes ownership) and copies text_header.
 */
typedef struct {
    ss_out_format_t format;
    int level;               /* BAM/CRAM/BGZF compression level 0-9; -1: htslib's default */
    sam_hdr_t *header;       /* records: the output header (with the kernel's @PG line) */
    int sam_header;          /* SAM: write the header text first (samtools view -h) */
    int write_index;         /* records: index the output (BAM: .csi, CRAM: .crai) */
    int index_threads;       /* threads for building that index */
    const char *text_header; /* text: bytes that open the file, or NULL */
    size_t text_header_len;  /* their length when they hold NUL bytes (a BCF header); 0: a
                              * C string */
    int text_bgzf;           /* text: an ss_text_bgzf_t (ss_framework_extra.h) */
    int text_index;          /* text: an ss_text_index_t (ss_framework_extra.h) */
    /*
     * What a shard's output weighs, so the planner can cut shards that each
     * make about SS_SHARD_OUTPUT bytes at most whatever the number of inputs
     * (plan.c): out_per_work bytes per byte of one input's estimated work
     * (BAM-compressed bytes; the plan sums it over the inputs), plus
     * out_per_base bytes per position whatever the reads (pileup -a). Both
     * 0: the output does not grow with the inputs, and only work cuts.
     */
    double out_per_work;
    double out_per_base;
    /*
     * Side streams and reductions (side_out.c, reduce.c; docs/kernel-guide.md;
     * their calls are in ss_framework_extra.h): files besides the main output,
     * each written in shard order like it, and per-worker int64 values and
     * histograms the framework combines over workers and ranks for the kernel's
     * finish hook. no_main: the kernel writes only those; there is no main
     * output (and no -o).
     */
    int no_main;
    int census; /* run the kernel's census hook over every shard before the run
                 * (ss_kernel_t.census), which fills each shard's `before` */
    int gather; /* run the kernel's gather hook over every shard before the run and
                 * hand every shard's bytes, in plan order, to its gathered hook */
    int n_streams;
    ss_stream_spec_t streams[SS_OUT_STREAMS];
    size_t n_values;                 /* reduced values, combined by value_ops[i] */
    const ss_reduce_op_t *value_ops; /* [n_values], the run state's: lives through the run */
    int n_hists;                     /* summed histograms, each grown as workers need */
} ss_out_spec_t;

/* ---- the kernel ---- */

/*
 * The kernel interface. A kernel is a folder in kernels/ that fills this
 * struct, plus one line in kernels/main.c (docs/kernel-guide.md).
 *
 * Options are plain: parse fills them and nothing changes them afterwards.
 * What a run needs besides (indexes, headers, tables built from the inputs)
 * is the kernel's run state, built by prepare and read-only for the workers.
 *
 * Threading: parse, prepare and run_free run on the main thread before and
 * after the workers; worker_init/process/worker_destroy run on one worker
 * thread each, with that worker's own state; process is called once per
 * shard, in any order.
 */
typedef struct ss_kernel_s {
    /* ---- every kernel fills these (prepare to worker_destroy may be NULL: nothing to do) */
    const char *name;
    const char *summary; /* one line for `seqshard --help` */

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
     * After the job opened, before any worker starts: check the options
     * against the inputs, build the run state (*run, may stay NULL; freed by
     * run_free) and say what the output is (*out arrives zeroed with format
     * SS_FMT_TEXT and level -1). Returns 0, or -1 after ss_error() said why.
     */
    int (*prepare)(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out);
    void (*run_free)(void *run);

    /*
     * Per-worker state: made once, reused across shards, from the options and
     * the run state (both read-only). 0, or -1 after ss_error().
     */
    int (*worker_init)(void **wstate, const void *kopts, const void *run, const ss_job_t *job,
                       ss_reader_t *rd, int worker_id);
    /*
     * Write the shard's output through out: text (ss_out_text) or records
     * (ss_out_record). Returns 0, or -1 after ss_error() named the file,
     * shard and cause. stats receives reads and bases for progress/--report.
     * A kernel with a census may also return SS_SHARD_NEEDS_BEFORE (see census).
     */
    int (*process)(void *wstate, const ss_shard_t *shard, ss_out_t *out, ss_shard_stats_t *stats);
    void (*worker_destroy)(void *wstate);

    /* ---- what the kernel reads, the same on every run (0: no) ---- */
    int stdin_ok; /* "-" (standard input) is read as a stream: one worker, one
                   * shard per contig in file order, no index (pileup, view) */
    int unplaced; /* the unplaced unmapped reads: a whole-genome plan ends with
                   * their shard (tid SS_TID_UNPLACED), and the regions "*" (them)
                   * and "." (the whole file) are allowed (pileup, view, realign,
                   * markdup) */
    int past_end; /* prints the positions past a contig's end that reads running
                   * past it cover: a region or -l interval starting at or past
                   * the end gets a shard there (pileup, mpileup) */
    int cram_md;  /* writes or reads MD/NM: CRAM inputs rebuild them as htslib does
                   * by default, else decoding skips that work (mpileup, markdup;
                   * a step's own: ss_step_t.cram_md) */

    /* ---- optional: each used by one or two kernels (their helpers: ss_framework_extra.h) */
    /*
     * Names of the kernel's own counters (stats->counts[i]), NULL-terminated,
     * at most 6; --report sums them over shards and ranks as "kernel_counts",
     * followed by its steps' counters. NULL: none. A counter that must not
     * depend on the shard size counts each thing in one shard only. (mpileup)
     */
    const char *const *counter_names;

    /*
     * One line on how this build runs the kernel on this machine (pileup: its
     * BAQ code path), for `seqshard --version` and --report. Returns a static
     * string. Main thread.
     */
    const char *(*describe)(void);

    /*
     * Text output: a result of the whole run that no shard can print alone
     * (view -c: one count). process adds to stats->summary[]; the framework
     * sums those over every shard and rank, and calls this once, on the main
     * thread of the rank that owns the output, after every shard was written;
     * the text it appends to *text ends the output (before any trailer,
     * compressed like the rest). It may also write what the run state holds
     * from gathered (mpileup --call -i: the targets bcftools writes last). Not
     * called when the run failed. 0, or -1 after ss_error(). (view, mpileup)
     */
    int (*run_summary)(const void *kopts, const void *run, const uint64_t sums[SS_SUMMARY_N],
                       kstring_t *text);

    /*
     * After every shard was written, on one rank (the output's owner), only
     * if the run worked: the values and histograms reduced over all workers
     * and ranks, and small files written through fin (the kernel never
     * writes a file). Returns 0, or -1 after ss_error(); then no output of
     * the run appears. (depth --mosdepth, markdup -f)
     */
    int (*finish)(const void *kopts, const void *run, ss_finish_t *fin);

    /*
     * Run when prepare set spec.census: before the run, once per shard
     * (worker threads, any order, any rank, with worker state from
     * worker_init), count what the shard holds of something whose total
     * before a shard changes that shard's output (bcftools mpileup's random
     * draws). The framework gives each shard of the run the sum of the
     * counts of the shards before it (ss_shard_t.before). Writes no output.
     * 0, or -1 after ss_error(). With one rank, process takes part (the
     * census section of ss_framework_extra.h). (mpileup)
     */
    int (*census)(void *wstate, const ss_shard_t *shard, uint64_t *count);

    /*
     * Run when prepare set spec.gather: decisions one shard makes that
     * records of other shards, ranks or contigs need (samtools markdup -S:
     * the names of duplicates whose supplementary alignments must be marked
     * wherever they lie). Before the run, once per shard (worker threads,
     * any order, any rank), gather appends what the shard decides to
     * *bytes, in its own format; the framework joins every shard's bytes in
     * plan order and hands them, on every rank, to gathered (main thread,
     * before any worker starts), which keeps what it needs where the run
     * state points (the run state itself stays read-only). Both 0, or -1
     * after ss_error(). (markdup -S, mpileup --call -i)
     */
    int (*gather)(void *wstate, const ss_shard_t *shard, kstring_t *bytes);
    int (*gathered)(const void *run, const char *bytes, size_t len);
} ss_kernel_t;

/* ---- the job: what every shard reads, read-only, any thread ---- */

const ss_common_opts_t *ss_job_opts(const ss_job_t *job);
sam_hdr_t *ss_job_header(const ss_job_t *job); /* first input's header; do not free */
const ss_io_inputs_t *ss_job_inputs(const ss_job_t *job);

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
 * The regions in the order given, each parsed ("." expanded to every contig
 * and "*"); with merge_regions, sorted (header order, "*" last) and merged
 * instead, so no two share a position or touch. *n receives the count. NULL
 * and 0 when none was given (the whole genome). Owned by the job; any thread
 * may read.
 */
const ss_interval_t *ss_job_regions(const ss_job_t *job, int *n);
/* The region when exactly one was given (pileup's -r), else NULL. */
const ss_interval_t *ss_job_region(const ss_job_t *job);
/* The parsed -l file, or NULL. */
const ss_bed_t *ss_job_bed(const ss_job_t *job);

/* ---- writing a shard's output: worker thread, during process ---- */

/*
 * Text kernels: the shard's text buffer; append lines to it. The framework
 * compresses it when the output is BGZF. Worker thread, during process.
 */
kstring_t *ss_out_text(ss_out_t *o);
/*
 * Record kernels: write one record in the run's format. b is copied (moving
 * kernels) or encoded at once; the caller keeps it. Returns 0, or -1 after
 * ss_error() named the read. Worker thread, during process.
 */
int ss_out_record(ss_out_t *o, const bam1_t *b);
/*
 * Make room for about n bytes of the shard's output (ss_ks_reserve), after
 * a checkpoint. 0 or -1.
 */
int ss_out_reserve(ss_out_t *o, size_t n);
/*
 * A text kernel calls this every so often (pileup: each column): past a few
 * MB, the shard's bytes so far leave memory for a temporary file, so a shard
 * may make any amount of output. The text buffer stays the same kstring_t,
 * shorter: keep no pointer into its bytes across the call. 0, or -1 after
 * ss_error(). ss_out_record and ss_out_reserve do it themselves.
 */
int ss_out_checkpoint(ss_out_t *o);

/*
 * An empty record, as bam_init1() makes it, but on private cache lines
 * (ss_alloc_private): for records a worker fills per read. bam_destroy1() frees it.
 */
static inline bam1_t *ss_bam_private(void)
{
    return ss_alloc_private(sizeof(bam1_t));
}

/* Errors and messages: ss_error(), ss_warn() (base/ss_base.h). */

#endif

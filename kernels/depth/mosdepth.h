/*
 * mosdepth.h -- private header of `seqshard depth --mosdepth`: mosdepth
 * 0.3.3's files and semantics, shard by shard. Options and the BED
 * (mosdepth_opts.c), the depth of a range of one contig with mosdepth's
 * counting rules (mosdepth_count.c), the shard walk and its lines
 * (mosdepth.c), and the files written once from the reduced totals
 * (mosdepth_finish.c).
 *
 * Threading: options and the run state are read-only once the workers run;
 * a worker's counter and buffers are its own.
 */
#ifndef SS_MOSDEPTH_H
#define SS_MOSDEPTH_H

#include <stdint.h>

#include "../../framework/ss_framework.h"

#define MOS_DEFAULT_EFLAG    1796          /* UNMAP | SECONDARY | QCFAIL | DUP */
#define MOS_MAX_COVERAGE     400000        /* mosdepth's histogram clamp: deeper counts at ... */
#define MOS_CLAMPED          (400000 - 10) /* ... this depth */
#define MOS_MEDIAN_BINS      65536         /* -m: depths past the last bin count in it */
#define MOS_WINDOW_DIST_BINS 1000          /* window means past this count in the last bin */

typedef struct mos_opts_s {
    char *prefix;
    char *by;                      /* --by: a BED path, or NULL */
    hts_pos_t window;              /* --by INT: window size; 0 */
    int *thresholds, n_thresholds; /* sorted */
    int64_t *quants;               /* --quantize bounds, sorted; INT64_MAX for an open end */
    int n_quants;
    char **qlabels;     /* [n_quants - 1]: "0:1", "10:inf" or MOSDEPTH_Q<i> */
    int no_per_base;    /* -n */
    int fast;           /* -x */
    int mapq;           /* -Q */
    int eflag, iflag;   /* -F, -i */
    int median;         /* -m */
    int precision;      /* MOSDEPTH_PRECISION, else 2 */
    char *chrom;        /* -c: the one contig to count, or NULL for all */
    char **read_groups; /* -R: count only reads whose RG is one of these; NULL for all */
    int n_read_groups;
} mos_opts_t;

/* mosdepth mode's options and text: its --help and the man page's MOSDEPTH MODE. */
extern const ss_cmd_t mos_cmd;

int mos_parse(int argc, char **argv, ss_common_opts_t *co, mos_opts_t **out);
void mos_opts_free(mos_opts_t *o);
void mos_usage(FILE *fp);
/* Quantize bounds from mosdepth's syntax ("0:1:10:", "1:4", "5"); 0, or -1 malformed. */
int mos_quantize_parse(const char *arg, int64_t **q, int *n);

/* A --by BED interval, 0-based half-open; name NULL when the line has 3 columns. */
typedef struct {
    hts_pos_t beg, end;
    char *name;
    int line; /* in the file: equal starts keep the file's order, as mosdepth's sort */
} mos_region_t;

/* Streams of the run; -1 when a file is not written. */
enum { MOS_PER_BASE, MOS_REGIONS, MOS_THRESHOLDS, MOS_QUANTIZED, MOS_N_STREAMS };

/* Reduced values per contig (ss_out_values), MOS_NV of them at tid * MOS_NV. */
enum { MOS_BASES, MOS_MIN, MOS_MAX, MOS_RLEN, MOS_RBASES, MOS_RMIN, MOS_RMAX, MOS_NV };

typedef struct {
    const mos_opts_t *o;
    int nref;
    mos_region_t **regions; /* [nref] BED intervals by contig, sorted by start (stable) */
    int *n_regions;         /* [nref] */
    unsigned char *skip;    /* [nref] contigs mosdepth leaves out (-n, a BED without them) */
    int stream[MOS_N_STREAMS];
    char *path[MOS_N_STREAMS];
    char *thresholds_header;
    ss_reduce_op_t *ops; /* [nref * MOS_NV] */
    const sam_hdr_t *hdr;
    const char *reference, *ref_option; /* -f and its name, for a CRAM's read errors */
} mos_run_t;

int mos_prepare(const mos_opts_t *o, const ss_job_t *job, mos_run_t **run, ss_out_spec_t *out);
void mos_run_free(mos_run_t *r);
/* Read the --by BED into r's per-contig lists. 0, or -1 after ss_error(). */
int mos_read_bed(mos_run_t *r, const char *path, const sam_hdr_t *hdr);

/* ---- the depth of a range (mosdepth_count.c) ---- */

typedef struct mos_counter_s mos_counter_t;

mos_counter_t *mos_counter_init(const mos_opts_t *o);
void mos_counter_destroy(mos_counter_t *c);
/*
 * The depth along contig tid from beg on, in mosdepth's counting (default: the
 * M/=/X blocks, a proper pair's overlap counted once; -x: POS to the end), from
 * one query that reads on as far as asked. mos_count_start: 0, or -1 after
 * ss_error(). mos_count_next: the depths of [where the last call ended (or beg),
 * end), valid until the next call, or NULL after ss_error(); reads counts the
 * records read. Worker thread that owns c.
 */
int mos_count_start(mos_counter_t *c, ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t clen,
                    int shard);
const int32_t *mos_count_next(mos_counter_t *c, hts_pos_t end, uint64_t *reads);
/* The htslib read error (< -1) that made mos_count_next return NULL unreported, or 0. */
int mos_count_read_error(const mos_counter_t *c);

/* ---- the kernel (mosdepth.c) and the final files (mosdepth_finish.c) ---- */

typedef struct mos_worker_s mos_worker_t;
int mos_worker_init(mos_worker_t **w, const mos_opts_t *o, const mos_run_t *run, ss_reader_t *rd);
void mos_worker_destroy(mos_worker_t *w);
int mos_process(mos_worker_t *w, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st);
int mos_finish(const mos_opts_t *o, const mos_run_t *run, ss_finish_t *fin);

/* "%#.*f" as mosdepth prints its means and fractions. */
int mos_put_float(kstring_t *s, double v, int precision);
/* Index in quants of the bin holding d (mosdepth's linear_search), or -1. */
int mos_quant_bin(const int64_t *quants, int n, int64_t d);
/* mosdepth's median of counts[] over n values. */
int mos_median(const uint32_t *counts, int64_t n);

#endif

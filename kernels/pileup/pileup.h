/*
 * pileup.h -- private to the pileup kernel (kernels/pileup*.c).
 *
 * The kernel reproduces `samtools mpileup` 1.16 byte for byte on any shard
 * of the genome. Three things make a shard's bytes equal the whole-file run:
 *   - the read filter is samtools', and the pileup engine (pileup_engine.c)
 *     has htslib's semantics, checked against htslib's own on random reads;
 *   - a shard starts its pileup at a "safe point" where the reference run's
 *     state (depth cap, mate overlaps) is known to equal a fresh start
 *     (pileup_read.c explains why), and takes the first read past its end, which
 *     the reference run takes before printing the shard's last columns
 *     (pl_query_shard);
 *   - zero-depth lines (-a, -aa) ask the index whether other shards or
 *     contigs have coverage, to pick the reference base samtools would print
 *     (pileup_empty.c).
 */
#ifndef SS_KERNEL_PILEUP_H
#define SS_KERNEL_PILEUP_H

#include <htslib/khash_str2int.h>
#include <htslib/sam.h>

#include "../../framework/ss_framework.h"
#include "../../genomics/baq.h"
#include "../../io/ss_ref.h"

/* Extra columns, in the order samtools prints them. */
enum {
    PL_COL_MAPQ_CHAR = 1 << 0, /* -s */
    PL_COL_QPOS = 1 << 1,      /* -O */
    PL_COL_QNAME = 1 << 2,     /* --output-QNAME / --output-extra QNAME */
    PL_COL_FLAG = 1 << 3,
    PL_COL_RNAME = 1 << 4,
    PL_COL_POS = 1 << 5,
    PL_COL_MAPQ = 1 << 6,
    PL_COL_RNEXT = 1 << 7,
    PL_COL_PNEXT = 1 << 8,
    PL_COL_QPOS5 = 1 << 9 /* --output-BP-5 */
};
#define PL_N_COLS 10

#define PL_MAX_TAGS 64

/* Options of `seqshard pileup`, samtools mpileup's names and defaults. */
typedef struct {
    int min_mq;              /* -q */
    int min_baseq;           /* -Q [13] */
    int cap_q;               /* -C [0] */
    int max_depth;           /* -d [8000]; 0 means unlimited */
    int allow_ref_mismatch;  /* --allow-ref-mismatch: a -f of another genome warns, not stops */
    int all;                 /* -a count: 1 = -a, 2 = -aa */
    int baq;                 /* on unless -B (applies only with a reference) */
    int redo_baq;            /* -E */
    int illumina13;          /* -6 */
    int orphans;             /* -A: keep anomalous pairs */
    int overlaps;            /* mate overlap detection, off with -x */
    int rflag_require;       /* --rf */
    int rflag_filter;        /* --ff [UNMAP,SECONDARY,QCFAIL,DUP] */
    int cols;                /* PL_COL_* */
    char *tags[PL_MAX_TAGS]; /* --output-extra tags, owned */
    int n_tags;
    char sep, empty;    /* --output-sep, --output-empty */
    int no_ins, no_del; /* counts: once drops the sequence, twice the marker */
    int no_ends;        /* --no-output-ends */
    int mods;           /* -M: base modifications after each base */
    int no_ins_mods;    /* --no-output-ins-mods */
    int custom_index;   /* -X: index files follow the inputs */
    int rev_del;        /* --reverse-del */
    void *rg_exclude;   /* -G: khash_str2int set of read groups, or NULL */
} pl_opts_t;

void pl_opts_default(pl_opts_t *o);
void pl_opts_free(pl_opts_t *o);

/*
 * Reads taken ahead from an input's source, so that BAQ runs on a batch
 * (grouped by shape, several reads per instruction) instead of one read at a
 * time. They pass the filters before BAQ when taken, get BAQ together, and
 * leave in their order through the filters after BAQ (-C, -q, orphans), so
 * the pileup sees the same reads as before. Worker-owned (pileup_read.c).
 */
typedef struct pl_ahead_s pl_ahead_t;

/* NULL when out of memory. cap: reads per batch. */
pl_ahead_t *pl_ahead_init(int cap);
void pl_ahead_destroy(pl_ahead_t *a);

/* One input as the read callback sees it: worker-owned. */
typedef struct pl_input_s {
    ss_reader_t *rd;  /* the worker's reader, for the file's format and block cache */
    int i;            /* this input's number in rd */
    ss_source_t *src; /* its records */
    sam_hdr_t *hdr;
    const char *path;
    const pl_opts_t *opts;
    const ss_bed_t *bed; /* read filter when -l and not -a */
    const char *ref;     /* current contig's sequence, or NULL */
    hts_pos_t ref_len;
    ss_ref_t *ref_src; /* where ref comes from: reads cover their span in it */
    int ref_tid;
    int do_baq;            /* BAQ applies (reference loaded and not -B) */
    hts_pos_t baq_from;    /* BAQ only reads ending past this (see pl_safe_start) */
    baq_t *baq;            /* the worker's BAQ workspace, shared by its inputs */
    pl_ahead_t *ahead;     /* reads taken ahead for BAQ, owned */
    int q_tid;             /* the contig of the range queried */
    hts_pos_t shard_end;   /* pl_query_shard: the shard's end, -1 after pl_query */
    hts_pos_t follow_end;  /* how far reads past shard_end may be looked for */
    hts_pos_t queried_to;  /* the source's current range ends here */
    hts_pos_t skip_before; /* records starting before this came with an earlier range */
    hts_pos_t held_end;    /* farthest end of the records before shard_end */
    int past_end;          /* the first read past shard_end was handed out: end */
    uint64_t n_read;       /* records read, for stats */
    int read_err;          /* htslib's error code when a read failed, else 0 */
    int read_errno;        /* errno then: ENOMEM is memory, not a corrupt file */
    int warned_beyond_ref;
    hts_pos_t longest; /* the longest reference span of the records read so far */
} pl_input_t;

/*
 * Read the next record that passes samtools' mpileup filters (unmapped,
 * --rf/--ff, -l, -G, -6, reads past the reference end, BAQ, -C, -q, orphans),
 * modifying qualities and MAPQ as samtools does. The engine's read callback.
 * Returns >= 0 for a record, -1 at the end, < -1 on a read error.
 */
int pl_read_filtered(void *data, bam1_t *b);

/*
 * Where to start reading for a shard that owns [beg, end) within a scope
 * that starts at scope_beg (max_depth INT_MAX = no cap), so that the pileup state at beg equals the
 * reference run's. Returns the start (>= scope_beg), or -1 on a read error.
 * Uses the inputs' sources temporarily.
 */
hts_pos_t pl_safe_start(pl_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t scope_beg,
                        int max_depth, bam1_t *scratch);

/*
 * Read and check every input's unplaced unmapped reads (the shard of tid
 * SS_TID_UNPLACED): they print nothing, but samtools fails on a damaged one.
 * Adds the records read to *reads. Returns 0, or -1 (the input's read_err set
 * for the caller's message, or after ss_error()).
 */
int pl_check_unplaced(pl_input_t *in, int n, bam1_t *scratch, uint64_t *reads);

/* Start in->src on [beg, end) of tid (forgets reads taken ahead). 0, or -1 after ss_error(). */
int pl_query(pl_input_t *in, int tid, hts_pos_t beg, hts_pos_t end);
/*
 * The same for the pileup of a shard ending at end: pl_read_filtered then hands
 * out the reads of [beg, end) and after them the first read (passing the filters)
 * that starts at or after end and before follow_end (>= end), if one could overlap
 * a read taken, as the reference run takes it before printing the shard's last
 * columns (pileup_read.c says why). Its first range reaches `reach` past end;
 * the rest is looked up. 0, or -1 after ss_error().
 */
int pl_query_shard(pl_input_t *in, int tid, hts_pos_t beg, hts_pos_t end, hts_pos_t reach,
                   hts_pos_t follow_end);

/*
 * Whether any filtered read in any input overlaps [beg, end) of tid.
 * Returns 1, 0, or -1 on a read error.
 */
int pl_has_reads(pl_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t end, bam1_t *scratch);

/*
 * Buffers the formatter reuses across lines: insertion text, one column,
 * and the last line's "CONTIG\tPOS\t", which the next position edits.
 */
typedef struct {
    kstring_t ins, bases, quals;
    kstring_t head;
    const char *head_ctg;
    hts_pos_t head_pos;
    size_t head_digits; /* where POS starts in head */
} pl_fmt_buf_t;

/* A worker's state, reused across shards (pileup.c). */
typedef struct {
    const pl_opts_t *o;
    const ss_job_t *job;
    ss_reader_t *rd;
    sam_hdr_t *hdr; /* first input's header: names contigs, as samtools does */
    int n;          /* inputs */
    pl_input_t *in;
    struct pe_s **eng;      /* per input: its pileup */
    unsigned char *has_col; /* per input: eng[i]->pos holds its next column */
    unsigned char *at;      /* per input: has a column at the line being printed */
    int *n_plp;             /* per input: the column as bam_pileup1_t, for pl_format_line */
    const bam_pileup1_t **plp;
    ss_ref_t *ref;     /* the shard's contig */
    ss_ref_t *ref_aux; /* other contigs, for -a/-aa look-ups */
    const char *ctg_ref;
    hts_pos_t ctg_ref_len;
    signed char *cov; /* per contig: -1 unknown, 0 no reads, 1 reads (in scope) */
    bam1_t *scratch;
    pl_fmt_buf_t fmt;
    size_t bytes_per_base; /* output per position in the last shard, to size the next */
    baq_t *baq;
} pl_worker_t;

/* The run state: what every worker needs beyond the options. */
typedef struct {
    baq_path_t baq_path;
} pl_run_t;

/* The region the reference run reads on tid: -r, or the whole contig. */
void pl_scope(const pl_worker_t *w, int tid, hts_pos_t *beg, hts_pos_t *end);

/*
 * Zero-depth lines for [from, to) of tid (-a, -aa), with the reference base
 * samtools would print. followed: a covered position of this shard follows.
 * shard_cov: the shard had coverage. Returns 0, or -1 after ss_error().
 */
int pl_emit_uncovered(pl_worker_t *w, int tid, hts_pos_t from, hts_pos_t to, int followed,
                      int shard_cov, kstring_t *out);

/* Append one pileup line (covered position) to out. Returns 0 or -1. */
int pl_format_line(kstring_t *out, const pl_opts_t *o, const sam_hdr_t *h, const char *ctg,
                   hts_pos_t pos, const char *ref, hts_pos_t ref_len, int n, const int *n_plp,
                   const bam_pileup1_t **plp, pl_fmt_buf_t *buf);
/*
 * The same line straight from the pileup engines of the n inputs
 * (pileup_engine.h), without building the columns; at[i] says whether input
 * i has a column at pos. Only without extra columns and -M, which need
 * every read's pileup fields: those lines go through pl_format_line.
 */
struct pe_s;
int pl_format_engine_line(kstring_t *out, const pl_opts_t *o, const sam_hdr_t *h, const char *ctg,
                          hts_pos_t pos, const char *ref, hts_pos_t ref_len, int n,
                          struct pe_s *const *eng, const unsigned char *at, pl_fmt_buf_t *fb);
/* Append the line samtools prints for a position with no reads. */
int pl_format_empty(kstring_t *out, const pl_opts_t *o, const char *ctg, hts_pos_t pos,
                    const char *ref, hts_pos_t ref_len, int n);

#endif

/*
 * ss_io.h -- input side of seqshard: per-worker readers that hold BAM/CRAM
 * files, indexes and the reference open across shards within a process-wide
 * descriptor budget; the reference cache; BED/positions lists; work estimates
 * from the index.
 *
 * Threading: an ss_reader_t belongs to one worker thread. The budget is
 * process-wide and lock-protected. ss_bed_t is read-only after ss_bed_read.
 */
#ifndef SS_IO_H
#define SS_IO_H

#include <stdint.h>
#include <htslib/faidx.h>
#include <htslib/hts.h>
#include <htslib/sam.h>

/* The inputs a job reads: paths are borrowed from the options. */
typedef struct {
    char **paths;
    int n;
    const char *reference; /* FASTA with .fai, or NULL */
    char **index_paths;    /* index of each input, or NULL: found beside the input */
    char **fmt_opts;       /* --input-fmt-option strings applied to every input */
    int n_fmt_opts;
} ss_io_inputs_t;

/*
 * Open input i of in the way every reader does: CRAM MD rebuilding off, the
 * reference, --input-fmt-option. Returns NULL after ss_error() naming the file.
 */
samFile *ss_io_open_input(const ss_io_inputs_t *in, int i);
/* Its index (-X path or beside the file). NULL after ss_error() saying how to make one. */
hts_idx_t *ss_io_load_index(const ss_io_inputs_t *in, int i, samFile *fp);

/* ---- what every reader checks of every record (check.c) ---- */

/*
 * The order state of one stream of records: one query, or one shard's run of
 * records. It belongs to whoever owns the stream (the worker that owns the
 * iterator); reset it when a new stream starts. Plain struct, no allocation.
 */
typedef struct {
    int tid;       /* the last record's (tid, pos): the next may not sort before it */
    hts_pos_t pos;
    uint64_t n;    /* records checked in this stream */
    int ended;     /* the stream ended and the record after it was checked */
} ss_io_order_t;

/* Codes for a bad record: below every htslib read error code. */
enum {
    SS_IO_BAD_TID = -100,      /* contig id outside -1..n_targets-1 */
    SS_IO_BAD_MTID = -101,     /* mate contig id outside -1..n_targets-1 */
    SS_IO_BAD_POS = -102,      /* POS or mate POS below -1 */
    SS_IO_UNSORTED = -103,     /* (tid, pos) sorts before the stream's previous record */
    SS_IO_WRONG_CONTIG = -104  /* a query on one contig returned a record of another */
};
static inline int ss_io_is_bad_record(int code)
{
    return code <= SS_IO_BAD_TID && code >= SS_IO_WRONG_CONTIG;
}

void ss_io_order_reset(ss_io_order_t *o);
/*
 * Check b, the next record of stream o: ids and positions in range, not
 * before the previous record. Returns 0 (and moves o on to b) or an
 * SS_IO_BAD_* code (o keeps the previous record, for the message). A few
 * compares: call it on every record read, also those a kernel skips.
 */
int ss_io_check_record(const bam1_t *b, int n_targets, ss_io_order_t *o);
/*
 * sam_itr_next with the checks: every record htslib's iterator reads (also
 * those it skips, and the one past the query that ends it) goes through
 * ss_io_check_record, and at the end of a BAM query the record just after
 * the stream is checked too. Returns >= 0 with a record in b, -1 at the end,
 * an htslib read error code (< -1), or an SS_IO_BAD_* code with the bad
 * record in b. Single-region iterators; the caller's thread.
 */
int ss_io_itr_next(samFile *fp, hts_itr_t *itr, bam1_t *b, int n_targets, ss_io_order_t *o);
/*
 * "PROBLEM (shard N, record NAME at CONTIG:POS); FIX" for a bad record code,
 * into buf (always terminated); the caller puts the file name in front.
 */
void ss_io_bad_record_text(char *buf, size_t size, int code, const sam_hdr_t *h, const bam1_t *b,
                           const ss_io_order_t *o, int shard);

/*
 * Whether input i's index idx describes it (index_check.c): not older than
 * the file, and for BAI/CSI the same contigs, the first record where fp's
 * header ends (call it with fp just after sam_hdr_read) and nothing mapped
 * after the last record it knows. Returns 0, or -1 with "its index ... ;
 * re-index ..." in msg (the caller names the file). Moves fp. Main thread.
 */
int ss_io_index_problem(const ss_io_inputs_t *in, int i, samFile *fp, sam_hdr_t *h,
                        hts_idx_t *idx, char *msg, size_t size);

/* ---- descriptor budget (process-wide) ---- */

/*
 * Budget for descriptors held open across shards: SEQSHARD_MAX_OPEN_FILES,
 * or half the soft RLIMIT_NOFILE. Reset by ss_io_budget_init (main thread,
 * before workers start). Returns the budget in descriptors.
 */
int ss_io_budget_init(void);
/* Try to reserve n held descriptors; returns 1 if granted, 0 if not. Any thread. */
int ss_io_budget_take(int n);
void ss_io_budget_give(int n);
/* How many descriptors are held now (for tests and --report). */
int ss_io_budget_used(void);

/* ---- per-worker reader ---- */

typedef struct ss_reader_s ss_reader_t;

/*
 * Create a reader for the inputs. Nothing is opened until the first
 * ss_reader_begin. Returns NULL on allocation failure. Worker thread.
 */
ss_reader_t *ss_reader_init(const ss_io_inputs_t *in);
/*
 * Make every input usable for one shard: opens files (with the reference set
 * for CRAM, MD decoding off), headers and indexes if not held. Files stay
 * open across shards when the budget granted them, otherwise they are
 * closed by ss_reader_end. Returns 0, or -1 after ss_error() named the file.
 */
int ss_reader_begin(ss_reader_t *r);
void ss_reader_end(ss_reader_t *r);
/* Valid between begin and end. Do not close or free what they return. */
samFile *ss_reader_file(ss_reader_t *r, int i);
sam_hdr_t *ss_reader_header(ss_reader_t *r, int i);
hts_idx_t *ss_reader_index(ss_reader_t *r, int i);
const char *ss_reader_path(const ss_reader_t *r, int i);
int ss_reader_n(const ss_reader_t *r);
/* Whether the files are held across shards (budget granted). */
int ss_reader_holds(const ss_reader_t *r);
/* How many times files were opened (tests check reuse). */
int ss_reader_opens(const ss_reader_t *r);
void ss_reader_destroy(ss_reader_t *r);

/* ---- reference: windows of contigs, per worker (ref.c) ---- */

typedef struct ss_ref_s ss_ref_t;

/* NULL path gives a cache that always answers "no reference". */
ss_ref_t *ss_ref_init(const char *fasta);
/*
 * Contig `name` (as stored in the FASTA: case kept), indexed by position, its
 * length in *len; only positions covered by ss_ref_cover() may be read.
 * Keeps the last two contigs. Returns NULL if there is no reference or the
 * contig is missing from it. Pointer valid until the next call for a third
 * contig.
 */
const char *ss_ref_get(ss_ref_t *ref, int tid, const char *name, hts_pos_t *len);
/*
 * Make positions [lo, hi) of contig tid (one of the last two got) readable,
 * clipped to the contig. Returns 0, or -1 after ss_error().
 */
int ss_ref_cover(ss_ref_t *ref, int tid, hts_pos_t lo, hts_pos_t hi);
/* Give back every covered window (between shards): memory follows the shard. */
void ss_ref_release(ss_ref_t *ref);
void ss_ref_destroy(ss_ref_t *ref);

/* ---- BED / positions lists (-l), samtools' bed_read semantics ---- */

typedef struct ss_bed_s ss_bed_t;

/*
 * Read a BED (3+ columns, 0-based) or positions (2 columns, 1-based) file;
 * sorted and merged per contig. Returns NULL after ss_error() naming the
 * file and line.
 */
ss_bed_t *ss_bed_read(const char *path);
/* 1 if [beg, end) overlaps any interval on contig `name`. */
int ss_bed_overlap(const ss_bed_t *bed, const char *name, hts_pos_t beg, hts_pos_t end);
/* Merged intervals of a contig; *n set to 0 and NULL returned if none. */
const hts_pair_pos_t *ss_bed_intervals(const ss_bed_t *bed, const char *name, int *n);
void ss_bed_destroy(ss_bed_t *bed);

/* ---- work estimate from the index ---- */

/*
 * Estimated work of [beg, end) on tid, in compressed bytes, from the index
 * alone (BAI/CSI chunk offsets; CRAM container offsets; io/estimate.c says
 * how). A single range past a contig's last read can be overestimated by a
 * BAI (it has no linear index there); grids should use the cell functions
 * below. Returns >= 0, or -1 if the index cannot say (callers fall back to
 * bp). May move fp's file position (CRAM): pass a planning-only handle.
 */
int64_t ss_io_estimate(hts_idx_t *idx, samFile *fp, sam_hdr_t *h, int tid, hts_pos_t beg,
                       hts_pos_t end);
/*
 * Estimated work of consecutive cells [pos[i], pos[i+1]) on tid, i < n (pos
 * holds n + 1 increasing positions), into work[0..n-1]. Cells add up: the
 * estimates are differences of one monotone file offset, so no read counts
 * twice, and past a contig's last read (where a BAI says nothing) cells get 0
 * rather than a single-range query's overestimate. Use this for grids.
 * Returns 0, or -1 if the index cannot say. May move fp's file position
 * (CRAM): pass a handle used only for planning. One thread per idx/fp.
 */
int ss_io_estimate_cells(hts_idx_t *idx, samFile *fp, sam_hdr_t *h, int tid, const hts_pos_t *pos,
                         int n, int64_t *work);
/*
 * The same, for many calls on one input: the estimator measures the file's
 * compression ratio once (on the block of its first placed read, so answers
 * never depend on call order). idx, fp and h are borrowed. NULL if idx is
 * NULL or out of memory. One thread at a time.
 */
typedef struct ss_io_est_s ss_io_est_t;
ss_io_est_t *ss_io_est_init(hts_idx_t *idx, samFile *fp, sam_hdr_t *h);
int ss_io_est_cells(ss_io_est_t *e, int tid, const hts_pos_t *pos, int n, int64_t *work);
void ss_io_est_destroy(ss_io_est_t *e);

#endif

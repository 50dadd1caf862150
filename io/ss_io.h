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

/*
 * ss_error() for a CRAM that failed to decode in shard shard_idx (`where`:
 * "ctg:beg-end"), on contig tid (-1 if none): no reference, one without the
 * contig, the wrong one (MD5 against @SQ M5), or a damaged file. ref_opt is
 * the running kernel's reference option ("-f", "-T"), named in the advice.
 * Loads the reference's .fai (never writes one). Any thread.
 */
void ss_io_cram_read_error(const char *path, sam_hdr_t *h, const char *reference,
                           const char *ref_opt, int shard_idx, const char *where, int tid);

/* ---- descriptor budget (process-wide) ---- */

/*
 * Descriptors outside the budget (budget.c has the arithmetic): per worker,
 * an input opened per use, its index while it loads, a CRAM's reference
 * FASTA and the kernel's own two; per process, what opens after the budget
 * is set (the output, a spill file).
 */
#define SS_IO_FDS_PER_WORKER 5
#define SS_IO_FDS_LATER 2

/*
 * Descriptors a run with n_workers needs at least: those open now, the
 * later ones and every worker's. Any thread; counts /proc/self/fd.
 */
int ss_io_budget_need(int n_workers);
/*
 * Set the budget for descriptors held open across shards: what the soft
 * RLIMIT_NOFILE leaves after ss_io_budget_need(n_workers), lowered by
 * SEQSHARD_MAX_OPEN_FILES. Main thread, before workers start. Returns the
 * budget, or -1 after ss_error() when the limit is below the need (the
 * message counts n_inputs and says what limit would do).
 */
int ss_io_budget_init(int n_inputs, int n_workers);
/* Try to reserve n held descriptors; returns 1 if granted, 0 if not (or no budget set). */
int ss_io_budget_take(int n);
void ss_io_budget_give(int n);
/* How many descriptors are held now (for tests and --report). */
int ss_io_budget_used(void);
/* Whether errno value err means out of descriptors (EMFILE, ENFILE). */
int ss_io_fds_exhausted(int err);
/* ss_error() for path: "too many open files", with the limit and what to do. */
void ss_io_error_fds(const char *path, int err);

/* ---- per-worker reader ---- */

typedef struct ss_reader_s ss_reader_t;

/*
 * Create a reader for the inputs. Nothing is opened until the first
 * ss_reader_begin. Returns NULL on allocation failure. Worker thread.
 */
ss_reader_t *ss_reader_init(const ss_io_inputs_t *in);
/*
 * Make every input usable for one shard. The first call opens each input in
 * turn and keeps those the budget grants; an input refused is opened per
 * shard when it is the only one, else per batch of records (reader.c).
 * Returns 0, or -1 after ss_error() named the file.
 */
int ss_reader_begin(ss_reader_t *r);
void ss_reader_end(ss_reader_t *r);
/*
 * Between begin and end: records of input i overlapping [beg, end) of tid,
 * in file order, whatever the input's mode. query returns 0 or -1 after
 * ss_error(); next returns >= 0 with a record in b, -1 at the end, < -1 on a
 * read error (-4: ss_error() said why; others are htslib's codes, unsaid).
 */
int ss_reader_query(ss_reader_t *r, int i, int tid, hts_pos_t beg, hts_pos_t end);
int ss_reader_next(ss_reader_t *r, int i, bam1_t *b);
/*
 * Valid between begin and end; file and index are NULL for a streamed input
 * (so with two inputs or more, read through query/next). Do not close or
 * free what they return.
 */
samFile *ss_reader_file(ss_reader_t *r, int i);
sam_hdr_t *ss_reader_header(ss_reader_t *r, int i);
hts_idx_t *ss_reader_index(ss_reader_t *r, int i);
/* Whether input i is a CRAM (known after the first begin). */
int ss_reader_is_cram(const ss_reader_t *r, int i);
const char *ss_reader_path(const ss_reader_t *r, int i);
int ss_reader_n(const ss_reader_t *r);
/* How many inputs are held across shards (budget granted), and how many streamed. */
int ss_reader_holds(const ss_reader_t *r);
int ss_reader_streams(const ss_reader_t *r);
/* How many begins opened files (tests check reuse). */
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

/* Contigs of a header that the FASTA lacks or has with another length. */
typedef struct {
    int n;            /* how many */
    int tid;          /* the first, or -1 */
    hts_pos_t fa_len; /* its length in the FASTA, -1 when missing there */
} ss_ref_mismatch_t;

/*
 * Compare every @SQ of h with the FASTA's .fai (loaded, never written):
 * contigs missing there or of another length (lengths_only: the latter).
 * Returns m->n (0: all match), or -1 if the .fai cannot be loaded. Any thread.
 */
int ss_ref_check_contigs(const char *fasta, const sam_hdr_t *h, int lengths_only,
                         ss_ref_mismatch_t *m);
/* "ref.fa has no contig X (N bp in in.bam) (and 2 more contigs differ)", into buf. */
void ss_ref_describe_mismatch(const char *fasta, const sam_hdr_t *h, const char *input,
                              const ss_ref_mismatch_t *m, char *buf, size_t size);

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

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

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <htslib/kstring.h>
#include <htslib/faidx.h>
#include <htslib/hts.h>
#include <htslib/sam.h>

/*
 * The inputs a job reads: paths are borrowed from the options. The shared
 * fields are loaded once per process by the job (main thread) and only read
 * by the workers, so a worker's per-input cost is its data handle alone; they
 * may all be NULL (readers then load their own), and the job frees them after
 * the workers are joined.
 */
typedef struct {
    char **paths;
    int n;
    const char *reference; /* FASTA with .fai, or NULL */
    char **index_paths;    /* index of each input, or NULL: found beside the input */
    char **fmt_opts;       /* --input-fmt-option strings applied to every input */
    int n_fmt_opts;
    int cram_md;           /* CRAM: rebuild MD/NM as samtools does (else skipped, as pileup
                            * needs neither) */
    int whole_records;     /* CRAM: decode every field and rebuild MD/NM, whatever fmt_opts
                            * ask: a record step reads the records, and its output must be
                            * what samtools' decoding gives */
    /* shared, read-only */
    sam_hdr_t *hdr;        /* the first input's header: every input has its @SQ lines */
    hts_idx_t **idx;       /* [n]: each BAM's index (queries only read it); NULL for a CRAM,
                            * whose htslib index is tied to the handle that loaded it */
    unsigned char *is_cram; /* [n]: the input's format, known before a worker opens it */
    void *cram_refs;       /* htslib refs_t every CRAM handle shares (CRAM_OPT_SHARED_REF,
                            * under htslib's own lock): the contig is loaded once per process */
    /*
     * Input 0 is standard input ("-"), opened once by the job: its file and
     * header, which the one reader of the run borrows and reads in a single
     * pass (no index); NULL for files.
     */
    samFile *stream;
    sam_hdr_t *stream_hdr;
} ss_io_inputs_t;

/* The path that names standard input. */
#define SS_IO_STDIN "-"

/*
 * Open input i of in the way every reader does: CRAM MD rebuilding off unless cram_md, the
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

/* ---- why an input failed, in samtools' words (read_diag.c); any thread ---- */

/* ss_error() for sam_open(path) failing with errno err: what the file is, if not alignments. */
void ss_io_open_error(const char *path, int err);
/* ss_error() for an index of path that did not load (errno err): none found, or a damaged one. */
void ss_io_index_error(const char *path, int err);
/*
 * ss_error() for htslib read error ret (< -1; 0 if unknown) of the BAM path in shard
 * shard_idx (-1: not in a shard; `where`: "ctg:beg-end"): the cause from fp's BGZF error flags (a
 * CRC32 mismatch, a block that does not inflate; fp may be NULL) and the fix.
 */
void ss_io_read_error(const char *path, samFile *fp, int ret, int shard_idx, const char *where);

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
    SS_IO_WRONG_CONTIG = -104, /* a query on one contig returned a record of another */
    SS_IO_BAD_AUX = -105       /* optional fields past the record's end, or of no known type */
};
static inline int ss_io_is_bad_record(int code)
{
    return code <= SS_IO_BAD_TID && code >= SS_IO_BAD_AUX;
}

void ss_io_order_reset(ss_io_order_t *o);
/*
 * Check b, the next record of stream o: ids and positions in range, optional
 * fields whole (as samtools view reads them), not before the previous record. Returns 0 (and moves o on to b) or an
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
/* ITF-8, CRAM's variable-length int32, at p (end: one past the buffer): the bytes it
 * takes, or -1 when it runs past end. Any thread. */
int ss_io_itf8(const uint8_t *p, const uint8_t *end, int32_t *v);

/*
 * Whether the .crai at crai leaves out or misplaces containers of the CRAM
 * at path (CRAM version major, size bytes, its first data container at
 * first): 1 if so, 0 if it describes them (or the file cannot be walked:
 * the run's reads say why). Any thread (crai_check.c).
 */
int ss_io_crai_problem(const char *path, int major, const char *crai, int64_t first,
                       long long size);

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
 * later ones and every worker's; with shared_ref (the CRAM handles share the
 * job's reference, ss_io_inputs_t.cram_refs) its one FASTA handle replaces
 * each worker's. Any thread; counts /proc/self/fd.
 */
int ss_io_budget_need(int n_workers, int shared_ref);
/*
 * Set the budget for descriptors held open across shards: what the soft
 * RLIMIT_NOFILE leaves after ss_io_budget_need(), lowered by
 * SEQSHARD_MAX_OPEN_FILES. Main thread, before workers start. Returns the
 * budget, or -1 after ss_error() when the limit is below the need (the
 * message counts n_inputs and says what limit would do).
 */
int ss_io_budget_init(int n_inputs, int n_workers, int shared_ref);
/* Try to reserve n held descriptors; returns 1 if granted, 0 if not (or no budget set). */
int ss_io_budget_take(int n);
void ss_io_budget_give(int n);
/* How many descriptors are held now (for tests and --report). */
int ss_io_budget_used(void);
/*
 * Called after every file a reader opens and every index it loads, on that
 * reader's thread, or NULL (the default): the moments its descriptors peak,
 * for a caller that counts them (test_reader's budget test). Set it before
 * any reader runs.
 */
void ss_io_set_open_hook(void (*hook)(void));
/* Whether errno value err means out of descriptors (EMFILE, ENFILE). */
int ss_io_fds_exhausted(int err);
/* ss_error() for path: "too many open files", with the limit and what to do. */
void ss_io_error_fds(const char *path, int err);

/* ---- record sources (source.c) ---- */

/*
 * Where a kernel's records come from: an input file through its index, or
 * (for chained kernels) another kernel in memory. One interface, so a kernel
 * does not know which. A source belongs to one worker thread.
 *
 * query starts a range: [beg, end) on tid, as an htslib region query (every
 * record overlapping it, in file order); tid SS_IO_UNPLACED for the
 * unplaced unmapped records at the file's end. Returns 0, or -1 after
 * ss_error() named the file and range.
 * next gives the range's next record in b, with b->id set to its order in
 * the range (0, 1, ...: moving kernels sort ties by it), every record checked
 * on the way (ids in range, coordinate order, the query's contig: check.c).
 * Returns >= 0, -1 at the end of the range, SS_IO_REPORTED after ss_error()
 * named the file, shard and bad record, or another value < -1: an htslib read
 * error the caller explains (it knows the shard and kernel).
 */
#define SS_IO_REPORTED (-99)
#define SS_IO_UNPLACED (-1)
typedef struct ss_source_s ss_source_t;
struct ss_source_s {
    int (*query)(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end);
    int (*next)(ss_source_t *src, bam1_t *b);
    const char *name; /* the input's path, for messages */
};

static inline int ss_source_query(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end)
{
    return src->query(src, tid, beg, end);
}

static inline int ss_source_next(ss_source_t *src, bam1_t *b)
{
    return src->next(src, b);
}

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
/*
 * The kernel's coming queries of this shard lie within [beg, end) of tid: a
 * CRAM input then reads that range's records once (one slice decode, where
 * each query would decode the slice again) and answers the queries inside
 * it from them, until ss_reader_end. Between begin and end; a query outside
 * the window reads the file as before.
 */
void ss_reader_window(ss_reader_t *r, int tid, hts_pos_t beg, hts_pos_t end);
/* Whether input i is a CRAM (known after the first begin). */
int ss_reader_is_cram(const ss_reader_t *r, int i);
const char *ss_reader_path(const ss_reader_t *r, int i);
int ss_reader_n(const ss_reader_t *r);
/*
 * Keep 2 MiB of inflated BGZF blocks, shared out over the BAM inputs, until
 * ss_reader_end: a kernel that queries the same place more than once (a
 * shard's exact start walks back with several queries, each inflating the
 * same blocks) then inflates each block once. Nothing when each input's
 * share is under 256 KiB (a cohort): memory stays bounded. Not for a kernel
 * that reads each block once (caching it is a copy for nothing). Between
 * begin and end; the thread that owns the reader.
 */
void ss_reader_cache_blocks(ss_reader_t *r);
/*
 * Input i as a record source (query/next above, each record stamped with
 * its order in the range), valid between begin and end: the reader owns it;
 * do not free. With a front set (ss_reader_set_front), the front. NULL when
 * i is out of range.
 */
ss_source_t *ss_reader_source(ss_reader_t *r, int i);
/*
 * Input i as the file gives it, whatever is in front of it: what the first
 * step of a chain wraps. NULL when i is out of range.
 */
ss_source_t *ss_reader_file_source(ss_reader_t *r, int i);
/*
 * Put front (borrowed; NULL: none) in front of input i: ss_reader_source
 * returns it from now on, so a kernel reads the input through it. reach:
 * how far around a query front reads the file, which ss_reader_window
 * widens the shard's window by. 0, or -1 out of memory. Worker thread,
 * before the kernel's worker starts.
 */
int ss_reader_set_front(ss_reader_t *r, int i, ss_source_t *front, hts_pos_t reach);
/* How many records the reader's inputs have returned so far (every query, halos too). */
uint64_t ss_reader_records(const ss_reader_t *r);
/*
 * The shard the reader's records are for (the engine sets it before each
 * shard), named in the messages about bad records; -1 before any.
 */
void ss_reader_set_shard(ss_reader_t *r, int shard_idx);
int ss_reader_shard(const ss_reader_t *r);
/* Input i's order state (the previous record of its query), for messages. */
const ss_io_order_t *ss_reader_order(ss_reader_t *r, int i);
/* How many inputs are held across shards (budget granted), and how many streamed. */
int ss_reader_holds(const ss_reader_t *r);
int ss_reader_streams(const ss_reader_t *r);
/* How many begins opened files (tests check reuse). */
int ss_reader_opens(const ss_reader_t *r);
void ss_reader_destroy(ss_reader_t *r);
/*
 * ss_error() for read error ret (as ss_io_read_error) of reader rd's input i in its
 * current shard, on contig tid: ss_io_cram_read_error for a CRAM (reference, ref_opt),
 * else ss_io_read_error. The reader's thread.
 */
void ss_io_input_read_error(ss_reader_t *rd, int i, int ret, int tid, const char *where,
                            const char *reference, const char *ref_opt);
/*
 * A kernel's read of input i failed with ret (< -1; errno err as it failed) in
 * the shard [beg, end) of contig tid (-1: the unplaced reads): nothing more
 * when the reader already said why (SS_IO_REPORTED), out of memory as such,
 * else ss_io_input_read_error's line. Returns -1. The reader's thread.
 */
int ss_io_input_failed(ss_reader_t *rd, int i, int ret, int err, int tid, hts_pos_t beg,
                       hts_pos_t end, const char *reference, const char *ref_opt);

/* ---- a whole-file run reads every record: the tally (reader_tally.c, index_check.c) ---- */

/*
 * What the readers return of the records their shards own, added up over
 * every reader, worker and rank as one vector of ss_io_tally_len() counters,
 * so the framework sums it as it is. With S = n_contigs + 1 slots (slot
 * tid + 1; 0 holds the unplaced reads), BAM inputs only (a CRAI has no
 * counts), records counted before any kernel filter:
 *   [0, S)      records read, every input together;
 *   [S, 2S)     shards of that slot in which some BAM input was never
 *               queried (view's block copy reads bytes), or that this run
 *               did not read (--resume kept them): the slot is not checked;
 *   [2S, 3S)    of the records read, those that reach past their shard's end;
 *   [3S, 4S)    records of the shard before that the next shard was given
 *               (reader_tally.c): equal to the above when none was lost;
 *   [4S, ...)   when n_inputs * S <= SS_IO_TALLY_CELLS_MAX: records read by
 *               input i, at 4S + i * S + slot, so a message can name the file.
 */
#define SS_IO_TALLY_CELLS_MAX (1u << 16)
size_t ss_io_tally_len(int n_contigs, int n_inputs);
/*
 * The coming shard owns tid's records with beg <= POS < end (tid
 * SS_IO_UNPLACED: the unplaced reads): count those the reader returns,
 * each once, until ss_reader_end adds them to the reader's tally; and the
 * records from prev_beg on that reach into it (the previous shard's; prev_beg
 * = beg when there is none). Call it before the shard's first query; without
 * it a shard is not counted.
 */
void ss_reader_own(ss_reader_t *r, int tid, hts_pos_t beg, hts_pos_t end, hts_pos_t prev_beg);
/* Add r's tally to v (ss_io_tally_len counters). 0, or -1 when r ran out of memory for it. */
int ss_reader_tally_add(const ss_reader_t *r, uint64_t *v);
/*
 * Add what BAM input i's index counts to want (zeroed ss_io_tally_len
 * counters, the layout above): each contig's pseudo-bin (mapped + unmapped,
 * as samtools idxstats prints them), and n_no_coor for the unplaced slot.
 * Any thread, one want at a time.
 */
void ss_io_tally_expect(const hts_idx_t *idx, int n_contigs, int i, int n_inputs,
                        uint64_t *want);
/*
 * Compare got, the run's tally, with want, what the indexes count, in each
 * slot read whole. Returns 0, or -1 with the whole line ("IN: its index IDX
 * does not describe the file (contig C: N records read, the index counts M);
 * re-index it with samtools index IN") in msg. Main thread.
 */
int ss_io_tally_check(const ss_io_inputs_t *in, const sam_hdr_t *h, const uint64_t *got,
                      const uint64_t *want, char *msg, size_t size);

/* ---- reference: windows of contigs, per worker (ref.c) ---- */

typedef struct ss_ref_s ss_ref_t;

/* NULL path gives a cache that always answers "no reference". */
ss_ref_t *ss_ref_init(const char *fasta);
/*
 * Contig `name` (as stored in the FASTA: case kept), indexed by position, its
 * length in *len; only positions covered by ss_ref_cover() may be read.
 * Keeps the last two contigs. Returns NULL if there is no reference or the
 * contig is missing from it (*len 0), or with *len -1 after ss_error() when
 * its address space cannot be had (out of memory: never print it as N).
 * Pointer valid until the next call for a third contig.
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
 * Returns m->n (0: all match), -1 if the .fai cannot be loaded (unsaid), or
 * -2 after ss_error() when memory ran out loading it. Any thread.
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
 * Estimated work of consecutive cells [pos[i], pos[i+1]) on tid, i < n (pos
 * holds n + 1 increasing positions), into work[0..n-1], in compressed bytes,
 * from the index alone (BAI/CSI chunk offsets; CRAM container offsets;
 * io/estimate.c says how). Cells add up: the estimates are differences of one
 * monotone file offset, so no read counts twice, and past a contig's last
 * read (where a BAI says nothing) cells get 0. The estimator measures the file's
 * compression ratio once (on the block of its first placed read, so answers
 * never depend on call order). idx, fp and h are borrowed. NULL if idx is
 * NULL or out of memory. One thread at a time.
 */
typedef struct ss_io_est_s ss_io_est_t;
ss_io_est_t *ss_io_est_init(hts_idx_t *idx, samFile *fp, sam_hdr_t *h);
int ss_io_est_cells(ss_io_est_t *e, int tid, const hts_pos_t *pos, int n, int64_t *work);
void ss_io_est_destroy(ss_io_est_t *e);
/*
 * How a BAM's reads fall within [beg, end) of tid, finer than the index can
 * say: bins[0..n_bins) (each (end - beg) / n_bins bp, the last to end) get the
 * bytes of the records that start in them. Reads the records, so use it on
 * few cells. 0; 1 when the file is not a BAM or holds no read starting there;
 * -1 when it cannot be read (the caller keeps its coarse estimate).
 */
int ss_io_est_profile(ss_io_est_t *e, int tid, hts_pos_t beg, hts_pos_t end, int n_bins,
                      double *bins);

/* ---- record encoders (bam_enc.c, cram_enc.c, file_range.c) ---- */

/*
 * Uncompressed bytes waiting for their BGZF block. Owned by one thread. Blocks
 * are cut as htslib's BGZF writer cuts them, so the bytes are samtools'.
 */
typedef struct ss_zjob_s ss_zjob_t;
typedef struct {
    uint8_t *buf; /* BGZF_BLOCK_SIZE bytes */
    size_t len;
    int level;    /* zlib level, -1 = htslib's default */
    /* With a pool (ss_bgzf_pack_async): full blocks are compressed on its threads and
     * land on out in order, at later writes or at the flush. */
    struct hts_tpool *pool;
    struct hts_tpool_process *q;
    ss_zjob_t **spare; /* jobs whose block has landed, for reuse */
    int n_spare, in_flight, max_in_flight;
    size_t raw_in_flight; /* uncompressed bytes of the blocks in flight */
    const atomic_int *busy; /* writers at work: at busy_max, compress here (no core idles) */
    int busy_max;
} ss_bgzf_pack_t;

/* Returns 0, or -1 when out of memory. */
int ss_bgzf_pack_init(ss_bgzf_pack_t *z, int level);
void ss_bgzf_pack_destroy(ss_bgzf_pack_t *z);
/*
 * Compress full blocks on pool's threads from now on, while fewer than busy_max
 * writers are at work (*busy): a lone shard's worker then uses the idle cores,
 * and when every core has a writer the blocks are compressed in place, which
 * costs less than handing them over. The bytes out are the same. 0, or -1 out of
 * memory (the pack stays synchronous).
 */
int ss_bgzf_pack_async(ss_bgzf_pack_t *z, struct hts_tpool *pool, const atomic_int *busy,
                       int busy_max);
/* Wait for the blocks in flight and drop them (a failed shard's). */
void ss_bgzf_pack_discard(ss_bgzf_pack_t *z);
/*
 * Add len bytes, compressing full blocks onto out. With whole_record set, a
 * block that cannot take all the bytes is closed first (htslib keeps a record
 * in one block when it fits). Returns 0, or -1 on a compression or memory error.
 */
int ss_bgzf_pack_write(ss_bgzf_pack_t *z, const void *p, size_t len, int whole_record,
                       kstring_t *out);
/* Land the blocks in flight, then compress what is pending into one last block on
 * out: out then holds every byte written. Returns 0 or -1. */
int ss_bgzf_pack_flush(ss_bgzf_pack_t *z, kstring_t *out);

/*
 * Append b in BAM record layout (block_size first, little-endian), as
 * bam_write1 writes it: CIGARs of more than 65535 operations move to a CG:B,I
 * tag. Returns 0, or -1 (errno EOVERFLOW/EINVAL) when BAM cannot hold b.
 */
int ss_bam_encode(const bam1_t *b, kstring_t *out);
/* Append the BAM header (magic, text, references) uncompressed. Returns 0 or -1. */
int ss_bam_encode_header(const sam_hdr_t *h, kstring_t *out);

/*
 * Append bytes [off, off+n) of fd to s. Returns 0, or -1 with errno set (EIO
 * when the file ends first). Any thread, on its own s.
 */
int ss_io_append_file_range(int fd, off_t off, size_t n, kstring_t *s);

/* The bytes every CRAM shard's containers are framed by. */
typedef struct {
    kstring_t head; /* file definition + header container(s): the file's first bytes */
    kstring_t eof;  /* the EOF container: the file's last bytes */
} ss_cram_frame_t;

/* What a CRAM writer is opened with; the strings are borrowed. */
typedef struct {
    const char *file_id;   /* the output's name: CRAM's file id, as samtools' -o gives */
    const char *reference; /* FASTA with .fai, or NULL (REF_PATH / M5 then) */
    int level;             /* compression level, -1 = htslib's default */
} ss_cram_opts_t;

/*
 * Main thread, before workers: write *hdr once through htslib to learn the
 * file definition, header container and EOF bytes, and replace *hdr by the
 * header htslib wrote (it adds M5 and UR to @SQ). Returns 0, or -1 after
 * ss_error(). ss_cram_frame_free frees f's bytes.
 */
int ss_cram_frame_build(sam_hdr_t **hdr, const ss_cram_opts_t *o, ss_cram_frame_t *f);
void ss_cram_frame_free(ss_cram_frame_t *f);

/*
 * A worker's CRAM encoder: a fresh htslib writer per shard sharing one
 * reference cache. frame, o's strings and hdr (the worker's own copy of the
 * output header) must outlive it. NULL after ss_error().
 */
typedef struct ss_cram_enc_s ss_cram_enc_t;
ss_cram_enc_t *ss_cram_enc_init(const ss_cram_frame_t *frame, const ss_cram_opts_t *o,
                                sam_hdr_t *hdr, const char *tmp_dir);
void ss_cram_enc_destroy(ss_cram_enc_t *cw);
/* Start a shard. Returns 0, or -1 after ss_error(). */
int ss_cram_enc_begin(ss_cram_enc_t *cw);
/* One record. Returns 0, or -1 after ss_error(). */
int ss_cram_enc_write(ss_cram_enc_t *cw, const bam1_t *b);
/* Close the shard's writer and append its data containers to out. Returns 0 or -1. */
int ss_cram_enc_end(ss_cram_enc_t *cw, kstring_t *out, int shard_idx);
/* Drop a shard's writer after a failure. */
void ss_cram_enc_abort(ss_cram_enc_t *cw);
/*
 * After end: the .crai lines (uncompressed) that samtools index writes for
 * the shard's containers, appended to out; their container offsets count
 * from the start of a file holding the frame's header and then the shard's
 * containers (subtract frame->head.l and add where the shard's containers
 * are written). htslib's own index builder reads the shard's CRAM in memory,
 * not the output. It needs three descriptors for a moment, taken from the
 * readers' budget (ss_io_budget_take). 0, or -1 (no descriptors to spare,
 * out of memory, no /proc: the caller reads the output back instead).
 * Worker thread that owns cw.
 */
int ss_cram_enc_index(ss_cram_enc_t *cw, kstring_t *out);

#endif

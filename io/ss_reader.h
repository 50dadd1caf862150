/*
 * ss_reader.h -- a worker's reader: BAM/CRAM inputs (ss_io_inputs_t, what the
 * job loaded once) held open across shards within the descriptor budget, or
 * opened per shard or per batch when the budget is short; each input read
 * by region queries, as an htslib iterator or as a record source; the
 * records a shard owns added up for the run's end (the tally). The files:
 * reader_open.c (opening an input and its index), reader.c (begin, end,
 * queries), reader_window.c, reader_marks.c, reader_stdin.c, reader_tally.c
 * (private parts, io/reader_priv.h) and source.c (the inputs as sources).
 *
 * Used by the framework (the job opens the inputs, the engine gives each
 * worker a reader) and by kernels (ss_framework.h includes this header:
 * kernel->process reads through ss_reader_source).
 *
 * Threading: an ss_reader_t belongs to one worker thread.
 */
#ifndef SS_READER_H
#define SS_READER_H

#include <htslib/hts.h>
#include <htslib/sam.h>
#include <stdint.h>

#include "ss_check.h"
#include "ss_source.h"

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
    int cram_md;       /* CRAM: rebuild MD/NM as samtools does (else skipped, as pileup
                        * needs neither) */
    int whole_records; /* CRAM: decode every field and rebuild MD/NM, whatever fmt_opts
                        * ask: a record step reads the records, and its output must be
                        * what samtools' decoding gives */
    /* shared, read-only */
    sam_hdr_t *hdr;         /* the first input's header: every input has its @SQ lines */
    hts_idx_t **idx;        /* [n]: each BAM's index (queries only read it); NULL for a CRAM,
                             * whose htslib index is tied to the handle that loaded it */
    unsigned char *is_cram; /* [n]: the input's format, known before a worker opens it */
    void *cram_refs;        /* htslib refs_t every CRAM handle shares (CRAM_OPT_SHARED_REF,
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
 * Called after every file a reader opens and every index it loads, on that
 * reader's thread, or NULL (the default): the moments its descriptors peak,
 * for a caller that counts them (test_reader's budget test). Set it before
 * any reader runs.
 */
void ss_io_set_open_hook(void (*hook)(void));

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

#endif

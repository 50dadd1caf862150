/*
 * reader_priv.h -- private to io/'s reader: the state reader.c and the files
 * it calls (reader_open.c, reader_window.c: the shard's window,
 * reader_marks.c, reader_tally.c, reader_stdin.c: standard input) share, and
 * the record source over one input (source.c) that the reader embeds. No
 * file outside io/ includes it. Every function here is called by the worker
 * that owns the reader.
 */
#ifndef READER_PRIV_H
#define READER_PRIV_H

#include "ss_reader.h"

/* RD_STDIN: standard input, borrowed from the job (ss_io_inputs_t.stream), read in one pass */
enum { RD_NEW, RD_HELD, RD_PER_SHARD, RD_STREAMED, RD_STDIN };
enum { WIN_NONE, WIN_LOADED, WIN_FAILED }; /* a CRAM input's window this shard */

/* Input i of a reader as a record source (source.c), embedded in the reader. */
typedef struct {
    ss_source_t src; /* first: a ss_source_t * is a rd_source_t * */
    ss_reader_t *r;  /* the reader it reads through, input i */
    int i;
    int empty;    /* the current range has nothing (a BAM's absent unplaced reads) */
    uint64_t seq; /* records returned in the current range */
} rd_source_t;

typedef struct rd_block_s rd_block_t; /* part of a CRAM window (reader_window.c) */
typedef struct rd_mark_s rd_mark_t;   /* where a BAM query may start (reader_marks.c) */

typedef struct {
    bam1_t **rec;       /* records, reused across batches */
    int n, m, cur;      /* filled, allocated, next to return */
    int done;           /* the query has no more records after this batch */
    hts_pos_t last_pos; /* position of the last record taken, -1 before the first */
    int64_t n_at_last;  /* records taken at last_pos */
} rd_batch_t;

/*
 * What input i returned this shard of the records the shard owns (reader_tally.c):
 * each counted once, however many of the shard's queries return it.
 */
typedef struct {
    int queried;      /* the shard queried this input */
    hts_pos_t last;   /* the last position counted, -2 before any */
    uint64_t n_last;  /* records counted at it */
    hts_pos_t q_last; /* the current query's last owned position, and its records there */
    uint64_t q_n;
    uint64_t n;        /* owned records counted this shard */
    uint64_t out;      /* of those, the ones that reach past the shard's end */
    int q_covers;      /* the current query covers the shard's start: it returns every record
                        * that reaches into the shard from before */
    uint64_t in_q, in; /* such records from the previous shard: the query's, the most of a query */
} rd_own_t;

typedef struct {
    int mode; /* RD_* */
    int is_cram;
    samFile *fp;  /* open: held, per shard between begin and end */
    sam_hdr_t *h; /* kept in every mode from the first open: the job's, or own */
    int own_h;
    hts_idx_t *idx; /* with fp: the job's (a BAM's), or own */
    int own_idx;
    hts_itr_t *itr;      /* the current query (a streamed BAM's is kept across batches) */
    ss_io_order_t order; /* the current query's records so far (check.c), across batches */
    int q_tid;           /* the current query's range */
    hts_pos_t q_beg, q_end;
    rd_batch_t batch;     /* streamed only */
    rd_block_t *win;      /* CRAM: the window's records (ss_reader_window), packed in blocks
                           * lent by the reader and given back at every ss_reader_end */
    rd_block_t *win_tail; /* win's last block, the one being filled */
    int win_state;        /* WIN_*: reset at every ss_reader_end */
    int in_win;           /* the current query is answered from win, from win_at/win_cur on */
    rd_block_t *win_at;   /* the block of the next packed record, NULL past the last */
    size_t win_cur;       /* the record's byte offset in win_at */
    bam1_t *ahead;        /* standard input: the first record past the last query, if held */
    int have_ahead;
    rd_batch_t replay;      /* standard input: the current contig's first records, for a re-query */
    int replay_tid;         /* the contig they belong to */
    int replay_full;        /* more were read than it holds: a re-query cannot be served */
    int q_behind;           /* standard input: the query is for a contig the stream has passed */
    unsigned char *dropped; /* standard input, per contig: records skipped unreturned */
    rd_mark_t *marks;       /* BAM: places a query may start at, kept across shards */
    int n_marks;
    /*
     * An htslib read error (< -1) met on the open handle fp, or 0: after one,
     * htslib's CRAM reader is left with NULL slices that a next read
     * dereferences, so every later read of fp returns this code instead;
     * cleared when fp is closed.
     */
    int failed;
    int64_t data_beg; /* BAM: the first record's offset (after the header), 0 until needed */
    rd_own_t own;     /* this shard's owned records (reader_tally.c) */
} rd_file_t;

struct ss_reader_s {
    ss_io_inputs_t in; /* paths borrowed from the job */
    rd_file_t *f;
    rd_source_t *src;      /* [in.n]: each input as a record source, zeroed until source.c
                            * hands it out */
    ss_source_t **front;   /* [in.n]: what kernels read instead (steps), or NULL: the file */
    hts_pos_t front_reach; /* how far around a query the fronts read (window widening) */
    uint64_t records;      /* records the inputs returned, ever (ss_reader_records) */
    int shard;             /* the shard being read, for messages; -1 before any */
    int is_open;           /* between begin and end */
    int n_refused;         /* inputs the budget refused */
    int held;              /* descriptors reserved in the budget */
    int opens;             /* times the inputs were opened for a shard (held ones once) */
    int batch_bytes;
    int w_tid; /* the shard's window (ss_reader_window), -2 when none */
    hts_pos_t w_beg, w_end;
    rd_block_t *win_spare; /* window blocks no input holds, kept for the next shard */
    bam1_t *win_read;      /* the record being read into a window */
    bam1_t *mark_read;     /* the record a BAM query's scan to its start reads (reader_marks.c) */
    int own_tid;           /* the shard's own records (ss_reader_own): tid, -2 when not counting */
    hts_pos_t own_beg, own_end, prev_beg;
    uint64_t *tally; /* [ss_io_tally_len()]: what ss_reader_end added up, NULL until needed */
    int tally_lost;  /* out of memory once: the tally says nothing */
};

/* hts_close, under the shared reference's lock for a CRAM (reader_open.c). Returns hts_close's
 * result. */
int rd_close_input(samFile *fp);

/* ---- the shard's window (reader_window.c) ---- */

/* Whether the query tid:beg-end lies inside the shard's window. */
int rd_in_window(const ss_reader_t *r, int tid, hts_pos_t beg, hts_pos_t end);
/*
 * CRAM: whether input i's query is answered from its window (read now if not
 * yet this shard); if so the window's cursor is at its first record. 1 or 0.
 */
int rd_window_query(ss_reader_t *r, int i, rd_file_t *f);
/* Give f's window blocks back to r, for the next window. */
void rd_window_release(ss_reader_t *r, rd_file_t *f);
/* Free what r keeps for windows; every input's window released first. */
void rd_window_free(ss_reader_t *r);
/* CRAM: the window's next record overlapping the query. 0, -1 at the end, -4 out of memory. */
int rd_window_next(ss_reader_t *r, int i, rd_file_t *f, bam1_t *b);

/* ---- where BAM queries may start (reader_marks.c) ---- */

/*
 * Start the new query itr (tid:beg-end through fp and idx) as late in the
 * file as is safe: at the last record boundary before which every record
 * ends by beg, found from the marks, reading forward from the latest one.
 */
void rd_bam_start(ss_reader_t *r, rd_file_t *f, samFile *fp, hts_itr_t *itr, int tid,
                  hts_pos_t beg);
void rd_marks_free(rd_file_t *f);

/* ---- the owned records' tally (reader_tally.c) ---- */

/* A query of f starts: its owned records are counted from the first. */
void rd_own_query(ss_reader_t *r, rd_file_t *f);
/* f's query returned b: count it if the shard owns it and no query of the shard did before. */
void rd_own_note(ss_reader_t *r, rd_file_t *f, const bam1_t *b);
/* The shard ends: add its counts to r->tally and stop counting. */
void rd_own_end(ss_reader_t *r);

/* ---- standard input (reader_stdin.c) ---- */

/* Make f the job's open standard input. 0, or -1 after ss_error(). */
int rd_stdin_borrow(ss_reader_t *r, rd_file_t *f);
/* Start the query in f->q_*. 0, or -1 after ss_error() when the stream cannot serve it. */
int rd_stdin_query(ss_reader_t *r, int i, rd_file_t *f);
/* The query's next record: 0, -1 at its end, < -1 a read or check error. */
int rd_stdin_next(rd_file_t *f, bam1_t *b);

#endif

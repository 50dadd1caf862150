/*
 * ss_check.h -- what every reader checks of every record it reads (check.c):
 * ids and positions in range, optional fields whole, coordinate order within
 * a stream, and the message for a record that fails. Used by the reader
 * (ss_reader.h includes it: a reader's input has an order state), by record
 * sources that name a bad record, and by kernels that read a file themselves
 * (view's block copy).
 */
#ifndef SS_CHECK_H
#define SS_CHECK_H

#include <htslib/hts.h>
#include <htslib/sam.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The order state of one stream of records: one query, or one shard's run of
 * records. It belongs to whoever owns the stream (the worker that owns the
 * iterator); reset it when a new stream starts. Plain struct, no allocation.
 */
typedef struct {
    int tid; /* the last record's (tid, pos): the next may not sort before it */
    hts_pos_t pos;
    uint64_t n; /* records checked in this stream */
    int ended;  /* the stream ended and the record after it was checked */
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
 * fields whole (as samtools view reads them), not before the previous record. Returns 0 (and moves
 * o on to b) or an SS_IO_BAD_* code (o keeps the previous record, for the message). A few compares:
 * call it on every record read, also those a kernel skips.
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

#endif

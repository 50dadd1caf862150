/*
 * source.c -- a record source over one input of a reader: ranges and
 * records through ss_reader_query/ss_reader_next (which read the file held,
 * per shard or in batches, as the descriptor budget allows), each record
 * stamped with its order in the range.
 *
 * Owned by the worker thread that owns the reader.
 */
#include "ss_io_private.h"

static int file_query(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end)
{
    ss_file_source_t *f = (ss_file_source_t *)src;
    f->seq = 0;
    f->empty = 0;
    if (tid != SS_IO_UNPLACED)
        return ss_reader_query(f->r, f->i, tid, beg, end);
    /* htslib has no iterator for "nothing after no mapped reads" in a BAM: an empty range */
    hts_idx_t *idx = ss_reader_index(f->r, f->i);
    if (idx && !ss_reader_is_cram(f->r, f->i) && hts_idx_get_n_no_coor(idx) == 0) {
        f->empty = 1;
        return 0;
    }
    return ss_reader_query(f->r, f->i, HTS_IDX_NOCOOR, 0, 0);
}

static int file_next(ss_source_t *src, bam1_t *b)
{
    ss_file_source_t *f = (ss_file_source_t *)src;
    if (f->empty)
        return -1;
    int r = ss_reader_next(f->r, f->i, b);
    if (r >= 0)
        b->id = f->seq++;
    return r;
}

void ss_file_source_init(ss_file_source_t *f, ss_reader_t *r, int i, const char *path)
{
    f->src.query = file_query;
    f->src.next = file_next;
    f->src.name = path;
    f->r = r;
    f->i = i;
}

/*
 * source.c -- a record source over one input file: region queries through
 * its index, records in file order, each stamped with its order in the
 * range. The reader (reader.c) owns one per input and rebinds it when it
 * reopens the file.
 *
 * Owned by the worker thread that owns the reader.
 */
#include <stdlib.h>

#include "../base/ss_base.h"
#include "ss_io_private.h"

static int file_query(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end)
{
    ss_file_source_t *f = (ss_file_source_t *)src;
    hts_itr_destroy(f->itr);
    f->itr = tid == SS_IO_UNPLACED ? sam_itr_queryi(f->idx, HTS_IDX_NOCOOR, 0, 0)
                                   : sam_itr_queryi(f->idx, tid, beg, end);
    f->seq = 0;
    if (f->itr)
        return 0;
    /* htslib has no iterator for "nothing after no mapped reads" in a BAM: an empty range */
    if (tid == SS_IO_UNPLACED && f->fp->format.format != cram && hts_idx_get_n_no_coor(f->idx) == 0)
        return 0;
    if (tid == SS_IO_UNPLACED)
        ss_error("%s: cannot query its unplaced unmapped reads through the index; check the "
                 "index matches the file (samtools index)", src->name);
    else
        ss_error("%s: cannot query %s:%lld-%lld through the index; check the index matches "
                 "the file (samtools index)",
                 src->name, sam_hdr_tid2name(f->h, tid), (long long)beg + 1, (long long)end);
    return -1;
}

static int file_next(ss_source_t *src, bam1_t *b)
{
    ss_file_source_t *f = (ss_file_source_t *)src;
    if (!f->itr)
        return -1;
    int r = sam_itr_next(f->fp, f->itr, b);
    if (r >= 0)
        b->id = f->seq++;
    return r;
}

void ss_file_source_bind(ss_file_source_t *f, const char *path, samFile *fp, sam_hdr_t *h,
                         hts_idx_t *idx)
{
    hts_itr_destroy(f->itr);
    f->itr = NULL;
    f->src.query = file_query;
    f->src.next = file_next;
    f->src.name = path;
    f->fp = fp, f->h = h, f->idx = idx;
    f->seq = 0;
}

void ss_file_source_unbind(ss_file_source_t *f)
{
    hts_itr_destroy(f->itr);
    f->itr = NULL;
    f->fp = NULL, f->h = NULL, f->idx = NULL;
}

/*
 * source.c -- a record source over one input of a reader: ranges and
 * records through ss_reader_query/ss_reader_next (which read the file held,
 * per shard or in batches, as the descriptor budget allows), each record
 * stamped with its order in the range; and what is put in front of an input
 * (ss_reader_set_front), which ss_reader_source hands out instead.
 *
 * Above reader.c: it calls the reader, the reader never calls it. The
 * reader keeps each input's source zeroed (ss_reader_init), and the first
 * ss_reader_source or ss_reader_file_source of an input fills it in.
 *
 * Owned by the worker thread that owns the reader.
 */
#include <stdlib.h>

#include "../base/ss_base.h"
#include "reader_priv.h"

static int file_query(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end)
{
    rd_source_t *f = (rd_source_t *)src;
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

/* A record the checks refused (check.c): one line naming the file, shard and record. */
static int bad_record(rd_source_t *f, const bam1_t *b, int code)
{
    char what[1024];
    ss_io_bad_record_text(what, sizeof(what), code, ss_reader_header(f->r, f->i), b,
                          ss_reader_order(f->r, f->i), ss_reader_shard(f->r));
    ss_error("%s: %s", f->src.name, what);
    return SS_IO_REPORTED;
}

static int file_next(ss_source_t *src, bam1_t *b)
{
    rd_source_t *f = (rd_source_t *)src;
    if (f->empty)
        return -1;
    int r = ss_reader_next(f->r, f->i, b);
    if (r >= 0)
        b->id = f->seq++;
    else if (ss_io_is_bad_record(r))
        return bad_record(f, b, r);
    return r;
}

/* Input i of r as a source: made on first use (ss_reader_init left it zeroed). */
static ss_source_t *file_source(ss_reader_t *r, int i)
{
    rd_source_t *f = &r->src[i];
    if (!f->src.query) {
        f->src.query = file_query;
        f->src.next = file_next;
        f->src.name = r->in.paths[i];
        f->r = r;
        f->i = i;
    }
    return &f->src;
}

ss_source_t *ss_reader_source(ss_reader_t *r, int i)
{
    if (i < 0 || i >= r->in.n)
        return NULL;
    return r->front && r->front[i] ? r->front[i] : file_source(r, i);
}

ss_source_t *ss_reader_file_source(ss_reader_t *r, int i)
{
    return i >= 0 && i < r->in.n ? file_source(r, i) : NULL;
}

int ss_reader_set_front(ss_reader_t *r, int i, ss_source_t *front, hts_pos_t reach)
{
    if (i < 0 || i >= r->in.n)
        return -1;
    if (!r->front && !(r->front = calloc((size_t)r->in.n, sizeof(*r->front))))
        return -1;
    r->front[i] = front;
    if (reach > r->front_reach)
        r->front_reach = reach;
    return 0;
}

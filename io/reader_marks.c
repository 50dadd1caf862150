/*
 * reader_marks.c -- where a BAM query may start reading, finer than the BAI.
 *
 * A BAI's linear index has one offset per 16 kb: a query starts at the first
 * record that may overlap its 16 kb window and inflates everything before
 * its own start. Deep data puts many shards, and each shard's queries (the
 * walk back to where its first column's reads began, then the scope), inside
 * one such window, so each query inflated the window again from its start:
 * every BGZF block of a 600x region was inflated 100 times.
 *
 * A mark (tid, pos, off) says: every record before file offset off ends at
 * or before pos, so a query on tid from pos or later loses nothing by
 * starting at off. A query reads forward from the latest mark before its
 * start (or from the BAI's offset, when that is later) to its start,
 * leaving marks every MARK_STEP bases: the records the iterator would have
 * read and dropped, read once. Marks are facts about the file, so they stay
 * valid across shards and reopenings. Kept sorted, a bounded number per input.
 */
#include <htslib/bgzf.h>
#include <stdlib.h>
#include <string.h>

#include "reader_priv.h"

#define MARKS_CAP 256
/* bases between marks: a query reads at most about this far before its start */
#define MARK_STEP 64

struct rd_mark_s {
    int tid;
    hts_pos_t pos;
    uint64_t off;
};

static int mark_before(const rd_mark_t *m, int tid, hts_pos_t pos)
{
    return m->tid < tid || (m->tid == tid && m->pos < pos);
}

/* The index of the first mark not before (tid, pos). */
static int marks_lower(const rd_file_t *f, int tid, hts_pos_t pos)
{
    int lo = 0, hi = f->n_marks;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (mark_before(&f->marks[mid], tid, pos))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Every record before off ends by tid:pos. */
static void marks_add(rd_file_t *f, int tid, hts_pos_t pos, uint64_t off)
{
    if (!f->marks && !(f->marks = malloc(MARKS_CAP * sizeof(*f->marks))))
        return; /* marks only save time: go on without */
    int k = marks_lower(f, tid, pos);
    if (k < f->n_marks && f->marks[k].tid == tid && f->marks[k].pos == pos) {
        if (off > f->marks[k].off)
            f->marks[k].off = off; /* more records known to end by the same place */
        return;
    }
    if (f->n_marks == MARKS_CAP) { /* workers move forward: the earlier half goes */
        int drop = MARKS_CAP / 2 < k ? MARKS_CAP / 2 : k;
        if (drop == 0)
            return;
        memmove(f->marks, f->marks + drop, (size_t)(f->n_marks - drop) * sizeof(*f->marks));
        f->n_marks -= drop;
        k -= drop;
    }
    memmove(f->marks + k + 1, f->marks + k, (size_t)(f->n_marks - k) * sizeof(*f->marks));
    f->marks[k] = (rd_mark_t){tid, pos, off};
    f->n_marks++;
}

/* The latest mark a query from tid:beg may start at, or NULL. */
static const rd_mark_t *marks_find(const rd_file_t *f, int tid, hts_pos_t beg)
{
    int k = marks_lower(f, tid, beg + 1);
    return k > 0 && f->marks[k - 1].tid == tid ? &f->marks[k - 1] : NULL;
}

/*
 * Read from the latest known start for tid:beg to beg, leaving marks.
 * Returns the latest mark for beg, or NULL when none could be made (then
 * the iterator reads as htslib would).
 *
 * The BAI's first chunk for the query is a start too: the records before
 * it do not overlap the query, so they end by beg, or they start past the
 * query's end, when the query is empty. Only a record before beg at the
 * chunk's start rules the second case out, so only then is it a mark.
 */
static const rd_mark_t *scan_to(rd_file_t *f, BGZF *bgzf, bam1_t *b, const hts_itr_t *itr, int tid,
                                hts_pos_t beg)
{
    const rd_mark_t *m = marks_find(f, tid, beg);
    uint64_t at = itr->off[0].u;
    hts_pos_t floor = beg, marked = -1;
    int trusted = 0; /* (floor, at) is known to be a mark */
    if (m && m->off >= at) {
        if (beg - m->pos < MARK_STEP)
            return m; /* close enough */
        at = m->off;
        floor = m->pos;
        trusted = 1;
    }
    if (bgzf_seek(bgzf, (int64_t)at, SEEK_SET) < 0)
        return NULL;
    for (;;) {
        if (trusted && (floor == marked || floor >= marked + MARK_STEP)) {
            marks_add(f, tid, floor, at);
            marked = floor;
        }
        /* a read error is the iterator's to meet and report */
        if (bam_read1(bgzf, b) < 0 || b->core.tid != tid || b->core.pos >= beg)
            break;
        if (!trusted) {
            trusted = 1;
            marks_add(f, tid, floor, at);
            marked = floor;
        }
        hts_pos_t end = bam_endpos(b);
        if (end > floor)
            floor = end;
        at = (uint64_t)bgzf_tell(bgzf);
    }
    return marks_find(f, tid, beg);
}

/* Start itr at file offset off: the chunks ending before it dropped, the first cut to start there.
 */
static void skip_to(hts_itr_t *itr, uint64_t off)
{
    int k = 0;
    while (k < itr->n_off && itr->off[k].v <= off)
        k++;
    memmove(itr->off, itr->off + k, (size_t)(itr->n_off - k) * sizeof(*itr->off));
    itr->n_off -= k;
    if (itr->n_off > 0 && itr->off[0].u < off)
        itr->off[0].u = off;
}

void rd_bam_start(ss_reader_t *r, rd_file_t *f, samFile *fp, hts_itr_t *itr, int tid, hts_pos_t beg)
{
    /* hts_itr_t's chunk list is public; the iterator reads it in order, seeking between chunks */
    if (tid < 0 || !itr->off || itr->n_off <= 0 || itr->multi || itr->read_rest)
        return;
    if (!r->mark_read && !(r->mark_read = bam_init1()))
        return; /* marks only save time: read as htslib would */
    const rd_mark_t *m = scan_to(f, fp->fp.bgzf, r->mark_read, itr, tid, beg);
    if (m && m->off > itr->off[0].u)
        skip_to(itr, m->off);
}

void rd_marks_free(rd_file_t *f)
{
    free(f->marks);
    f->marks = NULL;
    f->n_marks = 0;
}

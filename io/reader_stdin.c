/*
 * reader_stdin.c -- standard input ("-"): the job's open file, borrowed and
 * read in one pass by the run's only reader (rd_stdin_next). Owned by that
 * reader's worker.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/ss_base.h"
#include "reader_priv.h"

/* Standard input: the job's open file and header, and room for the record held back. */
int rd_stdin_borrow(ss_reader_t *r, rd_file_t *f)
{
    int n = sam_hdr_nref(r->in.stream_hdr);
    if (!f->dropped && !(f->dropped = calloc((size_t)(n > 0 ? n : 1), 1))) {
        ss_error("-: out of memory reading standard input");
        return -1;
    }
    if (!f->ahead && !(f->ahead = bam_init1())) {
        ss_error("-: out of memory reading standard input");
        return -1;
    }
    f->fp = r->in.stream;
    f->h = r->in.stream_hdr;
    f->is_cram = f->fp->format.format == cram;
    f->mode = RD_STDIN;
    f->replay_tid = -2; /* no contig read yet */
    ss_io_order_reset(&f->order);
    return 0;
}

/*
 * Standard input cannot seek, but a kernel may look at a contig's first
 * reads before reading it (pileup -a asks whether it has any): the records
 * a contig's queries returned are kept, up to REPLAY_MAX, and a new query on
 * the same contig reads them again before going on with the stream. 0, or
 * -1 after ss_error() when more than that would be needed.
 */
#define REPLAY_MAX 4096

int rd_stdin_query(ss_reader_t *r, int i, rd_file_t *f)
{
    rd_batch_t *rp = &f->replay;
    f->q_behind = f->q_tid >= 0 && f->replay_tid >= 0 && f->q_tid < f->replay_tid;
    if (f->q_behind && !f->dropped[f->q_tid])
        return 0; /* nothing of that contig is left, and nothing of it was lost: empty */
    if (f->q_behind) {
        ss_error("%s: standard input would have to be read again at contig %s, which a "
                 "stream cannot do; give the input as a file",
                 r->in.paths[i], sam_hdr_tid2name(f->h, f->q_tid));
        return -1;
    }
    if (f->q_tid != f->replay_tid || f->q_tid == HTS_IDX_NOCOOR) {
        rp->n = rp->cur = 0; /* a new contig: nothing of it was read yet */
        f->replay_full = 0;
        f->replay_tid = f->q_tid;
        return 0;
    }
    if (f->replay_full) {
        ss_error("%s: standard input would have to be read again at contig %s, which a "
                 "stream cannot do; give the input as a file",
                 r->in.paths[i], sam_hdr_tid2name(f->h, f->q_tid));
        return -1;
    }
    rp->cur = 0; /* the same contig again: first what it returned before */
    return 0;
}

/* Keep a copy of a record standard input returned, for a re-query of its contig. */
static int replay_keep(rd_file_t *f, const bam1_t *b)
{
    rd_batch_t *rp = &f->replay;
    if (f->replay_full || rp->cur < rp->n)
        return 0; /* not kept: it came from the replay itself, or there is no room */
    if (rp->n == REPLAY_MAX) {
        f->replay_full = 1;
        return 0;
    }
    if (rp->n == rp->m) {
        int m = rp->m ? 2 * rp->m : 64;
        bam1_t **a = realloc(rp->rec, (size_t)m * sizeof(*a));
        if (!a)
            return -1;
        memset(a + rp->m, 0, (size_t)(m - rp->m) * sizeof(*a));
        rp->rec = a, rp->m = m;
    }
    if (!rp->rec[rp->n] && !(rp->rec[rp->n] = bam_init1()))
        return -1;
    if (!bam_copy1(rp->rec[rp->n], b))
        return -1;
    rp->n++;
    rp->cur = rp->n;
    return 0;
}

/*
 * Where a record of standard input lies against the current query: < 0
 * before it (an earlier contig, or ending before beg: skipped, as an index
 * query would never return it), 0 inside, > 0 past it (held for the next).
 */
static int stdin_place(const rd_file_t *f, const bam1_t *a)
{
    int tid = a->core.tid;
    if (f->q_tid == HTS_IDX_NOCOOR)
        return tid == -1 ? 0 : -1;
    if (tid == -1 || tid > f->q_tid)
        return 1;
    if (tid < f->q_tid)
        return -1;
    if (a->core.pos >= f->q_end)
        return 1;
    return bam_endpos(a) <= f->q_beg ? -1 : 0;
}

/*
 * Standard input is read once, in file order, so a query only moves forward
 * (the plan gives its one worker whole contigs in file order): records
 * before the query's range are skipped, the first past it is held for the
 * next query. Every record is checked as it is read.
 */
int rd_stdin_next(rd_file_t *f, bam1_t *b)
{
    rd_batch_t *rp = &f->replay;
    if (f->q_behind)
        return -1;
    while (rp->cur < rp->n) { /* a re-query: what the contig's earlier queries returned */
        const bam1_t *a = rp->rec[rp->cur++];
        int where = stdin_place(f, a);
        if (where > 0) {
            rp->cur = rp->n; /* sorted: nothing later in it is in range either */
            return -1;
        }
        if (where == 0)
            return bam_copy1(b, a) ? 0 : -4;
    }
    for (;;) {
        if (!f->have_ahead) {
            int ret = sam_read1(f->fp, f->h, f->ahead);
            if (ret < 0)
                return ret;
            int bad = ss_io_check_record(f->ahead, sam_hdr_nref(f->h), &f->order);
            if (bad < 0)
                return bam_copy1(b, f->ahead) ? bad : -4; /* b names the record */
            f->have_ahead = 1;
        }
        int where = stdin_place(f, f->ahead);
        if (where > 0)
            return -1;
        f->have_ahead = 0;
        if (where == 0)
            return bam_copy1(b, f->ahead) && replay_keep(f, f->ahead) == 0 ? 0 : -4;
        if (f->ahead->core.tid >= 0) /* a later query of its contig cannot have it back */
            f->dropped[f->ahead->core.tid] = 1;
    }
}

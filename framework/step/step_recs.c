/*
 * step_recs.c -- what most steps do with a query (ss_step.h): read the inner
 * source over a widened range, edit each record, keep those the range holds
 * afterwards, and hand them out in samtools sort's order; the unplaced reads
 * stream through, edited, without being held; a read error of the file waits
 * for the consumer's next read.
 *
 * Owned by the step's source, on one worker thread. Records are kept for the
 * next query, so steady state allocates nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "../ss_framework.h"

struct ss_step_recs_s {
    bam1_t **recs; /* the query's records; m made */
    int *order;    /* indexes into recs, in the order handed out */
    int n, m, cur;
    int deferred;        /* the inner source's read error, for the next call to next */
    ss_source_t *stream; /* the unplaced reads: straight from here, edited */
    ss_step_edit_fn edit;
    void *ctx;
};

ss_step_recs_t *ss_step_recs_init(void)
{
    ss_step_recs_t *p = ss_alloc_private(sizeof(*p)); /* written per record */
    if (!p)
        ss_error("out of memory starting a step");
    return p;
}

void ss_step_recs_destroy(ss_step_recs_t *p)
{
    for (int i = 0; p && i < p->m; i++)
        if (p->recs[i])
            bam_destroy1(p->recs[i]);
    if (p)
        free(p->recs), free(p->order);
    free(p);
}

/* The next record's slot, with room in order for it; NULL out of memory. */
static bam1_t *slot(ss_step_recs_t *p)
{
    if (p->n == p->m) {
        int m = p->m ? 2 * p->m : 256;
        int *o = realloc(p->order, (size_t)m * sizeof(*o));
        if (o)
            p->order = o;
        bam1_t **r = o ? realloc(p->recs, (size_t)m * sizeof(*r)) : NULL;
        if (!r)
            return NULL;
        memset(r + p->m, 0, (size_t)(m - p->m) * sizeof(*r));
        p->recs = r, p->m = m;
    }
    if (!p->recs[p->n])
        p->recs[p->n] = bam_init1();
    return p->recs[p->n];
}

int ss_step_recs_load(ss_step_recs_t *p, ss_source_t *inner, int tid, hts_pos_t beg, hts_pos_t end,
                      hts_pos_t lo, hts_pos_t hi, ss_step_edit_fn edit, void *ctx)
{
    p->n = p->cur = p->deferred = 0;
    p->stream = NULL, p->edit = edit, p->ctx = ctx;
    if (tid == SS_IO_UNPLACED) {
        p->stream = inner;
        return ss_source_query(inner, tid, beg, end);
    }
    if (ss_source_query(inner, tid, lo, hi) < 0)
        return -1;
    bam1_t *b;
    int r = 0;
    while ((b = slot(p)) && (r = ss_source_next(inner, b)) >= 0) {
        edit(ctx, b);
        if (b->core.pos < end && bam_endpos(b) > beg) /* else the slot is used again */
            p->order[p->n] = p->n, p->n++;
    }
    if (!b) {
        ss_error("%s: out of memory holding records of a step", inner->name);
        return -1;
    }
    if (r == SS_IO_REPORTED)
        return -1;
    p->deferred = r < -1 ? r : 0; /* the file's fault: the consumer names it at its next read */
    ss_step_sort(p->recs, p->order, p->n);
    return 0;
}

int ss_step_recs_next(ss_step_recs_t *p, bam1_t *b)
{
    if (p->stream) {
        int r = ss_source_next(p->stream, b);
        if (r >= 0)
            p->edit(p->ctx, b);
        return r;
    }
    if (p->deferred) {
        int r = p->deferred;
        p->deferred = 0;
        return r;
    }
    if (p->cur == p->n)
        return -1;
    if (!bam_copy1(b, p->recs[p->order[p->cur]])) {
        ss_error("out of memory copying a record of a step");
        return SS_IO_REPORTED;
    }
    b->id = (uint64_t)p->cur++;
    return 0;
}

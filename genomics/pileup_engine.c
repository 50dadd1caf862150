/*
 * pileup_engine.c -- the buffer of reads of one input and the positions of
 * its columns (see pileup_engine.h for what must equal htslib and why).
 */
#include <stdlib.h>
#include <string.h>

#include "../alloc/ss_alloc.h" /* ss_alloc_private: the engine writes its state per read */
#include "pileup_engine.h"

#define OP(c)  ((int)((c)&BAM_CIGAR_MASK))
#define LEN(c) ((hts_pos_t)((c) >> BAM_CIGAR_SHIFT))

/* Operations that consume the reference and so give a read a column. */
static inline int on_ref(int op)
{
    return op == BAM_CMATCH || op == BAM_CDEL || op == BAM_CREF_SKIP || op == BAM_CEQUAL ||
           op == BAM_CDIFF;
}

static inline int is_match(int op)
{
    return op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF;
}

/* An empty engine record, as bam_init1() makes one, on private cache lines (ss_alloc.h). */
static bam1_t *new_record(void)
{
    pe_rec_t *rec = ss_alloc_private(sizeof(pe_rec_t));
    return rec ? &rec->b : NULL;
}

static void free_record(pe_t *e, bam1_t *b)
{
    if (b && e->client_free && pe_rec(b)->client)
        e->client_free(pe_rec(b)->client);
    bam_destroy1(b);
}

pe_t *pe_init(pe_read_f read, void *data, int maxcnt, int overlaps, int mods)
{
    pe_t *e = ss_alloc_private(sizeof(*e)); /* written per position (ss_alloc.h) */
    if (!e)
        return NULL;
    e->read = read;
    e->data = data;
    e->maxcnt = maxcnt;
    e->want_mods = mods;
    e->max_pos = -1;
    if (!(e->next = new_record()) || (overlaps && !(e->olap = pe_overlap_init()))) {
        pe_destroy(e);
        return NULL;
    }
    return e;
}

static void release(pe_t *e, pe_read_t *r)
{
    if (r->mods) {
        hts_base_mod_state_free(r->mods);
        r->mods = NULL;
    }
    /* the pool has room: it grows with every read taken */
    e->pool[e->n_pool++] = r->b;
}

void pe_reset(pe_t *e, int tid)
{
    for (int i = 0; i < e->n; i++)
        release(e, &e->r[i]);
    e->n = 0;
    if (e->olap)
        pe_overlap_clear(e->olap);
    e->pos = 0;
    e->max_pos = -1;
    e->next_end = 0;
    e->eof = e->error = 0;
    e->other_tid = tid != 0;
}

void pe_destroy(pe_t *e)
{
    if (!e)
        return;
    pe_reset(e, 0);
    for (int i = 0; i < e->n_pool; i++)
        free_record(e, e->pool[i]);
    free_record(e, e->next);
    if (e->olap)
        pe_overlap_destroy(e->olap);
    free(e->pool);
    free(e->r);
    free(e->plp);
    free(e);
}

/* Room for one more read and its record in the pool. 0 or -1. */
static int reserve(pe_t *e)
{
    if (e->n == e->m) {
        int m = e->m ? 2 * e->m : 64;
        pe_read_t *r = realloc(e->r, (size_t)m * sizeof(*r));
        if (!r)
            return -1;
        e->r = r, e->m = m;
    }
    if (e->n + 1 > e->m_pool) { /* every record, buffered or spare, fits the pool */
        int m = e->m_pool ? 2 * e->m_pool : 64;
        bam1_t **p = realloc(e->pool, (size_t)m * sizeof(*p));
        if (!p)
            return -1;
        e->pool = p, e->m_pool = m;
    }
    return 0;
}

/*
 * Take e->next into the buffer, as bam_plp_push does. The depth cap: a read
 * starting at the position being filled is turned away while more than
 * maxcnt reads are held (htslib counts its spare node too, hence n + 1).
 * htslib's position is on another contig (tid 0, as a new iterator starts)
 * until the shard's first read is taken, so that read passes the cap
 * whatever maxcnt is: it matters at maxcnt <= 0 (bcftools -d 0), where
 * every other read starting at the position being filled is turned away.
 */
static int push(pe_t *e)
{
    bam1_t *b = e->next;
    hts_pos_t beg = b->core.pos;
    if (b->core.tid < 0 || (b->core.flag & BAM_FUNMAP)) {
        if (e->olap)
            pe_overlap_forget(e->olap, b);
        return 0;
    }
    if (beg == e->pos && !e->other_tid && e->n + 1 > e->maxcnt) {
        if (e->olap)
            pe_overlap_forget(e->olap, b);
        return 0;
    }
    if (beg < e->max_pos) {
        e->error = PE_ERR_UNSORTED;
        return -1;
    }
    e->max_pos = beg;
    hts_pos_t end = beg + bam_cigar2rlen(b->core.n_cigar, bam_get_cigar(b));
    /*
     * A read that ends before the position being filled never shows; htslib
     * still takes the first read of a shard on another contig than its
     * starting one (tid 0), whatever its end.
     */
    if (end <= e->pos && !e->other_tid)
        return 0;
    e->other_tid = 0;
    if (reserve(e) < 0)
        goto oom;
    bam1_t *spare = e->n_pool ? e->pool[--e->n_pool] : new_record();
    if (!spare)
        goto oom;
    pe_read_t *r = &e->r[e->n];
    *r = (pe_read_t){.b = b,
                     .seq = bam_get_seq(b),
                     .qual = bam_get_qual(b),
                     .beg = beg,
                     .end = end,
                     .fast_end = beg,
                     .k = -1,
                     .rev = bam_is_rev(b)};
    if (e->want_mods) {
        if (!(r->mods = hts_base_mod_state_alloc()) || bam_parse_basemod(b, r->mods) < 0) {
            hts_base_mod_state_free(r->mods);
            e->pool[e->n_pool++] = spare;
            goto oom;
        }
        r->cd.p = r->mods;
    }
    pe_rec(b)->quals_changed = 1;
    e->n++;
    e->next = spare;
    if (e->n == 1 || end < e->next_end)
        e->next_end = end;
    /* htslib constructs a read before it looks for its mate's overlap */
    if (e->construct && e->construct(e->data, b, &r->cd) < 0) {
        e->error = PE_ERR_CONSTRUCT;
        return -1;
    }
    bam1_t *mate = NULL;
    int olap = e->olap ? pe_overlap_push(e->olap, b, end, &mate) : 0;
    if (olap < 0) {
        e->error = olap == -2 ? PE_ERR_NOMEM : PE_ERR_CIGAR;
        return -1;
    }
    if (mate)
        pe_rec(mate)->quals_changed = 1; /* its bases over the overlap may have new qualities */
    return 0;
oom:
    e->error = PE_ERR_NOMEM;
    return -1;
}

/* Drop the reads that end at or before e->pos, keeping the order. */
static void compact(pe_t *e)
{
    int j = 0;
    hts_pos_t next_end = HTS_POS_MAX;
    for (int i = 0; i < e->n; i++) {
        pe_read_t *r = &e->r[i];
        if (r->end <= e->pos) {
            if (e->olap)
                pe_overlap_forget(e->olap, r->b);
            release(e, r);
            continue;
        }
        if (r->end < next_end)
            next_end = r->end;
        if (i != j)
            e->r[j] = *r;
        j++;
    }
    e->n = j;
    e->next_end = next_end;
}

int pe_next_pos(pe_t *e)
{
    if (e->error)
        return -1;
    for (;;) {
        /* htslib fills a position only once a read starts past it (or input ended) */
        if (!e->eof && e->max_pos <= e->pos) {
            int r = e->read(e->data, e->next);
            if (r >= 0) {
                if (push(e) < 0)
                    return -1;
            } else if (r < -1) {
                e->error = r;
                return -1;
            } else {
                e->eof = 1;
            }
            continue;
        }
        if (e->n && e->next_end <= e->pos)
            compact(e);
        if (e->n == 0)
            return 0; /* at the end: a read past pos would still be held */
        if (e->r[0].beg <= e->pos)
            return 1;
        e->pos = e->r[0].beg; /* nothing covers pos: jump to the oldest read */
    }
}

void pe_resolve(pe_read_t *r, hts_pos_t pos, bam_pileup1_t *p)
{
    const bam1_t *b = r->b;
    const uint32_t *cig = bam_get_cigar(b);
    int n = (int)b->core.n_cigar, k;
    if (r->k < 0) {
        /* first column: the first operation on the reference, counting the query before it */
        r->x = b->core.pos;
        r->y = 0;
        for (k = 0; k < n - 1 && !on_ref(OP(cig[k])); k++)
            if (OP(cig[k]) == BAM_CINS || OP(cig[k]) == BAM_CSOFT_CLIP)
                r->y += LEN(cig[k]);
        r->k = k;
    } else if (pos - r->x >= LEN(cig[r->k]) && r->k + 1 < n) {
        /* one operation on per position, as htslib steps */
        k = r->k;
        if (is_match(OP(cig[k])))
            r->y += LEN(cig[k]);
        r->x += LEN(cig[k]);
        for (k++; k < n - 1 && !on_ref(OP(cig[k])); k++)
            if (OP(cig[k]) == BAM_CINS || OP(cig[k]) == BAM_CSOFT_CLIP)
                r->y += LEN(cig[k]);
        r->k = k;
    }
    k = r->k;
    int op = OP(cig[k]);
    hts_pos_t len = LEN(cig[k]);
    p->b = (bam1_t *)b;
    p->is_del = p->is_refskip = 0;
    p->indel = 0;
    p->aux = 0; /* as on a plain position: a column's aux starts at 0 for its kernel */
    if (r->x + len - 1 == pos && k + 1 < n) {
        /* the last base before an insertion or deletion carries it */
        int op2 = OP(cig[k + 1]);
        if (op2 == BAM_CDEL) {
            p->indel = -(int)LEN(cig[k + 1]);
        } else if (op2 == BAM_CINS) {
            p->indel = (int)LEN(cig[k + 1]);
        } else if (op2 == BAM_CPAD && k + 2 < n) {
            int ins = 0;
            for (int j = k + 2; j < n && !on_ref(OP(cig[j])); j++)
                if (OP(cig[j]) == BAM_CINS)
                    ins += (int)LEN(cig[j]);
            if (ins > 0)
                p->indel = ins;
        }
    }
    if (is_match(op)) {
        p->qpos = (int32_t)(r->y + (pos - r->x));
        /* the positions up to the operation's last base are plain */
        hts_pos_t last = r->x + len - 1;
        if (pos + 1 < last && r->y + len <= b->core.l_qseq) {
            r->fast_end = last;
            r->qoff = r->y - r->x;
        }
    } else {
        p->is_del = 1;
        p->qpos = (int32_t)r->y;
        p->is_refskip = op == BAM_CREF_SKIP;
    }
    p->is_head = pos == b->core.pos;
    p->is_tail = pos == r->end - 1;
    p->cigar_ind = k;
    p->cd = r->cd;
}

void pe_skip_column(pe_t *e)
{
    /* the CIGAR cursors step one operation per position: keep them moving */
    bam_pileup1_t p;
    for (int i = 0; i < e->n && e->r[i].beg <= e->pos; i++)
        if (e->pos >= e->r[i].fast_end)
            pe_resolve(&e->r[i], e->pos, &p);
}

const bam_pileup1_t *pe_column(pe_t *e, int *n_out)
{
    if (e->n > e->m_plp) {
        bam_pileup1_t *p = realloc(e->plp, (size_t)e->m * sizeof(*p));
        if (!p)
            return NULL;
        e->plp = p, e->m_plp = e->m;
    }
    /* locals: the stores into the column could otherwise alias e's fields */
    const hts_pos_t pos = e->pos;
    pe_read_t *reads = e->r;
    bam_pileup1_t *plp = e->plp;
    const int n_reads = e->n;
    int n = 0;
    for (; n < n_reads && reads[n].beg <= pos; n++) {
        pe_read_t *r = &reads[n];
        bam_pileup1_t *p = &plp[n];
        if (pos < r->fast_end)
            *p = (bam_pileup1_t){
                .b = r->b, .qpos = (int32_t)(pos + r->qoff), .cigar_ind = r->k, .cd = r->cd};
        else
            pe_resolve(r, pos, p);
    }
    *n_out = n;
    return plp;
}

/*
 * rl_block.c -- a shard's block of reads: the records (kept and reused across
 * shards, so steady state allocates nothing), what each read is, indels in
 * normal form, and the order of deciding a block.
 */
#include <stdlib.h>
#include <string.h>

#include "realign.h"

rl_block_t *rl_block_init(void)
{
    rl_block_t *k = ss_alloc_private(sizeof(*k)); /* written per read */
    if (!k || !(k->scratch = ss_bam_private()) || !(k->dp = rl_dp_init())) {
        if (k)
            bam_destroy1(k->scratch);
        free(k);
        return NULL;
    }
    return k;
}

void rl_block_destroy(rl_block_t *k)
{
    if (!k)
        return;
    for (int i = 0; i < k->m; i++)
        bam_destroy1(k->recs[i]);
    free(k->recs);
    free(k->reads);
    free(k->known);
    free(k->tg);
    free(k->raw);
    free(k->mm);
    free(k->win);
    free(k->cig);
    free(k->members);
    free(k->cand);
    free(k->score);
    free(k->off);
    free(k->gapped);
    free(k->map);
    rl_dp_destroy(k->dp);
    free(k->hap);
    free(k->hap_ref);
    free(k->tmp_cig);
    free(k->md.s);
    free(k->aux.s);
    rl_names_destroy(k->names);
    bam_destroy1(k->scratch);
    free(k);
}

void rl_block_reset(rl_block_t *k)
{
    k->n = k->n_known = k->n_tg = k->n_win = k->n_cig = k->n_mm = 0;
}

bam1_t *rl_block_next(rl_block_t *k)
{
    if (k->n == k->m) {
        int m = k->m ? 2 * k->m : 4096;
        bam1_t **r = realloc(k->recs, (size_t)m * sizeof(*r));
        if (!r)
            return NULL;
        k->recs = r;
        rl_read_t *rd = realloc(k->reads, (size_t)m * sizeof(*rd));
        if (!rd)
            return NULL;
        k->reads = rd;
        for (; k->m < m; k->m++)
            if (!(k->recs[k->m] = bam_init1()))
                return NULL;
    }
    return k->recs[k->n++];
}

void rl_block_unget(rl_block_t *k)
{
    k->n--;
}

int rl_block_n(const rl_block_t *k)
{
    return k->n;
}

bam1_t *rl_block_rec(rl_block_t *k, int i)
{
    return k->recs[i];
}

int rl_block_add_known(rl_block_t *k, const rl_indel_t *e)
{
    if (k->n_known == k->m_known) {
        int m = k->m_known ? 2 * k->m_known : 64;
        rl_indel_t *p = realloc(k->known, (size_t)m * sizeof(*p));
        if (!p)
            return -1;
        k->known = p, k->m_known = m;
    }
    k->known[k->n_known++] = *e;
    return 0;
}

/* ---- reads ---- */

#define PASS_FLAGS (BAM_FUNMAP | BAM_FSECONDARY | BAM_FSUPPLEMENTARY | BAM_FQCFAIL | BAM_FDUP)

void rl_read_spans(rl_read_t *r)
{
    const bam1_t *b = r->b;
    const uint32_t *c = bam_get_cigar(b);
    int n = b->core.n_cigar;
    r->pos = b->core.pos;
    r->end = n ? bam_endpos(b) : b->core.pos + 1;
    r->lclip = n && bam_cigar_op(c[0]) == BAM_CSOFT_CLIP ? (int)bam_cigar_oplen(c[0]) : 0;
    r->rclip =
        n > 1 && bam_cigar_op(c[n - 1]) == BAM_CSOFT_CLIP ? (int)bam_cigar_oplen(c[n - 1]) : 0;
    r->ustart = r->pos - r->lclip;
    r->uend = r->end + r->rclip;
}

/* No ops the haplotype model cannot express, and bases to score. */
static int cigar_ok(const bam1_t *b)
{
    const uint32_t *c = bam_get_cigar(b);
    int m = 0;
    for (uint32_t i = 0; i < b->core.n_cigar; i++) {
        int op = bam_cigar_op(c[i]);
        if (op == BAM_CHARD_CLIP || op == BAM_CREF_SKIP || op == BAM_CPAD || op == BAM_CBACK)
            return 0;
        m |= op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF;
    }
    return m && b->core.l_qseq > 0 && bam_get_qual(b)[0] != 0xff;
}

int rl_eligible(const bam1_t *b, const rl_opts_t *o)
{
    const bam1_core_t *c = &b->core;
    if ((c->flag & PASS_FLAGS) || c->tid < 0 || c->qual == 0 || !cigar_ok(b))
        return 0;
    if (bam_cigar2rlen(c->n_cigar, bam_get_cigar(b)) + c->l_qseq > RL_SPAN_MAX)
        return 0;
    if (!(c->flag & BAM_FPAIRED))
        return 1;
    /* the mate's shard must see this read's decision: same contig, within --max-isize */
    if ((c->flag & BAM_FMUNMAP) || c->mtid != c->tid)
        return 0;
    hts_pos_t d = c->mpos > c->pos ? c->mpos - c->pos : c->pos - c->mpos;
    return d <= o->max_isize;
}

/* ---- indels ---- */

void rl_indel_norm(rl_indel_t *e, const rl_ref_t *ref)
{
    if (e->len < 0) {
        int k = -e->len;
        while (e->pos > ref->beg + 1 &&
               rl_ref_at(ref, e->pos - 1) == rl_ref_at(ref, e->pos + k - 1) &&
               rl_ref_at(ref, e->pos - 1) != 'N')
            e->pos--;
        return;
    }
    int k = e->len;
    while (e->pos > ref->beg + 1 && rl_ref_at(ref, e->pos - 1) == e->seq[k - 1] &&
           e->seq[k - 1] != 'N') {
        memmove(e->seq + 1, e->seq, (size_t)(k - 1));
        e->seq[0] = rl_ref_at(ref, e->pos - 1);
        e->pos--;
    }
}

int rl_indel_cmp(const rl_indel_t *a, const rl_indel_t *b)
{
    if (a->pos != b->pos)
        return a->pos < b->pos ? -1 : 1;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return a->len > 0 ? strcmp(a->seq, b->seq) : 0;
}

int rl_read_indels(const rl_read_t *r, const rl_ref_t *ref, rl_indel_t *out, int max)
{
    const bam1_t *b = r->b;
    const uint32_t *c = bam_get_cigar(b);
    const uint8_t *seq = bam_get_seq(b);
    hts_pos_t rp = r->pos;
    int qp = 0, n = 0;
    for (uint32_t i = 0; i < b->core.n_cigar; i++) {
        int op = bam_cigar_op(c[i]), len = (int)bam_cigar_oplen(c[i]);
        if (op == BAM_CINS || op == BAM_CDEL) {
            if (n < max) {
                rl_indel_t *e = &out[n];
                e->pos = rp;
                e->len = op == BAM_CDEL ? -len : len;
                e->seq[0] = '\0';
                if (op == BAM_CINS && len <= RL_MAX_INDEL) {
                    for (int j = 0; j < len; j++)
                        e->seq[j] = seq_nt16_str[bam_seqi(seq, qp + j)];
                    e->seq[len] = '\0';
                }
                if (len <= RL_MAX_INDEL)
                    rl_indel_norm(e, ref);
            }
            n++;
        }
        if (bam_cigar_type(op) & 1)
            qp += len;
        if (bam_cigar_type(op) & 2)
            rp += len;
    }
    return n;
}

/* ---- deciding a block ---- */

int rl_block_decide(rl_block_t *k, const rl_opts_t *o, const rl_ref_t *ref, hts_pos_t own_beg,
                    hts_pos_t own_end, rl_counts_t *counts)
{
    for (int i = 0; i < k->n; i++) {
        rl_read_t *r = &k->reads[i];
        memset(r, 0, sizeof(*r));
        r->b = k->recs[i];
        r->win = -1;
        r->mate = -1;
        r->mm = -1;
        rl_read_spans(r);
        r->opos = r->pos, r->oend = r->end;
        r->eligible = rl_eligible(r->b, o) && r->ustart >= 0 && r->uend <= ref->ctg_len;
    }
    if (rl_find_windows(k, o, ref) < 0)
        return -1;
    rl_counts_t mine = {0};
    for (int w = 0; w < k->n_win; w++) {
        rl_counts_t c = {0};
        if (rl_decide_window(k, w, o, ref, &c) < 0)
            return -1;
        if (k->win[w].beg >= own_beg && k->win[w].beg < own_end) { /* one shard counts it */
            mine.windows++, mine.skipped += c.skipped, mine.cleaned += c.cleaned;
            mine.realigned += c.realigned, mine.unclipped += c.unclipped;
        }
    }
    if (rl_fix_mates(k, o->max_isize) < 0)
        return -1;
    if (counts) {
        counts->windows += mine.windows, counts->skipped += mine.skipped;
        counts->cleaned += mine.cleaned, counts->realigned += mine.realigned;
        counts->unclipped += mine.unclipped;
    }
    return 0;
}

/*
 * baq_realn.c -- the steps of htslib 1.16's sam_prob_realn around the
 * forward-backward pass, for one read: its checks, its BQ/ZQ tags, its span,
 * band and window, and after the pass the CIGAR walk that makes BQ and
 * applies it. Same steps, same order, same integer types as htslib, so the
 * same bytes and return codes.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/hts_log.h>
#include <htslib/sam.h>

#include "baq_priv.h"
#include "base/ss_exact_fp.h"

static int tag_ok(const uint8_t *tg, enum htsLogLevel severity, const char *type, const bam1_t *b)
{
    if (*tg != 'Z') {
        hts_log(severity, "pl_baq", "Incorrect %s tag type (%c) for read %s", type, *tg,
                bam_get_qname(b));
        return 0;
    }
    if ((size_t)b->core.l_qseq != strlen((const char *)tg + 1)) {
        hts_log(severity, "pl_baq", "Read %s %s tag is wrong length", bam_get_qname(b), type);
        return 0;
    }
    return 1;
}

/*
 * Existing BQ/ZQ tags, as htslib treats them: dropped, reused, or converted
 * into each other. Returns 1 when the read needs the pass, else the final
 * code. Pointers into the aux data are kept across bam_aux_del exactly as
 * htslib keeps them, so a tag that moves is read where htslib reads it.
 */
static int realn_tags(bam1_t *b, int flag)
{
    int apply = flag & BAQ_APPLY, redo = flag & BAQ_REDO, fix_bq = 0;
    uint8_t *bq, *zq, *qual = bam_get_qual(b);
    int l = b->core.l_qseq;

    if ((bq = bam_aux_get(b, "BQ")) != NULL) {
        if (!redo && !tag_ok(bq, HTS_LOG_WARNING, "BQ", b))
            fix_bq = 1;
        ++bq;
    }
    if ((zq = bam_aux_get(b, "ZQ")) != NULL) {
        if (!tag_ok(zq, HTS_LOG_ERROR, "ZQ", b))
            return -4;
        ++zq;
    }
    if (bq && redo) {
        bam_aux_del(b, bq - 1);
        bq = NULL;
    }
    if (bq && zq) {
        bam_aux_del(b, zq - 1);
        zq = NULL;
    }
    if (!zq && fix_bq) {
        bam_aux_del(b, bq - 1);
        bq = NULL;
    }
    if (!bq && !zq)
        return 1;
    if ((apply && zq) || (!apply && bq))
        return -3;
    if (bq && apply) { /* BQ becomes ZQ */
        for (int i = 0; i < l; ++i)
            qual[i] = qual[i] + 64 < bq[i] ? 0 : qual[i] - ((int)bq[i] - 64);
        *(bq - 3) = 'Z';
    } else if (zq && !apply) { /* ZQ becomes BQ */
        for (int i = 0; i < l; ++i)
            qual[i] += (int)zq[i] - 64;
        *(zq - 3) = 'B';
    }
    return 0;
}

/*
 * The aligned span, the band and the reference window (before it is cut at
 * the contig end). Returns 1, or -1 when the read has no M/=/X or has an N.
 */
static int realn_window(const bam1_t *b, baq_job_t *j, int *xe_out)
{
    const uint32_t *cigar = bam_get_cigar(b);
    const bam1_core_t *c = &b->core;
    hts_pos_t x = c->pos;
    int y = 0, yb = -1, ye = -1, xb = -1, xe = -1;
    for (uint32_t k = 0; k < c->n_cigar; ++k) {
        int op = bam_cigar_op(cigar[k]), l = bam_cigar_oplen(cigar[k]);
        if (op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF) {
            if (yb < 0)
                yb = y;
            if (xb < 0)
                xb = x;
            ye = y + l, xe = x + l;
            x += l, y += l;
        } else if (op == BAM_CSOFT_CLIP || op == BAM_CINS) {
            y += l;
        } else if (op == BAM_CDEL) {
            x += l;
        } else if (op == BAM_CREF_SKIP) {
            return -1;
        }
    }
    if (xb == -1)
        return -1;
    int bw = 7;
    if (abs((xe - xb) - (ye - yb)) > bw)
        bw = abs((xe - xb) - (ye - yb)) + 3;
    xb -= yb + bw / 2;
    if (xb < 0)
        xb = 0;
    xe += c->l_qseq - ye + bw / 2;
    if (xe - xb - c->l_qseq > bw) {
        xb += (xe - xb - c->l_qseq - bw) / 2; /* the second uses the new xb, as in htslib */
        xe -= (xe - xb - c->l_qseq - bw) / 2;
    }
    j->bw = bw;
    j->xb = xb;
    *xe_out = xe;
    return 1;
}

size_t baq_job_bytes(const baq_job_t *j)
{
    size_t lq = j->l_query, lr = j->xe - j->xb;
    size_t n = lq * (sizeof(double) + sizeof(int) + 2) + 1 + (lr > 0 ? lr : 1);
    return (n + 15) & ~(size_t)15;
}

/* miss, state, tseq, bq (with room for the tag's NUL), tref */
static void job_place(baq_job_t *j, unsigned char *p)
{
    size_t lq = j->l_query;
    j->miss = (double *)p;
    j->state = (int *)(p + lq * sizeof(double));
    j->tseq = p + lq * (sizeof(double) + sizeof(int));
    j->bq = j->tseq + lq;
    j->tref = j->bq + lq + 1;
}

/* Codes for the pass, the window cut at the contig end, and the pass's band. */
static void job_fill(baq_job_t *j, const char *ref, hts_pos_t ref_len)
{
    int xe = j->xe;
    const bam1_t *b = j->b;
    const uint8_t *seq = bam_get_seq(b);
    for (int i = 0; i < j->l_query; ++i)
        j->tseq[i] = (uint8_t)seq_nt16_int[bam_seqi(seq, i)];
    for (int i = j->xb; i < xe; ++i) {
        if (i >= ref_len || ref[i] == '\0') {
            xe = i;
            break;
        }
        j->tref[i - j->xb] = (uint8_t)seq_nt16_int[seq_nt16_table[(unsigned char)ref[i]]];
    }
    j->l_ref = xe - j->xb;
    int bw = j->l_ref > j->l_query ? j->l_ref : j->l_query;
    if (bw > j->bw)
        bw = j->bw;
    if (bw < abs(j->l_ref - j->l_query))
        bw = abs(j->l_ref - j->l_query);
    j->bw_pass = bw;
}

/* ---- after the pass: BQ from the states and posteriors ------------------------------------- */

/* htslib's phred value of a posterior miss, capped as it caps it. */
static inline uint8_t miss_q(double miss)
{
    int k = (int)(-4.343 * log(miss) + .499);
    return (uint8_t)(k > 100 ? 99 : k);
}

static inline int state_ok(const baq_job_t *j, int i, hts_pos_t x, int y)
{
    return (j->state[i] & 3) == 0 && j->state[i] >> 2 == x - j->xb + (i - y);
}

/* Without BAQ_EXTEND: BQ capped by the base quality. bq[] holds the qualities on entry. */
static void bq_capped(baq_job_t *j)
{
    const bam1_t *b = j->b;
    const uint32_t *cigar = bam_get_cigar(b);
    const uint8_t *qual = bam_get_qual(b);
    int lq = b->core.l_qseq, y = 0;
    hts_pos_t x = b->core.pos;
    for (uint32_t k = 0; k < b->core.n_cigar; ++k) {
        int op = bam_cigar_op(cigar[k]), l = bam_cigar_oplen(cigar[k]);
        if (l == 0)
            continue;
        if (op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF) {
            if (l > lq - y)
                l = lq - y;
            for (int i = y; i < y + l; ++i) {
                if (!state_ok(j, i, x, y))
                    j->bq[i] = 0;
                else if (j->bq[i] != 0) { /* min(0, q) needs no q */
                    uint8_t q = miss_q(j->miss[i]);
                    j->bq[i] = j->bq[i] < q ? j->bq[i] : q;
                }
            }
            x += l, y += l;
        } else if (op == BAM_CSOFT_CLIP || op == BAM_CINS) {
            if (l > lq - y)
                l = lq - y;
            y += l;
        } else if (op == BAM_CDEL) {
            x += l;
        }
    }
    for (int i = 0; i < lq; ++i)
        j->bq[i] = qual[i] - j->bq[i] + 64;
}

/*
 * BAQ_EXTEND (samtools mpileup's default): BAQ per aligned block is the lower of the running maxima
 * from either end, and may exceed the base quality. left/right: scratch of l_query.
 */
static void bq_extended(baq_job_t *j, uint8_t *left, uint8_t *right)
{
    const bam1_t *b = j->b;
    const uint32_t *cigar = bam_get_cigar(b);
    const uint8_t *qual = bam_get_qual(b);
    uint8_t *bq = j->bq;
    int lq = b->core.l_qseq, y = 0;
    hts_pos_t x = b->core.pos;
    for (uint32_t k = 0; k < b->core.n_cigar; ++k) {
        int op = bam_cigar_op(cigar[k]), l = bam_cigar_oplen(cigar[k]);
        if (l == 0)
            continue;
        if (op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF) {
            if (l > lq - y)
                l = lq - y;
            for (int i = y; i < y + l; ++i)
                bq[i] = state_ok(j, i, x, y) ? miss_q(j->miss[i]) : 0;
            left[y] = bq[y];
            for (int i = y + 1; i < y + l; ++i)
                left[i] = bq[i] > left[i - 1] ? bq[i] : left[i - 1];
            right[y + l - 1] = bq[y + l - 1];
            for (int i = y + l - 2; i >= y; --i)
                right[i] = bq[i] > right[i + 1] ? bq[i] : right[i + 1];
            for (int i = y; i < y + l; ++i)
                bq[i] = left[i] < right[i] ? left[i] : right[i];
            x += l, y += l;
        } else if (op == BAM_CSOFT_CLIP || op == BAM_CINS) {
            if (l > lq - y)
                l = lq - y;
            y += l;
        } else if (op == BAM_CDEL) {
            x += l;
        }
    }
    for (int i = 0; i < lq; ++i)
        bq[i] = 64 + (qual[i] <= bq[i] ? 0 : qual[i] - bq[i]);
}

void baq_job_finish(baq_job_t *j, int flag, uint8_t *scratch)
{
    bam1_t *b = j->b;
    uint8_t *qual = bam_get_qual(b);
    int lq = b->core.l_qseq;
    memcpy(j->bq, qual, lq); /* bases outside M/=/X keep their quality */
    if (flag & BAQ_EXTEND)
        bq_extended(j, scratch, scratch + lq);
    else
        bq_capped(j);
    uint8_t *tag = j->bq; /* bam_aux_append copies l_qseq + 1 bytes: the text and its NUL */
    tag[lq] = 0;
    if (flag & BAQ_APPLY) {
        for (int i = 0; i < lq; ++i)
            qual[i] -= tag[i] - 64;
        bam_aux_append(b, "ZQ", 'Z', lq + 1, tag);
    } else {
        bam_aux_append(b, "BQ", 'Z', lq + 1, tag);
    }
    j->ret = 0;
}

int baq_job_start(baq_job_t *j, bam1_t *b, int flag)
{
    const bam1_core_t *c = &b->core;
    int system = flag & (0xff << 3);
    j->b = b;
    j->l_query = c->l_qseq;
    j->d = c->l_qseq > 1000 || system > BAQ_ILLUMINA ? 1e-7 : 0.001;
    if ((c->flag & BAM_FUNMAP) || c->l_qseq == 0 || bam_get_qual(b)[0] == (uint8_t)-1)
        return -1;
    int r = realn_tags(b, flag);
    if (r != 1)
        return r;
    if (realn_window(b, j, &j->xe) < 0)
        return -1;
    /* probaln_glocal's own checks: a negative window or a query too long fails */
    if (j->xe - j->xb < 0 || c->l_qseq >= INT_MAX - 2)
        return -4;
    return 1;
}

void baq_job_place(baq_job_t *j, unsigned char *p, const char *ref, int64_t ref_len)
{
    job_place(j, p);
    job_fill(j, ref, ref_len);
}

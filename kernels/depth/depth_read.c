/*
 * depth_read.c -- which reads samtools depth counts, and where each one
 * adds to the depth.
 */
#include "depth.h"

hts_pos_t dp_qlen_used(const bam1_t *b)
{
    const uint32_t *cig = bam_get_cigar(b);
    int n = (int)b->core.n_cigar;
    hts_pos_t len = 0;
    if (b->core.l_qseq > 0) {
        int kl, kr;
        len = b->core.l_qseq;
        for (kl = 0; kl < n && bam_cigar_op(cig[kl]) == BAM_CSOFT_CLIP; kl++)
            len -= bam_cigar_oplen(cig[kl]);
        for (kr = n - 1; kr > kl && bam_cigar_op(cig[kr]) == BAM_CSOFT_CLIP; kr--)
            len -= bam_cigar_oplen(cig[kr]);
        return len;
    }
    for (int k = 0; k < n; k++) {
        int op = bam_cigar_op(cig[k]);
        if (op == BAM_CMATCH || op == BAM_CINS || op == BAM_CEQUAL || op == BAM_CDIFF)
            len += bam_cigar_oplen(cig[k]);
    }
    return len;
}

int dp_read_passes(const dp_opts_t *o, const bam1_t *b)
{
    if (b->core.tid < 0 || (b->core.flag & o->flag) || b->core.qual < o->min_mq)
        return 0;
    return !o->min_len || dp_qlen_used(b) >= o->min_len;
}

/* d[0..len) += 1, eight at a time (gcc -O2 turns the block into vector adds). */
static void add_one(int32_t *d, size_t len)
{
    size_t k = 0;
    for (; k + 8 <= len; k += 8) {
        d[k]++, d[k + 1]++, d[k + 2]++, d[k + 3]++;
        d[k + 4]++, d[k + 5]++, d[k + 6]++, d[k + 7]++;
    }
    for (; k < len; k++)
        d[k]++;
}

/* Add 1 at [beg, end) of input f, within the kept positions [from, top). */
static void add_span(dp_ring_t *r, int f, hts_pos_t beg, hts_pos_t end, hts_pos_t from,
                     hts_pos_t top)
{
    if (beg < from)
        beg = from;
    if (end > top)
        end = top;
    size_t mask = r->cap - 1, n = (size_t)r->n;
    int32_t *c = r->cnt + f;
    while (beg < end) {
        /* runs up to the ring's wrap: one input's counts are then a plain array */
        size_t at = (size_t)beg & mask, run = r->cap - at;
        if ((hts_pos_t)run > end - beg)
            run = (size_t)(end - beg);
        int32_t *d = c + at * n;
        if (n == 1)
            add_one(d, run);
        else
            for (size_t k = 0; k < run; k++)
                d[k * n]++;
        beg += (hts_pos_t)run;
    }
}

/* The same where a base's quality decides: qual[q + k] for position beg + k. */
static void add_span_qual(dp_ring_t *r, int f, hts_pos_t beg, hts_pos_t end, hts_pos_t keep,
                          hts_pos_t top, const uint8_t *qual, hts_pos_t q, hts_pos_t l_qseq,
                          int min_bq)
{
    hts_pos_t from = beg < keep ? keep : beg, to = end > top ? top : end;
    size_t mask = r->cap - 1, n = (size_t)r->n;
    int32_t *c = r->cnt + f;
    for (hts_pos_t p = from; p < to; p++) {
        hts_pos_t s = q + (p - beg);
        c[((size_t)p & mask) * n] += s >= l_qseq || qual[s] >= min_bq;
    }
}

int dp_count_read(dp_ring_t *r, int f, const bam1_t *b, const dp_opts_t *o, hts_pos_t clip,
                  hts_pos_t top, int *bad_op)
{
    const uint32_t *cig = bam_get_cigar(b);
    const uint8_t *qual = bam_get_qual(b);
    hts_pos_t pos = b->core.pos, q = 0, l_qseq = b->core.l_qseq;
    /* printed positions are gone; with -s nothing below the earlier mate's end counts */
    hts_pos_t keep = clip > r->lo ? clip : r->lo;
    for (uint32_t k = 0; k < b->core.n_cigar; k++) {
        int op = bam_cigar_op(cig[k]);
        hts_pos_t len = bam_cigar_oplen(cig[k]);
        switch (op) {
        case BAM_CMATCH:
        case BAM_CEQUAL:
        case BAM_CDIFF:
            if (o->min_bq > 0)
                add_span_qual(r, f, pos, pos + len, keep, top, qual, q, l_qseq, o->min_bq);
            else
                add_span(r, f, pos, pos + len, keep, top);
            pos += len, q += len;
            break;
        case BAM_CDEL:
            /* -J: a deleted base is judged by the quality of the base after it */
            if (o->count_del && (q >= l_qseq || qual[q] >= o->min_bq))
                add_span(r, f, pos, pos + len, keep, top);
            pos += len;
            break;
        case BAM_CREF_SKIP:
            pos += len;
            break;
        case BAM_CINS:
        case BAM_CSOFT_CLIP:
            q += len;
            break;
        case BAM_CHARD_CLIP:
        case BAM_CPAD:
            break;
        default:
            *bad_op = op;
            return -1;
        }
    }
    return 0;
}

/*
 * mp_indel_qual.c -- from alignment scores to calls: each read's best
 * candidate with its indel and sequence qualities, the (at most 4) alleles
 * of the site ordered by summed quality with REF first, and each read's
 * p->aux pointing at its allele. Also the per-read position, mapping-quality
 * and soft-clip statistics behind the indel bias tests.
 *
 * p->aux as bcftools packs it: allele index << 16 | seqQ << 8 | indelQ.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mp_indel.h"

/*
 * x << n as two's complement wraps it (what GCC gives bcftools' signed
 * shifts), without the undefined behaviour of shifting a negative int.
 */
static inline int shl(int x, int n)
{
    return (int)((unsigned)x << n);
}

/*
 * The soft clip that matters for a read at this column (the left one, or the
 * right one when nearer) weighted by nearness, capped at 99; and the read's
 * offset from its clipped start (to the insertion's end when that is nearer
 * its end) as a bin of bca->npos.
 */
static void clip_and_bin(const mp_aux_t *bca, const bam_pileup1_t *p, int *clip_r, int *bin_r)
{
    const bam1_t *b = p->b;
    const uint32_t *cigar = bam_get_cigar(b);
    int sc_len = 0, sc_dist = -1, at_left = 1;
    int epos = p->qpos, slen = b->core.l_qseq;

    for (uint32_t k = 0; k < b->core.n_cigar; k++) {
        int op = bam_cigar_op(cigar[k]), len = bam_cigar_oplen(cigar[k]);
        if (op == BAM_CSOFT_CLIP) {
            slen -= len;
            if (at_left) {
                sc_len += len;
                epos -= sc_len;
                sc_dist = epos;
            } else {
                int rd = b->core.l_qseq - len - p->qpos;
                if (sc_dist < 0 || sc_dist > rd) {
                    sc_dist = rd;
                    sc_len = len;
                }
            }
        } else if (op != BAM_CHARD_CLIP) {
            at_left = 0;
        }
    }
    if (p->indel > 0 && slen - (epos + p->indel) < epos)
        epos += p->indel - 1;

    *bin_r = (double)epos / (slen + 1) * bca->npos;
    if (sc_len) {
        *clip_r = 15.0 * sc_len / (sc_dist + 1);
        if (*clip_r > 99)
            *clip_r = 99;
    } else {
        *clip_r = 0;
    }
}

/*
 * Counts read p into the indel bias histograms (iref_* when it has no indel
 * here, ialt_* when it has): mapQ (capped at 59, scaled by mq_scale =
 * nqual / 60), clip and position bins. Aborts, as bcftools does, on a bin
 * out of range.
 */
void mp_indel_read_stats(mp_aux_t *bca, const bam_pileup1_t *p, double mq_scale)
{
    int imq = p->b->core.qual > 59 ? 59 : p->b->core.qual;
    imq *= mq_scale;
    int clip, bin;
    clip_and_bin(bca, p, &clip, &bin);

    assert(imq >= 0 && imq < bca->nqual);
    assert(bin >= 0 && bin < bca->npos);
    assert(clip >= 0 && clip < 100);
    bca->hist_dirty = 1;
    if (p->indel) {
        mp_hist_add(&bca->ialt_mq, imq);
        mp_hist_add(&bca->ialt_scl, clip);
        mp_hist_add(&bca->ialt_pos, bin);
    } else {
        mp_hist_add(&bca->iref_mq, imq);
        mp_hist_add(&bca->iref_scl, clip);
        mp_hist_add(&bca->iref_pos, bin);
    }
}

/* Sequence quality of a candidate of length l: gap cost, lowered in a homopolymer run. */
static int seq_qual(const mp_aux_t *bca, int l, int l_run)
{
    int q = bca->openQ + bca->extQ * (abs(l) - 1);
    int qh = l_run >= 3 ? (int)(bca->tandemQ * (double)abs(l) / l_run + .499) : 1000;
    return q < qh ? q : qh;
}

/*
 * One read's call from its scores (one per candidate): the best candidate,
 * indelQ from the gap to the runner-up (or to REF when the best is not REF),
 * shrunk by the best's per-base penalty, and seqQ. Returns the packed p->aux
 * value (candidate index, not yet allele index), *best the candidate and
 * *q_sum min(indelQ, seqQ).
 */
static int read_call(const mp_indel_col_t *col, const mp_aux_t *bca, const int *scores, int *best,
                     int *q_sum)
{
    int sc[MP_INDEL_MAX_TYPES], n = col->n_types, t, indelQ, seqQ;
    sc[0] = sc[1] = 0; /* n >= 2 always (REF and a candidate); this tells the compiler */
    /* Scores are distinct once tagged with the index, so any sort gives this order. */
    for (t = 0; t < n; t++)
        sc[t] = shl(scores[t], 6) | t;
    for (t = 1; t < n; t++)
        for (int j = t; j > 0 && sc[j] < sc[j - 1]; j--) {
            int tmp = sc[j];
            sc[j] = sc[j - 1];
            sc[j - 1] = tmp;
        }

    /* Like errmod, this assumes the wrong calls are equally likely: wrong for multi-allelic. */
    if ((sc[0] & 0x3f) == col->ref_type) {
        indelQ = (sc[1] >> 14) - (sc[0] >> 14);
        seqQ = seq_qual(bca, col->types[sc[1] & 0x3f], col->l_run);
    } else {
        for (t = 0; t < n; t++)
            if ((sc[t] & 0x3f) == col->ref_type)
                break;
        indelQ = (sc[t] >> 14) - (sc[0] >> 14);
        seqQ = seq_qual(bca, col->types[sc[0] & 0x3f], col->l_run);
    }
    int penalty = sc[0] >> 6 & 0xff;
    indelQ = penalty > 111 ? 0 : (int)((1. - penalty / 111.) * indelQ + .499);
    if (indelQ > seqQ)
        indelQ = seqQ;
    if (indelQ > 255)
        indelQ = 255;
    if (seqQ > 255)
        seqQ = 255;
    *best = sc[0] & 0x3f;
    *q_sum = indelQ < seqQ ? indelQ : seqQ;
    return (sc[0] & 0x3f) << 16 | shl(seqQ, 8) | indelQ;
}

/*
 * The site's alleles: candidates by summed read quality, highest first,
 * then REF moved to the front; the first 4 go to bca->indel_types (the rest
 * MP_INDEL_NULL) and their inserted bases to bca->inscns. Returns 0, or -1
 * when out of memory.
 */
static int pick_alleles(const mp_indel_col_t *col, mp_aux_t *bca, const char *ins_cons, int *sumq)
{
    int n = col->n_types, t;

    bca->maxins = col->max_ins;
    /* realloc as bcftools calls it: with max_ins 0, glibc frees and gives NULL. */
    char *cns = realloc(bca->inscns, (size_t)bca->maxins * 4);
    if (bca->maxins && !cns)
        return -1;
    bca->inscns = cns;

    for (t = 0; t < n; t++)
        sumq[t] = shl(sumq[t], 6) | t;
    for (t = 1; t < n; t++)
        for (int j = t; j > 0 && sumq[j] > sumq[j - 1]; j--) {
            int tmp = sumq[j];
            sumq[j] = sumq[j - 1];
            sumq[j - 1] = tmp;
        }
    for (t = 0; t < n; t++)
        if ((sumq[t] & 0x3f) == col->ref_type)
            break;
    if (t) {
        int ref = sumq[t];
        for (; t > 0; t--)
            sumq[t] = sumq[t - 1];
        sumq[0] = ref;
    }

    for (t = 0; t < 4; t++)
        bca->indel_types[t] = MP_INDEL_NULL;
    for (t = 0; t < 4 && t < n; t++) {
        bca->indel_types[t] = col->types[sumq[t] & 0x3f];
        if (bca->maxins)
            memcpy(&bca->inscns[t * bca->maxins], &ins_cons[(sumq[t] & 0x3f) * col->max_ins],
                   bca->maxins);
    }
    return 0;
}

/*
 * Calls every read (score: n_types per read, reads in sample order), picks
 * the site's alleles, and leaves in each read's p->aux its allele index
 * (4 when its candidate did not make the top 4, with qualities 0). Also sets
 * bca->maxins, inscns and indel_types. Returns how many reads carry a
 * non-REF allele, or -1 when out of memory.
 */
int mp_indel_assign(const mp_indel_col_t *col, mp_aux_t *bca, const char *ins_cons,
                    const int *score)
{
    int sumq[MP_INDEL_MAX_TYPES], k = 0, n_alt = 0;
    memset(sumq, 0, sizeof(sumq));
    for (int s = 0; s < col->n; s++)
        for (int i = 0; i < col->n_plp[s]; i++, k++) {
            bam_pileup1_t *p = col->plp[s] + i;
            int best, q;
            /* p->aux is 27 bits: a negative seqQ (-o below -e) spills into the index bits
             * there, so the sum goes by the candidate itself. */
            p->aux = read_call(col, bca, &score[k * col->n_types], &best, &q);
            sumq[best] += q;
        }
    if (pick_alleles(col, bca, ins_cons, sumq) < 0)
        return -1;

    for (int s = 0; s < col->n; s++)
        for (int i = 0; i < col->n_plp[s]; i++) {
            bam_pileup1_t *p = col->plp[s] + i;
            int x = col->types[p->aux >> 16 & 0x3f], j;
            for (j = 0; j < 4; j++)
                if (x == bca->indel_types[j])
                    break;
            p->aux = j << 16 | (j == 4 ? 0 : (p->aux & 0xffff));
            if ((p->aux >> 16 & 0x3f) > 0)
                n_alt++;
        }
    return n_alt;
}

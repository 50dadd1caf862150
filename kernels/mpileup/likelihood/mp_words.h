/*
 * mp_words.h -- a read's SNP words: for each base, everything bcftools
 * mpileup's SNP record takes from it, in one 32-bit word. A base's word is
 * the same at every column the base is in, so mp_glf.c works out a read's
 * words once (when it enters the pileup, and again when BAQ or a mate's
 * overlap changes its qualities) instead of at every column.
 *
 * A word's bits:
 *    0-10  errmod's key: quality << 5 | strand << 4 | base (seq_nt16_int's,
 *          or MP_WORD_EQ for '=', which reads as the column's reference)
 *   11-15  distance to the read's nearer end, capped at MP_DIST_CAP
 *   16-23  base quality: lowered to a neighbour's plus --delta-BQ, capped
 *          at --max-BQ
 *   24-31  mapping quality, capped as bcftools caps it (0 only for MAPQ 0)
 * A word of 0: the base is below --min-BQ (a kept base's key has a quality
 * of at least 4, so is never 0).
 */
#ifndef SS_MP_WORDS_H
#define SS_MP_WORDS_H

#include <stdint.h>

#include <htslib/sam.h>

#define MP_DIST_CAP 25 /* distance to the read's end, capped for I16[12..15] */
#define MP_SNP_SEQQ 99 /* the SNP model's cap on a base's quality */
#define MP_WORD_EQ  15 /* an '=' base: no seq_nt16_int value is 15 */

#define MP_WORD_KEY(w)   ((int)((w)&0x7ff))
#define MP_WORD_BASE(w)  ((int)((w)&0xf))
#define MP_WORD_REV(w)   ((int)((w) >> 4 & 1))
#define MP_WORD_DIST(w)  ((int)((w) >> 11 & 0x1f))
#define MP_WORD_BASEQ(w) ((int)((w) >> 16 & 0xff))
#define MP_WORD_MAPQ(w)  ((int)((w) >> 24))

/* What a read's words need: the read, its capped mapping quality and the settings. */
typedef struct {
    const uint8_t *seq, *qual;
    int len, rev, mapQ;
    int delta, min_bq, max_bq; /* --delta-BQ, --min-BQ, --max-BQ */
} mp_word_src_t;

/*
 * The word of base qpos: the definition, and what mp_snp_words fills. A qpos
 * outside the sequence (SEQ '*', which mp_read.c leaves out) has no base to
 * read: 0, as a base below --min-BQ.
 */
static inline uint32_t mp_snp_word(const mp_word_src_t *s, int qpos)
{
    if (qpos < 0 || qpos >= s->len)
        return 0;
    int q = s->qual[qpos];
    int left = qpos > 0 ? s->qual[qpos - 1] + s->delta : q;
    int right = qpos + 1 < s->len ? s->qual[qpos + 1] + s->delta : q;
    q = q < left ? q : left;
    q = q < right ? q : right;
    int bq = q > s->max_bq ? s->max_bq : q;
    int cq = bq < MP_SNP_SEQQ ? bq : MP_SNP_SEQQ;
    cq = cq < s->mapQ ? cq : s->mapQ;
    cq = cq > 63 ? 63 : cq;
    cq = cq < 4 ? 4 : cq; /* so that a MAPQ 0 read still weighs as a BQ 4 base */
    int dist = s->len - 1 - qpos < qpos ? s->len - 1 - qpos : qpos;
    dist = dist > MP_DIST_CAP ? MP_DIST_CAP : dist < 0 ? 0 : dist;
    int nt16 = bam_seqi(s->seq, qpos);
    int base = nt16 ? seq_nt16_int[nt16] : MP_WORD_EQ;
    uint32_t word = (uint32_t)(cq << 5 | s->rev << 4 | base) | (uint32_t)dist << 11 |
                    (uint32_t)(uint8_t)bq << 16 | (uint32_t)s->mapQ << 24;
    return q < s->min_bq ? 0 : word;
}

/* Every base's word into word[0..s->len): 16 bases a step where the CPU allows. */
void mp_snp_words(const mp_word_src_t *s, uint32_t *word);
/* The same, a base at a time (the reference the tests hold the fast path to). */
void mp_snp_words_scalar(const mp_word_src_t *s, uint32_t *word);
/* The same 16 bases a step; 0, or -1 (nothing written) when this CPU or s cannot. */
int mp_snp_words_simd(const mp_word_src_t *s, uint32_t *word);

#endif

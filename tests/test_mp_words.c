/*
 * test_mp_words.c -- unit tests for kernels/mpileup/likelihood/mp_words.c: the SNP
 * words filled 16 bases at a time must equal mp_snp_word's, base by base, on
 * random reads (every length from 1 to past 300, every 4-bit base code,
 * qualities up to 255) and settings (--delta-BQ, --min-BQ, --max-BQ at and
 * past the byte range, mapping qualities 0..60, both strands); a word must
 * hold what the SNP record reads from it; a base outside the read's sequence
 * (SEQ '*') has no word and is not read; and a histogram of the bias tests
 * (mp_likelihood.h) keeps a bin past its last inside its bins.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "../kernels/mpileup/likelihood/mp_likelihood.h"
#include "../kernels/mpileup/likelihood/mp_words.h"
#include "base/ss_exact_fp.h"
#include "ss_testutil.h"

#define N_READS 20000
#define MAX_LEN 320

/* A random read: packed 4-bit codes (seq) and qualities, skewed to the usual range. */
static void random_read(uint8_t *seq, uint8_t *qual, int len, unsigned *seed)
{
    memset(seq, 0, (size_t)(len + 1) / 2);
    for (int i = 0; i < len; i++) {
        int code = rand_r(seed) % 16;
        seq[i >> 1] |= (uint8_t)(code << ((~i & 1) << 2));
        int r = rand_r(seed) % 20;
        qual[i] = (uint8_t)(r == 0 ? 255 : r == 1 ? rand_r(seed) % 256 : rand_r(seed) % 42);
    }
}

static void random_settings(mp_word_src_t *s, unsigned *seed)
{
    static const int deltas[] = {0, 1, 30, 200, 255, 256, 1000};
    static const int mins[] = {0, 1, 13, 40, 255, -5};
    static const int maxs[] = {60, 0, 4, 40, 255, 300, 100000};
    s->delta = deltas[rand_r(seed) % 7];
    s->min_bq = mins[rand_r(seed) % 6];
    s->max_bq = maxs[rand_r(seed) % 7];
    s->mapQ = rand_r(seed) % 61;
    s->rev = rand_r(seed) & 1;
}

static void simd_equals_scalar(void)
{
    unsigned seed = 4242u;
    static uint8_t seq[MAX_LEN / 2 + 1], qual[MAX_LEN];
    static uint32_t want[MAX_LEN], got[MAX_LEN];
    int mismatches = 0, simd_runs = 0;
    for (int r = 0; r < N_READS; r++) {
        mp_word_src_t s;
        s.len = 1 + r % MAX_LEN;
        random_read(seq, qual, s.len, &seed);
        s.seq = seq, s.qual = qual;
        random_settings(&s, &seed);
        mp_snp_words_scalar(&s, want);
        memset(got, 0xa5, sizeof(got));
        if (mp_snp_words_simd(&s, got) == 0)
            simd_runs++;
        else
            mp_snp_words_scalar(&s, got);
        for (int i = 0; i < s.len; i++)
            if (got[i] != want[i] && mismatches++ < 3)
                fprintf(stderr,
                        "\nread %d (len %d, delta %d, min %d, max %d, mapQ %d) base %d: "
                        "got %08x, want %08x\n",
                        r, s.len, s.delta, s.min_bq, s.max_bq, s.mapQ, i, got[i], want[i]);
        mp_snp_words(&s, got);
        if (memcmp(got, want, (size_t)s.len * sizeof(*got)) != 0 && mismatches++ < 3)
            fprintf(stderr, "\nread %d: mp_snp_words differs\n", r);
    }
    CU_ASSERT_EQUAL(mismatches, 0);
#if defined(__x86_64__)
    CU_ASSERT(simd_runs > N_READS / 2); /* the fast path ran where it should */
#endif
}

/* A hand-made read: each field where the SNP record expects it. */
static void word_fields(void)
{
    /* bases A C = T, qualities 30 10 50 40 */
    uint8_t seq[2] = {0x1 << 4 | 0x2, 0x0 << 4 | 0x8}, qual[4] = {30, 10, 50, 40};
    mp_word_src_t s = {seq, qual, 4, 1, 20, 5, 13, 45};
    uint32_t w[4];
    mp_snp_words_scalar(&s, w);
    /* base 0: 30, its neighbour 10 + 5 = 15 lowers it to 15; key quality min(15, 20) */
    CU_ASSERT_EQUAL(MP_WORD_BASEQ(w[0]), 15);
    CU_ASSERT_EQUAL(MP_WORD_KEY(w[0]), 15 << 5 | 1 << 4 | 0);
    CU_ASSERT_EQUAL(MP_WORD_DIST(w[0]), 0);
    CU_ASSERT_EQUAL(MP_WORD_MAPQ(w[0]), 20);
    CU_ASSERT_EQUAL(MP_WORD_REV(w[0]), 1);
    /* base 1: 10 is below --min-BQ 13 */
    CU_ASSERT_EQUAL(w[1], 0);
    /* base 2 ('='): 50 lowered to 10 + 5; distance 1 from the right end */
    CU_ASSERT_EQUAL(MP_WORD_BASE(w[2]), MP_WORD_EQ);
    CU_ASSERT_EQUAL(MP_WORD_BASEQ(w[2]), 15);
    CU_ASSERT_EQUAL(MP_WORD_DIST(w[2]), 1);
    /* base 3 (T): 40, under its neighbour's 50 + 5 and --max-BQ 45; the key's quality
     * is capped by the mapping quality, 20 */
    CU_ASSERT_EQUAL(MP_WORD_BASE(w[3]), 3);
    CU_ASSERT_EQUAL(MP_WORD_BASEQ(w[3]), 40);
    CU_ASSERT_EQUAL(MP_WORD_KEY(w[3]) >> 5, 20);
    /* MAPQ 0: the key's quality floors at 4 */
    s.mapQ = 0;
    mp_snp_words_scalar(&s, w);
    CU_ASSERT_EQUAL(MP_WORD_KEY(w[3]) >> 5, 4);
    CU_ASSERT_EQUAL(MP_WORD_MAPQ(w[3]), 0);
}

/* SEQ '*' (no bases) or a position past the end: word 0, nothing read past the sequence. */
static void outside_sequence(void)
{
    uint8_t *seq = malloc(1), *qual = malloc(1);
    if (!seq || !qual) {
        CU_FAIL("out of memory");
        free(seq);
        free(qual);
        return;
    }
    seq[0] = 0x1 << 4 | 0x2;
    qual[0] = 30;
    /* the buffers hold one base; the read says it has none (SEQ '*'), then one */
    mp_word_src_t s = {seq, qual, 0, 0, 60, 30, 0, 60};
    CU_ASSERT_EQUAL(mp_snp_word(&s, 0), 0);
    CU_ASSERT_EQUAL(mp_snp_word(&s, 120), 0);
    s.len = 1;
    CU_ASSERT_NOT_EQUAL(mp_snp_word(&s, 0), 0);
    CU_ASSERT_EQUAL(mp_snp_word(&s, 1), 0);
    CU_ASSERT_EQUAL(mp_snp_word(&s, -1), 0);
    free(seq);
    free(qual);
}

/* A read position past the bins (a read without bases scales to one) stays in them. */
static void hist_bounds(void)
{
    mp_hist_t *h = calloc(1, sizeof(*h) + sizeof(int));
    if (!h) {
        CU_FAIL("out of memory");
        return;
    }
    int *after = (int *)(h + 1);
    mp_hist_add(h, MP_HIST_BINS - 1);
    mp_hist_add(h, MP_HIST_BINS);
    mp_hist_add(h, 15000);
    mp_hist_add(h, -3);
    CU_ASSERT_EQUAL(h->bin[MP_HIST_BINS - 1], 3);
    CU_ASSERT_EQUAL(h->bin[0], 1);
    CU_ASSERT_EQUAL(*after, 0);
    CU_ASSERT_EQUAL(h->used[0], 1);
    CU_ASSERT_EQUAL(h->used[1], (uint64_t)1 << ((MP_HIST_BINS - 1) & 63));
    free(h);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("mp_words", NULL, NULL);
    CU_add_test(s, "16 bases a step equal a base at a time", simd_equals_scalar);
    CU_add_test(s, "a word's fields", word_fields);
    CU_add_test(s, "a base outside the sequence", outside_sequence);
    CU_add_test(s, "a histogram bin past the last", hist_bounds);
    return ss_test_run();
}

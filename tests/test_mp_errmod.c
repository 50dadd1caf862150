/*
 * test_mp_errmod.c -- unit tests for kernels/mpileup/likelihood/mp_errmod.c: its tables
 * and its likelihoods must be htslib 1.16's errmod bit for bit, since bcftools
 * mpileup prints those floats.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <htslib/hts.h>

#include "../kernels/mpileup/likelihood/mp_errmod.h"
#include "ss_testutil.h"

#define DEPCORR (1. - 0.83) /* what bcftools mpileup passes */
#define N_GT    5           /* alleles: mpileup's m */

/*
 * htslib 1.16's private errmod_t (errmod.c), to read its tables. This test
 * pins that version's layout, as the kernel pins its output.
 */
struct hts_errmod_1_16 {
    double depcorr;
    double *fk, *beta, *lhet;
};

static mp_errmod_t *ours;
static errmod_t *theirs;

static int suite_init(void)
{
    ours = mp_errmod_init(DEPCORR);
    theirs = errmod_init(DEPCORR);
    return ours && theirs ? 0 : -1;
}

static int suite_clean(void)
{
    mp_errmod_destroy(ours);
    errmod_destroy(theirs);
    return 0;
}

/* xorshift64: a fixed stream, so a failure repeats. */
static uint64_t rnd_state = 88172645463325252ULL;
static unsigned rnd(unsigned bound)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (unsigned)(rnd_state % bound);
}

static void test_fk_and_lhet(void)
{
    const struct hts_errmod_1_16 *h = (const void *)theirs;
    SS_EQ(memcmp(ours->fk, h->fk, (MP_ERRMOD_MAX_DEPTH + 1) * sizeof(double)), 0);
    SS_EQ(memcmp(ours->lhet, h->lhet, 256 * 256 * sizeof(double)), 0);
}

/* Every beta entry mpileup can read (q >= 4, k < n), all depths. */
static void test_beta(void)
{
    const struct hts_errmod_1_16 *h = (const void *)theirs;
    long bad = 0;
    for (int n = 1; n <= MP_ERRMOD_MAX_DEPTH; n++)
        for (int q = MP_ERRMOD_MIN_QUAL; q < MP_ERRMOD_N_QUAL; q++) {
            const double *row = mp_errmod_beta_row(ours, n, q);
            const double *want = h->beta + (q << 16 | n << 8);
            if (memcmp(row, want, (size_t)n * sizeof(double)) != 0) {
                if (bad++ == 0)
                    fprintf(stderr, "\nbeta differs at n %d q %d\n", n, q);
            }
        }
    SS_EQ(bad, 0);
}

/* One call of each on the same bases; ours must not reorder its input. */
static int same_likelihoods(int n, const uint16_t *bases)
{
    uint16_t copy[MP_ERRMOD_MAX_DEPTH], sorted[MP_ERRMOD_MAX_DEPTH];
    memcpy(copy, bases, n * sizeof(uint16_t));
    memcpy(sorted, bases, n * sizeof(uint16_t));
    float got[N_GT * N_GT], want[N_GT * N_GT];
    memset(got, 0xff, sizeof(got));
    int rc = mp_errmod_cal(ours, n, N_GT, copy, got);
    errmod_cal(theirs, n, N_GT, sorted, want);
    int same = rc == 0 && memcmp(got, want, sizeof(got)) == 0 &&
               memcmp(copy, bases, n * sizeof(uint16_t)) == 0;
    if (!same) {
        fprintf(stderr, "\nn %d rc %d:", n, rc);
        for (int i = 0; i < N_GT * N_GT; i++)
            if (memcmp(&got[i], &want[i], sizeof(float)))
                fprintf(stderr, " [%d] %.9g vs %.9g", i, got[i], want[i]);
    }
    return same;
}

/* A base as mpileup packs it: quality (any 6 bits), strand, base 0..n_base-1. */
static uint16_t random_base(int n_base, int min_q, int max_q)
{
    int q = min_q + (int)rnd((unsigned)(max_q - min_q + 1));
    return (uint16_t)(q << 5 | rnd(2) << 4 | rnd((unsigned)n_base));
}

static int random_case(int n, int n_base, int min_q, int max_q)
{
    uint16_t bases[MP_ERRMOD_MAX_DEPTH];
    for (int i = 0; i < n; i++)
        bases[i] = random_base(n_base, min_q, max_q);
    return same_likelihoods(n, bases);
}

static void test_edges(void)
{
    static const int depths[] = {0, 1, 2, 3, 254, 255};
    long bad = 0;
    for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++)
        for (int rep = 0; rep < 200; rep++)
            bad += !random_case(depths[d], N_GT, 0, 63);
    SS_EQ(bad, 0);
}

/* All bases one allele (one strand, or both), at every depth. */
static void test_one_base(void)
{
    long bad = 0;
    for (int n = 1; n <= MP_ERRMOD_MAX_DEPTH; n++)
        for (int base = 0; base < N_GT; base++) {
            uint16_t bases[MP_ERRMOD_MAX_DEPTH];
            for (int i = 0; i < n; i++)
                bases[i] = (uint16_t)(30 << 5 | (i & 1) << 4 | base);
            bad += !same_likelihoods(n, bases);
            for (int i = 0; i < n; i++)
                bases[i] = (uint16_t)(random_base(1, 0, 63) | base);
            bad += !same_likelihoods(n, bases);
        }
    SS_EQ(bad, 0);
}

/* Many random sites: realistic and wide qualities, 2..5 alleles, and 4-bit bases beyond m. */
static void test_random(void)
{
    long bad = 0;
    for (int rep = 0; rep < 20000; rep++) {
        int n = (int)rnd(rep % 4 == 0 ? 256 : 64);
        int n_base = rep % 7 == 0 ? 16 : 2 + (int)rnd(4);
        int min_q = rep % 3 == 0 ? 0 : 20;
        bad += !random_case(n, n_base, min_q, rep % 5 == 0 ? 40 : 63);
    }
    SS_EQ(bad, 0);
}

/* Full 11-bit keys (strand and base bits overlapping as indel alleles up to 63 make them). */
static void test_any_key(void)
{
    long bad = 0;
    for (int rep = 0; rep < 5000; rep++) {
        uint16_t bases[MP_ERRMOD_MAX_DEPTH];
        int n = (int)rnd(MP_ERRMOD_MAX_DEPTH + 1);
        for (int i = 0; i < n; i++)
            bases[i] = (uint16_t)rnd(MP_ERRMOD_N_KEYS);
        bad += !same_likelihoods(n, bases);
    }
    SS_EQ(bad, 0);
}

static void test_rejects(void)
{
    uint16_t bases[2] = {30 << 5, MP_ERRMOD_N_KEYS};
    float q[N_GT * N_GT];
    SS_EQ(mp_errmod_cal(ours, 2, N_GT, bases, q), -1);
    SS_EQ(q[0], 0);
    SS_EQ(mp_errmod_cal(ours, MP_ERRMOD_MAX_DEPTH + 1, N_GT, bases, q), -1);
    /* the rejected call left no counts behind */
    SS_EQ(same_likelihoods(1, bases), 1);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("mp_errmod", suite_init, suite_clean);
    CU_add_test(s, "fk and lhet tables", test_fk_and_lhet);
    CU_add_test(s, "beta table", test_beta);
    CU_add_test(s, "depths 0, 1, 255", test_edges);
    CU_add_test(s, "one allele", test_one_base);
    CU_add_test(s, "random sites", test_random);
    CU_add_test(s, "any 11-bit key", test_any_key);
    CU_add_test(s, "bad input", test_rejects);
    return ss_test_run();
}

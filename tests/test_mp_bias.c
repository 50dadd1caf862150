/*
 * test_mp_bias.c -- unit tests for kernels/mpileup/likelihood/mp_bias.c: the bias tests
 * over a histogram's used bins (mp_mwu_hist) must give the same doubles as
 * bcftools' loop over every bin (mp_mwu_bias), and a histogram's marks must
 * name exactly the bins that are not 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "../kernels/mpileup/likelihood/mp_bias.h"
#include "ss_testutil.h"

#define N_CASES 3000

/* A histogram of n bins with about fill reads in a few bins (sparse) or many (dense). */
static void random_hist(mp_hist_t *h, int n, int fill, unsigned *seed)
{
    memset(h, 0, sizeof(*h));
    for (int k = 0; k < fill; k++)
        mp_hist_add(h, rand_r(seed) % n);
}

/* Whether two doubles are the same bits (HUGE_VAL included). */
static int same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof(double)) == 0;
}

/* Every variant of the test, on random pairs of histograms of n bins. */
static void same_as_every_bin(int n)
{
    unsigned seed = 12345u + (unsigned)n;
    int mismatches = 0;
    for (int i = 0; i < N_CASES; i++) {
        mp_hist_t a, b;
        /* from empty to past 2^16 reads, where bcftools' int counts wrap */
        static const int fills[] = {0, 1, 2, 5, 30, 300, 70000};
        random_hist(&a, n, fills[rand_r(&seed) % 7], &seed);
        random_hist(&b, n, fills[rand_r(&seed) % 7], &seed);
        for (int left_only = 0; left_only < 2; left_only++)
            for (int do_z = 0; do_z < 2; do_z++) {
                double got = mp_mwu_hist(&a, &b, left_only, do_z);
                double want = mp_mwu_bias(a.bin, b.bin, n, left_only, do_z);
                if (!same_double(got, want) && mismatches++ < 3)
                    fprintf(stderr, "\ncase %d (n %d, left %d, z %d): got %.17g, want %.17g\n", i,
                            n, left_only, do_z, got, want);
            }
    }
    SS_EQ(mismatches, 0);
}

static void test_mwu_quality_bins(void)
{
    same_as_every_bin(60);
}

static void test_mwu_position_bins(void)
{
    same_as_every_bin(MP_HIST_BINS);
}

/* The marks are the bins that are not 0, across both words. */
static void test_hist_marks(void)
{
    mp_hist_t h;
    memset(&h, 0, sizeof(h));
    int bins[] = {0, 63, 64, 99, 63};
    for (size_t k = 0; k < sizeof(bins) / sizeof(bins[0]); k++)
        mp_hist_add(&h, bins[k]);
    for (int i = 0; i < MP_HIST_BINS; i++) {
        int marked = (h.used[i >> 6] >> (i & 63)) & 1;
        SS_EQ(marked, h.bin[i] != 0);
    }
    SS_EQ(h.bin[63], 2);
}

/* VDB needs two ALT reads; one read can sit anywhere. */
static void test_vdb_one_read(void)
{
    mp_hist_t h;
    memset(&h, 0, sizeof(h));
    mp_hist_add(&h, 40);
    CU_ASSERT(mp_vdb(&h) == HUGE_VAL);
    mp_hist_add(&h, 70);
    CU_ASSERT(mp_vdb(&h) >= 0 && mp_vdb(&h) <= 1);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("mp_bias", NULL, NULL);
    CU_add_test(s, "MWU over used bins = every bin (60)", test_mwu_quality_bins);
    CU_add_test(s, "MWU over used bins = every bin (100)", test_mwu_position_bins);
    CU_add_test(s, "histogram marks", test_hist_marks);
    CU_add_test(s, "VDB needs two reads", test_vdb_one_read);
    return ss_test_run();
}

/*
 * test_mp_rng.c -- unit tests for kernels/mpileup/likelihood/mp_rng.c: the stream must be
 * libc's drand48 bit for bit (bcftools mpileup downsamples with it), and a jump
 * must land where the same number of single draws would.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "../kernels/mpileup/likelihood/mp_rng.h"
#include "ss_testutil.h"

#define N_DRAWS 1000000

/* The first N_DRAWS numbers after srand48(seed) and mp_rng_seed(seed) match bit for bit. */
static void same_as_libc(long seed)
{
    mp_rng_t r;
    mp_rng_seed(&r, seed);
    srand48(seed);
    long mismatch = -1;
    double got = 0, want = 0;
    for (long i = 0; i < N_DRAWS && mismatch < 0; i++) {
        got = mp_rng_next(&r);
        want = drand48();
        if (memcmp(&got, &want, sizeof(double)) != 0)
            mismatch = i;
    }
    if (mismatch >= 0)
        fprintf(stderr, "\nseed %ld, draw %ld: got %.17g, expected %.17g\n", seed, mismatch, got,
                want);
    SS_EQ(mismatch, -1);
    SS_CMP_U(r.draws, ==, mismatch < 0 ? N_DRAWS : mismatch + 1);
}

static void test_seed_0(void)
{
    same_as_libc(0);
}

static void test_seed_1234(void)
{
    same_as_libc(1234);
}

/* srand48 keeps the seed's low 32 bits only. */
static void test_seed_truncated(void)
{
    mp_rng_t a, b;
    mp_rng_seed(&a, (long)0x123456789ALL);
    mp_rng_seed(&b, (long)0x3456789ALL);
    SS_CMP_U(a.x, ==, b.x);
    srand48((long)0x123456789ALL);
    double want = drand48();
    double got = mp_rng_next(&a);
    SS_EQ(memcmp(&got, &want, sizeof(double)), 0);
}

/* jump(n) then one draw equals the (n+1)-th of single draws, for n across bit patterns. */
static void test_jump(void)
{
    static const uint64_t ns[] = {0, 1, 2, 3, 7, 8, 255, 256, 1000, 4097, 65535, 123457, 999999};
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        mp_rng_t seq, jumped;
        mp_rng_seed(&seq, 1234);
        mp_rng_seed(&jumped, 1234);
        double want = 0;
        for (uint64_t i = 0; i <= ns[k]; i++)
            want = mp_rng_next(&seq);
        mp_rng_jump(&jumped, ns[k]);
        SS_CMP_U(jumped.draws, ==, 0);
        double got = mp_rng_next(&jumped);
        if (memcmp(&got, &want, sizeof(double)) != 0)
            fprintf(stderr, "\njump %llu: got %.17g, expected %.17g\n", (unsigned long long)ns[k],
                    got, want);
        SS_EQ(memcmp(&got, &want, sizeof(double)), 0);
        SS_CMP_U(jumped.x, ==, seq.x);
    }
}

/* A jump of 2^40 draws equals two jumps of 2^39 (the large-exponent path). */
static void test_jump_composes(void)
{
    mp_rng_t a, b;
    mp_rng_seed(&a, 0);
    mp_rng_seed(&b, 0);
    mp_rng_jump(&a, (uint64_t)1 << 40);
    mp_rng_jump(&b, (uint64_t)1 << 39);
    mp_rng_jump(&b, (uint64_t)1 << 39);
    SS_CMP_U(a.x, ==, b.x);
    /* the period is 2^48: a full turn comes back */
    mp_rng_seed(&a, 7);
    uint64_t x0 = a.x;
    mp_rng_jump(&a, (uint64_t)1 << 48);
    SS_CMP_U(a.x, ==, x0);
}

/* The shuffle swaps as ks_shuffle does with drand48. */
static void test_shuffle(void)
{
    enum { N = 300 };
    uint16_t got[N], want[N];
    for (int i = 0; i < N; i++)
        got[i] = want[i] = (uint16_t)(i * 7 + 3);
    mp_rng_t r;
    mp_rng_seed(&r, 0);
    mp_rng_shuffle_u16(&r, N, got);
    srand48(0);
    for (int i = N; i > 1; --i) {
        int j = (int)(drand48() * i);
        uint16_t t = want[j];
        want[j] = want[i - 1];
        want[i - 1] = t;
    }
    SS_EQ(memcmp(got, want, sizeof(got)), 0);
    SS_CMP_U(r.draws, ==, N - 1);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("mp_rng", NULL, NULL);
    CU_add_test(s, "srand48(0) stream", test_seed_0);
    CU_add_test(s, "srand48(1234) stream", test_seed_1234);
    CU_add_test(s, "seed truncated to 32 bits", test_seed_truncated);
    CU_add_test(s, "jump then next", test_jump);
    CU_add_test(s, "jumps compose", test_jump_composes);
    CU_add_test(s, "shuffle order", test_shuffle);
    return ss_test_run();
}

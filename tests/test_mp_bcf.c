/*
 * test_mp_bcf.c -- unit tests for kernels/mpileup/likelihood/mp_bcf.h: each typed value
 * must be the bytes htslib's own encoders (bcf_enc_vint, bcf_enc_vfloat,
 * bcf_enc_vchar, bcf_enc_size) write, since mpileup's records must be
 * bcftools' byte for byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <htslib/kstring.h>
#include <htslib/vcf.h>

#include "../kernels/mpileup/likelihood/mp_bcf.h"
#include "ss_testutil.h"

/* xorshift64: a fixed stream, so a failure repeats. */
static uint64_t rnd_state = 0x9E3779B97F4A7C15ULL;
static uint32_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (uint32_t)rnd_state;
}

/* Both strings' bytes are equal; prints where they part on failure. */
static int same_bytes(const kstring_t *got, const kstring_t *want, const char *what, int n)
{
    if (got->l == want->l && memcmp(got->s, want->s, got->l) == 0)
        return 1;
    size_t i = 0;
    while (i < got->l && i < want->l && got->s[i] == want->s[i])
        i++;
    fprintf(stderr, "\n%s n=%d: %zu vs %zu bytes, first difference at %zu\n", what, n, got->l,
            want->l, i);
    return 0;
}

/* A value near the edges of the integer types, or missing / vector-end. */
static int32_t edge_int(void)
{
    static const int32_t edges[] = {0,      1,     -1,    127,    128,          -120,
                                    -121,   32767, 32768, -32760, -32761,       INT32_MAX,
                                    -32767, -127,  -128,  255,    INT32_MIN + 8};
    uint32_t r = rnd();
    switch (r % 4) {
    case 0:
        return edges[(r >> 2) % (sizeof(edges) / sizeof(edges[0]))];
    case 1:
        return (r >> 2) % 8 == 0 ? bcf_int32_missing : bcf_int32_vector_end;
    case 2:
        return (int32_t)((r >> 2) % 200) - 100;
    default:
        return (int32_t)rnd();
    }
}

static int ints_case(int n, int per, int spread)
{
    int32_t a[300];
    for (int i = 0; i < n; i++)
        a[i] = spread ? edge_int() : (int32_t)(rnd() % 60);
    kstring_t got = KS_INITIALIZE, want = KS_INITIALIZE;
    int ok = mp_bcf_reserve(&got, MP_BCF_ROOM(n)) == 0;
    mp_bcf_ints(&got, a, n, per);
    bcf_enc_vint(&want, n, a, per);
    ok = ok && same_bytes(&got, &want, "ints", n);
    free(got.s);
    free(want.s);
    return ok;
}

/* Integer vectors of every length to 300 (descriptor sizes past 15 and 127), INFO and FORMAT. */
static void test_ints(void)
{
    long bad = 0;
    for (int n = 0; n <= 300; n++)
        for (int rep = 0; rep < 20; rep++) {
            bad += !ints_case(n, -1, rep % 2);
            if (n > 0 && n % 3 == 0)
                bad += !ints_case(n, n / 3, rep % 2); /* 3 samples */
        }
    SS_EQ(bad, 0);
}

/* A descriptor count past 32767 takes an int32 of its own. */
static void test_large_size(void)
{
    int32_t *a = calloc(40000, sizeof(*a));
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    kstring_t got = KS_INITIALIZE, want = KS_INITIALIZE;
    SS_EQ(mp_bcf_reserve(&got, MP_BCF_ROOM(40000)), 0);
    mp_bcf_ints(&got, a, 40000, -1);
    bcf_enc_vint(&want, 40000, a, -1);
    SS_EQ(same_bytes(&got, &want, "ints", 40000), 1);
    free(got.s);
    free(want.s);
    free(a);
}

static void test_floats(void)
{
    long bad = 0;
    for (int n = 0; n <= 40; n++) {
        float v[40];
        for (int i = 0; i < n; i++) {
            uint32_t bits = rnd();
            memcpy(&v[i], &bits, 4); /* any bit pattern, NaNs and missing too */
        }
        kstring_t got = KS_INITIALIZE, want = KS_INITIALIZE;
        mp_bcf_reserve(&got, MP_BCF_ROOM(n));
        mp_bcf_floats(&got, v, n, -1);
        bcf_enc_vfloat(&want, n, v);
        bad += !same_bytes(&got, &want, "floats", n);
        free(got.s);
        free(want.s);
    }
    SS_EQ(bad, 0);
}

static void test_chars_and_flag(void)
{
    static const char text[] = "ACGTACGTACGTACGTACGTACGTACGTACGT<*>";
    long bad = 0;
    for (int n = 0; n < (int)sizeof(text); n++) {
        kstring_t got = KS_INITIALIZE, want = KS_INITIALIZE;
        mp_bcf_reserve(&got, MP_BCF_ROOM(n));
        mp_bcf_chars(&got, text, n);
        bcf_enc_vchar(&want, n, text);
        bad += !same_bytes(&got, &want, "chars", n);
        free(got.s);
        free(want.s);
    }
    kstring_t got = KS_INITIALIZE, want = KS_INITIALIZE;
    mp_bcf_reserve(&got, MP_BCF_ROOM(0));
    mp_bcf_size(&got, 0, BCF_BT_NULL);
    bcf_enc_size(&want, 0, BCF_BT_NULL);
    bad += !same_bytes(&got, &want, "flag", 0);
    free(got.s);
    free(want.s);
    SS_EQ(bad, 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("mp_bcf", NULL, NULL);
    CU_add_test(s, "integer vectors", test_ints);
    CU_add_test(s, "count past 32767", test_large_size);
    CU_add_test(s, "floats", test_floats);
    CU_add_test(s, "strings and flags", test_chars_and_flag);
    return ss_test_run();
}

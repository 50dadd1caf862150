/*
 * test_mosdepth.c -- the pure parts of depth --mosdepth: mosdepth 0.3.3's
 * --quantize syntax and bins, its median, and its number format.
 * tests/integration/depth_vs_mosdepth.sh compares whole runs with mosdepth.
 */
#include "../kernels/depth/mosdepth.h"
#include "ss_testutil.h"

static void check_quants(const char *arg, int n, const int64_t *want)
{
    int64_t *q = NULL;
    int got_n = 0;
    SS_EQ(mos_quantize_parse(arg, &q, &got_n), 0);
    SS_EQ(got_n, n);
    for (int i = 0; i < n && i < got_n; i++)
        SS_EQ(q[i], want[i]);
    free(q);
}

static void test_quantize_syntax(void)
{
    check_quants("0:1:10:", 4, (int64_t[]){0, 1, 10, INT64_MAX});
    check_quants(":5", 2, (int64_t[]){0, 5});
    check_quants("5", 3, (int64_t[]){0, 5, INT64_MAX});
    check_quants("20:1:5", 3, (int64_t[]){1, 5, 20}); /* sorted */
    check_quants(":", 2, (int64_t[]){0, INT64_MAX});
    int64_t *q = NULL;
    int n;
    CU_ASSERT(mos_quantize_parse("1::5", &q, &n) < 0);
    free(q);
    q = NULL;
    CU_ASSERT(mos_quantize_parse("a:b", &q, &n) < 0);
    free(q);
}

static void test_quant_bin(void)
{
    int64_t q[4] = {1, 5, 5, 20};
    SS_EQ(mos_quant_bin(q, 4, 0), -1); /* below the first bound */
    SS_EQ(mos_quant_bin(q, 4, 1), 0);
    SS_EQ(mos_quant_bin(q, 4, 4), 0);
    SS_EQ(mos_quant_bin(q, 4, 5), 1); /* the first equal bound */
    SS_EQ(mos_quant_bin(q, 4, 19), 2);
    SS_EQ(mos_quant_bin(q, 4, 20), 3); /* the last bound: past every label */
    SS_EQ(mos_quant_bin(q, 4, 21), -1);
}

static void test_median(void)
{
    static uint32_t c[MOS_MEDIAN_BINS];
    memset(c, 0, sizeof(c));
    SS_EQ(mos_median(c, 0), 0);
    for (int i = 0; i <= 10; i++)
        c[i]++;
    SS_EQ(mos_median(c, 11), 5);
    c[6] += 4;
    SS_EQ(mos_median(c, 15), 6);
}

static void test_float_format(void)
{
    kstring_t s = KS_INITIALIZE;
    mos_put_float(&s, 23.4567, 2);
    kputc(' ', &s);
    mos_put_float(&s, 23.4567, 0); /* Nim keeps the point */
    kputc(' ', &s);
    mos_put_float(&s, 0.125, 2);
    CU_ASSERT_STRING_EQUAL(s.s, "23.46 23. 0.12");
    free(s.s);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("mosdepth", NULL, NULL);
    if (!s || !CU_add_test(s, "quantize_syntax", test_quantize_syntax) ||
        !CU_add_test(s, "quant_bin", test_quant_bin) || !CU_add_test(s, "median", test_median) ||
        !CU_add_test(s, "float_format", test_float_format))
        return 1;
    return ss_test_run();
}

/*
 * mp_bias.c -- the bias statistics bcftools mpileup 1.16 writes as INFO tags:
 * VDB (variant distance bias), SGB (segregation), and the Mann-Whitney U
 * tests (RPB, MQB, BQB, MQSB, SCB, NMBZ; Z-scores by default, probabilities
 * with -U).
 *
 * The values must print as bcftools prints them, so every expression keeps
 * bcftools' operand types and order: float where it accumulates in float,
 * int products where it multiplies ints (wrapping as x86-64 does when they
 * overflow), the same libm and htslib kfunc calls.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/kfunc.h>

#include "base/ss_exact_fp.h"
#include "mp_bias.h"

/* VDB's model was fitted on 100 bp reads: positions come in 100 bins. */
#define VDB_READ_LEN 100

/*
 * VDB's fitted parameters: at a depth of (at least) dp variant reads, the
 * mean distance from the mean position follows 0.5 * erfc(-(d - shift) *
 * scale). Stored as float from double literals (rounded twice, as bcftools'
 * table is), so no 'f' suffix.
 */
typedef struct {
    float dp, scale, shift;
} vdb_fit_t;

static const vdb_fit_t vdb_fit[] = {
    {3, 0.079, 18},   {4, 0.09, 19.8},  {5, 0.1, 20.5},    {6, 0.11, 21.5},  {7, 0.125, 21.6},
    {8, 0.135, 22},   {9, 0.14, 22.2},  {10, 0.153, 22.3}, {15, 0.19, 22.8}, {20, 0.22, 23.2},
    {30, 0.26, 23.4}, {40, 0.29, 23.5}, {50, 0.35, 23.65}, {100, 0.5, 23.7}, {200, 0.7, 23.7},
};
#define N_VDB_FIT ((int)(sizeof(vdb_fit) / sizeof(vdb_fit[0])))

/* Scale and shift for dp reads: the row at dp, halfway between rows, or the last row. */
static void vdb_params(int dp, float *scale, float *shift)
{
    int i = N_VDB_FIT;
    if (dp < 200)
        for (i = 0; i < N_VDB_FIT; i++)
            if (vdb_fit[i].dp >= dp)
                break;
    if (i == N_VDB_FIT) {
        *scale = vdb_fit[N_VDB_FIT - 1].scale;
        *shift = vdb_fit[N_VDB_FIT - 1].shift;
    } else if (i > 0 && vdb_fit[i].dp != dp) {
        *scale = (vdb_fit[i - 1].scale + vdb_fit[i].scale) * 0.5;
        *shift = (vdb_fit[i - 1].shift + vdb_fit[i].shift) * 0.5;
    } else {
        *scale = vdb_fit[i].scale;
        *shift = vdb_fit[i].shift;
    }
}

/*
 * The bins of h that are not 0, ascending, into bins; returns how many.
 * bcftools' loops visit every bin, but an empty bin adds +0.0 to sums that
 * are never -0.0, which leaves them as they are.
 */
static int used_bins(const mp_hist_t *h, int *bins)
{
    int n = 0;
    for (int w = 0; w < 2; w++)
        for (uint64_t used = h->used[w]; used; used &= used - 1)
            bins[n++] = w << 6 | __builtin_ctzll(used);
    return n;
}

double mp_vdb(const mp_hist_t *h)
{
    const int *pos = h->bin;
    int bins[MP_HIST_BINS], n = used_bins(h, bins), dp = 0;
    float mean_pos = 0, mean_diff = 0;
    for (int k = 0; k < n; k++) {
        dp += pos[bins[k]];
        mean_pos += pos[bins[k]] * bins[k];
    }
    if (dp < 2)
        return HUGE_VAL; /* one read can sit anywhere */
    mean_pos /= dp;
    for (int k = 0; k < n; k++)
        mean_diff += pos[bins[k]] * fabs(bins[k] - mean_pos); /* double product, float sum */
    mean_diff /= dp;
    int ipos = mean_diff;
    if (dp == 2) /* exact for two reads; the int division is bcftools' */
        return (2 * VDB_READ_LEN - 2 * (ipos + 1) - 1) * (ipos + 1) / (VDB_READ_LEN - 1) /
               (VDB_READ_LEN * 0.5);
    float scale, shift;
    vdb_params(dp, &scale, &shift);
    return 0.5 * kf_erfc(-(mean_diff - shift) * scale);
}

/* P(U = u) for sample sizes n and m, by the 1947 recurrence (exact, exponential in n+m). */
static double mwu_prob(int n, int m, int u)
{
    if (u < 0)
        return 0;
    if (n == 0 || m == 0)
        return u == 0 ? 1 : 0;
    return (double)n / (n + m) * mwu_prob(n - 1, m, u - m) +
           (double)m / (n + m) * mwu_prob(n, m - 1, u);
}

/*
 * P(U = u) for 2 <= n, m < 8, as bcftools reads it from its precomputed
 * table: the recurrence's value printed with 17 decimals and read back, which
 * drops the low bits of the smaller values. Rounding the same way here gives
 * the table's doubles without storing them.
 */
static double mwu_prob_table(int n, int m, int u)
{
    char text[64];
    snprintf(text, sizeof(text), "%.17f", mwu_prob(n, m, u));
    return strtod(text, NULL);
}

/*
 * bcftools counts pairs and ties in int and overflows them at high depth; x86-64
 * wraps, so the sums are kept in unsigned (the same bits) and read back as int.
 */
static int as_int(unsigned x)
{
    return (int)x;
}

/* (k*k - 1) * k, the tie term of a bin of k equal values, in wrapping 32-bit int. */
static int tie_term(int k)
{
    unsigned u = (unsigned)k;
    return as_int((u * u - 1u) * u);
}

/* The U statistic's counts: pairs a<b (lt), ties (eq), and the tie correction t. */
typedef struct {
    int na, nb, lt, eq;
    int64_t t;
} mwu_counts_t;

/* Whether a[i..i+4) and b[i..i+4) are all 0 (b NULL: a only), four bins per test. */
static int empty4(const int *a, const int *b, int i)
{
    uint64_t x[4] = {0, 0, 0, 0};
    memcpy(x, a + i, 16);
    if (b)
        memcpy(x + 2, b + i, 16);
    return !(x[0] | x[1] | x[2] | x[3]);
}

/* Whether a[0..n) is all 0. */
static int all_empty(const int *a, int n)
{
    int i = 0;
    for (; i + 4 <= n; i += 4)
        if (!empty4(a, NULL, i))
            return 0;
    for (; i < n; i++)
        if (a[i])
            return 0;
    return 1;
}

/* Bin i of a and b into the counts; bins come from the top down, so that nb holds the b's above. */
static inline void mwu_bin(int a, int b, mwu_counts_t *c, unsigned *lt, unsigned *eq)
{
    c->na += a;
    *eq += (unsigned)a * (unsigned)b;
    *lt += (unsigned)a * (unsigned)c->nb;
    c->nb += b;
    c->t += tie_term(a + b);
}

/*
 * Bins lo..hi-1 from the top down. A bin empty in both adds 0 to every sum
 * (tie_term(0) is 0): skipped.
 */
static void mwu_add(const int *a, const int *b, int lo, int hi, mwu_counts_t *c, unsigned *lt,
                    unsigned *eq)
{
    for (int i = hi - 1; i >= lo; i--)
        if (a[i] | b[i])
            mwu_bin(a[i], b[i], c, lt, eq);
}

/*
 * As bcftools' loop over all n bins, for a b that is not all empty; most
 * bins are empty, so they go four at a time.
 */
static mwu_counts_t mwu_count(const int *a, const int *b, int n)
{
    mwu_counts_t c = {0, 0, 0, 0, 0};
    unsigned lt = 0, eq = 0;
    int hi = n;
    for (; hi >= 4; hi -= 4)
        if (!empty4(a, b, hi - 4))
            mwu_add(a, b, hi - 4, hi, &c, &lt, &eq);
    mwu_add(a, b, 0, hi, &c, &lt, &eq);
    c.lt = as_int(lt);
    c.eq = as_int(eq);
    return c;
}

/* As mwu_count, visiting only the bins either histogram uses. */
static mwu_counts_t mwu_count_hist(const mp_hist_t *a, const mp_hist_t *b)
{
    mwu_counts_t c = {0, 0, 0, 0, 0};
    unsigned lt = 0, eq = 0;
    for (int w = 1; w >= 0; w--)
        for (uint64_t used = a->used[w] | b->used[w]; used;) {
            int bit = 63 - __builtin_clzll(used);
            used &= ~((uint64_t)1 << bit);
            int i = w << 6 | bit;
            mwu_bin(a->bin[i], b->bin[i], &c, &lt, &eq);
        }
    c.lt = as_int(lt);
    c.eq = as_int(eq);
    return c;
}

static double mwu_score(mwu_counts_t c, int left_only, int do_z);

double mp_mwu_bias(const int *a, const int *b, int n, int left_only, int do_z)
{
    if (all_empty(b, n))
        return HUGE_VAL; /* nb is 0: bcftools counts the bins, then gives up here */
    return mwu_score(mwu_count(a, b, n), left_only, do_z);
}

double mp_mwu_hist(const mp_hist_t *a, const mp_hist_t *b, int left_only, int do_z)
{
    if (!(b->used[0] | b->used[1]))
        return HUGE_VAL;
    return mwu_score(mwu_count_hist(a, b), left_only, do_z);
}

/* The test's value from its counts (see mp_mwu_bias). */
static double mwu_score(mwu_counts_t c, int left_only, int do_z)
{
    if (!c.na || !c.nb)
        return HUGE_VAL;
    int na = c.na, nb = c.nb;
    double U = c.lt + c.eq * 0.5;
    int nab = as_int((unsigned)na * (unsigned)nb);
    int pairs = as_int((unsigned)(na + nb) * (unsigned)(na + nb - 1));
    double m = nab / 2.0;
    double var2 = nab / 12.0 * ((na + nb + 1) - c.t / (double)pairs); /* corrected for ties */
    if (var2 <= 0)
        return do_z ? 0 : 1;
    if (do_z)
        return (U - m) / sqrt(var2);
    if (left_only && U > m)
        return HUGE_VAL; /* one-sided (MQB): only lower ALT mapping quality is bias */
    if (na >= 8 || nb >= 8)
        return exp(-0.5 * (U - m) * (U - m) / var2); /* normal approximation */
    if (na == 1 || nb == 1)
        return mwu_prob(na, nb, U) * sqrt(2 * M_PI * var2);
    return mwu_prob_table(na, nb, U) * sqrt(2 * M_PI * var2);
}

/* log(exp(a) + exp(b)) without overflow. */
static double log_sum_exp(double a, double b)
{
    if (a > b)
        return log(1 + exp(b - a)) + a;
    return log(1 + exp(a - b)) + b;
}

/*
 * SGB: how much better the ALT reads fit "a few samples carry the variant"
 * (Poisson with the reads concentrated in M samples) than "errors spread over
 * all samples". HUGE_VAL when there are no ALT reads.
 */
void mp_seg_bias(const mp_smpl_t *bcr, mp_site_t *call)
{
    call->seg_bias = HUGE_VAL;
    if (!bcr)
        return;
    int nr = call->anno[2] + call->anno[3];
    if (!nr)
        return;
    int avg_dp = (call->anno[0] + call->anno[1] + nr) / call->n;
    double M = floor((double)nr / avg_dp + 0.5); /* samples likely to carry the variant */
    if (M > call->n)
        M = call->n;
    else if (M == 0)
        M = 1;
    double f = M / 2. / call->n;
    double p = (double)nr / call->n; /* ALT reads per sample if they are errors */
    double q = (double)nr / M;       /* ALT reads per carrier if the variant is real */
    double sum = 0;
    const double log2 = log(2.0);
    for (int i = 0; i < call->n; i++) {
        int oi = bcr[i].anno[2] + bcr[i].anno[3];
        double tmp;
        if (oi) {
            tmp = log_sum_exp(log(2 * (1 - f)), log(f) + oi * log2 - q);
            tmp += log(f) + oi * log(q / p) - q + p;
        } else {
            tmp = log(2 * f * (1 - f) * exp(-q) + f * f * exp(-2 * q) + (1 - f) * (1 - f)) + p;
        }
        sum += tmp;
    }
    call->seg_bias = sum;
}

/*
 * diff_bias.c -- mpileup's bias statistics against transcriptions of bcftools
 * 1.16's bam2bcf.c kept here: calc_mwu_biasZ (RPBZ, MQBZ, BQBZ, MQSBZ, SCBZ,
 * NMBZ, and the probabilities of -U, with and without left_only) against
 * both mp_mwu_bias and mp_mwu_hist; calc_vdb against mp_vdb; calc_SegBias
 * against mp_seg_bias. The strand bias (SP, FS) is not here: our code calls
 * htslib's kt_fisher_exact itself.
 *
 * The transcriptions keep bcftools' types and the order of its operations,
 * so they give its bits. Where bcftools' int arithmetic overflows (counts
 * past 2^16 square past 2^31), x86-64 wraps; the transcriptions wrap through
 * unsigned, the same bits without the undefined behaviour. mann_whitney_1947
 * reads bcftools' mw.h table, which its generator printed with "%.17f": the
 * table is rebuilt here the same way (checked once against mw.h itself: all
 * 1800 entries the same doubles, 334 of them unlike the unrounded recursion).
 *
 * Histograms: empty, one read, all in one bin, a few reads (the exact
 * table), depths to 10,000, single bins past 2^16, ALT reads at the read
 * ends; bins of 60 (qualities), 100 (positions, soft clips), 32 (NM) and
 * odd sizes.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/kfunc.h>

#include "../../kernels/mpileup/likelihood/mp_bias.h"
#include "base/ss_exact_fp.h"
#include "diff_routines.h"

/* ---- bcftools 1.16, transcribed ------------------------------------------------------- */

/* x86-64's int arithmetic where bcftools' overflows: wrapped, without the UB. */
static int wrap_mul(int a, int b)
{
    return (int)((unsigned)a * (unsigned)b);
}

static int wrap_add(int a, int b)
{
    return (int)((unsigned)a + (unsigned)b);
}

static double bt_mw_rec(int n, int m, int U)
{
    if (U < 0)
        return 0;
    if (n == 0 || m == 0)
        return U == 0 ? 1 : 0;
    return (double)n / (n + m) * bt_mw_rec(n - 1, m, U - m) +
           (double)m / (n + m) * bt_mw_rec(n, m - 1, U);
}

/* mw.h: the recursion for n, m in 2..7, U < 50, as compiled from "%.17f" text. */
static double bt_mw[6][6][50];
static pthread_once_t bt_mw_once = PTHREAD_ONCE_INIT;

static void bt_mw_build(void)
{
    char text[64];
    for (int n = 2; n < 8; n++)
        for (int m = 2; m < 8; m++)
            for (int u = 0; u < 50; u++) {
                snprintf(text, sizeof text, "%.17f", bt_mw_rec(n, m, u));
                bt_mw[n - 2][m - 2][u] = strtod(text, NULL);
            }
}

static double bt_mw_1947(int n, int m, int U)
{
    return n < 8 && m < 8 && U < 50 ? bt_mw[n - 2][m - 2][U] : bt_mw_rec(n, m, U);
}

/* calc_mwu_biasZ's counts: ties t, equal e and less-than l pairs, in its loop order. */
static void bt_mwu_counts(const int *a, const int *b, int n, int *na, int *nb, int *e, int *l,
                          int64_t *t)
{
    int i;
    for (i = 0; i < n; i++)
        if (b[i])
            break;
    int b_empty = i == n;
    *na = *nb = *e = *l = 0;
    *t = 0;
    for (i = n - 1; i >= 0; i--) {
        if (b_empty) {
            *na += a[i];
            *t += wrap_mul(wrap_add(wrap_mul(a[i], a[i]), -1), a[i]);
            continue;
        }
        *e = wrap_add(*e, wrap_mul(a[i], b[i]));
        *l = wrap_add(*l, wrap_mul(a[i], *nb));
        *na += a[i];
        *nb += b[i];
        int p = a[i] + b[i];
        *t += wrap_mul(wrap_add(wrap_mul(p, p), -1), p);
    }
}

static double bt_mwu_biasZ(const int *a, const int *b, int n, int left_only, int do_Z)
{
    int na, nb, e, l;
    int64_t t;
    bt_mwu_counts(a, b, n, &na, &nb, &e, &l, &t);
    if (!na || !nb)
        return HUGE_VAL;
    double U = l + e * 0.5;
    double m = wrap_mul(na, nb) / 2.0;
    double var2 =
        wrap_mul(na, nb) / 12.0 * ((na + nb + 1) - t / (double)wrap_mul(na + nb, na + nb - 1));
    if (var2 <= 0)
        return do_Z ? 0 : 1;
    if (do_Z)
        return (U - m) / sqrt(var2);
    if (left_only && U > m)
        return HUGE_VAL;
    if (na >= 8 || nb >= 8)
        return exp(-0.5 * (U - m) * (U - m) / var2);
    if (na == 1 || nb == 1)
        return bt_mw_rec(na, nb, (int)U) * sqrt(2 * M_PI * var2);
    return bt_mw_1947(na, nb, (int)U) * sqrt(2 * M_PI * var2);
}

/* calc_vdb's fit: float from double literals, as its const float table. */
static const float bt_vdb_param[15][3] = {
    {3, 0.079, 18},   {4, 0.09, 19.8},  {5, 0.1, 20.5},    {6, 0.11, 21.5},  {7, 0.125, 21.6},
    {8, 0.135, 22},   {9, 0.14, 22.2},  {10, 0.153, 22.3}, {15, 0.19, 22.8}, {20, 0.22, 23.2},
    {30, 0.26, 23.4}, {40, 0.29, 23.5}, {50, 0.35, 23.65}, {100, 0.5, 23.7}, {200, 0.7, 23.7}};

static double bt_vdb(const int *pos, int npos)
{
    const int readlen = 100, nparam = 15;
    int i, dp = 0;
    float mean_pos = 0, mean_diff = 0;
    for (i = 0; i < npos; i++) {
        if (!pos[i])
            continue;
        dp += pos[i];
        mean_pos += pos[i] * i;
    }
    if (dp < 2)
        return HUGE_VAL;
    mean_pos /= dp;
    for (i = 0; i < npos; i++) {
        if (!pos[i])
            continue;
        mean_diff += pos[i] * fabs(i - mean_pos);
    }
    mean_diff /= dp;
    int ipos = mean_diff;
    if (dp == 2)
        return (2 * readlen - 2 * (ipos + 1) - 1) * (ipos + 1) / (readlen - 1) / (readlen * 0.5);
    if (dp >= 200)
        i = nparam;
    else
        for (i = 0; i < nparam; i++)
            if (bt_vdb_param[i][0] >= dp)
                break;
    float pshift, pscale;
    if (i == nparam) {
        pscale = bt_vdb_param[nparam - 1][1];
        pshift = bt_vdb_param[nparam - 1][2];
    } else if (i > 0 && bt_vdb_param[i][0] != dp) {
        pscale = (bt_vdb_param[i - 1][1] + bt_vdb_param[i][1]) * 0.5;
        pshift = (bt_vdb_param[i - 1][2] + bt_vdb_param[i][2]) * 0.5;
    } else {
        pscale = bt_vdb_param[i][1];
        pshift = bt_vdb_param[i][2];
    }
    return 0.5 * kf_erfc(-(mean_diff - pshift) * pscale);
}

static double bt_logsumexp2(double a, double b)
{
    if (a > b)
        return log(1 + exp(b - a)) + a;
    return log(1 + exp(a - b)) + b;
}

/* calc_SegBias: anno[s][0..3] of n samples, their sums in call_anno; into a float. */
static float bt_seg_bias(const double (*anno)[4], const double *call_anno, int n)
{
    int nr = call_anno[2] + call_anno[3];
    if (!nr)
        return HUGE_VAL;
    int avg_dp = (call_anno[0] + call_anno[1] + nr) / n;
    double M = floor((double)nr / avg_dp + 0.5);
    if (M > n)
        M = n;
    else if (M == 0)
        M = 1;
    double f = M / 2. / n, p = (double)nr / n, q = (double)nr / M, sum = 0;
    const double log2 = log(2.0);
    for (int i = 0; i < n; i++) {
        int oi = anno[i][2] + anno[i][3];
        double tmp;
        if (oi) {
            tmp = bt_logsumexp2(log(2 * (1 - f)), log(f) + oi * log2 - q);
            tmp += log(f) + oi * log(q / p) - q + p;
        } else {
            tmp = log(2 * f * (1 - f) * exp(-q) + f * f * exp(-2 * q) + (1 - f) * (1 - f)) + p;
        }
        sum += tmp;
    }
    return sum;
}

/* ---- histograms ------------------------------------------------------------------------ */

#define NB MP_HIST_BINS

/* Bins of a pileup's histogram: the sizes bcftools uses, sometimes another. */
static int pick_bins(diff_rng_t *r)
{
    static const int sizes[] = {60, 100, 100, 32};
    return diff_rng_one_in(r, 8) ? diff_rng_range(r, 1, NB) : sizes[diff_rng_below(r, 4)];
}

/* A bin near the middle (two uniforms), near either end, or anywhere. */
static int pick_bin(diff_rng_t *r, int n, int shape)
{
    if (shape == 0)
        return (int)diff_rng_below(r, (uint32_t)n);
    if (shape == 1)
        return ((int)diff_rng_below(r, (uint32_t)n) + (int)diff_rng_below(r, (uint32_t)n)) / 2;
    int k = diff_rng_range(r, 0, n < 4 ? n - 1 : 3);
    return diff_rng_below(r, 2) ? k : n - 1 - k;
}

/* h[0..n) from nothing to depths past 2^16 in one bin. */
static void gen_hist(diff_rng_t *r, int *h, int n)
{
    memset(h, 0, NB * sizeof(*h));
    int mode = (int)diff_rng_below(r, 10), shape = (int)diff_rng_below(r, 3), reads = 0;
    switch (mode) {
    case 0:
        return;
    case 1:
        reads = 1;
        break;
    case 2:
        h[pick_bin(r, n, shape)] = diff_rng_range(r, 2, 3000);
        return;
    case 3:
    case 4:
        reads = diff_rng_range(r, 2, 7);
        break;
    case 5:
        reads = diff_rng_range(r, 8, 60);
        break;
    case 6:
        reads = diff_rng_range(r, 1, 10000);
        break;
    case 7:
        reads = diff_rng_range(r, 60, 500);
        break;
    default: /* bins past 2^16, where squares and products pass 2^31 */
        for (int k = diff_rng_range(r, 1, 3); k > 0; k--)
            h[pick_bin(r, n, shape)] += diff_rng_range(r, 40000, 300000);
        reads = diff_rng_range(r, 0, 50);
    }
    for (int k = 0; k < reads; k++)
        h[pick_bin(r, n, shape)]++;
}

static void to_hist(const int *bins, int n, mp_hist_t *h)
{
    memset(h, 0, sizeof(*h));
    for (int i = 0; i < n; i++)
        if (bins[i]) {
            h->bin[i] = bins[i];
            h->used[i >> 6] |= (uint64_t)1 << (i & 63);
        }
}

/* The bins as a C initializer a unit test can take. */
static void print_bins(FILE *f, const char *name, const int *h, int n)
{
    fprintf(f, "  int %s[%d] = {", name, n);
    for (int i = 0, k = 0; i < n; i++)
        if (h[i])
            fprintf(f, "%s[%d] = %d", k++ ? (k % 8 ? ", " : ",\n      ") : "", i, h[i]);
    fputs("};\n", f);
}

static int same_bits(double x, double y)
{
    return memcmp(&x, &y, sizeof x) == 0;
}

/* ---- MWU ------------------------------------------------------------------------------- */

typedef struct {
    int n, a[NB], b[NB];
} mwu_case_t;

typedef struct {
    int variant; /* bit 0 left_only, bit 1 do_z, bit 2 mp_mwu_hist (else mp_mwu_bias) */
    double ours, theirs;
} mwu_diff_t;

/* The first of the eight (entry point, left_only, do_z) that differs; 0 when none. */
static int mwu_differs(const mwu_case_t *c, mwu_diff_t *d)
{
    mp_hist_t ha, hb;
    to_hist(c->a, c->n, &ha);
    to_hist(c->b, c->n, &hb);
    for (int v = 0; v < 8; v++) {
        int left = v & 1, z = v >> 1 & 1;
        double want = bt_mwu_biasZ(c->a, c->b, c->n, left, z);
        double got =
            v & 4 ? mp_mwu_hist(&ha, &hb, left, z) : mp_mwu_bias(c->a, c->b, c->n, left, z);
        if (!same_bits(got, want)) {
            *d = (mwu_diff_t){v, got, want};
            return 1;
        }
    }
    return 0;
}

/* Empties bins, then halves counts, while the case still differs. */
static void mwu_shrink(mwu_case_t *c)
{
    mwu_diff_t d;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 2 * c->n; i++) {
            int *bin = i < c->n ? &c->a[i] : &c->b[i - c->n];
            while (*bin) {
                int was = *bin;
                *bin = pass == 0 ? 0 : was / 2;
                if (!mwu_differs(c, &d)) {
                    *bin = was;
                    break;
                }
            }
        }
}

void diff_mwu(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    pthread_once(&bt_mw_once, bt_mw_build);
    mwu_case_t c;
    mwu_diff_t d;
    for (uint64_t i = first; i < first + n; i++) {
        diff_rng_t r;
        diff_rng_init(&r, seed, "mwu", i);
        c.n = pick_bins(&r);
        gen_hist(&r, c.a, c.n);
        if (diff_rng_one_in(&r, 10)) /* the same distribution: U at its mean, or all ties */
            memcpy(c.b, c.a, sizeof c.b);
        else
            gen_hist(&r, c.b, c.n);
        t->cases++;
        if (!mwu_differs(&c, &d))
            continue;
        mwu_shrink(&c);
        mwu_differs(&c, &d);
        if (diff_report(t, "mwu", seed, i,
                        "%s(a, b, %d, left_only %d, do_z %d): ours %.17g, "
                        "bcftools %.17g",
                        d.variant & 4 ? "mp_mwu_hist" : "mp_mwu_bias", c.n, d.variant & 1,
                        d.variant >> 1 & 1, d.ours, d.theirs)) {
            print_bins(t->log, "a", c.a, c.n);
            print_bins(t->log, "b", c.b, c.n);
        }
    }
}

/* ---- VDB ------------------------------------------------------------------------------- */

/* ALT read positions (100 bins): few reads for the exact and fitted rows, ends, deep. */
static void gen_positions(diff_rng_t *r, int *pos)
{
    if (diff_rng_one_in(r, 3)) {
        memset(pos, 0, NB * sizeof(*pos));
        int reads = diff_rng_range(r, 0, diff_rng_one_in(r, 2) ? 4 : 250);
        int shape = (int)diff_rng_below(r, 3);
        for (int k = 0; k < reads; k++)
            pos[pick_bin(r, NB, shape)]++;
        return;
    }
    gen_hist(r, pos, NB);
}

void diff_vdb(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    int pos[NB];
    mp_hist_t h;
    for (uint64_t i = first; i < first + n; i++) {
        diff_rng_t r;
        diff_rng_init(&r, seed, "vdb", i);
        gen_positions(&r, pos);
        to_hist(pos, NB, &h);
        t->cases++;
        double got = mp_vdb(&h), want = bt_vdb(pos, NB);
        if (!same_bits(got, want) &&
            diff_report(t, "vdb", seed, i, "mp_vdb %.17g, bcftools calc_vdb %.17g", got, want))
            print_bins(t->log, "pos", pos, NB);
    }
}

/* ---- SGB ------------------------------------------------------------------------------- */

#define MAX_SMPL 1000

typedef struct {
    int n;
    double anno[MAX_SMPL][4]; /* I16[0..3]: REF fwd, rev, ALT fwd, rev */
} sgb_case_t;

/* Samples with depth 0 to 10,000; carriers have about half ALT, the rest a few errors. */
static void sgb_make(diff_rng_t *r, sgb_case_t *c)
{
    static const int sizes[] = {1, 2, 3, 10, 50, 200, MAX_SMPL};
    c->n = diff_rng_range(r, 1, sizes[diff_rng_below(r, 7)]);
    int carriers = (int)diff_rng_below(r, 4), deep = diff_rng_one_in(r, 4);
    for (int s = 0; s < c->n; s++) {
        int dp = diff_rng_one_in(r, 6) ? 0 : diff_rng_range(r, 1, deep ? 10000 : 40);
        int alt = 0;
        if (carriers == 3 || (carriers && diff_rng_one_in(r, carriers == 1 ? 2 : 20)))
            alt = dp / 2 + (dp ? diff_rng_range(r, 0, dp - dp / 2) : 0);
        else if (diff_rng_one_in(r, 8))
            alt = dp ? diff_rng_range(r, 0, dp < 3 ? dp : 3) : 0;
        int alt_fwd = alt ? diff_rng_range(r, 0, alt) : 0, ref_fwd = diff_rng_range(r, 0, dp - alt);
        c->anno[s][0] = ref_fwd;
        c->anno[s][1] = dp - alt - ref_fwd;
        c->anno[s][2] = alt_fwd;
        c->anno[s][3] = alt - alt_fwd;
    }
}

/* Ours and bcftools' SGB, as the floats both store. */
static int sgb_differs(const sgb_case_t *c, mp_smpl_t *smpl, float *ours, float *theirs)
{
    mp_site_t call;
    memset(&call, 0, sizeof call);
    call.n = c->n;
    for (int s = 0; s < c->n; s++) /* bcf_call_combine's sums, sample by sample */
        for (int j = 0; j < 4; j++) {
            smpl[s].anno[j] = c->anno[s][j];
            call.anno[j] += c->anno[s][j];
        }
    mp_seg_bias(smpl, &call);
    *ours = call.seg_bias;
    *theirs = bt_seg_bias(c->anno, call.anno, c->n);
    return memcmp(ours, theirs, sizeof *ours) != 0;
}

/* Drops samples while the case still differs. */
static void sgb_shrink(sgb_case_t *c, mp_smpl_t *smpl)
{
    float a, b;
    for (int s = c->n - 1; s >= 0 && c->n > 1; s--) {
        double keep[4];
        memcpy(keep, c->anno[s], sizeof keep);
        memmove(c->anno[s], c->anno[s + 1], (size_t)(c->n - s - 1) * sizeof(c->anno[0]));
        c->n--;
        if (sgb_differs(c, smpl, &a, &b))
            continue;
        memmove(c->anno[s + 1], c->anno[s], (size_t)(c->n - s) * sizeof(c->anno[0]));
        memcpy(c->anno[s], keep, sizeof keep);
        c->n++;
    }
}

static void sgb_print(FILE *f, const sgb_case_t *c)
{
    fprintf(f, "  int n = %d; double anno[][4] = {", c->n);
    for (int s = 0; s < c->n; s++)
        fprintf(f, "%s{%g, %g, %g, %g}", s ? (s % 4 ? ", " : ",\n      ") : "", c->anno[s][0],
                c->anno[s][1], c->anno[s][2], c->anno[s][3]);
    fputs("};\n", f);
}

void diff_sgb(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    sgb_case_t *c = malloc(sizeof(*c));
    mp_smpl_t *smpl = calloc(MAX_SMPL, sizeof(*smpl));
    if (!c || !smpl) {
        fprintf(stderr, "ssdiff: out of memory\n");
        exit(2);
    }
    float ours, theirs;
    for (uint64_t i = first; i < first + n; i++) {
        diff_rng_t r;
        diff_rng_init(&r, seed, "sgb", i);
        sgb_make(&r, c);
        t->cases++;
        if (!sgb_differs(c, smpl, &ours, &theirs))
            continue;
        sgb_shrink(c, smpl);
        sgb_differs(c, smpl, &ours, &theirs);
        if (diff_report(t, "sgb", seed, i,
                        "shrunk to %d samples: mp_seg_bias %.9g, bcftools "
                        "calc_SegBias %.9g",
                        c->n, ours, theirs))
            sgb_print(t->log, c);
    }
    free(smpl);
    free(c);
}

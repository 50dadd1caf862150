/*
 * mc_afs.c -- the consensus caller's allele-frequency spectrum (bcftools
 * 1.16 prob1.c, the single-population part): the posterior of the number
 * of ALT copies at a site under the "full" prior (theta 1e-3; the indel
 * prior scaled by 0.15), and genotypes given the expected frequency.
 *
 * The spectrum's sums run in long double where prob1.c's do.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

#define AFS_THETA   1e-3
#define INDEL_SCALE 0.15
#define TINY        1e-20 /* spectrum entries below this are dropped at its ends */

struct mc_afs_s {
    int n, M;        /* samples; chromosomes */
    uint8_t *ploidy; /* per sample, or NULL when all are diploid */
    double q2p[256];
    double *pdg;             /* 3 per sample: ALT/ALT, REF/ALT, REF/REF */
    double *phi, *phi_indel; /* priors of k REF copies, k = 0..M */
    double *z, *zswap, *afs1;
    int is_indel;
};

void mc_afs_destroy(mc_afs_t *a)
{
    if (!a)
        return;
    free(a->ploidy);
    free(a->pdg);
    free(a->phi);
    free(a->phi_indel);
    free(a->z);
    free(a->zswap);
    free(a->afs1);
    free(a);
}

/* The priors: theta / (M - k) for k < M, the rest on k = M; indels scaled. */
static void set_priors(mc_afs_t *a)
{
    double sum = 0.;
    for (int i = 0; i < a->M; i++)
        sum += (a->phi[i] = AFS_THETA / (a->M - i));
    a->phi[a->M] = 1. - sum;
    for (int i = 0; i < a->M; i++)
        a->phi_indel[i] = a->phi[i] * INDEL_SCALE;
    a->phi_indel[a->M] = 1. - a->phi[a->M] * INDEL_SCALE;
}

/*
 * Spectrum state for nsmpl samples of the given ploidy (bcftools fixes it
 * when the caller starts: the definition's highest). NULL when out of memory.
 */
mc_afs_t *mc_afs_init(int nsmpl, const uint8_t *ploidy)
{
    mc_afs_t *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->n = nsmpl;
    a->M = 2 * nsmpl;
    int M = 0;
    for (int i = 0; i < nsmpl; i++)
        M += ploidy[i];
    if (M != 2 * nsmpl) {
        a->M = M;
        if (!(a->ploidy = malloc(nsmpl + 1)))
            goto fail;
        memcpy(a->ploidy, ploidy, nsmpl);
    }
    size_t m = a->M + 1;
    a->pdg = calloc(3 * (size_t)nsmpl + 1, sizeof(double));
    a->phi = calloc(m, sizeof(double));
    a->phi_indel = calloc(m, sizeof(double));
    a->z = calloc(m, sizeof(double));
    a->zswap = calloc(m, sizeof(double));
    a->afs1 = calloc(m, sizeof(double));
    if (!a->pdg || !a->phi || !a->phi_indel || !a->z || !a->zswap || !a->afs1)
        goto fail;
    for (int i = 0; i < 256; i++)
        a->q2p[i] = pow(10., -i / 10.);
    set_priors(a);
    return a;
fail:
    mc_afs_destroy(a);
    return NULL;
}

/* PLs are 0..255 from mpileup; others (which bcftools reads past its table for) by pow. */
static double pl_to_p(const mc_afs_t *a, int pl)
{
    return pl >= 0 && pl < 256 ? a->q2p[pl] : pow(10., -pl / 10.);
}

/*
 * P(D|G) per sample from its first three PLs (stride pl_len), and REF's
 * rank when the alleles are sorted by their homozygotes' summed PL (-2:
 * out of memory).
 */
static int site_pdg(mc_afs_t *a, const bcf1_t *rec, const int32_t *PLs, int pl_len)
{
    long few[16] = {0}, *sums = few;
    int nals = rec->n_allele;
    if (nals > 16 && !(sums = calloc(nals, sizeof(*sums))))
        return -2;
    for (int j = 0; j < a->n; j++) {
        const int32_t *pl = PLs + j * pl_len;
        double *pdg = a->pdg + j * 3;
        pdg[0] = pl_to_p(a, pl[2]);
        pdg[1] = pl_to_p(a, pl[1]);
        pdg[2] = pl_to_p(a, pl[0]);
        for (int i = 0; i < nals; i++)
            sums[i] += (int)pl[(i + 1) * (i + 2) / 2 - 1];
    }
    for (int i = 0; i < nals; i++)
        sums[i] = sums[i] << 4 | i;
    for (int i = 1; i < nals; i++)
        for (int j = i; j > 0 && sums[j] < sums[j - 1]; j--) {
            long t = sums[j];
            sums[j] = sums[j - 1];
            sums[j - 1] = t;
        }
    int i;
    for (i = nals - 1; i >= 0; i--)
        if ((sums[i] & 0xf) == 0)
            break;
    if (sums != few)
        free(sums);
    return i;
}

/*
 * Add a diploid sample (P(D|G) p, ALT/ALT first) to the spectrum z0 over
 * M0 chromosomes, into z1 over M0 + 2, on the live range [*lo, *hi];
 * last: no sample follows. One step of prob1.c's mc_cal_y_core.
 */
static void add_diploid(const double *pdg, int M0, double *z0, double *z1, int *lo, int *hi,
                        int last)
{
    double p[3] = {pdg[0], 2. * pdg[1], pdg[2]};
    int min = *lo, max = *hi, k;
    for (; min < max && z0[min] < TINY; ++min)
        z0[min] = z1[min] = 0.;
    for (; max > min && z0[max] < TINY; --max)
        z0[max] = z1[max] = 0.;
    max += 2;
    if (min == 0)
        k = 0, z1[k] = (M0 - k + 1) * (M0 - k + 2) * p[0] * z0[k];
    if (min <= 1)
        k = 1,
        z1[k] = (M0 - k + 1) * (M0 - k + 2) * p[0] * z0[k] + k * (M0 - k + 2) * p[1] * z0[k - 1];
    for (k = min < 2 ? 2 : min; k <= max; ++k)
        z1[k] = (M0 - k + 1) * (M0 - k + 2) * p[0] * z0[k] + k * (M0 - k + 2) * p[1] * z0[k - 1] +
                k * (k - 1) * p[2] * z0[k - 2];
    double sum = 0.;
    for (k = min; k <= max; ++k)
        sum += z1[k];
    for (k = min; k <= max; ++k)
        z1[k] /= sum;
    if (min >= 1)
        z1[min - 1] = 0.;
    if (min >= 2)
        z1[min - 2] = 0.;
    if (!last)
        z1[max + 1] = z1[max + 2] = 0.;
    *lo = min, *hi = max;
}

/* The same for a haploid sample (M0 + 1 chromosomes). */
static void add_haploid(const double *pdg, int M0, double *z0, double *z1, int *lo, int *hi,
                        int last)
{
    double p[2] = {pdg[0], pdg[2]};
    int min = *lo, max = *hi, k;
    for (; min < max && z0[min] < TINY; ++min)
        z0[min] = z1[min] = 0.;
    for (; max > min && z0[max] < TINY; --max)
        z0[max] = z1[max] = 0.;
    max++;
    if (min == 0)
        k = 0, z1[k] = (M0 + 1 - k) * p[0] * z0[k];
    for (k = min < 1 ? 1 : min; k <= max; ++k)
        z1[k] = (M0 + 1 - k) * p[0] * z0[k] + k * p[1] * z0[k - 1];
    double sum = 0.;
    for (k = min; k <= max; ++k)
        sum += z1[k];
    for (k = min; k <= max; ++k)
        z1[k] /= sum;
    if (min >= 1)
        z1[min - 1] = 0.;
    if (!last)
        z1[max + 1] = 0.;
    *lo = min, *hi = max;
}

/* a->z: the likelihood of k ALT copies, k = 0..M, sample by sample (mc_cal_y). */
static void spectrum(mc_afs_t *a)
{
    double *z0 = a->z, *z1 = a->zswap, *t;
    memset(z0, 0, sizeof(double) * (a->M + 1));
    memset(z1, 0, sizeof(double) * (a->M + 1));
    z0[0] = 1.;
    int lo = 0, hi = 0, M = 0;
    for (int j = 0; j < a->n; j++) {
        int ploidy = a->ploidy ? a->ploidy[j] : 2, last = j == a->n - 1;
        /* a sample of another ploidy (0) swaps the buffers all the same, as prob1.c does */
        if (ploidy == 2)
            add_diploid(a->pdg + j * 3, M, z0, z1, &lo, &hi, last);
        else if (ploidy == 1)
            add_haploid(a->pdg + j * 3, M, z0, z1, &lo, &hi, last);
        M += ploidy;
        t = z0, z0 = z1, z1 = t;
    }
    if (z0 != a->z)
        memcpy(a->z, z0, sizeof(double) * (a->M + 1));
}

/*
 * The site's posterior over k (a->afs1), the folded P(REF) and P(variant),
 * and the expected REF frequency (-1 when the posterior is not finite).
 */
static double posterior(mc_afs_t *a, double *p_ref_folded, double *p_var_folded)
{
    const double *phi = a->is_indel ? a->phi_indel : a->phi;
    const double *z = a->z;
    int M = a->M, k;
    memset(a->afs1, 0, sizeof(double) * (M + 1));
    spectrum(a);
    long double sum = 0., sum2;
    for (k = 0; k <= M; ++k)
        sum += (long double)phi[k] * z[k];
    for (k = 0; k <= M; ++k) {
        a->afs1[k] = phi[k] * z[k] / sum;
        if (isnan(a->afs1[k]) || isinf(a->afs1[k]))
            return -1.;
    }
    for (k = 0, sum = 0.; k <= M; ++k)
        sum += (long double)(phi[k] + phi[M - k]) / 2. * z[k];
    for (k = 1, sum2 = 0.; k < M; ++k)
        sum2 += (long double)(phi[k] + phi[M - k]) / 2. * z[k];
    *p_var_folded = sum2 / sum;
    *p_ref_folded = (phi[M] + phi[0]) / 2. * (z[M] + z[0]) / sum;
    for (k = 0, sum = 0.; k <= M; ++k)
        sum += k * a->afs1[k];
    return sum / M;
}

/*
 * bcf_p1_cal for one population: the site's spectrum from its PLs (nPLs
 * over the record's samples) into r. -1 when the site has no ALT, -2 when
 * out of memory, else 0.
 */
int mc_afs_site(mc_afs_t *a, bcf1_t *rec, const int32_t *PLs, int nPLs, mc_afs_result_t *r)
{
    a->is_indel = !bcf_is_snp(rec);
    if (rec->n_allele < 2)
        return -1;
    if ((r->rank0 = site_pdg(a, rec, PLs, nPLs / rec->n_sample)) == -2)
        return -2;
    r->f_exp = posterior(a, &r->p_ref_folded, &r->p_var_folded);
    r->p_ref = a->afs1[a->M];
    long double sum = 0.;
    for (int k = 0; k < a->M; k++)
        sum += a->afs1[k];
    r->p_var = (double)sum;
    double max = -1;
    r->ac = -1;
    for (int k = 0; k <= a->M; k++)
        if (max < a->z[k])
            max = a->z[k], r->ac = k;
    r->ac = a->M - r->ac;
    return 0;
}

/*
 * Sample k's genotype given the REF frequency f0 under HWE (bcf_p1_call_gt):
 * GQ << 2 | genotype, the genotype 0 ALT/ALT, 1 REF/ALT, 2 REF/REF (forced
 * when !is_var), GQ capped at 99.
 */
int mc_afs_genotype(const mc_afs_t *a, double f0, int k, int is_var)
{
    const double *pdg = a->pdg + k * 3;
    double f3[3], g[3];
    if ((a->ploidy ? a->ploidy[k] : 2) == 2) {
        f3[0] = (1. - f0) * (1. - f0);
        f3[1] = 2. * f0 * (1. - f0);
        f3[2] = f0 * f0;
    } else {
        f3[0] = 1. - f0;
        f3[1] = 0;
        f3[2] = f0;
    }
    double sum = 0.;
    for (int i = 0; i < 3; i++)
        sum += (g[i] = pdg[i] * f3[i]);
    double max = -1.;
    int max_i = 0;
    for (int i = 0; i < 3; i++) {
        g[i] /= sum;
        if (g[i] > max)
            max = g[i], max_i = i;
    }
    if (!is_var)
        max_i = 2, max = g[2];
    max = 1. - max;
    if (max < 1e-308)
        max = 1e-308;
    int q = (int)(-4.343 * log(max) + .499);
    return (q > 99 ? 99 : q) << 2 | max_i;
}

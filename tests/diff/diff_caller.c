/*
 * diff_caller.c -- bcftools call -m (mcall.c) two ways: our mc_multi_call on
 * a generated mpileup record against a transcription of bcftools 1.16's
 * set_pdg, mcall_find_best_alleles, the QUAL choice, init_allele_trimming_maps,
 * mcall_set_ref_genotypes, mcall_call_genotypes (GQ, GP) and
 * mcall_trim_and_update_PLs, kept here in plain arrays.
 *
 * Cases: 1-100 samples of ploidy 2, 1 or 0; 1-5 alleles, sometimes ending in
 * <*>; PLs 0-255 and above, with ties, all zero (no depth), missing values
 * and haploid-length vectors; QS with zeros and ties, or -G groups from AD;
 * priors from -P of 0, tiny, default and huge (capped), with and without -A.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/kfunc.h>

#include "../../kernels/mpileup/call/mc_priv.h"
#include "base/ss_exact_fp.h"
#include "diff_routines.h"

#define CM_MAX_SMPL 100
#define CM_MAX_ALS  5
#define CM_MAX_GTS  15
#define CM_MAX_GRP  3
/*
 * GP room: bcftools reads past a record's GPs when a haploid sample's best
 * alleles include <*> (nmax = grp->nals there, but <*> is not in nals_new),
 * so it reads what an earlier record left. Both sides get the same stale
 * values (the case's poison) in a buffer that never moves.
 */
#define CM_GP_CAP (CM_MAX_SMPL * CM_MAX_GTS + 64)

/* ---- the case -------------------------------------------------------------------------- */

typedef struct {
    int nsmpl, nals, unseen, n_grp, keep_alts, nqs;
    double opt_theta;
    float poison; /* what an earlier record left in GP memory */
    uint8_t ploidy[CM_MAX_SMPL];
    int grp_of[CM_MAX_SMPL];
    int32_t pl[CM_MAX_SMPL * CM_MAX_GTS];
    int32_t ad[CM_MAX_SMPL * CM_MAX_ALS];
    float qs[CM_MAX_ALS];
} cm_case_t;

static const int pl_steps[] = {0, 1, 2, 3, 10, 60, 254, 255, 256, 999, 10000};

static int32_t gen_pl(diff_rng_t *r, int mode)
{
    switch (mode) {
    case 0:
        return diff_rng_range(r, 0, 255);
    case 1:
        return pl_steps[diff_rng_below(r, sizeof(pl_steps) / sizeof(pl_steps[0]))];
    case 2:
        return diff_rng_range(r, 0, 3); /* ties */
    default:
        return diff_rng_range(r, 0, 2000);
    }
}

/* One sample's PLs: typical, tied, no depth, missing, or haploid-length. */
static void gen_sample_pls(diff_rng_t *r, int32_t *pl, int nals, int mode)
{
    int ngts = nals * (nals + 1) / 2, k = (int)diff_rng_below(r, 20);
    for (int j = 0; j < ngts; j++)
        pl[j] = gen_pl(r, mode);
    if (k < 6)
        pl[diff_rng_below(r, ngts)] = 0;
    else if (k == 6)
        memset(pl, 0, ngts * sizeof(*pl));
    else if (k == 7)
        for (int j = 0; j < ngts; j++)
            pl[j] = bcf_int32_missing;
    else if (k == 8 && ngts > 1) {
        for (int j = nals; j < ngts; j++)
            pl[j] = bcf_int32_vector_end;
    } else if (k == 9 && ngts > 1) {
        /* bcftools indexes pl2p[] unchecked when it fills missing values: keep them < 256 */
        for (int j = 0; j < ngts; j++) {
            if (pl[j] > 255)
                pl[j] = 255;
            if (diff_rng_one_in(r, 3))
                pl[j] = bcf_int32_missing;
        }
    }
}

static void gen_freqs(diff_rng_t *r, cm_case_t *c)
{
    c->nqs = c->nals;
    if (c->unseen && diff_rng_one_in(r, 2))
        c->nqs = c->nals - 1; /* mpileup leaves <*> without QS */
    int mode = (int)diff_rng_below(r, 4);
    for (int i = 0; i < c->nals; i++) {
        c->qs[i] = mode == 0   ? (float)diff_rng_range(r, 0, 3)
                   : mode == 1 ? (float)(diff_rng_unit(r) * 1000)
                               : (float)diff_rng_range(r, 0, 5000);
        if (diff_rng_one_in(r, 4))
            c->qs[i] = 0;
    }
    for (int s = 0; s < c->nsmpl; s++)
        for (int i = 0; i < c->nals; i++) {
            int32_t *v = &c->ad[s * c->nals + i];
            *v = diff_rng_one_in(r, 3) ? 0 : diff_rng_range(r, 0, 60);
            if (diff_rng_one_in(r, 30))
                *v = bcf_int32_missing;
            else if (i > 0 && diff_rng_one_in(r, 40))
                *v = bcf_int32_vector_end;
        }
}

static void gen_case(diff_rng_t *r, cm_case_t *c)
{
    static const double thetas[] = {1.1e-3, 0, 1e-30, 0.4, 0.9, -1};
    memset(c, 0, sizeof(*c));
    c->nsmpl = diff_rng_one_in(r, 3) ? diff_rng_range(r, 1, CM_MAX_SMPL) : diff_rng_range(r, 1, 4);
    c->nals = diff_rng_one_in(r, 20) ? 1 : diff_rng_range(r, 2, CM_MAX_ALS);
    c->unseen = c->nals > 1 && diff_rng_one_in(r, 2) ? c->nals - 1 : 0;
    c->n_grp = diff_rng_one_in(r, 4) ? diff_rng_range(r, 2, CM_MAX_GRP) : 1;
    if (c->n_grp > c->nsmpl)
        c->n_grp = c->nsmpl;
    c->keep_alts = diff_rng_one_in(r, 5);
    c->poison = diff_rng_one_in(r, 2) ? (float)diff_rng_unit(r) : -(float)diff_rng_range(r, 0, 2);
    c->opt_theta = thetas[diff_rng_below(r, sizeof(thetas) / sizeof(thetas[0]))];
    int pmode = (int)diff_rng_below(r, 4), plmode = (int)diff_rng_below(r, 4);
    int ngts = c->nals * (c->nals + 1) / 2;
    for (int s = 0; s < c->nsmpl; s++) {
        c->ploidy[s] = pmode < 2 ? 2 : pmode == 2 ? 1 : (uint8_t)diff_rng_range(r, 0, 2);
        c->grp_of[s] = s < c->n_grp ? s : (int)diff_rng_below(r, c->n_grp);
        gen_sample_pls(r, c->pl + s * ngts, c->nals, plmode);
    }
    gen_freqs(r, c);
}

/* ---- bcftools 1.16's mcall.c, transcribed (its types, its order of operations) ---------- */

typedef struct {
    int smpl[CM_MAX_SMPL], nsmpl;
    float qsum[CM_MAX_ALS];
    double max_lk, ref_lk, lk_sum;
    int als, nals;
} ref_grp_t;

/* Everything bcftools leaves in call_t and the record that we compare. */
typedef struct {
    double pl2p[256], theta;
    int32_t pl[CM_MAX_SMPL * CM_MAX_GTS];
    double pdg[CM_MAX_SMPL * CM_MAX_GTS];
    ref_grp_t grp[CM_MAX_GRP];
    int als_map[CM_MAX_ALS], pl_map[CM_MAX_GTS], ac[CM_MAX_ALS];
    int als_new, nals_new;
    int32_t gts[2 * CM_MAX_SMPL], GQs[CM_MAX_SMPL];
    float GPs[CM_GP_CAP];
    float qual;
    int ret, an, has_gp, n_pl; /* n_pl: PL values left in the record, 0 when removed */
} ref_t;

/* mcall_init's prior: -P times Watterson's factor over n haplotypes, capped, in log. */
static double ref_prior(double theta, int n)
{
    if (theta > 0) {
        double aM = 1;
        for (int i = 2; i < n; i++)
            aM += 1. / i;
        theta *= aM;
        if (theta >= 1)
            theta = 0.99;
        theta = log(theta);
    }
    return theta;
}

/* set_pdg's fill of missing values from the unseen allele (pl2p[] unchecked, as there). */
static double ref_fill_missing(const double *pl2p, int32_t *pls, double *pdg, int nals, int unseen)
{
    int j = 0;
    double sum = 0;
    for (int ia = 0; ia < nals; ia++)
        for (int ib = 0; ib <= ia; ib++) {
            if (pls[j] == bcf_int32_missing) {
                int k = bcf_alleles2gt(ia, unseen);
                if (pls[k] == bcf_int32_missing)
                    k = bcf_alleles2gt(ib, unseen);
                if (pls[k] == bcf_int32_missing)
                    k = bcf_alleles2gt(unseen, unseen);
                pls[j] = pls[k] == bcf_int32_missing ? 255 : pls[k];
            }
            pdg[j] = pl2p[pls[j]];
            sum += pdg[j];
            j++;
        }
    return sum;
}

static void ref_set_pdg(const double *pl2p, int32_t *pls, double *pdg, int n_smpl, int n_gt,
                        int unseen)
{
    int i, j, nals;
    bcf_gt2alleles(n_gt - 1, &i, &nals);
    nals++;
    for (i = 0; i < n_smpl; i++) {
        double sum = 0;
        for (j = 0; j < n_gt; j++) {
            if (pls[j] == bcf_int32_vector_end) {
                j = 0;
                break;
            }
            if (pls[j] == bcf_int32_missing)
                break;
            pdg[j] = pls[j] < 256 ? pl2p[pls[j]] : pow(10., -pls[j] / 10.);
            sum += pdg[j];
        }
        if (j == 0) {
            j = sum = n_gt;
        } else if (j < n_gt && unseen < 0) {
            sum = 0;
            for (j = 0; j < n_gt; j++) {
                if (pls[j] == bcf_int32_missing)
                    pls[j] = 255;
                pdg[j] = pls[j] < 256 ? pl2p[pls[j]] : pow(10., -pls[j] / 10.);
                sum += pdg[j];
            }
        }
        if (j < n_gt)
            sum = ref_fill_missing(pl2p, pls, pdg, nals, unseen);
        for (j = 0; j < n_gt; j++)
            pdg[j] = sum == n_gt ? 0 : pdg[j] / sum;
        pls += n_gt;
        pdg += n_gt;
    }
}

static double ref_logsumexp2(double a, double b)
{
    if (a > b)
        return log(1 + exp(b - a)) + a;
    return log(1 + exp(a - b)) + b;
}

/* UPDATE_MAX_LKs */
typedef struct {
    double max_lk, lk_sum;
    int max_als;
} ref_max_t;

static void ref_update(ref_max_t *m, int als, double lk_tot, int lk_tot_set, int sum)
{
    if (m->max_lk < lk_tot && lk_tot_set) {
        m->max_lk = lk_tot;
        m->max_als = als;
    }
    if (sum)
        m->lk_sum = ref_logsumexp2(lk_tot, m->lk_sum);
}

static void ref_one_allele(const ref_t *R, ref_grp_t *grp, int nals, ref_max_t *m, double *ref_lk)
{
    int ngts = nals * (nals + 1) / 2;
    for (int ia = 0; ia < nals; ia++) {
        double lk_tot = 0;
        int lk_tot_set = 0, iaa = (ia + 1) * (ia + 2) / 2 - 1;
        for (int is = 0; is < grp->nsmpl; is++) {
            const double *pdg = R->pdg + grp->smpl[is] * ngts + iaa;
            if (*pdg) {
                lk_tot += log(*pdg);
                lk_tot_set = 1;
            }
        }
        if (ia == 0)
            *ref_lk = lk_tot;
        else
            lk_tot += R->theta;
        ref_update(m, 1 << ia, lk_tot, lk_tot_set, ia > 0 && lk_tot_set);
    }
}

static void ref_two_alleles(const ref_t *R, const uint8_t *ploidy, ref_grp_t *grp, int nals,
                            ref_max_t *m)
{
    int ngts = nals * (nals + 1) / 2;
    for (int ia = 0; ia < nals; ia++) {
        if (grp->qsum[ia] == 0)
            continue;
        int iaa = (ia + 1) * (ia + 2) / 2 - 1;
        for (int ib = 0; ib < ia; ib++) {
            if (grp->qsum[ib] == 0)
                continue;
            double lk_tot = 0;
            int lk_tot_set = 0;
            double fa = grp->qsum[ia] / (grp->qsum[ia] + grp->qsum[ib]);
            double fb = grp->qsum[ib] / (grp->qsum[ia] + grp->qsum[ib]);
            double fa2 = fa * fa, fb2 = fb * fb, fab = 2 * fa * fb;
            int ibb = (ib + 1) * (ib + 2) / 2 - 1, iab = iaa - ia + ib;
            for (int is = 0; is < grp->nsmpl; is++) {
                int ismpl = grp->smpl[is];
                const double *pdg = R->pdg + ismpl * ngts;
                double val = 0;
                if (ploidy[ismpl] == 2)
                    val = fa2 * pdg[iaa] + fb2 * pdg[ibb] + fab * pdg[iab];
                else if (ploidy[ismpl] == 1)
                    val = fa * pdg[iaa] + fb * pdg[ibb];
                if (val) {
                    lk_tot += log(val);
                    lk_tot_set = 1;
                }
            }
            if (ia != 0)
                lk_tot += R->theta;
            if (ib != 0)
                lk_tot += R->theta;
            ref_update(m, 1 << ia | 1 << ib, lk_tot, lk_tot_set, lk_tot_set);
        }
    }
}

static double ref_three_lk(const ref_t *R, const uint8_t *ploidy, const ref_grp_t *grp, int ngts,
                           int ia, int ib, int ic, int *lk_tot_set)
{
    const float *q = grp->qsum;
    int iaa = (ia + 1) * (ia + 2) / 2 - 1, ibb = (ib + 1) * (ib + 2) / 2 - 1, iab = iaa - ia + ib;
    double fa = q[ia] / (q[ia] + q[ib] + q[ic]);
    double fb = q[ib] / (q[ia] + q[ib] + q[ic]);
    double fc = q[ic] / (q[ia] + q[ib] + q[ic]);
    double fa2 = fa * fa, fb2 = fb * fb, fc2 = fc * fc;
    double fab = 2 * fa * fb, fac = 2 * fa * fc, fbc = 2 * fb * fc;
    int icc = (ic + 1) * (ic + 2) / 2 - 1, iac = iaa - ia + ic, ibc = ibb - ib + ic;
    double lk_tot = 0;
    for (int is = 0; is < grp->nsmpl; is++) {
        int ismpl = grp->smpl[is];
        const double *pdg = R->pdg + ismpl * ngts;
        double val = 0;
        if (ploidy[ismpl] == 2)
            val = fa2 * pdg[iaa] + fb2 * pdg[ibb] + fc2 * pdg[icc] + fab * pdg[iab] +
                  fac * pdg[iac] + fbc * pdg[ibc];
        else if (ploidy[ismpl] == 1)
            val = fa * pdg[iaa] + fb * pdg[ibb] + fc * pdg[icc];
        if (val) {
            lk_tot += log(val);
            *lk_tot_set = 1;
        }
    }
    return lk_tot;
}

static void ref_three_alleles(const ref_t *R, const uint8_t *ploidy, ref_grp_t *grp, int nals,
                              ref_max_t *m)
{
    int ngts = nals * (nals + 1) / 2;
    for (int ia = 0; ia < nals; ia++) {
        if (grp->qsum[ia] == 0)
            continue;
        for (int ib = 0; ib < ia; ib++) {
            if (grp->qsum[ib] == 0)
                continue;
            for (int ic = 0; ic < ib; ic++) {
                if (grp->qsum[ic] == 0)
                    continue;
                int lk_tot_set = 0;
                double lk_tot = ref_three_lk(R, ploidy, grp, ngts, ia, ib, ic, &lk_tot_set);
                if (ia != 0)
                    lk_tot += R->theta;
                if (ib != 0)
                    lk_tot += R->theta;
                if (ic != 0)
                    lk_tot += R->theta;
                ref_update(m, 1 << ia | 1 << ib | 1 << ic, lk_tot, lk_tot_set, lk_tot_set);
            }
        }
    }
}

/* mcall_find_best_alleles */
static void ref_best_alleles(const ref_t *R, const uint8_t *ploidy, ref_grp_t *grp, int nals)
{
    ref_max_t m = {-HUGE_VAL, -HUGE_VAL, 0};
    double ref_lk = -HUGE_VAL;
    ref_one_allele(R, grp, nals, &m, &ref_lk);
    if (nals > 1)
        ref_two_alleles(R, ploidy, grp, nals, &m);
    if (nals > 2)
        ref_three_alleles(R, ploidy, grp, nals, &m);
    int n = 0;
    for (int i = 0; i < nals; i++)
        if (m.max_als & 1 << i)
            n++;
    grp->max_lk = m.max_lk;
    grp->ref_lk = ref_lk;
    grp->lk_sum = m.lk_sum;
    grp->als = m.max_als;
    grp->nals = n;
}

/* mcall_set_ref_genotypes */
static void ref_ref_genotypes(ref_t *R, const uint8_t *ploidy, int nsmpl, int nals_ori)
{
    int i, ngts = nals_ori * (nals_ori + 1) / 2;
    for (i = 0; i < nals_ori; i++)
        R->ac[i] = 0;
    int32_t *gts = R->gts;
    const double *pdg = R->pdg;
    for (int is = 0; is < nsmpl; is++, gts += 2, pdg += ngts) {
        int pl = ploidy[is];
        for (i = 0; i < ngts; i++)
            if (pdg[i] != 0.0)
                break;
        if (i == ngts || !pl) {
            gts[0] = bcf_gt_missing;
            gts[1] = pl == 2 ? bcf_gt_missing : bcf_int32_vector_end;
        } else {
            gts[0] = bcf_gt_unphased(0);
            gts[1] = pl == 2 ? bcf_gt_unphased(0) : bcf_int32_vector_end;
            R->ac[0] += pl;
        }
    }
}

/* mcall_call_genotypes, first part: one sample's genotype and its weights in gps. */
static void ref_sample_gt(ref_t *R, const ref_grp_t *grp, int pl, const double *pdg, int ngts_ori,
                          int nals_ori, float *gps, int32_t *gts)
{
    int i, ia, ib;
    if (!pl) {
        gts[0] = bcf_gt_missing, gts[1] = bcf_int32_vector_end, gps[0] = -1;
        return;
    }
    for (i = 0; i < ngts_ori; i++)
        if (pdg[i] != 0.0)
            break;
    if (i == ngts_ori) {
        gts[0] = bcf_gt_missing;
        gts[1] = pl == 2 ? bcf_gt_missing : bcf_int32_vector_end;
        gps[0] = -1;
        return;
    }
    gts[0] = bcf_gt_unphased(0);
    gts[1] = pl == 2 ? bcf_gt_unphased(0) : bcf_int32_vector_end;
    double best_lk = 0;
    for (ia = 0; ia < nals_ori; ia++) {
        if (!(grp->als & 1 << ia))
            continue;
        int iaa = (ia + 1) * (ia + 2) / 2 - 1;
        double lk = pl == 2 ? pdg[iaa] * grp->qsum[ia] * grp->qsum[ia] : pdg[iaa] * grp->qsum[ia];
        int igt = pl == 2 ? bcf_alleles2gt(R->als_map[ia], R->als_map[ia]) : R->als_map[ia];
        gps[igt] = lk;
        if (best_lk < lk) {
            best_lk = lk;
            gts[0] = bcf_gt_unphased(R->als_map[ia]);
        }
    }
    if (pl != 2) {
        gts[1] = bcf_int32_vector_end;
        goto count;
    }
    gts[1] = gts[0];
    for (ia = 0; ia < nals_ori; ia++) {
        if (!(grp->als & 1 << ia))
            continue;
        int iaa = (ia + 1) * (ia + 2) / 2 - 1;
        for (ib = 0; ib < ia; ib++) {
            if (!(grp->als & 1 << ib))
                continue;
            double lk = 2 * pdg[iaa - ia + ib] * grp->qsum[ia] * grp->qsum[ib];
            gps[bcf_alleles2gt(R->als_map[ia], R->als_map[ib])] = lk;
            if (best_lk < lk) {
                best_lk = lk;
                gts[0] = bcf_gt_unphased(R->als_map[ib]);
                gts[1] = bcf_gt_unphased(R->als_map[ia]);
            }
        }
    }
count:
    R->ac[bcf_gt_allele(gts[0])]++;
    if (gts[1] != bcf_int32_vector_end)
        R->ac[bcf_gt_allele(gts[1])]++;
}

/* mcall_call_genotypes, second part (GQ and GP both asked for). */
static void ref_sample_gq(ref_t *R, const ref_grp_t *grp, int pl, int ismpl, int ngts_new)
{
    float *gps = R->GPs + ismpl * ngts_new;
    int i, nmax = pl == 2 ? ngts_new : pl == 1 ? grp->nals : 0;
    double max = gps[0], sum;
    if (max < 0 || nmax == 0) {
        for (i = 0; i < nmax; i++)
            gps[i] = 0;
        if (nmax == 0) {
            bcf_float_set_missing(gps[i]);
            nmax++;
        }
        if (nmax < ngts_new)
            bcf_float_set_vector_end(gps[nmax]);
        R->GQs[ismpl] = 0;
        return;
    }
    sum = gps[0];
    for (i = 1; i < nmax; i++) {
        if (max < gps[i])
            max = gps[i];
        sum += gps[i];
    }
    max = -4.34294 * log(1 - max / sum);
    R->GQs[ismpl] = max <= INT8_MAX ? max : INT8_MAX;
    for (i = 0; i < nmax; i++)
        gps[i] = gps[i] / sum;
    for (; i < ngts_new; i++)
        bcf_float_set_vector_end(gps[i]);
}

static void ref_call_genotypes(ref_t *R, const uint8_t *ploidy, int nals_ori, const ref_grp_t *grp)
{
    int ngts_ori = nals_ori * (nals_ori + 1) / 2, ngts_new = R->nals_new * (R->nals_new + 1) / 2;
    for (int is = 0; is < grp->nsmpl; is++) {
        int ismpl = grp->smpl[is];
        ref_sample_gt(R, grp, ploidy[ismpl], R->pdg + ismpl * ngts_ori, ngts_ori, nals_ori,
                      R->GPs + ismpl * ngts_new, R->gts + ismpl * 2);
    }
    for (int is = 0; is < grp->nsmpl; is++)
        ref_sample_gq(R, grp, ploidy[grp->smpl[is]], grp->smpl[is], ngts_new);
}

/* init_allele_trimming_maps */
static void ref_trim_maps(ref_t *R, int nals_ori, int als_out)
{
    int i, j, nout = 0, k = 0, l = 0;
    for (i = 0; i < nals_ori; i++)
        R->als_map[i] = als_out & (1 << i) ? nout++ : -1;
    for (i = 0; i < nals_ori; i++)
        for (j = 0; j <= i; j++) {
            if ((als_out & (1 << i)) && (als_out & (1 << j)))
                R->pl_map[k++] = l;
            l++;
        }
}

/* mcall_trim_and_update_PLs (all_diploid's shortcut leaves the same values) */
static void ref_trim_pls(ref_t *R, const uint8_t *ploidy, int nsmpl, int nals_ori, int nals_new)
{
    int npls_src = nals_ori * (nals_ori + 1) / 2, npls_dst = nals_new * (nals_new + 1) / 2, ia;
    int32_t *src = R->pl, *dst = R->pl;
    for (int is = 0; is < nsmpl; is++, src += npls_src, dst += npls_dst) {
        if (ploidy[is] == 2) {
            for (ia = 0; ia < npls_dst; ia++)
                dst[ia] = src[R->pl_map[ia]];
        } else if (ploidy[is] == 1) {
            for (ia = 0; ia < nals_new; ia++)
                dst[ia] = src[R->pl_map[(ia + 1) * (ia + 2) / 2 - 1]];
            if (ia < npls_dst)
                dst[ia] = bcf_int32_vector_end;
        } else {
            dst[0] = bcf_int32_missing;
            dst[1] = bcf_int32_vector_end;
        }
    }
    R->n_pl = npls_dst * nsmpl;
}

/* The groups' allele frequencies: INFO/QS, or -G's FORMAT/AD shares; normalised in float. */
static void ref_freqs(const cm_case_t *c, ref_t *R)
{
    int nals_ori = c->nals, i, j;
    if (c->n_grp == 1) {
        for (i = 0; i < nals_ori; i++)
            R->grp[0].qsum[i] = i < c->nqs ? c->qs[i] : 0;
    } else {
        for (int g = 0; g < c->n_grp; g++) {
            ref_grp_t *grp = &R->grp[g];
            for (j = 0; j < nals_ori; j++)
                grp->qsum[j] = 0;
            for (int is = 0; is < grp->nsmpl; is++) {
                const int32_t *ptr = c->ad + grp->smpl[is] * nals_ori;
                float sum = 0;
                for (j = 0; j < nals_ori && ptr[j] != bcf_int32_vector_end; j++)
                    if (ptr[j] != bcf_int32_missing)
                        sum += ptr[j];
                if (!sum)
                    continue;
                for (j = 0; j < nals_ori && ptr[j] != bcf_int32_vector_end; j++)
                    if (ptr[j] != bcf_int32_missing)
                        grp->qsum[j] += ptr[j] / sum;
            }
        }
    }
    for (j = 0; j < c->n_grp; j++) {
        float sum = 0;
        for (i = 0; i < nals_ori; i++)
            sum += R->grp[j].qsum[i];
        if (sum)
            for (i = 0; i < nals_ori; i++)
                R->grp[j].qsum[i] /= sum;
    }
}

/* mcall's choice of alleles and QUAL's likelihoods; returns whether an ALT was chosen. */
static int ref_choose(const cm_case_t *c, ref_t *R, double lk[3])
{
    double ref_lk = -HUGE_VAL, lk_sum = -HUGE_VAL, max_qual = -HUGE_VAL;
    R->als_new = 0;
    for (int j = 0; j < c->n_grp; j++) {
        ref_grp_t *grp = &R->grp[j];
        ref_best_alleles(R, c->ploidy, grp, c->nals);
        R->als_new |= grp->als;
        if (grp->max_lk == -HUGE_VAL)
            continue;
        double qual = -4.343 * (grp->ref_lk - ref_logsumexp2(grp->lk_sum, grp->ref_lk));
        if (max_qual < qual) {
            max_qual = qual;
            lk_sum = grp->lk_sum;
            ref_lk = grp->ref_lk;
        }
    }
    if (!(R->als_new & 1))
        R->als_new |= 1;
    R->nals_new = 0;
    int is_variant = R->als_new == 1 ? 0 : 1;
    for (int i = 0; i < c->nals; i++) {
        if (i > 0 && i == c->unseen)
            continue;
        if (c->keep_alts)
            R->als_new |= 1 << i;
        if (R->als_new & (1 << i))
            R->nals_new++;
    }
    lk[0] = ref_lk, lk[1] = lk_sum, lk[2] = max_qual;
    return is_variant;
}

static void ref_mcall(const cm_case_t *c, ref_t *R)
{
    int nsmpl = c->nsmpl, nals_ori = c->nals, ngts_ori = nals_ori * (nals_ori + 1) / 2, n_hap = 0;
    for (int s = 0; s < nsmpl; s++)
        n_hap += c->ploidy[s];
    R->theta = ref_prior(c->opt_theta, n_hap);
    memcpy(R->pl, c->pl, sizeof(*R->pl) * nsmpl * ngts_ori);
    ref_set_pdg(R->pl2p, R->pl, R->pdg, nsmpl, ngts_ori, c->unseen);
    for (int g = 0; g < c->n_grp; g++)
        R->grp[g].nsmpl = 0;
    for (int s = 0; s < nsmpl; s++) {
        ref_grp_t *grp = &R->grp[c->grp_of[s]];
        grp->smpl[grp->nsmpl++] = s;
    }
    ref_freqs(c, R);
    double lk[3];
    int is_variant = ref_choose(c, R, lk), nAC = 0;
    ref_trim_maps(R, nals_ori, R->als_new);
    R->has_gp = 0;
    R->n_pl = 0;
    if (R->als_new == 1) {
        ref_ref_genotypes(R, c->ploidy, nsmpl, nals_ori);
    } else if (!is_variant) {
        ref_ref_genotypes(R, c->ploidy, nsmpl, nals_ori);
        ref_trim_pls(R, c->ploidy, nsmpl, nals_ori, R->nals_new);
    } else {
        int ngts_new = R->nals_new * (R->nals_new + 1) / 2;
        for (int i = 0; i < R->nals_new; i++)
            R->ac[i] = 0;
        memset(R->GPs, 0, nsmpl * ngts_new * sizeof(*R->GPs));
        memset(R->GQs, 0, nsmpl * sizeof(*R->GQs));
        for (int g = 0; g < c->n_grp; g++)
            ref_call_genotypes(R, c->ploidy, nals_ori, &R->grp[g]);
        for (int i = 1; i < R->nals_new; i++)
            nAC += R->ac[i];
        R->has_gp = 1;
        ref_trim_pls(R, c->ploidy, nsmpl, nals_ori, R->nals_new);
    }
    if (nAC)
        R->qual = lk[2];
    else if (lk[1] != -HUGE_VAL)
        R->qual = -4.343 * (lk[1] - ref_logsumexp2(lk[1], lk[0]));
    else if (R->ac[0])
        R->qual = R->theta ? -4.343 * R->theta : 0;
    else
        bcf_float_set_missing(R->qual);
    R->an = nAC + R->ac[0];
    R->ret = R->nals_new;
}

/* ---- ours: mc_multi_call on a record, with a caller set up by hand ---------------------- */

typedef struct {
    mc_opts_t o;
    mc_caller_t c;
    mc_group_t grp[CM_MAX_GRP];
    bcf_hdr_t *hdr[CM_MAX_SMPL + 1]; /* by sample count, made when first needed */
    bcf1_t *rec;
    ref_t ref;
    int32_t *buf;
    int mbuf;
} cm_state_t;

static const char *const cm_hdr_lines[] = {
    "##contig=<ID=chr1,length=1000000>",
    "##INFO=<ID=QS,Number=R,Type=Float,Description=\"QS\">",
    "##INFO=<ID=I16,Number=16,Type=Float,Description=\"I16\">",
    "##FORMAT=<ID=PL,Number=G,Type=Integer,Description=\"PL\">",
    "##FORMAT=<ID=AD,Number=R,Type=Integer,Description=\"AD\">",
};

static bcf_hdr_t *cm_header(cm_state_t *st, int nsmpl)
{
    if (st->hdr[nsmpl])
        return st->hdr[nsmpl];
    bcf_hdr_t *h = bcf_hdr_init("w");
    int ok = h != NULL;
    for (size_t i = 0; ok && i < sizeof(cm_hdr_lines) / sizeof(cm_hdr_lines[0]); i++)
        ok = bcf_hdr_append(h, cm_hdr_lines[i]) == 0;
    ok = ok && mc_multi_header(&st->o, h) == 0;
    for (int s = 0; ok && s < nsmpl; s++) {
        char name[16];
        snprintf(name, sizeof name, "s%d", s);
        ok = bcf_hdr_add_sample(h, name) == 0;
    }
    if (!ok || bcf_hdr_sync(h) < 0) {
        fprintf(stderr, "ssdiff: cannot make a VCF header\n");
        exit(2);
    }
    return st->hdr[nsmpl] = h;
}

static void cm_record(cm_state_t *st, const cm_case_t *k, bcf_hdr_t *h)
{
    static const char *const alts[] = {"C", "G", "T", "AT"};
    const char *als[CM_MAX_ALS] = {"A"};
    for (int i = 1; i < k->nals; i++)
        als[i] = i == k->unseen ? "<*>" : alts[i - 1];
    bcf1_t *rec = st->rec;
    bcf_clear(rec);
    rec->rid = 0;
    rec->pos = 99;
    int ngts = k->nals * (k->nals + 1) / 2;
    if (bcf_update_alleles(h, rec, als, k->nals) < 0 ||
        bcf_update_info_float(h, rec, "QS", k->qs, k->nqs) < 0 ||
        bcf_update_format_int32(h, rec, "PL", k->pl, k->nsmpl * ngts) < 0 ||
        (k->n_grp > 1 && bcf_update_format_int32(h, rec, "AD", k->ad, k->nsmpl * k->nals) < 0)) {
        fprintf(stderr, "ssdiff: cannot make a record\n");
        exit(2);
    }
}

/* Runs mc_multi_call on the case's record; returns what it returned. */
static int cm_ours(cm_state_t *st, const cm_case_t *k)
{
    mc_caller_t *c = &st->c;
    int n_hap = 0;
    for (int s = 0; s < k->nsmpl; s++)
        n_hap += k->ploidy[s];
    st->o.keep_alts = k->keep_alts;
    st->o.theta = k->opt_theta;
    c->hdr = cm_header(st, k->nsmpl);
    c->nsmpl = k->nsmpl;
    memcpy(c->ploidy, k->ploidy, k->nsmpl);
    c->unseen = k->unseen;
    c->theta = mc_multi_prior(&st->o, n_hap, 0);
    c->n_grp = k->n_grp;
    c->grp_tag = k->n_grp > 1 ? "AD" : NULL;
    for (int g = 0; g < k->n_grp; g++)
        st->grp[g].nsmpl = 0;
    for (int s = 0; s < k->nsmpl; s++) {
        mc_group_t *g = &st->grp[k->grp_of[s]];
        g->smpl[g->nsmpl++] = s;
    }
    for (int i = 0; i < CM_GP_CAP; i++)
        c->GPs[i] = k->poison;
    cm_record(st, k, c->hdr);
    if (bcf_unpack(st->rec, BCF_UN_ALL) < 0)
        exit(2);
    return mc_multi_call(c, st->rec);
}

/* ---- comparing ------------------------------------------------------------------------- */

/* What htslib gives back for a vector: after a vector end, only vector ends. */
static void pad_ints(int32_t *v, int n, int width)
{
    for (int i = 0; i < n; i += width)
        for (int j = 0, end = 0; j < width; j++)
            end =
                end || v[i + j] == bcf_int32_vector_end ? (v[i + j] = bcf_int32_vector_end, 1) : 0;
}

static void pad_floats(float *v, int n, int width)
{
    for (int i = 0; i < n; i += width)
        for (int j = 0, end = 0; j < width; j++) {
            end = end || bcf_float_is_vector_end(v[i + j]);
            if (end)
                bcf_float_set_vector_end(v[i + j]);
        }
}

/* Whether the record's tag holds exactly want[0..n) (n 0: the tag must be absent). */
static int same_ints(cm_state_t *st, int is_fmt, const char *tag, const int32_t *want, int n)
{
    bcf_hdr_t *h = st->c.hdr;
    int got = is_fmt ? bcf_get_format_int32(h, st->rec, tag, &st->buf, &st->mbuf)
                     : bcf_get_info_int32(h, st->rec, tag, &st->buf, &st->mbuf);
    if (n == 0)
        return got < 0;
    return got == n && memcmp(st->buf, want, n * sizeof(*want)) == 0;
}

/* The first field where ours and bcftools' differ, or NULL. */
static const char *cm_differs(cm_state_t *st, const cm_case_t *k, int ret)
{
    ref_t *R = &st->ref;
    for (int i = 0; i < CM_GP_CAP; i++)
        R->GPs[i] = k->poison;
    ref_mcall(k, R);
    int nsmpl = k->nsmpl, ngts_new = R->nals_new * (R->nals_new + 1) / 2;
    if (ret != R->ret)
        return "return value";
    if (memcmp(&st->rec->qual, &R->qual, sizeof(float)) != 0)
        return "QUAL";
    if (st->rec->n_allele != R->nals_new)
        return "alleles";
    int an = R->an;
    if (!same_ints(st, 1, "GT", R->gts, 2 * nsmpl) || !same_ints(st, 0, "AN", &an, 1))
        return "GT or AN";
    if (!same_ints(st, 0, "AC", R->ac + 1, R->nals_new - 1))
        return "AC";
    pad_ints(R->pl, R->n_pl, ngts_new);
    if (!same_ints(st, 1, "PL", R->pl, R->n_pl))
        return "PL";
    if (!same_ints(st, 1, "GQ", R->GQs, R->has_gp ? nsmpl : 0))
        return "GQ";
    int n = bcf_get_format_float(st->c.hdr, st->rec, "GP", &st->buf, &st->mbuf);
    if (!R->has_gp)
        return n < 0 ? NULL : "GP present";
    pad_floats(R->GPs, nsmpl * ngts_new, ngts_new);
    if (n != nsmpl * ngts_new || memcmp(st->buf, R->GPs, n * sizeof(float)) != 0) {
        return "GP";
    }
    return NULL;
}

static void print_ints(FILE *f, const char *name, const int32_t *v, int n)
{
    fprintf(f, "    int32_t %s[] = {", name);
    for (int i = 0; i < n; i++) {
        if (v[i] == bcf_int32_missing)
            fputs("bcf_int32_missing", f);
        else if (v[i] == bcf_int32_vector_end)
            fputs("bcf_int32_vector_end", f);
        else
            fprintf(f, "%d", v[i]);
        fputs(i + 1 < n ? (i % 16 == 15 ? ",\n        " : ", ") : "", f);
    }
    fputs("};\n", f);
}

/* The case as C a unit test can start from. */
static void cm_print(FILE *f, const cm_case_t *k)
{
    int32_t v[CM_MAX_SMPL];
    fprintf(f,
            "    /* nsmpl %d, nals %d (unseen %d), groups %d (FORMAT/AD when > 1), -A %d, "
            "-P %.17g, stale GP memory %.9g */\n",
            k->nsmpl, k->nals, k->unseen, k->n_grp, k->keep_alts, k->opt_theta, k->poison);
    for (int s = 0; s < k->nsmpl; s++)
        v[s] = k->ploidy[s];
    print_ints(f, "ploidy", v, k->nsmpl);
    print_ints(f, "group", k->grp_of, k->nsmpl);
    print_ints(f, "PL", k->pl, k->nsmpl * k->nals * (k->nals + 1) / 2);
    if (k->n_grp > 1)
        print_ints(f, "AD", k->ad, k->nsmpl * k->nals);
    fputs("    float QS[] = {", f);
    for (int i = 0; i < k->nqs; i++)
        fprintf(f, "%.9gf%s", k->qs[i], i + 1 < k->nqs ? ", " : "");
    fputs("};\n", f);
}

/* Drops samples, last first, while the case still differs. */
static void cm_shrink(cm_state_t *st, cm_case_t *k)
{
    for (int s = k->nsmpl - 1; s >= 0 && k->nsmpl > 1; s--) {
        cm_case_t *t = malloc(sizeof(*t));
        *t = *k;
        int ngts = k->nals * (k->nals + 1) / 2;
        t->nsmpl--;
        for (int i = s; i < t->nsmpl; i++) {
            t->ploidy[i] = k->ploidy[i + 1], t->grp_of[i] = k->grp_of[i + 1];
            memcpy(t->pl + i * ngts, k->pl + (i + 1) * ngts, ngts * sizeof(int32_t));
            memcpy(t->ad + i * k->nals, k->ad + (i + 1) * k->nals, k->nals * sizeof(int32_t));
        }
        if (cm_differs(st, t, cm_ours(st, t)))
            *k = *t;
        free(t);
    }
}

static cm_state_t *cm_init(void)
{
    cm_state_t *st = calloc(1, sizeof(*st));
    if (!st || !(st->rec = bcf_init())) {
        fprintf(stderr, "ssdiff: out of memory\n");
        exit(2);
    }
    st->o.model = MC_MODEL_MULTI;
    st->o.annots = MC_ANN_GQ | MC_ANN_GP;
    mc_caller_t *c = &st->c;
    c->o = &st->o;
    c->grp = st->grp;
    c->ploidy = calloc(CM_MAX_SMPL + 1, 1);
    c->gts = calloc(2 * CM_MAX_SMPL + 1, sizeof(*c->gts));
    c->GQs = calloc(CM_MAX_SMPL + 1, sizeof(*c->GQs));
    for (int g = 0; g < CM_MAX_GRP; g++)
        st->grp[g].smpl = calloc(CM_MAX_SMPL, sizeof(int));
    if (mc_grow(&c->GPs, &c->mGPs, CM_GP_CAP, sizeof(float)) < 0) {
        fprintf(stderr, "ssdiff: out of memory\n");
        exit(2);
    }
    for (int i = 0; i < 256; i++)
        c->pl2p[i] = st->ref.pl2p[i] = pow(10., -i / 10.);
    return st;
}

static void cm_free(cm_state_t *st)
{
    mc_caller_t *c = &st->c;
    void *bufs[] = {c->ploidy, c->gts,     c->GQs,     c->PLs,    c->pdg,
                    c->ac,     c->als_map, c->pl_map,  c->als,    c->GPs,
                    c->ADs,    c->tmp_ori, c->tmp_new, c->anno16, st->buf};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        free(bufs[i]);
    for (int g = 0; g < CM_MAX_GRP; g++)
        free(st->grp[g].smpl), free(st->grp[g].qsum);
    for (int n = 0; n <= CM_MAX_SMPL; n++)
        if (st->hdr[n])
            bcf_hdr_destroy(st->hdr[n]);
    bcf_destroy(st->rec);
    free(st);
}

void diff_call_multi(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    cm_state_t *st = cm_init();
    cm_case_t *k = malloc(sizeof(*k));
    for (uint64_t i = first; i < first + n; i++) {
        diff_rng_t r;
        diff_rng_init(&r, seed, "call-m", i);
        gen_case(&r, k);
        t->cases++;
        if (!cm_differs(st, k, cm_ours(st, k)))
            continue;
        cm_shrink(st, k);
        const char *what = cm_differs(st, k, cm_ours(st, k));
        if (diff_report(t, "call-m", seed, i,
                        "%s differs from bcftools' mcall (shrunk to %d "
                        "samples)",
                        what ? what : "(not after shrinking)", k->nsmpl))
            cm_print(t->log, k);
    }
    free(k);
    cm_free(st);
}

/* ---- call -c: the site's EM (em.c's bcf_em1 with kmin.c's kmin_brent), transcribed ------ */

#define EM_MAX_SMPL 300

typedef struct {
    int beg, end;
    const double *pdg;
} em_aux_t;

static double em_est_freq(int n, const double *pdg)
{
    int gcnt[3] = {0, 0, 0}, tmp1;
    for (int i = 0; i < n; ++i) {
        const double *p = pdg + i * 3;
        if (p[0] != 1. || p[1] != 1. || p[2] != 1.) {
            int which = p[0] > p[1] ? 0 : 1;
            which = p[which] > p[2] ? which : 2;
            ++gcnt[which];
        }
    }
    tmp1 = gcnt[0] + gcnt[1] + gcnt[2];
    return tmp1 == 0 ? -1.0 : (.5 * gcnt[1] + gcnt[2]) / tmp1;
}

static double em_prob1(double f, const em_aux_t *a)
{
    double p = 1., l = 0., f3[3];
    if (f < 0 || f > 1)
        return 1e300;
    f3[0] = (1. - f) * (1. - f), f3[1] = 2. * f * (1. - f), f3[2] = f * f;
    for (int i = a->beg; i < a->end; ++i) {
        const double *pdg = a->pdg + i * 3;
        p *= pdg[0] * f3[0] + pdg[1] * f3[1] + pdg[2] * f3[2];
        if (p < 1e-200)
            l -= log(p), p = 1.;
    }
    return l - log(p);
}

static double em_freq_iter(double *f, const double *pdg_all, int beg, int end)
{
    double f0 = *f, f3[3], err;
    f3[0] = (1. - f0) * (1. - f0), f3[1] = 2. * f0 * (1. - f0), f3[2] = f0 * f0;
    f0 = 0.;
    for (int i = beg; i < end; ++i) {
        const double *pdg = pdg_all + i * 3;
        f0 += (pdg[1] * f3[1] + 2. * pdg[2] * f3[2]) /
              (pdg[0] * f3[0] + pdg[1] * f3[1] + pdg[2] * f3[2]);
    }
    f0 /= (end - beg) * 2;
    err = fabs(f0 - *f);
    *f = f0;
    return err;
}

/* kmin_brent's bracketing: a, b, c with f(b) below f(a) and f(c). */
static void em_bracket(const em_aux_t *d, double *pa, double *pb, double *pc, double *pfb)
{
    const double gold1 = 1.6180339887, tiny = 1e-20;
    double a = *pa, b = *pb, c, fa, fb, fc, u, fu, r, q, tmp, bound;
    fa = em_prob1(a, d), fb = em_prob1(b, d);
    if (fb > fa)
        tmp = a, a = b, b = tmp, tmp = fa, fa = fb, fb = tmp;
    c = b + gold1 * (b - a), fc = em_prob1(c, d);
    while (fb > fc) {
        bound = b + 100.0 * (c - b);
        r = (b - a) * (fb - fc);
        q = (b - c) * (fb - fa);
        if (fabs(q - r) < tiny)
            tmp = q > r ? tiny : 0.0 - tiny;
        else
            tmp = q - r;
        u = b - ((b - c) * q - (b - a) * r) / (2.0 * tmp);
        if ((b > u && u > c) || (b < u && u < c)) {
            fu = em_prob1(u, d);
            if (fu < fc) {
                a = b, b = u, fa = fb, fb = fu;
                break;
            } else if (fu > fb) {
                c = u, fc = fu;
                break;
            }
            u = c + gold1 * (c - b), fu = em_prob1(u, d);
        } else if ((c > u && u > bound) || (c < u && u < bound)) {
            fu = em_prob1(u, d);
            if (fu < fc) {
                b = c, c = u, u = c + gold1 * (c - b);
                fb = fc, fc = fu, fu = em_prob1(u, d);
            } else {
                a = b, b = c, c = u, fa = fb, fb = fc, fc = fu;
                break;
            }
        } else if ((u > bound && bound > c) || (u < bound && bound < c)) {
            u = bound, fu = em_prob1(u, d);
        } else {
            u = c + gold1 * (c - b), fu = em_prob1(u, d);
        }
        a = b, b = c, c = u, fa = fb, fb = fc, fc = fu;
    }
    *pa = a, *pb = b, *pc = c, *pfb = fb;
}

/* kmin_brent's minimisation; returns xmin. */
static double em_brent(const em_aux_t *dt, double a, double b, double tol)
{
    const double gold2 = 0.3819660113, tiny = 1e-20;
    double c, fb, u, fu, r, q, p, e, d, w, v, mid, tol1, tol2, eold, fv, fw;
    em_bracket(dt, &a, &b, &c, &fb);
    if (a > c)
        u = a, a = c, c = u;
    e = d = 0.0;
    w = v = b, fv = fw = fb;
    for (int iter = 0; iter != 100; ++iter) {
        mid = 0.5 * (a + c);
        tol2 = 2.0 * (tol1 = tol * fabs(b) + tiny);
        if (fabs(b - mid) <= (tol2 - 0.5 * (c - a)))
            return b;
        if (fabs(e) > tol1) {
            r = (b - w) * (fb - fv);
            q = (b - v) * (fb - fw);
            p = (b - v) * q - (b - w) * r;
            q = 2.0 * (q - r);
            if (q > 0.0)
                p = 0.0 - p;
            else
                q = 0.0 - q;
            eold = e, e = d;
            if (fabs(p) >= fabs(0.5 * q * eold) || p <= q * (a - b) || p >= q * (c - b)) {
                d = gold2 * (e = (b >= mid ? a - b : c - b));
            } else {
                d = p / q, u = b + d;
                if (u - a < tol2 || c - u < tol2)
                    d = (mid > b) ? tol1 : 0.0 - tol1;
            }
        } else {
            d = gold2 * (e = (b >= mid ? a - b : c - b));
        }
        u = fabs(d) >= tol1 ? b + d : b + (d > 0.0 ? tol1 : -tol1);
        fu = em_prob1(u, dt);
        if (fu <= fb) {
            if (u >= b)
                a = b;
            else
                c = b;
            v = w, w = b, b = u, fv = fw, fw = fb, fb = fu;
        } else {
            if (u < b)
                a = u;
            else
                c = u;
            if (fu <= fw || w == b)
                v = w, w = u, fv = fw, fw = fu;
            else if (fu <= fv || v == b || v == w)
                v = u, fv = fu;
        }
    }
    return b;
}

static double em_freqml(double f0, int beg, int end, const double *pdg)
{
    int i;
    double f = f0;
    for (i = 0; i < 10; ++i)
        if (em_freq_iter(&f, pdg, beg, end) < 1e-5)
            break;
    if (i == 10) {
        em_aux_t a = {beg, end, pdg};
        f = em_brent(&a, f0 == f ? .5 * f0 : f0, f, 1e-5);
    }
    return f;
}

static double em_g3_iter(double g[3], const double *pdg_all, int beg, int end)
{
    double err, gg[3] = {0., 0., 0.};
    for (int i = beg; i < end; ++i) {
        double sum, tmp[3];
        const double *pdg = pdg_all + i * 3;
        tmp[0] = pdg[0] * g[0], tmp[1] = pdg[1] * g[1], tmp[2] = pdg[2] * g[2];
        sum = (tmp[0] + tmp[1] + tmp[2]) * (end - beg);
        gg[0] += tmp[0] / sum, gg[1] += tmp[1] / sum, gg[2] += tmp[2] / sum;
    }
    err = fabs(gg[0] - g[0]) > fabs(gg[1] - g[1]) ? fabs(gg[0] - g[0]) : fabs(gg[1] - g[1]);
    err = err > fabs(gg[2] - g[2]) ? err : fabs(gg[2] - g[2]);
    g[0] = gg[0], g[1] = gg[1], g[2] = gg[2];
    return err;
}

/* bcf_em1 with the flag ccall.c passes (frequency, genotype frequencies, HWE; no groups). */
static int em_bcf_em1(const double *pdg, int n, int n_allele, double x[10])
{
    int i;
    if (n_allele < 2)
        return -1;
    for (i = 0; i < 10; ++i)
        x[i] = -1.;
    if ((x[0] = em_est_freq(n, pdg)) < 0.)
        return -1;
    x[0] = em_freqml(x[0], 0, n, pdg);
    double *g = x + 1, f3[3], r;
    f3[0] = g[0] = (1 - x[0]) * (1 - x[0]);
    f3[1] = g[1] = 2 * x[0] * (1 - x[0]);
    f3[2] = g[2] = x[0] * x[0];
    for (i = 0; i < 50; ++i)
        if (em_g3_iter(g, pdg, 0, n) < 1e-5)
            break;
    for (i = 0, r = 1.; i < n; ++i) {
        const double *p = pdg + i * 3;
        r *= (p[0] * g[0] + p[1] * g[1] + p[2] * g[2]) /
             (p[0] * f3[0] + p[1] * f3[1] + p[2] * f3[2]);
    }
    x[4] = kf_gammaq(.5, log(r));
    return 0;
}

/* A sample's P(D|G) as ccall.c's set_pdg3 makes them: pl2p of its PLs, ALT/ALT first. */
static void em_gen_sample(diff_rng_t *r, double *p, int mode)
{
    int pl[3];
    for (int j = 0; j < 3; j++)
        pl[j] = mode == 0   ? diff_rng_range(r, 0, 255)
                : mode == 1 ? diff_rng_range(r, 0, 4)
                            : diff_rng_range(r, 0, 40);
    int k = (int)diff_rng_below(r, 8);
    if (k < 5)
        pl[diff_rng_below(r, 3)] = 0;
    else if (k == 5)
        pl[0] = pl[1] = pl[2] = 0; /* no data */
    for (int j = 0; j < 3; j++)
        p[2 - j] = pow(10., -pl[j] / 10.);
    if (mode == 3 && diff_rng_one_in(r, 4)) /* beyond PLs: underflow and exact ties */
        p[diff_rng_below(r, 3)] = diff_rng_one_in(r, 2) ? 1e-300 : 0.;
}

void diff_call_em(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    double *pdg = malloc(sizeof(double) * 3 * EM_MAX_SMPL), ours[10], theirs[10];
    for (uint64_t i = first; i < first + n; i++) {
        diff_rng_t r;
        diff_rng_init(&r, seed, "call-em", i);
        int nsmpl =
            diff_rng_one_in(&r, 3) ? diff_rng_range(&r, 1, EM_MAX_SMPL) : diff_rng_range(&r, 1, 8);
        int mode = (int)diff_rng_below(&r, 4), nal = diff_rng_one_in(&r, 50) ? 1 : 2;
        /* a population: most samples like one another, so EM is slow near 0 and 1 */
        int skew = (int)diff_rng_below(&r, 3);
        for (int s = 0; s < nsmpl; s++) {
            em_gen_sample(&r, pdg + 3 * s, mode);
            if (skew && s > 0 && !diff_rng_one_in(&r, 4 * skew))
                memcpy(pdg + 3 * s, pdg, 3 * sizeof(double));
        }
        t->cases++;
        for (int j = 0; j < 10; j++)
            theirs[j] = -1.; /* ccall.c's em[] starts so */
        int a = mc_em_site(pdg, nsmpl, nal, ours), b = em_bcf_em1(pdg, nsmpl, nal, theirs);
        if (a == b && memcmp(ours, theirs, sizeof(ours)) == 0)
            continue;
        if (!diff_report(t, "call-em", seed, i,
                         "ret %d, bcftools %d; AF %.17g, bcftools %.17g; "
                         "HWE %.17g, bcftools %.17g",
                         a, b, ours[0], theirs[0], ours[4], theirs[4]))
            continue;
        fprintf(t->log, "    /* n_allele %d */\n    double pdg[] = {", nal);
        for (int s = 0; s < 3 * nsmpl; s++)
            fprintf(t->log, "%a%s", pdg[s],
                    s + 1 < 3 * nsmpl ? (s % 3 == 2 ? ",\n        " : ", ") : "};\n");
    }
    free(pdg);
}

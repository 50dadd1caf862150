/*
 * mc_multi_gt.c -- the multiallelic model's arithmetic (bcftools 1.16
 * mcall.c): genotype likelihoods from PL, the most likely set of alleles
 * per sample group, and each sample's genotype with GQ and GP.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

static double pl_to_p(const mc_caller_t *c, int pl)
{
    return pl < 256 ? c->pl2p[pl] : pow(10., -pl / 10.);
}

/*
 * A sample's missing PLs take the likelihood of a genotype with the unseen
 * allele (ia/X, then ib/X, then X/X), or PL 255 when those are missing too.
 * Returns the sum of the resulting P(D|G).
 */
static double fill_missing(mc_caller_t *c, int32_t *pl, double *pdg, int nals, int unseen)
{
    double sum = 0;
    int j = 0;
    for (int ia = 0; ia < nals; ia++) {
        for (int ib = 0; ib <= ia; ib++, j++) {
            if (pl[j] == bcf_int32_missing) {
                int k = bcf_alleles2gt(ia, unseen);
                if (pl[k] == bcf_int32_missing)
                    k = bcf_alleles2gt(ib, unseen);
                if (pl[k] == bcf_int32_missing)
                    k = bcf_alleles2gt(unseen, unseen);
                pl[j] = pl[k] == bcf_int32_missing ? 255 : pl[k];
            }
            pdg[j] = pl_to_p(c, pl[j]);
            sum += pdg[j];
        }
    }
    return sum;
}

/*
 * P(D|G) of every sample from its PLs, normalised to sum 1; all 0 for a
 * sample whose PLs are missing or all equal to 0 (no depth). Missing PLs in
 * c->PLs are filled in place as fill_missing says (bcftools passes its
 * unseen index here, which is 0 when there is none).
 */
void mc_multi_pdg(mc_caller_t *c, int ngts)
{
    int nals = 0, a, unseen = c->unseen;
    bcf_gt2alleles(ngts - 1, &a, &nals);
    nals++;
    int32_t *pl = c->PLs;
    double *pdg = c->pdg;
    for (int s = 0; s < c->nsmpl; s++, pl += ngts, pdg += ngts) {
        double sum = 0;
        int j;
        for (j = 0; j < ngts; j++) {
            if (pl[j] == bcf_int32_vector_end) {
                j = 0; /* not diploid: treated as missing */
                break;
            }
            if (pl[j] == bcf_int32_missing)
                break;
            pdg[j] = pl_to_p(c, pl[j]);
            sum += pdg[j];
        }
        if (j == 0) {
            j = ngts;
            sum = ngts;
        } else if (j < ngts && unseen < 0) {
            sum = 0;
            for (j = 0; j < ngts; j++) {
                if (pl[j] == bcf_int32_missing)
                    pl[j] = 255;
                pdg[j] = pl_to_p(c, pl[j]);
                sum += pdg[j];
            }
        }
        if (j < ngts)
            sum = fill_missing(c, pl, pdg, nals, unseen);
        for (j = 0; j < ngts; j++)
            pdg[j] = sum == ngts ? 0 : pdg[j] / sum;
    }
}

/* Keep the best set of alleles and the sum of all sets' likelihoods (log space). */
typedef struct {
    double max_lk, lk_sum;
    int max_als;
} best_t;

static void consider(best_t *b, int als, double lk, int lk_set, int add_to_sum)
{
    if (b->max_lk < lk && lk_set) {
        b->max_lk = lk;
        b->max_als = als;
    }
    if (add_to_sum)
        b->lk_sum = mc_log_add(lk, b->lk_sum);
}

/* All the group's samples homozygous for one allele each; returns the REF's likelihood. */
static double one_allele(mc_caller_t *c, int nals, const mc_group_t *grp, best_t *b)
{
    int ngts = nals * (nals + 1) / 2;
    double ref_lk = -HUGE_VAL;
    for (int ia = 0; ia < nals; ia++) {
        double lk = 0;
        int lk_set = 0;
        int iaa = (ia + 1) * (ia + 2) / 2 - 1;
        for (int s = 0; s < grp->nsmpl; s++) {
            double p = c->pdg[grp->smpl[s] * ngts + iaa];
            if (p) {
                lk += log(p);
                lk_set = 1;
            }
        }
        if (ia == 0)
            ref_lk = lk;
        else
            lk += c->theta;
        consider(b, 1 << ia, lk, lk_set, ia > 0 && lk_set);
    }
    return ref_lk;
}

/* Alleles ia and ib at the frequencies their quality sums give. */
static void two_alleles(mc_caller_t *c, int nals, const mc_group_t *grp, best_t *b)
{
    int ngts = nals * (nals + 1) / 2;
    const float *q = grp->qsum;
    for (int ia = 0; ia < nals; ia++) {
        if (q[ia] == 0)
            continue;
        int iaa = (ia + 1) * (ia + 2) / 2 - 1;
        for (int ib = 0; ib < ia; ib++) {
            if (q[ib] == 0)
                continue;
            double fa = q[ia] / (q[ia] + q[ib]);
            double fb = q[ib] / (q[ia] + q[ib]);
            double fa2 = fa * fa, fb2 = fb * fb, fab = 2 * fa * fb;
            int ibb = (ib + 1) * (ib + 2) / 2 - 1, iab = iaa - ia + ib;
            double lk = 0;
            int lk_set = 0;
            for (int s = 0; s < grp->nsmpl; s++) {
                int smpl = grp->smpl[s];
                const double *pdg = c->pdg + smpl * ngts;
                double val = 0;
                if (c->ploidy[smpl] == 2)
                    val = fa2 * pdg[iaa] + fb2 * pdg[ibb] + fab * pdg[iab];
                else if (c->ploidy[smpl] == 1)
                    val = fa * pdg[iaa] + fb * pdg[ibb];
                if (val) {
                    lk += log(val);
                    lk_set = 1;
                }
            }
            if (ia != 0)
                lk += c->theta;
            if (ib != 0)
                lk += c->theta;
            consider(b, 1 << ia | 1 << ib, lk, lk_set, lk_set);
        }
    }
}

/* The likelihood of the group's samples given alleles ia > ib > ic (three_alleles). */
static double three_lk(const mc_caller_t *c, int ngts, const mc_group_t *grp, int ia, int ib,
                       int ic, int *lk_set)
{
    const float *q = grp->qsum;
    double fa = q[ia] / (q[ia] + q[ib] + q[ic]);
    double fb = q[ib] / (q[ia] + q[ib] + q[ic]);
    double fc = q[ic] / (q[ia] + q[ib] + q[ic]);
    double fa2 = fa * fa, fb2 = fb * fb, fc2 = fc * fc;
    double fab = 2 * fa * fb, fac = 2 * fa * fc, fbc = 2 * fb * fc;
    int iaa = (ia + 1) * (ia + 2) / 2 - 1, ibb = (ib + 1) * (ib + 2) / 2 - 1;
    int icc = (ic + 1) * (ic + 2) / 2 - 1;
    int iab = iaa - ia + ib, iac = iaa - ia + ic, ibc = ibb - ib + ic;
    double lk = 0;
    for (int s = 0; s < grp->nsmpl; s++) {
        int smpl = grp->smpl[s];
        const double *pdg = c->pdg + smpl * ngts;
        double val = 0;
        if (c->ploidy[smpl] == 2)
            val = fa2 * pdg[iaa] + fb2 * pdg[ibb] + fc2 * pdg[icc] + fab * pdg[iab] +
                  fac * pdg[iac] + fbc * pdg[ibc];
        else if (c->ploidy[smpl] == 1)
            val = fa * pdg[iaa] + fb * pdg[ibb] + fc * pdg[icc];
        if (val) {
            lk += log(val);
            *lk_set = 1;
        }
    }
    return lk;
}

static void three_alleles(mc_caller_t *c, int nals, const mc_group_t *grp, best_t *b)
{
    int ngts = nals * (nals + 1) / 2;
    const float *q = grp->qsum;
    for (int ia = 0; ia < nals; ia++) {
        if (q[ia] == 0)
            continue;
        for (int ib = 0; ib < ia; ib++) {
            if (q[ib] == 0)
                continue;
            for (int ic = 0; ic < ib; ic++) {
                if (q[ic] == 0)
                    continue;
                int lk_set = 0;
                double lk = three_lk(c, ngts, grp, ia, ib, ic, &lk_set);
                if (ia != 0)
                    lk += c->theta;
                if (ib != 0)
                    lk += c->theta;
                if (ic != 0)
                    lk += c->theta;
                consider(b, 1 << ia | 1 << ib | 1 << ic, lk, lk_set, lk_set);
            }
        }
    }
}

/*
 * The group's most likely set of at most three alleles (grp->als, nals),
 * with the likelihoods QUAL comes from: all REF, the best set, all sets.
 */
void mc_multi_best_alleles(mc_caller_t *c, int nals, mc_group_t *grp)
{
    best_t b = {-HUGE_VAL, -HUGE_VAL, 0};
    grp->ref_lk = one_allele(c, nals, grp, &b);
    if (nals > 1)
        two_alleles(c, nals, grp, &b);
    if (nals > 2)
        three_alleles(c, nals, grp, &b);
    grp->max_lk = b.max_lk;
    grp->lk_sum = b.lk_sum;
    grp->als = b.max_als;
    grp->nals = 0;
    for (int i = 0; i < nals; i++)
        grp->nals += (b.max_als >> i) & 1;
}

/* A site with only REF: 0/0 (0 when haploid), or missing without depth or copies. */
void mc_multi_ref_genotypes(mc_caller_t *c, int nals_ori)
{
    int ngts = nals_ori * (nals_ori + 1) / 2;
    memset(c->ac, 0, nals_ori * sizeof(*c->ac));
    for (int s = 0; s < c->nsmpl; s++) {
        int ploidy = c->ploidy[s];
        const double *pdg = c->pdg + s * ngts;
        int32_t *gt = c->gts + 2 * s;
        int i = 0;
        while (i < ngts && pdg[i] == 0.0)
            i++;
        int missing = i == ngts || !ploidy;
        gt[0] = missing ? bcf_gt_missing : bcf_gt_unphased(0);
        gt[1] = ploidy != 2 ? bcf_int32_vector_end : gt[0];
        if (!missing)
            c->ac[0] += ploidy;
    }
}

/*
 * One sample's most likely genotype over the group's alleles, weighting
 * P(D|G) by the alleles' frequencies; each genotype's weight goes to gps
 * (output genotype order) for GQ/GP. Returns 0, or -1: no call (no depth).
 */
static int sample_genotype(mc_caller_t *c, int nals_ori, const mc_group_t *grp, int smpl,
                           float *gps, int32_t *gt)
{
    int ngts_ori = nals_ori * (nals_ori + 1) / 2, ploidy = c->ploidy[smpl];
    const double *pdg = c->pdg + smpl * ngts_ori;
    const float *q = grp->qsum;
    int i = 0;
    while (i < ngts_ori && pdg[i] == 0.0)
        i++;
    if (!ploidy || i == ngts_ori) {
        gt[0] = bcf_gt_missing;
        gt[1] = ploidy == 2 ? bcf_gt_missing : bcf_int32_vector_end;
        gps[0] = -1;
        return -1;
    }
    gt[0] = bcf_gt_unphased(0);
    double best_lk = 0;
    for (int ia = 0; ia < nals_ori; ia++) {
        if (!(grp->als & 1 << ia))
            continue;
        int iaa = (ia + 1) * (ia + 2) / 2 - 1, out = c->als_map[ia];
        double lk = ploidy == 2 ? pdg[iaa] * q[ia] * q[ia] : pdg[iaa] * q[ia];
        gps[ploidy == 2 ? bcf_alleles2gt(out, out) : out] = lk;
        if (best_lk < lk) {
            best_lk = lk;
            gt[0] = bcf_gt_unphased(out);
        }
    }
    gt[1] = ploidy == 2 ? gt[0] : bcf_int32_vector_end;
    for (int ia = 0; ploidy == 2 && ia < nals_ori; ia++) {
        if (!(grp->als & 1 << ia))
            continue;
        int iaa = (ia + 1) * (ia + 2) / 2 - 1;
        for (int ib = 0; ib < ia; ib++) {
            if (!(grp->als & 1 << ib))
                continue;
            double lk = 2 * pdg[iaa - ia + ib] * q[ia] * q[ib];
            gps[bcf_alleles2gt(c->als_map[ia], c->als_map[ib])] = lk;
            if (best_lk < lk) {
                best_lk = lk;
                gt[0] = bcf_gt_unphased(c->als_map[ib]);
                gt[1] = bcf_gt_unphased(c->als_map[ia]);
            }
        }
    }
    return 0;
}

/*
 * GQ from the weights in gps (the best against the rest, capped at 127)
 * and, for GP, the weights normalised; a sample without a call gets GQ 0
 * and GP zeros (missing when it has no copies).
 */
static void sample_quality(mc_caller_t *c, const mc_group_t *grp, int smpl, float *gps,
                           int ngts_new)
{
    int ploidy = c->ploidy[smpl];
    int nmax = ploidy == 2 ? ngts_new : ploidy == 1 ? grp->nals : 0;
    double max = gps[0];
    if (max < 0 || nmax == 0) {
        if (c->o->annots & MC_ANN_GP) {
            for (int i = 0; i < nmax; i++)
                gps[i] = 0;
            if (nmax == 0)
                bcf_float_set_missing(gps[nmax++]);
            if (nmax < ngts_new)
                bcf_float_set_vector_end(gps[nmax]);
        }
        c->GQs[smpl] = 0;
        return;
    }
    double sum = gps[0];
    for (int i = 1; i < nmax; i++) {
        if (max < gps[i])
            max = gps[i];
        sum += gps[i];
    }
    max = -4.34294 * log(1 - max / sum);
    c->GQs[smpl] = max <= INT8_MAX ? max : INT8_MAX;
    if (c->o->annots & MC_ANN_GP) {
        int i;
        for (i = 0; i < nmax; i++)
            gps[i] = gps[i] / sum;
        for (; i < ngts_new; i++)
            bcf_float_set_vector_end(gps[i]);
    }
}

/* The group's samples' genotypes into c->gts, their alleles counted into c->ac. */
void mc_multi_genotypes(mc_caller_t *c, int nals_ori, mc_group_t *grp)
{
    int ngts_new = c->nals_new * (c->nals_new + 1) / 2;
    for (int s = 0; s < grp->nsmpl; s++) {
        int smpl = grp->smpl[s];
        int32_t *gt = c->gts + 2 * smpl;
        if (sample_genotype(c, nals_ori, grp, smpl, c->GPs + smpl * ngts_new, gt) < 0)
            continue;
        c->ac[bcf_gt_allele(gt[0])]++;
        if (gt[1] != bcf_int32_vector_end)
            c->ac[bcf_gt_allele(gt[1])]++;
    }
    if (!(c->o->annots & (MC_ANN_GQ | MC_ANN_GP)))
        return;
    for (int s = 0; s < grp->nsmpl; s++)
        sample_quality(c, grp, grp->smpl[s], c->GPs + grp->smpl[s] * ngts_new, ngts_new);
}

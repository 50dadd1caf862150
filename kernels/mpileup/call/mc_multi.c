/*
 * mc_multi.c -- bcftools call -m (mcall.c in bcftools 1.16): the record
 * flow of the multiallelic caller. Per record: P(D|G) from PL; allele
 * frequencies from INFO/QS (or, with -G, FORMAT/QS or AD per group, and
 * -F's panel counts); the most likely alleles and QUAL; genotypes; then the
 * record loses the alleles not called, and gains GT, AC, AN, DP4, MQ.
 * The order of the htslib edits is bcftools' order: it is the order of the
 * tags in the output.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

static const char *const multi_lines[] = {
    "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">",
    "##FORMAT=<ID=GQ,Number=1,Type=Integer,Description=\"Phred-scaled Genotype Quality\">",
    "##FORMAT=<ID=GP,Number=G,Type=Float,Description=\"Genotype posterior probabilities in the "
    "range 0 to 1\">",
    "##INFO=<ID=AC,Number=A,Type=Integer,Description=\"Allele count in genotypes for each ALT "
    "allele, in the same order as listed\">",
    "##INFO=<ID=AN,Number=1,Type=Integer,Description=\"Total number of alleles in called "
    "genotypes\">",
    "##INFO=<ID=DP4,Number=4,Type=Integer,Description=\"Number of high-quality ref-forward , "
    "ref-reverse, alt-forward and alt-reverse bases\">",
    "##INFO=<ID=MQ,Number=1,Type=Integer,Description=\"Average mapping quality\">",
    "##INFO=<ID=PV4,Number=4,Type=Float,Description=\"P-values for strand bias, baseQ bias, "
    "mapQ bias and tail distance bias\">",
};

/* The header lines -m adds, in bcftools' order (GQ, GP, PV4 only when asked for). 0, or -1. */
int mc_multi_header(const mc_opts_t *o, bcf_hdr_t *hdr)
{
    const int wanted[] = {1, o->annots & MC_ANN_GQ, o->annots & MC_ANN_GP, 1, 1, 1,
                          1, o->annots & MC_ANN_PV4};
    for (int i = 0; i < (int)(sizeof(wanted) / sizeof(wanted[0])); i++)
        if (wanted[i] && bcf_hdr_append(hdr, multi_lines[i]) < 0)
            return -1;
    return 0;
}

/*
 * The prior: -P scaled by Watterson's factor over n_hap haplotypes (each
 * sample at the definition's highest ploidy), capped at 0.99 (verbose: say
 * so), in log; -P itself when it is not above 0.
 */
double mc_multi_prior(const mc_opts_t *o, int n_hap, int verbose)
{
    double theta = o->theta;
    if (!(theta > 0))
        return theta;
    double aM = 1;
    for (int i = 2; i < n_hap; i++)
        aM += 1. / i;
    theta *= aM;
    if (theta >= 1) {
        if (verbose)
            fprintf(stderr, "The prior is too big (theta*aM=%.2f), going with 0.99\n", theta);
        theta = 0.99;
    }
    return log(theta);
}

int mc_multi_init(mc_caller_t *c)
{
    if (mc_groups_init(c) < 0)
        return -1;
    c->theta = mc_multi_prior(c->o, c->nsmpl * c->ploidy_max, 0);
    return 0;
}

/* INFO/QS as the one group's allele frequencies (alleles past QS's end get 0). 0, or -1. */
static int freqs_from_info(mc_caller_t *c, bcf1_t *rec, int nals)
{
    mc_group_t *g = &c->grp[0];
    int nqs = bcf_get_info_float(c->hdr, rec, "QS", &g->qsum, &g->mqsum);
    if (nqs <= 0) {
        mc_fail(c, "the QS annotation is not present at %s:%" PRIhts_pos,
                bcf_seqname_safe(c->hdr, rec), rec->pos + 1);
        return -1;
    }
    if (nqs < nals) {
        if (mc_grow(&g->qsum, &g->mqsum, nals, sizeof(float)) < 0)
            return -1;
        for (int i = nqs; i < nals; i++)
            g->qsum[i] = 0;
    }
    return 0;
}

/* -G: each group sums its samples' shares of the tag (FORMAT/QS or AD). 0, or -1. */
static int freqs_from_format(mc_caller_t *c, bcf1_t *rec, int nals)
{
    int nad = bcf_get_format_int32(c->hdr, rec, c->grp_tag, &c->ADs, &c->mADs);
    if (nad < 1) {
        mc_fail(c,
                "FORMAT/%s is required with the -G option, mpileup must be "
                "run with \"-a AD\" or \"-a QS\"",
                c->grp_tag);
        return -1;
    }
    nad /= c->nsmpl;
    for (int g = 0; g < c->n_grp; g++) {
        mc_group_t *grp = &c->grp[g];
        if (mc_grow(&grp->qsum, &grp->mqsum, nals > nad ? nals : nad, sizeof(float)) < 0)
            return -1;
        memset(grp->qsum, 0, nals * sizeof(float));
        for (int s = 0; s < grp->nsmpl; s++) {
            const int32_t *v = c->ADs + grp->smpl[s] * nad;
            float sum = 0;
            for (int j = 0; j < nad && v[j] != bcf_int32_vector_end; j++)
                if (v[j] != bcf_int32_missing)
                    sum += v[j];
            for (int j = 0; sum && j < nad && v[j] != bcf_int32_vector_end; j++)
                if (v[j] != bcf_int32_missing)
                    grp->qsum[j] += v[j] / sum;
        }
    }
    return 0;
}

/*
 * -F AN,AC: when the record has the panel's counts, each group's
 * frequencies become (QS + AC/2) / (samples + AN/2). 0, or -1 after a
 * message.
 */
static int freqs_with_panel(mc_caller_t *c, bcf1_t *rec, int nals)
{
    const mc_opts_t *o = c->o;
    if (!o->prior_an || bcf_get_info_int32(c->hdr, rec, o->prior_an, &c->ac, &c->mac) != 1)
        return 0;
    int an = c->ac[0];
    if (an <= 0 || bcf_get_info_int32(c->hdr, rec, o->prior_ac, &c->ac, &c->mac) != nals - 1)
        return 0;
    int ac0 = an;
    for (int i = 0; i < nals - 1; i++) {
        if (c->ac[i] == bcf_int32_vector_end)
            break;
        if (c->ac[i] == bcf_int32_missing)
            continue;
        ac0 -= c->ac[i];
        for (int g = 0; g < c->n_grp; g++)
            c->grp[g].qsum[i + 1] =
                (c->grp[g].qsum[i + 1] + 0.5 * c->ac[i]) / (c->grp[g].nsmpl + 0.5 * an);
    }
    if (ac0 < 0) {
        mc_fail(c, "incorrect %s,%s values at %s:%" PRIhts_pos, o->prior_an, o->prior_ac,
                bcf_seqname_safe(c->hdr, rec), rec->pos + 1);
        return -1;
    }
    for (int g = 0; g < c->n_grp; g++)
        c->grp[g].qsum[0] = (c->grp[g].qsum[0] + 0.5 * ac0) / (c->grp[g].nsmpl + 0.5 * an);
    return 0;
}

/* Each group's allele frequencies, normalised to sum 1. 0, or -1 after a message. */
static int allele_freqs(mc_caller_t *c, bcf1_t *rec, int nals)
{
    int r = c->n_grp == 1 ? freqs_from_info(c, rec, nals) : freqs_from_format(c, rec, nals);
    if (r < 0 || freqs_with_panel(c, rec, nals) < 0)
        return -1;
    for (int g = 0; g < c->n_grp; g++) {
        float *q = c->grp[g].qsum, sum = 0;
        for (int i = 0; i < nals; i++)
            sum += q[i];
        for (int i = 0; sum && i < nals; i++)
            q[i] /= sum;
    }
    return 0;
}

/*
 * PLs cut to the output alleles, in place: diploid samples keep the kept
 * genotypes, haploid ones the kept homozygotes, those with no copies a
 * missing value. Then written back.
 */
static int update_pls(mc_caller_t *c, bcf1_t *rec, int nals_ori, int nals_new)
{
    int nsrc = nals_ori * (nals_ori + 1) / 2, ndst = nals_new * (nals_new + 1) / 2;
    int32_t *src = c->PLs, *dst = c->PLs;
    for (int s = 0; s < c->nsmpl; s++, src += nsrc, dst += ndst) {
        if (c->ploidy[s] == 2) {
            for (int i = 0; i < ndst; i++)
                dst[i] = src[c->pl_map[i]];
        } else if (c->ploidy[s] == 1) {
            int i;
            for (i = 0; i < nals_new; i++)
                dst[i] = src[c->pl_map[(i + 1) * (i + 2) / 2 - 1]];
            if (i < ndst)
                dst[i] = bcf_int32_vector_end;
        } else {
            dst[0] = bcf_int32_missing;
            dst[1] = bcf_int32_vector_end; /* nals_new > 1 here */
        }
    }
    return bcf_update_format_int32(c->hdr, rec, "PL", c->PLs, ndst * c->nsmpl) < 0 ? -1 : 0;
}

/* The site's likelihoods QUAL comes from: those of the group with the best QUAL. */
typedef struct {
    double max_qual, lk_sum, ref_lk;
} site_lk_t;

/* Each group's best alleles, their union (with REF) into c->als_new. */
static void choose_alleles(mc_caller_t *c, int nals, site_lk_t *lk)
{
    lk->max_qual = lk->lk_sum = lk->ref_lk = -HUGE_VAL;
    c->als_new = 0;
    for (int g = 0; g < c->n_grp; g++) {
        mc_group_t *grp = &c->grp[g];
        mc_multi_best_alleles(c, nals, grp);
        c->als_new |= grp->als;
        if (grp->max_lk == -HUGE_VAL)
            continue;
        double qual = -4.343 * (grp->ref_lk - mc_log_add(grp->lk_sum, grp->ref_lk));
        if (lk->max_qual < qual) {
            lk->max_qual = qual;
            lk->lk_sum = grp->lk_sum;
            lk->ref_lk = grp->ref_lk;
        }
    }
    c->als_new |= 1;
}

/* The output alleles: the chosen ones, or all but <*> with -A (which never drops <*>). */
static void count_output_alleles(mc_caller_t *c, int nals)
{
    c->nals_new = 0;
    for (int i = 0; i < nals; i++) {
        if (i > 0 && i == c->unseen)
            continue;
        if (c->o->keep_alts)
            c->als_new |= 1 << i;
        if (c->als_new & (1 << i))
            c->nals_new++;
    }
}

/*
 * Genotypes at a variant site, with GP and GQ when asked for, and its PLs
 * cut. The count of ALT alleles called (*n_alt); 0, or -1.
 */
static int variant_genotypes(mc_caller_t *c, bcf1_t *rec, int nals_ori, int *n_alt)
{
    for (int s = 0; s < c->nsmpl; s++) {
        if (c->ploidy[s] > 2) { /* where bcftools stops on an assertion */
            mc_fail(c,
                    "%s has ploidy %d at %s:%" PRIhts_pos "; -m calls ploidy "
                    "0, 1 or 2",
                    c->hdr->samples[s], c->ploidy[s], bcf_seqname_safe(c->hdr, rec), rec->pos + 1);
            return -1;
        }
    }
    int ngts_new = c->nals_new * (c->nals_new + 1) / 2;
    if (mc_grow(&c->GPs, &c->mGPs, (size_t)ngts_new * c->nsmpl, sizeof(float)) < 0)
        return -1;
    memset(c->ac, 0, c->nals_new * sizeof(*c->ac));
    if (c->o->annots & (MC_ANN_GQ | MC_ANN_GP)) {
        memset(c->GPs, 0, (size_t)ngts_new * c->nsmpl * sizeof(*c->GPs));
        memset(c->GQs, 0, c->nsmpl * sizeof(*c->GQs));
    }
    for (int g = 0; g < c->n_grp; g++)
        mc_multi_genotypes(c, nals_ori, &c->grp[g]);
    *n_alt = 0;
    for (int i = 1; i < c->nals_new; i++)
        *n_alt += c->ac[i];
    if (!*n_alt && c->o->variants_only)
        return 0;
    if ((c->o->annots & MC_ANN_GP) &&
        bcf_update_format_float(c->hdr, rec, "GP", c->GPs, ngts_new * c->nsmpl) < 0)
        return -1;
    if ((c->o->annots & MC_ANN_GQ) &&
        bcf_update_format_int32(c->hdr, rec, "GQ", c->GQs, c->nsmpl) < 0)
        return -1;
    return update_pls(c, rec, nals_ori, c->nals_new);
}

/* QUAL: the variant's, or for a REF site that of no ALT (1 - prior when nothing says more). */
static void set_qual(mc_caller_t *c, bcf1_t *rec, int n_alt, const site_lk_t *lk)
{
    if (n_alt)
        rec->qual = lk->max_qual;
    else if (lk->lk_sum != -HUGE_VAL)
        rec->qual = -4.343 * (lk->lk_sum - mc_log_add(lk->lk_sum, lk->ref_lk));
    else if (c->ac[0])
        rec->qual = c->theta ? -4.343 * c->theta : 0;
    else
        bcf_float_set_missing(rec->qual);
}

/* AC, AN, the output alleles and GT. 0, or -1. */
static int write_calls(mc_caller_t *c, bcf1_t *rec, int nals_ori, int n_alt)
{
    if (c->nals_new > 1 && bcf_update_info_int32(c->hdr, rec, "AC", c->ac + 1, c->nals_new - 1) < 0)
        return -1;
    int an = n_alt + c->ac[0];
    if (bcf_update_info_int32(c->hdr, rec, "AN", &an, 1) < 0)
        return -1;
    if (mc_grow(&c->als, &c->mals, c->nals_new, sizeof(*c->als)) < 0)
        return -1;
    for (int i = 0; i < nals_ori; i++)
        if (c->als_map[i] >= 0)
            c->als[c->als_map[i]] = rec->d.allele[i];
    if (bcf_update_alleles(c->hdr, rec, c->als, c->nals_new) < 0)
        return -1;
    return bcf_update_genotypes(c->hdr, rec, c->gts, c->nsmpl * 2) < 0 ? -1 : 0;
}

/* DP4, MQ (and PV4 with -a PV4) from I16, then I16 out. 0, or -1. */
static int write_i16(mc_caller_t *c, bcf1_t *rec)
{
    if (bcf_get_info_float(c->hdr, rec, "I16", &c->anno16, &c->m16) == 16) {
        const float *a = c->anno16;
        int32_t dp4[4] = {a[0], a[1], a[2], a[3]};
        if (bcf_update_info_int32(c->hdr, rec, "DP4", dp4, 4) < 0)
            return -1;
        int32_t mq = mc_float_to_int32((a[8] + a[10]) / (a[0] + a[1] + a[2] + a[3]));
        if (bcf_update_info_int32(c->hdr, rec, "MQ", &mq, 1) < 0)
            return -1;
        mc_i16_t t;
        if ((c->o->annots & MC_ANN_PV4) && mc_test_i16(a, &t) >= 0 && t.is_tested) {
            float pv4[4] = {t.p[0], t.p[1], t.p[2], t.p[3]};
            if (bcf_update_info_float(c->hdr, rec, "PV4", pv4, 4) < 0)
                return -1;
        }
    }
    return bcf_update_info_int32(c->hdr, rec, "I16", NULL, 0) < 0 ? -1 : 0;
}

/* Room for a record of nals alleles and npl PLs. 0, or -1. */
static int grow_site(mc_caller_t *c, int nals, int npl)
{
    int ngts = nals * (nals + 1) / 2;
    if (mc_grow(&c->ac, &c->mac, nals, sizeof(*c->ac)) < 0 ||
        mc_grow(&c->als_map, &c->mals_map, nals, sizeof(*c->als_map)) < 0 ||
        mc_grow(&c->pl_map, &c->mpl_map, ngts, sizeof(*c->pl_map)) < 0)
        return -1;
    if ((size_t)npl > c->mpdg) {
        double *p = realloc(c->pdg, npl * sizeof(*p));
        if (!p)
            return -1;
        c->pdg = p;
        c->mpdg = npl;
    }
    return 0;
}

/* The record's PLs, which must be diploid for every sample. 0, or -1 after a message. */
static int read_pls(mc_caller_t *c, bcf1_t *rec, int nals)
{
    int ngts = nals * (nals + 1) / 2;
    c->nPLs = bcf_get_format_int32(c->hdr, rec, "PL", &c->PLs, &c->mPLs);
    if (c->nPLs != c->nsmpl * ngts) {
        mc_fail(c,
                "wrong number of PL fields at %s:%" PRIhts_pos " (nals=%d "
                "npl=%d)",
                bcf_seqname_safe(c->hdr, rec), rec->pos + 1, nals, c->nPLs);
        return -1;
    }
    return grow_site(c, nals, c->nPLs);
}

/*
 * Genotypes and record edits once the alleles are chosen (is_variant: an
 * ALT was chosen, before -A added the others). The number of output
 * alleles, 0 to skip the site (-v and all 0/0), or -1.
 */
static int call_site(mc_caller_t *c, bcf1_t *rec, int nals_ori, int is_variant, const site_lk_t *lk)
{
    int n_alt = 0;
    mc_allele_maps(c, nals_ori, c->als_new, 1);
    if (c->als_new == 1) {
        mc_multi_ref_genotypes(c, nals_ori);
        if (bcf_update_format_int32(c->hdr, rec, "PL", NULL, 0) < 0)
            return -1;
    } else if (!is_variant) {
        mc_multi_ref_genotypes(c, nals_ori); /* -A: no ALT genotypes come back */
        if (update_pls(c, rec, nals_ori, c->nals_new) < 0)
            return -1;
    } else {
        if (variant_genotypes(c, rec, nals_ori, &n_alt) < 0)
            return -1;
        if (!n_alt && c->o->variants_only)
            return 0;
    }
    if (nals_ori != c->nals_new && mc_trim_number_r(c, rec, nals_ori, c->nals_new) < 0)
        return -1;
    set_qual(c, rec, n_alt, lk);
    if (write_calls(c, rec, nals_ori, n_alt) < 0 || write_i16(c, rec) < 0)
        return -1;
    return c->nals_new;
}

/*
 * bcftools' mcall(): the number of output alleles (> 0), 0 when the site is
 * not written (-v and no variant; more than 32 alleles), -1 after a message.
 */
int mc_multi_call(mc_caller_t *c, bcf1_t *rec)
{
    if (c->tgt_als && mc_constrain_alleles(c, rec) < 0)
        return -1;
    int nals = rec->n_allele;
    if (read_pls(c, rec, nals) < 0)
        return -1;
    mc_multi_pdg(c, nals * (nals + 1) / 2);
    if (allele_freqs(c, rec, nals) < 0)
        return -1;
    if (bcf_update_info_int32(c->hdr, rec, "QS", NULL, 0) < 0)
        return -1;
    if (nals > 32) {
        fprintf(stderr, "Too many alleles at %s:%" PRIhts_pos ", skipping.\n",
                bcf_seqname_safe(c->hdr, rec), rec->pos + 1);
        return 0;
    }
    site_lk_t lk;
    choose_alleles(c, nals, &lk);
    int is_variant = c->als_new != 1;
    if (c->o->variants_only && !is_variant)
        return 0;
    count_output_alleles(c, nals);
    return call_site(c, rec, nals, is_variant, &lk);
}

/*
 * mc_consensus.c -- bcftools call -c (ccall.c in bcftools 1.16): the
 * original samtools model. Two alleles at a time (REF and the first ALT):
 * EM estimates of the frequency and HWE (mc_em.c), the allele-frequency
 * spectrum for P(variant) (mc_afs.c), then the record keeps the alleles up
 * to REF's rank, and gains GT, AF1, G3, HWE, AC1, DP4, MQ, FQ and PV4.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

static const char *const consensus_lines[] = {
    "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">",
    "##FORMAT=<ID=GQ,Number=1,Type=Integer,Description=\"Genotype Quality\">",
    "##INFO=<ID=AF1,Number=1,Type=Float,Description=\"Max-likelihood estimate of the first ALT "
    "allele frequency (assuming HWE)\">",
    "##INFO=<ID=AF2,Number=1,Type=Float,Description=\"Max-likelihood estimate of the first and "
    "second group ALT allele frequency (assuming HWE)\">",
    "##INFO=<ID=AC1,Number=1,Type=Float,Description=\"Max-likelihood estimate of the first ALT "
    "allele count (no HWE assumption)\">",
    "##INFO=<ID=MQ,Number=1,Type=Integer,Description=\"Root-mean-square mapping quality of "
    "covering reads\">",
    "##INFO=<ID=FQ,Number=1,Type=Float,Description=\"Phred probability of all samples being the "
    "same\">",
    "##INFO=<ID=PV4,Number=4,Type=Float,Description=\"P-values for strand bias, baseQ bias, "
    "mapQ bias and tail distance bias\">",
    "##INFO=<ID=G3,Number=3,Type=Float,Description=\"ML estimate of genotype frequencies\">",
    "##INFO=<ID=HWE,Number=1,Type=Float,Description=\"Chi^2 based HWE test P-value based on "
    "G3\">",
    "##INFO=<ID=DP4,Number=4,Type=Integer,Description=\"Number of high-quality ref-forward , "
    "ref-reverse, alt-forward and alt-reverse bases\">",
};

/* The header lines -c adds, in bcftools' order (GQ only with -a GQ). 0, or -1. */
int mc_consensus_header(const mc_opts_t *o, bcf_hdr_t *hdr)
{
    for (int i = 0; i < (int)(sizeof(consensus_lines) / sizeof(consensus_lines[0])); i++)
        if ((i != 1 || (o->annots & MC_ANN_GQ)) && bcf_hdr_append(hdr, consensus_lines[i]) < 0)
            return -1;
    return 0;
}

/* The EM estimates: AF1, and G3 with HWE when HWE's P-value is at most 0.05. 0, or -1. */
static int write_em(mc_caller_t *c, bcf1_t *rec, const double em[10])
{
    float v[3];
    if (em[0] >= 0) {
        v[0] = 1 - em[0];
        if (bcf_update_info_float(c->hdr, rec, "AF1", v, 1) < 0)
            return -1;
    }
    if (em[4] >= 0 && em[4] <= 0.05) {
        v[0] = em[3], v[1] = em[2], v[2] = em[1];
        float hwe = em[4];
        if (bcf_update_info_float(c->hdr, rec, "G3", v, 3) < 0 ||
            bcf_update_info_float(c->hdr, rec, "HWE", &hwe, 1) < 0)
            return -1;
    }
    return 0;
}

/* AC1, DP4, MQ, FQ, PV4; I16 and QS out. 0, or -1. */
static int write_site(mc_caller_t *c, bcf1_t *rec, const mc_afs_result_t *r, const mc_i16_t *t,
                      int has_i16)
{
    const float *a = c->anno16;
    int32_t dp4[4] = {a[0], a[1], a[2], a[3]};
    float fq = r->p_ref_folded < 0.5 ? -4.343 * log(r->p_ref_folded) : 4.343 * log(r->p_var_folded);
    if (fq < -999)
        fq = -999;
    if (fq > 999)
        fq = 999;
    if (bcf_update_info_int32(c->hdr, rec, "AC1", &r->ac, 1) < 0 ||
        bcf_update_info_int32(c->hdr, rec, "DP4", dp4, 4) < 0 ||
        bcf_update_info_int32(c->hdr, rec, "MQ", &t->mq, 1) < 0 ||
        bcf_update_info_float(c->hdr, rec, "FQ", &fq, 1) < 0)
        return -1;
    if (has_i16 && t->is_tested) {
        float pv4[4] = {t->p[0], t->p[1], t->p[2], t->p[3]};
        if (bcf_update_info_float(c->hdr, rec, "PV4", pv4, 4) < 0)
            return -1;
    }
    if (bcf_update_info_int32(c->hdr, rec, "I16", NULL, 0) < 0 ||
        bcf_update_info_int32(c->hdr, rec, "QS", NULL, 0) < 0)
        return -1;
    return 0;
}

/*
 * The alleles kept: REF alone at a non-variant site (without -A), else REF
 * up to the allele ranked as REF is, at least two; -A drops a last <*>.
 */
static int output_alleles(const mc_caller_t *c, const mc_afs_result_t *r, int is_var)
{
    int nals = !is_var && !c->o->keep_alts ? 1 : r->rank0 < 2 ? 2 : r->rank0 + 1;
    if (c->o->keep_alts && c->unseen == nals - 1)
        nals--;
    return nals;
}

/* Alleles past nals go, and their PLs (haploid samples keep homozygotes). 0, or -1. */
static int trim_alleles(mc_caller_t *c, bcf1_t *rec, int nals)
{
    if (bcf_update_alleles(c->hdr, rec, (const char **)rec->d.allele, nals) < 0)
        return -1;
    int nsrc = c->nPLs / rec->n_sample, ndst = nals * (nals + 1) / 2;
    int32_t *src = c->PLs, *dst = c->PLs;
    for (int s = 0; s < rec->n_sample; s++, src += nsrc, dst += ndst) {
        if (c->ploidy[s] == 2) {
            for (int i = 0; i < ndst; i++)
                dst[i] = src[i];
            continue;
        }
        int i;
        for (i = 0; i < nals; i++)
            dst[i] = src[(i + 1) * (i + 2) / 2 - 1];
        if (i < ndst)
            dst[i] = bcf_int32_vector_end;
    }
    return bcf_update_format_int32(c->hdr, rec, "PL", c->PLs, ndst * rec->n_sample) < 0 ? -1 : 0;
}

/* GT (and GQ): from the spectrum's expected frequency at variant sites or with GQ; else 0/0. */
static int write_genotypes(mc_caller_t *c, bcf1_t *rec, const mc_afs_result_t *r, int is_var)
{
    int want_gq = c->o->annots & MC_ANN_GQ;
    for (int i = 0; i < rec->n_sample; i++) {
        int x = is_var || want_gq ? mc_afs_genotype(c->afs, r->f_exp, i, is_var) : 2;
        int gt = x & 3;
        int32_t *g = c->gts + 2 * i;
        if (c->ploidy[i] == 2) {
            g[0] = bcf_gt_unphased(gt == 0 ? 1 : 0);
            g[1] = bcf_gt_unphased(gt == 2 ? 0 : 1);
            c->GQs[i] = x >> 2;
        } else {
            g[0] = bcf_gt_unphased(gt == 0 ? 1 : 0);
            g[1] = bcf_int32_vector_end;
            c->GQs[i] = bcf_int32_missing;
        }
    }
    if (bcf_update_genotypes(c->hdr, rec, c->gts, rec->n_sample * 2) < 0)
        return -1;
    if (want_gq && bcf_update_format_int32(c->hdr, rec, "GQ", c->GQs, rec->n_sample) < 0)
        return -1;
    return 0;
}

/* ccall's update_bcf1: the record as written. is_var (0 or 1), or -1. */
static int update_record(mc_caller_t *c, bcf1_t *rec, const mc_afs_result_t *r, const double em[10])
{
    if (bcf_get_info_float(c->hdr, rec, "I16", &c->anno16, &c->m16) != 16) {
        mc_fail(c, "no I16 annotation at %s:%" PRIhts_pos, bcf_seqname_safe(c->hdr, rec),
                rec->pos + 1);
        return -1;
    }
    mc_i16_t t;
    int has_i16 = mc_test_i16(c->anno16, &t) >= 0;
    if (write_em(c, rec, em) < 0)
        return -1;
    int is_var = r->p_ref < c->o->pval_threshold;
    float p = is_var ? r->p_ref : r->p_var; /* a float, as in bcftools: QUAL is from it */
    if (write_site(c, rec, r, &t, has_i16) < 0)
        return -1;
    rec->qual = p < 1e-100 ? 999 : -4.343 * log(p);
    if (rec->qual > 999)
        rec->qual = 999;
    int nals_ori = rec->n_allele, nals = output_alleles(c, r, is_var);
    if (nals < rec->n_allele && trim_alleles(c, rec, nals) < 0)
        return -1;
    if (write_genotypes(c, rec, r, is_var) < 0)
        return -1;
    if (mc_grow(&c->als_map, &c->mals_map, nals_ori, sizeof(int)) < 0)
        return -1;
    mc_allele_maps(c, nals_ori, (1 << nals) - 1, 0);
    if (mc_trim_number_r(c, rec, nals_ori, nals) < 0)
        return -1;
    return is_var;
}

/*
 * P(D|G) of REF/REF, REF/ALT, ALT/ALT (the first ALT) per sample, stored
 * ALT/ALT first as the consensus code keeps them.
 */
static void pdg_first_alt(mc_caller_t *c, int ngts)
{
    const int32_t *pl = c->PLs;
    for (int i = 0; i < c->nsmpl; i++, pl += ngts) {
        double *pdg = c->pdg + 3 * i;
        for (int j = 0; j < 3; j++)
            pdg[2 - j] = pl[j] >= 0 && pl[j] < 256 ? c->pl2p[pl[j]] : pow(10., -pl[j] / 10.);
    }
}

/*
 * bcftools' ccall(): 1 at a variant site, 0 at another (with -v: not to be
 * written), -1 after a message.
 */
int mc_consensus_call(mc_caller_t *c, bcf1_t *rec)
{
    int nals = rec->n_allele, ngts = nals * (nals + 1) / 2;
    c->nPLs = bcf_get_format_int32(c->hdr, rec, "PL", &c->PLs, &c->mPLs);
    if (c->nPLs != c->nsmpl * ngts || nals < 2) {
        mc_fail(c,
                "wrong number of PL fields at %s:%" PRIhts_pos " (nals=%d "
                "npl=%d)",
                bcf_seqname_safe(c->hdr, rec), rec->pos + 1, nals, c->nPLs);
        return -1;
    }
    if ((size_t)3 * c->nsmpl > c->mpdg) {
        double *p = realloc(c->pdg, 3 * c->nsmpl * sizeof(*p));
        if (!p)
            return -1;
        c->pdg = p;
        c->mpdg = 3 * c->nsmpl;
    }
    pdg_first_alt(c, ngts);
    double em[10];
    mc_em_site(c->pdg, c->nsmpl, nals, em);
    mc_afs_result_t r;
    int ret = mc_afs_site(c->afs, rec, c->PLs, c->nPLs, &r);
    if (ret < 0) {
        mc_fail(c, "could not compute the allele frequency spectrum at %s:%" PRIhts_pos,
                bcf_seqname_safe(c->hdr, rec), rec->pos + 1);
        return -1;
    }
    if (r.p_ref >= c->o->pval_threshold && c->o->variants_only)
        return 0;
    return update_record(c, rec, &r, em);
}

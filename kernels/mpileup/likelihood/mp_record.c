/*
 * mp_record.c -- the samples' numbers at a column combined into one site
 * (alleles, PL, per-sample and total AD, I16, bias tests: mp_combine), as
 * bcftools mpileup 1.16 does it; mp_site_bcf.c writes the site as a record.
 *
 * mp_site_t carries state from column to column, as bcftools' does, and the
 * output depends on it: with Z-scores (the default) the indel record does not
 * recompute mwu_bq and mwu_mqs, so its BQBZ and MQSBZ are those of the last
 * column whose SNP record had an ALT, on any contig. strand_bias (FS) is never
 * computed: FS prints whatever the caller put there (bcftools: 0). A caller
 * that starts mid-genome must restore those three fields to match.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mp_bias.h"
#include "mp_likelihood.h"

/*
 * Each allele's share of the samples' quality sums (each sample normalised to
 * 1, so deep samples do not outvote the rest), and the order of alleles by it:
 * order[0..3] ascending, stable, order[4] = 4 (N, never sorted).
 */
static void quality_shares(int n, const mp_smpl_t *calls, float qsum[MP_MAX_ALLELES], int order[5])
{
    for (int j = 0; j < MP_MAX_ALLELES; j++)
        qsum[j] = 0;
    for (int i = 0; i < n; ++i) {
        float sum = 0;
        for (int j = 0; j < 4; ++j)
            sum += calls[i].QS[j];
        if (sum)
            for (int j = 0; j < 4; j++)
                qsum[j] += (float)calls[i].QS[j] / sum;
    }
    for (int i = 0; i < 5; i++)
        order[i] = i;
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && qsum[order[j]] < qsum[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

/*
 * call->a: REF first (N when the reference base is not ACGT; allele 0 for the
 * indel record), then the seen alleles by falling quality share; for SNPs one
 * unseen allele follows as <*>. Returns -1 for an indel record with no ALT.
 */
static int order_alleles(int n, const mp_smpl_t *calls, int ref_base, mp_site_t *call)
{
    int ref4;
    if (ref_base >= 0)
        call->ori_ref = ref4 = seq_nt16_int[ref_base];
    else
        call->ori_ref = -1, ref4 = 0;
    float qsum[MP_MAX_ALLELES];
    int order[5];
    quality_shares(n, calls, qsum, order);
    for (int i = 0; i < 5; i++)
        call->a[i] = -1;
    for (int i = 0; i < MP_MAX_ALLELES; i++)
        call->qsum[i] = 0;
    call->unseen = -1;
    call->a[0] = ref4;
    int i, j;
    for (i = 3, j = 1; i >= 0; i--) {
        int allele = order[i];
        if (allele == ref4) {
            call->qsum[0] = qsum[allele];
            continue;
        }
        if (!qsum[allele])
            break; /* this and all below it are unseen */
        call->qsum[j] = qsum[allele];
        call->a[j++] = allele;
    }
    if (ref_base < 0) {
        call->n_alleles = j;
        return call->n_alleles == 1 ? -1 : 0;
    }
    if (((ref4 < 4 && j < 4) || (ref4 == 4 && j < 5)) && i >= 0)
        call->unseen = j, call->a[j++] = order[i];
    call->n_alleles = j;
    return 0;
}

/* PL per sample over the site's genotypes, each made relative to the sample's best. */
static void fill_pl(int n, const mp_smpl_t *calls, mp_site_t *call)
{
    int g[15], x = call->n_alleles * (call->n_alleles + 1) / 2;
    for (int i = 0, z = 0; i < call->n_alleles; ++i)
        for (int j = 0; j <= i; ++j)
            g[z++] = call->a[j] * 5 + call->a[i];
    double sum_min = 0.;
    for (int i = 0; i < n; ++i) {
        int32_t *PL = call->PL + x * i;
        const float *p = calls[i].p;
        float min = FLT_MAX;
        for (int j = 0; j < x; ++j)
            if (min > p[g[j]])
                min = p[g[j]];
        sum_min += min;
        for (int j = 0; j < x; ++j) {
            int y = (int)(p[g[j]] - min + .499);
            PL[j] = y > 255 ? 255 : y;
        }
    }
    call->shift = (int)(sum_min + .499);
}

/*
 * One sample's per-base counts (stride MP_MAX_ALLELES) into the site's allele
 * order, in place (the output stride n_alleles is never wider), adding to the
 * site's totals in tot when given.
 */
static void reorder_counts(int n, const mp_site_t *call, int32_t *counts, int32_t *tot,
                           int cap_int32)
{
    int32_t *in = counts, *out = counts, tmp[MP_MAX_ALLELES];
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < call->n_alleles; j++) {
            tmp[j] = in[call->a[j]];
            if (tot)
                tot[j] += tmp[j];
        }
        for (int j = 0; j < call->n_alleles; j++)
            out[j] = cap_int32 && tmp[j] >= BCF_MAX_BT_INT32 ? BCF_MAX_BT_INT32 : tmp[j];
        out += call->n_alleles;
        in += MP_MAX_ALLELES;
    }
}

/* The per-sample arrays the FORMAT tags print: DP4, SCR, ADF/ADR, QS. */
static void fill_sample_arrays(int n, const mp_smpl_t *calls, const mp_aux_t *bca, mp_site_t *call)
{
    if (call->DP4)
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 4; k++)
                call->DP4[4 * i + k] = calls[i].anno[k];
    if (call->SCR)
        for (int i = 0; i < n; i++) {
            call->SCR[0] += calls[i].SCR;
            call->SCR[1 + i] = calls[i].SCR;
        }
    if (call->ADF) {
        /* slot 0 holds the site's totals, the samples follow */
        reorder_counts(n, call, call->ADR + MP_MAX_ALLELES, call->ADR, 0);
        reorder_counts(n, call, call->ADF + MP_MAX_ALLELES, call->ADF, 0);
    }
    if (bca->fmt_flag & MP_FMT_QS)
        reorder_counts(n, call, call->QS, NULL, 1);
}

/* I16, depth and MQ0 summed over the samples. */
static void sum_annotations(int n, const mp_smpl_t *calls, mp_site_t *call)
{
    memset(call->anno, 0, sizeof(call->anno));
    call->ori_depth = 0;
    call->depth = 0;
    call->mq0 = 0;
    for (int i = 0; i < n; ++i) {
        call->depth += calls[i].anno[0] + calls[i].anno[1] + calls[i].anno[2] + calls[i].anno[3];
        call->ori_depth += calls[i].ori_depth;
        call->mq0 += calls[i].mq0;
        for (int j = 0; j < 16; ++j)
            call->anno[j] += calls[i].anno[j];
    }
}

/* Z-scores (the default): the indel record reads the indel histograms and has no BQ/MQS test. */
static void bias_z(int n, const mp_smpl_t *calls, const mp_aux_t *bca, mp_site_t *call)
{
    int flag = bca->fmt_flag, indel = call->ori_ref < 0;
    const mp_hist_t *ref_pos = indel ? &bca->iref_pos : &bca->ref_pos;
    const mp_hist_t *alt_pos = indel ? &bca->ialt_pos : &bca->alt_pos;
    if (flag & MP_INFO_RPB)
        call->mwu_pos = mp_mwu_hist(ref_pos, alt_pos, 0, 1);
    if (indel) {
        call->mwu_mq = mp_mwu_hist(&bca->iref_mq, &bca->ialt_mq, 1, 1);
    } else {
        call->mwu_mq = mp_mwu_hist(&bca->ref_mq, &bca->alt_mq, 1, 1);
        call->mwu_bq = mp_mwu_hist(&bca->ref_bq, &bca->alt_bq, 0, 1);
        call->mwu_mqs = mp_mwu_hist(&bca->fwd_mqs, &bca->rev_mqs, 0, 1);
    }
    if (flag & MP_INFO_SCB)
        call->mwu_sc = indel ? mp_mwu_hist(&bca->iref_scl, &bca->ialt_scl, 0, 1)
                             : mp_mwu_hist(&bca->ref_scl, &bca->alt_scl, 0, 1);
    call->mwu_nm[0] = mp_mwu_bias(bca->ref_nm, bca->alt_nm, MP_N_NM, 0, 1);
    if (flag & MP_FMT_NMBZ)
        for (int i = 0; i < n; i++) {
            float val = mp_mwu_bias(calls[i].ref_nm, calls[i].alt_nm, MP_N_NM, 0, 1);
            call->mwu_nm[i + 1] = val != HUGE_VAL ? val : 0;
        }
}

/* -U: probabilities, from the SNP histograms for both records. */
static void bias_u(const mp_aux_t *bca, mp_site_t *call)
{
    if (bca->fmt_flag & MP_INFO_RPB)
        call->mwu_pos = mp_mwu_hist(&bca->ref_pos, &bca->alt_pos, 0, 0);
    call->mwu_mq = mp_mwu_hist(&bca->ref_mq, &bca->alt_mq, 1, 0);
    call->mwu_bq = mp_mwu_hist(&bca->ref_bq, &bca->alt_bq, 0, 0);
    call->mwu_mqs = mp_mwu_hist(&bca->fwd_mqs, &bca->rev_mqs, 0, 0);
}

int mp_combine(int n, const mp_smpl_t *calls, mp_aux_t *bca, int ref_base, mp_site_t *call)
{
    if (order_alleles(n, calls, ref_base, call) < 0)
        return -1;
    /* only REF and <*>: nothing for the bias tests to compare */
    int has_alt = (call->n_alleles == 2 && call->unseen != -1) ? 0 : 1;
    fill_pl(n, calls, call);
    fill_sample_arrays(n, calls, bca, call);
    sum_annotations(n, calls, call);
    if (!has_alt)
        return 0;
    mp_bias_bins(bca);
    mp_seg_bias(calls, call);
    if (bca->fmt_flag & MP_INFO_ZSCORE)
        bias_z(n, calls, bca, call);
    else
        bias_u(bca, call);
    if (bca->fmt_flag & MP_INFO_VDB)
        call->vdb = mp_vdb(&bca->alt_pos);
    return 0;
}

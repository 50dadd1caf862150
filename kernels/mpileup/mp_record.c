/*
 * mp_record.c -- the samples' numbers at a column combined into one site
 * (alleles, PL, per-sample and total AD, I16, bias tests: mp_combine), and
 * the site written into a bcf1_t (mp_site_to_bcf), as bcftools mpileup 1.16
 * does it, tag for tag and in the same order.
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

#include <htslib/kfunc.h>
#include <htslib/kstring.h>
#include <htslib/vcf.h>

#include "mp_bias.h"
#include "mp_call.h"

/* ---- mp_combine --------------------------------------------------------------------------- */

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
    const int *ref_pos = indel ? bca->iref_pos : bca->ref_pos;
    const int *alt_pos = indel ? bca->ialt_pos : bca->alt_pos;
    if (flag & MP_INFO_RPB)
        call->mwu_pos = mp_mwu_bias(ref_pos, alt_pos, bca->npos, 0, 1);
    if (indel) {
        call->mwu_mq = mp_mwu_bias(bca->iref_mq, bca->ialt_mq, bca->nqual, 1, 1);
    } else {
        call->mwu_mq = mp_mwu_bias(bca->ref_mq, bca->alt_mq, bca->nqual, 1, 1);
        call->mwu_bq = mp_mwu_bias(bca->ref_bq, bca->alt_bq, bca->nqual, 0, 1);
        call->mwu_mqs = mp_mwu_bias(bca->fwd_mqs, bca->rev_mqs, bca->nqual, 0, 1);
    }
    if (flag & MP_INFO_SCB)
        call->mwu_sc = indel ? mp_mwu_bias(bca->iref_scl, bca->ialt_scl, 100, 0, 1)
                             : mp_mwu_bias(bca->ref_scl, bca->alt_scl, 100, 0, 1);
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
        call->mwu_pos = mp_mwu_bias(bca->ref_pos, bca->alt_pos, bca->npos, 0, 0);
    call->mwu_mq = mp_mwu_bias(bca->ref_mq, bca->alt_mq, bca->nqual, 1, 0);
    call->mwu_bq = mp_mwu_bias(bca->ref_bq, bca->alt_bq, bca->nqual, 0, 0);
    call->mwu_mqs = mp_mwu_bias(bca->fwd_mqs, bca->rev_mqs, bca->nqual, 0, 0);
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
    mp_seg_bias(calls, call);
    if (bca->fmt_flag & MP_INFO_ZSCORE)
        bias_z(n, calls, bca, call);
    else
        bias_u(bca, call);
    if (bca->fmt_flag & MP_INFO_VDB)
        call->vdb = mp_vdb(bca->alt_pos, bca->npos);
    return 0;
}

/* ---- mp_site_to_bcf ----------------------------------------------------------------------- */

/*
 * The tag writers skip a tag the header does not declare, as bcftools (which
 * ignores the update's -1) ends up doing, e.g. FORMAT/NMBZ with -U. Any other
 * failure is an error: -1.
 */
static int put_info(const bcf_hdr_t *hdr, bcf1_t *rec, const char *key, const void *v, int n,
                    int type)
{
    int id = bcf_hdr_id2int(hdr, BCF_DT_ID, key);
    if (!bcf_hdr_idinfo_exists(hdr, BCF_HL_INFO, id))
        return 0;
    return bcf_update_info(hdr, rec, key, v, n, type) < 0 ? -1 : 0;
}

static int put_fmt(const bcf_hdr_t *hdr, bcf1_t *rec, const char *key, const void *v, int n,
                   int type)
{
    int id = bcf_hdr_id2int(hdr, BCF_DT_ID, key);
    if (!bcf_hdr_idinfo_exists(hdr, BCF_HL_FMT, id))
        return 0;
    return bcf_update_format(hdr, rec, key, v, n, type) < 0 ? -1 : 0;
}

/* A float INFO tag, left out when the statistic could not be computed (HUGE_VAL). */
static int put_stat(const bcf_hdr_t *hdr, bcf1_t *rec, const char *key, const float *v)
{
    return *v != HUGE_VAL ? put_info(hdr, rec, key, v, 1, BCF_HT_REAL) : 0;
}

/* REF and ALT of the indel record: the base before the indel, then indelreg bases of context. */
static int indel_alleles(const mp_site_t *bc, const mp_aux_t *bca, const char *ref, kstring_t *s,
                         int *has_alt)
{
    const char *after = ref + bc->pos + 1; /* the bases the indel region covers */
    int r = kputc(ref[bc->pos], s) < 0;
    r |= kputsn(after, bca->indelreg, s) < 0;
    for (int i = 1; i < 4 && bc->a[i] >= 0; i++) {
        int len = bca->indel_types[bc->a[i]];
        r |= kputc(',', s) < 0;
        r |= kputc(ref[bc->pos], s) < 0;
        if (len < 0) { /* a deletion: what is left of the region after it */
            if (-len < bca->indelreg)
                r |= kputsn(after - len, bca->indelreg + len, s) < 0;
        } else { /* an insertion (never REF): its consensus, then the region */
            const char *ins = bca->inscns + bc->a[i] * bca->maxins;
            for (int j = 0; j < len; j++)
                r |= kputc("ACGTN"[(int)ins[j]], s) < 0;
            r |= kputsn(after, bca->indelreg, s) < 0;
        }
        *has_alt = 1;
    }
    return r ? -1 : 0;
}

/* REF and ALT of the SNP record; the unseen allele prints as <*>. */
static int snp_alleles(const mp_site_t *bc, kstring_t *s, int *has_alt)
{
    int r = kputc("ACGTN"[bc->ori_ref], s) < 0;
    for (int i = 1; i < 5 && bc->a[i] >= 0; i++) {
        r |= kputc(',', s) < 0;
        if (bc->unseen == i) {
            r |= kputs("<*>", s) < 0;
        } else {
            r |= kputc("ACGT"[bc->a[i]], s) < 0;
            *has_alt = 1;
        }
    }
    return r ? -1 : 0;
}

/* INFO up to QS: indel flags, depths, allele depths, soft clips, I16 and QS. */
static int put_counts_info(mp_site_t *bc, bcf1_t *rec, int fmt_flag, const mp_aux_t *bca)
{
    const bcf_hdr_t *hdr = bc->bcf_hdr;
    int r = 0, nal = rec->n_allele;
    if (bc->ori_ref < 0) {
        r |= put_info(hdr, rec, "INDEL", NULL, 1, BCF_HT_FLAG);
        r |= put_info(hdr, rec, "IDV", &bca->max_support, 1, BCF_HT_INT);
        r |= put_info(hdr, rec, "IMF", &bca->max_frac, 1, BCF_HT_REAL);
    }
    r |= put_info(hdr, rec, "DP", &bc->ori_depth, 1, BCF_HT_INT);
    if (fmt_flag & MP_INFO_ADF)
        r |= put_info(hdr, rec, "ADF", bc->ADF, nal, BCF_HT_INT);
    if (fmt_flag & MP_INFO_ADR)
        r |= put_info(hdr, rec, "ADR", bc->ADR, nal, BCF_HT_INT);
    if (fmt_flag & (MP_INFO_AD | MP_INFO_DPR)) {
        for (int i = 0; i < nal; i++) /* the site's ADF becomes AD: ADF is already written */
            bc->ADF[i] += bc->ADR[i];
        if (fmt_flag & MP_INFO_AD)
            r |= put_info(hdr, rec, "AD", bc->ADF, nal, BCF_HT_INT);
        if (fmt_flag & MP_INFO_DPR)
            r |= put_info(hdr, rec, "DPR", bc->ADF, nal, BCF_HT_INT);
    }
    if (fmt_flag & MP_INFO_SCR)
        r |= put_info(hdr, rec, "SCR", bc->SCR, 1, BCF_HT_INT);
    float i16[16];
    for (int i = 0; i < 16; i++)
        i16[i] = bc->anno[i];
    r |= put_info(hdr, rec, "I16", i16, 16, BCF_HT_REAL);
    r |= put_info(hdr, rec, "QS", bc->qsum, nal, BCF_HT_REAL);
    return r;
}

/* INFO's bias statistics, for records with an ALT allele. */
static int put_bias_info(const mp_site_t *bc, bcf1_t *rec, const mp_aux_t *bca)
{
    const bcf_hdr_t *hdr = bc->bcf_hdr;
    int r = put_stat(hdr, rec, "VDB", &bc->vdb);
    r |= put_stat(hdr, rec, "SGB", &bc->seg_bias);
    if (bca->fmt_flag & MP_INFO_ZSCORE) {
        r |= put_stat(hdr, rec, "RPBZ", &bc->mwu_pos);
        r |= put_stat(hdr, rec, "MQBZ", &bc->mwu_mq);
        r |= put_stat(hdr, rec, "MQSBZ", &bc->mwu_mqs);
        r |= put_stat(hdr, rec, "BQBZ", &bc->mwu_bq);
        r |= put_stat(hdr, rec, "NMBZ", &bc->mwu_nm[0]);
        r |= put_stat(hdr, rec, "SCBZ", &bc->mwu_sc);
    } else {
        r |= put_stat(hdr, rec, "RPB", &bc->mwu_pos);
        r |= put_stat(hdr, rec, "MQB", &bc->mwu_mq);
        r |= put_stat(hdr, rec, "MQSB", &bc->mwu_mqs);
        r |= put_stat(hdr, rec, "BQB", &bc->mwu_bq);
    }
    r |= put_stat(hdr, rec, "FS", &bc->strand_bias);
    return r;
}

/* SP: phred-scaled two-sided Fisher test of strand against allele, 0 when too few reads. */
static int32_t strand_phred(const int32_t *dp4)
{
    int fwd_ref = dp4[0], rev_ref = dp4[1], fwd_alt = dp4[2], rev_alt = dp4[3];
    if (fwd_ref + rev_ref < 2 || fwd_alt + rev_alt < 2 || fwd_ref + fwd_alt < 2 ||
        rev_ref + rev_alt < 2)
        return 0;
    double left, right, two;
    kt_fisher_exact(fwd_ref, rev_ref, fwd_alt, rev_alt, &left, &right, &two);
    int32_t x = (int)(-4.343 * log(two) + .499);
    return x > 255 ? 255 : x;
}

/* FORMAT DP, DV and SP, each computed from DP4 into the shared fmt_arr. */
static int put_depth_fmt(mp_site_t *bc, bcf1_t *rec, int fmt_flag)
{
    const bcf_hdr_t *hdr = bc->bcf_hdr;
    int32_t *v = (int32_t *)bc->fmt_arr;
    const int32_t *dp4 = bc->DP4;
    int r = 0;
    if (fmt_flag & MP_FMT_DP) {
        for (int i = 0; i < bc->n; i++)
            v[i] = dp4[4 * i] + dp4[4 * i + 1] + dp4[4 * i + 2] + dp4[4 * i + 3];
        r |= put_fmt(hdr, rec, "DP", v, bc->n, BCF_HT_INT);
    }
    if (fmt_flag & MP_FMT_DV) {
        for (int i = 0; i < bc->n; i++)
            v[i] = dp4[4 * i + 2] + dp4[4 * i + 3];
        r |= put_fmt(hdr, rec, "DV", v, bc->n, BCF_HT_INT);
    }
    if (fmt_flag & MP_FMT_SP) {
        for (int i = 0; i < bc->n; i++)
            v[i] = strand_phred(dp4 + 4 * i);
        r |= put_fmt(hdr, rec, "SP", v, bc->n, BCF_HT_INT);
    }
    return r;
}

/* FORMAT from DP4 on: allele depths (samples start at slot 1), SCR, QS, NMBZ. */
static int put_allele_fmt(mp_site_t *bc, bcf1_t *rec, int fmt_flag, int has_alt)
{
    const bcf_hdr_t *hdr = bc->bcf_hdr;
    int r = 0, nv = rec->n_sample * rec->n_allele;
    int32_t *adf = bc->ADF + MP_MAX_ALLELES, *adr = bc->ADR + MP_MAX_ALLELES;
    if (fmt_flag & MP_FMT_DP4)
        r |= put_fmt(hdr, rec, "DP4", bc->DP4, rec->n_sample * 4, BCF_HT_INT);
    if (fmt_flag & MP_FMT_ADF)
        r |= put_fmt(hdr, rec, "ADF", adf, nv, BCF_HT_INT);
    if (fmt_flag & MP_FMT_ADR)
        r |= put_fmt(hdr, rec, "ADR", adr, nv, BCF_HT_INT);
    if (fmt_flag & (MP_FMT_AD | MP_FMT_DPR)) {
        for (int i = 0; i < nv; i++) /* ADF becomes AD: FORMAT/ADF is already written */
            adf[i] += adr[i];
        if (fmt_flag & MP_FMT_AD)
            r |= put_fmt(hdr, rec, "AD", adf, nv, BCF_HT_INT);
        if (fmt_flag & MP_FMT_DPR)
            r |= put_fmt(hdr, rec, "DPR", adf, nv, BCF_HT_INT);
    }
    if (fmt_flag & MP_FMT_SCR)
        r |= put_fmt(hdr, rec, "SCR", bc->SCR + 1, rec->n_sample, BCF_HT_INT);
    if (fmt_flag & MP_FMT_QS)
        r |= put_fmt(hdr, rec, "QS", bc->QS, nv, BCF_HT_INT);
    if (has_alt && (fmt_flag & MP_FMT_NMBZ))
        r |= put_fmt(hdr, rec, "NMBZ", bc->mwu_nm + 1, rec->n_sample, BCF_HT_REAL);
    return r;
}

/*
 * Returns 0, or -1 when htslib could not grow the record or bc->tmp (out of
 * memory); b is then incomplete. A tag the header lacks is left out silently.
 * bca->fmt_flag picks Z-score or U tags; fmt_flag picks the rest.
 */
int mp_site_to_bcf(mp_site_t *bc, bcf1_t *b, mp_smpl_t *bcr, int fmt_flag, const mp_aux_t *bca,
                   const char *ref)
{
    (void)bcr; /* the samples' numbers are already in bc */
    const bcf_hdr_t *hdr = bc->bcf_hdr;
    b->rid = bc->tid;
    b->pos = bc->pos;
    b->qual = 0;
    int has_alt = 0, r;
    bc->tmp.l = 0;
    r = bc->ori_ref < 0 ? indel_alleles(bc, bca, ref, &bc->tmp, &has_alt)
                        : snp_alleles(bc, &bc->tmp, &has_alt);
    if (r < 0 || bcf_update_alleles_str(hdr, b, bc->tmp.s) < 0)
        return -1;
    bc->tmp.l = 0;
    r = put_counts_info(bc, b, fmt_flag, bca);
    if (has_alt)
        r |= put_bias_info(bc, b, bca);
    float mq0f = bc->ori_depth ? (float)bc->mq0 / bc->ori_depth : 0;
    r |= put_info(hdr, b, "MQ0F", &mq0f, 1, BCF_HT_REAL);
    b->n_sample = bc->n;
    int nals = b->n_allele;
    r |= put_fmt(hdr, b, "PL", bc->PL, nals * (nals + 1) / 2 * b->n_sample, BCF_HT_INT);
    r |= put_depth_fmt(bc, b, fmt_flag);
    r |= put_allele_fmt(bc, b, fmt_flag, has_alt);
    return r ? -1 : 0;
}

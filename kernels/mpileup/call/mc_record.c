/*
 * mc_record.c -- record edits both calling models share: the allele maps,
 * dropping trimmed alleles from Number=R tags, and the I16 bias tests behind
 * DP4, MQ and PV4.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/kfunc.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

/* Make *(T **)p hold at least n elements of size bytes; *m counts elements. 0, or -1. */
int mc_grow(void *p, int *m, size_t n, size_t size)
{
    void **buf = (void **)p;
    if (n <= (size_t)*m && *buf)
        return 0;
    size_t want = n < 8 ? 8 : n + n / 2;
    if (want > INT32_MAX)
        return -1;
    void *grown = realloc(*buf, want * size);
    if (!grown)
        return -1;
    *buf = grown;
    *m = (int)want;
    return 0;
}

/*
 * als_map: input allele -> output allele or -1 (dropped), for the alleles in
 * the als_out bitmask; with_pl_map: also pl_map, output genotype -> input
 * genotype (diploid, VCF order). The maps must hold nals_ori and its
 * genotypes.
 */
void mc_allele_maps(mc_caller_t *c, int nals_ori, int als_out, int with_pl_map)
{
    int nout = 0;
    for (int i = 0; i < nals_ori; i++)
        c->als_map[i] = als_out & (1 << i) ? nout++ : -1;
    if (!with_pl_map)
        return;
    int k = 0, gt = 0;
    for (int i = 0; i < nals_ori; i++)
        for (int j = 0; j <= i; j++, gt++)
            if ((als_out & (1 << i)) && (als_out & (1 << j)))
                c->pl_map[k++] = gt;
}

/* One Number=R INFO tag of rec without its dropped alleles. 0, or -1. */
static int trim_info_r(mc_caller_t *c, bcf1_t *rec, int key_id, int nals_ori, int nals_new)
{
    const char *key = bcf_hdr_int2id(c->hdr, BCF_DT_ID, key_id);
    int type = bcf_hdr_id2type(c->hdr, BCF_HL_INFO, key_id);
    int n = bcf_get_info_values(c->hdr, rec, key, &c->tmp_ori, &c->mtmp_ori, type);
    if (n <= 0)
        return 0;
    /* bcftools writes the values back as int32 whatever the tag's type */
    if (nals_new == 1)
        return bcf_update_info_int32(c->hdr, rec, key, c->tmp_ori, 1) < 0 ? -1 : 0;
    if (mc_grow(&c->tmp_new, &c->mtmp_new, nals_ori, sizeof(int32_t)) < 0)
        return -1;
    for (int j = 0; j < nals_ori; j++)
        if (c->als_map[j] >= 0)
            memcpy((char *)c->tmp_new + 4 * c->als_map[j], (char *)c->tmp_ori + 4 * j, 4);
    return bcf_update_info_int32(c->hdr, rec, key, c->tmp_new, nals_new) < 0 ? -1 : 0;
}

/* The same for a Number=R FORMAT tag, sample by sample. 0, or -1. */
static int trim_format_r(mc_caller_t *c, bcf1_t *rec, int key_id, int nals_ori, int nals_new)
{
    const char *key = bcf_hdr_int2id(c->hdr, BCF_DT_ID, key_id);
    int type = bcf_hdr_id2type(c->hdr, BCF_HL_FMT, key_id);
    int n = bcf_get_format_values(c->hdr, rec, key, &c->tmp_ori, &c->mtmp_ori, type);
    if (n <= 0)
        return 0;
    int nsmpl = bcf_hdr_nsamples(c->hdr);
    if (n != nals_ori * nsmpl) {
        fprintf(stderr,
                MC_PFX ": FORMAT/%s at %s:%" PRIhts_pos " has %d values, not %d per "
                       "sample\n",
                key, bcf_seqname_safe(c->hdr, rec), rec->pos + 1, n, nals_ori);
        return -1;
    }
    if (mc_grow(&c->tmp_new, &c->mtmp_new, (size_t)nals_new * nsmpl, sizeof(int32_t)) < 0)
        return -1;
    for (int s = 0; s < nsmpl; s++) {
        const char *src = (const char *)c->tmp_ori + (size_t)4 * s * nals_ori;
        char *dst = (char *)c->tmp_new + (size_t)4 * s * nals_new;
        for (int k = 0; k < nals_ori; k++)
            if (c->als_map[k] >= 0)
                memcpy(dst + 4 * c->als_map[k], src + 4 * k, 4);
    }
    return bcf_update_format_int32(c->hdr, rec, key, c->tmp_new, nals_new * nsmpl) < 0 ? -1 : 0;
}

/*
 * Number=R tags of rec keep the alleles als_map keeps (INFO first, then
 * FORMAT, each in the record's order). 0, or -1 after a message.
 */
int mc_trim_number_r(mc_caller_t *c, bcf1_t *rec, int nals_ori, int nals_new)
{
    if (nals_ori == nals_new)
        return 0;
    for (int i = 0; i < (int)rec->n_info; i++) {
        int key = rec->d.info[i].key;
        if (bcf_hdr_id2length(c->hdr, BCF_HL_INFO, key) == BCF_VL_R &&
            trim_info_r(c, rec, key, nals_ori, nals_new) < 0)
            return -1;
    }
    for (int i = 0; i < (int)rec->n_fmt; i++) {
        int key = rec->d.fmt[i].id;
        if (bcf_hdr_id2length(c->hdr, BCF_HL_FMT, key) == BCF_VL_R &&
            trim_format_r(c, rec, key, nals_ori, nals_new) < 0)
            return -1;
    }
    return 0;
}

/*
 * One-sided t-test of I16's sums for REF (n1 reads, a[0] sum, a[1] sum of
 * squares) against ALT (n2, a[2], a[3]): 1 unless REF's mean is the larger.
 */
static double i16_ttest(int n1, int n2, const float a[4])
{
    if (n1 == 0 || n2 == 0 || n1 + n2 < 3)
        return 1.0;
    double mean_ref = (double)a[0] / n1;
    double mean_alt = (double)a[2] / n2;
    if (mean_ref <= mean_alt)
        return 1.;
    double ss = (a[1] - n1 * mean_ref * mean_ref) + (a[3] - n2 * mean_alt * mean_alt);
    double t = (mean_ref - mean_alt) / sqrt(ss / (n1 + n2 - 2) * (1. / n1 + 1. / n2));
    double dof = n1 + n2 - 2;
    if (t < 0.)
        return 1.;
    return .5 * kf_betai(.5 * dof, .5, dof / (dof + t * t));
}

/*
 * The tests on I16 (16 floats): Fisher's strand test, then t-tests of base
 * quality, mapping quality and distance to the read's end. -1 when I16's
 * depth is 0 (a->p all 1), else 0.
 */
int mc_test_i16(const float *anno, mc_i16_t *a)
{
    a->p[0] = a->p[1] = a->p[2] = a->p[3] = 1.;
    a->mq = 0;
    a->depth = anno[0] + anno[1] + anno[2] + anno[3];
    a->is_tested = anno[0] + anno[1] > 0 && anno[2] + anno[3] > 0;
    if (a->depth == 0)
        return -1;
    a->mq = (int)(sqrt((anno[9] + anno[11]) / a->depth) + .499);
    double left, right;
    kt_fisher_exact(anno[0], anno[1], anno[2], anno[3], &left, &right, &a->p[0]);
    for (int i = 1; i < 4; i++)
        a->p[i] = i16_ttest(anno[0] + anno[1], anno[2] + anno[3], anno + 4 * i);
    return 0;
}

/*
 * (int32_t)x as x86-64 converts: NaN and values out of range give INT32_MIN
 * (which htslib then reads as a missing value).
 */
int32_t mc_float_to_int32(float x)
{
    if (!(x >= -2147483648.0f && x < 2147483648.0f))
        return INT32_MIN;
    return (int32_t)x;
}

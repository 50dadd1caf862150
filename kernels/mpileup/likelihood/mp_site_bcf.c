/*
 * mp_site_bcf.c -- the site written as a record (mp_site_to_bcf), as
 * bcftools mpileup 1.16's bcf_call2bcf writes it, tag for tag and in the same
 * order.
 *
 * bcftools edits a bcf1_t tag by tag (bcf_update_info/format), and htslib
 * serialises it when it is written. Here the serialised bytes are written
 * at once (mp_bcf.c) into the record's shared and indiv blocks, which leaves
 * the record as htslib leaves one it has read: every consumer (VCF text, the
 * BCF writer, gVCF) unpacks what it needs. The bytes are the same because
 * htslib's serialised record is the concatenation, in update order, of the
 * typed values each update encodes: ID (empty), the alleles, no FILTER, then
 * each INFO tag (its id, its value); the FORMAT tags likewise.
 */
#include <math.h>
#include <string.h>

#include <htslib/kfunc.h>
#include <htslib/kstring.h>
#include <htslib/vcf.h>

#include "base/ss_exact_fp.h"
#include "mp_bcf.h"
#include "mp_likelihood.h"

/* The tags a record can carry; an id in the header may be both an INFO and a FORMAT tag. */
// clang-format off
enum {
    I_INDEL, I_IDV, I_IMF, I_DP, I_ADF, I_ADR, I_AD, I_DPR, I_SCR, I_I16, I_QS,
    I_VDB, I_SGB, I_RPBZ, I_MQBZ, I_MQSBZ, I_BQBZ, I_NMBZ, I_SCBZ,
    I_RPB, I_MQB, I_MQSB, I_BQB, I_FS, I_MQ0F,
    F_PL, F_DP, F_DV, F_SP, F_DP4, F_ADF, F_ADR, F_AD, F_DPR, F_SCR, F_QS, F_NMBZ,
    N_TAGS
};
_Static_assert(N_TAGS <= MP_MAX_TAGS, "mp_site_t.tag_id holds every tag");

static const char *const tag_name[N_TAGS] = {
    "INDEL", "IDV", "IMF", "DP", "ADF", "ADR", "AD", "DPR", "SCR", "I16", "QS",
    "VDB", "SGB", "RPBZ", "MQBZ", "MQSBZ", "BQBZ", "NMBZ", "SCBZ",
    "RPB", "MQB", "MQSB", "BQB", "FS", "MQ0F",
    "PL", "DP", "DV", "SP", "DP4", "ADF", "ADR", "AD", "DPR", "SCR", "QS", "NMBZ",
};
// clang-format on

/*
 * Each tag's id, or -1 where the header does not declare it (for its kind):
 * such a tag is left out, as bcftools (which ignores the update's -1) ends up
 * doing, e.g. FORMAT/NMBZ with -U. Looked up once per header.
 */
static void load_tag_ids(mp_site_t *bc)
{
    const bcf_hdr_t *hdr = bc->bcf_hdr;
    for (int t = 0; t < N_TAGS; t++) {
        int id = bcf_hdr_id2int(hdr, BCF_DT_ID, tag_name[t]);
        int kind = t < F_PL ? BCF_HL_INFO : BCF_HL_FMT;
        bc->tag_id[t] = bcf_hdr_idinfo_exists(hdr, kind, id) ? id : -1;
    }
    bc->tag_hdr = hdr;
}

/* The record being written; err: a block could not grow. */
typedef struct {
    bcf1_t *rec;
    const int *id;
    int err;
} writer_t;

/* An INFO tag (type BCF_HT_INT, _REAL, or _FLAG with v NULL), as bcf_update_info encodes it. */
static void put_info(writer_t *w, int tag, const void *v, int n, int type)
{
    int id = w->id[tag];
    if (id < 0 || n == 0) /* n == 0 would remove the tag: nothing to write */
        return;
    kstring_t *s = &w->rec->shared;
    if (mp_bcf_reserve(s, MP_BCF_ROOM(1) + MP_BCF_ROOM(n)) < 0) {
        w->err = -1;
        return;
    }
    mp_bcf_ints(s, &id, 1, 1);
    if (type == BCF_HT_INT)
        mp_bcf_ints(s, v, n, n);
    else if (type == BCF_HT_REAL)
        mp_bcf_floats(s, v, n, n);
    else
        mp_bcf_size(s, 0, BCF_BT_NULL);
    w->rec->n_info++;
}

/* A FORMAT tag over all samples (n values, the same count each), as bcf_update_format. */
static void put_fmt(writer_t *w, int tag, const void *v, int n, int type)
{
    int id = w->id[tag];
    if (id < 0 || n == 0 || w->rec->n_sample == 0) /* no samples: htslib drops FORMAT */
        return;
    kstring_t *s = &w->rec->indiv;
    int per_sample = n / w->rec->n_sample;
    if (mp_bcf_reserve(s, MP_BCF_ROOM(1) + MP_BCF_ROOM(n)) < 0) {
        w->err = -1;
        return;
    }
    mp_bcf_ints(s, &id, 1, 1);
    if (type == BCF_HT_INT)
        mp_bcf_ints(s, v, n, per_sample);
    else
        mp_bcf_floats(s, v, n, per_sample);
    w->rec->n_fmt++;
}

/* A float INFO tag, left out when the statistic could not be computed (HUGE_VAL). */
static void put_stat(writer_t *w, int tag, const float *v)
{
    if (*v != HUGE_VAL)
        put_info(w, tag, v, 1, BCF_HT_REAL);
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

/*
 * The shared block up to INFO: no ID, the comma-separated alleles each as a
 * string, no FILTER. rlen is REF's length, as bcf_update_alleles_str sets it.
 */
static void put_alleles(writer_t *w, const char *alleles)
{
    bcf1_t *rec = w->rec;
    kstring_t *s = &rec->shared;
    size_t total = strlen(alleles);
    /* per allele a descriptor and its bytes; the empty ID and FILTER: a byte each */
    if (mp_bcf_reserve(s, 2 + total + 6 * (total + 1)) < 0) {
        w->err = -1;
        return;
    }
    mp_bcf_size(s, 0, BCF_BT_CHAR);
    for (const char *a = alleles;; a++) {
        const char *end = strchr(a, ',');
        int len = end ? (int)(end - a) : (int)strlen(a);
        if (rec->n_allele == 0)
            rec->rlen = len;
        mp_bcf_chars(s, a, len);
        rec->n_allele++;
        if (!end)
            break;
        a = end;
    }
    mp_bcf_ints(s, NULL, 0, 0);
}

/* INFO up to QS: indel flags, depths, allele depths, soft clips, I16 and QS. */
static void put_counts_info(writer_t *w, mp_site_t *bc, int fmt_flag, const mp_aux_t *bca)
{
    int nal = w->rec->n_allele;
    if (bc->ori_ref < 0) {
        put_info(w, I_INDEL, NULL, 1, BCF_HT_FLAG);
        put_info(w, I_IDV, &bca->max_support, 1, BCF_HT_INT);
        put_info(w, I_IMF, &bca->max_frac, 1, BCF_HT_REAL);
    }
    put_info(w, I_DP, &bc->ori_depth, 1, BCF_HT_INT);
    if (fmt_flag & MP_INFO_ADF)
        put_info(w, I_ADF, bc->ADF, nal, BCF_HT_INT);
    if (fmt_flag & MP_INFO_ADR)
        put_info(w, I_ADR, bc->ADR, nal, BCF_HT_INT);
    if (fmt_flag & (MP_INFO_AD | MP_INFO_DPR)) {
        for (int i = 0; i < nal; i++) /* the site's ADF becomes AD: ADF is already written */
            bc->ADF[i] += bc->ADR[i];
        if (fmt_flag & MP_INFO_AD)
            put_info(w, I_AD, bc->ADF, nal, BCF_HT_INT);
        if (fmt_flag & MP_INFO_DPR)
            put_info(w, I_DPR, bc->ADF, nal, BCF_HT_INT);
    }
    if (fmt_flag & MP_INFO_SCR)
        put_info(w, I_SCR, bc->SCR, 1, BCF_HT_INT);
    float i16[16];
    for (int i = 0; i < 16; i++)
        i16[i] = bc->anno[i];
    put_info(w, I_I16, i16, 16, BCF_HT_REAL);
    put_info(w, I_QS, bc->qsum, nal, BCF_HT_REAL);
}

/* INFO's bias statistics, for records with an ALT allele. */
static void put_bias_info(writer_t *w, const mp_site_t *bc, const mp_aux_t *bca)
{
    put_stat(w, I_VDB, &bc->vdb);
    put_stat(w, I_SGB, &bc->seg_bias);
    if (bca->fmt_flag & MP_INFO_ZSCORE) {
        put_stat(w, I_RPBZ, &bc->mwu_pos);
        put_stat(w, I_MQBZ, &bc->mwu_mq);
        put_stat(w, I_MQSBZ, &bc->mwu_mqs);
        put_stat(w, I_BQBZ, &bc->mwu_bq);
        put_stat(w, I_NMBZ, &bc->mwu_nm[0]);
        put_stat(w, I_SCBZ, &bc->mwu_sc);
    } else {
        put_stat(w, I_RPB, &bc->mwu_pos);
        put_stat(w, I_MQB, &bc->mwu_mq);
        put_stat(w, I_MQSB, &bc->mwu_mqs);
        put_stat(w, I_BQB, &bc->mwu_bq);
    }
    put_stat(w, I_FS, &bc->strand_bias);
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
static void put_depth_fmt(writer_t *w, mp_site_t *bc, int fmt_flag)
{
    int32_t *v = (int32_t *)bc->fmt_arr;
    const int32_t *dp4 = bc->DP4;
    if (fmt_flag & MP_FMT_DP) {
        for (int i = 0; i < bc->n; i++)
            v[i] = dp4[4 * i] + dp4[4 * i + 1] + dp4[4 * i + 2] + dp4[4 * i + 3];
        put_fmt(w, F_DP, v, bc->n, BCF_HT_INT);
    }
    if (fmt_flag & MP_FMT_DV) {
        for (int i = 0; i < bc->n; i++)
            v[i] = dp4[4 * i + 2] + dp4[4 * i + 3];
        put_fmt(w, F_DV, v, bc->n, BCF_HT_INT);
    }
    if (fmt_flag & MP_FMT_SP) {
        for (int i = 0; i < bc->n; i++)
            v[i] = strand_phred(dp4 + 4 * i);
        put_fmt(w, F_SP, v, bc->n, BCF_HT_INT);
    }
}

/* FORMAT from DP4 on: allele depths (samples start at slot 1), SCR, QS, NMBZ. */
static void put_allele_fmt(writer_t *w, mp_site_t *bc, int fmt_flag, int has_alt)
{
    const bcf1_t *rec = w->rec;
    int nv = rec->n_sample * rec->n_allele;
    int32_t *adf = bc->ADF + MP_MAX_ALLELES, *adr = bc->ADR + MP_MAX_ALLELES;
    if (fmt_flag & MP_FMT_DP4)
        put_fmt(w, F_DP4, bc->DP4, rec->n_sample * 4, BCF_HT_INT);
    if (fmt_flag & MP_FMT_ADF)
        put_fmt(w, F_ADF, adf, nv, BCF_HT_INT);
    if (fmt_flag & MP_FMT_ADR)
        put_fmt(w, F_ADR, adr, nv, BCF_HT_INT);
    if (fmt_flag & (MP_FMT_AD | MP_FMT_DPR)) {
        for (int i = 0; i < nv; i++) /* ADF becomes AD: FORMAT/ADF is already written */
            adf[i] += adr[i];
        if (fmt_flag & MP_FMT_AD)
            put_fmt(w, F_AD, adf, nv, BCF_HT_INT);
        if (fmt_flag & MP_FMT_DPR)
            put_fmt(w, F_DPR, adf, nv, BCF_HT_INT);
    }
    if (fmt_flag & MP_FMT_SCR)
        put_fmt(w, F_SCR, bc->SCR + 1, rec->n_sample, BCF_HT_INT);
    if (fmt_flag & MP_FMT_QS)
        put_fmt(w, F_QS, bc->QS, nv, BCF_HT_INT);
    if (has_alt && (fmt_flag & MP_FMT_NMBZ))
        put_fmt(w, F_NMBZ, bc->mwu_nm + 1, rec->n_sample, BCF_HT_REAL);
}

/*
 * Returns 0, or -1 when a block or bc->tmp could not grow (out of memory); b
 * is then incomplete. A tag the header lacks is left out silently.
 * bca->fmt_flag picks Z-score or U tags; fmt_flag picks the rest.
 */
int mp_site_to_bcf(mp_site_t *bc, bcf1_t *b, mp_smpl_t *bcr, int fmt_flag, const mp_aux_t *bca,
                   const char *ref)
{
    (void)bcr; /* the samples' numbers are already in bc */
    if (bc->tag_hdr != bc->bcf_hdr)
        load_tag_ids(bc);
    writer_t w = {b, bc->tag_id, 0};
    b->rid = bc->tid;
    b->pos = bc->pos;
    b->qual = 0;
    int has_alt = 0;
    bc->tmp.l = 0;
    int r = bc->ori_ref < 0 ? indel_alleles(bc, bca, ref, &bc->tmp, &has_alt)
                            : snp_alleles(bc, &bc->tmp, &has_alt);
    if (r < 0)
        return -1;
    put_alleles(&w, bc->tmp.s);
    bc->tmp.l = 0;
    put_counts_info(&w, bc, fmt_flag, bca);
    if (has_alt)
        put_bias_info(&w, bc, bca);
    float mq0f = bc->ori_depth ? (float)bc->mq0 / bc->ori_depth : 0;
    put_info(&w, I_MQ0F, &mq0f, 1, BCF_HT_REAL);
    b->n_sample = bc->n;
    int nals = b->n_allele;
    put_fmt(&w, F_PL, bc->PL, nals * (nals + 1) / 2 * b->n_sample, BCF_HT_INT);
    put_depth_fmt(&w, bc, fmt_flag);
    put_allele_fmt(&w, bc, fmt_flag, has_alt);
    return w.err;
}

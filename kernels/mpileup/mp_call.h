/*
 * mp_call.h -- genotype likelihoods per pileup column, as bcftools mpileup
 * 1.16 computes them (bam2bcf.c, bam2bcf_indel.c), written for seqshard: every
 * piece of state lives in the worker's mp_aux_t, so workers run side by side,
 * and the one random draw (downsampling a sample's bases past 255) comes from
 * the caller's mp_rng_t instead of a process-wide stream.
 *
 * Flow per column (mpileup.c): mp_aux_clean; mp_glfgen per sample (ref_base
 * 4-bit, or -1 for the indel record after mp_gap_prep); mp_combine; then
 * mp_site_to_bcf fills a bcf1_t.
 *
 * Private to kernels/mpileup/.
 */
#ifndef SS_MP_CALL_H
#define SS_MP_CALL_H

#include <stdint.h>
#include <htslib/hts.h>
#include <htslib/kstring.h>
#include <htslib/sam.h>
#include <htslib/vcf.h>

#include "mp_rng.h"

/* -a annotations and behaviour bits (bcftools' B2B_* values, the same bits). */
#define MP_FMT_DP (1 << 0)
#define MP_FMT_SP (1 << 1)
#define MP_FMT_DV (1 << 2)
#define MP_FMT_DP4 (1 << 3)
#define MP_FMT_DPR (1 << 4)
#define MP_INFO_DPR (1 << 5)
#define MP_FMT_AD (1 << 6)
#define MP_FMT_ADF (1 << 7)
#define MP_FMT_ADR (1 << 8)
#define MP_INFO_AD (1 << 9)
#define MP_INFO_ADF (1 << 10)
#define MP_INFO_ADR (1 << 11)
#define MP_INFO_SCR (1 << 12)
#define MP_FMT_SCR (1 << 13)
#define MP_INFO_VDB (1 << 14)
#define MP_INFO_RPB (1 << 15)
#define MP_FMT_QS (1 << 16)
#define MP_INFO_SCB (1 << 17)
#define MP_FMT_NMBZ (1 << 18)
#define MP_INFO_ZSCORE (1 << 30)

#define MP_INDEL_NULL 10000
#define MP_MAX_ALLELES 5
#define MP_N_NM 32 /* NMBZ bins: the most mismatches counted */

/* --ar: what reads that support no allele do to AD (bcftools' B2B_DROP ...). */
#define MP_AMBIG_DROP 0
#define MP_AMBIG_INC_AD 1
#define MP_AMBIG_INC_AD0 2

/*
 * What the read's pileup cd.i holds, set when the read enters the pileup
 * (mpileup.c's constructor): bit 0 the read has a soft clip, bit 1 it has an
 * indel or ref skip (only when BAQ is on), bits 2+ its sample.
 */
#define MP_CD_SOFT_CLIP(i) ((i) & 1)
#define MP_CD_INDEL(i) ((i) & 2)
#define MP_CD_SAMPLE(i) ((i) >> 2)
#define MP_CD_MAKE(sample, clip, indel) (((sample) << 2) | ((indel) ? 2 : 0) | ((clip) ? 1 : 0))

/*
 * The worker's calling state and settings (bcftools' bcf_callaux_t): set up
 * by mp_aux_init, settings filled by the caller, reused column after column.
 */
typedef struct {
    int fmt_flag, ambig_reads;
    int capQ, min_baseQ, max_baseQ, delta_baseQ;
    int openQ, extQ, tandemQ;          /* indel scoring */
    uint32_t min_support, max_support; /* indel candidates: -m */
    double min_frac;                   /* -F */
    float max_frac;
    int per_sample_flt;                /* --per-sample-mF */
    /* bias tests */
    int *ref_pos, *alt_pos, npos, *ref_mq, *alt_mq, *ref_bq, *alt_bq, *fwd_mqs, *rev_mqs, nqual;
    int *iref_pos, *ialt_pos, *iref_mq, *ialt_mq;
    int ref_scl[100], alt_scl[100];
    int iref_scl[100], ialt_scl[100];
    /* internal */
    int max_bases;
    int indel_types[4];
    int indel_win_size;
    int maxins, indelreg;
    int read_len;
    char *inscns;
    uint16_t *bases; /* 6 bits quality, 1 strand, 4 base or indel allele */
    errmod_t *e;
    float indel_bias;
    int32_t *ref_nm, *alt_nm; /* the site's arrays (mp_site_t), for mp_glfgen */
    /* indel scoring's buffers, reused from column to column (mp_indel.c) */
    void *indel_ws;
} mp_aux_t;

/* One sample's numbers at a column (bcftools' bcf_callret1_t). */
typedef struct {
    uint32_t ori_depth; /* reads before --min-BQ */
    unsigned int mq0;
    int32_t *ADF, *ADR, SCR, *QS;
    int32_t *ref_nm, *alt_nm;
    /* I16: depth fwd/rev ref (0,1) and alt (2,3); baseQ sum and sum of squares ref (4,5)
     * alt (6,7); mapQ (8..11); distance to the read's end (12..15) */
    double anno[16];
    float p[25]; /* phred-scaled likelihood of each genotype */
} mp_smpl_t;

/* The site over all samples (bcftools' bcf_call_t). */
typedef struct {
    int tid, pos;
    bcf_hdr_t *bcf_hdr;
    int a[5];
    float qsum[MP_MAX_ALLELES];
    int n, n_alleles, shift, ori_ref, unseen;
    int n_supp;
    double anno[16];
    unsigned int depth, ori_depth, mq0;
    int32_t *PL, *DP4, *ADR, *ADF, *SCR, *QS, *ref_nm, *alt_nm;
    uint8_t *fmt_arr;
    float vdb;
    float mwu_pos, mwu_mq, mwu_bq, mwu_mqs, mwu_sc, *mwu_nm;
    float seg_bias;
    float strand_bias;
    kstring_t tmp;
} mp_site_t;

/*
 * The worker's state, with errmod_init(1 - 0.83) as bcftools' theta < 0 gives.
 * NULL when out of memory. mp_aux_destroy accepts NULL. Any one thread.
 */
mp_aux_t *mp_aux_init(double theta, int min_baseQ, int max_baseQ, int delta_baseQ);
void mp_aux_destroy(mp_aux_t *bca);

/*
 * One sample's column: its reads pl[0..n) (each with cd.i as above), ref_base
 * 4-bit (seq_nt16_table) for the SNP record or -1 for the indel record after
 * mp_gap_prep. Past 255 bases the sample's bases are shuffled with rng's draws
 * (as ks_shuffle with hts_drand48 does) and cut to 255. Returns what
 * bcf_call_glfgen returns.
 */
int mp_glfgen(int n, const bam_pileup1_t *pl, int ref_base, mp_aux_t *bca, mp_smpl_t *r,
              mp_rng_t *rng);
/* The samples' numbers into the site; as bcf_call_combine (< 0: no record). */
int mp_combine(int n, const mp_smpl_t *calls, mp_aux_t *bca, int ref_base, mp_site_t *call);
/* The site as a record; as bcf_call2bcf (ref: the contig, for indel alleles; NULL for SNPs). */
int mp_site_to_bcf(mp_site_t *bc, bcf1_t *b, mp_smpl_t *bcr, int fmt_flag, const mp_aux_t *bca,
                   const char *ref);
/* Clear per-column state; as bcf_callaux_clean. */
void mp_aux_clean(mp_aux_t *bca, mp_site_t *call);

/*
 * Indel candidates at pos and each read's score for each (bcf_call_gap_prep):
 * n samples, their reads plp[s][0..n_plp[s]), ref the whole contig,
 * NUL-terminated. >= 0 when there is an indel record to make, < 0 when not
 * (and p->aux of the reads is set as bcftools sets it). mp_indel.c.
 */
int mp_gap_prep(int n, int *n_plp, bam_pileup1_t **plp, int pos, mp_aux_t *bca, const char *ref);
/* Free what mp_gap_prep keeps in bca->indel_ws. */
void mp_indel_ws_free(mp_aux_t *bca);

#endif

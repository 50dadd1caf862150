/*
 * mp_likelihood.h -- genotype likelihoods per pileup column, as bcftools mpileup
 * 1.16 computes them (bam2bcf.c, bam2bcf_indel.c), written for seqshard: every
 * piece of state lives in the worker's mp_aux_t, so workers run side by side,
 * and the one random draw (downsampling a sample's bases past 255) comes from
 * the caller's mp_rng_t instead of a process-wide stream.
 *
 * Flow per column (pileup/mp_column.c): mp_aux_clean; mp_glfgen per sample (ref_base
 * 4-bit, or -1 for the indel record after mp_gap_prep); mp_combine; then
 * mp_site_to_bcf fills a bcf1_t.
 *
 * Private to kernels/mpileup/.
 */
#ifndef SS_MP_LIKELIHOOD_H
#define SS_MP_LIKELIHOOD_H

#include <htslib/hts.h>
#include <htslib/kstring.h>
#include <htslib/sam.h>
#include <htslib/vcf.h>
#include <stdint.h>

#include "../pileup/mp_ref.h" /* mp_gap_prep reads the reference through it */
#include "mp_errmod.h"
#include "mp_rng.h"

/* -a annotations and behaviour bits (bcftools' B2B_* values, the same bits). */
#define MP_FMT_DP      (1 << 0)
#define MP_FMT_SP      (1 << 1)
#define MP_FMT_DV      (1 << 2)
#define MP_FMT_DP4     (1 << 3)
#define MP_FMT_DPR     (1 << 4)
#define MP_INFO_DPR    (1 << 5)
#define MP_FMT_AD      (1 << 6)
#define MP_FMT_ADF     (1 << 7)
#define MP_FMT_ADR     (1 << 8)
#define MP_INFO_AD     (1 << 9)
#define MP_INFO_ADF    (1 << 10)
#define MP_INFO_ADR    (1 << 11)
#define MP_INFO_SCR    (1 << 12)
#define MP_FMT_SCR     (1 << 13)
#define MP_INFO_VDB    (1 << 14)
#define MP_INFO_RPB    (1 << 15)
#define MP_FMT_QS      (1 << 16)
#define MP_INFO_SCB    (1 << 17)
#define MP_FMT_NMBZ    (1 << 18)
#define MP_INFO_ZSCORE (1 << 30)

#define MP_INDEL_NULL  10000
#define MP_MAX_ALLELES 5
#define MP_N_NM        32 /* NMBZ bins: the most mismatches counted */
#define MP_MAX_TAGS    48 /* INFO and FORMAT tags a record can carry (mp_site_bcf.c) */

/* --ar: what reads that support no allele do to AD (bcftools' B2B_DROP ...). */
#define MP_AMBIG_DROP    0
#define MP_AMBIG_INC_AD  1
#define MP_AMBIG_INC_AD0 2

/*
 * What a read's pileup cd.i holds, worked out once when the read enters the
 * pileup (mp_read_cd, from mpileup's constructor) so that the columns the
 * read is in need not look at its CIGAR and tags again:
 *   bit 0       it has a soft clip
 *   bit 1       it has an indel or ref skip (only when BAQ is on)
 *   bits 2-7    its mismatches as the NMBZ test counts them, before the
 *               site's own come off, capped to 0..MP_CD_NM_MAX; or
 *               MP_CD_NM_NONE: it has no NM tag
 *   bits 8-19   soft-clipped bases at its left end and
 *   bits 20-31  at its right end (hard clips skipped); MP_CD_CLIP_FAR: too
 *               many to hold, count them from the CIGAR
 *   bits 32-63  its sample
 */
#define MP_CD_NM_MAX        (MP_N_NM + 1) /* an ALT read drops 2: still past the last bin */
#define MP_CD_NM_NONE       63
#define MP_CD_CLIP_FAR      4095
#define MP_CD_SOFT_CLIP(i)  ((i)&1)
#define MP_CD_INDEL(i)      ((i)&2)
#define MP_CD_NM(i)         ((int)((i) >> 2 & 0x3f))
#define MP_CD_LEFT_CLIP(i)  ((int)((i) >> 8 & 0xfff))
#define MP_CD_RIGHT_CLIP(i) ((int)((i) >> 20 & 0xfff))
#define MP_CD_SAMPLE(i)     ((int)(int32_t)((uint64_t)(i) >> 32))

/* cd.i for read b of the sample (see above); with_indel: fill bit 1 (BAQ on). Any thread. */
int64_t mp_read_cd(const bam1_t *b, int sample, int with_indel);
/* The soft-clipped bases at each end of b's CIGAR, hard clips skipped, each counted once. */
void mp_soft_clips(const bam1_t *b, int *left, int *right);

/*
 * A histogram of the bias tests, with the bins that are not 0 marked, so
 * that the tests and the clearing visit those bins only (most are 0, and a
 * branch per bin on whether it is costs more than the bins' arithmetic).
 */
#define MP_HIST_BINS 100 /* the most any has: read positions and soft clips */
typedef struct {
    int bin[MP_HIST_BINS];
    uint64_t used[2]; /* bit i of used[i >> 6]: bin i is not 0 */
} mp_hist_t;

/* One more in bin i of h; an i outside the bins (only a malformed read gives one) counts
 * in the nearest, rather than in memory past them. */
static inline void mp_hist_add(mp_hist_t *h, int i)
{
    if ((unsigned)i >= MP_HIST_BINS)
        i = i < 0 ? 0 : MP_HIST_BINS - 1;
    h->bin[i]++;
    h->used[i >> 6] |= (uint64_t)1 << (i & 63);
}

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
    int per_sample_flt; /* --per-sample-mF */
    /* bias tests: npos position bins, nqual quality bins, 100 soft-clip bins */
    int npos, nqual;
    mp_hist_t ref_pos, alt_pos, ref_mq, alt_mq, ref_bq, alt_bq, fwd_mqs, rev_mqs;
    mp_hist_t iref_pos, ialt_pos, iref_mq, ialt_mq;
    mp_hist_t ref_scl, alt_scl, iref_scl, ialt_scl;
    int hist_dirty; /* a histogram was counted since the last mp_aux_clean */
    /*
     * The reads mp_glfgen saw since the last mp_aux_clean, waiting to be
     * counted into the histograms: only a site with an ALT reads them
     * (mp_bias_bins, from mp_combine), and most sites have none.
     */
    struct mp_deferred *deferred;
    int n_deferred, m_deferred;
    /* internal */
    int max_bases;
    int indel_types[4];
    int indel_win_size;
    int maxins, indelreg;
    int read_len;
    char *inscns;
    uint16_t *bases; /* 6 bits quality, 1 strand, 4 base or indel allele */
    mp_errmod_t *e;
    float indel_bias;
    int32_t *ref_nm, *alt_nm; /* the site's arrays (mp_site_t), for mp_glfgen */
    /* indel scoring's buffers, reused from column to column (mp_indel.c) */
    void *indel_ws;
    struct baq_s *baq; /* the worker's alignment workspace (genomics/baq.h) */
} mp_aux_t;

/* A read mp_glfgen kept: what its sums and, later, the bias histograms (mp_bias_bins) need. */
typedef struct mp_deferred {
    const bam_pileup1_t *p;
    struct mp_smpl *r; /* its sample, for the per-sample mismatch bins */
    uint8_t baseQ;     /* as I16 sums it (the histogram caps it at 59) */
    uint8_t mapQ;      /* after capQ (the histogram caps it at 59) */
    int8_t dist;       /* to the read's nearer end, capped as I16 has it; -1 for a read
                        * inside its trailing deletion (htslib's qpos is then l_qseq) */
    uint8_t rev;       /* on the reverse strand */
    uint8_t is_diff;   /* not the reference allele */
} mp_deferred_t;

/* One sample's numbers at a column (bcftools' bcf_callret1_t). */
typedef struct mp_smpl {
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
    /* the header's id of each tag mp_site_to_bcf writes, -1 where it lacks it (mp_site_bcf.c) */
    const bcf_hdr_t *tag_hdr; /* the header tag_id is for; NULL: not looked up yet */
    int tag_id[MP_MAX_TAGS];
} mp_site_t;

/*
 * The worker's state, with the error model for dependency 1 - 0.83 (bcftools'
 * errmod_init(1 - theta) for theta < 0).
 * NULL when out of memory. mp_aux_destroy accepts NULL. Any one thread.
 */
mp_aux_t *mp_aux_init(double theta, int min_baseQ, int max_baseQ, int delta_baseQ);
void mp_aux_destroy(mp_aux_t *bca);

/*
 * How many bases of the sample's reads pl[0..n) the SNP record keeps: the n
 * that decides whether mp_glfgen draws (past 255), without computing the rest.
 */
int mp_glf_snp_kept(int n, const bam_pileup1_t *pl, const mp_aux_t *bca);

/*
 * A read's SNP words: for each base of the read, what the SNP record takes
 * from it (mp_glf.c), kept with the pileup engine's record of the read
 * (pe_rec_t's client) and worked out again when its qualities change.
 * mp_snp_words_free frees them (the engine's client_free).
 */
void mp_snp_words_free(void *client);

/*
 * One sample's column: its reads pl[0..n) (each with cd.i as above), ref_base
 * 4-bit (seq_nt16_table) for the SNP record or -1 for the indel record after
 * mp_gap_prep. Past 255 bases the sample's bases are shuffled with rng's draws
 * (as ks_shuffle with hts_drand48 does) and cut to 255. The reads must come
 * from the pileup engine (genomics/pileup_engine.h: pe_rec_t). Returns what
 * bcf_call_glfgen returns.
 */
int mp_glfgen(int n, const bam_pileup1_t *pl, int ref_base, mp_aux_t *bca, mp_smpl_t *r,
              mp_rng_t *rng);
/* The reads mp_glfgen deferred, counted into the bias tests' histograms. Any one thread. */
void mp_bias_bins(mp_aux_t *bca);
/* The samples' numbers into the site; as bcf_call_combine (< 0: no record). */
int mp_combine(int n, const mp_smpl_t *calls, mp_aux_t *bca, int ref_base, mp_site_t *call);
/*
 * The site as a record; as bcf_call2bcf (ref: the contig, for indel alleles;
 * NULL for SNPs). b must be fresh from bcf_clear1. It comes out packed, as if
 * read from a BCF file (its shared and indiv blocks are the bytes bcftools
 * writes). htslib's accessors unpack what they read; code that reads
 * b->d.allele itself calls bcf_unpack(b, BCF_UN_STR) first (most records
 * are only written, and unpacking them would cost 2% of the run).
 */
int mp_site_to_bcf(mp_site_t *bc, bcf1_t *b, mp_smpl_t *bcr, int fmt_flag, const mp_aux_t *bca,
                   const char *ref);
/* Clear per-column state; as bcf_callaux_clean. */
void mp_aux_clean(mp_aux_t *bca, mp_site_t *call);

/*
 * Indel candidates at pos and each read's score for each (bcf_call_gap_prep):
 * n samples, their reads plp[s][0..n_plp[s]), ref the contig (more of it
 * loaded as the window and repeat scans need). >= 0 when there is an indel
 * record to make, < 0 when not (and p->aux of the reads is set as bcftools
 * sets it). indel/mp_indel.c.
 */
int mp_gap_prep(int n, int *n_plp, bam_pileup1_t **plp, int pos, mp_aux_t *bca, mp_ref_t *ref);
/* Free what mp_gap_prep keeps in bca->indel_ws. */
void mp_indel_ws_free(mp_aux_t *bca);

#endif

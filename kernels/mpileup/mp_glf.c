/*
 * mp_glf.c -- the worker's calling state, and one sample's reads at a column
 * turned into genotype likelihoods, depth annotations and the histograms the
 * bias tests read (mp_bias.c).
 *
 * The numbers must equal bcftools mpileup 1.16's byte for byte, so every
 * integer truncation, float-vs-double step and cap below is where bcftools
 * has it, even where another choice would read better.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/hts.h>
#include <htslib/sam.h>

#include "mp_call.h"

#define DEFAULT_THETA   0.83 /* errmod's dependency: bcftools' default when theta <= 0 */
#define MAPQ_255_AS     20   /* MAPQ 255 means "unknown": counted as 20 */
#define DIST_CAP        25   /* distance to the read's end, capped for I16[12..15] */
#define N_POS_BINS      100  /* read-position histogram: the VDB fit assumes 100 bins */
#define N_QUAL_BINS     60   /* mapQ and baseQ histograms */
#define N_SOFTCLIP_BINS 100

mp_aux_t *mp_aux_init(double theta, int min_baseQ, int max_baseQ, int delta_baseQ)
{
    if (theta <= 0.)
        theta = DEFAULT_THETA;
    mp_aux_t *bca = calloc(1, sizeof(*bca));
    if (!bca)
        return NULL;
    bca->capQ = 60;
    bca->openQ = 40;
    bca->extQ = 20;
    bca->tandemQ = 100;
    bca->min_baseQ = min_baseQ;
    bca->max_baseQ = max_baseQ;
    bca->delta_baseQ = delta_baseQ;
    bca->min_frac = 0.002;
    bca->min_support = 1;
    bca->npos = N_POS_BINS;
    bca->nqual = N_QUAL_BINS;
    bca->e = errmod_init(1. - theta);
    int **pos_bins[] = {&bca->ref_pos, &bca->alt_pos, &bca->iref_pos, &bca->ialt_pos};
    int **qual_bins[] = {&bca->ref_mq, &bca->alt_mq, &bca->iref_mq, &bca->ialt_mq,
                         &bca->ref_bq, &bca->alt_bq, &bca->fwd_mqs, &bca->rev_mqs};
    int ok = bca->e != NULL;
    for (size_t i = 0; i < sizeof(pos_bins) / sizeof(pos_bins[0]); i++)
        ok &= (*pos_bins[i] = calloc(bca->npos, sizeof(int))) != NULL;
    for (size_t i = 0; i < sizeof(qual_bins) / sizeof(qual_bins[0]); i++)
        ok &= (*qual_bins[i] = calloc(bca->nqual, sizeof(int))) != NULL;
    if (!ok) {
        mp_aux_destroy(bca);
        return NULL;
    }
    return bca;
}

void mp_aux_destroy(mp_aux_t *bca)
{
    if (!bca)
        return;
    errmod_destroy(bca->e);
    free(bca->ref_pos);
    free(bca->alt_pos);
    free(bca->iref_pos);
    free(bca->ialt_pos);
    free(bca->ref_mq);
    free(bca->alt_mq);
    free(bca->iref_mq);
    free(bca->ialt_mq);
    free(bca->ref_bq);
    free(bca->alt_bq);
    free(bca->fwd_mqs);
    free(bca->rev_mqs);
    free(bca->bases);
    mp_indel_ws_free(bca);
    free(bca->inscns); /* grown by mp_gap_prep, owned here as in bcftools */
    free(bca);
}

void mp_aux_clean(mp_aux_t *bca, mp_site_t *call)
{
    size_t npos = sizeof(int) * bca->npos, nqual = sizeof(int) * bca->nqual;
    memset(bca->ref_pos, 0, npos);
    memset(bca->alt_pos, 0, npos);
    memset(bca->iref_pos, 0, npos);
    memset(bca->ialt_pos, 0, npos);
    memset(bca->ref_mq, 0, nqual);
    memset(bca->alt_mq, 0, nqual);
    memset(bca->iref_mq, 0, nqual);
    memset(bca->ialt_mq, 0, nqual);
    memset(bca->ref_bq, 0, nqual);
    memset(bca->alt_bq, 0, nqual);
    memset(bca->fwd_mqs, 0, nqual);
    memset(bca->rev_mqs, 0, nqual);
    /* AD*, SCR and (with FORMAT/NMBZ) the mismatch bins: slot 0 the site, 1.. the samples */
    size_t slots = (size_t)call->n + 1;
    if (call->ADF)
        memset(call->ADF, 0, sizeof(int32_t) * slots * MP_MAX_ALLELES);
    if (call->ADR)
        memset(call->ADR, 0, sizeof(int32_t) * slots * MP_MAX_ALLELES);
    if (call->SCR)
        memset(call->SCR, 0, sizeof(int32_t) * slots);
    size_t nm_slots = (bca->fmt_flag & MP_FMT_NMBZ) ? slots : 1;
    memset(call->ref_nm, 0, sizeof(int32_t) * nm_slots * MP_N_NM);
    memset(call->alt_nm, 0, sizeof(int32_t) * nm_slots * MP_N_NM);
    memset(call->QS, 0, sizeof(int32_t) * call->n * MP_MAX_ALLELES);
    memset(bca->ref_scl, 0, sizeof(bca->ref_scl));
    memset(bca->alt_scl, 0, sizeof(bca->alt_scl));
    memset(bca->iref_scl, 0, sizeof(bca->iref_scl));
    memset(bca->ialt_scl, 0, sizeof(bca->ialt_scl));
}

/*
 * The read's NM as the NMBZ test counts mismatches: an indel is one event
 * however long, soft-clipped bases count, and the variant itself (one for a
 * REF read, two for an ALT read, allowing for a nearby MNP) is not held
 * against it. -1 without an NM tag; else 0..MP_N_NM-1.
 */
static int mismatch_bin(const bam1_t *rec, int is_ref)
{
    const uint8_t *tag = bam_aux_get(rec, "NM");
    if (!tag)
        return -1;
    int64_t nm = bam_aux2i(tag);
    const uint32_t *cigar = bam_get_cigar(rec);
    for (uint32_t i = 0; i < rec->core.n_cigar; i++) {
        int op = bam_cigar_op(cigar[i]);
        int oplen = bam_cigar_oplen(cigar[i]);
        if (op == BAM_CSOFT_CLIP)
            nm += oplen;
        else if ((op == BAM_CINS || op == BAM_CDEL) && oplen > 1)
            nm -= oplen - 1;
    }
    nm -= is_ref ? 1 : 2;
    if (nm < 0)
        nm = 0;
    if (nm >= MP_N_NM)
        nm = MP_N_NM - 1;
    return (int)nm;
}

/* Where the read's soft clips sit: lengths and distances from the pileup base. */
typedef struct {
    int left, right;           /* soft-clipped bases at each end (hard clips skipped) */
    int left_dist, right_dist; /* distance from qpos to each clip; -1 when none */
} clips_t;

static clips_t read_clips(const bam_pileup1_t *p)
{
    const uint32_t *cigar = bam_get_cigar(p->b);
    int n_cigar = p->b->core.n_cigar;
    clips_t c = {0, 0, -1, -1};
    int i, j;
    for (i = 0; i < n_cigar; i++) {
        int op = bam_cigar_op(cigar[i]);
        if (op == BAM_CSOFT_CLIP)
            c.left += bam_cigar_oplen(cigar[i]);
        else if (op != BAM_CHARD_CLIP)
            break;
    }
    /* the right end stops where the left scan stopped: a read of clips only counts once */
    for (j = n_cigar - 1; j >= i; j--) {
        int op = bam_cigar_op(cigar[j]);
        if (op == BAM_CSOFT_CLIP)
            c.right += bam_cigar_oplen(cigar[j]);
        else if (op != BAM_CHARD_CLIP)
            break;
    }
    if (c.left)
        c.left_dist = p->qpos + 1 - c.left;
    if (c.right)
        c.right_dist = p->b->core.l_qseq - c.right - p->qpos;
    return c;
}

/*
 * The base's 1-based position in the read's unclipped part (the return), that
 * part's length, and the nearer soft clip's length and distance. As in
 * bcftools, when both ends are clipped and the right one is as near or
 * nearer, the clip outputs are left as the caller set them.
 */
static int read_position(const bam_pileup1_t *p, int *len, int *sc_len, int *sc_dist)
{
    clips_t c = read_clips(p);
    if (c.left_dist >= 0) {
        if (c.right_dist < 0 || c.left_dist < c.right_dist) {
            *sc_len = c.left;
            *sc_dist = c.left_dist;
        }
    } else if (c.right_dist >= 0) {
        *sc_len = c.right;
        *sc_dist = c.right_dist;
    } else {
        *sc_len = 0;
        *sc_dist = 0;
    }
    *len = p->b->core.l_qseq - c.left - c.right;
    return p->qpos + 1 - c.left;
}

/* One read's evidence at the column, before it joins the sample's bases. */
typedef struct {
    int b;       /* 2-bit base, or for the indel record the read's allele index */
    int q;       /* quality of the observation, capped below */
    int baseQ;   /* base quality for I16 and the BQ histogram */
    int seqQ;    /* cap on q from the indel model (99: none for SNPs) */
    int is_diff; /* not the reference allele */
} obs_t;

/*
 * The SNP record's view of the read: its base (an '=' base reads as the
 * reference), and its quality lowered to a neighbour's plus delta_baseQ. 0
 * when the quality is below --min-BQ and the read is left out.
 */
static int snp_obs(const bam_pileup1_t *p, int ref_base, int ref4, const mp_aux_t *bca, obs_t *o)
{
    int b = bam_seqi(bam_get_seq(p->b), p->qpos);
    o->b = seq_nt16_int[b ? b : ref_base];
    const uint8_t *qual = bam_get_qual(p->b);
    int q = qual[p->qpos];
    if (p->qpos > 0 && q > qual[p->qpos - 1] + bca->delta_baseQ)
        q = qual[p->qpos - 1] + bca->delta_baseQ;
    if (p->qpos + 1 < p->b->core.l_qseq && q > qual[p->qpos + 1] + bca->delta_baseQ)
        q = qual[p->qpos + 1] + bca->delta_baseQ;
    if (q < bca->min_baseQ)
        return 0;
    if (q > bca->max_baseQ)
        q = bca->max_baseQ;
    o->q = o->baseQ = q;
    o->seqQ = 99;
    o->is_diff = (ref4 < 4 && o->b == ref4) ? 0 : 1;
    return 1;
}

/*
 * The indel record's view: p->aux as mp_gap_prep packed it (allele index in
 * bits 16-21, its base quality in 8-15, the indel score in 0-7). A low score
 * leaves the read out, but a REF read left out is remembered in missed (per
 * strand, per allele) so AD can account for it. n_reads is the sample's read
 * count, which decides how much a REF read without p->indel is trusted.
 */
static int indel_obs(const bam_pileup1_t *p, int n_reads, const mp_aux_t *bca, int missed[2][4],
                     obs_t *o)
{
    int b = p->aux >> 16 & 0x3f;
    int q = p->aux & 0xff, seqQ = q;
    if (q < bca->min_baseQ) {
        if (!p->indel && b < 4)
            missed[bam_is_rev(p->b) ? 1 : 0][b]++;
        return 0;
    }
    /*
     * A read with no indel here scores well for REF by default; only at
     * depth, or when the score is poor, fall back to its base quality.
     */
    if (p->indel == 0 && (q < n_reads / 2 || n_reads > 20)) {
        b = 0;
        q = (int)bam_get_qual(p->b)[p->qpos];
        seqQ = (3 * seqQ + 2 * q) / 8;
    }
    if (n_reads > 20 && seqQ > 40)
        seqQ = 40;
    o->b = b;
    o->q = q;
    o->seqQ = seqQ;
    o->baseQ = p->aux >> 8 & 0xff;
    o->is_diff = (b != 0);
    return 1;
}

/* I16: counts by strand, then sums and sums of squares of baseQ, mapQ and end distance. */
static void add_i16(mp_smpl_t *r, const bam_pileup1_t *p, const obs_t *o, int mapQ)
{
    int d = o->is_diff << 1;
    ++r->anno[0 << 2 | d | bam_is_rev(p->b)];
    int min_dist = p->b->core.l_qseq - 1 - p->qpos;
    if (min_dist > p->qpos)
        min_dist = p->qpos;
    if (min_dist > DIST_CAP)
        min_dist = DIST_CAP;
    r->anno[1 << 2 | d | 0] += o->baseQ;
    r->anno[1 << 2 | d | 1] += o->baseQ * o->baseQ;
    r->anno[2 << 2 | d | 0] += mapQ;
    r->anno[2 << 2 | d | 1] += mapQ * mapQ;
    r->anno[3 << 2 | d | 0] += min_dist;
    r->anno[3 << 2 | d | 1] += min_dist * min_dist;
}

/*
 * The histograms of the bias tests: read position (scaled to npos bins),
 * soft-clip length over distance, baseQ and mapQ (scaled to nqual bins), mapQ
 * by strand, and mismatches (site-wide and, with FORMAT/NMBZ, per sample).
 */
static void add_bias(mp_aux_t *bca, mp_smpl_t *r, const bam_pileup1_t *p, const obs_t *o, int mapQ)
{
    int baseQ = o->baseQ > 59 ? 59 : o->baseQ;
    if (mapQ > 59)
        mapQ = 59;
    int len, epos = 0, sc_len = 0, sc_dist = 0;
    if (bca->fmt_flag & (MP_INFO_RPB | MP_INFO_VDB | MP_INFO_SCB)) {
        int pos = read_position(p, &len, &sc_len, &sc_dist);
        epos = (double)pos / (len + 1) * bca->npos;
        if (sc_len) {
            sc_len = 15.0 * sc_len / sc_dist;
            if (sc_len > 99)
                sc_len = 99;
        }
    }
    double nqual_over_60 = bca->nqual / 60.0;
    int imq = mapQ * nqual_over_60;
    int ibq = baseQ * nqual_over_60;
    int inm = mismatch_bin(p->b, o->is_diff ? 0 : 1);
    if (bam_is_rev(p->b))
        bca->rev_mqs[imq]++;
    else
        bca->fwd_mqs[imq]++;
    int *pos_bins = o->is_diff ? bca->alt_pos : bca->ref_pos;
    int *bq_bins = o->is_diff ? bca->alt_bq : bca->ref_bq;
    int *mq_bins = o->is_diff ? bca->alt_mq : bca->ref_mq;
    int *scl_bins = o->is_diff ? bca->alt_scl : bca->ref_scl;
    int32_t *nm_site = o->is_diff ? bca->alt_nm : bca->ref_nm;
    int32_t *nm_smpl = o->is_diff ? r->alt_nm : r->ref_nm;
    pos_bins[epos]++;
    bq_bins[ibq]++;
    mq_bins[imq]++;
    scl_bins[sc_len]++;
    if (inm >= 0) {
        nm_site[inm]++;
        if (nm_smpl)
            nm_smpl[inm]++;
    }
}

/*
 * With --ambig-reads: REF reads the indel model left out go to AD's REF
 * (incAD0), or are shared among the alleles in proportion to their counts
 * (incAD), rounded per allele as bcftools rounds them (float, lroundf).
 */
static void add_missed(const mp_aux_t *bca, mp_smpl_t *r, int missed[2][4])
{
    if (!r->ADF)
        return;
    int32_t *ad[2] = {r->ADF, r->ADR};
    if (bca->ambig_reads == MP_AMBIG_INC_AD0) {
        for (int i = 0; i < 4; i++) {
            r->ADR[0] += missed[1][i];
            r->ADF[0] += missed[0][i];
        }
        return;
    }
    if (bca->ambig_reads != MP_AMBIG_INC_AD)
        return;
    for (int s = 0; s < 2; s++) {
        int dp = 0, dp_ambig = 0;
        for (int i = 0; i < 4; i++)
            dp += ad[s][i];
        for (int i = 0; i < 4; i++)
            dp_ambig += missed[s][i];
        if (dp)
            for (int i = 0; i < 4; i++)
                ad[s][i] += lroundf((float)dp_ambig * ad[s][i] / dp);
    }
}

/*
 * The likelihoods from the collected bases. Past 255 bases errmod_cal would
 * shuffle them with the process-wide drand48 and keep 255; the same shuffle
 * is done here with the caller's stream, so errmod_cal never draws.
 */
static void likelihoods(mp_aux_t *bca, int n, mp_smpl_t *r, mp_rng_t *rng)
{
    if (n > 255) {
        mp_rng_shuffle_u16(rng, n, bca->bases);
        n = 255;
    }
    errmod_cal(bca->e, n, 5, bca->bases, r->p);
}

/* Room for n bases, grown to a power of two. 0, or -1 when out of memory. */
static int reserve_bases(mp_aux_t *bca, int n)
{
    if (bca->max_bases >= n)
        return 0;
    int m = n;
    kroundup32(m);
    uint16_t *bases = realloc(bca->bases, sizeof(uint16_t) * m);
    if (!bases)
        return -1;
    bca->bases = bases;
    bca->max_bases = m;
    return 0;
}

/* The 6-bit quality that goes into errmod: capped by seqQ, mapQ (at capQ) and 63, floor 4. */
static int call_quality(const obs_t *o, int mapQ)
{
    int q = o->q;
    if (q > o->seqQ)
        q = o->seqQ;
    if (q > mapQ)
        q = mapQ;
    if (q > 63)
        q = 63;
    if (q < 4)
        q = 4; /* so that a MAPQ 0 read still weighs as a BQ 4 base */
    return q;
}

static void reset_sample(mp_smpl_t *r)
{
    r->ori_depth = 0;
    r->mq0 = 0;
    memset(r->anno, 0, sizeof(r->anno));
    memset(r->p, 0, sizeof(r->p));
    r->SCR = 0;
}

/*
 * Returns the number of bases used (as bcf_call_glfgen), -1 when the sample
 * has no reads here, and -2 when out of memory (bca->bases could not grow).
 */
int mp_glfgen(int n_reads, const bam_pileup1_t *pl, int ref_base, mp_aux_t *bca, mp_smpl_t *r,
              mp_rng_t *rng)
{
    reset_sample(r);
    int is_indel = ref_base < 0;
    int ref4 = is_indel ? 4 : seq_nt16_int[ref_base];
    if (n_reads == 0)
        return -1;
    if (reserve_bases(bca, n_reads) < 0)
        return -2;
    int missed[2][4] = {{0}}; /* [reverse][allele] */
    int n = 0, ori_depth = 0;
    for (int i = 0; i < n_reads; ++i) {
        const bam_pileup1_t *p = pl + i;
        if ((bca->fmt_flag & (MP_INFO_SCR | MP_FMT_SCR)) && MP_CD_SOFT_CLIP(p->cd.i))
            r->SCR++;
        if (p->is_refskip || (p->b->core.flag & BAM_FUNMAP))
            continue;
        if (p->is_del && !is_indel)
            continue;
        ++ori_depth;
        obs_t o;
        int keep =
            is_indel ? indel_obs(p, n_reads, bca, missed, &o) : snp_obs(p, ref_base, ref4, bca, &o);
        if (!keep)
            continue;
        int mapQ = p->b->core.qual < 255 ? p->b->core.qual : MAPQ_255_AS;
        if (!mapQ)
            r->mq0++;
        if (mapQ > bca->capQ)
            mapQ = bca->capQ;
        int q = call_quality(&o, mapQ);
        bca->bases[n++] = q << 5 | (int)bam_is_rev(p->b) << 4 | o.b;
        if (o.b < 4) {
            r->QS[o.b] += q;
            if (r->ADF)
                (bam_is_rev(p->b) ? r->ADR : r->ADF)[o.b]++;
        }
        add_i16(r, p, &o, mapQ);
        add_bias(bca, r, p, &o, mapQ);
    }
    add_missed(bca, r, missed);
    r->ori_depth = ori_depth;
    likelihoods(bca, n, r, rng);
    return n;
}

/*
 * mp_glf.c -- the worker's calling state, and one sample's reads at a column
 * turned into genotype likelihoods (mp_errmod.c) and depth annotations; the
 * reads are kept for the bias tests' histograms, which mp_bins.c fills only
 * at sites with an ALT.
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

#include "../../../alloc/ss_alloc.h"
#include "../../../genomics/pileup_engine.h"
#include "base/ss_exact_fp.h"
#include "mp_likelihood.h"
#include "mp_words.h"

#define DEFAULT_THETA 0.83 /* errmod's dependency: bcftools' default when theta <= 0 */
#define MAPQ_255_AS   20   /* MAPQ 255 means "unknown": counted as 20 */
#define N_POS_BINS    100  /* read-position histogram: the VDB fit assumes 100 bins */
#define N_QUAL_BINS   60   /* mapQ and baseQ histograms: a bin per quality (mp_bins.c) */

mp_aux_t *mp_aux_init(double theta, int min_baseQ, int max_baseQ, int delta_baseQ)
{
    if (theta <= 0.)
        theta = DEFAULT_THETA;
    mp_aux_t *bca = ss_alloc_private(sizeof(*bca)); /* written per read (ss_alloc.h) */
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
    bca->e = mp_errmod_init(1. - theta);
    if (!bca->e) {
        mp_aux_destroy(bca);
        return NULL;
    }
    return bca;
}

void mp_aux_destroy(mp_aux_t *bca)
{
    if (!bca)
        return;
    mp_errmod_destroy(bca->e);
    free(bca->bases);
    free(bca->deferred);
    mp_indel_ws_free(bca);
    free(bca->inscns); /* grown by mp_gap_prep, owned here as in bcftools */
    free(bca);
}

/* Bins not 0 back to 0 (see mp_hist_t). */
static void hist_clear(mp_hist_t *h)
{
    for (int w = 0; w < 2; w++) {
        for (uint64_t used = h->used[w]; used; used &= used - 1)
            h->bin[w << 6 | __builtin_ctzll(used)] = 0;
        h->used[w] = 0;
    }
}

void mp_aux_clean(mp_aux_t *bca, mp_site_t *call)
{
    if (bca->hist_dirty) {
        mp_hist_t *hists[] = {&bca->ref_pos,  &bca->alt_pos,  &bca->ref_mq,   &bca->alt_mq,
                              &bca->ref_bq,   &bca->alt_bq,   &bca->fwd_mqs,  &bca->rev_mqs,
                              &bca->iref_pos, &bca->ialt_pos, &bca->iref_mq,  &bca->ialt_mq,
                              &bca->ref_scl,  &bca->alt_scl,  &bca->iref_scl, &bca->ialt_scl};
        for (size_t i = 0; i < sizeof(hists) / sizeof(hists[0]); i++)
            hist_clear(hists[i]);
        /* the mismatch bins (slot 0 the site, with FORMAT/NMBZ 1.. the samples) are
         * counted with the histograms (mp_bias_bins), so are only ever dirty with them */
        size_t nm_slots = (bca->fmt_flag & MP_FMT_NMBZ) ? (size_t)call->n + 1 : 1;
        memset(call->ref_nm, 0, sizeof(int32_t) * nm_slots * MP_N_NM);
        memset(call->alt_nm, 0, sizeof(int32_t) * nm_slots * MP_N_NM);
        bca->hist_dirty = 0;
    }
    bca->n_deferred = 0;
    /* AD* and SCR: slot 0 the site, 1.. the samples */
    size_t slots = (size_t)call->n + 1;
    if (call->ADF)
        memset(call->ADF, 0, sizeof(int32_t) * slots * MP_MAX_ALLELES);
    if (call->ADR)
        memset(call->ADR, 0, sizeof(int32_t) * slots * MP_MAX_ALLELES);
    if (call->SCR)
        memset(call->SCR, 0, sizeof(int32_t) * slots);
    memset(call->QS, 0, sizeof(int32_t) * call->n * MP_MAX_ALLELES);
}

/* One read's evidence for the indel record, before it joins the sample's bases. */
typedef struct {
    int b;       /* the read's allele index */
    int q;       /* quality of the observation, capped below */
    int baseQ;   /* base quality for I16 and the BQ histogram */
    int seqQ;    /* cap on q from the indel model */
    int is_diff; /* not the reference allele */
} obs_t;

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

/*
 * I16: counts by strand, then sums and sums of squares of baseQ, mapQ and
 * end distance, for REF and non-REF reads. bcftools adds these up in
 * doubles; every term is an integer and no sum comes near 2^53, so integer
 * sums converted at the end (as mp_glfgen does) are the same doubles. The
 * sums run over all reads and, apart, over the non-REF ones (few): REF's
 * sums are the difference.
 */
typedef struct {
    int64_t n, n_rev, bq, bq2, mq, mq2, dist, dist2;
} i16_part_t;

typedef struct {
    i16_part_t all, alt;
} i16_sums_t;

/*
 * The read's distance to its nearer end (qpos in a read of len bases), capped for I16.
 * At an indel site a read inside its trailing deletion has qpos len, so -1, which
 * bcftools sums as it is.
 */
static inline int end_distance(int qpos, int len)
{
    int min_dist = len - 1 - qpos;
    if (min_dist > qpos)
        min_dist = qpos;
    return min_dist > MP_DIST_CAP ? MP_DIST_CAP : min_dist;
}

static inline void i16_part_add(i16_part_t *s, int rev, int baseQ, int mapQ, int dist)
{
    s->n++;
    s->n_rev += rev;
    s->bq += baseQ;
    s->bq2 += baseQ * baseQ;
    s->mq += mapQ;
    s->mq2 += mapQ * mapQ;
    s->dist += dist;
    s->dist2 += dist * dist;
}

/* bcftools' I16 order: REF fwd, REF rev, ALT fwd, ALT rev, then sum and square per value. */
static void i16_store(const i16_sums_t *s, double *anno)
{
    const i16_part_t *a = &s->all, *d = &s->alt;
    int64_t v[16] = {(a->n - a->n_rev) - (d->n - d->n_rev),
                     a->n_rev - d->n_rev,
                     d->n - d->n_rev,
                     d->n_rev,
                     a->bq - d->bq,
                     a->bq2 - d->bq2,
                     d->bq,
                     d->bq2,
                     a->mq - d->mq,
                     a->mq2 - d->mq2,
                     d->mq,
                     d->mq2,
                     a->dist - d->dist,
                     a->dist2 - d->dist2,
                     d->dist,
                     d->dist2};
    for (int k = 0; k < 16; k++)
        anno[k] = (double)v[k];
}

/* Room for n more deferred reads, grown to a power of two. 0, or -1 when out of memory. */
static int reserve_deferred(mp_aux_t *bca, int n)
{
    if (bca->m_deferred - bca->n_deferred >= n)
        return 0;
    int m = bca->n_deferred + n;
    kroundup32(m);
    mp_deferred_t *d =
        ss_realloc_private(bca->deferred, sizeof(*d) * bca->m_deferred, sizeof(*d) * m);
    if (!d)
        return -1;
    bca->deferred = d;
    bca->m_deferred = m;
    return 0;
}

/* A kept read's numbers: for the sample's sums (tally_kept) and, should the site have an ALT, the
 * bias bins. */
static inline void keep_read(mp_deferred_t *d, mp_smpl_t *r, const bam_pileup1_t *p, int baseQ,
                             int mapQ, int rev, int is_diff)
{
    d->p = p;
    d->r = r;
    d->baseQ = (uint8_t)baseQ;
    d->mapQ = (uint8_t)mapQ;
    d->dist = (int8_t)end_distance(p->qpos, p->b->core.l_qseq);
    d->rev = (uint8_t)rev;
    d->is_diff = (uint8_t)is_diff;
}

/*
 * The sample's sums over its n kept reads (kept[i] and bases[i]): I16, and
 * QS and AD by allele. The reads' pass only records them; summing here, in
 * a loop of its own, keeps every sum in a register. The non-REF reads are
 * few, so they are summed apart and REF's QS and AD are what the totals
 * leave (every REF read carries the REF allele, ref, which is < 4 when
 * there is one).
 */
static void tally_kept(const mp_deferred_t *kept, const uint16_t *bases, int n, int ref,
                       mp_smpl_t *r, i16_sums_t *i16)
{
    i16_part_t all = {0}, alt = {0};
    int32_t qs[MP_MAX_ALLELES] = {0}, ad[2][MP_MAX_ALLELES] = {{0}};
    int64_t cq_all = 0, cq_alt = 0;
    for (int i = 0; i < n; i++) {
        const mp_deferred_t *d = &kept[i];
        int cq = bases[i] >> 5;
        i16_part_add(&all, d->rev, d->baseQ, d->mapQ, d->dist);
        cq_all += cq;
        if (d->is_diff) {
            i16_part_add(&alt, d->rev, d->baseQ, d->mapQ, d->dist);
            cq_alt += cq;
            int b = bases[i] & 0xf;
            if (b < 4) {
                qs[b] += cq;
                ad[d->rev][b]++;
            }
        }
    }
    if (ref >= 0 && ref < 4) {
        qs[ref] += (int32_t)(cq_all - cq_alt);
        ad[0][ref] += (int32_t)((all.n - all.n_rev) - (alt.n - alt.n_rev));
        ad[1][ref] += (int32_t)(all.n_rev - alt.n_rev);
    }
    for (int k = 0; k < 4; k++)
        r->QS[k] += qs[k];
    if (r->ADF)
        for (int k = 0; k < 4; k++) {
            r->ADF[k] += ad[0][k];
            r->ADR[k] += ad[1][k];
        }
    i16->all = all;
    i16->alt = alt;
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
 * The likelihoods from the collected bases. Past 255 bases htslib's
 * errmod_cal would shuffle them with the process-wide drand48 and keep 255;
 * the same shuffle is done here with the caller's stream. The bases are
 * 11-bit keys (call_quality caps at 63, o.b < 64), so the call cannot fail.
 */
static void likelihoods(mp_aux_t *bca, int n, mp_smpl_t *r, mp_rng_t *rng)
{
    if (n > MP_ERRMOD_MAX_DEPTH) {
        mp_rng_shuffle_u16(rng, n, bca->bases);
        n = MP_ERRMOD_MAX_DEPTH;
    }
    (void)mp_errmod_cal(bca->e, n, 5, bca->bases, r->p);
}

/* Room for n bases, grown to a power of two. 0, or -1 when out of memory. */
static int reserve_bases(mp_aux_t *bca, int n)
{
    if (bca->max_bases >= n)
        return 0;
    int m = n;
    kroundup32(m);
    uint16_t *bases =
        ss_realloc_private(bca->bases, sizeof(uint16_t) * bca->max_bases, sizeof(uint16_t) * m);
    if (!bases)
        return -1;
    bca->bases = bases;
    bca->max_bases = m;
    return 0;
}

/* The 6-bit quality that goes into errmod: capped by seqQ, mapQ (at capQ) and 63, floor 4. */
static inline int call_quality(int q, int seqQ, int mapQ)
{
    if (q > seqQ)
        q = seqQ;
    if (q > mapQ)
        q = mapQ;
    if (q > 63)
        q = 63;
    if (q < 4)
        q = 4; /* so that a MAPQ 0 read still weighs as a BQ 4 base */
    return q;
}

/* The read's mapping quality as the model uses it; *mq0 counts a 0. */
static inline int read_mapq(const bam1_t *b, int capQ, unsigned int *mq0)
{
    int mapQ = b->core.qual < 255 ? b->core.qual : MAPQ_255_AS;
    if (!mapQ)
        ++*mq0;
    return mapQ > capQ ? capQ : mapQ;
}

static void reset_sample(mp_smpl_t *r)
{
    r->ori_depth = 0;
    r->mq0 = 0;
    memset(r->anno, 0, sizeof(r->anno));
    memset(r->p, 0, sizeof(r->p));
    r->SCR = 0;
}

/* The base's quality lowered to a neighbour's plus delta (bcftools' --delta-BQ). */
static inline int snp_quality(const uint8_t *qual, int qpos, int len, int delta)
{
    int q = qual[qpos];
    if (qpos > 0 && q > qual[qpos - 1] + delta)
        q = qual[qpos - 1] + delta;
    if (qpos + 1 < len && q > qual[qpos + 1] + delta)
        q = qual[qpos + 1] + delta;
    return q;
}

/* Whether the SNP record counts the read's base at all: a base, not a gap or a skip. */
static inline int snp_has_base(const bam_pileup1_t *p)
{
    return !(p->is_refskip || p->is_del || (p->b->core.flag & BAM_FUNMAP));
}

int mp_glf_snp_kept(int n_reads, const bam_pileup1_t *pl, const mp_aux_t *bca)
{
    int n = 0;
    for (int i = 0; i < n_reads; ++i) {
        const bam_pileup1_t *p = pl + i;
        if (!snp_has_base(p))
            continue;
        const bam1_t *b = p->b;
        int len = b->core.l_qseq;
        const uint8_t *qual = bam_get_seq(b) + ((len + 1) >> 1);
        n += snp_quality(qual, p->qpos, len, bca->delta_baseQ) >= bca->min_baseQ;
    }
    return n;
}

/* What the read's words need (mp_words.h). */
static inline mp_word_src_t word_src(const mp_aux_t *bca, const bam1_t *b)
{
    unsigned int mq0 = 0; /* counted per column, where the base is kept */
    int len = b->core.l_qseq;
    const uint8_t *seq = bam_get_seq(b);
    return (mp_word_src_t){seq,
                           seq + ((len + 1) >> 1),
                           len,
                           bam_is_rev(b),
                           read_mapq(b, bca->capQ, &mq0),
                           bca->delta_baseQ,
                           bca->min_baseQ,
                           bca->max_baseQ};
}

#define WORDS_AHEAD 16 /* a 64-byte line of words */

void mp_snp_words_free(void *client)
{
    free(client);
}

/*
 * Every base's word, for a read that entered or whose qualities changed,
 * into the engine record's client buffer (client_n words). The words, or
 * NULL when out of memory.
 */
static __attribute__((noinline)) const uint32_t *fill_words(const mp_aux_t *bca, bam1_t *b)
{
    pe_rec_t *rec = pe_rec(b);
    const mp_word_src_t src = word_src(bca, b);
    if (src.len > rec->client_m || !rec->client) {
        int m = src.len > 0 ? src.len : 1;
        uint32_t *w = realloc(rec->client, (size_t)m * sizeof(*w));
        if (!w)
            return NULL;
        rec->client = w, rec->client_m = m;
    }
    mp_snp_words(&src, rec->client);
    rec->client_n = src.len;
    rec->quals_changed = 0;
    return rec->client;
}

/*
 * The word of the read's base at the column. A read without a sequence
 * (SEQ '*') has no words, and no base (mp_snp_word gives 0); mp_read.c leaves
 * such reads out before they get here. 1, or 0 when out of memory.
 */
static inline int word_at(const mp_aux_t *bca, const bam_pileup1_t *p, uint32_t *word)
{
    bam1_t *b = p->b;
    const pe_rec_t *rec = pe_rec(b);
    const uint32_t *words = rec->client;
    if (rec->quals_changed && !(words = fill_words(bca, b)))
        return 0;
    if (p->qpos < rec->client_n) {
        *word = words[p->qpos];
        /* a read's next columns read its next words: the cache line 16 columns on, asked
         * for now (a column's reads are more streams than the hardware prefetcher follows) */
        __builtin_prefetch(words + p->qpos + WORDS_AHEAD);
    } else {
        const mp_word_src_t src = word_src(bca, b);
        *word = mp_snp_word(&src, p->qpos);
    }
    return 1;
}

/*
 * The SNP record's pass over the sample's reads: each base's word (an '='
 * reads as the reference), left out below --min-BQ, then into the bases and
 * the kept reads (whose sums tally_kept takes). The setting reads are hoisted
 * out of the loop: it runs for every read at every column. Returns the bases
 * kept, or -1 when out of memory.
 */
static int snp_reads(int n_reads, const bam_pileup1_t *pl, int ref_base, mp_aux_t *bca,
                     mp_smpl_t *r, mp_deferred_t *kept)
{
    const int ref4 = seq_nt16_int[ref_base];
    const int ref_allele = ref4 < 4 ? ref4 : -1; /* an N matches no base */
    const int count_clips = (bca->fmt_flag & (MP_INFO_SCR | MP_FMT_SCR)) != 0;
    /* locals, not bca's and r's fields: the stores through int pointers could alias them */
    uint16_t *bases = bca->bases;
    unsigned int mq0 = 0;
    int n = 0, depth = 0, clipped = 0;
    for (int i = 0; i < n_reads; ++i) {
        const bam_pileup1_t *p = pl + i;
        clipped += count_clips & (int)MP_CD_SOFT_CLIP(p->cd.i);
        /* the engine holds no unmapped read (snp_has_base's third test) */
        if (p->is_refskip || p->is_del)
            continue;
        depth++;
        uint32_t word;
        if (!word_at(bca, p, &word))
            return -1;
        if (!word)
            continue;
        int key = MP_WORD_KEY(word), base = MP_WORD_BASE(word);
        if (base == MP_WORD_EQ)
            base = ref4, key = (key & ~0xf) | ref4;
        int mapQ = MP_WORD_MAPQ(word), rev = MP_WORD_REV(word);
        mq0 += mapQ == 0;
        mp_deferred_t *d = &kept[n];
        d->p = p;
        d->r = r;
        d->baseQ = (uint8_t)MP_WORD_BASEQ(word);
        d->mapQ = (uint8_t)mapQ;
        d->dist = (uint8_t)MP_WORD_DIST(word);
        d->rev = (uint8_t)rev;
        d->is_diff = (uint8_t)(base != ref_allele);
        bases[n++] = (uint16_t)key;
    }
    r->SCR += clipped;
    r->ori_depth += depth;
    r->mq0 += mq0;
    return n;
}

/*
 * The indel record's pass: each read's allele and score as mp_gap_prep left
 * them in p->aux (indel_obs); REF reads it left out go to missed. Returns
 * the bases kept.
 */
static int indel_reads(int n_reads, const bam_pileup1_t *pl, mp_aux_t *bca, mp_smpl_t *r,
                       mp_deferred_t *kept, int missed[2][4])
{
    const int count_clips = (bca->fmt_flag & (MP_INFO_SCR | MP_FMT_SCR)) != 0;
    int n = 0;
    for (int i = 0; i < n_reads; ++i) {
        const bam_pileup1_t *p = pl + i;
        if (count_clips && MP_CD_SOFT_CLIP(p->cd.i))
            r->SCR++;
        if (p->is_refskip || (p->b->core.flag & BAM_FUNMAP))
            continue;
        r->ori_depth++;
        obs_t o;
        if (!indel_obs(p, n_reads, bca, missed, &o))
            continue;
        int mapQ = read_mapq(p->b, bca->capQ, &r->mq0);
        int q = call_quality(o.q, o.seqQ, mapQ), rev = bam_is_rev(p->b);
        keep_read(&kept[n], r, p, o.baseQ, mapQ, rev, o.is_diff);
        bca->bases[n++] = q << 5 | rev << 4 | o.b;
    }
    return n;
}

/*
 * Returns the number of bases used (as bcf_call_glfgen), -1 when the sample
 * has no reads here, and -2 when out of memory (bca->bases could not grow).
 * The kept reads stay deferred for mp_bias_bins.
 */
int mp_glfgen(int n_reads, const bam_pileup1_t *pl, int ref_base, mp_aux_t *bca, mp_smpl_t *r,
              mp_rng_t *rng)
{
    reset_sample(r);
    if (n_reads == 0)
        return -1;
    if (reserve_bases(bca, n_reads) < 0 || reserve_deferred(bca, n_reads) < 0)
        return -2;
    mp_deferred_t *kept = bca->deferred + bca->n_deferred;
    int missed[2][4] = {{0}}; /* the indel record's: [reverse][allele] */
    int n = ref_base < 0 ? indel_reads(n_reads, pl, bca, r, kept, missed)
                         : snp_reads(n_reads, pl, ref_base, bca, r, kept);
    if (n < 0)
        return -2;
    bca->n_deferred += n;
    i16_sums_t i16;
    tally_kept(kept, bca->bases, n, ref_base < 0 ? 0 : seq_nt16_int[ref_base], r, &i16);
    if (ref_base < 0)
        add_missed(bca, r, missed);
    i16_store(&i16, r->anno);
    likelihoods(bca, n, r, rng);
    return n;
}

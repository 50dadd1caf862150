/*
 * mp_bins.c -- what the columns need to know of a read, worked out once when
 * it enters the pileup (mp_read_cd: soft clips, NM, sample), and the
 * histograms of the bias tests (RPB, BQB, MQB, MQSB, SCB, NMBZ, VDB), counted
 * only at the sites that have an ALT allele (mp_bias_bins), as that is where
 * bcftools reads them.
 */
#include <stdlib.h>

#include <htslib/sam.h>

#include "base/ss_exact_fp.h"
#include "mp_likelihood.h"

void mp_soft_clips(const bam1_t *b, int *left, int *right)
{
    const uint32_t *cigar = bam_get_cigar(b);
    int n_cigar = b->core.n_cigar, i, j;
    *left = *right = 0;
    for (i = 0; i < n_cigar; i++) {
        int op = bam_cigar_op(cigar[i]);
        if (op == BAM_CSOFT_CLIP)
            *left += bam_cigar_oplen(cigar[i]);
        else if (op != BAM_CHARD_CLIP)
            break;
    }
    /* the right end stops where the left scan stopped: a read of clips only counts once */
    for (j = n_cigar - 1; j >= i; j--) {
        int op = bam_cigar_op(cigar[j]);
        if (op == BAM_CSOFT_CLIP)
            *right += bam_cigar_oplen(cigar[j]);
        else if (op != BAM_CHARD_CLIP)
            break;
    }
}

/*
 * The read's NM as the NMBZ test counts mismatches: an indel is one event
 * however long and soft-clipped bases count. Capped to 0..MP_CD_NM_MAX,
 * which gives the same bins once the site's own mismatches come off (see
 * mismatch_bin); MP_CD_NM_NONE without an NM tag.
 */
static int nm_events(const bam1_t *b)
{
    const uint8_t *tag = bam_aux_get(b, "NM");
    if (!tag)
        return MP_CD_NM_NONE;
    int64_t nm = bam_aux2i(tag);
    const uint32_t *cigar = bam_get_cigar(b);
    for (uint32_t i = 0; i < b->core.n_cigar; i++) {
        int op = bam_cigar_op(cigar[i]);
        int oplen = bam_cigar_oplen(cigar[i]);
        if (op == BAM_CSOFT_CLIP)
            nm += oplen;
        else if ((op == BAM_CINS || op == BAM_CDEL) && oplen > 1)
            nm -= oplen - 1;
    }
    return nm < 0 ? 0 : nm > MP_CD_NM_MAX ? MP_CD_NM_MAX : (int)nm;
}

int64_t mp_read_cd(const bam1_t *b, int sample, int with_indel)
{
    const uint32_t *cigar = bam_get_cigar(b);
    int clip = 0, indel = 0, left, right;
    for (uint32_t k = 0; k < b->core.n_cigar; k++) {
        int op = bam_cigar_op(cigar[k]);
        clip |= op == BAM_CSOFT_CLIP;
        indel |= op == BAM_CINS || op == BAM_CDEL || op == BAM_CREF_SKIP;
    }
    mp_soft_clips(b, &left, &right);
    uint64_t cd = (uint64_t)(uint32_t)sample << 32;
    cd |= (uint64_t)(left < MP_CD_CLIP_FAR ? left : MP_CD_CLIP_FAR) << 8;
    cd |= (uint64_t)(right < MP_CD_CLIP_FAR ? right : MP_CD_CLIP_FAR) << 20;
    cd |= (uint64_t)nm_events(b) << 2;
    cd |= (with_indel && indel ? 2 : 0) | clip;
    return (int64_t)cd;
}

/*
 * The NMBZ bin of a read (cd: its cd.i): its mismatches less the variant
 * itself (one for a REF read, two for an ALT read, allowing for a nearby
 * MNP). -1 without an NM tag; else 0..MP_N_NM-1.
 */
static int mismatch_bin(int64_t cd, int is_ref)
{
    int nm = MP_CD_NM(cd);
    if (nm == MP_CD_NM_NONE)
        return -1;
    nm -= is_ref ? 1 : 2;
    return nm < 0 ? 0 : nm >= MP_N_NM ? MP_N_NM - 1 : nm;
}

/* Where the read's soft clips sit: lengths and distances from the pileup base. */
typedef struct {
    int left, right;           /* soft-clipped bases at each end (hard clips skipped) */
    int left_dist, right_dist; /* distance from qpos to each clip; -1 when none */
} clips_t;

static clips_t read_clips(const bam_pileup1_t *p)
{
    clips_t c = {MP_CD_LEFT_CLIP(p->cd.i), MP_CD_RIGHT_CLIP(p->cd.i), -1, -1};
    if (c.left == MP_CD_CLIP_FAR || c.right == MP_CD_CLIP_FAR)
        mp_soft_clips(p->b, &c.left, &c.right);
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

/*
 * One read into the histograms of the bias tests: read position (scaled to
 * npos bins), soft-clip length over distance, baseQ and mapQ, mapQ by
 * strand, and mismatches (site-wide and, with FORMAT/NMBZ, per sample).
 * bcftools scales the quality bins by nqual / 60.0, which is 1
 * (mp_aux_init sets 60 bins): the qualities are the bins. Counts commute, so counting
 * later, and in any order, gives bcftools' histograms.
 */
static void add_bias(mp_aux_t *bca, const mp_deferred_t *d)
{
    const bam_pileup1_t *p = d->p;
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
    int baseQ = d->baseQ > 59 ? 59 : d->baseQ, mapQ = d->mapQ > 59 ? 59 : d->mapQ;
    mp_hist_add(d->rev ? &bca->rev_mqs : &bca->fwd_mqs, mapQ);
    int alt = d->is_diff;
    mp_hist_add(alt ? &bca->alt_pos : &bca->ref_pos, epos);
    mp_hist_add(alt ? &bca->alt_bq : &bca->ref_bq, baseQ);
    mp_hist_add(alt ? &bca->alt_mq : &bca->ref_mq, mapQ);
    mp_hist_add(alt ? &bca->alt_scl : &bca->ref_scl, sc_len);
    int inm = mismatch_bin(p->cd.i, !alt);
    if (inm >= 0) {
        (alt ? bca->alt_nm : bca->ref_nm)[inm]++;
        int32_t *smpl = alt ? d->r->alt_nm : d->r->ref_nm;
        if (smpl)
            smpl[inm]++;
    }
}

void mp_bias_bins(mp_aux_t *bca)
{
    for (int i = 0; i < bca->n_deferred; i++)
        add_bias(bca, &bca->deferred[i]);
    bca->hist_dirty |= bca->n_deferred > 0;
    bca->n_deferred = 0;
}

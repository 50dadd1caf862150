/*
 * mp_column.c -- one column as bcftools mpileup 1.16 handles it: the flags a
 * read carries into the pileup, partial BAQ, the reads grouped by sample, and
 * the SNP and indel records encoded as VCF text or BCF.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mp_worker.h"

/* The SNP record's alleles hold an ALT (bcftools' has_alt): the site's MWU tests ran. */
int mp_site_has_alt(const mp_site_t *bc)
{
    return !(bc->n_alleles == 2 && bc->unseen != -1);
}

/*
 * Called by htslib's pileup for each read it takes in (bcftools' constructor):
 * the read's sample and the facts about it every column needs (MP_CD_*),
 * kept in cd.i for every column the read is in.
 */
int mp_read_entered(void *data, const bam1_t *b, bam_pileup_cd *cd)
{
    mp_input_t *in = data;
    cd->i = mp_read_cd(b, mp_samples_of(in->smpl, in->i, b), in->o->baq);
    return 0;
}

/* The run of matched bases at one end of the CIGAR (long reads skip their clips). */
static int end_match(const uint32_t *cig, int ncig, int from_left, int long_read)
{
    int len = 0;
    for (int j = 0; j < ncig; j++) {
        int k = from_left ? j : ncig - 1 - j;
        int op = bam_cigar_op(cig[k]);
        if (long_read && (op == BAM_CHARD_CLIP || op == BAM_CSOFT_CLIP))
            continue;
        if (op != BAM_CMATCH && op != BAM_CDIFF && op != BAM_CEQUAL)
            break;
        len += bam_cigar_oplen(cig[k]);
    }
    return len;
}

/*
 * Partial BAQ's choice for one read at a column that asked for BAQ (nt reads,
 * has_clip of them clipped): reads whose indel lies deep inside well-matched
 * flanks, or very long reads with a wide band, keep their qualities.
 */
static int baq_wanted(const mp_opts_t *o, const bam1_t *b, int nt, int has_clip)
{
    const uint32_t *cig = bam_get_cigar(b);
    int ncig = b->core.n_cigar;
    if (o->baq_partial && nt > 15 && ncig > 1) {
        int dist = 40 + 10 * (nt < 40) + 10 * (nt < 20), lr = b->core.l_qseq > 500;
        int lm = end_match(cig, ncig, 1, lr), rm = end_match(cig, ncig, 0, lr);
        if (lm >= dist * 4 && rm >= dist * 4)
            return 0;
        if (lm >= dist && rm >= dist && has_clip < (0.15 + 0.05 * (nt > 20)) * nt)
            return 0;
    }
    if (b->core.l_qseq > 500) {
        hts_pos_t rl = bam_cigar2rlen(ncig, cig);
        if (llabs(rl - b->core.l_qseq) * b->core.l_qseq >= 500000)
            return 0;
    }
    return 1;
}

/* Flag bit bcftools borrows to mark a read BAQ has seen (htslib never sets it). */
#define MP_BAQ_DONE 32768

/*
 * BAQ at this column, bcftools' partial way: only where reads show an indel
 * that is not one clean event, and then once per read, the first time. So a
 * read's qualities depend on the columns it was in before: hence the replay.
 */
/* Room for n reads in the BAQ batch. 0, or -1 out of memory. */
static int reserve_baq(mp_worker_t *w, int n)
{
    if (n <= w->m_baq)
        return 0;
    int m = n + n / 2 + 16;
    /* written per column: private lines (ss_alloc.h) */
    bam1_t **reads = ss_realloc_private(w->baq_reads, (size_t)w->m_baq * sizeof(*reads),
                                        (size_t)m * sizeof(*reads));
    if (reads)
        w->baq_reads = reads;
    int *ret =
        ss_realloc_private(w->baq_ret, (size_t)w->m_baq * sizeof(*ret), (size_t)m * sizeof(*ret));
    if (ret)
        w->baq_ret = ret;
    if (!reads || !ret)
        return -1;
    w->m_baq = m;
    return 0;
}

int mp_column_baq(mp_worker_t *w)
{
    const mp_opts_t *o = w->o;
    int has_indel = 0, has_clip = 0, nt = 0, min_indel = INT_MAX, max_indel = INT_MIN;
    for (int i = 0; i < w->n; i++) {
        nt += w->n_plp[i];
        for (int j = 0; j < w->n_plp[i]; j++) {
            const bam_pileup1_t *p = w->plp[i] + j;
            has_indel += (MP_CD_INDEL(p->cd.i) || p->indel) ? 1 : 0;
            has_clip += MP_CD_SOFT_CLIP(p->cd.i) ? 1 : 0;
            if (max_indel < p->indel)
                max_indel = p->indel;
            if (min_indel > p->indel)
                min_indel = p->indel;
        }
    }
    if (o->baq_partial && (has_indel == 0 || (has_clip < 0.2 * nt && max_indel == min_indel &&
                                              (has_indel < 0.1 * nt || has_indel == 1))))
        return 0;
    if (reserve_baq(w, nt) < 0)
        return -1;
    /* Each read's realignment depends on the read alone: one batch gives every read what
     * sam_prob_realn gives it, several reads per SIMD step. */
    int n_baq = 0;
    for (int i = 0; i < w->n; i++)
        for (int j = 0; j < w->n_plp[i]; j++) {
            bam1_t *b = w->plp[i][j].b;
            if (b->core.flag & MP_BAQ_DONE)
                continue;
            b->core.flag |= MP_BAQ_DONE;
            if (b->core.l_qseq > o->max_read_len || !baq_wanted(o, b, nt, has_clip))
                continue;
            uint8_t *placeholder = bam_aux_get(b, "_Q");
            if (placeholder)
                bam_aux_del(b, placeholder);
            w->baq_reads[n_baq++] = b;
        }
    /* bcftools ignores sam_prob_realn's code; only a workspace that cannot grow is ours */
    if (n_baq && baq_batch(w->baq, w->baq_reads, n_baq, w->ref, w->ref_len, o->redo_baq ? 7 : 3,
                           w->baq_ret) < 0)
        return -1;
    for (int i = 0; i < n_baq; i++)
        pe_rec(w->baq_reads[i])->quals_changed = 1; /* its SNP words are out of date */
    return 0;
}

/*
 * When each input is one sample of its own, a sample's group is its input's
 * column array itself, in its order. The pileup engine starts every entry's
 * aux at 0, as the copy in mp_group_by_sample does, and makes the array anew
 * for every column, so indel scoring may write aux there.
 */
static void group_by_input(mp_worker_t *w)
{
    for (int s = 0; s < w->n_smpl; s++)
        w->grp_n[s] = 0;
    for (int i = 0; i < w->n; i++) {
        w->grp_n[w->file_sample[i]] = w->n_plp[i];
        w->grp_plp[w->file_sample[i]] = (bam_pileup1_t *)w->plp[i];
    }
}

/* The column's reads grouped by sample, inputs in order (bcftools' group_smpl). 0 or -1. */
int mp_group_by_sample(mp_worker_t *w)
{
    if (w->file_sample) {
        group_by_input(w);
        return 0;
    }
    for (int s = 0; s < w->n_smpl; s++)
        w->grp[s].n = 0;
    for (int i = 0; i < w->n; i++)
        for (int j = 0; j < w->n_plp[i]; j++) {
            const bam_pileup1_t *p = w->plp[i] + j;
            mp_group_t *g = &w->grp[MP_CD_SAMPLE(p->cd.i)];
            if (g->n == g->m) {
                int m = g->m ? 2 * g->m : 8;
                bam_pileup1_t *a =
                    ss_realloc_private(g->plp, (size_t)g->m * sizeof(*a), (size_t)m * sizeof(*a));
                if (!a)
                    return -1;
                g->plp = a, g->m = m;
            }
            g->plp[g->n] = *p;
            /*
             * htslib never writes aux; indel scoring sets it for the reads it
             * scores and leaves it for others (ref skips), which then read
             * what htslib's fresh column array held: zero in bcftools' run.
             */
            g->plp[g->n++].aux = 0;
        }
    for (int s = 0; s < w->n_smpl; s++) {
        w->grp_n[s] = w->grp[s].n;
        w->grp_plp[s] = w->grp[s].plp;
    }
    return 0;
}

/*
 * Whether v's shared and indiv blocks already hold its bytes: a record as
 * mp_site_to_bcf writes it, or as htslib reads one, not edited since (the
 * cases in which htslib's sync would leave both blocks as they are).
 */
static int record_in_sync(const bcf1_t *v)
{
    return v->shared.l && !v->d.shared_dirty && !v->d.indiv_dirty && (v->indiv.l || !v->n_fmt);
}

/* The record, appended as VCF text, or as BCF bytes (sync: a scratch record). 0 or -1. */
int mp_record_bytes(const bcf_hdr_t *hdr, bcf1_t *sync, bcf1_t *v, kstring_t *out)
{
    if (!sync)
        return vcf_format(hdr, v, out) < 0 ? -1 : 0;
    /* an edited record (bcftools call's) is serialised into its blocks by the copy */
    if (!record_in_sync(v))
        bcf_copy(sync, v);
    uint32_t x[8];
    x[0] = (uint32_t)v->shared.l + 24;
    x[1] = (uint32_t)v->indiv.l;
    x[2] = (uint32_t)v->rid;
    x[3] = (uint32_t)v->pos;
    x[4] = (uint32_t)v->rlen;
    memcpy(&x[5], &v->qual, 4);
    x[6] = (uint32_t)v->n_info | (uint32_t)v->n_allele << 16;
    x[7] = (uint32_t)v->n_fmt << 24 | (v->n_sample & 0xffffff);
    uint8_t le[32];
    for (int k = 0; k < 8; k++)
        for (int j = 0; j < 4; j++)
            le[4 * k + j] = (uint8_t)(x[k] >> (8 * j));
    if (kputsn((char *)le, 32, out) < 0 || kputsn(v->shared.s, v->shared.l, out) < 0 ||
        kputsn(v->indiv.s, v->indiv.l, out) < 0)
        return -1;
    return 0;
}

/* The record, appended to the shard's output as VCF text or BCF bytes. 0 or -1. */
int mp_put_record(mp_worker_t *w, bcf1_t *v, kstring_t *out)
{
    return mp_record_bytes(w->run->out_hdr, w->bcf ? w->sync : NULL, v, out);
}

/* The caller's reason for a failed call, or the one left when it gave none. */
static const char *why_not_called(const mc_caller_t *c)
{
    const char *why = mc_error(c);
    return *why ? why : "out of memory; lower -@";
}

/* --call: bcftools call's record for this one in w->called: 1, 0 when it writes none, or -1. */
static int call_record(mp_worker_t *w)
{
    int r = mc_call(w->caller, w->rec, w->called);
    if (r < 0)
        ss_error("--call failed at %s:%lld: %s", bcf_seqname_safe(w->run->vcf_hdr, w->rec),
                 (long long)w->rec->pos + 1, why_not_called(w->caller));
    return r;
}

/*
 * A record written (--call: the called one), or what gVCF makes of it: blocks
 * of mpileup's records with -g, of the called ones with --call -g, as
 * bcftools call feeds its output to the same block writer. Past the shard's
 * end (extending) only the shard's last block takes records, until it closes;
 * the rest is the next shard's. 0 or -1.
 */
static int write_record(mp_worker_t *w, bcf1_t *rec, kstring_t *out)
{
    if (!w->gv)
        return mp_put_record(w, rec, out);
    if (w->extending && !mp_gvcf_open(w->gv))
        return 0;
    mp_block_out_t b = {w, out};
    int r = mp_gvcf_write(w->gv, mp_gvcf_header(w), rec, mp_gvcf_put_block, &b);
    if (r < 0)
        return -1;
    return r == 1 && !w->extending ? mp_put_record(w, rec, out) : 0;
}

/* mc_call_site's emit: a called record of the column. */
static int write_called(void *ctx, bcf1_t *rec)
{
    mp_block_out_t *b = ctx;
    return write_record(b->w, rec, b->out);
}

/* The column's record in w->rec: called (under -C alleles kept until the column ends), written. */
static int emit_record(mp_worker_t *w, kstring_t *out)
{
    bcf1_t *rec = w->rec;
    /* the caller and gVCF read the alleles (d.allele); a record only written needs none */
    if ((w->caller || w->gv) && bcf_unpack(rec, BCF_UN_STR) < 0)
        return -1;
    if (w->caller && w->o->call->constrain_alleles) {
        if (w->n_site == 2 || !(w->site[w->n_site] || (w->site[w->n_site] = bcf_init1())))
            return -1;
        return bcf_copy(w->site[w->n_site++], rec) ? 0 : -1;
    }
    if (w->caller) {
        int r = call_record(w);
        if (r <= 0)
            return r;
        rec = w->called;
    }
    return write_record(w, rec, out);
}

/* -C alleles: the column's records called against the targets at its position. 0 or -1. */
static int call_site(mp_worker_t *w, kstring_t *out)
{
    mp_block_out_t b = {w, out};
    int n = w->n_site;
    w->n_site = 0;
    if (mc_call_site(w->caller, w->site, n, w->called, write_called, &b) < 0) {
        if (n)
            ss_error("--call -C alleles failed at %s:%lld: %s",
                     bcf_seqname_safe(w->run->vcf_hdr, w->site[0]), (long long)w->site[0]->pos + 1,
                     why_not_called(w->caller));
        return -1;
    }
    return 0;
}

/*
 * One printed column: the SNP record, then the indel record where there is
 * one. *carry_known: the values indel records take from the last SNP site
 * with an ALT are known (set here at such a site). 0, MP_NEED_CARRY when an
 * indel record needs them unknown, -1 out of memory.
 */
static int column_records(mp_worker_t *w, int tid, hts_pos_t pos, kstring_t *out, int *carry_known)
{
    int total = 0, oom = 0;
    for (int i = 0; i < w->n; i++)
        total += w->n_plp[i];
    if (mp_group_by_sample(w) < 0)
        return -1;
    int ref0 = (w->ref && pos < w->ref_len) ? w->ref[pos] : 'N';
    int ref16 = seq_nt16_table[(unsigned char)ref0];
    mp_aux_clean(w->bca, &w->bc);
    for (int s = 0; s < w->n_smpl; s++)
        oom |= mp_glfgen(w->grp_n[s], w->grp_plp[s], ref16, w->bca, &w->bcr[s], &w->rng) == -2;
    w->bc.tid = tid;
    w->bc.pos = (int)pos;
    mp_combine(w->n_smpl, w->bcr, w->bca, ref16, &w->bc);
    if (mp_site_has_alt(&w->bc))
        *carry_known = 1;
    bcf_clear1(w->rec);
    if (oom || mp_site_to_bcf(&w->bc, w->rec, w->bcr, w->o->fmt_flag, w->bca, NULL) < 0 ||
        emit_record(w, out) < 0)
        return -1;
    if (w->o->no_indel || total >= w->max_indel_depth)
        return 0;
    mp_aux_clean(w->bca, &w->bc);
    /* bcftools drops a column its indel scoring gives up on; memory running out (only
     * allocators set ENOMEM) must fail the shard instead of dropping the record */
    errno = 0;
    if (mp_gap_prep(w->n_smpl, w->grp_n, w->grp_plp, (int)pos, w->bca, &w->rs) < 0)
        return errno == ENOMEM ? -1 : 0;
    for (int s = 0; s < w->n_smpl; s++)
        oom |= mp_glfgen(w->grp_n[s], w->grp_plp[s], -1, w->bca, &w->bcr[s], &w->rng) == -2;
    if (oom)
        return -1;
    if (mp_combine(w->n_smpl, w->bcr, w->bca, -1, &w->bc) < 0)
        return 0;
    if (!*carry_known && mp_site_has_alt(&w->bc))
        return MP_NEED_CARRY;
    bcf_clear1(w->rec);
    if (mp_site_to_bcf(&w->bc, w->rec, w->bcr, w->o->fmt_flag, w->bca, w->ref) < 0)
        return -1;
    return emit_record(w, out);
}

int mp_column_records(mp_worker_t *w, int tid, hts_pos_t pos, kstring_t *out, int *carry_known)
{
    w->n_site = 0;
    int r = column_records(w, tid, pos, out, carry_known);
    if (r == 0 && w->n_site)
        r = call_site(w, out);
    w->n_site = 0; /* a pass that restarts (MP_NEED_CARRY) makes the column again */
    return r;
}

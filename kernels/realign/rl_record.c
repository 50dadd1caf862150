/*
 * rl_record.c -- the records of realigned reads and of their mates.
 *
 * A realigned read keeps everything but its alignment: new POS and CIGAR,
 * OA:Z with the original (RNAME,POS,strand,CIGAR,MAPQ,NM;) appended to any OA
 * it had, NM and MD recomputed when it had them, BQ dropped (htslib's BAQ
 * would reuse it, and it belongs to the old alignment). MAPQ is kept.
 *
 * Mates: every primary record whose mate's primary moved gets the mate's new
 * PNEXT and MC; both primaries of a pair with a moved member get TLEN as
 * samtools fixmate 1.16 computes it (5' end to 5' end: POS of a forward read,
 * the end of a reverse one; mate's minus own). Secondary and supplementary
 * records of such a pair get PNEXT and MC too when within --max-isize of the mate
 * (else a shard could not know), TLEN is left as it was. The
 * decisions for both mates are made in every shard that holds either (the
 * halo covers --max-isize), so each writes the same fields without talking.
 */
#include <stdlib.h>
#include <string.h>

#include <htslib/khash.h>

#include "realign.h"

KHASH_MAP_INIT_STR(rl_names, uint64_t)

void rl_names_destroy(void *names)
{
    if (names)
        kh_destroy(rl_names, (khash_t(rl_names) *)names);
}

/* ---- NM and MD ---- */

int rl_nm_md(const bam1_t *b, const rl_ref_t *ref, int *nm_out, kstring_t *md)
{
    const uint32_t *c = bam_get_cigar(b);
    const uint8_t *seq = bam_get_seq(b);
    hts_pos_t rp = b->core.pos;
    int qp = 0, nm = 0, run = 0;
    md->l = 0;
    for (uint32_t i = 0; i < b->core.n_cigar; i++) {
        int op = bam_cigar_op(c[i]), len = (int)bam_cigar_oplen(c[i]);
        if (op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF) {
            for (int j = 0; j < len; j++) {
                char rc = rl_ref_at(ref, rp + j);
                int c1 = bam_seqi(seq, qp + j), c2 = seq_nt16_table[(unsigned char)rc];
                if ((c1 == c2 && c1 != 15) || c1 == 0) {
                    run++;
                } else {
                    if (kputw(run, md) < 0 || kputc(rc, md) < 0)
                        return -1;
                    run = 0, nm++;
                }
            }
        } else if (op == BAM_CDEL) {
            if (kputw(run, md) < 0 || kputc('^', md) < 0)
                return -1;
            for (int j = 0; j < len; j++)
                if (kputc(rl_ref_at(ref, rp + j), md) < 0)
                    return -1;
            run = 0, nm += len;
        } else if (op == BAM_CINS) {
            nm += len;
        }
        if (bam_cigar_type(op) & 1)
            qp += len;
        if (bam_cigar_type(op) & 2)
            rp += len;
    }
    *nm_out = nm;
    return kputw(run, md) < 0 ? -1 : 0;
}

/* ---- a realigned read ---- */

static int format_cigar(const uint32_t *c, int n, kstring_t *s)
{
    for (int i = 0; i < n; i++)
        if (kputw((int)bam_cigar_oplen(c[i]), s) < 0 || kputc(bam_cigar_opchr(c[i]), s) < 0)
            return -1;
    return 0;
}

/* The OA:Z value: any OA the read had, then its original alignment. */
static int original_alignment(const bam1_t *b, const char *ctg, kstring_t *s)
{
    uint8_t *oa = bam_aux_get(b, "OA"), *nm = bam_aux_get(b, "NM");
    s->l = 0;
    if (oa && bam_aux2Z(oa) && kputs(bam_aux2Z(oa), s) < 0)
        return -1;
    if (ksprintf(s, "%s,%lld,%c,", ctg, (long long)b->core.pos + 1, bam_is_rev(b) ? '-' : '+') <
            0 ||
        format_cigar(bam_get_cigar(b), (int)b->core.n_cigar, s) < 0 ||
        ksprintf(s, ",%d,", b->core.qual) < 0)
        return -1;
    if (nm && kputll(bam_aux2i(nm), s) < 0)
        return -1;
    return kputc(';', s) < 0 ? -1 : 0;
}

/* b's record with a new POS and CIGAR, built in s (same name, bases, tags). */
static int with_alignment(const bam1_t *b, hts_pos_t pos, const uint32_t *cig, int n, bam1_t *s)
{
    size_t l_qname = b->core.l_qname, l_cig = (size_t)n * 4;
    size_t l_sq = (size_t)(b->core.l_qseq + 1) / 2 + (size_t)b->core.l_qseq;
    size_t l_aux = (size_t)bam_get_l_aux(b), need = l_qname + l_cig + l_sq + l_aux;
    if (s->m_data < need) {
        uint8_t *d = realloc(s->data, need + 64);
        if (!d)
            return -1;
        s->data = d, s->m_data = need + 64;
    }
    uint8_t *d = s->data;
    memcpy(d, b->data, l_qname);
    memcpy(d + l_qname, cig, l_cig);
    memcpy(d + l_qname + l_cig, bam_get_seq(b), l_sq);
    memcpy(d + l_qname + l_cig + l_sq, bam_get_aux(b), l_aux);
    s->l_data = (int)need;
    s->core = b->core;
    s->core.pos = pos;
    s->core.n_cigar = (uint32_t)n;
    s->id = b->id;
    s->core.bin = (uint16_t)hts_reg2bin(pos, pos + bam_cigar2rlen(n, cig), 14, 5);
    return 0;
}

static void swap_records(bam1_t *a, bam1_t *b)
{
    bam1_t t = *a;
    *a = *b;
    *b = t;
}

/* NM and MD again where the read had them; BQ gone. */
static int retag(bam1_t *b, const rl_ref_t *ref, kstring_t *md)
{
    uint8_t *p;
    int had_nm = bam_aux_get(b, "NM") != NULL, had_md = bam_aux_get(b, "MD") != NULL, nm;
    if ((p = bam_aux_get(b, "BQ")) && bam_aux_del(b, p) < 0)
        return -1;
    if (!had_nm && !had_md)
        return 0;
    if (rl_nm_md(b, ref, &nm, md) < 0)
        return -1;
    if (had_nm && bam_aux_update_int(b, "NM", nm) < 0)
        return -1;
    if (had_md && bam_aux_update_str(b, "MD", (int)md->l + 1, md->s) < 0)
        return -1;
    return 0;
}

int rl_rewrite_read(rl_block_t *k, int i, const rl_ref_t *ref)
{
    rl_read_t *r = &k->reads[i];
    bam1_t *b = r->b;
    if (original_alignment(b, ref->name, &k->aux) < 0 ||
        with_alignment(b, r->new_pos, k->cig + r->cig_off, r->n_cig, k->scratch) < 0)
        return -1;
    swap_records(b, k->scratch); /* the block's record now holds the new alignment */
    if (bam_aux_update_str(b, "OA", (int)k->aux.l + 1, k->aux.s) < 0 || retag(b, ref, &k->md) < 0)
        return -1;
    rl_read_spans(r);
    return 0;
}

/* ---- mates ---- */

#define IS_PRIMARY(b) (!((b)->core.flag & (BAM_FSECONDARY | BAM_FSUPPLEMENTARY)))

/* name -> (READ1 primary index + 1) << 32 | (READ2 primary index + 1). */
static int map_primaries(rl_block_t *k)
{
    khash_t(rl_names) *h = k->names;
    if (!h && !(h = k->names = kh_init(rl_names)))
        return -1;
    kh_clear(rl_names, h);
    for (int i = 0; i < k->n; i++) {
        bam1_t *b = k->recs[i];
        if (!(b->core.flag & BAM_FPAIRED) || !IS_PRIMARY(b))
            continue;
        int absent;
        khint_t it = kh_put(rl_names, h, bam_get_qname(b), &absent);
        if (absent < 0)
            return -1;
        if (absent)
            kh_val(h, it) = 0;
        int shift = b->core.flag & BAM_FREAD1 ? 32 : 0;
        kh_val(h, it) |= (uint64_t)(i + 1) << shift;
    }
    return 0;
}

/* The primary mate of record i in the block, or -1. */
static int mate_of(const rl_block_t *k, int i)
{
    const khash_t(rl_names) *h = k->names;
    const bam1_t *b = k->recs[i];
    khint_t it = kh_get(rl_names, h, bam_get_qname(b));
    if (it == kh_end(h))
        return -1;
    uint64_t v = kh_val(h, it);
    int j = (int)(b->core.flag & BAM_FREAD1 ? (v & 0xffffffffu) : (v >> 32)) - 1;
    return j >= 0 && j != i ? j : -1;
}

static hts_pos_t five_prime(const bam1_t *b)
{
    return bam_is_rev(b) ? bam_endpos(b) : b->core.pos;
}

/* Record b's mate fields from its mate m's (new) alignment. */
static int take_mate(bam1_t *b, const bam1_t *m, int with_tlen, kstring_t *s)
{
    b->core.mpos = m->core.pos;
    if (with_tlen)
        b->core.isize = five_prime(m) - five_prime(b);
    if (!bam_aux_get(b, "MC"))
        return 0;
    s->l = 0;
    if (format_cigar(bam_get_cigar(m), (int)m->core.n_cigar, s) < 0)
        return -1;
    return bam_aux_update_str(b, "MC", (int)s->l + 1, s->s);
}

/*
 * A secondary or supplementary record may lie anywhere; it follows its moved mate only
 * when that mate is within --max-isize of it, so every shard that writes it sees the
 * mate's window (the halo) and decides alike.
 */
static int near_mate(const bam1_t *b, int max_isize)
{
    hts_pos_t d =
        b->core.mpos > b->core.pos ? b->core.mpos - b->core.pos : b->core.pos - b->core.mpos;
    return b->core.mtid == b->core.tid && d <= max_isize;
}

int rl_fix_mates(rl_block_t *k, int max_isize)
{
    int any = 0;
    for (int i = 0; i < k->n && !any; i++)
        any = k->reads[i].moved;
    if (!any)
        return 0;
    if (map_primaries(k) < 0)
        return -1;
    for (int i = 0; i < k->n; i++) {
        bam1_t *b = k->recs[i];
        if (!(b->core.flag & BAM_FPAIRED) || (b->core.flag & BAM_FMUNMAP))
            continue;
        int j = mate_of(k, i);
        if (j < 0)
            continue;
        int self = IS_PRIMARY(b) && k->reads[i].moved;
        if ((!k->reads[j].moved && !self) || (!IS_PRIMARY(b) && !near_mate(b, max_isize)))
            continue;
        int tlen = IS_PRIMARY(b) && b->core.tid == k->recs[j]->core.tid;
        if (take_mate(b, k->recs[j], tlen, &k->aux) < 0)
            return -1;
        k->reads[i].mate = j;
    }
    return 0;
}

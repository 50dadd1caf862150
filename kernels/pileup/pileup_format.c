/*
 * pileup_format.c -- the text of one mpileup line, byte-compatible with
 * samtools mpileup 1.16. Appends to a kstring (no stdio in the hot path).
 */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include <htslib/kstring.h>

#include "../../genomics/pileup_engine.h"
#include "pileup.h"

/* A base is counted and printed only if its quality reaches -Q. */
static inline int base_qual(const bam_pileup1_t *p)
{
    return p->qpos < p->b->core.l_qseq ? bam_get_qual(p->b)[p->qpos] : 0;
}

static inline char ref_base(const char *ref, hts_pos_t ref_len, hts_pos_t pos)
{
    return (ref && pos < ref_len) ? ref[pos] : 'N';
}

static int put_insertion(kstring_t *out, const bam_pileup1_t *p, const pl_opts_t *o, kstring_t *ins,
                         int *del_len)
{
    hts_base_mod_state *m = o->mods && !o->no_ins_mods && !o->no_ins ? p->cd.p : NULL;
    int len = bam_plp_insertion_mod(p, m, ins, del_len);
    if (len < 0)
        return -1;
    if (o->no_ins < 2) {
        kputc_('+', out);
        kputw(len, out);
    }
    if (o->no_ins)
        return 0;
    int rev = bam_is_rev(p->b), in_mod = 0;
    char pad = (rev && o->rev_del) ? '#' : '*';
    for (size_t j = 0; j < ins->l; j++) {
        int c = ins->s[j];
        if (c == '[')
            in_mod = 1;
        else if (c == ']')
            in_mod = 0;
        /* modification text inside [...] keeps its case */
        if (c == '*')
            c = rev ? pad : '*';
        else if (!in_mod && c != ']')
            c = rev ? tolower(c) : toupper(c);
        kputc_(c, out);
    }
    return 0;
}

/* -M: "[+m90-h]" after a base, as samtools prints modifications at qpos. */
static void put_mods(kstring_t *out, const bam_pileup1_t *p)
{
    hts_base_mod mod[256];
    hts_base_mod_state *m = p->cd.p;
    int nm = m ? bam_mods_at_qpos(p->b, p->qpos, m, mod, 256) : 0;
    if (nm <= 0)
        return;
    kputc_('[', out);
    for (int j = 0; j < nm && j < 256; j++) {
        kputc_("+-"[mod[j].strand], out);
        if (mod[j].modified_base < 0)
            ksprintf(out, "(%d)", -mod[j].modified_base); /* a ChEBI number */
        else
            kputc_(mod[j].modified_base, out);
        if (mod[j].qual >= 0)
            kputw(mod[j].qual, out);
    }
    kputc_(']', out);
}

static void put_deletion(kstring_t *out, const bam_pileup1_t *p, const pl_opts_t *o, hts_pos_t pos,
                         const char *ref, hts_pos_t ref_len, int del_len)
{
    if (o->no_del < 2) {
        kputc_('-', out);
        kputw(del_len, out);
    }
    if (o->no_del)
        return;
    int rev = bam_is_rev(p->b);
    for (int j = 1; j <= del_len; ++j) {
        /* samtools compares in int here; keep its bound for huge contigs */
        int c = (ref && (int)pos + j < ref_len) ? ref[pos + j] : 'N';
        kputc_(rev ? tolower(c) : toupper(c), out);
    }
}

static void put_column_value(kstring_t *out, int col, const bam_pileup1_t *p, const sam_hdr_t *h)
{
    const bam1_core_t *c = &p->b->core;
    switch (col) {
    case PL_COL_MAPQ_CHAR:
        kputc_(c->qual + 33 > 126 ? 126 : c->qual + 33, out);
        break;
    case PL_COL_QPOS:
        kputw(p->qpos + 1, out);
        break;
    case PL_COL_QPOS5:
        kputw(bam_is_rev(p->b) ? c->l_qseq - p->qpos + p->is_del : p->qpos + 1, out);
        break;
    case PL_COL_QNAME:
        kputs(bam_get_qname(p->b), out);
        break;
    case PL_COL_FLAG:
        kputw(c->flag, out);
        break;
    case PL_COL_RNAME:
        if (c->tid >= 0)
            kputs(sam_hdr_tid2name(h, c->tid), out);
        else
            kputc_('*', out);
        break;
    case PL_COL_POS:
        kputll((long long)c->pos + 1, out);
        break;
    case PL_COL_MAPQ:
        kputw(c->qual, out);
        break;
    case PL_COL_RNEXT:
        if (c->mtid >= 0)
            kputs(sam_hdr_tid2name(h, c->mtid), out);
        else
            kputc_('*', out);
        break;
    case PL_COL_PNEXT:
        kputll((long long)c->mpos + 1, out);
        break;
    }
}

/* samtools prints columns in flag-bit order; QPOS5 is its highest bit. */
static const int col_order[PL_N_COLS] = {PL_COL_MAPQ_CHAR, PL_COL_QPOS, PL_COL_QNAME, PL_COL_FLAG,
                                         PL_COL_RNAME,     PL_COL_POS,  PL_COL_MAPQ,  PL_COL_RNEXT,
                                         PL_COL_PNEXT,     PL_COL_QPOS5};

static void put_tag_value(kstring_t *out, const pl_opts_t *o, const bam1_t *b, const char *tag)
{
    uint8_t *v = bam_aux_get(b, tag);
    if (!v) {
        kputc_(o->empty, out);
        return;
    }
    switch (*v) {
    case 'Z':
    case 'H': {
        char *s = bam_aux2Z(v);
        if (s)
            kputs(s, out);
        return;
    }
    case 'I':
    case 'i':
    case 'C':
    case 'c':
    case 'S':
    case 's':
        kputll((long long)bam_aux2i(v), out);
        return;
    case 'd':
    case 'f':
        ksprintf(out, "%lf", bam_aux2f(v));
        return;
    case 'A':
        kputc_(bam_aux2A(v), out);
        return;
    default:
        kputc_('*', out);
    }
}

static void put_stars(kstring_t *out, const pl_opts_t *o)
{
    for (int k = 0; k < PL_N_COLS; k++)
        if (o->cols & col_order[k])
            kputsn_("\t*", 2, out);
    for (int t = 0; t < o->n_tags; t++)
        kputsn_("\t*", 2, out);
}

/* The read's base as samtools prints it, from 4-bit codes: '=' never mismatches. */
static const char fwd_base[16] = "=ACMGRSVTWYHKDBN";
static const char rev_base[16] = "=acmgrsvtwyhkdbn";

/* Room for n reads' fixed part (^Q, base, $) plus separators. */
static inline char *reserve(kstring_t *out, size_t n)
{
    if (ks_resize(out, out->l + 16 + 4 * n) < 0)
        return NULL;
    return out->s + out->l;
}

/*
 * One read's base (and its ^Q, indel and $ marks) and quality, when its
 * quality passes -Q. s is the write position in out, which has room for the
 * fixed part of n_left reads; returns the new write position, or NULL.
 */
static char *put_entry(kstring_t *out, char *s, const pl_opts_t *o, hts_pos_t pos, const char *ref,
                       hts_pos_t ref_len, int rb, const bam_pileup1_t *p, pl_fmt_buf_t *fb,
                       int *cnt, int n_left)
{
    const bam1_t *b = p->b;
    int q = p->qpos < b->core.l_qseq ? bam_get_qual(b)[p->qpos] : 0;
    if (q < o->min_baseq)
        return s;
    fb->quals.s[(*cnt)++] = (char)(q + 33 < 126 ? q + 33 : 126);
    int rev = bam_is_rev(b);
    if (!o->no_ends && p->is_head) {
        *s++ = '^';
        *s++ = (char)(b->core.qual > 93 ? 126 : b->core.qual + 33);
    }
    if (!p->is_del) {
        int code = p->qpos < b->core.l_qseq ? bam_seqi(bam_get_seq(b), p->qpos) : 15;
        if (code == 0 || code == rb)
            *s++ = rev ? ',' : '.';
        else
            *s++ = rev ? rev_base[code] : fwd_base[code];
    } else if (p->is_refskip) {
        *s++ = rev ? '<' : '>';
    } else {
        *s++ = (rev && o->rev_del) ? '#' : '*';
    }
    if (p->indel != 0 || (o->mods && !p->is_del)) {
        out->l = (size_t)(s - out->s);
        if (o->mods && !p->is_del)
            put_mods(out, p);
        int del_len = -p->indel;
        if (p->indel > 0 && put_insertion(out, p, o, &fb->ins, &del_len) < 0)
            return NULL;
        if (del_len > 0)
            put_deletion(out, p, o, pos, ref, ref_len, del_len);
        if (!(s = reserve(out, (size_t)n_left)))
            return NULL;
    }
    if (!o->no_ends && p->is_tail)
        *s++ = '$';
    return s;
}

/* samtools compares nt16 codes; without a reference only '=' matches. */
static inline int ref_code(const char *ref, hts_pos_t ref_len, hts_pos_t pos)
{
    return ref ? seq_nt16_table[(unsigned char)ref_base(ref, ref_len, pos)] : -1;
}

/* Start a column's bases and qualities for up to n reads; NULL when out of memory. */
static char *column_start(pl_fmt_buf_t *fb, int n)
{
    fb->bases.l = 0;
    if (ks_resize(&fb->quals, (size_t)n + 1) < 0)
        return NULL;
    return reserve(&fb->bases, (size_t)n);
}

/*
 * The bases and qualities of the reads that pass -Q, in one pass over the
 * reads (each read's data is a cache miss; touch it once). Returns the
 * count, or -1.
 */
static int put_bases(pl_fmt_buf_t *fb, const pl_opts_t *o, hts_pos_t pos, const char *ref,
                     hts_pos_t ref_len, int n_plp, const bam_pileup1_t *plp)
{
    int rb = ref_code(ref, ref_len, pos), cnt = 0;
    char *s = column_start(fb, n_plp);
    for (int j = 0; s && j < n_plp; ++j)
        s = put_entry(&fb->bases, s, o, pos, ref, ref_len, rb, plp + j, fb, &cnt, n_plp - j);
    if (!s)
        return -1;
    fb->bases.l = (size_t)(s - fb->bases.s);
    fb->quals.l = (size_t)cnt;
    return cnt;
}

/*
 * put_bases for the engine's column at pos, without building the column:
 * most reads are inside an aligned block there, where the base and quality
 * are read straight from the record; the others are resolved as htslib
 * would. This loop is most of the kernel's own time.
 */
static int put_bases_engine(pl_fmt_buf_t *fb, const pl_opts_t *o, hts_pos_t pos, const char *ref,
                            hts_pos_t ref_len, pe_t *e)
{
    int rb = ref_code(ref, ref_len, pos), cnt = 0, minq = o->min_baseq;
    char *s = column_start(fb, e->n), *qs = fb->quals.s;
    for (int j = 0; s && j < e->n; ++j) {
        pe_read_t *r = &e->r[j];
        if (r->beg > pos)
            break; /* the rest start later */
        if (pos < r->fast_end) {
            hts_pos_t qp = pos + r->qoff;
            int q = r->qual[qp];
            if (q < minq)
                continue;
            qs[cnt++] = (char)(q + 33 < 126 ? q + 33 : 126);
            int code = bam_seqi(r->seq, qp);
            if (code == 0 || code == rb)
                *s++ = r->rev ? ',' : '.';
            else
                *s++ = r->rev ? rev_base[code] : fwd_base[code];
            continue;
        }
        bam_pileup1_t p;
        pe_resolve(r, pos, &p);
        s = put_entry(&fb->bases, s, o, pos, ref, ref_len, rb, &p, fb, &cnt, e->n - j);
    }
    if (!s)
        return -1;
    fb->bases.l = (size_t)(s - fb->bases.s);
    fb->quals.l = (size_t)cnt;
    return cnt;
}

/* The count, bases and qualities columns of one input. */
static int put_counted(kstring_t *out, int cnt, const pl_fmt_buf_t *fb)
{
    kputc_('\t', out);
    kputw(cnt, out);
    if (ks_resize(out, out->l + fb->bases.l + fb->quals.l + 8) < 0)
        return -1;
    char *s = out->s + out->l;
    *s++ = '\t';
    if (cnt) {
        memcpy(s, fb->bases.s, fb->bases.l);
        s += fb->bases.l;
        *s++ = '\t';
        memcpy(s, fb->quals.s, fb->quals.l);
        s += fb->quals.l;
    } else {
        memcpy(s, "*\t*", 3);
        s += 3;
    }
    out->l = (size_t)(s - out->s);
    return 0;
}

static int put_file(kstring_t *out, const pl_opts_t *o, const sam_hdr_t *h, hts_pos_t pos,
                    const char *ref, hts_pos_t ref_len, int n_plp, const bam_pileup1_t *plp,
                    pl_fmt_buf_t *fb)
{
    int j;
    if (n_plp == 0) {
        kputsn_("\t0\t*\t*", 6, out);
        put_stars(out, o);
        return 0;
    }
    int cnt = put_bases(fb, o, pos, ref, ref_len, n_plp, plp);
    if (cnt < 0 || put_counted(out, cnt, fb) < 0)
        return -1;
    for (int k = 0; k < PL_N_COLS; k++) {
        int col = col_order[k];
        if (!(o->cols & col))
            continue;
        int printed = 0;
        kputc_('\t', out);
        for (j = 0; j < n_plp; ++j) {
            if (base_qual(plp + j) < o->min_baseq)
                continue;
            if (printed++ && col != PL_COL_MAPQ_CHAR)
                kputc_(',', out);
            put_column_value(out, col, plp + j, h);
        }
        if (!printed)
            kputc_('*', out);
    }
    for (int t = 0; t < o->n_tags; t++) {
        int printed = 0;
        kputc_('\t', out);
        for (j = 0; j < n_plp; ++j) {
            if (base_qual(plp + j) < o->min_baseq)
                continue;
            if (printed++)
                kputc_(o->sep, out);
            put_tag_value(out, o, plp[j].b, o->tags[t]);
        }
        if (!printed)
            kputc_('*', out);
    }
    return 0;
}

static void put_line_start(kstring_t *out, const char *ctg, hts_pos_t pos, const char *ref,
                           hts_pos_t ref_len)
{
    kputs(ctg, out);
    kputc_('\t', out);
    kputll((long long)pos + 1, out);
    kputc_('\t', out);
    kputc_(ref_base(ref, ref_len, pos), out);
}

int pl_format_line(kstring_t *out, const pl_opts_t *o, const sam_hdr_t *h, const char *ctg,
                   hts_pos_t pos, const char *ref, hts_pos_t ref_len, int n, const int *n_plp,
                   const bam_pileup1_t **plp, pl_fmt_buf_t *buf)
{
    put_line_start(out, ctg, pos, ref, ref_len);
    for (int i = 0; i < n; ++i)
        if (put_file(out, o, h, pos, ref, ref_len, n_plp[i], plp[i], buf) < 0)
            return -1;
    return kputc('\n', out) < 0 ? -1 : 0;
}

/*
 * put_line_start for consecutive positions: most lines follow the previous
 * one, so its text is kept and its number counted up in place.
 */
static int put_line_start_next(kstring_t *out, pl_fmt_buf_t *fb, const char *ctg, hts_pos_t pos,
                               const char *ref, hts_pos_t ref_len)
{
    kstring_t *h = &fb->head;
    int reuse = fb->head_ctg == ctg && fb->head_pos + 1 == pos && h->l > fb->head_digits + 1;
    if (reuse) {
        size_t i = h->l - 1; /* the digits end before the tab */
        while (i > fb->head_digits && h->s[i - 1] == '9')
            h->s[--i] = '0';
        if (i > fb->head_digits)
            h->s[i - 1]++;
        else
            reuse = 0; /* 99 -> 100: the number grows */
    }
    if (!reuse) {
        h->l = 0;
        kputs(ctg, h);
        kputc('\t', h);
        fb->head_digits = h->l;
        kputll((long long)pos + 1, h);
        if (kputc('\t', h) < 0)
            return -1;
        fb->head_ctg = ctg;
    }
    fb->head_pos = pos;
    if (ks_resize(out, out->l + h->l + 1) < 0)
        return -1;
    memcpy(out->s + out->l, h->s, h->l);
    out->l += h->l;
    out->s[out->l++] = ref_base(ref, ref_len, pos);
    return 0;
}

int pl_format_engine_line(kstring_t *out, const pl_opts_t *o, const sam_hdr_t *h, const char *ctg,
                          hts_pos_t pos, const char *ref, hts_pos_t ref_len, int n,
                          struct pe_s *const *eng, const unsigned char *at, pl_fmt_buf_t *fb)
{
    if (put_line_start_next(out, fb, ctg, pos, ref, ref_len) < 0)
        return -1;
    for (int i = 0; i < n; ++i) {
        int r;
        if (!at[i]) {
            r = put_file(out, o, h, pos, ref, ref_len, 0, NULL, fb);
        } else {
            int cnt = put_bases_engine(fb, o, pos, ref, ref_len, eng[i]);
            r = cnt < 0 ? -1 : put_counted(out, cnt, fb);
        }
        if (r < 0)
            return -1;
    }
    return kputc('\n', out) < 0 ? -1 : 0;
}

int pl_format_empty(kstring_t *out, const pl_opts_t *o, const char *ctg, hts_pos_t pos,
                    const char *ref, hts_pos_t ref_len, int n)
{
    put_line_start(out, ctg, pos, ref, ref_len);
    for (int i = 0; i < n; ++i) {
        kputsn_("\t0\t*\t*", 6, out);
        put_stars(out, o);
    }
    return kputc('\n', out) < 0 ? -1 : 0;
}

/*
 * mp_indel_align.c -- one read against one candidate's haplotype: the part of
 * the read inside the window, htslib's probabilistic glocal alignment of it
 * (probaln_glocal), and a penalty when the read sits in a tandem repeat that
 * it does not span, since such a read cannot tell how many repeat units the
 * sample has. The score is bcftools': alignment score << 8 | penalty (0-255).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "../../../genomics/baq.h"
#include "base/ss_exact_fp.h"
#include "mp_indel.h"

#define MP_INDEL_NO_SCORE 0xffffff /* a read that cannot be aligned to the candidate */

/* The read's part of the window and where the candidate sits in it. */
typedef struct {
    int qbeg, qend;     /* query bases [qbeg, qend) */
    int qpos;           /* pos, as an offset from qbeg */
    int tbeg, tend;     /* contig positions the query covers */
    int r_start, r_end; /* the read's first and last contig positions */
} read_span_t;

/*
 * Query offset of contig position tpos (bcftools' tpos2qpos). *tpos_out is
 * tpos when the read has a base there; inside a deletion or skip it is the
 * gap's first position (is_left) or the one after it; before the read, the
 * read's start; past it, its end. Past the read the offset is the end of the
 * last aligned block.
 */
static int ref_to_query(const bam1_core_t *c, const uint32_t *cigar, int32_t tpos, int is_left,
                        int32_t *tpos_out)
{
    int x = c->pos, y = 0, last_y = 0;
    *tpos_out = c->pos;
    for (uint32_t k = 0; k < c->n_cigar; k++) {
        int op = cigar[k] & BAM_CIGAR_MASK;
        int len = cigar[k] >> BAM_CIGAR_SHIFT;
        if (op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF) {
            if (c->pos > tpos)
                return y;
            if (x + len > tpos) {
                *tpos_out = tpos;
                return y + (tpos - x);
            }
            x += len;
            y += len;
            last_y = y;
        } else if (op == BAM_CINS || op == BAM_CSOFT_CLIP) {
            y += len;
        } else if (op == BAM_CDEL || op == BAM_CREF_SKIP) {
            if (x + len > tpos) {
                *tpos_out = is_left ? x : x + len;
                return y;
            }
            x += len;
        }
    }
    *tpos_out = x;
    return last_y;
}

static int has_ref_skip(const bam1_t *b)
{
    const uint32_t *cigar = bam_get_cigar(b);
    for (uint32_t k = 0; k < b->core.n_cigar; k++)
        if ((cigar[k] & BAM_CIGAR_MASK) == BAM_CREF_SKIP)
            return 1;
    return 0;
}

/* ---- tandem repeats -------------------------------------------------------------------- */

/* The last 2 * unit bases seen (2 bits each in w) are one word of unit bases twice. */
static int word_repeats(uint32_t w, int unit)
{
    uint32_t mask = (1u << (2 * unit)) - 1;
    return (w & mask) == ((w >> (2 * unit)) & mask);
}

/*
 * A repeat of unit bases ends at pos: extend it right while the bases keep
 * the period, then record it, unless the last run recorded already covers
 * it. Earlier runs at the end of the list lying inside the new one are
 * dropped. Returns -1 when out of memory.
 */
static int add_run(mp_indel_ws_t *ws, int *n_runs, const uint8_t *seg, int len, int pos, int unit)
{
    mp_str_run_t *runs = ws->runs;
    int n = *n_runs;
    if (n > 0 && runs[n - 1].start <= pos - unit * 2 + 1 && runs[n - 1].end >= pos)
        return 0;

    int a = pos + 1 - unit, b = pos + 1;
    while (b < len && seg[a] == seg[b])
        a++, b++;
    mp_str_run_t run = {.start = pos + 1 - 2 * unit, .end = b - 1, .unit = unit};

    int lo = n, kept;
    while (lo > 0 && runs[lo - 1].end >= run.start)
        lo--;
    kept = lo;
    for (int i = lo; i < n; i++)
        if (runs[i].start < run.start)
            runs[kept++] = runs[i];
    n = kept;

    if (!(runs = mp_indel_reserve(ws->runs, &ws->m_runs, (size_t)n + 1, sizeof(*runs))))
        return -1;
    ws->runs = runs;
    runs[n++] = run;
    *n_runs = n;
    return 0;
}

/*
 * Tandem repeats of units 1-8 in seg (codes 0-4, 2 bits a base; N's bit
 * spills into the previous base, which bcftools' finder also does), into
 * ws->runs. The first 15 bases test every unit that fits; after that only
 * the longest unit that repeats. bcftools' finder also skips '*' pads; a
 * haplotype has none, so this one does not look for them. Returns the
 * number of runs, or -1.
 */
static int find_repeats(mp_indel_ws_t *ws, const uint8_t *seg, int len)
{
    uint32_t w = 0;
    int n_runs = 0, i;

    for (i = 0; i < len && i < 15; i++) {
        w = w << 2 | seg[i];
        for (int unit = 1; unit <= 7; unit++)
            if (i >= 2 * unit - 1 && word_repeats(w, unit) &&
                add_run(ws, &n_runs, seg, len, i, unit) < 0)
                return -1;
    }
    for (; i < len; i++) {
        w = w << 2 | seg[i];
        for (int unit = 8; unit >= 1; unit--)
            if (word_repeats(w, unit)) {
                if (add_run(ws, &n_runs, seg, len, i, unit) < 0)
                    return -1;
                break;
            }
    }
    return n_runs;
}

/*
 * Penalty for repeats covering the candidate's query offset: their units,
 * and twice their length where the read starts or ends inside them.
 */
static int repeat_penalty(mp_indel_ws_t *ws, const uint8_t *seg, int seg_len, const read_span_t *rs)
{
    int n_runs = find_repeats(ws, seg, seg_len), penalty = 0;
    if (n_runs < 0)
        return -1;
    for (int i = 0; i < n_runs; i++) {
        const mp_str_run_t *r = &ws->runs[i];
        if (r->start > rs->qpos || r->end < rs->qpos)
            continue;
        penalty += (r->end - r->start) / r->unit;
        if (r->start + rs->tbeg <= rs->r_start || r->end + rs->tbeg >= rs->r_end)
            penalty += 2 * (r->end - r->start);
    }
    return penalty;
}

/* ---- alignment ------------------------------------------------------------------------- */

/* The query's qualities, shifted by the ZQ tag when present, held to 7..30. */
static void capped_quals(const bam1_t *b, int qbeg, int qend, uint8_t *out)
{
    const uint8_t *qual = bam_get_qual(b);
    const uint8_t *zq = bam_aux_get(b, "ZQ");
    if (zq)
        zq++; /* past the type byte */
    for (int l = qbeg; l < qend; l++) {
        int q = zq ? qual[l] + (zq[l] - 64) : qual[l];
        if (q > 30)
            q = 30;
        if (q < 7)
            q = 7;
        out[l - qbeg] = q;
    }
}

static int align_to_hap(const mp_indel_col_t *col, const mp_aux_t *bca, mp_indel_ws_t *ws,
                        const bam1_t *b, int type, const read_span_t *rs, int *score)
{
    /* Illumina-like gaps; reads over 1000 bases get PacBio CCS-like ones. */
    probaln_par_t par = {1e-4, 1e-2, 10};
    if (b->core.l_qseq > 1000) {
        par.d = 1e-3;
        par.e = 1e-1;
    }
    int len = abs(type), n_q = rs->qend - rs->qbeg;
    par.bw = len + 3;

    /* bcftools sizes this buffer with n_q; a negative n_q fails there and drops the site. */
    if (n_q < 0)
        return -1;
    uint8_t *qual = mp_indel_reserve(ws->qual, &ws->m_qual, n_q, 1);
    if (!qual)
        return -1;
    ws->qual = qual;
    capped_quals(b, rs->qbeg, rs->qend, qual);

    const uint8_t *seg = ws->hap + rs->tbeg - col->left;
    int seg_len = rs->tend - rs->tbeg + len;
    int sc = baq_glocal_score(bca->baq, seg, seg_len, ws->query, n_q, qual, &par);
    if (sc == INT_MIN && errno == ENOMEM)
        return -1;
    if (sc < 0) {
        *score = MP_INDEL_NO_SCORE;
        return 0;
    }
    /* Low 8 bits: the score per 100 query bases, scaled by --indel-bias (in float). */
    int l = (int)(100. * sc / n_q + .499) * bca->indel_bias;
    *score = (int)((unsigned)sc << 8) | (l < 255 ? l : 255); /* wraps as in bcftools */

    int penalty = repeat_penalty(ws, seg, seg_len, rs);
    if (penalty < 0)
        return -1;
    l = (*score & 0xff) * .8 + penalty * 2;
    *score = (*score & ~0xff) | (l < 255 ? l : 255);
    return 0;
}

/*
 * The read's part of the window [left2, right2); reads over 1000 bases use a
 * window narrowed by half the window size on each side that has it all.
 */
static void read_span(const mp_indel_col_t *col, int win, const bam1_t *b, int type,
                      read_span_t *rs)
{
    const uint32_t *cigar = bam_get_cigar(b);
    int left2 = col->left, right2 = col->right, pos = col->pos;
    if (b->core.l_qseq > 1000) {
        if (pos - col->left >= win)
            left2 += win / 2;
        if (col->right - pos >= win)
            right2 -= win / 2;
    }
    rs->r_start = b->core.pos;
    rs->r_end = bam_cigar2rlen(b->core.n_cigar, cigar) - 1 + rs->r_start;
    rs->qbeg = ref_to_query(&b->core, cigar, left2, 0, &rs->tbeg);
    rs->qpos = ref_to_query(&b->core, cigar, pos, 0, &rs->tend) - rs->qbeg;
    rs->qend = ref_to_query(&b->core, cigar, right2, 1, &rs->tend);
    /* A deletion's haplotype is shorter: start up to its length earlier, not before left. */
    if (type < 0)
        rs->tbeg = rs->tbeg - -type > col->left ? rs->tbeg - -type : col->left;
}

/*
 * Scores read p against candidate t's haplotype (in ws->hap) into *score.
 * Unmapped and spliced reads are skipped (score untouched); reads lying
 * wholly inside a deletion get MP_INDEL_NO_SCORE. Returns 0, or -1 when the
 * column must be dropped (as bcftools drops it) or memory ran out.
 */
int mp_indel_score_read(const mp_indel_col_t *col, const mp_aux_t *bca, mp_indel_ws_t *ws,
                        const bam_pileup1_t *p, int t, int *score)
{
    const bam1_t *b = p->b;
    if ((b->core.flag & BAM_FUNMAP) || has_ref_skip(b))
        return 0;

    int type = col->types[t];
    read_span_t rs;
    read_span(col, bca->indel_win_size, b, type, &rs);

    const uint8_t *seq = bam_get_seq(b);
    for (int l = rs.qbeg; l < rs.qend; l++)
        ws->query[l - rs.qbeg] = seq_nt16_int[bam_seqi(seq, l)];

    if (rs.tend <= rs.tbeg) {
        *score = MP_INDEL_NO_SCORE;
        return 0;
    }
    if (align_to_hap(col, bca, ws, b, type, &rs, score) < 0) {
        *score = MP_INDEL_NO_SCORE;
        return -1;
    }
    return 0;
}

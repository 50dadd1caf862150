/*
 * mp_indel.c -- indel candidates at a pileup column and each read's score for
 * each, as bcftools mpileup 1.16 computes them (bcf_call_gap_prep): the
 * candidate lengths seen in the reads, a window around the column, one
 * haplotype per sample and candidate, every read aligned to each haplotype,
 * then each read's best candidate and qualities in p->aux.
 *
 * The arithmetic follows bcftools step for step (same types, same order),
 * because the VCF must match it byte for byte. What bcftools allocates per
 * call lives in a workspace on bca->indel_ws, so workers never share state.
 *
 * A column depends on nothing from earlier columns except the reads
 * themselves (their qualities, which partial BAQ may have rewritten).
 */
#include <stdlib.h>
#include <string.h>

#include <htslib/hts_log.h>

#include "../../../alloc/ss_alloc.h"
#include "base/ss_exact_fp.h"
#include "mp_indel.h"

void *mp_indel_reserve(void *buf, size_t *cap, size_t need, size_t elem)
{
    if (buf && need <= *cap)
        return buf;
    size_t want = need < 64 ? 64 : need + need / 2;
    /* the indel model's per-read arrays, written per read: private lines (ss_alloc.h) */
    void *grown = ss_realloc_private(buf, buf ? *cap * elem : 0, want * elem);
    if (!grown)
        return NULL;
    *cap = want;
    return grown;
}

static mp_indel_ws_t *workspace(mp_aux_t *bca)
{
    if (!bca->indel_ws)
        bca->indel_ws = ss_alloc_private(sizeof(mp_indel_ws_t));
    return bca->indel_ws;
}

void mp_indel_ws_free(mp_aux_t *bca)
{
    if (!bca || !bca->indel_ws)
        return;
    mp_indel_ws_t *ws = bca->indel_ws;
    free(ws->sizes);
    free(ws->masked);
    free(ws->ref4);
    free(ws->tally);
    free(ws->ins_votes);
    free(ws->ins_cons);
    free(ws->hap);
    free(ws->query);
    free(ws->qual);
    free(ws->score);
    free(ws->runs);
    free(ws);
    bca->indel_ws = NULL;
}

static int any_indel(int n, const int *n_plp, bam_pileup1_t *const *plp)
{
    for (int s = 0; s < n; s++)
        for (int i = 0; i < n_plp[s]; i++)
            if (plp[s][i].indel != 0)
                return 1;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/*
 * Lists every read's indel length (plus 0 for REF) in ws->sizes and keeps the
 * -m/-F bookkeeping: IDV/IMF come from the sample with the most indel reads.
 * Returns whether the column passes -m/-F (pooled unless --per-sample-mF).
 */
static int gather_sizes(mp_indel_col_t *col, mp_aux_t *bca, mp_indel_ws_t *ws, int *n_sizes)
{
    int n_alt = 0, n_tot = 0, support_ok = 0, m = 0;

    bca->max_support = 0;
    bca->max_frac = 0;
    ws->sizes[m++] = 0;
    col->max_rd_len = 0;
    for (int s = 0; s < col->n; s++) {
        int na = 0, nt = 0;
        for (int i = 0; i < col->n_plp[s]; i++) {
            const bam_pileup1_t *p = col->plp[s] + i;
            nt++;
            if (p->indel != 0) {
                na++;
                ws->sizes[m++] = p->indel;
            }
            int qlen = bam_cigar2qlen(p->b->core.n_cigar, bam_get_cigar(p->b));
            if (qlen > col->max_rd_len)
                col->max_rd_len = qlen;
        }
        /* A sample without reads gives 0/0: NaN fails both tests, as in bcftools. */
        double frac = (double)na / nt;
        if (!support_ok && (uint32_t)na >= bca->min_support && frac >= bca->min_frac)
            support_ok = 1;
        if ((uint32_t)na > bca->max_support && frac > 0) {
            bca->max_support = na;
            bca->max_frac = frac;
        }
        n_alt += na;
        n_tot += nt;
    }
    if (!bca->per_sample_flt)
        support_ok = !((double)n_alt / n_tot < bca->min_frac || (uint32_t)n_alt < bca->min_support);
    *n_sizes = m;
    return support_ok;
}

/* Half or more N in the reference from pos on: an assembly gap, not an indel (or the
 * reference there could not be loaded: mp_ref_need set errno). */
static int mostly_n(const mp_indel_col_t *col, int win)
{
    int n_n = 0, i, end = col->pos + (2 * win < col->max_rd_len ? 2 * win : col->max_rd_len);
    if (mp_ref_need(col->rs, col->pos, (hts_pos_t)end + 1) < 0)
        return 1;
    for (i = col->pos; i < end && col->ref[i]; i++)
        n_n += col->ref[i] == 'N';
    return n_n * 2 > i - col->pos;
}

/*
 * The distinct candidate lengths into col->types (ascending, REF among them).
 * Returns 0 when there is something to score, -1 when the column is skipped
 * (no candidate, too little support, too many candidates, N reference).
 */
static int find_types(mp_indel_col_t *col, mp_aux_t *bca, mp_indel_ws_t *ws)
{
    col->n_reads = 0;
    for (int s = 0; s < col->n; s++)
        col->n_reads += col->n_plp[s];
    int *sizes = mp_indel_reserve(ws->sizes, &ws->m_sizes, (size_t)col->n_reads + 1, sizeof(int));
    if (!sizes)
        return -1;
    ws->sizes = sizes;

    int m, support_ok = gather_sizes(col, bca, ws, &m);
    qsort(sizes, m, sizeof(int), cmp_int);
    int n_types = 1;
    for (int i = 1; i < m; i++)
        n_types += sizes[i] != sizes[i - 1];
    if (n_types == 1 || !support_ok)
        return -1;
    if (n_types >= MP_INDEL_MAX_TYPES) {
        hts_log_warning("%d indel lengths at position %d: too many, the site is skipped", n_types,
                        col->pos + 1);
        return -1;
    }
    if (mostly_n(col, bca->indel_win_size))
        return -1;

    col->n_types = 0;
    col->types[col->n_types++] = sizes[0];
    for (int i = 1; i < m; i++)
        if (sizes[i] != sizes[i - 1])
            col->types[col->n_types++] = sizes[i];
    /*
     * A negative seqQ (-o below -e, on an insertion dropped for holding N)
     * spills into the index bits of p->aux, and bcftools then reads types[]
     * past its end: heap bytes, sometimes 0 and sometimes not, so no choice
     * here matches it every time. The unused slots hold 0, which calls such
     * reads REF: what their best candidate (length 0) amounts to.
     */
    for (int t = col->n_types; t < MP_INDEL_MAX_TYPES; t++)
        col->types[t] = 0;
    for (col->ref_type = 0; col->ref_type < n_types; col->ref_type++)
        if (col->types[col->ref_type] == 0)
            break;
    return 0;
}

/*
 * indel_win_size either side of pos, widened by the longest deletion, cut at
 * the contig's end; loaded. 0, or -1 when it cannot be loaded.
 */
static int set_window(mp_indel_col_t *col, int win)
{
    int pos = col->pos, right = pos + win, i;
    col->left = pos > win ? pos - win : 0;
    if (col->types[0] < 0)
        right -= col->types[0];
    if (mp_ref_need(col->rs, col->left, (hts_pos_t)right + 1) < 0)
        return -1;
    for (i = pos; i < right; i++)
        if (col->ref[i] == 0)
            break;
    col->right = i;
    col->span = col->right - col->left + 1;
    return 0;
}

/* How far the candidate's sequence repeats to the right of pos (bca->indelreg); -1 when the
 * reference there could not be loaded. */
static int type_reg(const mp_indel_col_t *col, const mp_indel_ws_t *ws, int t)
{
    int len = col->types[t];
    if (len == 0)
        return 0;
    if (len > 0)
        return mp_indel_reg(col->pos, col->rs, len, &ws->ins_cons[t * col->max_ins]);
    return mp_indel_reg(col->pos, col->rs, -len, NULL);
}

static int reserve_scoring(const mp_indel_col_t *col, mp_indel_ws_t *ws, int hap_len)
{
    size_t n_query = (size_t)(col->right - col->left + col->max_rd_len + col->max_ins + 2);
    size_t n_score = (size_t)col->n_reads * col->n_types;
    void *p;
    if (!(p = mp_indel_reserve(ws->hap, &ws->m_hap, hap_len, 1)))
        return -1;
    ws->hap = p;
    if (!(p = mp_indel_reserve(ws->query, &ws->m_query, n_query, 1)))
        return -1;
    ws->query = p;
    if (!(p = mp_indel_reserve(ws->score, &ws->m_score, n_score, sizeof(int))))
        return -1;
    ws->score = p;
    /* Reads that are never aligned (unmapped, spliced) keep 0 for every candidate. */
    memset(ws->score, 0, n_score * sizeof(int));
    return 0;
}

/*
 * Every read against every candidate's haplotype, candidate by candidate
 * (the window's right end may shrink between haplotypes, as in bcftools).
 * Fills ws->score[read * n_types + t], bca->indelreg and, on the first
 * candidate, the indel position/mapQ/clip statistics. < 0 on failure.
 */
static int score_reads(mp_indel_col_t *col, mp_aux_t *bca, mp_indel_ws_t *ws)
{
    int longest = col->max_ins > -col->types[0] ? col->max_ins : -col->types[0];
    int hap_len = col->right - col->left + 2 + 2 * longest;
    if (reserve_scoring(col, ws, hap_len) < 0)
        return -1;

    bca->indelreg = 0;
    double mq_scale = bca->nqual / 60.0;
    for (int t = 0; t < col->n_types; t++) {
        int ir = type_reg(col, ws, t);
        if (ir < 0)
            return -1;
        if (ir > bca->indelreg)
            bca->indelreg = ir;
        for (int s = 0, k = 0; s < col->n; s++) {
            mp_indel_build_hap(col, ws, s, t, ws->hap, hap_len);
            for (int i = 0; i < col->n_plp[s]; i++, k++) {
                const bam_pileup1_t *p = col->plp[s] + i;
                if (t == 0)
                    mp_indel_read_stats(bca, p, mq_scale);
                int *sc = &ws->score[k * col->n_types + t];
                if (mp_indel_score_read(col, bca, ws, p, t, sc) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

int mp_gap_prep(int n, int *n_plp, bam_pileup1_t **plp, int pos, mp_aux_t *bca, mp_ref_t *ref)
{
    if (!ref || !ref->seq || !bca || !any_indel(n, n_plp, plp))
        return -1;
    mp_indel_ws_t *ws = workspace(bca);
    if (!ws)
        return -1;

    mp_indel_col_t col = {
        .n = n, .n_plp = n_plp, .plp = plp, .pos = pos, .ref = ref->seq, .rs = ref};
    if (find_types(&col, bca, ws) < 0)
        return -1;
    if (set_window(&col, bca->indel_win_size) < 0 || mp_indel_mask_ref(&col, ws) < 0)
        return -1;
    if ((col.l_run = mp_indel_l_run(ref, pos)) < 0)
        return -1;
    /* Taken before the consensus, which may turn an insertion holding N into a 0. */
    col.max_ins = col.types[col.n_types - 1];
    if (col.max_ins > 0 && mp_indel_ins_cons(&col, ws) < 0)
        return -1;
    if (score_reads(&col, bca, ws) < 0)
        return -1;

    int n_alt = mp_indel_assign(&col, bca, col.max_ins > 0 ? ws->ins_cons : NULL, ws->score);
    return n_alt > 0 ? 0 : -1;
}

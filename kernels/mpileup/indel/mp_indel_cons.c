/*
 * mp_indel_cons.c -- the sequences reads are aligned to at an indel column:
 * each sample's reference with its two most common mismatch sites masked,
 * the majority sequence of each insertion candidate, and from those one
 * haplotype per sample and candidate. Also the two reference measures the
 * qualities use: the homopolymer run and how far a candidate repeats.
 *
 * Codes: masked references hold 4-bit codes (seq_nt16_table, 15 = N);
 * haplotypes and insertion consensus hold 0-4 (A C G T N), as the aligner
 * takes them.
 */
#include <ctype.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mp_indel.h"

static int is_match_op(int op)
{
    return op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF;
}

/*
 * Adds one read's aligned bases inside [left, right) to tally: +1 where the
 * base equals the reference, +1 << 16 where it differs. Insertions are not in
 * reference coordinates, so they count nowhere.
 */
static void tally_read(const bam1_t *b, int left, int right, const char *ref4, uint32_t *tally)
{
    const uint32_t *cigar = bam_get_cigar(b);
    const uint8_t *seq = bam_get_seq(b);
    int x = b->core.pos, y = 0;

    for (uint32_t k = 0; k < b->core.n_cigar; k++) {
        int op = bam_cigar_op(cigar[k]), len = bam_cigar_oplen(cigar[k]);
        if (is_match_op(op)) {
            if (x + len >= left) {
                int j = left - x > 0 ? left - x : 0;
                int j_end = right - x < len ? right - x : len;
                for (; j < j_end; j++)
                    tally[x + j - left] +=
                        bam_seqi(seq, y + j) == ref4[x + j - left] ? 1 : 1u << 16;
            }
            x += len;
            y += len;
        } else if (op == BAM_CDEL || op == BAM_CREF_SKIP) {
            x += len;
        } else if (op == BAM_CINS || op == BAM_CSOFT_CLIP) {
            y += len;
        }
        if (x > right)
            break;
    }
}

/* Share of reads agreeing with the reference at a tallied site; 0/0 is NaN (never >= 0.7). */
static int mostly_ref(uint32_t t)
{
    return (double)(t & 0xffff) / ((t & 0xffff) + (t >> 16)) >= 0.7;
}

/*
 * Marks N at the two sites with the most differing reads (ties go to the later
 * site), unless 70% or more of their reads agree with the reference. Sites
 * nobody covers count as such a site, so an uncovered window end is masked
 * too: bcftools does the same.
 */
static void mask_top_two(const uint32_t *tally, int w, char *row)
{
    uint32_t top = 0, second = 0;
    int top_i = -1, second_i = -1;

    for (int i = 0; i < w; i++) {
        if (tally[i] >> 16 >= top >> 16) {
            second = top;
            second_i = top_i;
            top = tally[i];
            top_i = i;
        } else if (tally[i] >> 16 >= second >> 16) {
            second = tally[i];
            second_i = i;
        }
    }
    if (mostly_ref(top))
        top_i = -1;
    if (mostly_ref(second))
        second_i = -1;
    if (top_i >= 0)
        row[top_i] = 15;
    if (second_i >= 0)
        row[second_i] = 15;
}

static int reserve_mask(const mp_indel_col_t *col, mp_indel_ws_t *ws)
{
    size_t span = (size_t)col->span;
    void *p;
    if (!(p = mp_indel_reserve(ws->masked, &ws->m_masked, span * col->n, 1)))
        return -1;
    ws->masked = p;
    if (!(p = mp_indel_reserve(ws->ref4, &ws->m_ref4, span, 1)))
        return -1;
    ws->ref4 = p;
    if (!(p = mp_indel_reserve(ws->tally, &ws->m_tally, span, sizeof(uint32_t))))
        return -1;
    ws->tally = p;
    return 0;
}

/*
 * One row of ws->masked per sample: the window's reference, with the sites
 * where that sample's reads most often differ set to N, so a nearby SNP does
 * not count against every candidate. Returns 0, or -1 when out of memory.
 */
int mp_indel_mask_ref(const mp_indel_col_t *col, mp_indel_ws_t *ws)
{
    int left = col->left, right = col->right, w = right - left;
    if (reserve_mask(col, ws) < 0)
        return -1;

    memset(ws->ref4, 0, col->span);
    for (int i = 0; i < w; i++)
        ws->ref4[i] = seq_nt16_table[(unsigned char)col->ref[i + left]];
    for (int s = 0; s < col->n; s++) {
        char *row = ws->masked + (size_t)s * col->span;
        memset(ws->tally, 0, sizeof(uint32_t) * col->span);
        for (int i = 0; i < col->n_plp[s]; i++)
            tally_read(col->plp[s][i].b, left, right, ws->ref4, ws->tally);
        memcpy(row, ws->ref4, col->span);
        mask_top_two(ws->tally, w, row);
    }
    return 0;
}

/* Counts, per insertion candidate and inserted base, the reads' bases (0-4). */
static void vote_insertions(const mp_indel_col_t *col, int *votes)
{
    for (int t = 0; t < col->n_types; t++) {
        if (col->types[t] <= 0)
            continue;
        for (int s = 0; s < col->n; s++)
            for (int i = 0; i < col->n_plp[s]; i++) {
                const bam_pileup1_t *p = col->plp[s] + i;
                if (p->indel != col->types[t])
                    continue;
                const uint8_t *seq = bam_get_seq(p->b);
                for (int k = 1; k <= p->indel; k++) {
                    int c = seq_nt16_int[bam_seqi(seq, p->qpos + k)];
                    votes[(t * col->max_ins + k - 1) * 5 + c]++;
                }
            }
    }
}

/*
 * ws->ins_cons: each insertion candidate's bases by majority (first of equal
 * counts wins). A candidate whose majority base is N is dropped by turning
 * its length into 0, which later scores as the reference; bcftools does the
 * same. Returns 0, or -1 when out of memory.
 */
int mp_indel_ins_cons(mp_indel_col_t *col, mp_indel_ws_t *ws)
{
    size_t n_cons = (size_t)col->n_types * col->max_ins;
    void *p;
    if (!(p = mp_indel_reserve(ws->ins_votes, &ws->m_ins_votes, 5 * n_cons, sizeof(int))))
        return -1;
    ws->ins_votes = p;
    if (!(p = mp_indel_reserve(ws->ins_cons, &ws->m_ins_cons, n_cons, 1)))
        return -1;
    ws->ins_cons = p;
    memset(ws->ins_votes, 0, 5 * n_cons * sizeof(int));
    memset(ws->ins_cons, 0, n_cons);

    vote_insertions(col, ws->ins_votes);
    for (int t = 0; t < col->n_types; t++)
        for (int j = 0; j < col->types[t]; j++) {
            const int *v = &ws->ins_votes[(t * col->max_ins + j) * 5];
            int best = 0, best_c = -1;
            for (int c = 0; c < 5; c++)
                if (v[c] > best) {
                    best = v[c];
                    best_c = c;
                }
            ws->ins_cons[t * col->max_ins + j] = best ? best_c : 4;
            if (best_c == 4) {
                col->types[t] = 0;
                break;
            }
        }
    return 0;
}

/*
 * Length of the homopolymer run holding ref[pos + 1] (it may reach left past
 * pos); 1 when ref[pos + 1] is N or the contig's end. Tandem candidates in
 * long runs get a lower sequence quality (mp_indel_qual.c).
 */
int mp_indel_l_run(mp_ref_t *r, int pos)
{
    const char *ref = r->seq;
    if (mp_ref_need(r, pos, pos + 2) < 0)
        return -1;
    int c = seq_nt16_table[(unsigned char)ref[pos + 1]], i, right;
    if (c == 15)
        return 1;
    /* the run may reach past the loaded stretch either way: load on as the scan goes */
    for (i = pos + 2;; i++) {
        if (i >= r->hi && mp_ref_need(r, i, i + MP_REF_STEP) < 0)
            return -1;
        if (!ref[i] || seq_nt16_table[(unsigned char)ref[i]] != c)
            break;
    }
    right = i;
    for (i = pos; i >= 0; i--) {
        if (i < r->lo && mp_ref_need(r, i - MP_REF_STEP, i + 1) < 0)
            return -1;
        if (seq_nt16_table[(unsigned char)ref[i]] != c)
            break;
    }
    return right - (i + 1);
}

/*
 * How many bases right of pos the candidate can slide: the reference after
 * pos is scored against the candidate's sequence repeated (ins, codes 0-4,
 * for an insertion; NULL for a deletion of len bases, whose sequence is the
 * reference's own), +1 a match and -10 a mismatch, until the score falls
 * below 0; returns the offset of the best score (0 when none is positive),
 * or -1 when more of the reference could not be loaded.
 */
int mp_indel_reg(int pos, mp_ref_t *r, int len, const char *ins)
{
    const char *ref = r->seq;
    int best = 0, best_i = pos, score = 0;
    for (int i = pos + 1, j = 0;; i++, j++) {
        if (i >= r->hi && mp_ref_need(r, i, i + MP_REF_STEP) < 0)
            return -1; /* a repeat may run on past the loaded stretch */
        if (!ref[i])
            break;
        int want =
            ins ? "ACGTN"[(int)ins[j % len]] : toupper((unsigned char)ref[pos + 1 + j % len]);
        score += toupper((unsigned char)ref[i]) != want ? -10 : 1;
        if (score < 0)
            break;
        if (best < score) {
            best = score;
            best_i = i;
        }
    }
    return best_i - pos;
}

/*
 * Sample s's haplotype for candidate t into hap (codes 0-4): its masked
 * reference up to pos, then the inserted bases or a skip over the deleted
 * ones, then the rest of the window, padded with N to hap_len. Where the
 * window's rest runs short, col->right is pulled in to match (bcftools).
 */
void mp_indel_build_hap(mp_indel_col_t *col, const mp_indel_ws_t *ws, int s, int t, uint8_t *hap,
                        int hap_len)
{
    const char *row = ws->masked + (size_t)s * col->span;
    int left = col->left, type = col->types[t], k = 0, j;

    for (j = left; j <= col->pos; j++)
        hap[k++] = seq_nt16_int[(int)row[j - left]];
    if (type <= 0)
        j += -type;
    else
        for (int l = 0; l < type; l++)
            hap[k++] = ws->ins_cons[t * col->max_ins + l];
    for (; j < col->right && col->ref[j]; j++)
        hap[k++] = seq_nt16_int[(int)row[j - left]];
    for (; k < hap_len; k++)
        hap[k] = 4;
    if (col->right > j)
        col->right = j;
}

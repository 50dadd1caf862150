/*
 * rl_dp.c -- a read fitted to a haplotype with gaps: a banded, quality-weighted
 * alignment, global in the read and local in the haplotype.
 *
 * Costs are Phred-scaled, so they add to base qualities:
 *   mismatch      the read base's quality, as in the ungapped score (N: free);
 *   gap           RL_GAP_OPEN (40) for its first base, RL_GAP_EXT (5) for each
 *                 further one, for a gap the haplotype does not hold. 40: an
 *                 indel the candidates lack is rarer than 1 in 10^4 bases
 *                 (Illumina indel errors; a variant no read's CIGAR showed), so a
 *                 gap wins over two mismatches only when they are of quality 20
 *                 or more: the low-quality tail bases that bwa mem explains with
 *                 a 1 bp gap 3 bases from a read's end stay mismatches. It also
 *                 stays below 10 x RL_LOD, so one read's own indel can never
 *                 clean a window alone. 5: indel lengths fall off by about 0.3
 *                 a base (dwgsim's default, and Illumina data alike), -10 log10 0.3.
 *                 On the benchmark and on a second set (C. elegans, 2x100, another
 *                 indel profile) an open of 40-49 gives the same figures; 30 lets
 *                 tail gaps back in, 50 lets one read clean a window;
 *   clip          a soft-clipped end of the original alignment may stay clipped,
 *                 in part or whole, for RL_CLIP_CAP: a clipped end that fits the
 *                 haplotype is unclipped, one that does not (an adapter, a
 *                 chimera) costs what it costs in the ungapped score.
 * An alignment neither starts nor ends with an inserted base (that would be a
 * clip by another name).
 *
 * The band is RL_BAND (8) diagonals each side of the read's best ungapped
 * offset: the haplotype already holds the window's indels, so the band need
 * only hold the read's own, and 99.4% of the benchmark's true indels are 4 bp
 * or shorter, all 6 bp or shorter. Cells are visited row by row (one read base
 * a row); a row whose cheapest cell already costs more than the caller's bound
 * ends the search, since costs only add. Ties prefer a match, then a deletion,
 * then an insertion, the whole read aligned, then the leftmost end, so the
 * path is a function of the inputs alone.
 *
 * Scalar on purpose: the search runs only where an ungapped fit may not be the
 * best (rl_window.c), stops at the bound, and on the benchmark data all of it
 * adds about 1% to realign's CPU time (docs/benchmarks.md#realign), so vector
 * code would buy nothing measurable.
 *
 * Workspace: one per block (rl_block_t), grown to the longest read seen and
 * reused, so the search allocates nothing in steady state. One thread.
 */
#include <stdlib.h>
#include <string.h>

#include "realign.h"

#define W (2 * RL_BAND + 1) /* cells in a row */

/* Traceback bits of a cell: where H came from, and whether E and F extend. */
enum { TB_M = 0, TB_E = 1, TB_F = 2, TB_START = 3, TB_E_EXT = 4, TB_F_EXT = 8 };

struct rl_dp_s {
    uint8_t *tb; /* [(qlen + 1) * W] */
    uint8_t *code;
    int m_q;
};

rl_dp_t *rl_dp_init(void)
{
    return calloc(1, sizeof(rl_dp_t));
}

void rl_dp_destroy(rl_dp_t *dp)
{
    if (!dp)
        return;
    free(dp->tb);
    free(dp->code);
    free(dp);
}

static int dp_room(rl_dp_t *dp, int qlen)
{
    if (qlen <= dp->m_q)
        return 0;
    int m = qlen + 64;
    uint8_t *tb = realloc(dp->tb, (size_t)(m + 1) * W), *c = tb ? realloc(dp->code, (size_t)m) : 0;
    if (tb)
        dp->tb = tb;
    if (c)
        dp->code = c;
    if (!tb || !c)
        return -1;
    dp->m_q = m;
    return 0;
}

static inline int sub_cost(uint8_t rb, uint8_t hb, uint8_t q)
{
    return rb != hb && rb != 15 && hb != 15 ? q : 0;
}

/* The inputs of one search, and its running rows. */
typedef struct {
    const uint8_t *code, *qual, *hap;
    int qlen, hlen, lclip, rclip, j0; /* j0: hap index of diagonal 0 at read base 0 */
    int H[W], E[W], F[W], M[W];       /* M: the cell's cost ending in a match or mismatch */
} dp_run_t;

/* Row i (read bases [0, i) used) from row i - 1 in place; its cheapest H. */
static int dp_row(dp_run_t *r, uint8_t *tb, int i)
{
    int best = RL_DP_INF, e = RL_DP_INF, h_left = RL_DP_INF;
    uint8_t rb = r->code[i - 1], q = r->qual[i - 1];
    for (int d = 0; d < W; d++) {
        int j = r->j0 + i + d; /* hap bases used */
        int m = RL_DP_INF, f = RL_DP_INF, h;
        uint8_t t = 0;
        if (j >= 1 && j <= r->hlen && r->H[d] < RL_DP_INF)
            m = r->H[d] + sub_cost(rb, r->hap[j - 1], q);
        if (d + 1 < W && i > 1 && j >= 0 && j <= r->hlen) { /* read base i-1 against no hap
                                                               base, never the first */
            int open = r->H[d + 1] + RL_GAP_OPEN, ext = r->F[d + 1] + RL_GAP_EXT;
            f = ext < open ? ext : open;
            t |= ext < open ? TB_F_EXT : 0;
        }
        if (d > 0 && j >= 1 && j <= r->hlen) { /* hap base j-1 against no read base */
            int open = h_left + RL_GAP_OPEN, ext = e + RL_GAP_EXT;
            e = ext < open ? ext : open;
            t |= ext < open ? TB_E_EXT : 0;
        } else {
            e = RL_DP_INF;
        }
        h = m, t |= TB_M;
        if (e < h)
            h = e, t = (uint8_t)((t & ~3) | TB_E);
        if (f < h)
            h = f, t = (uint8_t)((t & ~3) | TB_F);
        if (i <= r->lclip && RL_CLIP_CAP < h && j >= 0 && j <= r->hlen) /* bases before: clipped */
            h = RL_CLIP_CAP, t = (uint8_t)((t & ~3) | TB_START);
        r->M[d] = m > RL_DP_INF ? RL_DP_INF : m;
        r->H[d] = h > RL_DP_INF ? RL_DP_INF : h;
        r->F[d] = f > RL_DP_INF ? RL_DP_INF : f;
        r->E[d] = e > RL_DP_INF ? RL_DP_INF : e;
        e = r->E[d];
        h_left = r->H[d];
        tb[d] = t;
        best = h < best ? h : best;
    }
    return best;
}

/* Row 0: the read starts anywhere in the band, free (local in the haplotype). */
static void dp_row0(dp_run_t *r, uint8_t *tb)
{
    for (int d = 0; d < W; d++) {
        int j = r->j0 + d;
        r->H[d] = j >= 0 && j <= r->hlen ? 0 : RL_DP_INF;
        r->E[d] = r->F[d] = RL_DP_INF;
        tb[d] = TB_START;
    }
}

/* Walk back from the match at (qlen - R, d) writing map[]: hap index per read base,
 * -1 inserted, -2 clipped. */
static void dp_trace(const dp_run_t *r, const uint8_t *tb, int i, int d, int *map)
{
    for (int x = i; x < r->qlen; x++)
        map[x] = -2;
    int state = 0, first = 1; /* 0: H, 1: in E, 2: in F */
    while (i > 0) {
        uint8_t t = tb[(size_t)i * W + d];
        if (state == 0) {
            int src = first ? TB_M : t & 3;
            first = 0;
            if (src == TB_START)
                break;
            if (src == TB_M) {
                map[i - 1] = r->j0 + i + d - 1;
                i--;
                continue;
            }
            state = src == TB_E ? 1 : 2;
        }
        if (state == 1) { /* hap base skipped: same row, one diagonal left */
            state = t & TB_E_EXT ? 1 : 0;
            d--;
        } else {
            map[i - 1] = -1;
            state = t & TB_F_EXT ? 2 : 0;
            i--, d++;
        }
    }
    for (int x = 0; x < i; x++)
        map[x] = -2;
}

int rl_dp_align(rl_dp_t *dp, const bam1_t *b, int lclip, int rclip, const uint8_t *hap, int hlen,
                int diag, int bound, int *map)
{
    int qlen = b->core.l_qseq;
    if (dp_room(dp, qlen) < 0)
        return -1;
    const uint8_t *s = bam_get_seq(b);
    for (int i = 0; i < qlen; i++)
        dp->code[i] = (uint8_t)bam_seqi(s, i);
    dp_run_t r = {.code = dp->code,
                  .qual = bam_get_qual(b),
                  .hap = hap,
                  .qlen = qlen,
                  .hlen = hlen,
                  .lclip = lclip,
                  .rclip = rclip,
                  .j0 = diag - RL_BAND};
    dp_row0(&r, dp->tb);
    int best = RL_DP_INF, bi = -1, bd = -1;
    for (int i = 1; i <= qlen; i++) {
        int row_min = dp_row(&r, dp->tb + (size_t)i * W, i);
        if (i >= lclip && row_min > bound)
            return RL_DP_INF; /* every path through this row costs more already */
        if (i < qlen - rclip)
            continue;
        /* the last aligned base matches something: a trailing insertion would be a clip
         * in disguise (the first aligned base is never inserted either) */
        int end_cost = i < qlen ? RL_CLIP_CAP : 0; /* the rest stays clipped */
        for (int d = 0; d < W; d++) /* ties: the whole read aligned, then the leftmost */
            if (r.M[d] + end_cost < best || (i == qlen && r.M[d] == best && bi < qlen))
                best = r.M[d] + end_cost, bi = i, bd = d;
    }
    if (bi < 0 || best > bound)
        return RL_DP_INF;
    if (map)
        dp_trace(&r, dp->tb, bi, bd, map);
    return best;
}

/*
 * rl_mismatch.c -- indels that only show as clusters of mismatches.
 *
 * Near a read's end a mapper often prefers mismatches to a gap: the bases
 * past an indel are aligned ungapped and disagree with the reference in a
 * cluster. When no read at a site holds the indel in its CIGAR (low depth, or
 * every read ends near it), the CIGARs give no candidate. Here a read whose
 * ungapped alignment has RL_MM_MIN good mismatches within RL_MM_SPAN bases is
 * tried with the part of it beyond a breakpoint shifted by up to RL_MM_SHIFT
 * bases either way (a deletion or an insertion there); the shift and
 * breakpoint that remove the most mismatch quality, by at least RL_MM_GAIN,
 * give the indel the read suggests. Ties break by total, then length,
 * deletions first, the read's right end first, then the leftmost breakpoint,
 * so the answer is a function of the read and the reference alone.
 */
#include <string.h>

#include "realign.h"

#define RL_MM_QUAL   20 /* mismatches below this base quality make no cluster */
#define RL_MM_MIN    3  /* mismatches that make a cluster ... */
#define RL_MM_SPAN   20 /* ... within this many bases */
#define RL_MM_SHIFT  20 /* longest indel looked for */
#define RL_MM_GAIN   60 /* mismatch quality the indel must remove: two gap costs */
#define RL_MM_ANCHOR 6  /* bases the shifted part keeps, at least */

/* One read's ungapped alignment: query [qb, qe) at reference pos + (q - qb). */
typedef struct {
    const bam1_t *b;
    const uint8_t *seq, *qual;
    const rl_ref_t *ref;
    hts_pos_t pos;
    int qb, qe;
} mm_read_t;

/* The best indel found so far and what ranks it. */
typedef struct {
    long total;
    int len, right, brk; /* len: > 0 deletion, < 0 insertion; right: the read's right end moved */
    rl_indel_t e;
    int found;
} mm_best_t;

/* What base q costs aligned at reference position p: its quality on a mismatch. */
static int cost(const mm_read_t *m, int q, hts_pos_t p)
{
    char rb = rl_ref_at(m->ref, p);
    int qb = bam_seqi(m->seq, q);
    if (rb == 'N' || qb == 15 || seq_nt16_table[(unsigned char)rb] == qb)
        return 0;
    return m->qual[q];
}

/* acc[i]: the cost of query [qb, qb + i) aligned with shift d, for i up to qe - qb. */
static void prefix_cost(const mm_read_t *m, int d, long *acc)
{
    acc[0] = 0;
    for (int q = m->qb; q < m->qe; q++)
        acc[q - m->qb + 1] = acc[q - m->qb] + cost(m, q, m->pos + (q - m->qb) + d);
}

/* The cost of query [from, to) from a prefix_cost array. */
static inline long span_cost(const mm_read_t *m, const long *acc, int from, int to)
{
    return acc[to - m->qb] - acc[from - m->qb];
}

/* Whether the ungapped alignment has a cluster; its first and last mismatch. */
static int find_cluster(const mm_read_t *m, int *first, int *last)
{
    int at[RL_MM_MIN], n = 0;
    for (int q = m->qb; q < m->qe; q++) {
        if (m->qual[q] < RL_MM_QUAL || !cost(m, q, m->pos + (q - m->qb)))
            continue;
        if (n == RL_MM_MIN)
            memmove(at, at + 1, (RL_MM_MIN - 1) * sizeof(*at)), n--;
        at[n++] = q;
        if (n == RL_MM_MIN && q - at[0] < RL_MM_SPAN) {
            *first = at[0], *last = q;
            return 1;
        }
    }
    return 0;
}

/* Whether shift d keeps query [from, to) on the block's reference. */
static int on_ref(const mm_read_t *m, int from, int to, int d)
{
    hts_pos_t lo = m->pos + (from - m->qb) + d, hi = m->pos + (to - 1 - m->qb) + d;
    return lo >= m->ref->beg && hi < m->ref->beg + m->ref->len;
}

static void offer(mm_best_t *best, long total, int len, int right, int brk)
{
    int alen = len < 0 ? -len : len, blen = best->len < 0 ? -best->len : best->len;
    if (best->found) {
        if (total != best->total) {
            if (total > best->total)
                return;
        } else if (alen != blen) {
            if (alen > blen)
                return;
        } else if ((len > 0) != (best->len > 0)) {
            if (len < 0)
                return;
        } else if (right != best->right) {
            if (!right)
                return;
        } else if (brk >= best->brk) {
            return;
        }
    }
    *best = (mm_best_t){total, len, right, brk, {0}, 1};
}

/* The right end moved by len (accd: prefix_cost at shift len): query from brk on
 * (after an insertion of -len, from brk - len). */
static void try_right(const mm_read_t *m, int first, int len, const long *acc0, const long *accd,
                      mm_best_t *best)
{
    int lo = first - RL_MM_SPAN > m->qb + RL_MM_ANCHOR ? first - RL_MM_SPAN : m->qb + RL_MM_ANCHOR;
    for (int brk = lo; brk <= first; brk++) {
        int from = len > 0 ? brk : brk - len; /* an insertion's bases are not aligned */
        if (m->qe - from < RL_MM_ANCHOR)
            continue;
        long t = span_cost(m, acc0, m->qb, brk) + span_cost(m, accd, from, m->qe);
        offer(best, t, len, 1, brk);
    }
}

/* The left end moved for an indel of len, shifted by -len either way (accd: prefix_cost
 * at shift -len): query before brk (before brk + len after an insertion of -len). */
static void try_left(const mm_read_t *m, int last, int len, const long *acc0, const long *accd,
                     mm_best_t *best)
{
    int hi = last + RL_MM_SPAN < m->qe - RL_MM_ANCHOR ? last + RL_MM_SPAN : m->qe - RL_MM_ANCHOR;
    for (int brk = last + 1; brk <= hi; brk++) {
        int to = len > 0 ? brk : brk + len;
        if (to - m->qb < RL_MM_ANCHOR)
            continue;
        long t = span_cost(m, accd, m->qb, to) + span_cost(m, acc0, brk, m->qe);
        offer(best, t, len, 0, brk);
    }
}

/* The indel the best shift stands for, in reference terms. */
static void best_indel(const mm_read_t *m, mm_best_t *best)
{
    rl_indel_t *e = &best->e;
    hts_pos_t at = m->pos + (best->brk - m->qb); /* the reference base the breakpoint faces */
    int L = best->len > 0 ? best->len : -best->len;
    memset(e, 0, sizeof(*e));
    if (best->len > 0) { /* deleted: after brk on the right, before it on the left */
        e->pos = best->right ? at : at - L;
        e->len = -L;
    } else { /* inserted: query [brk, brk+L) on the right, [brk-L, brk) on the left */
        int q0 = best->right ? best->brk : best->brk - L;
        e->pos = at;
        e->len = L;
        for (int j = 0; j < L; j++)
            e->seq[j] = seq_nt16_str[bam_seqi(m->seq, q0 + j)];
    }
    rl_indel_norm(e, m->ref);
}

/* A read aligned without indels (soft clips aside) and its ungapped span. */
static int ungapped(const rl_read_t *r, const rl_ref_t *ref, mm_read_t *m)
{
    const bam1_t *b = r->b;
    const uint32_t *c = bam_get_cigar(b);
    const uint8_t *nm = bam_aux_get(b, "NM");
    if (nm && bam_aux2i(nm) < RL_MM_MIN)
        return 0; /* the mapper counted fewer edits than a cluster needs: most reads */
    for (uint32_t i = 0; i < b->core.n_cigar; i++) {
        int op = bam_cigar_op(c[i]);
        if (op != BAM_CMATCH && op != BAM_CEQUAL && op != BAM_CDIFF && op != BAM_CSOFT_CLIP)
            return 0;
    }
    *m = (mm_read_t){b,      bam_get_seq(b), bam_get_qual(b),          ref,
                     r->pos, r->lclip,       b->core.l_qseq - r->rclip};
    return m->qe - m->qb >= 2 * RL_MM_ANCHOR && m->qual[0] != 0xff;
}

int rl_read_mm_indel(const rl_read_t *r, const rl_ref_t *ref, rl_indel_t *e)
{
    mm_read_t m;
    int first, last;
    if (!ungapped(r, ref, &m) || !find_cluster(&m, &first, &last))
        return 0;
    long acc0[RL_SPAN_MAX + 1], accd[RL_SPAN_MAX + 1];
    prefix_cost(&m, 0, acc0);
    long orig = span_cost(&m, acc0, m.qb, m.qe);
    mm_best_t best = {0};
    for (int d = -RL_MM_SHIFT; d <= RL_MM_SHIFT; d++) { /* each shift's costs once, both ends */
        if (!d || !on_ref(&m, m.qb, m.qe, d))
            continue;
        prefix_cost(&m, d, accd);
        try_right(&m, first, d, acc0, accd, &best);
        try_left(&m, last, -d, acc0, accd, &best);
    }
    if (!best.found || orig - best.total < RL_MM_GAIN)
        return 0;
    best_indel(&m, &best);
    *e = best.e;
    return 1;
}

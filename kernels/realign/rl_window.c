/*
 * rl_window.c -- deciding one window, as GATK3's IndelRealigner does it, with
 * reads fitted to haplotypes with gaps:
 *
 *   members     the eligible reads assigned to the window (rl_targets.c);
 *   candidates  the reference, then each distinct indel (normalised) that a
 *               member carries alone inside the window, each pair two members
 *               carry together, and each known indel there; ranked by how many
 *               members carry them, then by content (rl_indel_cmp), at most
 *               RL_MAX_HAPS kept: a total order, never arrival order;
 *   scores      a member's score on a haplotype is the sum of its mismatching
 *               base qualities at the best ungapped offset (soft-clipped ends
 *               add at most RL_CLIP_CAP each), or the cost of its best gapped
 *               fit there (rl_dp.c) when that is lower; the gapped fit is only
 *               searched when it could be lower: when both the ungapped score
 *               and the read's original score pass RL_GAP_OPEN (any gapped fit
 *               costs that much); elsewhere the ungapped fit is exact;
 *               its original score is that of its own alignment, the same gap
 *               costs for each indel in it;
 *   decision    a haplotype's total is the sum over members of min(its score,
 *               the original); the lowest total wins (ties: the higher rank);
 *               when (sum of originals - best total) / 10 >= RL_LOD the window is
 *               cleaned: the members scoring strictly better there take its
 *               alignment, if that moves POS at most --max-move. When it is not,
 *               members scoring strictly better on the reference than on their
 *               own alignment take that (an indel near a read's end that no
 *               haplotype holds, where the read's mismatches cost less).
 */
#include <stdlib.h>
#include <string.h>

#include "realign.h"

#define INF_SCORE (1 << 29)

static inline int clip_cap(int s)
{
    return s < RL_CLIP_CAP ? s : RL_CLIP_CAP;
}

/* A reference base as a 4-bit code, anything but A/C/G/T as N (15). */
static inline uint8_t ref_code(char c)
{
    uint8_t v = seq_nt16_table[(unsigned char)c];
    return v == 1 || v == 2 || v == 4 || v == 8 ? v : 15;
}

static inline int mismatch(uint8_t rb, uint8_t hb)
{
    return rb != hb && rb != 15 && hb != 15;
}

/* ---- members ---- */

static int collect_members(rl_block_t *k, int w)
{
    const rl_window_t *win = &k->win[w];
    int lo = 0, hi = k->n;
    while (lo < hi) { /* reads are in POS order; members start within a span of the window */
        int mid = lo + (hi - lo) / 2;
        if (k->reads[mid].pos < win->beg - RL_SPAN_MAX)
            lo = mid + 1;
        else
            hi = mid;
    }
    k->n_mem = 0;
    /* A member's clipped span overlaps the window, so its POS may lie past the
     * window's end by its left soft clip: a read clipped just after an indel. */
    for (int i = lo; i < k->n && k->reads[i].pos < win->end + RL_SPAN_MAX; i++) {
        if (k->reads[i].win != w)
            continue;
        if (k->n_mem == k->m_mem) {
            int m = k->m_mem ? 2 * k->m_mem : 256;
            int *p = realloc(k->members, (size_t)m * sizeof(*p));
            if (!p)
                return -1;
            k->members = p, k->m_mem = m;
        }
        k->members[k->n_mem++] = i;
    }
    return 0;
}

/* ---- candidates ---- */

static int cand_content_cmp(const rl_cand_t *a, const rl_cand_t *b)
{
    if (a->n != b->n)
        return a->n - b->n;
    for (int i = 0; i < a->n; i++) {
        int c = rl_indel_cmp(&a->ev[i], &b->ev[i]);
        if (c)
            return c;
    }
    return 0;
}

static int by_content(const void *pa, const void *pb)
{
    return cand_content_cmp(pa, pb);
}

static int by_rank(const void *pa, const void *pb)
{
    const rl_cand_t *a = pa, *b = pb;
    if (a->support != b->support)
        return a->support > b->support ? -1 : 1;
    return cand_content_cmp(a, b);
}

static int push_cand(rl_block_t *k, const rl_indel_t *e, int n, int support, int known)
{
    if (k->n_cand == k->m_cand) {
        int m = k->m_cand ? 2 * k->m_cand : 64;
        rl_cand_t *p = realloc(k->cand, (size_t)m * sizeof(*p));
        if (!p)
            return -1;
        k->cand = p, k->m_cand = m;
    }
    rl_cand_t *c = &k->cand[k->n_cand++];
    c->n = n, c->support = support, c->known = known;
    for (int i = 0; i < n; i++)
        c->ev[i] = e[i];
    return 0;
}

static int in_window(const rl_indel_t *e, const rl_window_t *w)
{
    hts_pos_t end = e->pos + (e->len < 0 ? -e->len : 1);
    return e->pos < w->end && end > w->beg && (e->len < 0 ? -e->len : e->len) <= RL_MAX_INDEL;
}

/* Two indels a haplotype can hold together: apart by a reference base at least. */
static int compatible(const rl_indel_t *a, const rl_indel_t *b)
{
    return b->pos > a->pos + (a->len < 0 ? -a->len : 0);
}

/* The indels members carry in the window, alone or in pairs. */
static int read_cands(rl_block_t *k, const rl_window_t *w, const rl_ref_t *ref)
{
    for (int m = 0; m < k->n_mem; m++) {
        rl_indel_t all[8], in[2];
        int n = rl_read_indels(&k->reads[k->members[m]], ref, all, 8), got = 0;
        for (int i = 0; i < n && i < 8; i++)
            if (in_window(&all[i], w)) {
                if (got < 2)
                    in[got] = all[i];
                got++;
            }
        const rl_read_t *r = &k->reads[k->members[m]];
        if (got == 0 && r->mm >= 0 && in_window(&k->mm[r->mm], w)) {
            in[0] = k->mm[r->mm]; /* an indel only its mismatches show */
            got = 1;
        }
        if (got == 1 && push_cand(k, in, 1, 1, 0) < 0)
            return -1;
        if (got == 2 && compatible(&in[0], &in[1]) && push_cand(k, in, 2, 1, 0) < 0)
            return -1;
    }
    return 0;
}

/* Candidates of the window, merged, ranked and cut to RL_MAX_HAPS. */
static int window_cands(rl_block_t *k, const rl_window_t *w, const rl_ref_t *ref)
{
    k->n_cand = 0;
    if (read_cands(k, w, ref) < 0)
        return -1;
    for (int i = 0; i < k->n_known; i++)
        if (in_window(&k->known[i], w) && push_cand(k, &k->known[i], 1, 0, 1) < 0)
            return -1;
    if (k->n_cand == 0)
        return 0; /* no candidate: the reference alone (and qsort may not get NULL) */
    qsort(k->cand, (size_t)k->n_cand, sizeof(*k->cand), by_content);
    int n = 0;
    for (int i = 0; i < k->n_cand; i++) {
        if (n > 0 && !cand_content_cmp(&k->cand[n - 1], &k->cand[i])) {
            k->cand[n - 1].support += k->cand[i].support;
            k->cand[n - 1].known |= k->cand[i].known;
        } else {
            k->cand[n++] = k->cand[i];
        }
    }
    qsort(k->cand, (size_t)n, sizeof(*k->cand), by_rank);
    k->n_cand = n < RL_MAX_HAPS ? n : RL_MAX_HAPS;
    return 0;
}

/* ---- haplotypes ---- */

static int hap_room(rl_block_t *k, hts_pos_t need)
{
    if (need <= k->m_hap)
        return 0;
    int m = (int)need + 256;
    char *h = realloc(k->hap, (size_t)m);
    hts_pos_t *r = realloc(k->hap_ref, (size_t)m * sizeof(*r));
    if (h)
        k->hap = h;
    if (r)
        k->hap_ref = r;
    if (!h || !r)
        return -1;
    k->m_hap = m;
    return 0;
}

static void hap_ref_run(rl_block_t *k, int *n, const rl_ref_t *ref, hts_pos_t from, hts_pos_t to)
{
    for (hts_pos_t p = from; p < to; p++) {
        k->hap[*n] = (char)ref_code(rl_ref_at(ref, p));
        k->hap_ref[(*n)++] = p;
    }
}

/*
 * Haplotype c (NULL: the reference) over [hs, he) into k->hap as 4-bit codes,
 * k->hap_ref the reference position of each base. Returns its length, 0 when
 * c does not fit inside [hs, he), -1 out of memory.
 */
static int build_hap(rl_block_t *k, const rl_cand_t *c, const rl_ref_t *ref, hts_pos_t hs,
                     hts_pos_t he)
{
    if (hap_room(k, he - hs + 2 * RL_MAX_INDEL + 2) < 0)
        return -1;
    int n = 0;
    hts_pos_t cur = hs;
    for (int i = 0; c && i < c->n; i++) {
        const rl_indel_t *e = &c->ev[i];
        hts_pos_t end = e->pos + (e->len < 0 ? -e->len : 0);
        if (e->pos <= cur || end >= he)
            return 0;
        hap_ref_run(k, &n, ref, cur, e->pos);
        for (int j = 0; j < e->len; j++) {
            k->hap[n] = (char)ref_code(e->seq[j]);
            k->hap_ref[n++] = -1;
        }
        cur = end;
    }
    hap_ref_run(k, &n, ref, cur, he);
    return n;
}

/* Where reference position r falls on haplotype c built from hs. */
static hts_pos_t hap_index(const rl_cand_t *c, hts_pos_t hs, hts_pos_t r)
{
    hts_pos_t idx = r - hs;
    for (int i = 0; c && i < c->n; i++) {
        const rl_indel_t *e = &c->ev[i];
        if (e->len > 0 && r >= e->pos)
            idx += e->len;
        else if (e->len < 0 && r >= e->pos - e->len)
            idx += e->len;
        else if (e->len < 0 && r >= e->pos)
            idx -= r - e->pos;
    }
    return idx;
}

/* ---- scores ---- */

/* Mismatching qualities of read bases [from, to) placed at hap[o + i]. */
static int run_score(const bam1_t *b, const uint8_t *hap, hts_pos_t o, int from, int to, int bound)
{
    const uint8_t *s = bam_get_seq(b), *q = bam_get_qual(b);
    int sum = 0;
    for (int i = from; i < to && sum <= bound; i++)
        if (mismatch(bam_seqi(s, i), hap[o + i]))
            sum += q[i];
    return sum;
}

static int score_at(const rl_read_t *r, const uint8_t *hap, hts_pos_t o, int bound)
{
    int qlen = r->b->core.l_qseq;
    int sum = run_score(r->b, hap, o, r->lclip, qlen - r->rclip, bound);
    if (sum > bound)
        return sum;
    sum += clip_cap(run_score(r->b, hap, o, 0, r->lclip, RL_CLIP_CAP));
    if (sum > bound)
        return sum;
    return sum + clip_cap(run_score(r->b, hap, o, qlen - r->rclip, qlen, RL_CLIP_CAP));
}

/* The best ungapped offset of r on haplotype c (length hlen): score, offset in *off. */
static int best_offset(const rl_block_t *k, const rl_read_t *r, const rl_cand_t *c, hts_pos_t hs,
                       int hlen, int *off)
{
    int qlen = r->b->core.l_qseq, slack = 4;
    for (int i = 0; c && i < c->n; i++)
        slack += c->ev[i].len < 0 ? -c->ev[i].len : c->ev[i].len;
    hts_pos_t a1 = hap_index(c, hs, r->ustart), a2 = hap_index(c, hs, r->uend) - qlen;
    hts_pos_t lo = (a1 < a2 ? a1 : a2) - slack, hi = (a1 > a2 ? a1 : a2) + slack;
    if (lo < 0)
        lo = 0;
    if (hi > hlen - qlen)
        hi = hlen - qlen;
    int best = INF_SCORE;
    hts_pos_t bo = -1;
    for (hts_pos_t o = lo; o <= hi; o++) {
        int s = score_at(r, (const uint8_t *)k->hap, o, best);
        hts_pos_t d = o > a1 ? o - a1 : a1 - o, bd = bo > a1 ? bo - a1 : a1 - bo;
        if (s < best || (s == best && d < bd))
            best = s, bo = o;
    }
    *off = (int)bo;
    return best;
}

/* The score of r's own alignment: mismatches, the gap costs of each indel, capped clips. */
static int orig_score(const rl_read_t *r, const rl_ref_t *ref)
{
    const bam1_t *b = r->b;
    const uint32_t *c = bam_get_cigar(b);
    const uint8_t *s = bam_get_seq(b), *q = bam_get_qual(b);
    hts_pos_t rp = r->pos;
    int qp = 0, sum = 0, ls = 0, rs = 0;
    for (int i = 0; i < r->lclip; i++)
        if (mismatch(bam_seqi(s, i), ref_code(rl_ref_at(ref, r->ustart + i))))
            ls += q[i];
    for (uint32_t i = 0; i < b->core.n_cigar; i++) {
        int op = bam_cigar_op(c[i]), len = (int)bam_cigar_oplen(c[i]);
        if (op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF)
            for (int j = 0; j < len; j++)
                if (mismatch(bam_seqi(s, qp + j), ref_code(rl_ref_at(ref, rp + j))))
                    sum += q[qp + j];
        if (op == BAM_CINS || op == BAM_CDEL)
            sum += RL_GAP_OPEN + (len - 1) * RL_GAP_EXT;
        if (op != BAM_CSOFT_CLIP && (bam_cigar_type(op) & 1))
            qp += len;
        if (bam_cigar_type(op) & 2)
            rp += len;
    }
    int qlen = b->core.l_qseq;
    for (int i = 0; i < r->rclip; i++)
        if (mismatch(bam_seqi(s, qlen - r->rclip + i), ref_code(rl_ref_at(ref, r->end + i))))
            rs += q[qlen - r->rclip + i];
    return sum + clip_cap(ls) + clip_cap(rs);
}

static int score_room(rl_block_t *k, size_t need)
{
    if (need <= k->m_score)
        return 0;
    int *s = realloc(k->score, need * sizeof(*s)),
        *o = s ? realloc(k->off, need * sizeof(*o)) : NULL;
    uint8_t *g = o ? realloc(k->gapped, need) : NULL;
    if (s)
        k->score = s;
    if (o)
        k->off = o;
    if (g)
        k->gapped = g;
    if (!s || !o || !g)
        return -1;
    k->m_score = need;
    return 0;
}

/* The reference span every member's haplotype must cover, with room for the indels. */
static void hap_span(const rl_block_t *k, const rl_ref_t *ref, hts_pos_t *hs, hts_pos_t *he)
{
    hts_pos_t lo = HTS_POS_MAX, hi = 0;
    for (int m = 0; m < k->n_mem; m++) {
        const rl_read_t *r = &k->reads[k->members[m]];
        lo = r->ustart < lo ? r->ustart : lo;
        hi = r->uend > hi ? r->uend : hi;
    }
    lo -= RL_MAX_INDEL + 8, hi += RL_MAX_INDEL + 8;
    *hs = lo > ref->beg ? lo : ref->beg;
    *he = hi < ref->beg + ref->len ? hi : ref->beg + ref->len;
}

/* Member m's gapped fit on the haplotype in k->hap when it may beat the ungapped one. */
static int gapped_fit(rl_block_t *k, int m, int hlen, size_t at)
{
    const rl_read_t *r = &k->reads[k->members[m]];
    int bound = k->score[at] < r->orig_score ? k->score[at] : r->orig_score;
    k->gapped[at] = 0;
    if (bound <= RL_GAP_OPEN)
        return 0; /* no gapped fit costs less than a gap: the ungapped one is exact */
    int s = rl_dp_align(k->dp, r->b, r->lclip, r->rclip, (const uint8_t *)k->hap, hlen, k->off[at],
                        bound - 1, NULL);
    if (s < 0)
        return -1;
    if (s < k->score[at])
        k->score[at] = s, k->gapped[at] = 1;
    return 0;
}

/* Score every member on every haplotype: k->score/off/gapped [m * (n_cand + 1) + h]. */
static int score_all(rl_block_t *k, const rl_ref_t *ref, hts_pos_t hs, hts_pos_t he)
{
    int H = k->n_cand + 1;
    if (score_room(k, (size_t)k->n_mem * H) < 0)
        return -1;
    for (int h = 0; h < H; h++) {
        const rl_cand_t *c = h ? &k->cand[h - 1] : NULL;
        int hlen = build_hap(k, c, ref, hs, he);
        if (hlen < 0)
            return -1;
        for (int m = 0; m < k->n_mem; m++) {
            size_t at = (size_t)m * H + h;
            k->gapped[at] = 0;
            if (!hlen) {
                k->score[at] = INF_SCORE;
                continue;
            }
            k->score[at] = best_offset(k, &k->reads[k->members[m]], c, hs, hlen, &k->off[at]);
            if (gapped_fit(k, m, hlen, at) < 0)
                return -1;
        }
    }
    return 0;
}

/* ---- the realigned alignment ---- */

static int cig_push(rl_block_t *k, int *n, int op, int len)
{
    if (len <= 0)
        return 0;
    if (*n > 0 && bam_cigar_op(k->tmp_cig[*n - 1]) == (uint32_t)op) {
        k->tmp_cig[*n - 1] += (uint32_t)len << BAM_CIGAR_SHIFT;
        return 0;
    }
    if (*n == k->m_tmp_cig) {
        int m = k->m_tmp_cig ? 2 * k->m_tmp_cig : 64;
        uint32_t *p = realloc(k->tmp_cig, (size_t)m * sizeof(*p));
        if (!p)
            return -1;
        k->tmp_cig = p, k->m_tmp_cig = m;
    }
    k->tmp_cig[(*n)++] = bam_cigar_gen(len, op);
    return 0;
}

/*
 * An insertion next to a deletion in k->tmp_cig (a read base the haplotype lacks
 * where it lacks a reference base: a read from the other haplotype of a
 * heterozygous indel, fitted to this one) is a substitution: the shorter of the
 * two becomes M, the rest stays. Returns the new length, -1 out of memory.
 */
static int merge_indel_pairs(rl_block_t *k, int n)
{
    int out = 0;
    for (int i = 0; i < n; i++) {
        uint32_t c = k->tmp_cig[i];
        if (out > 0) {
            int pop = bam_cigar_op(k->tmp_cig[out - 1]), op = bam_cigar_op(c);
            if ((pop == BAM_CINS && op == BAM_CDEL) || (pop == BAM_CDEL && op == BAM_CINS)) {
                int a = (int)bam_cigar_oplen(k->tmp_cig[out - 1]), b = (int)bam_cigar_oplen(c);
                int m = a < b ? a : b;
                out--;
                if (cig_push(k, &out, BAM_CMATCH, m) < 0 ||
                    cig_push(k, &out, a > b ? pop : op, a > b ? a - b : b - a) < 0)
                    return -1;
                continue;
            }
        }
        if (cig_push(k, &out, bam_cigar_op(c), (int)bam_cigar_oplen(c)) < 0)
            return -1;
    }
    return out;
}

/* The reference position read base i is aligned to (map: rl_dp_align's), -1 inserted. */
static inline hts_pos_t ref_of(const rl_block_t *k, int i)
{
    return k->map[i] < 0 ? -1 : k->hap_ref[k->map[i]];
}

/*
 * The CIGAR of read bases [L, qlen - R), placed on the haplotype in k->hap by
 * k->map (soft clips around them; an insertion at either end joins the clip),
 * into k->tmp_cig. Returns its length (0: nothing aligned), -1 out of memory.
 */
static int hap_cigar(rl_block_t *k, int qlen, int L, int R, hts_pos_t *pos)
{
    while (L < qlen - R && ref_of(k, L) < 0)
        L++;
    while (qlen - R > L && ref_of(k, qlen - R - 1) < 0)
        R++;
    if (L >= qlen - R)
        return 0;
    int n = 0;
    hts_pos_t prev = -1;
    if (cig_push(k, &n, BAM_CSOFT_CLIP, L) < 0)
        return -1;
    for (int i = L; i < qlen - R; i++) {
        hts_pos_t hr = ref_of(k, i);
        if (hr >= 0 && prev >= 0 && hr != prev + 1 &&
            cig_push(k, &n, BAM_CDEL, (int)(hr - prev - 1)) < 0)
            return -1;
        if (cig_push(k, &n, hr < 0 ? BAM_CINS : BAM_CMATCH, 1) < 0)
            return -1;
        if (hr >= 0)
            prev = hr;
    }
    if (cig_push(k, &n, BAM_CSOFT_CLIP, R) < 0)
        return -1;
    *pos = ref_of(k, L);
    return merge_indel_pairs(k, n);
}

static int map_room(rl_block_t *k, int qlen)
{
    if (qlen <= k->m_map)
        return 0;
    int *p = realloc(k->map, (size_t)(qlen + 64) * sizeof(*p));
    if (!p)
        return -1;
    k->map = p, k->m_map = qlen + 64;
    return 0;
}

/* The ungapped fit at offset o into k->map: a clipped end that matches the haplotype
 * (costs under RL_CLIP_CAP) unclipped, as bwa mem clips near indels. */
static void ungapped_map(rl_block_t *k, const rl_read_t *r, hts_pos_t o)
{
    int qlen = r->b->core.l_qseq;
    const uint8_t *hap = (const uint8_t *)k->hap;
    int L =
        r->lclip && run_score(r->b, hap, o, 0, r->lclip, RL_CLIP_CAP) >= RL_CLIP_CAP ? r->lclip : 0;
    int R = r->rclip && run_score(r->b, hap, o, qlen - r->rclip, qlen, RL_CLIP_CAP) >= RL_CLIP_CAP
                ? r->rclip
                : 0;
    for (int i = 0; i < qlen; i++)
        k->map[i] = i < L || i >= qlen - R ? -2 : (int)(o + i);
}

static int same_alignment(const bam1_t *b, hts_pos_t pos, const uint32_t *cig, int n)
{
    return b->core.pos == pos && (int)b->core.n_cigar == n &&
           !memcmp(bam_get_cigar(b), cig, (size_t)n * sizeof(*cig));
}

static int arena_keep(rl_block_t *k, int n)
{
    if (k->n_cig + n > k->m_cig) {
        int m = k->m_cig ? 2 * k->m_cig : 4096;
        while (m < k->n_cig + n)
            m *= 2;
        uint32_t *p = realloc(k->cig, (size_t)m * sizeof(*p));
        if (!p)
            return -1;
        k->cig = p, k->m_cig = m;
    }
    if (n > 0) /* memcpy may not be given the arena before its first allocation */
        memcpy(k->cig + k->n_cig, k->tmp_cig, (size_t)n * sizeof(*k->tmp_cig));
    k->n_cig += n;
    return k->n_cig - n;
}

/* Give member i its fit on the haplotype in k->hap (length hlen): the ungapped one at
 * offset o, or the gapped one from there; 1 if it moved. */
static int realign_read(rl_block_t *k, int i, int hlen, hts_pos_t o, int gapped,
                        const rl_opts_t *opt, const rl_ref_t *ref, rl_counts_t *counts)
{
    rl_read_t *r = &k->reads[i];
    int qlen = r->b->core.l_qseq, L = 0, R = 0;
    if (map_room(k, qlen) < 0)
        return -1;
    if (!gapped)
        ungapped_map(k, r, o);
    else if (rl_dp_align(k->dp, r->b, r->lclip, r->rclip, (const uint8_t *)k->hap, hlen, (int)o,
                         RL_DP_INF - 1, k->map) < 0)
        return -1;
    while (L < qlen && k->map[L] == -2)
        L++;
    while (R < qlen - L && k->map[qlen - 1 - R] == -2)
        R++;
    hts_pos_t pos;
    int n = hap_cigar(k, qlen, L, R, &pos);
    if (n <= 0)
        return n;
    hts_pos_t d = pos > r->pos ? pos - r->pos : r->pos - pos;
    if (d > opt->max_move || same_alignment(r->b, pos, k->tmp_cig, n))
        return 0;
    int at = arena_keep(k, n);
    if (at < 0)
        return -1;
    r->moved = 1, r->new_pos = pos, r->cig_off = at, r->n_cig = n;
    counts->realigned++;
    counts->unclipped += (L < r->lclip) + (R < r->rclip);
    return rl_rewrite_read(k, i, ref) < 0 ? -1 : 1;
}

/* The haplotype with the lowest total (ties: the lower index); its total in *best. */
static int pick_hap(const rl_block_t *k, long *best)
{
    int H = k->n_cand + 1, pick = 0;
    *best = -1;
    for (int h = 0; h < H; h++) {
        long t = 0;
        for (int m = 0; m < k->n_mem; m++) {
            int s = k->score[(size_t)m * H + h], os = k->reads[k->members[m]].orig_score;
            t += s < os ? s : os;
        }
        if (*best < 0 || t < *best)
            *best = t, pick = h;
    }
    return pick;
}

/* Members scoring strictly better on haplotype h than on their own alignment take it. */
static int realign_members(rl_block_t *k, int h, const rl_opts_t *o, const rl_ref_t *ref,
                           hts_pos_t hs, hts_pos_t he, rl_counts_t *counts)
{
    int H = k->n_cand + 1, hlen = build_hap(k, h ? &k->cand[h - 1] : NULL, ref, hs, he);
    if (hlen <= 0)
        return hlen < 0 ? -1 : 0;
    for (int m = 0; m < k->n_mem; m++) {
        size_t at = (size_t)m * H + h;
        int i = k->members[m];
        if (k->score[at] < k->reads[i].orig_score &&
            realign_read(k, i, hlen, k->off[at], k->gapped[at], o, ref, counts) < 0)
            return -1;
    }
    return 0;
}

int rl_decide_window(rl_block_t *k, int w, const rl_opts_t *o, const rl_ref_t *ref,
                     rl_counts_t *counts)
{
    rl_window_t *win = &k->win[w];
    if (win->skipped) {
        counts->skipped = 1;
        return 0;
    }
    if (collect_members(k, w) < 0 || window_cands(k, win, ref) < 0)
        return -1;
    if (k->n_mem == 0)
        return 0;
    hts_pos_t hs, he;
    hap_span(k, ref, &hs, &he);
    long total_orig = 0, best;
    for (int m = 0; m < k->n_mem; m++) {
        rl_read_t *r = &k->reads[k->members[m]];
        r->orig_score = orig_score(r, ref);
        total_orig += r->orig_score;
    }
    if (score_all(k, ref, hs, he) < 0)
        return -1;
    int h = pick_hap(k, &best);
    if ((total_orig - best) < 10L * RL_LOD)
        return realign_members(k, 0, o, ref, hs, he, counts); /* the reference stays */
    win->cleaned = 1;
    counts->cleaned = 1;
    return realign_members(k, h, o, ref, hs, he, counts);
}

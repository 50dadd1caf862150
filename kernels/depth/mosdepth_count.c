/*
 * mosdepth_count.c -- the depth of a range of one contig as mosdepth 0.3.3
 * counts it, from the reads an index query for the range returns.
 *
 * A read counts unless MAPQ < -Q, a flag of -F is set, or -i is given and
 * none of its flags is. Default mode: +1 over each M/=/X block (D and N are
 * gaps); for a proper pair that is not supplementary, on one contig, the
 * positions both mates cover count once. The mate that comes first in the
 * file is remembered by name while its pair may still overlap it (its end
 * passes the mate's POS; at equal POS the first of the two); the second then
 * takes it and subtracts where their blocks intersect. -x: +1 from POS to
 * the alignment's end (bam_endpos), no correction.
 *
 * mosdepth keeps one name table per contig; a range keeps its own. The two
 * agree inside the range: when both mates cover a position of the range,
 * both overlap the range, so the query returns both.
 *
 * Not mosdepth's: when both mates have a single-operation CIGAR it subtracts
 * from the second mate's POS to the first mate's end, too far when the second
 * ends first (a contained mate). Here every pair subtracts the intersection.
 */
#include <stdlib.h>
#include <string.h>

#include <htslib/khash.h>

#include "mosdepth.h"

/* A remembered first mate: its blocks and name, in one allocation. */
typedef struct {
    int n;
    hts_pos_t *blk; /* [2 * n]: beg, end of each block, in order */
    char name[];
} mate_t;

KHASH_MAP_INIT_STR(md_mate, mate_t *)

struct md_counter_s {
    const md_opts_t *o;
    khash_t(md_mate) *seen;
    bam1_t *b;
    int32_t *diff;  /* [cap + 1] */
    size_t cap;
    hts_pos_t *blk; /* the current read's blocks */
    int m_blk;
};

md_counter_t *md_counter_init(const md_opts_t *o)
{
    md_counter_t *c = ss_alloc_private(sizeof(*c));
    if (!c)
        return NULL;
    c->o = o;
    if (!(c->seen = kh_init(md_mate)) || !(c->b = ss_bam_private())) {
        md_counter_destroy(c);
        return NULL;
    }
    return c;
}

static void forget_all(md_counter_t *c)
{
    for (khint_t k = kh_begin(c->seen); k < kh_end(c->seen); k++)
        if (kh_exist(c->seen, k))
            free(kh_val(c->seen, k));
    kh_clear(md_mate, c->seen);
}

void md_counter_destroy(md_counter_t *c)
{
    if (!c)
        return;
    if (c->seen) {
        forget_all(c);
        kh_destroy(md_mate, c->seen);
    }
    if (c->b)
        bam_destroy1(c->b);
    free(c->diff);
    free(c->blk);
    free(c);
}

static int passes(const md_opts_t *o, const bam1_t *b)
{
    if (b->core.qual < o->mapq || (b->core.flag & o->eflag))
        return 0;
    return !o->iflag || (b->core.flag & o->iflag);
}

/* The read's M/=/X blocks into c->blk, adjacent ones joined; their count, or -1. */
static int blocks(md_counter_t *c, const bam1_t *b)
{
    const uint32_t *cig = bam_get_cigar(b);
    hts_pos_t pos = b->core.pos;
    int n = 0;
    for (uint32_t k = 0; k < b->core.n_cigar; k++) {
        int t = bam_cigar_type(bam_cigar_op(cig[k]));
        hts_pos_t len = bam_cigar_oplen(cig[k]);
        if (!(t & 2))
            continue; /* consumes no reference */
        if (t & 1) {  /* query and reference: M, =, X */
            if (n && c->blk[2 * n - 1] == pos) {
                c->blk[2 * n - 1] = pos + len;
            } else {
                if (n == c->m_blk) {
                    int m = c->m_blk ? 2 * c->m_blk : 16;
                    hts_pos_t *p = realloc(c->blk, 2 * (size_t)m * sizeof(*p));
                    if (!p)
                        return -1;
                    c->blk = p, c->m_blk = m;
                }
                c->blk[2 * n] = pos, c->blk[2 * n + 1] = pos + len;
                n++;
            }
        }
        pos += len;
    }
    return n;
}

/* diff over [beg, end) of the range [lo, hi): +v at the start, -v after the end. */
static inline void add(int32_t *diff, hts_pos_t lo, hts_pos_t hi, hts_pos_t beg, hts_pos_t end,
                       int v)
{
    if (beg < lo)
        beg = lo;
    if (end > hi)
        end = hi;
    if (beg >= end)
        return;
    diff[beg - lo] += v;
    diff[end - lo] -= v;
}

/* Remember the first mate of a pair that may overlap its second. 0, or -1 out of memory. */
static int remember(md_counter_t *c, const bam1_t *b, int n)
{
    const char *qn = bam_get_qname(b);
    size_t len = strlen(qn);
    mate_t *m = malloc(sizeof(*m) + len + 1 + 2 * (size_t)n * sizeof(hts_pos_t) + 8);
    if (!m)
        return -1;
    memcpy(m->name, qn, len + 1);
    /* blocks after the name, aligned */
    uintptr_t at = ((uintptr_t)(m->name + len + 1) + 7) & ~(uintptr_t)7;
    m->blk = (hts_pos_t *)at;
    m->n = n;
    memcpy(m->blk, c->blk, 2 * (size_t)n * sizeof(hts_pos_t));
    int absent;
    khint_t k = kh_put(md_mate, c->seen, m->name, &absent);
    if (absent < 0) {
        free(m);
        return -1;
    }
    if (!absent) { /* a name seen twice: mosdepth's table keeps the later record */
        free(kh_val(c->seen, k));
        kh_key(c->seen, k) = m->name;
    }
    kh_val(c->seen, k) = m;
    return 0;
}

/* Subtract where the second mate's blocks (c->blk, n) meet the first's. */
static void subtract_overlap(md_counter_t *c, int n, const mate_t *m, hts_pos_t lo, hts_pos_t hi)
{
    int i = 0, j = 0;
    while (i < n && j < m->n) {
        hts_pos_t b0 = c->blk[2 * i], e0 = c->blk[2 * i + 1];
        hts_pos_t b1 = m->blk[2 * j], e1 = m->blk[2 * j + 1];
        hts_pos_t s = b0 > b1 ? b0 : b1, e = e0 < e1 ? e0 : e1;
        if (s < e)
            add(c->diff, lo, hi, s, e, -1);
        if (e0 < e1)
            i++;
        else
            j++;
    }
}

/* Default mode: one read's blocks, with the mate-overlap rule. 0, or -1 out of memory. */
static int count_blocks(md_counter_t *c, const bam1_t *b, hts_pos_t lo, hts_pos_t hi)
{
    int n = blocks(c, b);
    if (n < 0)
        return -1;
    const bam1_core_t *k = &b->core;
    if ((k->flag & BAM_FPROPER_PAIR) && !(k->flag & BAM_FSUPPLEMENTARY)) {
        hts_pos_t stop = bam_endpos(b);
        khint_t it = kh_get(md_mate, c->seen, bam_get_qname(b));
        int have = it != kh_end(c->seen);
        if (k->tid == k->mtid && stop > k->mpos && (k->pos < k->mpos || (k->pos == k->mpos && !have))) {
            if (remember(c, b, n) < 0)
                return -1;
        } else if (have) {
            mate_t *m = kh_val(c->seen, it);
            kh_del(md_mate, c->seen, it);
            subtract_overlap(c, n, m, lo, hi);
            free(m);
        }
    }
    for (int i = 0; i < n; i++)
        add(c->diff, lo, hi, c->blk[2 * i], c->blk[2 * i + 1], 1);
    return 0;
}

static int make_room(md_counter_t *c, size_t len)
{
    if (len <= c->cap)
        return 0;
    size_t cap = c->cap ? c->cap : 4096;
    while (cap < len)
        cap *= 2;
    free(c->diff);
    /* written per read: private cache lines */
    if (!(c->diff = ss_alloc_private((cap + 1) * sizeof(*c->diff)))) {
        c->cap = 0;
        return -1;
    }
    c->cap = cap;
    return 0;
}

const int32_t *md_count(md_counter_t *c, ss_source_t *src, int tid, hts_pos_t beg,
                        hts_pos_t end, uint64_t *reads, int shard)
{
    size_t len = (size_t)(end - beg);
    if (make_room(c, len) < 0) {
        ss_error("out of memory counting depth in shard %d", shard);
        return NULL;
    }
    memset(c->diff, 0, (len + 1) * sizeof(*c->diff));
    forget_all(c);
    if (ss_source_query(src, tid, beg, end) < 0)
        return NULL;
    int r;
    hts_pos_t last = -1;
    while ((r = ss_source_next(src, c->b)) >= 0) {
        const bam1_t *b = c->b;
        (*reads)++;
        if (b->core.pos < last) {
            ss_error("%s: reads out of order in shard %d: the input is not coordinate-sorted; "
                     "sort it with samtools sort and index it again", src->name, shard);
            return NULL;
        }
        last = b->core.pos;
        if (!passes(c->o, b))
            continue;
        if (c->o->fast)
            add(c->diff, beg, end, b->core.pos, bam_endpos(b), 1);
        else if (count_blocks(c, b, beg, end) < 0) {
            ss_error("out of memory counting depth in shard %d", shard);
            return NULL;
        }
    }
    if (r < -1)
        return NULL;
    int32_t d = 0;
    for (size_t i = 0; i < len; i++) {
        d += c->diff[i];
        c->diff[i] = d;
    }
    return c->diff;
}

/*
 * mosdepth_count.c -- the depth along one contig as mosdepth 0.3.3 counts it,
 * from one index query that a shard reads as far as its walk needs.
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
 * mosdepth keeps one name table per contig; a shard keeps its own, from its
 * first position on. The two agree on every position the shard reads: when
 * both mates cover a position, both overlap it, so the query returns both.
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

KHASH_MAP_INIT_STR(mos_mate, mate_t *)

/*
 * The stream: one query from the walk's start to the contig's end, read as far as the
 * walk asks. diff[i] is the change of depth at base + i, for [base, base + cap]; reads
 * are added once their POS is below the end of the range asked for, the one read past it
 * waits in b (pending); carry is the depth at base - 1.
 */
struct mos_counter_s {
    const mos_opts_t *o;
    khash_t(mos_mate) * seen;
    bam1_t *b;
    int pending, done;
    ss_source_t *src;
    int tid, shard;
    hts_pos_t base, clen, used; /* used: diff is zero from base + used on */
    int32_t carry;
    int32_t *diff; /* [cap + 1] */
    int32_t *out;  /* [out_cap] the depths handed out */
    size_t cap, out_cap;
    hts_pos_t *blk; /* the current read's blocks */
    int m_blk;
    hts_pos_t last; /* POS of the read before, for the order check */
    int read_err;   /* the source's read error, not yet reported (mos_count_read_error) */
};

mos_counter_t *mos_counter_init(const mos_opts_t *o)
{
    mos_counter_t *c = ss_alloc_private(sizeof(*c));
    if (!c)
        return NULL;
    c->o = o;
    if (!(c->seen = kh_init(mos_mate)) || !(c->b = ss_bam_private())) {
        mos_counter_destroy(c);
        return NULL;
    }
    return c;
}

static void forget_all(mos_counter_t *c)
{
    for (khint_t k = kh_begin(c->seen); k < kh_end(c->seen); k++)
        if (kh_exist(c->seen, k))
            free(kh_val(c->seen, k));
    kh_clear(mos_mate, c->seen);
}

void mos_counter_destroy(mos_counter_t *c)
{
    if (!c)
        return;
    if (c->seen) {
        forget_all(c);
        kh_destroy(mos_mate, c->seen);
    }
    if (c->b)
        bam_destroy1(c->b);
    free(c->diff);
    free(c->out);
    free(c->blk);
    free(c);
}

/* -R: the read's RG is one of the IDs (a read without RG is not). */
static int in_read_groups(const mos_opts_t *o, const bam1_t *b)
{
    const uint8_t *rg = bam_aux_get(b, "RG");
    const char *id = rg ? bam_aux2Z(rg) : NULL;
    for (int i = 0; id && i < o->n_read_groups; i++)
        if (strcmp(id, o->read_groups[i]) == 0)
            return 1;
    return 0;
}

static int passes(const mos_opts_t *o, const bam1_t *b)
{
    if (b->core.qual < o->mapq || (b->core.flag & o->eflag))
        return 0;
    if (o->iflag && !(b->core.flag & o->iflag))
        return 0;
    return !o->n_read_groups || in_read_groups(o, b);
}

/* The read's M/=/X blocks into c->blk, adjacent ones joined; their count, or -1. */
static int blocks(mos_counter_t *c, const bam1_t *b)
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

/* Hold positions up to base + want in diff (zeroed past used). 0, or -1 out of memory. */
static int room(mos_counter_t *c, size_t want)
{
    if (want <= c->cap)
        return 0;
    size_t cap = c->cap ? c->cap : 4096;
    while (cap < want)
        cap *= 2;
    /* written per read: private cache lines */
    int32_t *d = ss_alloc_private((cap + 1) * sizeof(*d));
    if (!d)
        return -1;
    if (c->diff)
        memcpy(d, c->diff, ((size_t)c->used + 1) * sizeof(*d));
    free(c->diff);
    c->diff = d, c->cap = cap;
    return 0;
}

/* +v over [beg, end), cut to [base, clen). 0, or -1 out of memory. */
static inline int add(mos_counter_t *c, hts_pos_t beg, hts_pos_t end, int v)
{
    if (beg < c->base)
        beg = c->base;
    if (end > c->clen)
        end = c->clen;
    if (beg >= end)
        return 0;
    if ((size_t)(end - c->base) > c->cap && room(c, (size_t)(end - c->base)) < 0)
        return -1;
    c->diff[beg - c->base] += v;
    c->diff[end - c->base] -= v;
    if (end - c->base > c->used)
        c->used = end - c->base;
    return 0;
}

/* Remember the first mate of a pair that may overlap its second. 0, or -1 out of memory. */
static int remember(mos_counter_t *c, const bam1_t *b, int n)
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
    khint_t k = kh_put(mos_mate, c->seen, m->name, &absent);
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

/* Subtract where the second mate's blocks (c->blk, n) meet the first's. 0, or -1. */
static int subtract_overlap(mos_counter_t *c, int n, const mate_t *m)
{
    int i = 0, j = 0;
    while (i < n && j < m->n) {
        hts_pos_t b0 = c->blk[2 * i], e0 = c->blk[2 * i + 1];
        hts_pos_t b1 = m->blk[2 * j], e1 = m->blk[2 * j + 1];
        hts_pos_t s = b0 > b1 ? b0 : b1, e = e0 < e1 ? e0 : e1;
        if (s < e && add(c, s, e, -1) < 0)
            return -1;
        if (e0 < e1)
            i++;
        else
            j++;
    }
    return 0;
}

/* Default mode: one read's blocks, with the mate-overlap rule. 0, or -1 out of memory. */
static int count_blocks(mos_counter_t *c, const bam1_t *b)
{
    int n = blocks(c, b);
    if (n < 0)
        return -1;
    const bam1_core_t *k = &b->core;
    if ((k->flag & BAM_FPROPER_PAIR) && !(k->flag & BAM_FSUPPLEMENTARY)) {
        hts_pos_t stop = bam_endpos(b);
        int same = k->tid == k->mtid;
        if (same && stop > k->mpos && k->pos < k->mpos) {
            if (remember(c, b, n) < 0) /* the first mate, and its pair may overlap it */
                return -1;
        } else if (!(same && k->pos < k->mpos)) {
            /* a first mate that cannot overlap its pair has nothing to take: its mate
             * comes later (mosdepth looks anyway; only a name aligned twice could differ) */
            khint_t it = kh_get(mos_mate, c->seen, bam_get_qname(b));
            int have = it != kh_end(c->seen);
            if (same && stop > k->mpos && k->pos == k->mpos && !have) {
                if (remember(c, b, n) < 0)
                    return -1;
            } else if (have) {
                mate_t *m = kh_val(c->seen, it);
                kh_del(mos_mate, c->seen, it);
                int r = subtract_overlap(c, n, m);
                free(m);
                if (r < 0)
                    return -1;
            }
        }
    }
    for (int i = 0; i < n; i++)
        if (add(c, c->blk[2 * i], c->blk[2 * i + 1], 1) < 0)
            return -1;
    return 0;
}

int mos_count_start(mos_counter_t *c, ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t clen,
                    int shard)
{
    forget_all(c);
    c->src = src, c->tid = tid, c->shard = shard;
    c->base = beg, c->clen = clen, c->used = 0, c->carry = 0, c->last = -1;
    c->pending = c->done = c->read_err = 0;
    if (c->diff)
        memset(c->diff, 0, (c->cap + 1) * sizeof(*c->diff));
    return ss_source_query(src, tid, beg, clen);
}

/* Add one read. 0, or -1 after ss_error(). */
static int take(mos_counter_t *c, const bam1_t *b)
{
    if (!passes(c->o, b))
        return 0;
    int r = c->o->fast ? add(c, b->core.pos, bam_endpos(b), 1) : count_blocks(c, b);
    if (r < 0)
        ss_error("out of memory counting depth in shard %d", c->shard);
    return r;
}

/* Add every read whose POS is below end; the first past it waits. 0, or -1. */
static int read_to(mos_counter_t *c, hts_pos_t end, uint64_t *reads)
{
    if (c->pending) {
        if (c->b->core.pos >= end)
            return 0;
        c->pending = 0;
        if (take(c, c->b) < 0)
            return -1;
    }
    int r = -1;
    while (!c->done && (r = ss_source_next(c->src, c->b)) >= 0) {
        const bam1_t *b = c->b;
        (*reads)++;
        if (b->core.pos < c->last) {
            ss_error("%s: reads out of order in shard %d: the input is not coordinate-sorted; "
                     "sort it with samtools sort and index it again",
                     c->src->name, c->shard);
            return -1;
        }
        c->last = b->core.pos;
        if (b->core.pos >= end) {
            c->pending = 1;
            return 0;
        }
        if (take(c, b) < 0)
            return -1;
    }
    c->done = 1;
    if (r < -1 && r != SS_IO_REPORTED)
        c->read_err = r;
    return r < -1 ? -1 : 0;
}

int mos_count_read_error(const mos_counter_t *c)
{
    return c->read_err;
}

const int32_t *mos_count_next(mos_counter_t *c, hts_pos_t end, uint64_t *reads)
{
    size_t len = (size_t)(end - c->base);
    if (len > c->out_cap) {
        free(c->out);
        c->out_cap = len > 4096 ? len : 4096;
        if (!(c->out = ss_alloc_private(c->out_cap * sizeof(*c->out)))) {
            c->out_cap = 0;
            ss_error("out of memory counting depth in shard %d", c->shard);
            return NULL;
        }
    }
    if (room(c, len) < 0) {
        ss_error("out of memory counting depth in shard %d", c->shard);
        return NULL;
    }
    if (read_to(c, end, reads) < 0)
        return NULL;
    int32_t d = c->carry;
    for (size_t i = 0; i < len; i++)
        c->out[i] = d += c->diff[i];
    c->carry = d;
    /* what lies past end moves to the front; the rest of diff is zero again */
    size_t keep = (size_t)c->used > len ? (size_t)c->used - len + 1 : 1;
    if ((size_t)c->used >= len)
        memmove(c->diff, c->diff + len, keep * sizeof(*c->diff));
    else
        c->diff[0] = c->diff[len]; /* the change at end itself, if a read ended there */
    size_t old = (size_t)c->used + 1;
    memset(c->diff + keep, 0, (old > keep ? old - keep : 0) * sizeof(*c->diff));
    c->used = (hts_pos_t)(keep - 1);
    c->base = end;
    return c->out;
}

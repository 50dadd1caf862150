/*
 * pileup_overlap.c -- overlapping mates, as htslib 1.16's pileup treats them.
 *
 * The first mate to enter waits in a table under its name; when the second
 * enters, the bases both place on the same reference position get their
 * qualities changed: agreeing bases give one mate the summed quality (at
 * most 200) and the other 0; disagreeing ones keep 0.8 of the better and
 * zero the worse. Which mate keeps the sum follows a hash of the name.
 * samtools' counts and quality strings depend on every detail, including
 * how the walk over the two CIGARs can step past a shared position after
 * one mate's deletion; the walk below takes the same steps.
 */
#include <stdlib.h>
#include <string.h>

#include <htslib/khash.h> /* __ac_X31_hash_string, __ac_Wang_hash: htslib's choice of mate */

#include "../alloc/ss_alloc.h" /* ss_alloc_private: the engine writes its state per read */
#include "pileup_engine.h"

/*
 * The mates waiting, by read name: open addressing with linear probing and
 * backward-shift deletion, so no tombstones pile up and, once the table has
 * grown to the most mates ever waiting at once, nothing is allocated
 * (khash, which htslib uses, re-allocates to clear its deleted slots).
 */
typedef struct {
    uint32_t hash;
    bam1_t *b; /* NULL: free slot */
} slot_t;

typedef struct {
    slot_t *slot;
    uint32_t mask, n;
} olap_t;

#define OLAP_MIN_SLOTS 256

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

void *pe_overlap_init(void)
{
    /* written per read: private lines (ss_alloc.h) */
    olap_t *t = ss_alloc_private(sizeof(*t));
    if (t && !(t->slot = ss_alloc_private(OLAP_MIN_SLOTS * sizeof(*t->slot)))) {
        free(t);
        return NULL;
    }
    if (t)
        t->mask = OLAP_MIN_SLOTS - 1;
    return t;
}

void pe_overlap_destroy(void *olap)
{
    olap_t *t = olap;
    if (t)
        free(t->slot);
    free(t);
}

void pe_overlap_clear(void *olap)
{
    olap_t *t = olap;
    memset(t->slot, 0, ((size_t)t->mask + 1) * sizeof(*t->slot));
    t->n = 0;
}

/* Slot of name, or of the free slot where it would go. */
static uint32_t find(const olap_t *t, const char *name, uint32_t h)
{
    uint32_t i = h & t->mask;
    while (t->slot[i].b && (t->slot[i].hash != h || strcmp(bam_get_qname(t->slot[i].b), name) != 0))
        i = (i + 1) & t->mask;
    return i;
}

static void remove_at(olap_t *t, uint32_t i)
{
    /* pull back later entries whose home is at or before the hole */
    for (uint32_t j = (i + 1) & t->mask; t->slot[j].b; j = (j + 1) & t->mask) {
        uint32_t home = t->slot[j].hash & t->mask;
        int movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            t->slot[i] = t->slot[j];
            i = j;
        }
    }
    t->slot[i].b = NULL;
    t->n--;
}

static int grow(olap_t *t)
{
    uint32_t old_n = t->mask + 1, n = 2 * old_n;
    slot_t *old = t->slot, *s = ss_alloc_private((size_t)n * sizeof(*s));
    if (!s)
        return -1;
    t->slot = s;
    t->mask = n - 1;
    for (uint32_t i = 0; i < old_n; i++)
        if (old[i].b)
            t->slot[find(t, bam_get_qname(old[i].b), old[i].hash)] = old[i];
    free(old);
    return 0;
}

void pe_overlap_forget(void *olap, const bam1_t *b)
{
    olap_t *t = olap;
    if (t->n == 0)
        return;
    const char *name = bam_get_qname(b);
    uint32_t i = find(t, name, name_hash(name));
    if (t->slot[i].b)
        remove_at(t, i);
}

/* A walk over the aligned (M/=/X) bases of one read. */
typedef struct {
    const uint32_t *op, *end;
    hts_pos_t icig; /* offset in the current operation */
    hts_pos_t iseq; /* query position */
    hts_pos_t iref; /* reference position relative to the read's start */
} walk_t;

enum { WALK_BASE = 0, WALK_END = -1, WALK_BAD = -2 };

/*
 * Stand on the first aligned base at or after relative position `target`
 * (a target inside a deletion moves to the next aligned base).
 */
static int walk_start(walk_t *w, hts_pos_t target)
{
    if (target < 0)
        return WALK_END;
    w->icig = w->iseq = w->iref = 0;
    for (; w->op < w->end; w->op++) {
        int op = bam_cigar_op(*w->op);
        hts_pos_t len = bam_cigar_oplen(*w->op);
        switch (op) {
        case BAM_CSOFT_CLIP:
        case BAM_CINS:
            w->iseq += len;
            break;
        case BAM_CHARD_CLIP:
        case BAM_CPAD:
            break;
        case BAM_CMATCH:
        case BAM_CEQUAL:
        case BAM_CDIFF:
            if (target < len) {
                w->icig = target;
                w->iseq += target;
                w->iref += target;
                return WALK_BASE;
            }
            target -= len;
            w->iseq += len;
            w->iref += len;
            break;
        case BAM_CDEL:
        case BAM_CREF_SKIP:
            target = target > len ? target - len : 0;
            w->iref += len;
            break;
        default:
            return WALK_BAD;
        }
        w->icig = 0;
    }
    w->iseq = -1;
    return WALK_END;
}

/* Step to the next aligned base. */
static int walk_next(walk_t *w)
{
    for (; w->op < w->end; w->op++, w->icig = -1) {
        int op = bam_cigar_op(*w->op);
        hts_pos_t len = bam_cigar_oplen(*w->op);
        switch (op) {
        case BAM_CMATCH:
        case BAM_CEQUAL:
        case BAM_CDIFF:
            if (w->icig < len - 1) {
                w->icig++, w->iseq++, w->iref++;
                return WALK_BASE;
            }
            break;
        case BAM_CDEL:
        case BAM_CREF_SKIP:
            w->iref += len;
            break;
        case BAM_CINS:
        case BAM_CSOFT_CLIP:
            w->iseq += len;
            break;
        case BAM_CHARD_CLIP:
        case BAM_CPAD:
            break;
        default:
            return WALK_BAD;
        }
    }
    w->iseq = w->iref = -1;
    return WALK_END;
}

static void adjust(uint8_t *qa, uint8_t *qb, int same_base, int a_keeps_sum)
{
    int amul = a_keeps_sum, bmul = !a_keeps_sum;
    if (same_base) {
        int q = *qa + *qb;
        if (q > 200)
            q = 200;
        *qa = (uint8_t)(amul * q);
        *qb = (uint8_t)(bmul * q);
    } else if (*qa > *qb) {
        *qa = (uint8_t)(0.8 * *qa);
        *qb = 0;
    } else if (*qa < *qb) {
        *qb = (uint8_t)(0.8 * *qb);
        *qa = 0;
    } else {
        *qa = (uint8_t)(amul * 0.8 * *qa);
        *qb = (uint8_t)(bmul * 0.8 * *qb);
    }
}

/* a entered first (a->core.pos <= b->core.pos). Returns 0, or -1 on a bad CIGAR. */
static int tweak_pair(bam1_t *a, bam1_t *b)
{
    walk_t wa = {bam_get_cigar(a), bam_get_cigar(a) + a->core.n_cigar, 0, 0, 0};
    walk_t wb = {bam_get_cigar(b), bam_get_cigar(b) + b->core.n_cigar, 0, 0, 0};
    hts_pos_t apos = a->core.pos, bpos = b->core.pos, iref = bpos;
    int ra = walk_start(&wa, iref - apos);
    if (ra < 0)
        return ra == WALK_BAD ? -1 : 0;
    int rb = walk_start(&wb, iref - bpos);
    if (rb < 0)
        return rb == WALK_BAD ? -1 : 0;
    uint8_t *qa = bam_get_qual(a), *qb = bam_get_qual(b);
    const uint8_t *sa = bam_get_seq(a), *sb = bam_get_seq(b);
    int a_keeps_sum = __ac_Wang_hash(__ac_X31_hash_string(bam_get_qname(a))) & 1;
    for (;;) {
        while (ra == WALK_BASE && wa.iref >= 0 && wa.iref < iref - apos)
            ra = walk_next(&wa);
        if (ra < 0)
            return ra == WALK_BAD ? -1 : 0;
        if (iref < wa.iref + apos)
            iref = wa.iref + apos;
        while (rb == WALK_BASE && wb.iref >= 0 && wb.iref < iref - bpos)
            rb = walk_next(&wb);
        if (rb < 0)
            return rb == WALK_BAD ? -1 : 0;
        if (iref < wb.iref + bpos)
            iref = wb.iref + bpos;
        iref++;
        if (wa.iref + apos != wb.iref + bpos)
            continue; /* one mate is in a deletion here */
        if (wa.iseq > a->core.l_qseq || wb.iseq > b->core.l_qseq)
            return -1; /* the CIGAR runs past the sequence */
        adjust(&qa[wa.iseq], &qb[wb.iseq], bam_seqi(sa, wa.iseq) == bam_seqi(sb, wb.iseq),
               a_keeps_sum);
    }
}

int pe_overlap_push(void *olap, bam1_t *b, hts_pos_t end, bam1_t **mate)
{
    olap_t *t = olap;
    *mate = NULL;
    const bam1_core_t *c = &b->core;
    if ((c->flag & BAM_FMUNMAP) || !(c->flag & BAM_FPROPER_PAIR))
        return 0;
    /* mates on other contigs, or too far apart to overlap */
    if ((c->mtid >= 0 && c->tid != c->mtid) || (llabs(c->isize) >= 2 * c->l_qseq && c->mpos >= end))
        return 0;
    const char *name = bam_get_qname(b);
    uint32_t h = name_hash(name), i = find(t, name, h);
    if (!t->slot[i].b) {
        /* only a mate still to come is worth waiting for */
        if (c->mpos >= c->pos || ((c->flag & BAM_FPAIRED) && c->mpos == -1)) {
            if (2 * (t->n + 1) > t->mask + 1) {
                if (grow(t) < 0)
                    return -2;
                i = find(t, name, h);
            }
            t->slot[i] = (slot_t){h, b};
            t->n++;
        }
        return 0;
    }
    bam1_t *a = t->slot[i].b;
    remove_at(t, i);
    *mate = a;
    return tweak_pair(a, b);
}

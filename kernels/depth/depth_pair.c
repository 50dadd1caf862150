/*
 * depth_pair.c -- -s: a read does not count where an earlier alignment of
 * its name did.
 *
 * samtools depth keeps one table of names for the whole file: a paired read
 * whose name is not in it stores its end (when its mate may overlap it); a
 * read whose name is in it takes that end as its clip and removes the name.
 * So along one name's alignments the table alternates: store, take, store...
 * A shard cannot replay the file from its start. Instead each read replays
 * that rule over the alignments of its name that end less than
 * DP_PAIR_WINDOW before its own POS (the window moves with the read, not the
 * shard, so the result does not depend on where shards are cut). A mate that
 * overlaps the read always lies in the window, so pairs, and a pair with one
 * more alignment, come out as in samtools.
 */
#include <stdlib.h>
#include <string.h>

#include <htslib/khash.h>

#include "depth.h"

#define NAME_ALIGNS 8     /* alignments remembered per name; older ones fall out */
#define SWEEP_EVERY 16384 /* names added between sweeps of names out of the window */

typedef struct {
    int n;
    hts_pos_t end[NAME_ALIGNS];     /* each alignment's end (bam_endpos) */
    unsigned char may[NAME_ALIGNS]; /* whether it would store its end (its mate may overlap) */
    hts_pos_t last_end;             /* the farthest end: the name leaves when this does */
    char name[];
} name_t;

KHASH_MAP_INIT_STR(dp_name, name_t *)

struct dp_pairs_s {
    khash_t(dp_name) * h;
    size_t added; /* names added since the last sweep */
};

dp_pairs_t *dp_pairs_init(void)
{
    dp_pairs_t *p = calloc(1, sizeof(*p));
    if (p && !(p->h = kh_init(dp_name))) {
        free(p);
        return NULL;
    }
    return p;
}

void dp_pairs_clear(dp_pairs_t *p)
{
    if (!p)
        return;
    for (khint_t k = kh_begin(p->h); k < kh_end(p->h); k++)
        if (kh_exist(p->h, k))
            free(kh_val(p->h, k));
    kh_clear(dp_name, p->h);
    p->added = 0;
}

void dp_pairs_destroy(dp_pairs_t *p)
{
    if (!p)
        return;
    dp_pairs_clear(p);
    kh_destroy(dp_name, p->h);
    free(p);
}

/* Drop the names whose every alignment ended at or before cutoff. */
static void sweep(dp_pairs_t *p, hts_pos_t cutoff)
{
    for (khint_t k = kh_begin(p->h); k < kh_end(p->h); k++)
        if (kh_exist(p->h, k) && kh_val(p->h, k)->last_end <= cutoff) {
            free(kh_val(p->h, k));
            kh_del(dp_name, p->h, k);
        }
    p->added = 0;
}

/* The name's entry, made empty if new; NULL out of memory. */
static name_t *lookup(dp_pairs_t *p, const char *qname)
{
    khint_t k = kh_get(dp_name, p->h, qname);
    if (k != kh_end(p->h))
        return kh_val(p->h, k);
    size_t len = strlen(qname);
    name_t *e = calloc(1, sizeof(*e) + len + 1);
    if (!e)
        return NULL;
    memcpy(e->name, qname, len + 1);
    int absent;
    k = kh_put(dp_name, p->h, e->name, &absent);
    if (absent < 0) {
        free(e);
        return NULL;
    }
    kh_val(p->h, k) = e;
    p->added++;
    return e;
}

/* Forget alignments that ended at or before cutoff; they are outside every later window. */
static void forget_old(name_t *e, hts_pos_t cutoff)
{
    int m = 0;
    for (int i = 0; i < e->n; i++)
        if (e->end[i] > cutoff) {
            e->end[m] = e->end[i], e->may[m] = e->may[i];
            m++;
        }
    e->n = m;
}

/* samtools' alternation over the remembered alignments: the end now stored, or 0. */
static hts_pos_t replay(const name_t *e)
{
    hts_pos_t held = 0;
    for (int i = 0; i < e->n; i++)
        held = held ? 0 : e->may[i] ? e->end[i] : 0;
    return held;
}

static void remember(name_t *e, hts_pos_t end, int may)
{
    if (e->n == NAME_ALIGNS) { /* eight alignments of one name in a window: keep the last */
        memmove(e->end, e->end + 1, (NAME_ALIGNS - 1) * sizeof(e->end[0]));
        memmove(e->may, e->may + 1, (NAME_ALIGNS - 1) * sizeof(e->may[0]));
        e->n--;
    }
    e->end[e->n] = end, e->may[e->n] = (unsigned char)may;
    e->n++;
    if (end > e->last_end)
        e->last_end = end;
}

hts_pos_t dp_pairs_clip(dp_pairs_t *p, const bam1_t *b)
{
    const bam1_core_t *c = &b->core;
    if (!(c->flag & BAM_FPAIRED) || (c->flag & BAM_FMUNMAP))
        return 0; /* samtools pairs only reads whose mate is mapped */
    hts_pos_t cutoff = c->pos - DP_PAIR_WINDOW, end = bam_endpos(b);
    if (p->added >= SWEEP_EVERY)
        sweep(p, cutoff);
    name_t *e = lookup(p, bam_get_qname(b));
    if (!e)
        return -1;
    forget_old(e, cutoff);
    hts_pos_t clip = replay(e);
    /* a read stores its end only when its mate may start within it */
    int may = c->mpos == -1 || (c->tid == c->mtid && c->mpos <= end);
    remember(e, end, may);
    return clip;
}

/*
 * depth_ring.c -- the counts of the positions between the last one printed
 * and the farthest read end: a ring that grows (by doubling) only when one
 * read spans more than it holds.
 */
#include <stdlib.h>
#include <string.h>

#include "depth.h"

#define FIRST_CAP 4096 /* positions: a few short reads' spans */

int dp_ring_init(dp_ring_t *r, int n)
{
    memset(r, 0, sizeof(*r));
    r->n = n;
    r->cap = FIRST_CAP;
    /* written per base: private cache lines (ss_alloc.h) */
    r->cnt = ss_alloc_private(r->cap * (size_t)n * sizeof(*r->cnt));
    r->hi = ss_alloc_private((size_t)n * sizeof(*r->hi));
    return r->cnt && r->hi ? 0 : -1;
}

void dp_ring_destroy(dp_ring_t *r)
{
    free(r->cnt);
    free(r->hi);
    r->cnt = NULL, r->hi = NULL;
}

void dp_ring_reset(dp_ring_t *r, hts_pos_t lo)
{
    r->lo = r->cover = lo;
    for (int i = 0; i < r->n; i++)
        r->hi[i] = lo;
}

/* Hold at least want positions, keeping the valid ones [lo, cover). */
static int grow(dp_ring_t *r, size_t want)
{
    size_t cap = r->cap, n = (size_t)r->n;
    while (cap < want)
        cap *= 2;
    int32_t *c = ss_alloc_private(cap * n * sizeof(*c));
    if (!c)
        return -1;
    for (hts_pos_t p = r->lo; p < r->cover; p++)
        memcpy(c + ((size_t)p & (cap - 1)) * n, dp_ring_at(r, p), n * sizeof(*c));
    free(r->cnt);
    r->cnt = c, r->cap = cap;
    return 0;
}

int dp_ring_extend(dp_ring_t *r, hts_pos_t to)
{
    if (to <= r->cover)
        return 0;
    if (r->cover < r->lo)
        r->cover = r->lo; /* a gap was printed past: nothing below lo is kept */
    if ((size_t)(to - r->lo) > r->cap && grow(r, (size_t)(to - r->lo)) < 0)
        return -1;
    size_t mask = r->cap - 1, n = (size_t)r->n;
    for (hts_pos_t p = r->cover; p < to;) {
        /* zero in runs up to the ring's wrap */
        size_t at = (size_t)p & mask, run = r->cap - at;
        if ((hts_pos_t)run > to - p)
            run = (size_t)(to - p);
        memset(r->cnt + at * n, 0, run * n * sizeof(*r->cnt));
        p += (hts_pos_t)run;
    }
    r->cover = to;
    return 0;
}

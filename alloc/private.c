/*
 * private.c -- memory that one worker thread writes in its hot loop.
 *
 * tcmalloc hands out small objects of one size class packed side by side, and two
 * workers that start together can get neighbours: a worker's 8-byte per-input array next
 * to the other's, or its 24-byte line-start string next to the other's. Each write then
 * takes the cache line from the other core. On pileup -B at two threads that cost 20% of
 * user time under tcmalloc (bench/bench-alloc-ab.sh; docs/benchmarks.md#allocators).
 * glibc hid it only because each thread allocates from its own arena. Placement, not the
 * allocator, is the fix, so a worker's per-position state comes from here under every
 * allocator.
 */
#include "ss_alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *ss_alloc_private(size_t size)
{
    size_t padded = (size + SS_PRIVATE_ALIGN - 1) & ~(size_t)(SS_PRIVATE_ALIGN - 1);
    void *p = NULL;
    if (padded == 0)
        padded = SS_PRIVATE_ALIGN; /* size 0, as malloc(0): a pointer free() takes */
    if (padded < size || posix_memalign(&p, SS_PRIVATE_ALIGN, padded) != 0)
        return NULL;
    memset(p, 0, padded);
    return p;
}

void *ss_calloc_private(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return ss_alloc_private(n * size);
}

void *ss_realloc_private(void *p, size_t old, size_t size)
{
    void *q = ss_alloc_private(size);
    if (!q)
        return NULL;
    if (p)
        memcpy(q, p, old < size ? old : size);
    free(p);
    return q;
}

int ss_ks_private(kstring_t *ks, size_t cap)
{
    char *s = ss_alloc_private(cap);
    if (!s)
        return -1;
    free(ks->s);
    ks->s = s;
    ks->m = cap;
    ks->l = 0;
    return 0;
}

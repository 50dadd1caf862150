/*
 * reserve.c -- room for a shard's output before it is written.
 *
 * A kstring that doubles its way up to a shard's 10-30 MB reallocates a dozen times, and
 * for blocks that large tcmalloc copies into new pages where glibc moves them with
 * mremap. The copies cost page faults, and the blocks left behind stay in tcmalloc's
 * heap: view CRAM->BAM at one thread peaked at 58 MB under tcmalloc against 35 MB under
 * glibc, and reserving the shard's size first brought it to 40 MB
 * (docs/benchmarks.md#allocators). Reserving too much costs address space alone: only
 * the bytes written are touched.
 */
#include "ss_alloc.h"

#include <stdlib.h>

int ss_ks_reserve(kstring_t *ks, size_t want)
{
    if (want > SS_RESERVE_MAX)
        want = SS_RESERVE_MAX;
    if (ks->m >= want)
        return 0;
    if (ks->l == 0) {
        /* nothing worth keeping: realloc would copy the old capacity for nothing */
        free(ks->s);
        ks_initialize(ks);
    }
    return ks_resize(ks, want) < 0 ? -1 : 0;
}

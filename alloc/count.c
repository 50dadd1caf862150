/*
 * count.c -- read the allocation counts of libsscount.so when it is preloaded.
 *
 * The shim's entry points are found once with dlsym(RTLD_DEFAULT): no link-time
 * dependency, so the same binary runs with and without the shim, and says
 * "not measured" without it. See ss_count.h.
 */
#define _GNU_SOURCE
#include "ss_count.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Set once under pthread_once, read-only afterwards. */
static ss_count_get_kinds_fn get_kinds;
static pthread_once_t find_once = PTHREAD_ONCE_INIT;

static void find_shim(void)
{
    ss_count_abi_fn abi = (ss_count_abi_fn)dlsym(RTLD_DEFAULT, "ss_count_abi");
    /* A shim of another ABI version would read its counters wrongly: ignore it. */
    if (abi != NULL && abi() == SS_COUNT_ABI)
        get_kinds = (ss_count_get_kinds_fn)dlsym(RTLD_DEFAULT, "ss_count_get_kinds");
}

int ss_count_active(void)
{
    /* pthread_once cannot fail with a valid once object and function. */
    pthread_once(&find_once, find_shim);
    return get_kinds != NULL;
}

int ss_count_kinds(uint64_t out[SS_COUNT_KINDS], int this_thread)
{
    if (!ss_count_active()) {
        memset(out, 0, SS_COUNT_KINDS * sizeof(out[0]));
        return -1;
    }
    get_kinds(out, this_thread);
    return 0;
}

static int read_counts(ss_count_t *c, int this_thread)
{
    uint64_t n[SS_COUNT_KINDS];
    int rc = ss_count_kinds(n, this_thread);
    c->allocs = n[SS_COUNT_MALLOC] + n[SS_COUNT_CALLOC] + n[SS_COUNT_REALLOC] + n[SS_COUNT_ALIGNED];
    c->frees = n[SS_COUNT_FREE];
    return rc;
}

int ss_count_total(ss_count_t *c)
{
    return read_counts(c, 0);
}

int ss_count_thread(ss_count_t *c)
{
    return read_counts(c, 1);
}

double ss_count_per_read(const ss_count_t *before, const ss_count_t *after, uint64_t reads)
{
    if (reads == 0)
        return -1.0;
    return (double)(after->allocs - before->allocs) / (double)reads;
}

int ss_count_json(char *buf, size_t size, const ss_count_t *before, const ss_count_t *after,
                  uint64_t reads)
{
    if (before == NULL || after == NULL)
        return snprintf(buf, size,
                        "\"alloc_counting\": \"not measured\", \"malloc_calls\": null, "
                        "\"free_calls\": null, \"allocs_per_read\": null");
    uint64_t allocs = after->allocs - before->allocs, frees = after->frees - before->frees;
    char per_read[32] = "null";
    if (reads > 0)
        snprintf(per_read, sizeof(per_read), "%.6g", ss_count_per_read(before, after, reads));
    return snprintf(buf, size,
                    "\"alloc_counting\": \"libsscount\", \"malloc_calls\": %" PRIu64
                    ", \"free_calls\": %" PRIu64 ", \"allocs_per_read\": %s",
                    allocs, frees, per_read);
}

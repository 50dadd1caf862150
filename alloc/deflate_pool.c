/*
 * deflate_pool.c -- keep libdeflate's working memory per thread.
 *
 * htslib 1.16 allocates a libdeflate decompressor (about 10 kB) for every
 * BGZF block it inflates and a compressor (hundreds of kB at the default
 * level) for every block it deflates, and frees it right after: one to two
 * allocator round trips per 64 kB block, the largest share of what a
 * pileup or view shard still allocates per read. libdeflate lets a program
 * supply its allocator; this one keeps the last few freed blocks of each
 * thread, by size, and hands them back on the next request of that size.
 * A thread's cache is freed when the thread exits.
 */
#include <pthread.h>
#include <stdlib.h>

#include "ss_alloc.h"

#if SS_HAVE_LIBDEFLATE
#include <libdeflate.h>

#define CACHED_PER_THREAD 4

/* Each block carries its size in front, so free knows where it fits. */
typedef union {
    size_t size;
    max_align_t align;
} head_t;

typedef struct {
    head_t *block[CACHED_PER_THREAD];
    int n;
} cache_t;

static pthread_key_t cache_key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int key_ok;

static void cache_free(void *p)
{
    cache_t *c = p;
    for (int i = 0; i < c->n; i++)
        free(c->block[i]);
    free(c);
}

static void make_key(void)
{
    key_ok = pthread_key_create(&cache_key, cache_free) == 0;
}

static cache_t *my_cache(void)
{
    if (!key_ok)
        return NULL;
    cache_t *c = pthread_getspecific(cache_key);
    /* written per BGZF block by its thread alone: a private line */
    if (!c && (c = ss_alloc_private(sizeof(*c))) && pthread_setspecific(cache_key, c) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

static void *pool_malloc(size_t size)
{
    cache_t *c = my_cache();
    for (int i = 0; c && i < c->n; i++)
        if (c->block[i]->size == size) {
            head_t *h = c->block[i];
            c->block[i] = c->block[--c->n];
            return h + 1;
        }
    head_t *h = malloc(sizeof(head_t) + size);
    if (!h)
        return NULL;
    h->size = size;
    return h + 1;
}

static void pool_free(void *p)
{
    if (!p)
        return;
    head_t *h = (head_t *)p - 1;
    cache_t *c = my_cache();
    if (c && c->n < CACHED_PER_THREAD) {
        c->block[c->n++] = h;
        return;
    }
    free(h);
}

int ss_alloc_pool_deflate(void)
{
    pthread_once(&once, make_key);
    if (!key_ok)
        return -1;
    libdeflate_set_memory_allocator(pool_malloc, pool_free);
    return 0;
}
#else
int ss_alloc_pool_deflate(void)
{
    return -1; /* built without libdeflate's headers: htslib allocates as it likes */
}
#endif

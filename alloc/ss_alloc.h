/*
 * ss_alloc.h -- which allocator the program runs on, and its figures.
 * The allocator is chosen at build time (SEQSHARD_ALLOCATOR=tcmalloc|glibc|
 * jemalloc); LD_PRELOAD can still replace it, so the name is detected at run
 * time, not assumed.
 */
#ifndef SS_ALLOC_H
#define SS_ALLOC_H

#include <stddef.h>
#include <stdio.h>

#include <htslib/kstring.h>

typedef struct {
    const char *name;          /* "tcmalloc", "jemalloc" or "glibc" */
    const char *version;       /* as the allocator reports it, or "" */
    size_t heap_bytes;         /* bytes the allocator holds from the OS */
    size_t allocated_bytes;    /* bytes in use by the program */
    size_t free_bytes;         /* held but free */
    size_t thread_cache_bytes; /* tcmalloc thread caches, 0 elsewhere */
} ss_alloc_info_t;

/*
 * Tune the allocator for n_workers threads, once, on the main thread before
 * workers start: tcmalloc's total thread cache unless the user set
 * TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES; glibc's mallopt settings that stop
 * the trim/re-fault cycle unless MALLOC_* / GLIBC_TUNABLES say otherwise.
 */
void ss_alloc_tune(int n_workers);
/*
 * Give libdeflate (which htslib calls for every BGZF block) a per-thread
 * cache of its working memory (deflate_pool.c). Once, on the main thread,
 * before any file is opened. Returns 0, or -1 when not available.
 */
int ss_alloc_pool_deflate(void);
/* Fill *info from the allocator in effect. Any thread. */
void ss_alloc_info(ss_alloc_info_t *info);
/* Name of the allocator in effect ("tcmalloc", ...). */
const char *ss_alloc_name(void);

/*
 * Two lines, not one: Intel's adjacent-line prefetcher moves 128-byte pairs, so data of
 * two threads 64 bytes apart can still ping-pong.
 */
#define SS_PRIVATE_ALIGN 128
/*
 * size bytes, zeroed, that share no SS_PRIVATE_ALIGN-byte block with any other
 * allocation: for state one worker writes per read or per position (private.c says why).
 * Release with free(). NULL when out of memory.
 */
void *ss_alloc_private(size_t size);
/* n objects of size bytes, as ss_alloc_private; NULL also when n * size overflows. */
void *ss_calloc_private(size_t n, size_t size);
/*
 * Grow (or shrink) p, a private block of old bytes or NULL, to a private block of size
 * bytes: the first min(old, size) bytes kept, the rest zeroed, p freed. NULL when out of
 * memory, with p untouched.
 */
void *ss_realloc_private(void *p, size_t old, size_t size);
/*
 * Give ks (empty or not; its text is dropped) a private buffer of cap bytes. A kstring
 * that grows past cap goes back to realloc, so choose cap above the usual need.
 * Returns 0, or -1 when out of memory (ks unchanged).
 */
int ss_ks_private(kstring_t *ks, size_t cap);

/*
 * Never reserve more than this up front: a long shard with few reads (a contig without
 * reads is one shard) would otherwise ask for gigabytes; past it the buffer grows as it
 * is written.
 */
#define SS_RESERVE_MAX ((size_t)256 << 20)
/*
 * Make room for about want bytes (at most SS_RESERVE_MAX) before a shard's output is
 * written into ks, so it does not grow by copying (reserve.c). The text of a non-empty
 * ks is kept. Returns 0, or -1 when out of memory.
 */
int ss_ks_reserve(kstring_t *ks, size_t want);

#endif

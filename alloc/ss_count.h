/*
 * ss_count.h -- how many times the program called the allocator.
 *
 * Counting is done by a small LD_PRELOAD library, libsscount.so (built from
 * alloc/count_preload.c), that wraps malloc, calloc, realloc, reallocarray,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc and free in front
 * of whatever allocator the program runs on. The program itself never
 * depends on it: these functions find the library's entry points with dlsym
 * at run time and say "not measured" when it is not loaded.
 *
 *   LD_PRELOAD=build/libsscount.so seqshard pileup --report r.json ...
 *
 * Counts are kept per thread (thread-local, no contention) and summed over
 * every thread that ever allocated, including threads that have exited.
 */
#ifndef SS_COUNT_H
#define SS_COUNT_H

#include <stddef.h>
#include <stdint.h>

/* The shim's file name, for messages. */
#define SS_COUNT_LIB_NAME "libsscount.so"

/* Kinds of calls the shim counts, indexes of ss_count_kinds' array. */
typedef enum {
    SS_COUNT_MALLOC = 0,
    SS_COUNT_CALLOC,
    SS_COUNT_REALLOC, /* realloc and reallocarray, whatever they did */
    SS_COUNT_ALIGNED, /* posix_memalign, aligned_alloc, memalign, valloc, pvalloc */
    SS_COUNT_FREE,    /* free of a non-NULL pointer */
    SS_COUNT_KINDS
} ss_count_kind_t;

/* allocs: every call that may obtain memory (all kinds but free); frees: free(non-NULL). */
typedef struct {
    uint64_t allocs;
    uint64_t frees;
} ss_count_t;

/* 1 when the counting shim is loaded in this process, 0 otherwise. Any thread. */
int ss_count_active(void);
/*
 * Calls by every thread of the process so far. Returns 0, or -1 with *c
 * zeroed when the shim is not loaded. Any thread.
 */
int ss_count_total(ss_count_t *c);
/* Calls by the calling thread so far. Returns 0, or -1 (zeroed) without the shim. */
int ss_count_thread(ss_count_t *c);
/*
 * Calls by kind, process-wide (this_thread 0) or by the calling thread (1).
 * Returns 0, or -1 (zeroed) without the shim. Any thread.
 */
int ss_count_kinds(uint64_t out[SS_COUNT_KINDS], int this_thread);

/* (after - before) allocs per read; -1.0 when reads is 0. */
double ss_count_per_read(const ss_count_t *before, const ss_count_t *after, uint64_t reads);

/*
 * The --report fields, to be placed inside the top-level JSON object:
 *   measured:      "alloc_counting": "libsscount", "malloc_calls": N, "free_calls": N,
 *                  "allocs_per_read": X
 *   not measured:  "alloc_counting": "not measured", "malloc_calls": null,
 *                  "free_calls": null, "allocs_per_read": null
 * (before or after NULL means not measured; N counts the calls between the
 * two snapshots, X = N / reads, null when reads is 0). Returns the length
 * written, as snprintf does. Any thread.
 */
int ss_count_json(char *buf, size_t size, const ss_count_t *before, const ss_count_t *after,
                  uint64_t reads);

/*
 * Entry points libsscount.so exports; looked up with dlsym, never linked.
 * The versions the shim gives: ss_count_abi() == SS_COUNT_ABI.
 */
#define SS_COUNT_ABI 1
typedef int (*ss_count_abi_fn)(void);
typedef void (*ss_count_get_kinds_fn)(uint64_t out[SS_COUNT_KINDS], int this_thread);

#endif

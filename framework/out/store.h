/*
 * store.h -- a rank's finished shard outputs, kept until the streaming
 * merge knows their offsets (store.c). Memory-capped; the rest spills to an
 * already-unlinked file in --tmp-dir.
 *
 * Private to framework/out/ and framework/run/; kernels and io/ must not include it.
 */
#ifndef SS_STORE_H
#define SS_STORE_H

#include "spill.h"
#include <stddef.h>
#include <stdint.h>

typedef struct ss_store_s ss_store_t;

/* NULL on allocation failure. Main thread. */
ss_store_t *ss_store_init(const char *tmp_dir, size_t mem_cap);
/* Copy shard idx's bytes in. Any thread. Returns 0, or -1 after ss_error(). */
int ss_store_put(ss_store_t *s, int idx, const char *buf, size_t len);
/*
 * Shard idx's bytes are sp's file followed by buf (a shard whose output left
 * memory while it ran): copied into the spill file as one piece, outside
 * the lock. The caller still owns sp. 0, or -1 after ss_error().
 */
int ss_store_put_spilled(ss_store_t *s, int idx, const ss_spill_t *sp, const char *buf, size_t len);
/* Pieces in the order they were put; piece k keeps its number. Any thread (the lock). */
size_t ss_store_count(ss_store_t *s);
void ss_store_piece(ss_store_t *s, size_t k, int *idx, uint64_t *len);
/* 1 when the bytes put and not yet released (in memory or spilled) exceed the
 * memory cap: the back-pressure signal. Any thread. */
int ss_store_over_cap(ss_store_t *s);
/* Bytes that went to the spill file. */
uint64_t ss_store_spilled(ss_store_t *s);

/* Called with consecutive chunks of a piece; off is within the piece. 0 or -1. */
typedef int (*ss_store_chunk_f)(void *ctx, uint64_t off, const char *buf, size_t len);
/* Feed piece k to f in chunks. Main thread, while workers put. Returns 0 or the first -1. */
int ss_store_each_chunk(ss_store_t *s, size_t k, ss_store_chunk_f f, void *ctx);
/*
 * Piece k is written: free its memory (room for later pieces under the cap).
 * A spilled piece's bytes stay in the spill file. Main thread; never twice per piece.
 */
void ss_store_release(ss_store_t *s, size_t k);
/* Frees memory and closes the spill file. Accepts NULL. */
void ss_store_destroy(ss_store_t *s);

#endif

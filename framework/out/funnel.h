/*
 * funnel.h -- a multi-rank run's output to standard output, which rank 0
 * writes in shard order while the other ranks send it their shards when
 * asked (funnel.c). Main thread only; it calls MPI through comm.c.
 *
 * Private to framework/out/ and framework/run/ (the multi-rank sink); kernels and io/ must
 * not include it.
 */
#ifndef SS_FUNNEL_H
#define SS_FUNNEL_H

#include <stddef.h>
#include <stdint.h>

#include "output_file.h"
#include "store.h"

typedef struct ss_funnel_s ss_funnel_t;

/*
 * Collective, once the ranks agreed setup worked and the shard counter (with
 * its size slots) is open. out is rank 0's standard output (NULL elsewhere;
 * NULL on rank 0: opening it failed, reported). Rank 0 writes the header.
 * Returns the funnel on every rank, or NULL on every rank.
 */
ss_funnel_t *ss_funnel_open(ss_store_t *store, int n_shards, const char *header, size_t header_len,
                            ss_output_t *out);
/*
 * Publish the sizes of the pieces workers put since the last call; rank 0
 * then writes every shard whose size is known, in order (asking the rank
 * that holds it), and the other ranks send the pieces rank 0 asked for.
 * between(ctx) runs between chunks. Returns 1 while shards remain to be
 * written (rank 0) or sent (others), 0 when none, -1 after ss_error().
 */
int ss_funnel_step(ss_funnel_t *f, void (*between)(void *), void *ctx);
/*
 * Collective: the ranks agree whether any failed; when none did, rank 0
 * writes tail. 0 on every rank when all succeeded, -1 on every rank
 * otherwise. Once every worker is joined and the last step returned 0 (or
 * the run failed).
 */
int ss_funnel_finish(ss_funnel_t *f, int failed, const char *tail, size_t tail_len);
/*
 * The run loop ended (done, failed, or stopped): rank 0 takes no more
 * pieces. Any chunk another rank is still sending (rank 0 left a piece half
 * way) is dropped in rank 0's later MPI waits, so that rank, which MPI cannot
 * stop inside its send, reaches the agreements after the run. Before any
 * of them; main thread.
 */
void ss_funnel_end(ss_funnel_t *f);
/* Bytes this rank wrote to standard output (rank 0: with header and tail; others 0). */
uint64_t ss_funnel_bytes(const ss_funnel_t *f);
/* Free. Accepts NULL. */
void ss_funnel_destroy(ss_funnel_t *f);

#endif

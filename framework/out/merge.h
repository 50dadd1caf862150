/*
 * merge.h -- the streaming, collective, ordered merge of a multi-rank run
 * (merge.c). Main thread only; it calls MPI through comm.c.
 *
 * Private to framework/out/ and framework/run/ (the multi-rank sink); kernels and io/ must
 * not include it.
 */
#ifndef SS_MERGE_H
#define SS_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "output_file.h"
#include "store.h"

typedef struct ss_merge_s ss_merge_t;

/*
 * Collective, once the ranks agreed setup worked and the shard counter (with
 * its size slots) is open. out is rank 0's temporary output (NULL elsewhere;
 * NULL on rank 0 means creating it failed, already reported), path the -o
 * name for messages. Rank 0 broadcasts the temporary name, every other rank
 * guards it (ss_output_guard), all open it with MPI-IO, rank 0 writes the
 * header at offset 0. Returns the merger on every rank, or NULL on every rank
 * (after ss_error() on the rank that failed; the guard is lifted).
 */
ss_merge_t *ss_merge_open(ss_store_t *store, int n_shards, const char *header, size_t header_len,
                          ss_output_t *out, const char *path);
/*
 * Publish the sizes of the pieces workers put since the last call, learn
 * the sizes other ranks published, and write each piece whose offset (header
 * + sizes of all earlier shards) is now known, then release it from the
 * store. between(ctx) runs between write chunks, so workers asking for
 * shards are not kept waiting by a long write; pieces put meanwhile are
 * published between chunks too. Returns 1 while some of this rank's pieces
 * wait for other ranks' sizes, 0 when none wait, -1 after ss_error() (a
 * write or an MPI call failed).
 */
int ss_merge_step(ss_merge_t *m, void (*between)(void *), void *ctx);
/*
 * Collective: every rank says whether it failed (failed, or an earlier step
 * failed, or pieces were left unwritten); when none did, rank 0 writes tail
 * (the kernel's trailer and the BGZF EOF block) after the last shard. Then
 * the file is closed on every rank and the ranks agree once more. Returns 0
 * on every rank when all succeeded, -1 on every rank otherwise. Call only
 * once every worker is joined and the last ss_merge_step returned 0 (or the
 * run failed); the waits sleep rather than spin.
 */
int ss_merge_finish(ss_merge_t *m, int failed, const char *tail, size_t tail_len);
/* This rank wrote shard idx's piece at off: 0, or -1 after ss_error() (the merge fails). */
typedef int (*ss_merge_written_f)(void *ctx, int idx, uint64_t off);
/* Shard idx was kept from an earlier run: 0 with its offset and size, else -1. */
typedef int (*ss_merge_kept_f)(const void *ctx, int idx, uint64_t *off, uint64_t *size);
/*
 * --resume: kept says which shards were kept from an earlier run (the engine
 * asks the resume state, so the merge needs none of it); each step checks
 * their offsets as the known prefix passes them. written is called for each
 * piece this rank writes (for its record file). Before the first step.
 */
void ss_merge_set_resume(ss_merge_t *m, ss_merge_kept_f kept, const void *kept_ctx,
                         ss_merge_written_f written, void *ctx);
/* The temporary output's path, as every rank opened it. */
const char *ss_merge_tmp_path(const ss_merge_t *m);
/* The whole file's length (header, every shard, tail), known after ss_merge_finish. */
uint64_t ss_merge_file_len(const ss_merge_t *m);
/* Bytes this rank wrote into the output (rank 0: with header and tail). */
uint64_t ss_merge_bytes(const ss_merge_t *m);
/* Free. Accepts NULL. Does not touch the output file (ss_merge_finish closed it). */
void ss_merge_destroy(ss_merge_t *m);

#endif

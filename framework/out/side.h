/*
 * side.h -- a run's side streams (side_out.c) and reductions (reduce.c),
 * the two things a kernel's output may have besides its main stream
 * (ss_out_spec_t.n_streams, .n_values, .n_hists).
 *
 * Side streams: a worker writes each stream's text for its shard into its own
 * buffers (ss_out_stream); after the shard, ss_side_put compresses them (BGZF
 * streams, into whole blocks, as out_shard.c does the main stream) and keeps them
 * in a store (store.c: memory, then a spill file). One rank: the main thread
 * appends shard i's pieces to each file as the ordered writer writes shard i.
 * Several ranks: at the end the ranks sum a vector of every piece's size, so
 * each knows every offset, and write their own pieces with MPI-IO (comm.c);
 * rank 0 writes each file's header and BGZF end block. Rank 0 then indexes
 * the BGZF streams (CSI, as tabix -p bed --csi), runs the kernel's finish
 * hook, which adds small files, and renames everything: all of it or none.
 *
 * Threads: ss_side_attach and ss_side_put run on the worker that owns the
 * ss_out_t; a worker's buffers and reduction state are its own. The piece
 * table is under the side's lock (workers put while the main thread writes).
 * Everything else is the main thread's.
 *
 * Private to framework/out/ and framework/run/; kernels and io/ must not include it.
 */
#ifndef SS_SIDE_H
#define SS_SIDE_H

#include "../driver.h"

typedef struct ss_side_s ss_side_t;
typedef struct ss_reduce_s ss_reduce_t;

/*
 * Main thread, in setup, before the ranks agree it worked: copy the spec's
 * streams and reductions; rank 0 (or the only rank) creates each stream's
 * temporary file and writes its header. *side stays NULL when the spec has
 * neither. 0, or -1 after ss_error() (nothing is left on disk).
 */
int ss_side_init(ss_side_t **side, const ss_out_spec_t *spec, const ss_common_opts_t *co,
                 int n_shards, int n_workers);
/*
 * Collective, several ranks, once the ranks agreed setup worked (the sink's open): rank
 * 0's temporary names to every rank, which removes them too on a terminating signal, so
 * a run whose rank 0 was killed leaves nothing. 0, or -1 on every rank (s may be NULL).
 */
int ss_side_share(ss_side_t *s);
/* Worker thread, once: give the worker's output its buffers. 0, or -1 after ss_error(). */
int ss_side_attach(ss_side_t *s, ss_out_t *out, int worker);
/* Worker thread, after ss_out_end: keep the shard's stream text. 0, or -1 after ss_error(). */
int ss_side_put(ss_side_t *s, int worker, int idx);
/* One rank, main thread, as the ordered writer writes shard idx: append its pieces. */
int ss_side_write_shard(ss_side_t *s, int idx);
/*
 * Collective, after the main output's end agreement (rc is the same on every
 * rank): several ranks write their pieces; every rank ends the files and
 * combines the reductions over workers and ranks. Returns rc, or -1 (then on
 * every rank).
 */
int ss_side_finish(ss_side_t *s, int rc);
/*
 * Rank 0, main thread, when the run worked: index the BGZF streams, run the
 * kernel's finish hook (k->finish may be NULL) and write its files, all under
 * temporary names. 0, or -1 after ss_error().
 */
int ss_side_seal(ss_side_t *s, const ss_kernel_t *k, const void *kopts, const void *run);
/*
 * Rank 0: rename every file into place. If one rename fails, those already
 * renamed are removed again. 0, or -1 after ss_error().
 */
int ss_side_commit(ss_side_t *s);
/* Remove whatever was not committed, free. Accepts NULL. Main thread, after the workers. */
void ss_side_destroy(ss_side_t *s);

/* out_shard.c: which side and worker an output belongs to (set by ss_side_attach). */
void ss_out_set_side(ss_out_t *o, ss_side_t *s, int worker);
ss_side_t *ss_out_get_side(const ss_out_t *o, int *worker);

/* ---- indexes built while writing (side_index.c) ---- */

/* A shard's lines, for its stream's index: made by the worker, read by the main thread. */
typedef struct ss_lineidx_s ss_lineidx_t;
typedef struct ss_bedidx_s ss_bedidx_t;
/* Scan BED text (contig, start, end; '#' lines skipped). 0, or -1 out of memory (*out is
 * then still to be destroyed). Any thread. */
int ss_lineidx_scan(const char *text, size_t len, ss_lineidx_t **out);
void ss_lineidx_destroy(ss_lineidx_t *t);
/* A stream's CSI index, its header head_len bytes of meta lines; NULL out of memory. */
ss_bedidx_t *ss_bedidx_init(uint64_t head_len);
void ss_bedidx_destroy(ss_bedidx_t *x);
/* The shard's lines, its BGZF bytes z written at file_off. 0, or -1 (out of memory, or
 * lines out of order). */
int ss_bedidx_add(ss_bedidx_t *x, const ss_lineidx_t *t, uint64_t file_off, const char *z,
                  size_t zlen);
/* Finish (data_end: where the BGZF end block starts) and write the CSI index of path to
 * idx_path, a name the caller created (htslib opens it by name and truncates it). 0 or -1. */
int ss_bedidx_save(ss_bedidx_t *x, uint64_t data_end, const char *path, const char *idx_path);

/* ---- reductions (reduce.c) ---- */

/* n values combined by ops[i], n_hists histograms; NULL out of memory. Main thread. */
ss_reduce_t *ss_reduce_init(size_t n, const ss_reduce_op_t *ops, int n_hists, int n_workers);
void ss_reduce_destroy(ss_reduce_t *r);
/* Worker thread, once: make worker id's values (at their identities). 0 or -1. */
int ss_reduce_attach(ss_reduce_t *r, int id);
/* Worker id's values. */
int64_t *ss_reduce_values(ss_reduce_t *r, int id);
/* Add bins[0..n) to the rank's histogram h. Any thread (one lock). 0, or -1 after ss_error(). */
int ss_reduce_hist_add(ss_reduce_t *r, int h, const int64_t *bins, size_t n);
/* Collective: combine over workers, then ranks. 0, or -1 after ss_error(). Main thread. */
int ss_reduce_finish(ss_reduce_t *r);
/* After ss_reduce_finish: the result. */
const int64_t *ss_reduce_result(const ss_reduce_t *r);
const int64_t *ss_reduce_result_hist(const ss_reduce_t *r, int h, size_t *len);
/* The pure parts, for tests: v[i] = ops[i]'s identity; acc[i] = ops[i](acc[i], v[i]). */
void ss_reduce_identity(int64_t *v, const ss_reduce_op_t *ops, size_t n);
void ss_reduce_combine(int64_t *acc, const int64_t *v, const ss_reduce_op_t *ops, size_t n);

#endif

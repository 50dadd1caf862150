/*
 * out_shard.h -- each worker's output for one shard (out_shard.c), written
 * in the run's format (out_run.h). Each worker owns one ss_out_t.
 *
 * Private to framework/out/ and framework/run/; kernels and io/ must not include it.
 */
#ifndef SS_OUT_SHARD_H
#define SS_OUT_SHARD_H

#include "ordered.h"
#include "out_run.h"
#include "spill.h"

/*
 * A worker's output. ss_out_init: NULL after ss_error(); bufs hands out the
 * shard buffers and holds their memory budget (ordered.h): a buffer grows
 * within it and spills its bytes past it. begin binds the
 * shard and the buffer the ordered writer gave (cleared; 0, or -1 after
 * ss_error()); end finishes the
 * shard's bytes in buf (moving records sorted and kept by ownership, the
 * last BGZF block, CRAM containers, text compressed); abort drops a failed
 * shard's state. Worker thread that owns o.
 */
ss_out_t *ss_out_init(const ss_out_run_t *r, ss_ordered_t *bufs);
void ss_out_destroy(ss_out_t *o);
int ss_out_begin(ss_out_t *o, const ss_shard_t *sh, kstring_t *buf);
int ss_out_end(ss_out_t *o);
void ss_out_abort(ss_out_t *o);
/*
 * After end: the shard's leading bytes that left memory (spill.h), which
 * come before buf's; the caller owns the file from now on. fd -1 if none.
 */
ss_spill_t ss_out_take_spill(ss_out_t *o);
/*
 * After end: the shard's index piece (shard_index.h) into *piece, whose old
 * bytes it frees; empty when the run notes nothing or the piece is unusable
 * (then the index is built from the file).
 */
void ss_out_take_index(ss_out_t *o, kstring_t *piece);

#endif

/*
 * bgzf_async.h -- a BGZF pack's blocks compressed on a thread pool, shared by
 * bam_enc.c (the pack) and bgzf_async.c (the pool's side). Private to io/.
 */
#ifndef SS_IO_BGZF_ASYNC_H
#define SS_IO_BGZF_ASYNC_H

#include "ss_encode.h"

/* Whether the full block goes to the pool: some core idles, or blocks are in flight. */
int ss_bgzf_pack_to_pool(const ss_bgzf_pack_t *z);
/* The full block in z->buf to the pool (z->buf is then a fresh one); blocks done by
 * now land on out. 0, or -1 out of memory or a compression error. */
int ss_bgzf_pack_send(ss_bgzf_pack_t *z, kstring_t *out);
/* Blocks done land on out, in the order sent; all of them (waiting) with all set. 0 or -1. */
int ss_bgzf_pack_land(ss_bgzf_pack_t *z, kstring_t *out, int all);
/* Back to compressing in the caller: the blocks in flight are dropped. */
void ss_bgzf_pack_async_end(ss_bgzf_pack_t *z);

#endif

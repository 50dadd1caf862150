/*
 * spill.h -- the part of one shard's output that did not stay in memory.
 *
 * When a shard buffer would grow past the rank's output memory budget
 * (ordered.h, out_shard.c), its leading bytes (whole BGZF blocks for compressed
 * output) go to a temporary file of the shard's own, and the shard's output
 * is then that file's bytes followed by what is left in the buffer. So a shard may make far more
 * output than fits in memory, and the planner can cut shards by work (a CRAM slice decoded once,
 * not once per small shard) rather than by output.
 *
 * The file is unlinked as soon as it is created: it disappears with its
 * descriptor in every outcome, crash included.
 *
 * Private to framework/out/ (run/ sees it through out_shard.h and store.h); kernels and
 * io/ must not include it.
 */
#ifndef SS_SPILL_H
#define SS_SPILL_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int fd;       /* -1: nothing spilled */
    uint64_t len; /* bytes in the file, all of them the shard's first */
} ss_spill_t;

#define SS_SPILL_NONE ((ss_spill_t){.fd = -1, .len = 0})

/* Append len bytes, creating the file in dir on first use. 0, or -1 after ss_error(). */
int ss_spill_append(ss_spill_t *sp, const char *dir, int shard, const char *buf, size_t len);

/* Called for each piece of the file in order; returns 0 or -1 (stops the copy). */
typedef int (*ss_spill_sink_f)(void *ctx, const char *buf, size_t len);

/* Hand the file's bytes to sink, in order. 0, or -1 (after ss_error() for a read error). */
int ss_spill_copy(const ss_spill_t *sp, int shard, ss_spill_sink_f sink, void *ctx);

/* Close the file (its space is freed); *sp becomes SS_SPILL_NONE. */
void ss_spill_close(ss_spill_t *sp);

#endif

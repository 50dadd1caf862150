/*
 * ordered.h -- the seam between workers, which finish shards in any order,
 * and the output, which must receive them in shard order.
 *
 * The single-process implementation (ordered.c) keeps at most `window`
 * shards in flight past the next one to write: workers wait in admit() for
 * their shard to enter the window, hand their buffer over with put(), and
 * the main thread drains buffers in order with run(). An MPI version
 * (sizes -> prefix sum -> each rank writes at its offsets) provides the same
 * operations, so the engine does not change.
 *
 * Private to framework/out/ and framework/run/ (the one-rank sink and its scheduler);
 * kernels and io/ must not include it.
 */
#ifndef SS_ORDERED_H
#define SS_ORDERED_H

#include <htslib/kstring.h>

typedef struct ss_ordered_s ss_ordered_t;

/* Receives one shard's bytes in order (buf NULL: a kept shard, already in the output);
 * returns 0, or -1 after ss_error(). */
typedef int (*ss_ordered_sink_f)(void *ctx, int idx, const char *buf, size_t len);
/* Called by run() on the main thread about every tick_s seconds while waiting. */
typedef void (*ss_ordered_tick_f)(void *ctx);

/*
 * Buffers larger than this are freed when recycled, so one huge shard does not pin memory.
 * Above SS_SHARD_OUTPUT with room to spare: kernels reserve a quarter more than they
 * last wrote, and a shard of 48 MiB whose buffer was freed every time faulted its pages
 * (measured before text buffers spilled past a memory budget; CRAM and moving records
 * still fill whole buffers)
 * in again (a fifth of the CPU of 30 inputs at 64 MiB). Pages are touched only as far as
 * a shard wrote, so a kept buffer pins what the shards make, not what they reserved.
 */
#define SS_ORDERED_KEEP_MAX ((size_t)128 << 20)

/*
 * The default output memory budget of a rank: this much per buffer that may
 * exist at once (the cap, running workers + 1, or the window if smaller), so
 * a shard that makes less than about this stays in memory and is never
 * spilled. SEQSHARD_SPILL_AT sets the budget itself (engine.c).
 */
#define SS_ORDERED_MEM_PER_BUFFER ((size_t)32 << 20)

/*
 * Window of `window` shards (>= 1) over n_shards, with at most max_buffers
 * buffers in existence (0: no cap); shard next_to_write may always have one
 * more, so the cap cannot deadlock. Returns NULL on allocation failure. Main
 * thread, before workers start.
 */
ss_ordered_t *ss_ordered_init(int n_shards, int window, int max_buffers);
void ss_ordered_destroy(ss_ordered_t *ow);

/*
 * Shards already in the output (kept[i] != 0, [n_shards]; NULL: none): the
 * scheduler never hands them out and run() passes them to the sink with buf
 * NULL, so the sink steps over their bytes. Main thread, before workers start;
 * kept must outlive the run.
 */
void ss_ordered_set_kept(ss_ordered_t *ow, const unsigned char *kept);
/* Is shard idx kept? Any thread. */
int ss_ordered_kept(const ss_ordered_t *ow, int idx);
/*
 * Block until shard idx is within the window (idx < next_to_write + window).
 * Returns 0, or -1 once the run was stopped. Worker threads.
 */
int ss_ordered_admit(ss_ordered_t *ow, int idx);
/*
 * An empty buffer for shard idx, recycled (capacity kept) only within the
 * worker's group (its NUMA node: see ordered.c). Waits while the cap is
 * reached; waiting shards are served lowest first. NULL when out of memory
 * or once the run was stopped. Workers.
 */
kstring_t *ss_ordered_buffer(ss_ordered_t *ow, int group, int idx);
/*
 * The memory budget: the capacity every shard buffer holds together (free,
 * filling or waiting), in bytes; 0, the default, is no limit. Main thread,
 * before workers start.
 */
void ss_ordered_set_budget(ss_ordered_t *ow, size_t bytes);
size_t ss_ordered_budget(const ss_ordered_t *ow);
/* The budget over the buffer cap: what one buffer may take without crowding the others. */
size_t ss_ordered_share(const ss_ordered_t *ow);
/*
 * Grow the capacity of b (a buffer from ss_ordered_buffer that the caller
 * holds) to at most want and at least least, as the budget allows: 1 when b
 * then holds at least least bytes (it may already have), 0 when the budget
 * has no room for that (the caller spills instead), -1 out of memory (b
 * unchanged). Keeps b's bytes. The worker that holds b.
 */
int ss_ordered_grow(ss_ordered_t *ow, kstring_t *b, size_t want, size_t least);
/*
 * Count b's capacity as it is now (a kernel's own appends may have grown it):
 * 1 when the buffers then hold more than the budget, else 0. The worker that
 * holds b.
 */
int ss_ordered_settle(ss_ordered_t *ow, kstring_t *b);
/* The most capacity the buffers held at once, as counted (any thread). */
size_t ss_ordered_peak_held(ss_ordered_t *ow);
/* Hand shard idx's bytes to the writer; the writer owns buf from now on. Workers. */
void ss_ordered_put(ss_ordered_t *ow, int idx, kstring_t *buf);
/* Give back a buffer that will not be put (the shard failed). Workers. */
void ss_ordered_release(ss_ordered_t *ow, kstring_t *buf);
/*
 * Stop the run: admit() and run() return -1 promptly. Any thread; idempotent.
 */
void ss_ordered_stop(ss_ordered_t *ow);
int ss_ordered_stopped(ss_ordered_t *ow);

/*
 * Main thread: pass every shard's bytes to sink in shard order, recycling
 * buffers. Returns 0 when all n_shards were written, -1 if stopped or the
 * sink failed (the run is then stopped too).
 */
int ss_ordered_run(ss_ordered_t *ow, ss_ordered_sink_f sink, ss_ordered_tick_f tick, void *ctx,
                   double tick_s);
/* The most buffers that existed at once (any thread). */
int ss_ordered_peak_buffers(ss_ordered_t *ow);
/* How many workers are waiting for a buffer (any thread). */
int ss_ordered_waiting(ss_ordered_t *ow);
/* How many shards were written so far (any thread). */
int ss_ordered_written(ss_ordered_t *ow);

#endif

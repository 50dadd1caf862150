/*
 * ss_engine.h -- private to engine.c and engine_par.c: the run's state, and
 * the helpers the multi-rank path (engine_par.c) shares with the engine.
 * Main thread unless a comment says otherwise.
 */
#ifndef SS_ENGINE_H
#define SS_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>

#include "ss_internal.h"
#include "ss_merge.h"
#include "ss_out.h"
#include "ss_sched.h"
#include "ss_side.h"
#include "ss_store.h"
#include "ss_topology.h"


/* Progress updates, and (several ranks) the stop-flag check, at most this often. */
#define TICK_S 0.25

typedef struct engine_s engine_t;
typedef struct worker_s worker_t;

/*
 * Where finished shards go: one rank's ordered writer (engine_local.c) or
 * the multi-rank store and merge (engine_par.c). The engine calls open, then
 * run (which starts the workers, writes what they put, and joins them), then
 * finish; workers call put. Each returns 0, or -1 after ss_error().
 */
typedef struct {
    /* Collective: create the output and write the header. */
    int (*open)(engine_t *e, const kstring_t *header);
    /* Worker thread: shard idx is done; the sink owns buf's bytes from now on. */
    int (*put)(engine_t *e, int idx, kstring_t *buf);
    /* Main thread: start n_workers workers, write their shards as they come, join them. */
    int (*run)(engine_t *e, int n_workers, worker_t *w);
    /* Collective: trailer and close; the output's owner then seals it (engine.c). */
    int (*finish)(engine_t *e, int rc);
} ss_sink_t;

extern const ss_sink_t ss_sink_local; /* engine_local.c */
extern const ss_sink_t ss_sink_par;   /* engine_par.c */

struct engine_s {
    const ss_kernel_t *k;
    void *kopts;
    const void *run;           /* the kernel's run state, read-only */
    ss_out_run_t *orun;        /* what the output is, read-only while workers run */
    const ss_sink_t *sink;
    ss_job_t *job;
    const ss_shard_t *shards;
    int n_shards;
    ss_sched_t *sched;
    ss_ordered_t *ow;
    ss_worker_stats_t *stats;  /* [n_workers] */
    atomic_ullong reads_done;
    int fail_shard;            /* SEQSHARD_FAIL_SHARD, or -1 */
    int kill_shard;            /* SEQSHARD_KILL_SHARD, or -1 */
    int kill_rank;             /* SEQSHARD_KILL_RANK, or -1 */
    int stall_shard;           /* SEQSHARD_STALL_SHARD, or -1 */
    ss_store_t *store;         /* multi-rank: outputs wait here until written */
    ss_merge_t *merge;         /* multi-rank: the streaming merge (main thread) */
    ss_side_t *side;           /* side streams and reductions, or NULL (side_out.c) */
    atomic_int workers_live;   /* multi-rank: workers not yet finished */
    const ss_topo_t *topo;     /* NULL with --bind none */
    const ss_placement_t *place; /* [n_workers], read-only while workers run; or NULL */
    /* main thread only */
    ss_output_t *out;
    ss_progress_t *progress;
    uint64_t work_done;
    int work_counted;          /* multi-rank progress: shards whose work is in work_done */
    uint64_t bytes_written;
};

struct worker_s {
    engine_t *e;
    int id;
    pthread_t thread;
    int started;
};

/* Start n_workers threads (fewer if the system refuses some). 0, or -1 after ss_error(). */
int ss_engine_start_workers(engine_t *e, int n_workers, worker_t *w);
void ss_engine_join_workers(int n_workers, worker_t *w);

#endif

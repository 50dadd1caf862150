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
#include "ss_sched.h"
#include "ss_store.h"
#include "ss_topology.h"

#define KIND(e) KIND_K((e)->k, (e)->kopts)

/* Progress updates, and (several ranks) the stop-flag check, at most this often. */
#define TICK_S 0.25

typedef struct {
    const ss_kernel_t *k;
    void *kopts;
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
    int bgzf;                  /* compress text output into BGZF blocks per shard */
    ss_store_t *store;         /* multi-rank: outputs wait here until written */
    ss_merge_t *merge;         /* multi-rank: the streaming merge (main thread) */
    atomic_int workers_live;   /* multi-rank: workers not yet finished */
    const ss_topo_t *topo;     /* NULL with --bind none */
    const ss_placement_t *place; /* [n_workers], read-only while workers run; or NULL */
    /* main thread only */
    ss_output_t *out;
    ss_progress_t *progress;
    uint64_t work_done;
    int work_counted;          /* multi-rank progress: shards whose work is in work_done */
    uint64_t bytes_written;
} engine_t;

typedef struct {
    engine_t *e;
    int id;
    pthread_t thread;
    int started;
    kstring_t z;               /* BGZF scratch, swapped with the shard buffer */
} worker_t;

/* Start n_workers threads (fewer if the system refuses some). 0, or -1 after ss_error(). */
int ss_engine_start_workers(engine_t *e, int n_workers, worker_t *w);
void ss_engine_join_workers(int n_workers, worker_t *w);
/* The kernel's trailer into t (nothing without one). 0 or -1. */
int ss_engine_trailer(engine_t *e, kstring_t *t);

/* ---- several ranks (engine_par.c) ---- */

/*
 * Collective, once the ranks agreed setup worked and the counter is open:
 * rank 0 creates the temporary output, every rank opens it for the merge.
 * Returns 0, or -1 on every rank (rank 0's output removed).
 */
int ss_engine_par_open(engine_t *e, const kstring_t *header);
/*
 * Run the workers, hand them shards and write their outputs as the merge
 * allows. Returns 0, or -1 (this rank failed, or another raised the stop flag).
 */
int ss_engine_par_run(engine_t *e, int n_workers, worker_t *w);
/* Collective: finish the merge (trailer, EOF, close); then rank 0 seals. 0 or -1 on all. */
int ss_engine_par_finish(engine_t *e, int rc);

#endif

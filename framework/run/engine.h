/*
 * engine.h -- the run's state, and the helpers the multi-rank path
 * (engine_par.c) shares with the engine. Main thread unless a comment says
 * otherwise.
 *
 * Private to framework/run/; nothing else includes it.
 */
#ifndef SS_ENGINE_H
#define SS_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>

#include "../out/funnel.h"
#include "../out/merge.h"
#include "../out/out_run.h"
#include "../out/out_shard.h"
#include "../out/output_file.h"
#include "../out/side.h"
#include "../out/store.h"
#include "../report/report.h"
#include "../resume/resume.h"
#include "../step/steps.h"
#include "../topology/topology.h"
#include "run.h"
#include "sched.h"

/* Progress updates, and (several ranks) the stop-flag check, at most this often. */
#define TICK_S 0.25

typedef struct engine_s engine_t;
typedef struct ss_acct_s ss_acct_t; /* the records read (account.c) */
typedef struct worker_s worker_t;
typedef struct census_state_s census_state_t;     /* census.c */
typedef struct ss_census_lazy_s ss_census_lazy_t; /* census.c */

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
    const void *run;    /* the kernel's run state, read-only */
    ss_out_run_t *orun; /* what the output is, read-only while workers run */
    const ss_sink_t *sink;
    ss_job_t *job;
    ss_shard_t *shards; /* read-only while workers run, but for shard i's `before`,
                         * which the worker running it sets (census.c) */
    int n_shards;
    ss_sched_t *sched;
    ss_ordered_t *ow;
    ss_worker_stats_t *stats; /* [n_workers] */
    ss_shard_rec_t *recs;     /* [n_shards]: recs[i] written by the worker that ran shard i */
    ss_spill_t *spills;       /* [n_shards]: shard i's leading bytes on disk, set by its worker
                               * before the put; the sink writes them first and closes them */
    ss_resume_rec_t *rrecs;   /* [n_shards] with -o FILE: shard i's CRC and counters, by the
                               * worker that ran it; read by the main thread after the put */
    ss_resume_t *resume;      /* the shards kept from an earlier run, this run's records;
                               * NULL unless the output is a resumable file */
    int n_kept;               /* shards it kept (the state goes once the output is sealed) */
    atomic_ullong reads_done;
    int fail_shard;              /* SEQSHARD_FAIL_SHARD, or -1 */
    int kill_shard;              /* SEQSHARD_KILL_SHARD, or -1 */
    int kill_rank;               /* SEQSHARD_KILL_RANK, or -1 */
    int stall_shard;             /* SEQSHARD_STALL_SHARD, or -1 */
    int delay_ms;                /* SEQSHARD_TEST_SHARD_DELAY_MS, or -1 */
    ss_store_t *store;           /* multi-rank: outputs wait here until written */
    ss_merge_t *merge;           /* multi-rank: the streaming merge (main thread) */
    ss_funnel_t *funnel;         /* multi-rank to standard output, instead (main thread) */
    ss_side_t *side;             /* side streams and reductions, or NULL (side_out.c) */
    ss_acct_t *acct;             /* the records read, checked at the end; NULL (account.c) */
    atomic_int workers_live;     /* multi-rank: workers not yet finished */
    const ss_topo_t *topo;       /* NULL with --bind none */
    const ss_placement_t *place; /* [n_workers], read-only while workers run; or NULL */
    /* main thread only */
    ss_output_t *out;
    ss_progress_t *progress;
    uint64_t work_done;
    uint64_t reads_told; /* multi-rank: the reads this rank has told rank 0 of */
    double told_at;      /* and when */
    uint64_t bytes_written;
    kstring_t summary; /* the kernel's summary text, encoded (owner rank), or empty */
    const char *counter_names[SS_KERNEL_COUNTERS + 1]; /* the kernel's, then its steps' */
    int n_kernel_counters;                             /* where the steps' counters start */
    /* the index from the shards' pieces (engine_index.c) */
    kstring_t *ipieces;     /* [n_shards] or NULL: shard i's piece, set by its worker before
                             * the put; freed by the main thread once added */
    uint64_t *ioffs;        /* [n_shards], several ranks: where this rank wrote shard i */
    ss_idx_merge_t *imerge; /* the output owner's index, or NULL: read the file back */
    double index_merge_s;   /* seconds the output owner spent adding pieces (a serial term) */
    ss_census_lazy_t *lazy; /* the census as the run goes (one rank), or NULL */
};

struct worker_s {
    engine_t *e;
    int id;
    ss_chain_t *chain;      /* the steps in front of each input, or NULL */
    census_state_t *census; /* its census state, made when a shard first needs it */
    pthread_t thread;
    int started;
};

/* What setup decided, for the run and the report. */
typedef struct {
    ss_shard_t *shards;
    int n, threads, n_workers, buffer_cap;
    uint64_t total_work;
    ss_topo_t *topo;
    ss_placement_t *place; /* [n_workers] */
    worker_t *w;
    kstring_t header;
    int bind;          /* the ss_bind_mode_t in effect */
    double workers_at; /* ss_now() when the workers were about to start: setup ends */
} setup_t;

/*
 * The kernel's census (census.c): every shard counted with n_workers threads on each
 * rank, then each shard's `before` set from the counts of the shards ahead of it.
 * Collective: 0 on every rank, or -1 on every rank after ss_error() on one. Main thread.
 */
int ss_census_run(engine_t *e, ss_shard_t *shards, int n, int n_workers);
/*
 * The kernel's gather (census.c): every shard's bytes, made with n_workers threads
 * on each rank, joined in plan order on every rank and handed to the kernel's
 * gathered hook. Collective, as ss_census_run. Main thread.
 */
int ss_gather_run(engine_t *e, int n, int n_workers);

/*
 * The census of a run of one rank (census.c), taken as the run goes: each
 * shard reports its count when its pass ends, and a shard whose `before`
 * is not known yet (shards ahead still running) gets it once a worker has
 * counted those shards with the kernel's census hook, in a census state of
 * its own. Workers call before, report and fill; init and destroy the main
 * thread. init: NULL after ss_error().
 */
ss_census_lazy_t *ss_census_lazy_init(int n);
void ss_census_lazy_destroy(ss_census_lazy_t *l);
/* Shard idx's before: the counts of the shards ahead, or SS_BEFORE_UNKNOWN. */
uint64_t ss_census_lazy_before(ss_census_lazy_t *l, int idx);
/* Shard idx's count. 0, or -1 after ss_error() when it differs from a census of it. */
int ss_census_lazy_report(ss_census_lazy_t *l, int idx, uint64_t count);
/*
 * Count every shard before idx that has no count yet, with *cs (made on first
 * use as worker id's; the worker closes it). 0, or -1 after ss_error().
 */
int ss_census_lazy_fill(engine_t *e, ss_census_lazy_t *l, int idx, census_state_t **cs, int id);
void ss_census_state_close(engine_t *e, census_state_t *cs);

/* Start n_workers threads (fewer if the system refuses some). 0, or -1 after ss_error(). */
int ss_engine_start_workers(engine_t *e, int n_workers, worker_t *w);
void ss_engine_join_workers(int n_workers, worker_t *w);
/*
 * The output's owner, once the temporary is open: the resume state (kept
 * shards, the new manifest). 0; -1 after ss_error(), with e->out closed
 * (kept when --resume was refused, removed otherwise) and NULL.
 */
int ss_engine_resume_start(engine_t *e, const kstring_t *header);

/* ---- the index from the shards' pieces (engine_index.c) ---- */

/* Setup: the piece slots when the output's index is built from pieces. 0, or -1 (no memory). */
int ss_engine_index_init(engine_t *e, int n_shards);
void ss_engine_index_destroy(engine_t *e);
/* Output owner, once the header (header_len bytes) is written and --resume decided: start
 * the merge, unless the file must be read back instead. */
void ss_engine_index_open(engine_t *e, uint64_t header_len);
/* One rank: shard idx was written at off: add its piece, free it. 0, or -1 after ss_error(). */
int ss_engine_index_written(engine_t *e, int idx, uint64_t off);
/* Several ranks: this rank wrote shard idx at off. */
void ss_engine_index_placed(engine_t *e, int idx, uint64_t off);
/* Several ranks, collective after the merge's end, before the counter closes (rc the same
 * on every rank): rank 0 adds every piece, asking the ranks that hold them. rc, or -1 on
 * every rank. */
int ss_engine_index_collect(engine_t *e, int rc);
/* Output owner, sealing: *data_end is where the EOF block starts. e->imerge NULL
 * afterwards means: read the file back. 0. */
int ss_engine_index_seal(engine_t *e, uint64_t *data_end);
/* Text .gz: its tabix index is CSI (a contig past 2^29 - 1, or -o FILE##idx##NAME.csi). */
int ss_engine_tabix_csi(const engine_t *e);

/* ---- every record read (account.c) ---- */

/*
 * The run's record accounting into *a: NULL when the run does not read
 * whole contigs of BAM inputs (regions, -l, standard input, CRAM only).
 * 0, or -1 after ss_error(). Main thread, before the workers.
 */
int ss_acct_init(ss_acct_t **a, const ss_job_t *job, const ss_shard_t *shards, int n);
/* Worker, before shard idx's first query: rd counts the records it owns. a may be NULL. */
void ss_acct_shard(const ss_acct_t *a, ss_reader_t *rd, const ss_shard_t *shards, int idx);
/* Worker, once, before destroying rd: add its tally. Any thread; a may be NULL. */
void ss_acct_add(ss_acct_t *a, const ss_reader_t *rd);
/*
 * Collective whatever rc is: sum the tallies over ranks and compare each
 * contig read whole with what the indexes count. rc, or -1 after ss_error()
 * (rank 0) when records were lost.
 */
int ss_acct_check(ss_acct_t *a, const engine_t *e, int rc);
/*
 * After ss_acct_check: the input records the run read, each once whatever the
 * shards' margins re-read, into *n: 1, or 0 when there is no whole tally
 * (regions, -l, standard input, CRAM inputs, a slot not read whole). a may be NULL.
 */
int ss_acct_records(const ss_acct_t *a, uint64_t *n);
void ss_acct_destroy(ss_acct_t *a);

/* ---- the end of a run (engine_end.c) ---- */

/*
 * The kernel's summary counters summed over workers and ranks, its text
 * encoded into e->summary on rank 0. Collective when the kernel has a
 * summary hook, whatever rc is. rc or -1.
 */
int ss_engine_summarize(engine_t *e, const setup_t *s, int rc);
/*
 * --report, collective: gather into *r (the caller releases it); rank 0
 * writes the JSON of a run that worked under its temporary name into *rep.
 * rc or -1.
 */
int ss_engine_report(engine_t *e, const setup_t *s, double t0, const ss_count_t *c0,
                     const ss_count_t *c1, int rc, ss_report_t *r, ss_output_t **rep);
/* Rank 0: a failed run's report under its name, at once. */
void ss_engine_report_failed(const engine_t *e, ss_report_t *r);
/* Setup failed on every rank (agreed): its report, collective. */
void ss_engine_setup_failed(engine_t *e, const setup_t *s, double t0);
/* The job log's final line: totals over every rank (collective; rc agreed). */
void ss_engine_log_done(const engine_t *e, const setup_t *s, int rc);
/* A failed run's final line with the first failing rank's error (collective when failed). */
void ss_engine_log_failed(int failed);

#endif

/*
 * report.h -- --report FILE.json: the per-worker, per-shard and per-rank
 * statistics a run collects, gathered to rank 0 (report_ranks.c) and written
 * as JSON (report.c, report_shards.c).
 *
 * Private to framework/; kernels and io/ must not include it. Used by
 * report/, run/ (the engine fills the report) and resume/ (a kept shard's
 * counters are a worker's statistics).
 */
#ifndef SS_REPORT_H
#define SS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "../../alloc/ss_count.h"
#include "../driver.h"
#include "../out/output_file.h"
#include "../ss_framework.h"
#include "../topology/topology.h"

/* The report's format: bumped when a field changes meaning or goes away. */
#define SS_REPORT_SCHEMA 3

typedef struct {
    uint64_t shards, reads, bases;
    double busy_s;
    uint64_t counts[SS_KERNEL_COUNTERS]; /* the kernel's, then its steps' (counter_names) */
    uint64_t summary[SS_SUMMARY_N]; /* the kernel's summary counters, over this worker's shards */
} ss_worker_stats_t;

/*
 * One shard as it ran, for the report's "shard_records". Written by the
 * worker that processed it (each shard by exactly one), read by the main
 * thread after the join; fixed size, so ranks gather them as bytes.
 */
typedef struct {
    int32_t idx, worker, rank, done;
    double beg, end;       /* CLOCK_REALTIME seconds since the epoch */
    uint64_t reads, bytes; /* records the kernel read; bytes of the shard's output */
} ss_shard_rec_t;

/* One rank's summary, gathered to rank 0 for the report. */
typedef struct {
    uint64_t shards, reads, bases, bytes_out;
    double busy_s, wall_s, user_s, sys_s;
    int64_t peak_rss_bytes;
    int threads;
    uint64_t counts[SS_KERNEL_COUNTERS];
    char host[64];
    char error[512]; /* this rank's first error, "" if none */
} ss_rank_stats_t;

typedef struct {
    const char *kernel;
    const char *const *counter_names; /* the kernel's counters, then its steps', or NULL */
    const char *kernel_info;          /* the kernel's describe() line, or NULL */
    const ss_common_opts_t *opts;     /* inputs, output, shard size, binding asked for */
    sam_hdr_t *header;                /* contig names for the shard records */
    const ss_shard_t *plan;           /* [n_shards] */
    int threads;
    int n_shards;
    int n_workers;
    const ss_worker_stats_t *workers;
    double wall_s, setup_s;
    double index_merge_s; /* rank 0: adding the shards' index pieces (engine_index.c) */
    uint64_t bytes_written;
    uint64_t est_work_total;
    uint64_t input_records;      /* the input's records, each once (has_input_records) */
    int has_input_records;       /* 0: no whole-file tally (regions, -l, stdin, CRAM) */
    int buffer_cap, buffer_peak; /* shard output buffers: the cap and the most at once */
    size_t buffer_budget, buffer_peak_bytes; /* their memory budget and most capacity held */
    const char *bind_mode;                   /* the mode in effect ("none" when not pinned) */
    const ss_placement_t *place;             /* [n_workers] rank 0's workers, or NULL */
    /* Allocator calls around the workers' run (libsscount.so); NULL: not measured. */
    const ss_count_t *count_before, *count_after;
    /* this rank's shard records: recs[i] for shard i, done or not ([n_shards]) */
    const ss_shard_rec_t *recs;
    /* filled by ss_report_gather on rank 0, freed by ss_report_release */
    ss_rank_stats_t *ranks; /* [n_ranks], every rank (one with a single rank) */
    int n_ranks;
    ss_shard_rec_t *done; /* [n_done] the shards every rank finished, by index */
    int n_done;
    int failed;               /* the run failed: "status": "failed" and "error" */
    int resumed;              /* --resume was given */
    int n_reused;             /* shards kept from the interrupted run, not recomputed */
    ss_worker_stats_t reused; /* their counters (reads, bases, kernel counts) */
} ss_report_t;

/*
 * Collective over ranks: gather every rank's summary and finished shard
 * records into r on rank 0. Returns 0, or -1 (nothing gathered). Main thread.
 */
int ss_report_gather(ss_report_t *r);
void ss_report_release(ss_report_t *r);
/*
 * Rank 0: write the JSON report of a run that worked under path's temporary
 * name: the caller commits it (renames it into place) once the output is in
 * place, or aborts it. NULL after ss_error(). Main thread.
 */
ss_output_t *ss_report_write(const char *path, const ss_report_t *r);
/*
 * Rank 0: write the report of a failed run under its own name at once, with
 * "status": "failed" and the first error. 0, or -1 after ss_error() (then no
 * report). Main thread.
 */
int ss_report_write_failed(const char *path, ss_report_t *r);
/* The first error of the run: the lowest rank's that had one, else this process's. */
const char *ss_report_error(const ss_report_t *r);

/* JSON helpers shared by the report's files: a string with escapes, "null" for NULL. */
void ss_json_str(FILE *fp, const char *s);
/* The report's "shard_records", "binding" and "hosts" members, each ending with ",\n". */
void ss_report_shards_json(FILE *fp, const ss_report_t *r);
void ss_report_binding_json(FILE *fp, const ss_report_t *r);
void ss_report_hosts_json(FILE *fp, const ss_report_t *r);

#endif

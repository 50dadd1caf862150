/*
 * ss_internal.h -- private to framework/: the pieces the engine is built from
 * (output file, progress line, --report JSON, time) and hooks the CLI sets.
 * Kernels and io/ must not include this file.
 */
#ifndef SS_INTERNAL_H
#define SS_INTERNAL_H

#include <stdint.h>

#include "ss_framework.h"

/* ---- CLI context (cli.c sets it, options.c and report.c read it) ---- */

/* The command shown in usage errors ("pileup"); NULL before a kernel is chosen. Main thread. */
void ss_cli_set_command(const char *kernel_name, int argc, char **argv);
const char *ss_cli_command(void);
/* The whole command line as the user typed it (argv joined by spaces); "" if unset. */
const char *ss_cli_cmdline(void);

/* --shard-size values: digits, optional fraction, k/m/g (x1000). 0 ok, -1 malformed. */
int ss_parse_size(const char *s, hts_pos_t *out);

/* The job's first input, open on the main thread for planning only (job.c). */
samFile *ss_job_file(const ss_job_t *job);
hts_idx_t *ss_job_index(const ss_job_t *job);
const char *ss_job_kernel(const ss_job_t *job);

/* Seconds on a monotonic clock. Any thread. */
double ss_now(void);

/* ---- output file: temporary name, renamed on success (output.c) ---- */

typedef struct ss_output_s ss_output_t;

/*
 * Open the destination: NULL or "-" means stdout. For a path, a temporary
 * FILE.tmp.<pid>.XXXXXX is created in the same directory (so the rename is
 * atomic) and removed again on abort or on SIGINT/SIGTERM. Returns NULL after
 * ss_error(). Main thread.
 */
ss_output_t *ss_output_open(const char *path);
/* Write all of buf. Returns 0, or -1 after ss_error() named the file. Main thread. */
int ss_output_write(ss_output_t *o, const void *buf, size_t len);
/* Close and rename into place; frees o. Returns 0, or -1 after ss_error() (temp removed). */
int ss_output_commit(ss_output_t *o);
/* Close, remove the temporary file, free o. Accepts NULL. Never touches an existing FILE. */
void ss_output_abort(ss_output_t *o);
uint64_t ss_output_bytes(const ss_output_t *o);
/* The 28-byte empty BGZF block that ends every BGZF/BAM file (SAM spec 4.1.2). */
extern const unsigned char ss_bgzf_eof[28];

/* ---- progress line on stderr (progress.c) ---- */

typedef struct ss_progress_s ss_progress_t;

/*
 * Start reporting. Returns NULL (and reports nothing) when quiet or not the
 * printing rank. stderr on a TTY: one live line redrawn at most 4 times a
 * second; otherwise one line every 30 s (SEQSHARD_PROGRESS_INTERVAL seconds).
 */
ss_progress_t *ss_progress_start(int n_shards, uint64_t total_work, int quiet, int is_rank0);
/* Record written shards and reads so far; prints when due. Main thread. NULL is a no-op. */
void ss_progress_update(ss_progress_t *p, int shards_done, uint64_t work_done, uint64_t reads);
/* Final line (TTY: finish the live line). Frees p. NULL is a no-op. */
void ss_progress_finish(ss_progress_t *p, int ok);

/* ---- --report FILE.json (report.c) ---- */

typedef struct {
    uint64_t shards, reads, bases;
    double busy_s;
} ss_worker_stats_t;

typedef struct {
    const char *kernel;
    int threads;
    int n_shards;
    int n_workers;
    const ss_worker_stats_t *workers;
    double wall_s;
    uint64_t bytes_written;
    uint64_t est_work_total;
} ss_report_t;

/* Write the JSON report to path. Returns 0, or -1 after ss_error(). Main thread. */
int ss_report_write(const char *path, const ss_report_t *r);

/* Version strings shared by --version and --report (cli.c). buf gets the MPI library line. */
void ss_mpi_version(char *buf, size_t size);

#endif

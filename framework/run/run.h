/*
 * run.h -- what the run does around the engine on the main thread: the
 * clocks (progress.c, runlog.c), terminating signals (signals.c), Slurm
 * defaults (slurm_env.c), the progress line (progress.c) and the batch log's
 * lines (runlog.c).
 *
 * Private to framework/; kernels and io/ must not include it. Used by run/,
 * cli/cli.c (signals, the log), out/ (files a signal removes) and report/
 * (time stamps).
 */
#ifndef SS_RUN_H
#define SS_RUN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Seconds on a monotonic clock. Any thread. */
double ss_now(void);

/* ---- terminating signals (signals.c) ---- */

/*
 * Catch SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2, SIGALRM, SIGPIPE, SIGXCPU,
 * SIGXFSZ, SIGVTALRM (not those ignored at start): remove the registered
 * files, print "seqshard: interrupted by SIG...; no output written" (nothing
 * when quiet, or for SIGPIPE) and exit 128 + the signal. Main thread, once.
 */
void ss_signals_install(int quiet);
/* Unlink path if a signal ends the process. A slot >= 0, or -1 (none free, or path too
 * long). Main thread. */
int ss_signals_remove_on_exit(const char *path);
/* Stop removing slot's file (renamed into place, or already removed). -1 is a no-op. */
void ss_signals_forget(int slot);
/* The ranks agreed the run failed, and the failing rank said why. mpirun ends
 * the other ranks with SIGTERM once one exits non-zero: from here on a signal
 * removes the temporary files without a line that would blame the signal. */
void ss_signals_run_failed(void);
/* on: the output goes straight to its destination, so a signal says it is incomplete. */
void ss_signals_output_direct(int on);
/* The output can be resumed: the signal line says to rerun with --resume. Any thread. */
void ss_signals_resumable(int on);
/* -o, named by the line of a signal that concerns the output (SIGXFSZ). Main thread, once. */
void ss_signals_output_name(const char *path);
/* Hold the caught signals off this thread (around a rename and its forget), and restore. */
void ss_signals_block(sigset_t *saved);
void ss_signals_restore(const sigset_t *saved);

/* ---- Slurm defaults (slurm_env.c) ---- */

/* Workers from SLURM_CPUS_PER_TASK, capped at cores; 0 when unset or malformed. */
int ss_slurm_cpus(int cores);
/* SLURM_TMPDIR, or TMPDIR inside a Slurm job, if a writable directory; else NULL. */
const char *ss_slurm_tmpdir(void);

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
/* Whether the next update prints: a caller whose figures cost work gathers them only then. */
int ss_progress_due(const ss_progress_t *p);
/* Final line (TTY: finish the live line). Frees p. NULL is a no-op. */
void ss_progress_finish(ss_progress_t *p, int ok);

/* ---- the batch log's start and final lines (runlog.c) ---- */

/*
 * The run's log lines go to stderr only on rank 0, when stderr is not a
 * terminal and --quiet was not given. Main thread. ss_log_open starts the
 * clock; ss_log_start prints what runs; ss_log_done or ss_log_failed prints
 * the final line (the first of them to be called; later calls are no-ops).
 */
void ss_log_open(const char *kernel, int quiet, int is_rank0);
void ss_log_start(int n_inputs, int threads, int ranks, int shards);
/* Totals over every rank: shards in the plan, reads, output bytes, largest peak RSS (bytes). */
void ss_log_done(int shards, uint64_t reads, uint64_t bytes, int64_t peak_rss, int reused);
/* The final line of a failed run, with why (NULL: the first error this process saw). */
void ss_log_failed(const char *why);
/* "2026-12-01T08:30:05Z": now, UTC, for log lines and the report. Any thread. */
void ss_log_stamp(char *buf, size_t size);
/* The same for epoch seconds t. */
void ss_log_stamp_at(char *buf, size_t size, double t);
/* Wall-clock (CLOCK_REALTIME) seconds since the epoch. Any thread. */
double ss_wall_now(void);
/* When ss_log_open ran: epoch seconds, and seconds on the monotonic clock (ss_now). */
double ss_log_opened_wall(void);
double ss_log_opened(void);

#endif

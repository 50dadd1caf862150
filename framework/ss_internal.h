/*
 * ss_internal.h -- private to framework/: the pieces the engine is built from
 * (output file, progress line, --report JSON, time) and hooks the CLI sets.
 * Kernels and io/ must not include this file.
 *
 * Every sub-folder of framework/ may include it; a header only one or two of
 * them share lives in the folder that owns it (out/ss_out.h, run/ss_engine.h).
 */
#ifndef SS_INTERNAL_H
#define SS_INTERNAL_H

#include <signal.h>
#include <stdint.h>

#include "../alloc/ss_count.h"
#include "ss_framework.h"
#include "topology/ss_topology.h"

/* ---- CLI context (cli.c sets it, options.c and report.c read it) ---- */

/* The command shown in usage errors ("pileup"); NULL before a kernel is chosen. Main thread. */
void ss_cli_set_command(const char *kernel_name, int argc, char **argv);
/* The whole command line as the user typed it (argv joined by spaces); "" if unset. */
const char *ss_cli_cmdline(void);
/* The kernel's arguments as ss_cli_set_command got them (argv[0] the kernel's name). */
char **ss_cli_argv(int *argc);

/* --shard-size values: digits, optional fraction, k/m/g (x1000). 0 ok, -1 malformed. */
int ss_parse_size(const char *s, hts_pos_t *out);

/*
 * Refuse a SEQSHARD_* variable whose value its reader could not use: 0, or
 * -1 after ss_error() naming the variable and what it accepts (env.c). Main
 * thread, before the job opens.
 */
int ss_env_check(void);
/* Whether variable `name` is "1". */
int ss_env_on(const char *name);

/* The job's first input, open on the main thread for planning only (job.c). */
samFile *ss_job_file(const ss_job_t *job);
hts_idx_t *ss_job_index(const ss_job_t *job);
/* What the BAM inputs' indexes count, as a run's tally (ss_io_tally_expect); NULL: no BAM. */
const uint64_t *ss_job_tally_want(const ss_job_t *job);

/* ---- record steps (framework/step/) ---- */

/* The key of step i's --NAME option: SS_OPT_STEP_FLAG + i. */
#define SS_OPT_STEP_FLAG 0x1800

/* The program's steps (ss_main), kept in chain order. 0, or -1 after a message (too many). */
int ss_steps_register(const ss_step_t *const *steps, int n);
int ss_steps_n(void);
const ss_step_t *ss_steps_get(int i); /* by registry index, chain order; NULL out of range */
int ss_steps_find(const char *name);  /* registry index of the step called name, or -1 */
/* Each step's option list (--NAME, then its own), made when the registry is set. */
void ss_steps_build_opts(void);
/* co's options of step i, made with its defaults on first use; NULL after a message. */
void *ss_steps_opts(ss_common_opts_t *co, int i);
void ss_steps_opts_free(ss_common_opts_t *co);
/*
 * Check the job's steps against it and keep the chain's reach (the sums of
 * theirs) in it. 0, or -1 after ss_error(). Main thread, before the kernel's
 * prepare. ss_job_step_reach: that reach (job.c keeps it).
 */
int ss_job_steps_prepare(ss_job_t *job);
ss_step_reach_t ss_job_step_reach(const ss_job_t *job);
void ss_job_set_step_reach(ss_job_t *job, ss_step_reach_t r);
/*
 * The counters a run reports: the kernel's names, then its steps', into
 * out[0..max) NULL-terminated. Returns how many.
 */
int ss_job_counter_names(const ss_job_t *job, const char *const *kernel_names, const char **out,
                         int max);
/*
 * A worker's chains: each input's steps, opened in front of its file in rd
 * (ss_reader_set_front, reach: the chain's halo); their counters go to
 * counts[first_counter...]. NULL with no steps, or after ss_error() (then
 * ss_error_raised()). Worker thread; ss_chain_close accepts NULL.
 */
typedef struct ss_chain_s ss_chain_t;
ss_chain_t *ss_chain_open(const ss_job_t *job, ss_reader_t *rd, hts_pos_t reach, int first_counter);
void ss_chain_close(ss_chain_t *c);
/* Shard sh starts: each step counts what it decides for sh's own range from now on. */
void ss_chain_shard(ss_chain_t *c, const ss_shard_t *sh);
/* Add the shard's step counters to counts[0..n_counts). */
void ss_chain_counts(const ss_chain_t *c, uint64_t *counts, int n_counts);
/*
 * The command as parsed and documented: cmd with the steps' option groups
 * (before its framework group) when it takes steps, else cmd. tmp holds the
 * copy. Main thread.
 */
typedef struct {
    ss_cmd_t cmd;
    ss_opt_group_t groups[32];
} ss_cmd_steps_t;
const ss_cmd_t *ss_cmd_with_steps(const ss_cmd_t *cmd, ss_cmd_steps_t *tmp);
/* Step i's option o (one of ss_cmd_with_steps' step groups), or -1: not a step's. */
int ss_steps_owner(const ss_opt_t *o);
/* A step's option or --NAME: 0, or -1 after a message. */
int ss_steps_apply(ss_common_opts_t *co, int step, const ss_opt_t *o, const char *arg,
                   const char *cmd);
/* After parsing: a command that is a step turns it on; options of a step left off are refused. */
int ss_steps_begin(const ss_cmd_t *cmd, ss_common_opts_t *co);
int ss_steps_end(const ss_cmd_t *cmd, ss_common_opts_t *co);

/* ---- the files a run reads and writes (run_files.c) ---- */

/* One file of a run: its path, what it is in messages, and a key. */
typedef struct {
    char *path;      /* owned */
    char *role;      /* owned: "an input", "the --known VCF's index", "-o" */
    const char *key; /* static. Reads: its --resume identity line's key ("input", "index",
                      * "reference", "bed", "file"); writes: the option naming it ("-o") */
} ss_run_file_t;

typedef struct {
    ss_run_file_t *f;
    int n, m;
} ss_run_files_t;

/*
 * Every file the run may read: each input and every name htslib may load its
 * index from, the reference with its .fai and .gzi, the -l/-b BED, then the
 * -b lists and the kernel's files (ss_common_add_read, with their .tbi/.csi
 * when indexed), in that order; names that do not exist are listed too.
 * ss_run_writes: every file it may write: the side streams (a BED.gz one
 * with its .csi) and the kernel's other files (ss_common_add_write), -o with
 * the index names beside it when it is indexed, --report. 0, or -1 after
 * ss_error() (out of memory; *l is then empty). Free with ss_run_files_free.
 * Main thread.
 */
int ss_run_reads(const ss_common_opts_t *o, ss_run_files_t *l);
int ss_run_writes(const ss_common_opts_t *o, const ss_out_spec_t *spec, ss_run_files_t *l);
void ss_run_files_free(ss_run_files_t *l);

/*
 * Check every path the run writes before any work (outcheck.c): -o and
 * --report can be created (with an index name that many bytes longer beside
 * an indexed -o, ss_output_index_ext_len), --tmp-dir is a writable
 * directory, no file the run writes (ss_run_writes) is one it reads
 * (ss_run_reads), and no two of them are the same file. 0, or -1 after
 * ss_error(). Main thread.
 */
int ss_outputs_check(const ss_common_opts_t *o, const ss_out_spec_t *spec);

/* Seconds on a monotonic clock. Any thread. */
double ss_now(void);

/* ---- output file: temporary name, renamed on success (output.c) ---- */

typedef struct ss_output_s ss_output_t;

/*
 * Open the destination: NULL or "-" means stdout, and so does a path naming
 * the file our stdout already has open (/dev/stdout, /proc/self/fd/1); a
 * device or FIFO is written in place. For a regular file (new, existing, or
 * the target of a symlink) a temporary .FILE.tmp.XXXXXX is created beside it
 * (so the rename is atomic), removed again on abort or on a terminating
 * signal. Returns NULL after ss_error(). Main thread.
 */
ss_output_t *ss_output_open(const char *path);
/*
 * The index goes to index_path (-o FILE##idx##INDEX) instead of beside FILE;
 * indexes beside FILE are still removed when FILE is replaced. 0, or -1 after
 * ss_error(). Main thread, before the index is built.
 */
int ss_output_name_index(ss_output_t *o, const char *index_path);
/*
 * The run's -o output: as ss_output_open, but a regular file's temporary is
 * always .FILE.tmp.seqshard (SS_OUTPUT_TMP_FIXED), opened read-write without
 * truncating it (what an earlier run left there may be resumed), locked
 * against a second run writing the same FILE, and kept when a signal ends the
 * process; abort still removes it. NULL after ss_error(). Main thread.
 */
ss_output_t *ss_output_open_resumable(const char *path);
/* The length of the longest index suffix the run writes beside -o (output): .tbi or .csi
 * for .gz text, .csi for BAM and .crai for CRAM with --write-index; 0 for none. */
int ss_output_index_ext_len(const ss_out_spec_t *spec, const char *output);
#define SS_OUTPUT_TMP_FIXED ".tmp.seqshard"
/* Room NAME_MAX keeps after BASE for the names beside it (".BASE.resume.rank" + 10 digits). */
#define SS_OUTPUT_RESUME_SUFFIX_MAX 23
/* The descriptor written to (-1 for NULL). */
int ss_output_fd(const ss_output_t *o);
/* Move past len bytes already in the file (a shard kept by --resume). 0 or -1 after ss_error(). */
int ss_output_skip(ss_output_t *o, uint64_t len);
/* Cut a temporary file to len bytes (an earlier run's may be longer). 0 or -1 after ss_error(). */
int ss_output_set_length(ss_output_t *o, uint64_t len);
/* Close and free, leaving the temporary file where it is (--resume refused). Accepts NULL. */
void ss_output_close_keep(ss_output_t *o);
/* Write all of buf. Returns 0, or -1 after ss_error() named the file. Main thread. */
int ss_output_write(ss_output_t *o, const void *buf, size_t len);
/* Close and rename into place; frees o. Returns 0, or -1 after ss_error() (temp removed). */
int ss_output_commit(ss_output_t *o);
/* Close, remove the temporary file, free o. Accepts NULL. Never touches an existing FILE. */
void ss_output_abort(ss_output_t *o);
uint64_t ss_output_bytes(const ss_output_t *o);

/* The temporary path being written (NULL for stdout or in-place output). */
const char *ss_output_tmp_path(const ss_output_t *o);
/*
 * Multi-rank, on every rank but the one that opened it: make a terminating
 * signal remove tmp_path (and an index beside it) here too, as the owner's does, so a run
 * whose rank 0 was killed leaves nothing behind; with keep (a resumable temporary) only
 * the index names are removed.
 * Returns 0, or -1 (path too long, or a file is already guarded here). Main
 * thread; the path is stored before the handler is armed, so a signal never
 * sees half of it.
 */
int ss_output_guard(const char *tmp_path, int keep);
/* Stop guarding: the owner renamed or removed the file. No-op when nothing is guarded. */
void ss_output_unguard(void);
/*
 * Build a tabix index (.tbi, or .csi when csi) of the finished temporary
 * file; commit then renames it beside FILE, abort removes it. Main thread.
 * Returns 0 or -1 after ss_error().
 */
int ss_output_index_tabix(ss_output_t *o, int csi);
/*
 * A new, empty file of ours for an index builder to write the index of the
 * finished temporary file into (htslib's fnidx; it opens by name, and this
 * name cannot lead elsewhere): commit renames it to FILE + ext (".tbi",
 * ".csi" or ".crai"), after removing the indexes of the old FILE; abort
 * removes it. One per output. NULL when the output is not a temporary file
 * (standard output, a device: nothing said), or after ss_error(). o owns the
 * name. Main thread.
 */
const char *ss_output_index_tmp(ss_output_t *o, const char *ext);
/*
 * Files in a directory that may be shared (contract 9): nothing is opened
 * through a name another user made. ss_output_open_own opens path (flags as
 * open's, without O_CREAT) only if it is a regular file this user owns with
 * no other link: fd, or -1 with errno ENOENT (nothing there), ELOOP (a
 * symbolic link), EPERM (another kind of file, another user's, or linked
 * elsewhere) or open's. ss_output_create_own creates path with
 * O_EXCL|O_NOFOLLOW, replacing only such a file of ours (a killed run's):
 * fd, or -1 with errno EEXIST (something else is there) or open's. No
 * message: ss_output_own_error says in one line what errno meant for path.
 * Any thread.
 */
int ss_output_open_own(const char *path, int flags);
int ss_output_create_own(const char *path, int flags);
void ss_output_own_error(const char *shown, const char *path, int err);


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

/* ---- BGZF text output (compress.c) ---- */

/* 1 if path asks for BGZF-compressed text (.gz, .bgz). */
int ss_bgzf_wanted(const char *path);
/* Compress in[0..len) into whole BGZF blocks in *out (reset first). 0 or -1. Any thread. */
int ss_bgzf_compress_ks(const char *in, size_t len, kstring_t *out, int level);
/* `tabix -s1 -b2 -e2 [--csi]` on path, the index written to idx_path (a name the caller
 * created). 0 or -1 after ss_error naming final_path. */
int ss_tabix_index(const char *path, const char *idx_path, const char *final_path, int csi);

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

/* ---- --report FILE.json (report.c, report_shards.c, report_ranks.c) ---- */

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
    double beg, end;          /* CLOCK_REALTIME seconds since the epoch */
    uint64_t reads, bytes;    /* records the kernel read; bytes of the shard's output */
} ss_shard_rec_t;

/* One rank's summary, gathered to rank 0 for the report. */
typedef struct {
    uint64_t shards, reads, bases, bytes_out;
    double busy_s, wall_s, user_s, sys_s;
    int64_t peak_rss_bytes;
    int threads;
    uint64_t counts[SS_KERNEL_COUNTERS];
    char host[64];
    char error[512];          /* this rank's first error, "" if none */
} ss_rank_stats_t;

typedef struct {
    const char *kernel;
    const char *const *counter_names; /* the kernel's counters, then its steps', or NULL */
    const char *kernel_info; /* the kernel's describe() line, or NULL */
    const ss_common_opts_t *opts; /* inputs, output, shard size, binding asked for */
    sam_hdr_t *header;            /* contig names for the shard records */
    const ss_shard_t *plan;       /* [n_shards] */
    int threads;
    int n_shards;
    int n_workers;
    const ss_worker_stats_t *workers;
    double wall_s, setup_s;
    uint64_t bytes_written;
    uint64_t est_work_total;
    int buffer_cap, buffer_peak;  /* shard output buffers: the cap and the most at once */
    const char *bind_mode;        /* the mode in effect ("none" when not pinned) */
    const ss_placement_t *place;  /* [n_workers] rank 0's workers, or NULL */
    /* Allocator calls around the workers' run (libsscount.so); NULL: not measured. */
    const ss_count_t *count_before, *count_after;
    /* this rank's shard records: recs[i] for shard i, done or not ([n_shards]) */
    const ss_shard_rec_t *recs;
    /* filled by ss_report_gather on rank 0, freed by ss_report_release */
    ss_rank_stats_t *ranks;       /* [n_ranks], every rank (one with a single rank) */
    int n_ranks;
    ss_shard_rec_t *done;         /* [n_done] the shards every rank finished, by index */
    int n_done;
    int failed;                   /* the run failed: "status": "failed" and "error" */
    int resumed;                  /* --resume was given */
    int n_reused;                 /* shards kept from the interrupted run, not recomputed */
    ss_worker_stats_t reused;     /* their counters (reads, bases, kernel counts) */
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

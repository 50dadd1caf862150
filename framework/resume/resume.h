/*
 * resume.h -- the resume manifest (resume_manifest.c) and the run's resume
 * state (resume.c), so that `--resume` after any kill reuses the shards an
 * interrupted run wrote and recomputes the rest.
 *
 * A manifest sits beside the temporary output (.BASE.tmp.seqshard): .BASE.resume
 * holds a text header (format version, a random run id, and the identity: the
 * kernel, the output, a hash of the options, of the plan and of the output
 * header, each input's size and modification time) followed by fixed-size
 * binary records, one per shard written (offset, size, CRC32 of its bytes, its
 * counters), each with its own checksum. Under mpirun rank r > 0 appends its
 * records to .BASE.resume.rankR, whose header holds only the run id. Records
 * are appended after the shard's bytes reached the disk (fdatasync first), so
 * a record never names bytes that a crash could lose; a torn last record fails
 * its checksum and is ignored. On resume every record's bytes are read back and
 * checked against its CRC before the shard is trusted.
 *
 * Main thread only, unless a comment says otherwise.
 *
 * Private to framework/resume/ and framework/run/; kernels and io/ must not include it.
 */
#ifndef SS_RESUME_H
#define SS_RESUME_H

#include <stdint.h>

#include "../out/output_file.h"
#include "../report/report.h"

#define SS_RESUME_VERSION 1
/* bytes of one encoded record: its fields, the counters, the summary and its checksum */
#define SS_RESUME_REC_SIZE (48 + 8 * SS_KERNEL_COUNTERS + 8 * SS_SUMMARY_N)

/* One shard as written: where, how much, its CRC and its counters. */
typedef struct {
    uint32_t idx;
    uint64_t off, size;
    uint32_t crc; /* CRC-32 of the size bytes at off (ss_resume_crc32) */
    uint64_t reads, bases;
    uint64_t counts[SS_KERNEL_COUNTERS];
    uint64_t summary[SS_SUMMARY_N];
} ss_resume_rec_t;

/* ---- resume_manifest.c: the file format ---- */

/* CRC-32 (zlib's) of len bytes, continuing crc (0 to start): libdeflate's when built with it. */
uint32_t ss_resume_crc32(uint32_t crc, const void *buf, size_t len);

/* Encode r into out (SS_RESUME_REC_SIZE bytes, host byte order, with a checksum). */
void ss_resume_rec_encode(const ss_resume_rec_t *r, unsigned char *out);
/* Decode; 0, or -1 when the bytes are not a whole, intact record. */
int ss_resume_rec_decode(const unsigned char *in, ss_resume_rec_t *r);

/*
 * Read a manifest: its run id, its identity text (malloc'ed, caller frees;
 * "" for a rank's record file) and its intact records up to the first bad
 * one (malloc'ed, caller frees; may be NULL when *n is 0). Returns 0; -1 when
 * the file does not exist; -2 when it is not a manifest of this version or
 * its header is damaged (errno-free: nothing is reported).
 */
int ss_resume_read(const char *path, uint64_t *nonce, char **identity, ss_resume_rec_t **recs,
                   int *n);

/* The first line where two identity texts differ: its key ("input", "options", ...). */
typedef struct {
    char key[16];
    char was[512], now[512]; /* the two lines ("" where one text ended) */
} ss_resume_diff_t;
/* 0 when equal, 1 and *d filled when not. */
int ss_resume_identity_diff(const char *was, const char *now, ss_resume_diff_t *d);

/*
 * An append-only record file being written (one per rank). A thread of its
 * own appends the queued records every SS_RESUME_SYNC_S, after syncing the
 * output, so the writer never waits for the disk.
 */
typedef struct ss_resume_log_s ss_resume_log_t;

/*
 * Create path (through path.new and a rename, so an older manifest is
 * replaced whole or not at all) with the header (nonce, identity; NULL for
 * a rank's file) and n initial records, synced, and start its thread.
 * data_fd is the output's descriptor (-1: none), synced before each batch
 * of records is appended. NULL after ss_error().
 */
ss_resume_log_t *ss_resume_log_create(const char *path, uint64_t nonce, const char *identity,
                                      int data_fd, const ss_resume_rec_t *init, int n);
/* Queue a record: its shard's bytes are written (not yet synced). 0, or -1 after ss_error()
 * (out of memory, or an append already failed). Main thread. */
int ss_resume_log_add(ss_resume_log_t *l, const ss_resume_rec_t *r);
/* Sync and append what is queued now, in the caller. 0 or -1 after ss_error(). */
int ss_resume_log_flush(ss_resume_log_t *l);
/* Stop the thread and close; records still queued are dropped (the file stays). Accepts NULL. */
void ss_resume_log_close(ss_resume_log_t *l);

/* How often queued records are synced and appended: about the most a kill loses. */
#define SS_RESUME_SYNC_S 0.5

/* ---- resume.c: the run's resume state ---- */

typedef struct ss_resume_s ss_resume_t;

/*
 * Setup, every rank: refuse --resume where it cannot work (standard output,
 * a FIFO or device, standard input). 0, or -1 after ss_error().
 */
int ss_resume_check_opts(const ss_common_opts_t *o, int stream_input);

/* What the run is: the identity's parts. Borrowed for the call. */
typedef struct {
    const char *kernel;
    const ss_common_opts_t *opts;
    const ss_shard_t *shards;
    int n_shards;
    const char *header; /* the output header's bytes: shard 0 starts after them */
    size_t header_len;
    int want; /* --resume given */
} ss_resume_args_t;

/*
 * The output's owner (rank 0), right after ss_output_open made the
 * temporary: with want, read the manifest beside it, refuse (NULL after
 * ss_error() saying what changed; nothing is removed) when it belongs to
 * another command, inputs or plan, and keep each recorded shard whose bytes
 * match its CRC; without, start from scratch (a warning when an earlier
 * run's files are found). Then write a new manifest that holds the kept
 * shards. NULL after ss_error(); *refused is then 1 when the earlier run's
 * files did not match (they should stay), 0 when something failed.
 */
ss_resume_t *ss_resume_start(const ss_resume_args_t *a, ss_output_t *out, int *refused);
/*
 * Collective under mpirun (every rank, after ss_merge_open): give every
 * rank the kept shards and the run id; each rank other than 0 creates its
 * record file beside tmp (the temporary output's path). *r is rank 0's state
 * on rank 0, NULL elsewhere on entry; on return every rank has one. 0, or -1
 * on every rank.
 */
int ss_resume_share(ss_resume_t **r, int n_shards, const char *tmp);
/* Was shard idx kept from an earlier run? Any thread (read-only once the workers run). */
int ss_resume_kept(const ss_resume_t *r, int idx);
/* A kept shard's offset and size; 0, or -1 when idx was not kept. */
int ss_resume_kept_at(const ss_resume_t *r, int idx, uint64_t *off, uint64_t *size);
/* The kept shards' flags, [n_shards], for the schedulers; NULL when none. Read-only. */
const unsigned char *ss_resume_kept_map(const ss_resume_t *r);
/* How many shards were kept. */
int ss_resume_n_kept(const ss_resume_t *r);
/* The kept shards' counters summed (reads, bases, counts, summary); zeros when none. */
void ss_resume_kept_stats(const ss_resume_t *r, ss_worker_stats_t *s);
/* Shard rec->idx was written at rec->off: record it (queued; synced in batches). 0 or -1. */
int ss_resume_note(ss_resume_t *r, const ss_resume_rec_t *rec);
/*
 * Stop recording: the log's thread is joined and its file closed, so it
 * syncs the output's descriptor no more. Call before that descriptor is
 * closed (the output committed or aborted). Accepts NULL.
 */
void ss_resume_quiesce(ss_resume_t *r);
/*
 * The run ended: with ok (the output is in place) or after an error, the
 * manifest and every rank's record file are removed (rank 0; other ranks
 * only close theirs). Then free. Accepts NULL.
 */
void ss_resume_end(ss_resume_t *r, int remove);

#endif

/*
 * output_file.h -- a file the run writes: created under a temporary name and
 * renamed into place on success, removed on failure or a signal
 * (output_file.c).
 *
 * Private to framework/; kernels and io/ must not include it. Used by out/,
 * run/ (the -o output), report/ (the JSON file) and resume/ (files of our own).
 */
#ifndef SS_OUTPUT_FILE_H
#define SS_OUTPUT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "../driver.h"

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

#endif

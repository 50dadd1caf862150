/*
 * ss_diag.h -- why an input cannot be used, told the same way by every
 * kernel and in samtools' words: a file that does not open or decode, an
 * index that does not load (read_diag.c), a CRAM without its reference
 * (cram_diag.c), a reader's input failing in a shard (reader_diag.c); and
 * whether an index describes the file beside it (index_check.c, crai_check.c,
 * and the run's tally against the BAM indexes' counts).
 *
 * Used by the framework's job (it checks every input and index at open) and
 * its accounting (the tally), and by kernels that explain a failed read.
 */
#ifndef SS_DIAG_H
#define SS_DIAG_H

#include <htslib/hts.h>
#include <htslib/sam.h>
#include <stddef.h>
#include <stdint.h>

#include "ss_reader.h"

/* ---- why an input failed, in samtools' words (read_diag.c); any thread ---- */

/* ss_error() for sam_open(path) failing with errno err: what the file is, if not alignments. */
void ss_io_open_error(const char *path, int err);
/* ss_error() for an index of path that did not load (errno err): none found, or a damaged one. */
void ss_io_index_error(const char *path, int err);
/*
 * ss_error() for htslib read error ret (< -1; 0 if unknown) of the BAM path in shard
 * shard_idx (-1: not in a shard; `where`: "ctg:beg-end"): the cause from fp's BGZF error flags (a
 * CRC32 mismatch, a block that does not inflate; fp may be NULL) and the fix.
 */
void ss_io_read_error(const char *path, samFile *fp, int ret, int shard_idx, const char *where);

/* ---- a CRAM that did not decode (cram_diag.c) ---- */

/*
 * ss_error() for a CRAM that failed to decode in shard shard_idx (`where`:
 * "ctg:beg-end"), on contig tid (-1 if none): no reference, one without the
 * contig, the wrong one (MD5 against @SQ M5), or a damaged file. ref_opt is
 * the running kernel's reference option ("-f", "-T"), named in the advice.
 * Loads the reference's .fai (never writes one). Any thread.
 */
void ss_io_cram_read_error(const char *path, sam_hdr_t *h, const char *reference,
                           const char *ref_opt, int shard_idx, const char *where, int tid);

/* ---- a reader's input that failed in a shard (reader_diag.c); the reader's thread ---- */

/*
 * ss_error() for read error ret (as ss_io_read_error) of reader rd's input i in its
 * current shard, on contig tid: ss_io_cram_read_error for a CRAM (reference, ref_opt),
 * else ss_io_read_error. The reader's thread.
 */
void ss_io_input_read_error(ss_reader_t *rd, int i, int ret, int tid, const char *where,
                            const char *reference, const char *ref_opt);
/*
 * A kernel's read of input i failed with ret (< -1; errno err as it failed) in
 * the shard [beg, end) of contig tid (-1: the unplaced reads): nothing more
 * when the reader already said why (SS_IO_REPORTED), out of memory as such,
 * else ss_io_input_read_error's line. Returns -1. The reader's thread.
 */
int ss_io_input_failed(ss_reader_t *rd, int i, int ret, int err, int tid, hts_pos_t beg,
                       hts_pos_t end, const char *reference, const char *ref_opt);

/* ---- does the index describe the file (index_check.c, crai_check.c) ---- */

/*
 * Whether input i's index idx describes it (index_check.c): not older than
 * the file, and for BAI/CSI the same contigs, the first record where fp's
 * header ends (call it with fp just after sam_hdr_read) and nothing mapped
 * after the last record it knows. Returns 0, or -1 with "its index ... ;
 * re-index ..." in msg (the caller names the file). Moves fp. Main thread.
 */
int ss_io_index_problem(const ss_io_inputs_t *in, int i, samFile *fp, sam_hdr_t *h, hts_idx_t *idx,
                        char *msg, size_t size);
/* ITF-8, CRAM's variable-length int32, at p (end: one past the buffer): the bytes it
 * takes, or -1 when it runs past end. Any thread. */
int ss_io_itf8(const uint8_t *p, const uint8_t *end, int32_t *v);

/*
 * Whether the .crai at crai leaves out or misplaces containers of the CRAM
 * at path (CRAM version major, size bytes, its first data container at
 * first): 1 if so, 0 if it describes them (or the file cannot be walked:
 * the run's reads say why). Any thread (crai_check.c).
 */
int ss_io_crai_problem(const char *path, int major, const char *crai, int64_t first,
                       long long size);

/*
 * Add what BAM input i's index counts to want (zeroed ss_io_tally_len
 * counters, the layout in ss_reader.h): each contig's pseudo-bin (mapped + unmapped,
 * as samtools idxstats prints them), and n_no_coor for the unplaced slot.
 * Any thread, one want at a time.
 */
void ss_io_tally_expect(const hts_idx_t *idx, int n_contigs, int i, int n_inputs, uint64_t *want);
/*
 * Compare got, the run's tally, with want, what the indexes count, in each
 * slot read whole. Returns 0, or -1 with the whole line ("IN: its index IDX
 * does not describe the file (contig C: N records read, the index counts M);
 * re-index it with samtools index IN") in msg. Main thread.
 */
int ss_io_tally_check(const ss_io_inputs_t *in, const sam_hdr_t *h, const uint64_t *got,
                      const uint64_t *want, char *msg, size_t size);

#endif

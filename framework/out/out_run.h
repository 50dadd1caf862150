/*
 * out_run.h -- the run's output (out_run.c): what the file is, its header,
 * trailer and index. The engine builds one ss_out_run_t on the main thread
 * before the workers start; from then on it is read-only and shared.
 *
 * Private to framework/out/ and framework/run/; kernels and io/ must not include it.
 */
#ifndef SS_OUT_RUN_H
#define SS_OUT_RUN_H

#include <stdatomic.h>

#include "../../io/ss_encode.h"
#include "output_file.h"
#include "shard_index.h"

struct ss_out_run_s {
    ss_out_format_t format;
    int bgzf;      /* text or SAM framed as BGZF blocks, with the EOF block */
    int tabix;     /* text .gz: tabix index of the temporary file */
    int vcf_index; /* BGZF BCF or VCF: its index as bcftools index builds it */
    int vcf_tbi;   /* that index is a TBI (-t), not a CSI */
    int level;
    sam_hdr_t *hdr; /* records: the output header, fully built */
    int sam_header;
    int write_index, index_threads;
    char *text_header;
    size_t text_header_len;
    ss_cram_frame_t cram;
    ss_cram_opts_t cram_opts; /* strings borrowed from the common options */
    const char *tmp_dir;
    char spill_dir[4096];    /* where shard output past the memory budget goes (engine.c sets it) */
    int no_main;             /* the kernel writes side streams only: no main file */
    const char *input;       /* the run's one input, named in messages about its records, or NULL */
    const char *index_out;   /* -o FILE##idx##INDEX's INDEX (borrowed), or NULL: beside FILE */
    ss_idx_kind_t idx_kind;  /* what workers note for an index built from the shards, or none:
                              * the index is built by reading the finished file (ss_out_run_index) */
    struct hts_tpool *zpool; /* BAM: threads that compress the workers' blocks, or NULL */
    atomic_int busy;         /* workers inside a shard (engine.c), for the pool's use */
    int cores;               /* -@: with that many busy, workers compress their own blocks */
};
typedef struct ss_out_run_s ss_out_run_t;

/*
 * Decide the output from the kernel's spec and -o (takes spec->header), build
 * its header and CRAM framing. NULL after ss_error() said why the combination
 * cannot be written. Main thread.
 */
ss_out_run_t *ss_out_run_init(ss_out_spec_t *spec, const ss_common_opts_t *co);
void ss_out_run_destroy(ss_out_run_t *r);
/*
 * BAM: compress the workers' BGZF blocks on a pool of `threads` threads, so a worker
 * running alone (one deep shard, the run's last) is not left to deflate on one core
 * while the others idle. Not when the index is noted from the shards (its offsets
 * need each block's size as the record is written), not for -u (level 0), not with
 * one thread. Failing to start the pool only leaves compression in the workers.
 * Main thread, before the workers start.
 */
void ss_out_run_zpool(ss_out_run_t *r, int threads);
/* A worker starts (+1) or ends (-1) a shard: the pool is used while cores idle. */
void ss_out_run_busy(ss_out_run_t *r, int delta);
/* The file's first bytes (framed: BGZF blocks for BAM and .gz text). 0, or -1 after ss_error(). */
int ss_out_run_header(const ss_out_run_t *r, kstring_t *out);
/* The file's last bytes: the CRAM EOF container or the BGZF EOF block. 0 or -1 after ss_error(). */
int ss_out_run_trailer(const ss_out_run_t *r, kstring_t *out);
/* Append text as the output writes text: BGZF blocks when it is compressed. 0 or -1. */
int ss_out_run_text(const ss_out_run_t *r, const char *text, size_t len, kstring_t *out);
/*
 * --write-index on out's finished temporary file (none: the output is not a
 * file), before it is renamed: the index goes to a temporary of its own and
 * is renamed with it (ss_output_index_tmp). output names -o in messages.
 * 0, or -1 after ss_error().
 */
int ss_out_run_index(const ss_out_run_t *r, ss_output_t *out, const char *output, ss_idx_merge_t *m,
                     uint64_t data_end);
/*
 * The tabix index of text .gz (TBI, or CSI when csi), named as -o asks: from
 * the shards' pieces merged in m (its data ending at data_end, where the EOF
 * block starts), or, m NULL, by reading the file back. As ss_out_run_index
 * for BAM, whose m is used the same way. 0, or -1 after ss_error().
 */
int ss_out_run_index_tabix(const ss_out_run_t *r, ss_output_t *out, const char *output, int csi,
                           ss_idx_merge_t *m, uint64_t data_end);
/*
 * The merge that builds the output's index from the shards' pieces, for a
 * file whose header is header_len bytes (text_csi: text .gz gets CSI, not
 * TBI); NULL when this output's index is read back instead, or out of memory
 * (then it is read back too). Output owner, main thread.
 */
ss_idx_merge_t *ss_out_run_index_merge(const ss_out_run_t *r, uint64_t header_len, int text_csi);

#endif

/*
 * ss_encode.h -- records written without an htslib writer, so a shard's
 * bytes end on a block boundary and stay in memory until the ordered
 * writer or the merge places them: BGZF blocks cut as htslib cuts them,
 * optionally compressed on a thread pool (bam_enc.c, bgzf_async.c), BAM
 * records and header (bam_enc.c), CRAM containers per shard through
 * htslib's own encoder (cram_enc.c), and bytes of a file appended to a
 * buffer (file_range.c). Used by the framework's output (out/), and by
 * view's block copy (ss_io_append_file_range).
 */
#ifndef SS_ENCODE_H
#define SS_ENCODE_H

#include <htslib/kstring.h>
#include <htslib/sam.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Uncompressed bytes waiting for their BGZF block. Owned by one thread. Blocks
 * are cut as htslib's BGZF writer cuts them, so the bytes are samtools'.
 */
typedef struct ss_zjob_s ss_zjob_t;
typedef struct {
    uint8_t *buf; /* BGZF_BLOCK_SIZE bytes */
    size_t len;
    int level; /* zlib level, -1 = htslib's default */
    /* With a pool (ss_bgzf_pack_async): full blocks are compressed on its threads and
     * land on out in order, at later writes or at the flush. */
    struct hts_tpool *pool;
    struct hts_tpool_process *q;
    ss_zjob_t **spare; /* jobs whose block has landed, for reuse */
    int n_spare, in_flight, max_in_flight;
    size_t raw_in_flight;   /* uncompressed bytes of the blocks in flight */
    const atomic_int *busy; /* writers at work: at busy_max, compress here (no core idles) */
    int busy_max;
} ss_bgzf_pack_t;

/* Returns 0, or -1 when out of memory. */
int ss_bgzf_pack_init(ss_bgzf_pack_t *z, int level);
void ss_bgzf_pack_destroy(ss_bgzf_pack_t *z);
/*
 * Compress full blocks on pool's threads from now on, while fewer than busy_max
 * writers are at work (*busy): a lone shard's worker then uses the idle cores,
 * and when every core has a writer the blocks are compressed in place, which
 * costs less than handing them over. The bytes out are the same. 0, or -1 out of
 * memory (the pack stays synchronous).
 */
int ss_bgzf_pack_async(ss_bgzf_pack_t *z, struct hts_tpool *pool, const atomic_int *busy,
                       int busy_max);
/* Wait for the blocks in flight and drop them (a failed shard's). */
void ss_bgzf_pack_discard(ss_bgzf_pack_t *z);
/*
 * Add len bytes, compressing full blocks onto out. With whole_record set, a
 * block that cannot take all the bytes is closed first (htslib keeps a record
 * in one block when it fits). Returns 0, or -1 on a compression or memory error.
 */
int ss_bgzf_pack_write(ss_bgzf_pack_t *z, const void *p, size_t len, int whole_record,
                       kstring_t *out);
/* Land the blocks in flight, then compress what is pending into one last block on
 * out: out then holds every byte written. Returns 0 or -1. */
int ss_bgzf_pack_flush(ss_bgzf_pack_t *z, kstring_t *out);

/*
 * Append b in BAM record layout (block_size first, little-endian), as
 * bam_write1 writes it: CIGARs of more than 65535 operations move to a CG:B,I
 * tag. Returns 0, or -1 (errno EOVERFLOW/EINVAL) when BAM cannot hold b.
 */
int ss_bam_encode(const bam1_t *b, kstring_t *out);
/* Append the BAM header (magic, text, references) uncompressed. Returns 0 or -1. */
int ss_bam_encode_header(const sam_hdr_t *h, kstring_t *out);

/*
 * Append bytes [off, off+n) of fd to s. Returns 0, or -1 with errno set (EIO
 * when the file ends first). Any thread, on its own s.
 */
int ss_io_append_file_range(int fd, off_t off, size_t n, kstring_t *s);

/* The bytes every CRAM shard's containers are framed by. */
typedef struct {
    kstring_t head; /* file definition + header container(s): the file's first bytes */
    kstring_t eof;  /* the EOF container: the file's last bytes */
} ss_cram_frame_t;

/* What a CRAM writer is opened with; the strings are borrowed. */
typedef struct {
    const char *file_id;   /* the output's name: CRAM's file id, as samtools' -o gives */
    const char *reference; /* FASTA with .fai, or NULL (REF_PATH / M5 then) */
    int level;             /* compression level, -1 = htslib's default */
} ss_cram_opts_t;

/*
 * Main thread, before workers: write *hdr once through htslib to learn the
 * file definition, header container and EOF bytes, and replace *hdr by the
 * header htslib wrote (it adds M5 and UR to @SQ). Returns 0, or -1 after
 * ss_error(). ss_cram_frame_free frees f's bytes.
 */
int ss_cram_frame_build(sam_hdr_t **hdr, const ss_cram_opts_t *o, ss_cram_frame_t *f);
void ss_cram_frame_free(ss_cram_frame_t *f);

/*
 * A worker's CRAM encoder: a fresh htslib writer per shard sharing one
 * reference cache. frame, o's strings and hdr (the worker's own copy of the
 * output header) must outlive it. NULL after ss_error().
 */
typedef struct ss_cram_enc_s ss_cram_enc_t;
ss_cram_enc_t *ss_cram_enc_init(const ss_cram_frame_t *frame, const ss_cram_opts_t *o,
                                sam_hdr_t *hdr, const char *tmp_dir);
void ss_cram_enc_destroy(ss_cram_enc_t *cw);
/* Start a shard. Returns 0, or -1 after ss_error(). */
int ss_cram_enc_begin(ss_cram_enc_t *cw);
/* One record. Returns 0, or -1 after ss_error(). */
int ss_cram_enc_write(ss_cram_enc_t *cw, const bam1_t *b);
/* Close the shard's writer and append its data containers to out. Returns 0 or -1. */
int ss_cram_enc_end(ss_cram_enc_t *cw, kstring_t *out, int shard_idx);
/* Drop a shard's writer after a failure. */
void ss_cram_enc_abort(ss_cram_enc_t *cw);
/*
 * After end: the .crai lines (uncompressed) that samtools index writes for
 * the shard's containers, appended to out; their container offsets count
 * from the start of a file holding the frame's header and then the shard's
 * containers (subtract frame->head.l and add where the shard's containers
 * are written). htslib's own index builder reads the shard's CRAM in memory,
 * not the output. It needs three descriptors for a moment, taken from the
 * readers' budget (ss_io_budget_take). 0, or -1 (no descriptors to spare,
 * out of memory, no /proc: the caller reads the output back instead).
 * Worker thread that owns cw.
 */
int ss_cram_enc_index(ss_cram_enc_t *cw, kstring_t *out);

#endif

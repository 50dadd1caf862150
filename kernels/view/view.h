/*
 * view.h -- private to the view kernel (kernels/view*.c).
 *
 * `seqshard view` prints or converts the records of one BAM/CRAM as
 * `samtools view` 1.16 does. Each shard [beg, end) of contig tid emits the
 * records whose POS lies in the shard, so a read that crosses a boundary is
 * emitted once, by the shard where it starts; the first shard of a region
 * also emits the reads that start before the region and overlap it, as the
 * region query of samtools does. A shard with tid VW_TID_UNPLACED carries
 * the unplaced unmapped reads that end the file (or the region "*").
 * Several regions are planned one after the other, in the order given, and
 * each is cut and emitted as if it were the only one: samtools view without
 * -M queries them in turn, so a record in two regions appears twice. With
 * -M the framework sorts and merges them first, and the first shard of a
 * region leaves out the records the previous region on its contig emitted.
 *
 * Output bytes per shard:
 *   SAM  - text lines (view.c, sam_format1);
 *   BAM  - BGZF blocks of at most BGZF_BLOCK_SIZE input bytes, records laid
 *          out as bam_write1 lays them out (view_bam.c), ending on a block
 *          boundary; the header is its own blocks; the writer adds EOF;
 *   CRAM - whole containers cut from a fresh htslib CRAM writer per shard
 *          (view_cram.c); the CRAM EOF container is the trailer.
 */
#ifndef SS_KERNEL_VIEW_H
#define SS_KERNEL_VIEW_H

#include <pthread.h>
#include <htslib/kstring.h>
#include <htslib/sam.h>

#include "../../framework/ss_framework.h"

/* The shard of the unplaced unmapped reads (tid -1 in the file, HTS_IDX_NOCOOR to the index). */
#ifndef SS_TID_UNPLACED
#define SS_TID_UNPLACED (-1)
#endif
#define VW_TID_UNPLACED SS_TID_UNPLACED

typedef enum { VW_SAM = 0, VW_BAM = 1, VW_CRAM = 2 } vw_format_t;

/* CRAM output's default shard size, in multiples of SS_DEFAULT_SHARD_SIZE (view_opts.c). */
#define VW_CRAM_SHARD_FACTOR 4

/* The CRAM pieces every shard's bytes are cut against (view_cram.c). */
typedef struct {
    kstring_t head;   /* file definition + header container(s): the file's first bytes */
    kstring_t eof;    /* the EOF container: the file's last bytes */
} vw_cram_frame_t;

/*
 * Options of `seqshard view`: samtools view's names and defaults. Filled by
 * vw_parse (main thread); the fields from `targets` on are set by prepare and
 * read-only afterwards, except what hdr_lock guards.
 */
/* A CRAM container of one reference: where it is and where its first alignment starts. */
typedef struct {
    int64_t off;
    hts_pos_t beg;
} vw_container_t;
typedef struct vw_crai_s vw_crai_t;

typedef struct {
    vw_format_t fmt;
    int with_header;      /* -h: SAM output gets the header */
    int header_only;      /* -H */
    int no_pg;            /* --no-PG */
    int level;            /* -l / -1 / -u: compression level 0-9, -1 = htslib default */
    int min_mapq;         /* -q */
    int flag_on;          /* -f: keep if all of these are set */
    int flag_off;         /* -F: keep if none of these are set */
    int flag_anyon;       /* --rf: keep if any of these is set */
    int flag_alloff;      /* -G: drop if all of these are set */
    char *target_path;    /* -L, owned */
    int multi_region;     /* -M: the regions as one set (sorted, merged), each record once */
    int write_index;      /* --write-index */
    char *cmdline;        /* "seqshard view ..." for the @PG CL field, owned */
    char *output;         /* -o copy (for messages and the CRAM file id), owned */
    int threads;          /* -@ copy, for building the index */

    ss_bed_t *targets;    /* -L parsed, or NULL */
    sam_hdr_t *out_hdr;   /* output header: input + @PG (+ M5/UR for CRAM) */
    pthread_mutex_t hdr_lock; /* serialises sam_hdr_dup(out_hdr) in worker_init */
    int in_is_cram;
    vw_crai_t *crai;      /* CRAM input: its containers (view_crai.c), or NULL */
    int64_t copy_data_beg; /* BAM blocks copied (view_copy.c): first data block, or -1 */
    int64_t copy_data_end; /* ... and where the input's EOF block starts */
    vw_cram_frame_t cram;
} vw_opts_t;

void vw_opts_default(vw_opts_t *o);
void vw_opts_free(vw_opts_t *o);
void vw_usage(FILE *fp);
/* ss_kernel_t.parse for view (view_opts.c). */
int vw_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts);

/* ---- BAM bytes (view_bam.c) ---- */

/* Uncompressed bytes waiting for their BGZF block; a worker owns one. */
typedef struct {
    uint8_t *buf;   /* BGZF_BLOCK_SIZE bytes */
    size_t len;
    int level;
} vw_bgzf_t;

int vw_bgzf_init(vw_bgzf_t *z, int level);
void vw_bgzf_destroy(vw_bgzf_t *z);
/*
 * Add len bytes, compressing full blocks onto out. With whole_record set, a
 * block that cannot take all the bytes is closed first (htslib keeps a record
 * in one block when it fits). Returns 0, or -1 on a compression or memory error.
 */
int vw_bgzf_write(vw_bgzf_t *z, const void *p, size_t len, int whole_record, kstring_t *out);
/* Compress what is pending into one last block on out. Returns 0 or -1. */
int vw_bgzf_flush(vw_bgzf_t *z, kstring_t *out);

/*
 * Append b in BAM record layout (block_size first, little-endian), as
 * bam_write1 writes it: CIGARs of more than 65535 operations move to a CG:B,I
 * tag. Returns 0, or -1 (errno EOVERFLOW/EINVAL) when BAM cannot hold b.
 */
int vw_bam_encode(const bam1_t *b, kstring_t *out);
/* Append the BAM header (magic, text, references) uncompressed. Returns 0 or -1. */
int vw_bam_encode_header(const sam_hdr_t *h, kstring_t *out);

/* ---- CRAM (view_cram.c) ---- */

/*
 * Main thread, in prepare: write the output header once through htslib to
 * learn the file definition, header container and EOF bytes, and re-read the
 * header htslib wrote (it adds M5 and UR to @SQ) into o->out_hdr.
 * Returns 0, or -1 after ss_error().
 */
int vw_cram_prepare(vw_opts_t *o, const char *reference);

typedef struct vw_cram_writer_s vw_cram_writer_t;
/* Per worker: holds the reference cache shared by each shard's writer. NULL after ss_error(). */
vw_cram_writer_t *vw_cram_writer_init(const vw_opts_t *o, sam_hdr_t *hdr, const char *reference,
                                      const char *tmp_dir);
void vw_cram_writer_destroy(vw_cram_writer_t *cw);
/* Start a shard: a fresh htslib CRAM writer. Returns 0, or -1 after ss_error(). */
int vw_cram_begin(vw_cram_writer_t *cw);
/* One record. Returns 0, or -1 after ss_error(). */
int vw_cram_write(vw_cram_writer_t *cw, const bam1_t *b);
/* Close the shard's writer and append its data containers to out. Returns 0 or -1. */
int vw_cram_end(vw_cram_writer_t *cw, kstring_t *out, int shard_idx);
/* Drop a shard's writer after a failure. */
void vw_cram_abort(vw_cram_writer_t *cw);

/* ---- CRAM input by container (view_crai.c) ---- */

/*
 * The containers of cram_path from its index (index_path, or cram_path.crai);
 * NULL when there is no usable index: the caller then uses region queries.
 */
vw_crai_t *vw_crai_load(const char *cram_path, const char *index_path, int n_ref);
void vw_crai_destroy(vw_crai_t *x);
/* The containers of tid in file order, or 0 when tid must use region queries. */
int vw_crai_containers(const vw_crai_t *x, int tid, const vw_container_t **c);
/* Index of the first of the n containers that starts at or after pos (n if none). */
int vw_crai_first_at(const vw_container_t *c, int n, hts_pos_t pos);
/* How many records the container at off holds (reads its header). Returns 0 or -1. */
int vw_crai_records(htsFile *fp, int64_t off, int64_t *nrec);
/* Make the next sam_read1 on fp return the first record of container c. Returns 0 or -1. */
int vw_crai_seek(htsFile *fp, hts_idx_t *idx, const vw_container_t *c);

/* ---- BAM to BAM by copying blocks (view_copy.c) ---- */

/* Nothing filtered, no region, no level given, BAM out: the blocks may be copied. */
int vw_copy_eligible(const vw_opts_t *o, const ss_common_opts_t *co);
/* Main thread: set o->copy_data_beg/end when path's blocks can be copied. Returns 0 or -1. */
int vw_copy_prepare(vw_opts_t *o, const char *path);
/*
 * Append bytes [off, off+n) of fd to s. Returns 0, or -1 with errno set (EIO
 * when the file ends first).
 */
int vw_append_file_range(int fd, off_t off, size_t n, kstring_t *s);

typedef struct vw_copier_s vw_copier_t;
/* A worker's means to copy: the input's descriptor and an inflater to check blocks. */
vw_copier_t *vw_copier_init(void);
void vw_copier_destroy(vw_copier_t *cp);
/*
 * Append the input's compressed blocks that shard sh owns to out, checked,
 * and count the shard's records. Returns 0; -2 when the input is truncated or
 * corrupt (the caller says so); -1 after ss_error().
 */
int vw_copy_shard(vw_copier_t *cp, const vw_opts_t *o, ss_reader_t *rd, const sam_hdr_t *h,
                  bam1_t *b, const ss_shard_t *sh, kstring_t *out, uint64_t *records);

/* ---- references (view_ref.c) ---- */

/* Keep htslib from fetching references over the network (REF_PATH). Main thread. */
void vw_no_network_references(void);
/* CRAM output: every @SQ must be in -T or have M5/UR. Returns 0, or -1 after ss_error(). */
int vw_check_cram_output_refs(const sam_hdr_t *h, const char *reference);
/* ss_error() for a CRAM decoding failure: missing reference, wrong reference, or corruption. */
void vw_cram_read_error(const char *path, sam_hdr_t *h, const char *reference, int shard_idx,
                        const char *where, int tid);

/* ---- hooks the framework does not have yet (view.c; see the report) ---- */

/* What the output is, given the options: SS_OUT_TEXT for SAM, SS_OUT_BAM, or CRAM. */
ss_out_kind_t vw_out_kind(const void *kopts);
/* Bytes that end the file after the last shard (CRAM EOF container); nothing for SAM/BAM. */
int vw_trailer(void *kopts, const ss_job_t *job, kstring_t *out);
/* --write-index on the finished temporary file, before the rename. 0, or -1 after ss_error(). */
int vw_finish(void *kopts, const ss_job_t *job, const char *path);

#endif

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

#include <htslib/hts_expr.h>
#include <htslib/kstring.h>
#include <htslib/sam.h>
#include <pthread.h>

#include "../../framework/ss_framework.h"

typedef enum { VW_SAM = 0, VW_BAM = 1, VW_CRAM = 2 } vw_format_t;

/* CRAM output's default shard size, in multiples of SS_DEFAULT_SHARD_SIZE (view_opts.c). */
#define VW_CRAM_SHARD_FACTOR 4

/* A CRAM container of one reference: where it is and where its first alignment starts. */
typedef struct {
    int64_t off;
    hts_pos_t beg;
} vw_container_t;
typedef struct vw_crai_s vw_crai_t;

/* Two-character aux tags, as tag[0] << 8 | tag[1] (-x, --keep-tag). */
typedef struct {
    uint16_t *tags; /* owned */
    int n;
} vw_tags_t;

/* Options of `seqshard view`: samtools view's names and defaults, filled by vw_parse. */
typedef struct {
    vw_format_t fmt;
    int with_header;      /* -h: SAM output gets the header */
    int header_only;      /* -H */
    int no_pg;            /* --no-PG */
    int level;            /* --output-fmt-option level=N / -1 / -u: compression level 0-9,
                           * -1 = htslib default */
    int count;            /* -c: print the number of records kept, nothing else */
    char *expr;           /* -e: htslib filter expression, owned */
    double subsam_frac;   /* -s / --subsample: keep this fraction of read names; <= 0 all */
    uint32_t subsam_seed; /* -s / --subsample-seed, scrambled as samtools does */
    char *library;        /* -l / --library: only reads of this library (@RG LB), owned */
    vw_tags_t remove;     /* -x: tags to drop */
    vw_tags_t keep;       /* --keep-tag, -x ^LIST: tags to keep (wins over -x) */
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
} vw_opts_t;

/* What a view run shares with its workers, built by prepare; read-only afterwards. */
typedef struct {
    ss_bed_t *targets; /* -L parsed, or NULL */
    int in_is_cram;
    vw_crai_t *crai;       /* CRAM input: its containers (view_crai.c), or NULL */
    int64_t copy_data_beg; /* BAM blocks copied (view_copy.c): first data block, or -1 */
    int64_t copy_data_end; /* ... and where the input's EOF block starts */
    char **lib_rgs;        /* -l: the @RG IDs of that library, sorted, owned */
    int n_lib_rgs;
} vw_run_t;

void vw_opts_default(vw_opts_t *o);
void vw_opts_free(vw_opts_t *o);
void vw_usage(FILE *fp);
/* ss_kernel_t.parse for view (view_opts.c). */
int vw_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts);

/* ---- filters and tag edits beyond flags (view_filter.c) ---- */

/* Parsing, main thread: 0, or -1 after a one-line usage message. */
int vw_tag_list_add(vw_tags_t *list, const char *opt, const char *arg);
int vw_subsample_arg(vw_opts_t *o, const char *opt, const char *arg);
void vw_subsample_finish(vw_opts_t *o);
int vw_expr_check(const char *expr);
/* Main thread, prepare: -l's read groups into run. 0, or -1 after ss_error(). */
int vw_library_prepare(vw_run_t *run, const sam_hdr_t *h, const char *library);
/* Worker: -e (with this worker's compiled expr, or NULL), -s, -l. 1 keep, 0 drop. */
int vw_keep_more(const vw_opts_t *o, const vw_run_t *run, hts_filter_t *expr, const sam_hdr_t *h,
                 bam1_t *b);
/* Worker: -x / --keep-tag on b in place. 0, or -1 when its aux data is malformed. */
int vw_adjust_tags(const vw_opts_t *o, bam1_t *b);

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
/* Main thread: set run->copy_data_beg/end when path's blocks can be copied. Returns 0 or -1. */
int vw_copy_prepare(vw_run_t *run, const char *path);
typedef struct vw_copier_s vw_copier_t;
/* A worker's means to copy: the input's descriptor and an inflater to check blocks. */
vw_copier_t *vw_copier_init(void);
void vw_copier_destroy(vw_copier_t *cp);
/*
 * Append the input's compressed blocks that shard sh owns to out, checked,
 * and count the shard's records, noting them for the index through so
 * (ss_out_index_copied). Returns 0; when the input is truncated or corrupt,
 * htslib's read code (< -1: -4 a damaged record, else -2; the caller says
 * so); -1 after ss_error().
 */
int vw_copy_shard(vw_copier_t *cp, const vw_run_t *run, ss_reader_t *rd, const sam_hdr_t *h,
                  bam1_t *b, const ss_shard_t *sh, ss_out_t *so, kstring_t *out, uint64_t *records);

/* ---- references (view_ref.c) ---- */

/*
 * -T against the input's contigs, at the start: for CRAM output a contig of
 * another length is an error (the CRAM would be encoded against the wrong
 * sequence); otherwise missing or different contigs are a warning, since
 * decoding fails only where records need them. Returns 0, or -1 after ss_error().
 */
int vw_check_reference_contigs(const ss_job_t *job, int cram_out);
/* CRAM output: every @SQ must be in -T or have M5/UR. Returns 0, or -1 after ss_error(). */
int vw_check_cram_output_refs(const sam_hdr_t *h, const char *reference);

#endif

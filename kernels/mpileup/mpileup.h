/*
 * mpileup.h -- the `mpileup` kernel: bcftools mpileup 1.16's genotype
 * likelihoods (VCF/BCF), one shard at a time, with the same bytes as one
 * bcftools run over the whole input. Private to kernels/mpileup/.
 *
 * Files: mp_opts.c (options, --help), mp_samples.c (read groups -> samples),
 * mp_header.c (the VCF header), mp_read.c (the read filter and a shard's
 * start), mpileup.c (the kernel: columns, partial BAQ, records),
 * mp_call.c/mp_indel.c (likelihoods; mp_call.h), mp_rng.c (the random stream).
 */
#ifndef SS_KERNEL_MPILEUP_H
#define SS_KERNEL_MPILEUP_H

#include <htslib/khash_str2int.h>
#include <htslib/sam.h>
#include <htslib/vcf.h>

#include "../../framework/ss_framework.h"
#include "mp_call.h"

/* Output types of -O (bcftools' letters). */
enum { MP_OUT_VCF = 'v', MP_OUT_VCF_GZ = 'z', MP_OUT_BCF = 'u', MP_OUT_BCF_GZ = 'b' };

/* bcftools mpileup's options, with its defaults (mp_opts_default). */
typedef struct {
    int min_mq;            /* -q */
    int min_baseQ;         /* -Q [1] */
    int max_baseQ;         /* --max-BQ [60] */
    int delta_baseQ;       /* --delta-BQ [30] */
    int capQ_thres;        /* -C [0] */
    int max_depth;         /* -d [250], per file */
    int max_indel_depth;   /* -L [250], per sample */
    int openQ, extQ, tandemQ; /* -o/--open-prob [40], -e [20], -h [500] */
    double min_frac;       /* -F [0.05] */
    float indel_bias;      /* 1 / --indel-bias [1] */
    int min_support;       /* -m [2] */
    int indel_win_size;    /* --indel-size [110] */
    int max_read_len;      /* -M [500] */
    int ambig_reads;       /* --ar: MP_AMBIG_* */
    int fmt_flag;          /* -a, -U */
    int baq;               /* on unless -B */
    int baq_partial;       /* on unless -D (full BAQ) */
    int redo_baq;          /* -E */
    int illumina13;        /* -6 */
    int orphans;           /* -A: keep anomalous pairs */
    int overlaps;          /* off with -x */
    int no_indel;          /* -I */
    int per_sample_flt;    /* -p */
    int ignore_rg;         /* --ignore-RG */
    int no_reference;      /* --no-reference */
    int skip_any_unset, skip_all_unset, skip_any_set, skip_all_set; /* --nu --lu --ns --ls */
    long seed;             /* --seed [0] */
    int out_type;          /* -O letter: MP_OUT_* */
    int level;             /* -O's level, or -1 */
    int bcf_threads;       /* --threads: bcftools' compression threads (accepted; ours is -@) */
    int record_cmd_line;   /* off with --no-version */
    char *cmd_line;        /* "mpileup ARGS" for ##bcftoolsCommand, owned */
} mp_opts_t;

void mp_opts_default(mp_opts_t *o);
void mp_opts_free(mp_opts_t *o);
int mp_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts);
void mp_usage(FILE *fp);

/*
 * The samples, as bcftools' bam_sample.c assigns them: samples in order of
 * first appearance over the inputs' @RG lines (SM), a file without read
 * groups (or every file under --ignore-RG) being one sample named by its path.
 * Built on the main thread, read-only afterwards.
 */
typedef struct {
    int default_idx;  /* every read of the file is this sample, or -1: by RG */
    void *rg2idx;     /* khash_str2int: read group -> sample (-1: dropped), or NULL */
} mp_file_smpl_t;

typedef struct {
    int n;            /* samples */
    char **names;     /* owned */
    void *name2idx;   /* khash_str2int over names */
    int n_files;
    mp_file_smpl_t *files;
} mp_samples_t;

int mp_samples_build(mp_samples_t *s, const ss_job_t *job, const mp_opts_t *o);
void mp_samples_free(mp_samples_t *s);
/*
 * Whether bcftools may draw random numbers: some sample can hold more than 255
 * bases at a column with -d max_depth (per file) over the files it spans.
 */
int mp_samples_can_draw(const mp_samples_t *s, int max_depth);
/* The read's sample in file i, or -1 when the read is dropped. Any thread. */
int mp_samples_of(const mp_samples_t *s, int i, const bam1_t *b);

/* The run state: samples and the VCF header, read-only for the workers. */
typedef struct {
    mp_samples_t smpl;
    bcf_hdr_t *vcf_hdr;
    kstring_t head;   /* the header's bytes, as the output opens */
} mp_run_t;

/*
 * The VCF header bcftools writes for these options and samples; the header's
 * bytes as the output opens with them (VCF text, or the BCF magic, length and
 * text with its NUL) into *bytes. 0, or -1 after ss_error().
 */
int mp_header_build(mp_run_t *r, const mp_opts_t *o, const ss_job_t *job, kstring_t *bytes);

/* One input of a worker: its records and what the read filter needs. */
typedef struct {
    ss_source_t *src;
    int i;                    /* input number */
    const mp_opts_t *o;
    const mp_samples_t *smpl;
    const char *ref;          /* the contig's sequence (NUL-terminated), or NULL */
    hts_pos_t ref_len;
    hts_pos_t skip_before;    /* drop reads starting before this (a range read twice) */
    uint64_t n_read;
    int read_err;             /* htslib's code when a read failed */
} mp_input_t;

/* bcftools' read filter over the input's source: 0 and a read, or < 0 at the end or error. */
int mp_read_filtered(void *data, bam1_t *b);
/*
 * Where the shard's pileup must start so that its columns from beg on are
 * the whole run's: before the reads over beg began (partial BAQ), and where
 * the depth cap could not have dropped a read. -1 after a read error.
 */
hts_pos_t mp_shard_start(mp_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t scope_beg,
                         int max_depth, bam1_t *scratch);

#endif

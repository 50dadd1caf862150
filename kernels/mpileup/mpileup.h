/*
 * mpileup.h -- the `mpileup` kernel: bcftools mpileup 1.16's genotype
 * likelihoods (VCF/BCF), one shard at a time, with the same bytes as one
 * bcftools run over the whole input. Private to kernels/mpileup/.
 *
 * Files: mp_opts.c (options, --help), mp_samples.c (read groups -> samples),
 * mp_header.c (the VCF header), mp_read.c (the read filter and a shard's
 * start), mpileup.c (the kernel: shards, census, carried values), mp_pass.c (passes of
 * the pileup, the look back), mp_column.c (a column: partial BAQ, samples, records),
 * mp_glf.c, mp_errmod.c, mp_bins.c, mp_bias.c, mp_record.c, mp_site_bcf.c (likelihoods,
 * annotations and the record's bytes; mp_call.h, mp_bcf.h), mp_indel*.c (indels),
 * mp_rng.c (the random stream), mp_gvcf.c (-g blocks), mp_regions.c (-r/-R, -t/-T),
 * mp_sample_lists.c (-s/-S, -G), mc_*.c (--call: bcftools call; mc_call.h).
 */
#ifndef SS_KERNEL_MPILEUP_H
#define SS_KERNEL_MPILEUP_H

#include <htslib/khash_str2int.h>
#include <htslib/regidx.h>
#include <htslib/sam.h>
#include <htslib/vcf.h>

#include "base/ss_exact_fp.h" /* its users are built with the exact flags */

#include "../../framework/ss_framework.h"
#include "../../genomics/baq.h"
#include "../../genomics/pileup_engine.h"
#include "../../io/ss_ref.h"
#include "mc_call.h"
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
    char *samples;         /* -s LIST or -S FILE, owned, or NULL */
    int samples_is_file;   /* it was -S */
    char *read_groups;     /* -G FILE, owned, or NULL */
    char *regions;         /* -r LIST, owned, or NULL */
    char *regions_file;    /* -R FILE, owned, or NULL */
    char *targets;         /* -t LIST or -T FILE ('^' excludes), owned, or NULL */
    int targets_is_file;   /* it was -T */
    char **call_argv;      /* --call: bcftools call's words, owned (call_argv[0] "call") */
    int call_argc;         /* 0: no --call */
    mc_opts_t *call;       /* --call's options parsed, owned, or NULL */
    int *gvcf_ranges;      /* -g's DP bounds, owned, or NULL: no gVCF */
    int n_gvcf_ranges;
    int no_reference;      /* --no-reference */
    int skip_any_unset, skip_all_unset, skip_any_set, skip_all_set; /* --nu --lu --ns --ls */
    long seed;             /* --seed [0] */
    int out_type;          /* -O letter: MP_OUT_* */
    int level;             /* -O's level, or -1 */
    int index_tbi;         /* --write-index=tbi: a .tbi (bcftools index -t), not a .csi */
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

/* A map of names to names (-s renames, -G read groups), in mp_sample_lists.c. */
typedef struct {
    void *idx;        /* khash_str2int: name -> index into vals */
    char **vals;
    int n;
} mp_namemap_t;

typedef struct {
    int n;            /* samples */
    char **names;     /* owned */
    void *name2idx;   /* khash_str2int over names */
    int n_files;
    mp_file_smpl_t *files;
    mp_namemap_t sample_list; /* -s/-S: sample -> its name in the output; idx NULL: none */
    int sample_include;       /* the list keeps (else drops, '^') its samples */
    mp_namemap_t rg_list;     /* -G: "RG", "RG\tFILE" or "*\tFILE" -> sample, "\t" keeps it */
    int rg_include;
} mp_samples_t;

const char *mp_namemap_get(const mp_namemap_t *m, const char *key);
void mp_namemap_free(mp_namemap_t *m);
/* -s LIST or -S FILE (is_file) into m; *include unless it starts with '^'. 0 or -1 (said). */
int mp_sample_list_read(mp_namemap_t *m, int *include, const char *arg, int is_file);
/* -G FILE into m, as bcftools reads it. 0 or -1 (said). */
int mp_rg_list_read(mp_namemap_t *m, int *include, const char *arg);
/*
 * Whether -G keeps read group rg of file fname (bcftools' bsmpl_keep_readgroup);
 * *name becomes the sample's new name when the list gives one.
 */
int mp_rg_keep(const mp_samples_t *s, const char *fname, const char *rg, const char **name);

int mp_samples_build(mp_samples_t *s, const ss_job_t *job, const mp_opts_t *o);
void mp_samples_free(mp_samples_t *s);
/*
 * Whether bcftools may draw random numbers: some sample can hold more than 255
 * bases at a column with -d max_depth (per file) over the files it spans.
 */
int mp_samples_can_draw(const mp_samples_t *s, int max_depth);
/* The read's sample in file i, or -1 when the read is dropped. Any thread. */
int mp_samples_of(const mp_samples_t *s, int i, const bam1_t *b);
/*
 * Whether each input's reads all go to one sample of its own (no read group
 * splits a file, no sample spans two files): then file_sample[i] (room for
 * every input) is input i's sample, and a column's groups are the inputs'.
 */
int mp_samples_one_per_file(const mp_samples_t *s, int *file_sample);

/*
 * gVCF blocks (mp_gvcf.c), one writer per worker. mp_gvcf_write takes each
 * record in order: 1 when the record is to be written (MinDP added to a
 * reference-only one too shallow for a block), 0 when a block took it or it
 * continues an earlier shard's block, -1 after ss_error(); a block it closes
 * goes to emit first. rec NULL flushes the open block.
 */
typedef struct mp_gvcf_s mp_gvcf_t;
typedef int (*mp_gvcf_emit_fn)(void *ctx, bcf1_t *block);
mp_gvcf_t *mp_gvcf_init(const int *ranges, int n_ranges);
void mp_gvcf_destroy(mp_gvcf_t *g);
void mp_gvcf_reset(mp_gvcf_t *g);
int mp_gvcf_open(const mp_gvcf_t *g);
int mp_gvcf_write(mp_gvcf_t *g, const bcf_hdr_t *hdr, bcf1_t *rec, mp_gvcf_emit_fn emit,
                  void *ctx);
/* Past the shard's end: the open block takes records until it closes; no other starts. */
void mp_gvcf_follow(mp_gvcf_t *g);
/* The block open now belongs to an earlier shard: skip the records that continue it. */
void mp_gvcf_skip_from(mp_gvcf_t *g);
/* -g INT[,...] as bcftools reads it: malloc'ed bounds. 0, or -1 (bad list or OOM). */
int mp_gvcf_parse(const char *arg, int **ranges, int *n);

/* -t/-T: the targets, built on the main thread, read-only after (mp_regions.c). */
typedef struct {
    regidx_t *idx;    /* NULL: no targets */
    int include;      /* else '^': exclude */
} mp_targets_t;

/* -r/-R as the run's regions, in bcftools' order. 0, or -1 after a message. Main thread. */
int mp_regions_add(const mp_opts_t *o, ss_common_opts_t *co);
/* -t/-T into t (t->idx NULL when none). 0, or -1 after ss_error(). Main thread. */
int mp_targets_load(mp_targets_t *t, const mp_opts_t *o);
void mp_targets_free(mp_targets_t *t);
/* bcftools' read test against the targets (itr: the worker's own). 1 keep, 0 drop. */
int mp_targets_read(const mp_targets_t *t, regitr_t *itr, const char *ctg, const bam1_t *b);
/* bcftools' column test: 1 when the column is printed. */
int mp_targets_column(const mp_targets_t *t, const char *ctg, hts_pos_t pos);

/* The run state: samples and the VCF header, read-only for the workers. */
typedef struct {
    mp_targets_t targets;
    mp_samples_t smpl;
    bcf_hdr_t *vcf_hdr;  /* mpileup's records' header */
    bcf_hdr_t *out_hdr;  /* the output's: bcftools call's with --call, else vcf_hdr */
    kstring_t head;   /* the header's bytes, as the output opens */
    baq_path_t baq_path; /* the BAQ code this machine runs (pileup's, bit for bit htslib's) */
    mc_missed_plan_t **missed; /* --call -i: the plan, set once every shard was summed up */
    const mc_opts_t *call;     /* --call's options (the kernel's), or NULL */
} mp_run_t;

/*
 * The VCF header bcftools writes for these options and samples; the header's
 * bytes as the output opens with them (VCF text, or the BCF magic, length and
 * text with its NUL) into *bytes. 0, or -1 after ss_error().
 */
int mp_header_build(mp_run_t *r, const mp_opts_t *o, const ss_job_t *job, kstring_t *bytes);
/* A header's bytes as the output opens with them: VCF text, or BCF's (bcf). 0 or -1. */
int mp_header_bytes(bcf_hdr_t *h, int bcf, kstring_t *out);

/* One input of a worker: its records and what the read filter needs. */
typedef struct {
    ss_source_t *src;
    int i;                    /* input number */
    const mp_opts_t *o;
    const mp_samples_t *smpl;
    const mp_targets_t *targets; /* -t/-T, or NULL */
    regitr_t *targets_itr;    /* this input's iterator over them */
    const char *ctg;          /* the contig being read */
    const char *ref;          /* the contig by position (NUL-terminated), or NULL */
    hts_pos_t ref_len;
    mp_ref_t *rs;             /* which of it is loaded: each kept read loads its reach */
    hts_pos_t skip_before;    /* drop reads starting before this (a range read twice) */
    uint64_t n_read;
    int read_err;             /* htslib's code when a read failed, or MP_READ_NOMEM */
} mp_input_t;

/* read_err when keeping a read ran out of memory: no code htslib or the checks return
 * (htslib's -4, which this once was, says a record is damaged) */
#define MP_READ_NOMEM (-1000)

/* bcftools' read filter over the input's source: 0 and a read, or < 0 at the end or error. */
int mp_read_filtered(void *data, bam1_t *b);
/*
 * Where the shard's pileup must start so that its columns from beg on are
 * the whole run's: before the reads over beg began (partial BAQ), and where
 * the depth cap could not have dropped a read. -1 after a read error.
 */
hts_pos_t mp_shard_start(mp_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t scope_beg,
                         int max_depth, bam1_t *scratch);
/*
 * Whether more than limit of the inputs' reads overlap some position of
 * tid:beg-end: an upper bound of any column's pileup there, which holds
 * some of those reads. 1 (also when there are too many reads to tell
 * cheaply), 0, or -1 after a read error (in the input's read_err).
 * scratch is overwritten.
 */
int mp_depth_exceeds(mp_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t end, int limit,
                     bam1_t *scratch);
#define MP_DEPTH_EVENTS_MAX ((size_t)1 << 22) /* 32 MB of events: past it, assume deep */

/* ---- htslib's multi-input pileup, on the pileup kernel's engine (mp_mplp.c) ---- */

typedef struct mp_mplp_s mp_mplp_t;
typedef struct {
    int overlaps;             /* mate overlaps, as bam_mplp_init_overlaps */
    int maxcnt;               /* the depth cap, as bam_mplp_set_maxcnt */
    pe_construct_f construct; /* as bam_mplp_constructor, or NULL */
    void (*client_free)(void *client); /* frees the data the kernel keeps with a record */
} mp_mplp_opts_t;
/* bam_mplp_init's iterator over n inputs, read through read(data[i]). NULL when out of memory. */
mp_mplp_t *mp_mplp_init(int n, pe_read_f read, void **data, const mp_mplp_opts_t *o);
/* Before a pass over contig tid, once its inputs are queried: as a new iterator. */
void mp_mplp_reset(mp_mplp_t *m, int tid);
/* bam_mplp64_auto: the next column's reads per input; the inputs there, 0 at the end, -1 error. */
int mp_mplp_auto(mp_mplp_t *m, int *tid, hts_pos_t *pos, int *n_plp, const bam_pileup1_t **plp);
void mp_mplp_destroy(mp_mplp_t *m);

/* ---- a worker (mpileup.c), its columns (mp_column.c) and passes (mp_pass.c) ---- */

/* Per sample: its reads at the column (bcftools groups the inputs' reads by sample). */
typedef struct {
    int n, m;
    bam_pileup1_t *plp;
} mp_group_t;

typedef struct {
    const mp_opts_t *o;
    const mp_run_t *run;
    const ss_job_t *job;
    ss_reader_t *rd;
    sam_hdr_t *hdr;
    int n;                      /* inputs */
    int n_smpl;
    mp_input_t *in;
    int *n_plp;                 /* per input, the column */
    const bam_pileup1_t **plp;
    mp_group_t *grp;            /* per sample */
    int *grp_n;
    bam_pileup1_t **grp_plp;
    int *file_sample;           /* per input: its sample, when each is its own; else NULL */
    mp_aux_t *bca;
    mp_smpl_t *bcr;             /* per sample */
    mp_site_t bc;
    bcf1_t *rec, *sync;
    mp_rng_t rng;
    int before_unknown;         /* the shard's stream start is not known yet (start_stream) */
    ss_ref_t *refs;             /* the reference, loaded by stretches (io/ref.c) */
    mp_ref_t rs;                /* the shard's contig in it: what is loaded */
    const char *ref;            /* rs.seq: the contig by position, NUL-terminated, or NULL */
    hts_pos_t ref_len;
    bam1_t *scratch;
    mp_mplp_t *mplp;          /* the pileup of every pass, reset for each (mp_pass.c) */
    int bcf;                    /* BCF records, else VCF text */
    mp_gvcf_t *gv;              /* -g: gVCF blocks, or NULL */
    mc_caller_t *caller;        /* --call: bcftools call on each record, or NULL */
    bcf1_t *called;             /* the caller's record */
    bcf1_t *site[2];            /* --call -C alleles: the column's records, called together */
    int n_site;
    int extending;              /* past the shard's end, following its last block: records
                                 * feed the block only */
    int max_indel_depth;        /* -L times the samples */
    baq_t *baq;              /* BAQ and indel scoring's alignments, reused */
    bam1_t **baq_reads;         /* the column's reads that BAQ realigns, a batch */
    int *baq_ret;
    int m_baq;
} mp_worker_t;

/*
 * The reads a pass takes in: from its start to a little past its end,
 * because htslib reads one record beyond a column before it hands the column
 * out, and that record's mate overlap can change qualities BAQ then sees.
 */
#define MP_READ_PAST_END 1000
/* end + MP_READ_PAST_END, kept from overflowing past an open end (HTS_POS_MAX). */
static inline hts_pos_t mp_read_past(hts_pos_t end)
{
    return end < HTS_POS_MAX - MP_READ_PAST_END ? end + MP_READ_PAST_END : HTS_POS_MAX;
}
/*
 * Where a query for the reads over columns [beg, end) of in's contig may stop:
 * with a reference, where it ends (the read filter keeps no read starting
 * past it), else end. The columns past a contig's end run to an open end
 * (HTS_POS_MAX), and a query there asks the index for every bin of 2^29 bp.
 */
static inline hts_pos_t mp_kept_end(const mp_input_t *in, hts_pos_t beg, hts_pos_t end)
{
    if (in->ref && end > in->ref_len)
        return in->ref_len > beg ? in->ref_len : beg + 1;
    return end;
}

/* column_records: an indel record needs values from before the shard (find_carry). */
#define MP_NEED_CARRY 1

/* Whether the site's SNP record holds an ALT (bcftools' has_alt): its MWU tests ran. */
int mp_site_has_alt(const mp_site_t *bc);
/* htslib's pileup constructor: the read's sample and flags in cd.i (MP_CD_*). */
int mp_read_entered(void *data, const bam1_t *b, bam_pileup_cd *cd);
/* Partial (or full) BAQ at the worker's current column, as bcftools applies it. 0, or -1
 * out of memory. */
int mp_column_baq(mp_worker_t *w);
/* The column's reads grouped by sample into w->grp_n / w->grp_plp. 0, or -1 out of memory. */
int mp_group_by_sample(mp_worker_t *w);
/*
 * One printed column: the SNP record, then the indel record where there is
 * one, appended to out. *carry_known: the values indel records take from the
 * last SNP site with an ALT are known (set here at such a site). 0,
 * MP_NEED_CARRY when an indel record needs them unknown, -1 out of memory.
 */
int mp_column_records(mp_worker_t *w, int tid, hts_pos_t pos, kstring_t *out, int *carry_known);

/* Flush the worker's open gVCF block into out (none without -g). 0 or -1. */
int mp_gvcf_close(mp_worker_t *w, kstring_t *out);
/* A record's bytes as the output holds it: VCF text (sync NULL) or BCF (sync: a scratch
 * record); as the worker writes them (mp_put_record). 0 or -1. */
int mp_record_bytes(const bcf_hdr_t *hdr, bcf1_t *sync, bcf1_t *v, kstring_t *out);
int mp_put_record(mp_worker_t *w, bcf1_t *v, kstring_t *out);

/*
 * Bind contig tid's reference for a pass: the last pass's stretches given
 * back, nothing loaded yet (each kept read loads the reach BAQ and -C need,
 * the indel code loads its windows). bcftools holds the whole contig; the
 * bytes read are the same. 0, or -1 after ss_error().
 */
int mp_bind_ref(mp_worker_t *w, int tid);
/* Bind contig tid's reference and the worker's files. 0, or -1 after ss_error(). */
int mp_bind_contig(mp_worker_t *w, int tid);
/* ss_error() for a failed shard, naming the input and cause. Always -1. */
int mp_shard_error(mp_worker_t *w, const ss_shard_t *sh);
/* What a pass does with each column in its range: 0 go on, 1 stop, -1 failed. */
typedef int (*mp_column_fn)(mp_worker_t *w, int tid, hts_pos_t pos, void *ctx);
/*
 * One pass of bcftools' pileup over [lo, hi) of contig tid (scope_lo: where a
 * run over that contig or region starts). fn's last code, or -1 after ss_error().
 */
int mp_pileup_pass(mp_worker_t *w, const ss_shard_t *sh, int tid, hts_pos_t lo, hts_pos_t hi,
                   hts_pos_t scope_lo, mp_column_fn fn, void *ctx);
/*
 * Set w->bc's BQBZ/MQSBZ values to what bcftools' run would carry into the
 * shard (the last SNP site with an ALT before it). 0, or -1 after ss_error().
 */
int mp_find_carry(mp_worker_t *w, const ss_shard_t *sh);
/* 1 and the scope before (tid, lo) in the run's order in its bounds; 0 at the run's start. */
int mp_prev_scope(const mp_worker_t *w, int *tid, hts_pos_t *lo, hts_pos_t *hi);

#endif

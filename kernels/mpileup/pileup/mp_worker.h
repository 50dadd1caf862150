/*
 * mp_worker.h -- a worker of the mpileup kernel: its state (mp_worker_t, set
 * up by mpileup.c), the passes of its pileup (mp_pass.c), its columns and
 * their records (mp_column.c), its reference window (mp_ref.c), and the gVCF
 * block it closes (../mp_gvcf.c). Private to kernels/mpileup/.
 */
#ifndef SS_MP_WORKER_H
#define SS_MP_WORKER_H

#include <htslib/kstring.h>
#include <htslib/sam.h>
#include <htslib/vcf.h>

#include "base/ss_exact_fp.h" /* its users are built with the exact flags */

#include "../../../framework/ss_framework.h"
#include "../../../genomics/baq.h"
#include "../../../io/ss_ref.h"
#include "../call/mc_call.h"
#include "../likelihood/mp_likelihood.h"
#include "../mp_gvcf.h"
#include "../mp_opts.h"
#include "../mp_run.h"
#include "mp_mplp.h"
#include "mp_read.h"
#include "mp_ref.h"

/* ---- a worker (set up by mpileup.c), its columns (mp_column.c) and passes (mp_pass.c) ---- */

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
    int n; /* inputs */
    int n_smpl;
    mp_input_t *in;
    int *n_plp; /* per input, the column */
    const bam_pileup1_t **plp;
    mp_group_t *grp; /* per sample */
    int *grp_n;
    bam_pileup1_t **grp_plp;
    int *file_sample; /* per input: its sample, when each is its own; else NULL */
    mp_aux_t *bca;
    mp_smpl_t *bcr; /* per sample */
    mp_site_t bc;
    bcf1_t *rec, *sync;
    mp_rng_t rng;
    int before_unknown; /* the shard's stream start is not known yet (start_stream) */
    ss_ref_t *refs;     /* the reference, loaded by stretches (io/ref.c) */
    mp_ref_t rs;        /* the shard's contig in it: what is loaded */
    const char *ref;    /* rs.seq: the contig by position, NUL-terminated, or NULL */
    hts_pos_t ref_len;
    bam1_t *scratch;
    mp_mplp_t *mplp;     /* the pileup of every pass, reset for each (mp_pass.c) */
    int bcf;             /* BCF records, else VCF text */
    mp_gvcf_t *gv;       /* -g: gVCF blocks, or NULL */
    mc_caller_t *caller; /* --call: bcftools call on each record, or NULL */
    bcf1_t *called;      /* the caller's record */
    bcf1_t *site[2];     /* --call -C alleles: the column's records, called together */
    int n_site;
    int extending;       /* past the shard's end, following its last block: records
                          * feed the block only */
    int max_indel_depth; /* -L times the samples */
    baq_t *baq;          /* BAQ and indel scoring's alignments, reused */
    bam1_t **baq_reads;  /* the column's reads that BAQ realigns, a batch */
    int *baq_ret;
    int m_baq;
} mp_worker_t;

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

/* A record's bytes as the output holds it: VCF text (sync NULL) or BCF (sync: a scratch
 * record); as the worker writes them (mp_put_record). 0 or -1. */
int mp_record_bytes(const bcf_hdr_t *hdr, bcf1_t *sync, bcf1_t *v, kstring_t *out);
int mp_put_record(mp_worker_t *w, bcf1_t *v, kstring_t *out);

/* ---- the worker's gVCF blocks (../mp_gvcf.c) ---- */

/* Where a worker's records go: its output (mp_gvcf_put_block's and mc_call_site's ctx). */
typedef struct {
    mp_worker_t *w;
    kstring_t *out;
} mp_block_out_t;
/* The header of the records written: the caller's with --call, else mpileup's. */
const bcf_hdr_t *mp_gvcf_header(const mp_worker_t *w);
/* mp_gvcf_write's emit: the block into the worker's output (ctx: an mp_block_out_t). 0 or -1. */
int mp_gvcf_put_block(void *ctx, bcf1_t *block);
/* Flush the worker's open gVCF block into out (none without -g). 0 or -1. */
int mp_gvcf_close(mp_worker_t *w, kstring_t *out);

/* ---- the worker's reference (mp_ref.c) and passes (mp_pass.c) ---- */

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

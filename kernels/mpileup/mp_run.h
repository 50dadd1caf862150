/*
 * mp_run.h -- the run's state, set up once on the main thread (mpileup.c's
 * prepare) and read-only for the workers, and the VCF header it holds
 * (mp_header.c). Private to kernels/mpileup/.
 */
#ifndef SS_MP_RUN_H
#define SS_MP_RUN_H

#include <htslib/kstring.h>
#include <htslib/vcf.h>

#include "../../framework/ss_framework.h"
#include "../../genomics/baq.h"
#include "call/mc_call.h"
#include "mp_opts.h"
#include "select/mp_select.h"

/* The run state: samples and the VCF header, read-only for the workers. */
typedef struct {
    mp_targets_t targets;
    mp_samples_t smpl;
    bcf_hdr_t *vcf_hdr;        /* mpileup's records' header */
    bcf_hdr_t *out_hdr;        /* the output's: bcftools call's with --call, else vcf_hdr */
    kstring_t head;            /* the header's bytes, as the output opens */
    baq_path_t baq_path;       /* the BAQ code this machine runs (pileup's, bit for bit htslib's) */
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

#endif

/*
 * mp_opts.h -- bcftools mpileup's options (mp_opts.c): the plain struct the
 * kernel's entry (mpileup.c) and every part of a run read. Private to
 * kernels/mpileup/.
 */
#ifndef SS_MP_OPTS_H
#define SS_MP_OPTS_H

#include <stdio.h>

#include "../../framework/ss_framework.h"
#include "call/mc_call.h"

/* Output types of -O (bcftools' letters). */
enum { MP_OUT_VCF = 'v', MP_OUT_VCF_GZ = 'z', MP_OUT_BCF = 'u', MP_OUT_BCF_GZ = 'b' };

/* bcftools mpileup's options, with its defaults (mp_opts_default). */
typedef struct {
    int min_mq;               /* -q */
    int min_baseQ;            /* -Q [1] */
    int max_baseQ;            /* --max-BQ [60] */
    int delta_baseQ;          /* --delta-BQ [30] */
    int capQ_thres;           /* -C [0] */
    int max_depth;            /* -d [250], per file */
    int max_indel_depth;      /* -L [250], per sample */
    int openQ, extQ, tandemQ; /* -o/--open-prob [40], -e [20], -h [500] */
    double min_frac;          /* -F [0.05] */
    float indel_bias;         /* 1 / --indel-bias [1] */
    int min_support;          /* -m [2] */
    int indel_win_size;       /* --indel-size [110] */
    int max_read_len;         /* -M [500] */
    int allow_ref_mismatch;   /* --allow-ref-mismatch: a -f of another genome warns, not stops */
    int ambig_reads;          /* --ar: MP_AMBIG_* */
    int fmt_flag;             /* -a, -U */
    int baq;                  /* on unless -B */
    int baq_partial;          /* on unless -D (full BAQ) */
    int redo_baq;             /* -E */
    int illumina13;           /* -6 */
    int orphans;              /* -A: keep anomalous pairs */
    int overlaps;             /* off with -x */
    int no_indel;             /* -I */
    int per_sample_flt;       /* -p */
    int ignore_rg;            /* --ignore-RG */
    char *samples;            /* -s LIST or -S FILE, owned, or NULL */
    int samples_is_file;      /* it was -S */
    char *read_groups;        /* -G FILE, owned, or NULL */
    char *regions;            /* -r LIST, owned, or NULL */
    char *regions_file;       /* -R FILE, owned, or NULL */
    char *targets;            /* -t LIST or -T FILE ('^' excludes), owned, or NULL */
    int targets_is_file;      /* it was -T */
    char **call_argv;         /* --call: bcftools call's words, owned (call_argv[0] "call") */
    int call_argc;            /* 0: no --call */
    mc_opts_t *call;          /* --call's options parsed, owned, or NULL */
    int *gvcf_ranges;         /* -g's DP bounds, owned, or NULL: no gVCF */
    int n_gvcf_ranges;
    int no_reference;                                               /* --no-reference */
    int skip_any_unset, skip_all_unset, skip_any_set, skip_all_set; /* --nu --lu --ns --ls */
    long seed;                                                      /* --seed [0] */
    int out_type;                                                   /* -O letter: MP_OUT_* */
    int level;                                                      /* -O's level, or -1 */
    int index_tbi;       /* --write-index=tbi: a .tbi (bcftools index -t), not a .csi */
    int record_cmd_line; /* off with --no-version */
    char *cmd_line;      /* "mpileup ARGS" for ##bcftoolsCommand, owned */
} mp_opts_t;

void mp_opts_default(mp_opts_t *o);
void mp_opts_free(mp_opts_t *o);
int mp_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts);
void mp_usage(FILE *fp);

#endif

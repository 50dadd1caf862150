/*
 * mc_priv.h -- what the mc_*.c files share: the caller's state and the
 * functions each file offers the others. Include only from mc_*.c.
 *
 * Arithmetic in these files follows bcftools call 1.16 operation by
 * operation (float where it keeps float, long double where it sums in long
 * double, the same libm and htslib kfunc calls), so that QUAL, GQ, GP and
 * the INFO values print as bcftools prints them. Files are built with
 * -ffp-contract=off; an algebraically equal rewrite can move a last bit.
 */
#ifndef SS_MC_PRIV_H
#define SS_MC_PRIV_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "base/ss_exact_fp.h" /* its users are built with the exact flags */

#include "mc_call.h"

#define MC_PFX "seqshard mpileup --call"

/* -G: samples whose allele frequencies are estimated together (smpl_grp_t). */
typedef struct {
    int *smpl; /* output sample indices */
    int nsmpl;
    float *qsum; /* per allele: summed quality or AD share, then normalised */
    int mqsum;   /* qsum's capacity in floats (htslib's convention) */
    double ref_lk, max_lk, lk_sum;
    int als; /* bitmask of the group's most likely alleles */
    int nals;
} mc_group_t;

/* -s/-S resolved against the input header. */
typedef struct {
    int n;            /* output samples */
    int *imap;        /* output sample -> input sample, or NULL when bcftools keeps all as is */
    char **names;     /* the output samples' names (owned), for bcf_hdr_subset */
    int *sample2sex;  /* per output sample: a sex, or minus its own ploidy */
    int n_sexes;      /* the definition's sexes and those -S adds */
    int *sex_default; /* per sex */
} mc_samples_t;

typedef struct mc_afs_s mc_afs_t;

/* -i: the shard's targets [lo, hi) of the contig's (index contig, -1: none) and which were
 * taken; cursor: the first not yet written or passed */
typedef struct {
    int active, contig;
    mc_missed_shard_t part;
    size_t lo, hi, cursor, probe; /* probe: mc_missed_wants' place */
    uint8_t *used;
    int m_used;
    hts_pos_t last_pass; /* the shard's last passing record, or -1 */
    mc_emit_fn emit;
    void *ctx;
    bcf1_t *line;
} mc_missed_t;

struct mc_caller_s {
    /* why the last call failed (mc_fail), for the kernel's one line (mc_error) */
    char err[400];
    const mc_opts_t *o;
    bcf_hdr_t *hdr; /* the output header (owned); records are edited through it */
    int nsmpl;
    int *imap; /* -s/-S subset map (owned) or NULL */

    /* ploidy: sample2sex and the sexes' defaults from mc_samples_t */
    int *sample2sex, *sex_default, n_sexes;
    int *sex2ploidy, *sex2ploidy_prev;
    uint8_t *ploidy; /* per sample, as of the current record */
    int ploidy_max;
    int rules_rid; /* the contig rules_on holds the rule indices of, or -1 */

    /* -T: the last record's contig and its index in the targets (mc_targets_contig) */
    int targets_rid, targets_contig;
    int *rules_on, n_rules_on;

    double pl2p[256]; /* PL -> 10^(-PL/10) */
    int unseen;       /* index of the <*> allele, or 0 */

    /* per-record buffers, grown as needed */
    int32_t *PLs;
    int mPLs, nPLs;
    double *pdg;
    size_t mpdg;
    int32_t *gts; /* 2 per sample */
    int *ac;
    int mac;
    int *als_map, *pl_map;
    int mals_map, mpl_map;
    const char **als;
    int mals;
    float *GPs;
    int mGPs;
    int32_t *GQs;
    int32_t *ADs;
    int mADs;
    void *tmp_ori, *tmp_new; /* Number=R trimming */
    int mtmp_ori, mtmp_new;
    float *anno16;
    int m16;

    /* -m */
    double theta; /* log of the Watterson-scaled prior, or 0 */
    mc_group_t *grp;
    int n_grp;
    const char *grp_tag;
    int als_new, nals_new;

    /* -c */
    mc_afs_t *afs;

    /* -C alleles (mc_alleles.c) */
    char *const *tgt_als; /* the target the record being called was paired with, or NULL */
    int32_t *itmp;        /* rearranged PLs */
    int mitmp;
    uint8_t *site_used; /* per target at the site: paired already */
    int msite_used;
    mc_missed_t missed; /* -i */
};

/* log(exp(a) + exp(b)), the larger term factored out (mcall.c's logsumexp2). */
static inline double mc_log_add(double a, double b)
{
    if (a > b)
        return log(1 + exp(b - a)) + a;
    return log(1 + exp(a - b)) + b;
}

/* mc_alleles.c: -C alleles; the targets at rec's site ([*lo, *hi); the contig's index,
 * or -1), mc_caller.c */
/* Record why a call fails, in c->err, for mc_error; the caller then returns -1. */
void mc_fail(mc_caller_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int mc_constrain_alleles(mc_caller_t *c, bcf1_t *rec);
int mc_site_targets(mc_caller_t *c, const bcf1_t *rec, size_t *lo, size_t *hi);

/* mc_missed.c: -i; a target taken; a passing record; the line of target t of contig tc */
void mc_missed_taken(mc_caller_t *c, size_t t);
int mc_missed_pass(mc_caller_t *c, const bcf1_t *rec);
int mc_missed_line(const mc_opts_t *o, bcf_hdr_t *hdr, int tc, size_t t, bcf1_t *line);

/* mc_record.c */
int mc_grow(void *p, int *m, size_t n, size_t size);
void mc_allele_maps(mc_caller_t *c, int nals_ori, int als_out, int with_pl_map);
int mc_trim_number_r(mc_caller_t *c, bcf1_t *rec, int nals_ori, int nals_new);
/* bcftools' anno16_t: the I16 tests. */
typedef struct {
    double p[4]; /* strand, baseQ, mapQ, tail-distance bias P-values */
    int mq, depth, is_tested;
} mc_i16_t;
int mc_test_i16(const float *anno16, mc_i16_t *a);
int32_t mc_float_to_int32(float x);

/* mc_ploidy.c */
int mc_ploidy_preset(const char *name, mc_ploidy_t *p);
int mc_ploidy_file(const char *fname, mc_ploidy_t *p);
int mc_ploidy_text(const char *text, mc_ploidy_t *p);
void mc_ploidy_free(mc_ploidy_t *p);
int mc_ploidy_max(const mc_ploidy_t *p);
int mc_ploidy_rules_on(const mc_ploidy_t *p, const char *chrom, int **idx, int *n);
void mc_ploidy_query(const mc_ploidy_t *p, const int *rules, int n_rules, const int *sex_default,
                     int n_sexes, hts_pos_t pos, int *sex2ploidy);

/* mc_site_targets.c: -T read into o->targets (0, or -1 after a message); a contig's index in
 * them (-1: none); whether a site is a target (contig: that index); the targets at a
 * site, [*lo, *hi) of the contig's (none: lo == hi). */
int mc_targets_read(mc_opts_t *o); /* o->targets.path, with alleles under -C alleles */
void mc_targets_free(mc_targets_t *t);
int mc_targets_contig(const mc_targets_t *t, const char *name);
int mc_targets_has(const mc_targets_t *t, int contig, hts_pos_t pos);
void mc_targets_at(const mc_targets_t *t, int contig, hts_pos_t pos, size_t *lo, size_t *hi);
/* The first target of c at pos or after (c->n when none). */
size_t mc_targets_lower(const mc_target_contig_t *c, hts_pos_t pos);

/* mc_samples.c */
int mc_samples_read(mc_opts_t *o, const char *arg, int is_file);
int mc_samples_resolve(const mc_opts_t *o, const bcf_hdr_t *in_hdr, int verbose, mc_samples_t *s);
void mc_samples_free(mc_samples_t *s);
int mc_groups_init(mc_caller_t *c);
void mc_groups_free(mc_caller_t *c);

/* mc_multi.c, mc_multi_gt.c */
int mc_multi_header(const mc_opts_t *o, bcf_hdr_t *hdr);
int mc_multi_init(mc_caller_t *c);
double mc_multi_prior(const mc_opts_t *o, int n_hap, int verbose);
int mc_multi_call(mc_caller_t *c, bcf1_t *rec);
void mc_multi_pdg(mc_caller_t *c, int ngts);
void mc_multi_best_alleles(mc_caller_t *c, int nals, mc_group_t *grp);
void mc_multi_ref_genotypes(mc_caller_t *c, int nals_ori);
void mc_multi_genotypes(mc_caller_t *c, int nals_ori, mc_group_t *grp);

/* mc_consensus.c, mc_afs.c, mc_em.c */
int mc_consensus_header(const mc_opts_t *o, bcf_hdr_t *hdr);
int mc_consensus_call(mc_caller_t *c, bcf1_t *rec);

/* The site's allele-frequency results (bcf_p1rst_t, the fields -c uses). */
typedef struct {
    int rank0; /* REF's rank among the alleles by summed hom PL */
    int ac;    /* ML count of non-REF alleles */
    double f_exp, p_ref_folded, p_ref, p_var_folded, p_var;
} mc_afs_result_t;

mc_afs_t *mc_afs_init(int nsmpl, const uint8_t *ploidy);
void mc_afs_destroy(mc_afs_t *a);
int mc_afs_site(mc_afs_t *a, bcf1_t *rec, const int32_t *PLs, int nPLs, mc_afs_result_t *r);
int mc_afs_genotype(const mc_afs_t *a, double f0, int k, int is_var);

int mc_em_site(const double *pdg, int nsmpl, int n_allele, double x[10]);

#endif

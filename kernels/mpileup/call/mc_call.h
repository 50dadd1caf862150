/*
 * mc_call.h -- `seqshard mpileup --call`: bcftools call 1.16's calling, one
 * mpileup record in, the record `bcftools call --no-version` writes out.
 *
 * The options are parsed once (mc_opts_parse); each worker thread then owns
 * one mc_caller_t and calls mc_call on the records of its shard, in order.
 * Nothing is shared between callers but the options, which they only read.
 *
 * What a caller carries from one record to the next: only the ploidy quirk
 * described at mc_call. Everything else is worked out from the record alone.
 *
 * Files: mc_opts.c (options), mc_ploidy.c (--ploidy rules), mc_samples.c
 * (-s/-S samples and sexes, -G groups), mc_caller.c (set-up, header, the
 * per-record driver), mc_multi.c and mc_multi_gt.c (-m), mc_consensus.c,
 * mc_afs.c and mc_em.c (-c), mc_record.c (record edits both models share).
 *
 * Private to kernels/mpileup/: the mpileup kernel includes this header; the
 * mc_*.c files also include mc_priv.h.
 */
#ifndef SS_MC_CALL_H
#define SS_MC_CALL_H

#include <htslib/hts.h>
#include <htslib/kstring.h>
#include <htslib/vcf.h>

/* -a bits (bcftools' CALL_FMT_* values). */
#define MC_ANN_PV4 (1 << 5)
#define MC_ANN_GQ  (1 << 6)
#define MC_ANN_GP  (1 << 7)

/* The calling model: -m or -c. */
enum { MC_MODEL_MULTI = 'm', MC_MODEL_CONSENSUS = 'c' };

/* -V: the kind of site to skip. */
enum { MC_SKIP_NONE = 0, MC_SKIP_SNPS, MC_SKIP_INDELS };

/*
 * One line of a ploidy definition (CHROM FROM TO SEX PLOIDY). Lines with
 * CHROM "*" set a sex's default and are not kept as rules.
 */
typedef struct {
    char *chrom;        /* owned */
    hts_pos_t beg, end; /* 0-based, inclusive */
    int sex;            /* index into mc_ploidy_t.sexes */
    int ploidy;
} mc_ploidy_rule_t;

/* A parsed --ploidy / --ploidy-file definition (ploidy.c's ploidy_t, as data). */
typedef struct {
    mc_ploidy_rule_t *rules; /* by start, the longer first at equal starts */
    int n_rules;
    char **sexes;     /* owned; in order of first appearance */
    int *sex_default; /* each sex's ploidy where no rule applies */
    int n_sexes;
    int dflt, min, max; /* as bcftools keeps them (max also sees dflt) */
} mc_ploidy_t;

/* -T: one contig's target positions (0-based, sorted; repeats kept). */
typedef struct {
    char *name;     /* owned */
    hts_pos_t *pos; /* sorted; targets at one position keep the file's order */
    char ***als;    /* -C alleles: each target's alleles (NULL-terminated, owned), or NULL */
    size_t n, m;
} mc_target_contig_t;

/* -t/-T FILE as read (mc_site_targets.c). */
typedef struct {
    char *path; /* owned, or NULL: every site is called */
    mc_target_contig_t *contigs;
    int n_contigs;
} mc_targets_t;

/* bcftools call's options, with its defaults. Plain data: read-only once parsed. */
typedef struct mc_opts_s {
    int model;             /* MC_MODEL_* */
    int variants_only;     /* -v */
    int keep_alts;         /* -A */
    int keep_masked_ref;   /* -M: keep sites whose REF starts with N */
    int skip;              /* -V: MC_SKIP_* */
    int annots;            /* -a: MC_ANN_* */
    double theta;          /* -P [1.1e-3] */
    double pval_threshold; /* -p [0.5] */
    char *prior_an;        /* -F AN,AC: owned, or NULL */
    char *prior_ac;
    char *groups;       /* -G FILE or "-": owned, or NULL */
    char **group_lines; /* FILE's lines, read at parse time (owned) */
    int n_group_lines;
    char *groups_tag;    /* --group-samples-tag: owned, or NULL */
    char **sample_lines; /* -s LIST / -S FILE, one sample a line (owned), or NULL */
    int n_sample_lines;
    int samples_is_file;   /* it was -S (a PED file is also read as one) */
    char *samples_path;    /* -S FILE: owned, or NULL */
    mc_ploidy_t ploidy;    /* --ploidy / --ploidy-file / the default */
    char *ploidy_path;     /* --ploidy-file: owned, or NULL */
    int ploidy_given;      /* --ploidy or --ploidy-file was given */
    int record_cmd_line;   /* 0 with --no-version (the header is always without) */
    mc_targets_t targets;  /* -T (or -t) FILE */
    int constrain_alleles; /* -C alleles: call the alleles -T names at each site */
    int insert_missed;     /* -i: a line for every target no record took (mc_missed.c) */
    int *gvcf_ranges;      /* -g INT[,...]: gVCF blocks' DP bounds (owned), or NULL */
    int n_gvcf_ranges;
} mc_opts_t;

/*
 * Parse bcftools call's options: argv[0..argc) are the words after --call
 * (no program name). Names, meanings and defaults are bcftools 1.16's; what
 * cannot work on one record stream (-o/-O, -r/-R, -C trio, -i, input
 * files) is refused with a one-line reason on stderr. theirs (or NULL):
 * whether a word bcftools call does not know is an option of the command
 * running the caller, which is then said. Files (-G, -S, --ploidy-file, -T)
 * are read here. Returns 0 with *o set (free it with mc_opts_free), or -1
 * after a message. Main thread only (uses getopt_long; its globals are
 * restored on return).
 */
int mc_opts_parse(int argc, char **argv, int (*theirs)(const char *word), mc_opts_t **o);
/* Free what mc_opts_parse made; accepts NULL. */
void mc_opts_free(mc_opts_t *o);

/* A file the caller reads, and what it is in a message ("the --call -S samples file"). */
typedef struct {
    const char *path, *role;
} mc_file_t;
#define MC_MAX_FILES 4
/*
 * The files o reads (-T/-t, -G, -S, --ploidy-file) into files[0..MC_MAX_FILES):
 * the run's too (--resume's identity, the clash check). The paths are o's.
 * Returns how many.
 */
int mc_opts_files(const mc_opts_t *o, mc_file_t files[MC_MAX_FILES]);

/*
 * The header `bcftools call --no-version` writes for input with the header
 * mpileup_hdr (samples subset by -s/-S, caller tags added, INFO/QS and I16
 * taken out). verbose: print bcftools' notes and warnings (the default
 * ploidy, -S names not in the input); call it so once. It also checks what
 * mc_init would refuse (-G's tag or file), so that is reported once.
 * NULL after a message on stderr. The caller frees it with
 * bcf_hdr_destroy. Any thread.
 */
bcf_hdr_t *mc_out_header(const mc_opts_t *o, const bcf_hdr_t *mpileup_hdr, int verbose);

typedef struct mc_caller_s mc_caller_t;

/*
 * A caller for records with the header mpileup_hdr. It keeps a pointer to o
 * (which must outlive it) and its own copy of the output header. NULL after
 * a message on stderr. Free with mc_destroy (accepts NULL). Any thread; one
 * caller is used by one thread at a time.
 */
mc_caller_t *mc_init(const mc_opts_t *o, const bcf_hdr_t *mpileup_hdr);
void mc_destroy(mc_caller_t *c);

/*
 * Call one mpileup record: `in` (not changed, though htslib may pack it) is
 * copied to `out` (a different record), which becomes the record bcftools
 * call writes, to be written with mc_out_header's header.
 * Returns 1: write out; 0: nothing to write (a site bcftools skips: -v and
 * not variant, REF N, -V); < 0: error, after a message (bcftools stops there).
 *
 * Records must come in their order along the genome. One quirk of bcftools
 * carries over from record to record: a sample given its own ploidy in -S
 * keeps the highest ploidy of the definition until the first record (not
 * skipped as above) where some sex's ploidy is not that highest one. With
 * the default ploidy that is the first record; with e.g. --ploidy GRCh37 it
 * is the first on X, Y or MT. A caller that starts mid-genome cannot know
 * whether such a record came before: mc_caller_memoryless says when that
 * matters.
 */
int mc_call(mc_caller_t *c, bcf1_t *in, bcf1_t *out);
/*
 * Why the last mc_call or mc_call_site of c failed ("" if it said nothing), for the
 * kernel's one-line message; valid until c's next call. The thread that owns c.
 */
const char *mc_error(const mc_caller_t *c);

/*
 * -C alleles: call the records mpileup made at one position (recs[0..n), in
 * its order) against the -T targets there, paired as bcftools pairs them
 * (mc_alleles.c); each record written goes to emit(ctx, out) in that order.
 * 0, or -1 after a message (bcftools stops there).
 */
typedef int (*mc_emit_fn)(void *ctx, bcf1_t *rec);
int mc_call_site(mc_caller_t *c, bcf1_t **recs, int n, bcf1_t *out, mc_emit_fn emit, void *ctx);

/*
 * -i (mc_missed.c, mc_missed_plan.c). A shard's part: the targets it owns,
 * [own_beg, own_end); keep_tail: its contig has a passing record, so the
 * untaken targets after its last one are written at its end, except those at
 * defer_pos (-1: none), which end the output.
 */
typedef struct {
    hts_pos_t own_beg, own_end;
    int keep_tail;
    hts_pos_t defer_pos;
} mc_missed_shard_t;

/* Start a shard on contig (its part from the plan; before the run, its own range): the lines
 * go to emit(ctx, line), before the passing records of mc_call_site. 0 or -1. */
int mc_missed_begin(mc_caller_t *c, const char *contig, const mc_missed_shard_t *part,
                    mc_emit_fn emit, void *ctx);
/* Whether the shard has a target at pos (positions asked in order). */
int mc_missed_wants(mc_caller_t *c, hts_pos_t pos);
/* The shard's end: its untaken targets after its last passing record. 0 or -1. */
int mc_missed_end(mc_caller_t *c);
/* Before the run, after a shard's pass: what it leaves, appended to bytes. 0 or -1. */
int mc_missed_summary(mc_caller_t *c, int idx, int tid, hts_pos_t beg, hts_pos_t end,
                      kstring_t *bytes);

/* Whether the targets have one on contig within [beg, end). */
int mc_targets_within(const mc_opts_t *o, const char *contig, hts_pos_t beg, hts_pos_t end);

/* The plan from every shard's summary, joined in plan order. NULL after a message. */
typedef struct mc_missed_plan_s mc_missed_plan_t;
mc_missed_plan_t *mc_missed_plan(const mc_opts_t *o, const char *bytes, size_t len);
void mc_missed_plan_free(mc_missed_plan_t *p);
/* Shard idx's part (an empty part when the plan has none). */
const mc_missed_shard_t *mc_missed_plan_part(const mc_missed_plan_t *p, int idx);
/* The lines that end the output, through emit, with the output header hdr. 0 or -1. */
int mc_missed_plan_end(const mc_missed_plan_t *p, const mc_opts_t *o, bcf_hdr_t *hdr,
                       mc_emit_fn emit, void *ctx);

/*
 * Whether the caller's records depend on nothing before them: 0 only when a
 * sample has its own ploidy (-S) under a definition whose rules make the
 * ploidy vary along the genome, the quirk above. Any thread.
 */
int mc_caller_memoryless(const mc_caller_t *c);

#endif

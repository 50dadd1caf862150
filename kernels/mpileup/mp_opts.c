/*
 * mp_opts.c -- `seqshard mpileup` options: bcftools mpileup 1.16's names,
 * defaults and parsing rules (-o is the output, or --open-prob when it is a
 * number, as bcftools has it), plus the framework's run options.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../framework/ss_framework_extra.h"
#include "base/ss_exact_fp.h"
#include "likelihood/mp_likelihood.h" /* the -a bits (MP_FMT_*, MP_INFO_*), --ar (MP_AMBIG_*) */
#include "mp_gvcf.h"
#include "mp_opts.h"
#include "select/mp_select.h" /* mp_regions_add */

void mp_opts_default(mp_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->min_baseQ = 1;
    o->max_baseQ = 60;
    o->delta_baseQ = 30;
    o->max_depth = 250;
    o->max_indel_depth = 250;
    o->openQ = 40;
    o->extQ = 20;
    o->tandemQ = 500;
    o->min_frac = 0.05;
    o->indel_bias = 1.0f;
    o->min_support = 2;
    o->indel_win_size = 110;
    o->max_read_len = 500;
    o->ambig_reads = MP_AMBIG_DROP;
    o->fmt_flag = MP_INFO_VDB | MP_INFO_RPB | MP_INFO_SCB | MP_INFO_ZSCORE;
    o->baq = 1;
    o->baq_partial = 1;
    o->overlaps = 1;
    o->skip_any_set = BAM_FUNMAP | BAM_FSECONDARY | BAM_FQCFAIL | BAM_FDUP;
    o->out_type = MP_OUT_VCF;
    o->level = -1;
    o->record_cmd_line = 1;
}

void mp_opts_free(mp_opts_t *o)
{
    if (o) {
        free(o->cmd_line);
        free(o->samples);
        free(o->read_groups);
        free(o->regions);
        free(o->regions_file);
        free(o->targets);
        free(o->gvcf_ranges);
        for (int i = 0; i < o->call_argc; i++)
            free(o->call_argv[i]);
        free(o->call_argv);
        mc_opts_free(o->call);
    }
}

enum {
    O_NU = 0x100,
    O_LU,
    O_NS,
    O_LS,
    O_OPEN,
    O_IGNORE_RG,
    O_NOREF,
    O_NOVERSION,
    O_MAXBQ,
    O_DELTABQ,
    O_SEED,
    O_AR,
    O_INDEL_BIAS,
    O_INDEL_SIZE,
    O_WRITE_INDEX,
    O_ALLOW_REF
};

#define ALIAS(key, name, arg)         \
    {                                 \
        key, 0, name, arg, NULL, NULL \
    }

static const ss_opt_t input_opts[] = {
    {'6', '6', "illumina1.3+", NULL, "quality is in the Illumina-1.3+ encoding", NULL},
    {'A', 'A', "count-orphans", NULL, "do not discard anomalous read pairs", NULL},
    {'b', 'b', "bam-list", "FILE", "list of input BAM filenames, one per line", SS_VALUES_FILE},
    {'B', 'B', "no-BAQ", NULL, "disable BAQ (per-Base Alignment Quality)", NULL},
    ALIAS('B', "no-baq", NULL),
    {'C', 'C', "adjust-MQ", "INT", "adjust mapping quality [0]", NULL},
    ALIAS('C', "adjust-mq", "INT"),
    {'D', 'D', "full-BAQ", NULL, "apply BAQ everywhere, not just in problematic regions", NULL},
    ALIAS('D', "full-baq", NULL),
    {'d', 'd', "max-depth", "INT", "max raw per-file depth; avoids excessive memory usage [250]",
     NULL},
    {'E', 'E', "redo-BAQ", NULL, "recalculate BAQ on the fly, ignore existing BQs", NULL},
    ALIAS('E', "redo-baq", NULL),
    {'f', 'f', "fasta-ref", "FILE", "faidx indexed reference sequence file", SS_VALUES_FILE},
    {O_ALLOW_REF, 0, "allow-ref-mismatch", NULL,
     "go on, as bcftools does, when -f lacks a contig the run reads or has another length "
     "(N as the reference there) [stop]",
     NULL},
    {O_NOREF, 0, "no-reference", NULL, "do not require fasta reference file", NULL},
    {'q', 'q', "min-MQ", "INT", "skip alignments with mapQ smaller than INT [0]", NULL},
    ALIAS('q', "min-mq", "INT"),
    {'Q', 'Q', "min-BQ", "INT", "skip bases with baseQ/BAQ smaller than INT [1]", NULL},
    ALIAS('Q', "min-bq", "INT"),
    {O_MAXBQ, 0, "max-BQ", "INT", "limit baseQ/BAQ to no more than INT [60]", NULL},
    ALIAS(O_MAXBQ, "max-bq", "INT"),
    {O_DELTABQ, 0, "delta-BQ", "INT", "use neighbour_qual + INT if less than qual [30]", NULL},
    {'r', 'r', "regions", "REG[,...]",
     "comma separated list of regions in which pileup is generated", NULL},
    ALIAS('r', "region", "REG[,...]"),
    {'R', 'R', "regions-file", "FILE", "restrict to regions listed in a file", SS_VALUES_FILE},
    {'t', 't', "targets", "REG[,...]",
     "similar to -r but streams rather than index-jumps ('^' excludes)", NULL},
    {'T', 'T', "targets-file", "FILE",
     "similar to -R but streams rather than index-jumps ('^FILE' excludes)", SS_VALUES_FILE},
    {O_IGNORE_RG, 0, "ignore-RG", NULL, "ignore RG tags (one BAM = one sample)", NULL},
    ALIAS(O_IGNORE_RG, "ignore-rg", NULL),
    {O_LS, 0, "ls", "STR|INT", "skip reads with all of the bits set (also --skip-all-set) []",
     NULL},
    ALIAS(O_LS, "skip-all-set", "STR|INT"),
    {O_NS, 0, "ns", "STR|INT",
     "skip reads with any of the bits set (also --skip-any-set, --ff) "
     "[UNMAP,SECONDARY,QCFAIL,DUP]",
     NULL},
    ALIAS(O_NS, "skip-any-set", "STR|INT"),
    ALIAS(O_NS, "ff", "STR|INT"),
    {O_LU, 0, "lu", "STR|INT",
     "skip reads with all of the bits unset (also --skip-all-unset, --rf) []", NULL},
    ALIAS(O_LU, "skip-all-unset", "STR|INT"),
    ALIAS(O_LU, "rf", "STR|INT"),
    {O_NU, 0, "nu", "STR|INT", "skip reads with any of the bits unset (also --skip-any-unset) []",
     NULL},
    ALIAS(O_NU, "skip-any-unset", "STR|INT"),
    {'s', 's', "samples", "LIST", "comma separated list of samples to include ('^' excludes)",
     NULL},
    {'S', 'S', "samples-file", "FILE", "file of samples to include ('^FILE' excludes)",
     SS_VALUES_FILE},
    {'G', 'G', "read-groups", "FILE", "select or exclude ('^FILE') read groups listed in the file",
     SS_VALUES_FILE},
    {'x', 'x', "ignore-overlaps", NULL, "disable read-pair overlap detection", NULL},
    {'g', 'g', "gvcf", "INT[,...]",
     "group non-variant sites into gVCF blocks according to minimum per-sample DP", NULL},
    {O_SEED, 0, "seed", "INT", "random number seed used for sampling deep regions [0]", NULL},
    SS_OPT_END};

static const ss_opt_t output_opts[] = {
    {'a', 'a', "annotate", "LIST", "optional tags to output; '?' to list available tags []", NULL},
    {O_NOVERSION, 0, "no-version", NULL, "do not append version and command line to the header",
     NULL},
    {'o', 'o', "output", "FILE",
     "write output to FILE [standard output]; a number is --open-prob, as in bcftools", NULL},
    {'O', 'O', "output-type", "TYPE",
     "'b' compressed BCF; 'u' uncompressed BCF; 'z' compressed VCF; 'v' uncompressed VCF; "
     "0-9 compression level [v]",
     "b u z v"},
    {'U', 'U', "mwu-u", NULL, "use older probability scale for Mann-Whitney U test", NULL},
    {O_WRITE_INDEX, 0, "write-index", "[=FMT]",
     "index the compressed output as bcftools index does: csi (-Ob/-Oz, the default) or "
     "tbi (-Oz; bcftools index -t)",
     NULL},
    SS_OPT_END};

static const ss_opt_t gl_opts[] = {
    {'X', 'X', "config", "STR", "platform profile: 1.12, illumina, ont, pacbio-ccs",
     "1.12 illumina ont pacbio-ccs"},
    {'e', 'e', "ext-prob", "INT", "phred-scaled gap extension seq error probability [20]", NULL},
    {'F', 'F', "gap-frac", "FLOAT", "minimum fraction of gapped reads [0.05]", NULL},
    {'h', 'h', "tandem-qual", "INT", "coefficient for homopolymer errors [500]", NULL},
    {'I', 'I', "skip-indels", NULL, "do not perform indel calling", NULL},
    {'L', 'L', "max-idepth", "INT", "maximum per-file depth for INDEL calling [250]", NULL},
    {'m', 'm', "min-ireads", "INT", "minimum number gapped reads for indel candidates [2]", NULL},
    {'M', 'M', "max-read-len", "INT", "maximum length of read to pass to BAQ algorithm [500]",
     NULL},
    {O_OPEN, 0, "open-prob", "INT", "phred-scaled gap open seq error probability [40]", NULL},
    {'p', 'p', "per-sample-mF", NULL, "apply -m and -F per-sample for increased sensitivity", NULL},
    {'P', 'P', "platforms", "STR",
     "comma separated list of platforms for indels [all]; accepted and, as in bcftools "
     "1.16, unused",
     NULL},
    {O_AR, 0, "ar", "STR",
     "what to do with ambiguous indel reads: drop, incAD, incAD0 (also --ambig-reads) [drop]",
     "drop incAD incAD0"},
    ALIAS(O_AR, "ambig-reads", "STR"),
    {O_INDEL_BIAS, 0, "indel-bias", "FLOAT", "raise to favour recall over precision [1.00]", NULL},
    {O_INDEL_SIZE, 0, "indel-size", "INT", "approximate maximum indel size considered [110]", NULL},
    SS_OPT_END};

static const ss_opt_group_t mp_groups[] = {
    {"Input options", input_opts, NULL},
    {"Output options", output_opts, NULL},
    {"SNP/INDEL genotype likelihoods options", gl_opts,
     "Configuration profiles activated with -X, --config:\n"
     "    1.12:        -Q13 -h100 -m1 -F0.002\n"
     "    illumina:    [ default values ]\n"
     "    ont:         -B -Q5 --max-BQ 30 -I\n"
     "    pacbio-ccs:  -D -Q5 --max-BQ 50 -F0.1 -o25 -e1 --delta-BQ 10 -M99999"},
    {"Framework options", ss_opts_run, NULL},
    {NULL, NULL, NULL}};

static const ss_cmd_t mp_cmd = {
    .name = "mpileup",
    .synopsis = "-f ref.fa [options] in1.bam|in1.cram [in2 ...] [--call [call options]]",
    .summary = "genotype likelihoods (VCF/BCF), byte-identical to bcftools mpileup",
    .description =
        "Genotype likelihoods for every covered position, the records of one bcftools\n"
        "mpileup 1.16 run over the whole input, computed in parallel over genomic\n"
        "shards: the same bytes at any -@, rank count and --shard-size. -@ and --threads\n"
        "are seqshard's worker count, which also compresses (bcftools' --threads). Shards\n"
        "are half the usual size unless --shard-size is given (131072).\n"
        "\n"
        "--call ends mpileup's options: every word after it is bcftools call's own\n"
        "command line (-m or -c, -v, -A, -a, -G, -g, --ploidy, -P, -p, -s/-S, -V, -M, -T,\n"
        "-C alleles ...), and the output is the bytes of `bcftools mpileup -Ou ... |\n"
        "bcftools call ...` in one pass; -o, -O and --write-index after --call name that\n"
        "output. Refused after --call: -r/-R (give them to mpileup) and -C trio; -i (with -C\n"
        "alleles) is refused with --write-index and -g.",
    .groups = mp_groups,
    .examples = "  # bcftools mpileup's BCF, on every core, into bcftools call\n"
                "  seqshard mpileup -f ref.fa -Ou in.bam | bcftools call -mv -Oz -o calls.vcf.gz\n"
                "  # three samples with extra annotations, compressed\n"
                "  seqshard mpileup -f ref.fa -a AD,DP,SP -Ob -o out.bcf a.bam b.bam c.bam\n"
                "  # calls in the same pass, as | bcftools call -mv -Oz -o calls.vcf.gz\n"
                "  seqshard mpileup -f ref.fa in.bam --call -mv -Oz -o calls.vcf.gz",
    .see_also = "seqshard(1), bcftools(1), seqshard-pileup(1), seqshard-realign(1)",
    .steps = 1};

void mp_usage(FILE *fp)
{
    ss_cmd_help(&mp_cmd, fp);
}

/* -a LIST: bcftools' tag names, case-insensitive, with or without FORMAT/ or FMT/. */
static int parse_annotations(const char *arg, int *flag)
{
    static const struct {
        const char *name;
        int bit, fmt_prefix;
    } tags[] = {
        {"DP", MP_FMT_DP, 1},         {"DV", MP_FMT_DV, 1},       {"SP", MP_FMT_SP, 1},
        {"DP4", MP_FMT_DP4, 1},       {"DPR", MP_FMT_DPR, 1},     {"AD", MP_FMT_AD, 1},
        {"ADF", MP_FMT_ADF, 1},       {"ADR", MP_FMT_ADR, 1},     {"SCR", MP_FMT_SCR, 1},
        {"QS", MP_FMT_QS, 1},         {"NMBZ", MP_FMT_NMBZ, 1},   {"INFO/DPR", MP_INFO_DPR, 0},
        {"INFO/SCR", MP_INFO_SCR, 0}, {"INFO/AD", MP_INFO_AD, 0}, {"INFO/ADF", MP_INFO_ADF, 0},
        {"INFO/ADR", MP_INFO_ADR, 0}, {"SCB", MP_INFO_SCB, 0},    {"INFO/SCB", MP_INFO_SCB, 0}};
    char *copy = strdup(arg), *save = NULL;
    if (!copy)
        return -1;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save)) {
        const char *bare = !strncasecmp(t, "FORMAT/", 7) ? t + 7
                           : !strncasecmp(t, "FMT/", 4)  ? t + 4
                                                         : t;
        size_t k, n = sizeof(tags) / sizeof(tags[0]);
        for (k = 0; k < n; k++)
            if (!strcasecmp(tags[k].fmt_prefix ? bare : t, tags[k].name) &&
                (tags[k].fmt_prefix || bare == t))
                break;
        if (k == n) {
            fprintf(stderr,
                    "seqshard mpileup: -a: could not parse tag \"%s\" in \"%s\"; "
                    "'-a ?' lists them\n",
                    t, arg);
            rc = -1;
        } else {
            *flag |= tags[k].bit;
        }
    }
    free(copy);
    return rc;
}

static void list_annotations(FILE *fp)
{
    fputs("\nFORMAT annotation tags available (\"FORMAT/\" prefix is optional):\n\n"
          "  FORMAT/AD   .. Allelic depth (Number=R,Type=Integer)\n"
          "  FORMAT/ADF  .. Allelic depths on the forward strand (Number=R,Type=Integer)\n"
          "  FORMAT/ADR  .. Allelic depths on the reverse strand (Number=R,Type=Integer)\n"
          "  FORMAT/DP   .. Number of high-quality bases (Number=1,Type=Integer)\n"
          "  FORMAT/NMBZ .. Mann-Whitney U-z test of Number of Mismatches within supporting "
          "reads (Number=1,Type=Float)\n"
          "  FORMAT/QS   .. Allele phred-score quality sum for use with `call -mG` and "
          "+trio-dnm (Number=R,Type=Integer)\n"
          "  FORMAT/SP   .. Phred-scaled strand bias P-value (Number=1,Type=Integer)\n"
          "  FORMAT/SCR  .. Number of soft-clipped reads (Number=1,Type=Integer)\n\n"
          "INFO annotation tags available:\n\n"
          "  INFO/AD  .. Total allelic depth (Number=R,Type=Integer)\n"
          "  INFO/ADF .. Total allelic depths on the forward strand (Number=R,Type=Integer)\n"
          "  INFO/ADR .. Total allelic depths on the reverse strand (Number=R,Type=Integer)\n"
          "  INFO/SCR .. Number of soft-clipped reads (Number=1,Type=Integer)\n\n",
          fp);
}

/* -X: the profiles, each a set of defaults as bcftools applies them. */
static int apply_profile(mp_opts_t *o, const char *arg)
{
    if (!strcasecmp(arg, "pacbio-ccs")) {
        o->min_frac = 0.1, o->min_baseQ = 5, o->max_baseQ = 50, o->delta_baseQ = 10;
        o->openQ = 25, o->extQ = 1, o->baq_partial = 1, o->max_read_len = 99999;
    } else if (!strcasecmp(arg, "ont")) {
        o->min_baseQ = 5, o->max_baseQ = 30, o->baq = 0, o->no_indel = 1;
    } else if (!strcasecmp(arg, "1.12")) {
        o->min_frac = 0.002, o->min_support = 1, o->min_baseQ = 13, o->tandemQ = 100;
        o->baq_partial = 0, o->baq = 1;
    } else if (!strcasecmp(arg, "illumina")) {
        o->baq_partial = 1;
    } else {
        fprintf(stderr,
                "seqshard mpileup: -X: unknown configuration name '%s'; choose from "
                "1.12, illumina, pacbio-ccs or ont\n",
                arg);
        return -1;
    }
    return 0;
}

/* -O: a type letter, optionally followed by a level, or a level alone. */
static int parse_out_type(mp_opts_t *o, const char *arg)
{
    const char *lvl = arg;
    if (strchr("buzv", arg[0]) && arg[0]) {
        o->out_type = arg[0];
        lvl = arg + 1;
        if (!*lvl)
            return 0;
    }
    char *end;
    long v = strtol(lvl, &end, 10);
    if (*end || end == lvl || v < 0 || v > 9) {
        fprintf(stderr,
                "seqshard mpileup: -O: the output type \"%s\" is not recognised; give "
                "b, u, z or v, optionally followed by a level 0-9\n",
                arg);
        return -1;
    }
    o->level = (int)v;
    return 0;
}

static int flag_opt(const char *name, const char *arg, int *dst)
{
    int f = bam_str2flag(arg);
    if (f < 0) {
        fprintf(stderr, "seqshard mpileup: could not parse %s %s\n", name, arg);
        return -1;
    }
    *dst = f;
    return 0;
}

static int float_opt(const char *name, const char *arg, double *dst)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end) {
        fprintf(stderr, "seqshard mpileup: %s %s: not a number\n", name, arg);
        return -1;
    }
    *dst = v;
    return 0;
}

/* -o: a number is the gap open probability, anything else the output (bcftools' rule). */
static int output_or_open(mp_opts_t *o, ss_common_opts_t *co, const char *arg)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*arg && !*end) {
        o->openQ = (int)v;
        return 0;
    }
    return ss_common_opt(SS_OPT_OUTPUT, arg, co) < 0 ? -1 : 0;
}

static int apply_int(int c, const char *arg, mp_opts_t *o)
{
    switch (c) {
    case 'C':
        return ss_opt_int("-C", arg, INT_MIN, INT_MAX, &o->capQ_thres);
    case 'd':
        return ss_opt_int("-d", arg, INT_MIN, INT_MAX, &o->max_depth);
    case 'q':
        return ss_opt_int("-q", arg, INT_MIN, INT_MAX, &o->min_mq);
    case 'Q':
        return ss_opt_int("-Q", arg, INT_MIN, INT_MAX, &o->min_baseQ);
    case O_MAXBQ:
        return ss_opt_int("--max-BQ", arg, INT_MIN, INT_MAX, &o->max_baseQ);
    case O_DELTABQ:
        return ss_opt_int("--delta-BQ", arg, INT_MIN, INT_MAX, &o->delta_baseQ);
    case 'e':
        return ss_opt_int("-e", arg, INT_MIN, INT_MAX, &o->extQ);
    case 'h':
        return ss_opt_int("-h", arg, INT_MIN, INT_MAX, &o->tandemQ);
    case 'L':
        return ss_opt_int("-L", arg, INT_MIN, INT_MAX, &o->max_indel_depth);
    case 'm':
        return ss_opt_int("-m", arg, INT_MIN, INT_MAX, &o->min_support);
    case 'M':
        return ss_opt_int("-M", arg, INT_MIN, INT_MAX, &o->max_read_len);
    case O_ALLOW_REF:
        o->allow_ref_mismatch = 1;
        return 0;
    case O_OPEN:
        return ss_opt_int("--open-prob", arg, INT_MIN, INT_MAX, &o->openQ);
    case O_INDEL_SIZE:
        if (ss_opt_int("--indel-size", arg, INT_MIN, INT_MAX, &o->indel_win_size) < 0)
            return -1;
        if (o->indel_win_size < 110) {
            o->indel_win_size = 110;
            fprintf(stderr, "seqshard mpileup: --indel-size below 110 is raised to 110, as "
                            "bcftools does\n");
        }
        return 0;
    case O_SEED: {
        int s;
        if (ss_opt_int("--seed", arg, INT_MIN, INT_MAX, &s) < 0)
            return -1;
        o->seed = s;
        return 0;
    }
    }
    return 1; /* not an integer option */
}

/* --write-index[=csi|tbi], on either side of --call. 0, or -1 after a message. */
static int write_index(mp_opts_t *o, ss_common_opts_t *co, const char *fmt)
{
    if (fmt && strcmp(fmt, "csi") && strcmp(fmt, "tbi")) {
        fprintf(stderr, "seqshard mpileup: --write-index=%s: give csi or tbi\n", fmt);
        return -1;
    }
    co->write_index = 1;
    o->index_tbi = fmt && !strcmp(fmt, "tbi");
    return 0;
}

static int apply(void *ctx, int c, const char *arg)
{
    mp_opts_t *o = ((void **)ctx)[0];
    ss_common_opts_t *co = ((void **)ctx)[1];
    double v;
    int r = apply_int(c, arg, o);
    if (r <= 0)
        return r;
    switch (c) {
    case '6':
        o->illumina13 = 1;
        return 0;
    case 'A':
        o->orphans = 1;
        return 0;
    case 'b':
        return ss_common_add_input_list(co, arg) < 0 ? -1 : 0;
    case 'B':
        o->baq = 0;
        return 0;
    case 'D':
        o->baq_partial = 0;
        return 0;
    case 'E':
        o->redo_baq = 1;
        return 0;
    case 'I':
        o->no_indel = 1;
        return 0;
    case 'p':
        o->per_sample_flt = 1;
        return 0;
    case 'U':
        o->fmt_flag &= ~MP_INFO_ZSCORE;
        return 0;
    case 'x':
        o->overlaps = 0;
        return 0;
    case 'f':
        return ss_opt_string(&co->reference, arg);
    case 'r':
    case 'R':
        free(o->regions), free(o->regions_file);
        o->regions = o->regions_file = NULL;
        if (c == 'R' && ss_common_add_read(co, arg, "the -R regions file", 0) < 0)
            return -1;
        return ss_opt_string(c == 'r' ? &o->regions : &o->regions_file, arg);
    case 't':
    case 'T':
        o->targets_is_file = c == 'T';
        if (c == 'T' && ss_common_add_read(co, arg + (arg[0] == '^'), "the -T targets file", 0) < 0)
            return -1;
        return ss_opt_string(&o->targets, arg);
    case 'P':
        return 0;
    case 'g':
        free(o->gvcf_ranges);
        for (int i = 0; i < o->call_argc; i++)
            free(o->call_argv[i]);
        free(o->call_argv);
        mc_opts_free(o->call);
        o->gvcf_ranges = NULL;
        if (mp_gvcf_parse(arg, &o->gvcf_ranges, &o->n_gvcf_ranges) < 0) {
            fprintf(stderr,
                    "seqshard mpileup: could not parse --gvcf %s; give DP bounds such "
                    "as 0,5,10\n",
                    arg);
            return -1;
        }
        return 0;
    case 'o':
        return output_or_open(o, co, arg);
    case 'O':
        return parse_out_type(o, arg);
    case 'X':
        return apply_profile(o, arg);
    case 'a':
        if (arg[0] == '?') {
            list_annotations(stdout);
            return 1;
        }
        return parse_annotations(arg, &o->fmt_flag);
    case 'F':
        if (float_opt("-F", arg, &v) < 0)
            return -1;
        o->min_frac = v;
        return 0;
    case O_INDEL_BIAS:
        if (float_opt("--indel-bias", arg, &v) < 0)
            return -1;
        o->indel_bias = v < 1e-2 ? (float)(1 / 1e2) : (float)(1 / v);
        return 0;
    case O_AR:
        if (!strcasecmp(arg, "drop"))
            o->ambig_reads = MP_AMBIG_DROP;
        else if (!strcasecmp(arg, "incAD"))
            o->ambig_reads = MP_AMBIG_INC_AD;
        else if (!strcasecmp(arg, "incAD0"))
            o->ambig_reads = MP_AMBIG_INC_AD0;
        else {
            fprintf(stderr, "seqshard mpileup: --ar %s: give drop, incAD or incAD0\n", arg);
            return -1;
        }
        return 0;
    case O_NU:
        return flag_opt("--nu", arg, &o->skip_any_unset);
    case O_LU:
        return flag_opt("--lu", arg, &o->skip_all_unset);
    case O_NS:
        return flag_opt("--ns", arg, &o->skip_any_set);
    case O_LS:
        return flag_opt("--ls", arg, &o->skip_all_set);
    case O_IGNORE_RG:
        o->ignore_rg = 1;
        return 0;
    case 's':
    case 'S':
        o->samples_is_file = c == 'S';
        if (c == 'S' && ss_common_add_read(co, arg + (arg[0] == '^'), "the -S samples file", 0) < 0)
            return -1;
        return ss_opt_string(&o->samples, arg);
    case 'G':
        if (ss_common_add_read(co, arg + (arg[0] == '^'), "the -G read-group file", 0) < 0)
            return -1;
        return ss_opt_string(&o->read_groups, arg);
    case O_NOREF:
        o->no_reference = 1;
        return 0;
    case O_NOVERSION:
        o->record_cmd_line = 0;
        return 0;
    case O_WRITE_INDEX:
        return write_index(o, co, arg);
    default:
        fprintf(stderr, "seqshard mpileup: internal: option %d has no handler\n", c);
        return -1;
    }
}

/*
 * "mpileup ARGS" for ##seqshardCommand, where bcftools writes its own command
 * line: without the run options (-@, --shard-size ...), which change how a run
 * goes but not its output, so the header is the same at any scale.
 */
static char *command_line(int argc, char **argv)
{
    char *kept = ss_cmd_line_kept(&mp_cmd, argc, argv);
    const char *prefix = "seqshard ";
    if (kept && !strncmp(kept, prefix, strlen(prefix)))
        memmove(kept, kept + strlen(prefix), strlen(kept) - strlen(prefix) + 1);
    return kept;
}

static int ends_with_ci(const char *s, const char *suffix)
{
    size_t n = s ? strlen(s) : 0, k = strlen(suffix);
    return n >= k && !strcasecmp(s + n - k, suffix);
}

/*
 * bcftools 1.16 lets the output's name decide over -O: .bcf is compressed
 * BCF, .vcf plain VCF, .vcf.gz and .vcf.bgz compressed VCF; a level needs a
 * compressed stream. 0, or -1 after a message.
 */
static int output_type_from_name(mp_opts_t *o, const char *output)
{
    if (ends_with_ci(output, ".bcf"))
        o->out_type = MP_OUT_BCF_GZ;
    else if (ends_with_ci(output, ".vcf"))
        o->out_type = MP_OUT_VCF;
    else if (ends_with_ci(output, ".vcf.gz") || ends_with_ci(output, ".vcf.bgz"))
        o->out_type = MP_OUT_VCF_GZ;
    if (o->level >= 0 && (o->out_type == MP_OUT_VCF || o->out_type == MP_OUT_BCF)) {
        fprintf(stderr,
                "seqshard mpileup: compression level (%d) cannot be set on uncompressed "
                "streams (%s)\n",
                o->level, output ? output : "standard output");
        return -1;
    }
    return 0;
}

/*
 * --call -g: the called records' gVCF blocks, made by the same writer as
 * mpileup's -g, which from here on holds the bounds (the header's END and
 * MinDP lines, the shards' block edges). bcftools call needs FORMAT/DP in
 * its input; it does not switch it on as mpileup's -g does.
 */
static int call_gvcf(mp_opts_t *o)
{
    if (!o->call || !o->call->gvcf_ranges)
        return 0;
    if (!(o->fmt_flag & MP_FMT_DP)) {
        fprintf(stderr, "seqshard mpileup: --call -g needs FORMAT/DP in mpileup's records, as "
                        "bcftools call --gvcf does: add -a FORMAT/DP before --call\n");
        return -1;
    }
    o->gvcf_ranges = o->call->gvcf_ranges, o->n_gvcf_ranges = o->call->n_gvcf_ranges;
    o->call->gvcf_ranges = NULL;
    return 0;
}

/* Whether word is an option of seqshard mpileup (its own, the run's, the steps'). */
static int mpileup_word(const char *word)
{
    return ss_cmd_find_word(&mp_cmd, word) != NULL;
}

/* What bcftools refuses, and what follows from the options together. */
static int check(mp_opts_t *o, ss_common_opts_t *co)
{
    if (output_type_from_name(o, co->output) < 0)
        return -1;
    if (o->gvcf_ranges && !(o->fmt_flag & MP_FMT_DP)) {
        fprintf(stderr, "seqshard mpileup: the -a DP option is required with --gvcf, switching "
                        "on\n");
        o->fmt_flag |= MP_FMT_DP;
    }
    if (o->redo_baq && !o->baq) {
        fprintf(stderr, "seqshard mpileup: -B cannot be combined with -E\n");
        return -1;
    }
    if (!co->reference && !o->no_reference) {
        fprintf(stderr, "seqshard mpileup: mpileup requires the --fasta-ref option by default; "
                        "use --no-reference to run without a fasta reference\n");
        return -1;
    }
    if (co->n_inputs == 0 && o->call_argv) {
        fprintf(stderr, "seqshard mpileup: no input files before --call (the words after it are "
                        "bcftools call's): put the BAM/CRAM files before --call\n");
        return -1;
    }
    if (co->n_inputs == 0) {
        fprintf(stderr, "seqshard mpileup: no input files; see 'seqshard mpileup --help'\n");
        return -1;
    }
    if (co->write_index && (o->out_type == MP_OUT_VCF || o->out_type == MP_OUT_BCF)) {
        fprintf(stderr, "seqshard mpileup: --write-index needs compressed output: add -Ob or "
                        "-Oz\n");
        return -1;
    }
    if (o->call_argc > 0 &&
        mc_opts_parse(o->call_argc - 1, o->call_argv + 1, mpileup_word, &o->call) < 0)
        return -1;
    /* the caller's files are the run's too (--resume's identity, the clash check) */
    mc_file_t files[MC_MAX_FILES];
    for (int i = 0, n = o->call ? mc_opts_files(o->call, files) : 0; i < n; i++)
        if (ss_common_add_read(co, files[i].path, files[i].role, 0) < 0)
            return -1;
    if (o->call && o->gvcf_ranges) {
        fprintf(stderr, "seqshard mpileup: -g with --call is not supported: bcftools call reads "
                        "mpileup's gVCF blocks, which are not fed to the caller here; give -g "
                        "after --call\n");
        return -1;
    }
    if (call_gvcf(o) < 0)
        return -1;
    if (o->index_tbi && o->out_type != MP_OUT_VCF_GZ) {
        fprintf(stderr, "seqshard mpileup: --write-index=tbi needs -Oz: a BCF is indexed "
                        "only with a .csi\n");
        return -1;
    }
    if (co->write_index && !co->output) {
        fprintf(stderr, "seqshard mpileup: --write-index needs an output file: add -o FILE\n");
        return -1;
    }
    return 0;
}

/*
 * The output options among bcftools call's words (-o, -O, --write-index, with
 * their joined forms): after --call they name the final output, so they are
 * taken here as mpileup's own. Returns how many words word i and its value
 * took (0: not one of them), or -1 after a message.
 */
static int call_output_word(mp_opts_t *o, ss_common_opts_t *co, char **w, int n, int i)
{
    const char *a = w[i], *val = NULL;
    int used = 1, is_type = 0;
    if (!strcmp(a, "--write-index") || !strncmp(a, "--write-index=", 14))
        return write_index(o, co, a[13] ? a + 14 : NULL) < 0 ? -1 : 1;
    if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "-O") ||
        !strcmp(a, "--output-type")) {
        is_type = a[1] == 'O' || !strcmp(a, "--output-type");
        if (i + 1 >= n) {
            fprintf(stderr, "seqshard mpileup: --call %s needs a value\n", a);
            return -1;
        }
        val = w[i + 1], used = 2;
    } else if (!strncmp(a, "--output=", 9)) {
        val = a + 9;
    } else if (!strncmp(a, "--output-type=", 14)) {
        val = a + 14, is_type = 1;
    } else if ((a[0] == '-' && (a[1] == 'o' || a[1] == 'O') && a[2])) {
        val = a + 2, is_type = a[1] == 'O';
    } else {
        return 0;
    }
    if (is_type)
        return parse_out_type(o, val) < 0 ? -1 : used;
    return ss_common_opt(SS_OPT_OUTPUT, val, co) < 0 ? -1 : used;
}

/* Keep bcftools call's words after --call (its output options become the run's). 0 or -1. */
static int take_call_words(mp_opts_t *o, ss_common_opts_t *co, char **w, int n)
{
    if (!(o->call_argv = calloc((size_t)n + 2, sizeof(char *))) ||
        !(o->call_argv[0] = strdup("call")))
        return -1;
    o->call_argc = 1;
    for (int i = 0; i < n;) {
        int used = call_output_word(o, co, w, n, i);
        if (used < 0)
            return -1;
        if (used == 0 && !(o->call_argv[o->call_argc++] = strdup(w[i])))
            return -1;
        i += used ? used : 1;
    }
    return 0;
}

int mp_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts)
{
    mp_opts_t *o = calloc(1, sizeof(*o));
    if (!o)
        return SS_EXIT_USAGE;
    mp_opts_default(o);
    *kopts = o;
    co->ref_option = "-f";
    void *ctx[2] = {o, co};
    int call_at = argc;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--call")) {
            call_at = i;
            break;
        }
    int r = ss_cmd_parse(&mp_cmd, call_at, argv, co, apply, ctx);
    if (r == 0 && call_at < argc &&
        take_call_words(o, co, argv + call_at + 1, argc - call_at - 1) < 0)
        return SS_EXIT_USAGE;
    if (r != 0)
        return r > 0 ? -1 : SS_EXIT_USAGE;
    if (co->n_inputs == 0)
        for (int i = optind; i < call_at; i++)
            if (ss_common_add_input(co, argv[i]) < 0)
                return SS_EXIT_USAGE;
    if (check(o, co) < 0)
        return SS_EXIT_USAGE;
    if (!(o->cmd_line = command_line(argc, argv)))
        return SS_EXIT_USAGE;
    if (mp_regions_add(o, co) < 0)
        return SS_EXIT_USAGE;
    if (o->gvcf_ranges && co->n_regions > 1) {
        fprintf(stderr, "seqshard mpileup: --gvcf with several regions is not supported: a "
                        "block may run from one region into the next; give one region\n");
        return SS_EXIT_USAGE;
    }
    /*
     * A position's records take 150-200 bytes of -Ou output (one to three samples), so
     * at the usual size a shard's output outgrows its share of the output budget
     * (32 MiB) and goes through a spill file; half the size keeps it in memory, and
     * gives two workers twice the shards to even out the end of the run.
     */
    if (!co->shard_size_given)
        co->shard_size = SS_DEFAULT_SHARD_SIZE / 2;
    return 0;
}

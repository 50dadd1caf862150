/*
 * mc_opts.c -- the options of `seqshard mpileup --call`: bcftools call
 * 1.16's names, meanings and defaults, parsed the way it parses them (GNU
 * getopt_long, so bundled letters and abbreviated long names work alike).
 * Options that need something a record stream does not have are refused
 * with the reason.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../mp_gvcf.h" /* mp_gvcf_parse: call's -g reads its bounds as mpileup's does */
#include "base/ss_exact_fp.h"
#include "mc_priv.h"

enum { O_PLOIDY = 1, O_PLOIDY_FILE, O_GROUP_TAG, O_REGIONS_OVERLAP, O_NO_VERSION = 8, O_THREADS };

static const struct option long_opts[] = {
    {"help", no_argument, NULL, 'h'},
    {"format-fields", required_argument, NULL, 'f'},
    {"annotate", required_argument, NULL, 'a'},
    {"prior-freqs", required_argument, NULL, 'F'},
    {"gvcf", required_argument, NULL, 'g'},
    {"group-samples", required_argument, NULL, 'G'},
    {"group-samples-tag", required_argument, NULL, O_GROUP_TAG},
    {"output", required_argument, NULL, 'o'},
    {"output-type", required_argument, NULL, 'O'},
    {"regions", required_argument, NULL, 'r'},
    {"regions-file", required_argument, NULL, 'R'},
    {"regions-overlap", required_argument, NULL, O_REGIONS_OVERLAP},
    {"samples", required_argument, NULL, 's'},
    {"samples-file", required_argument, NULL, 'S'},
    {"targets", required_argument, NULL, 't'},
    {"targets-file", required_argument, NULL, 'T'},
    {"threads", required_argument, NULL, O_THREADS},
    {"keep-alts", no_argument, NULL, 'A'},
    {"insert-missed", no_argument, NULL, 'i'},
    {"skip-Ns", no_argument, NULL, 'N'},
    {"keep-masked-refs", no_argument, NULL, 'M'},
    {"skip-variants", required_argument, NULL, 'V'},
    {"variants-only", no_argument, NULL, 'v'},
    {"consensus-caller", no_argument, NULL, 'c'},
    {"constrain", required_argument, NULL, 'C'},
    {"multiallelic-caller", no_argument, NULL, 'm'},
    {"pval-threshold", required_argument, NULL, 'p'},
    {"prior", required_argument, NULL, 'P'},
    {"novel-rate", required_argument, NULL, 'n'},
    {"ploidy", required_argument, NULL, O_PLOIDY},
    {"ploidy-file", required_argument, NULL, O_PLOIDY_FILE},
    {"chromosome-X", no_argument, NULL, 'X'},
    {"chromosome-Y", no_argument, NULL, 'Y'},
    {"no-version", no_argument, NULL, O_NO_VERSION},
    {NULL, 0, NULL, 0},
};
/* ':' first: a missing value comes back as ':', so the one-line message is ours */
static const char short_opts[] = ":ho:O:r:R:s:S:t:T:ANMV:vcmp:C:n:P:f:a:ig:XYF:G:";

/* What the ploidy options asked for; resolved once all options are read. */
typedef struct {
    const char *file, *preset;
} ploidy_arg_t;

static void opts_default(mc_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->theta = 1.1e-3;
    o->pval_threshold = 0.5;
    o->record_cmd_line = 1;
}

void mc_opts_free(mc_opts_t *o)
{
    if (!o)
        return;
    free(o->prior_an);
    free(o->groups);
    for (int i = 0; i < o->n_group_lines; i++)
        free(o->group_lines[i]);
    free(o->group_lines);
    free(o->groups_tag);
    free(o->gvcf_ranges);
    for (int i = 0; i < o->n_sample_lines; i++)
        free(o->sample_lines[i]);
    free(o->sample_lines);
    free(o->samples_path);
    mc_ploidy_free(&o->ploidy);
    free(o->ploidy_path);
    mc_targets_free(&o->targets);
    free(o);
}

static void usage(void)
{
    fprintf(stderr,
            "Usage: seqshard mpileup [mpileup options] --call [bcftools call options]\n"
            "  -m | -c        multiallelic or consensus caller     -v    variant sites only\n"
            "  -A             keep all ALT alleles                 -M    keep REF=N sites\n"
            "  -a GQ,GP,PV4   extra tags                           -V snps|indels  skip those\n"
            "  -P FLOAT       -m prior [1.1e-3]                    -p FLOAT  -c P(ref) [0.5]\n"
            "  -G FILE|-      -m sample groups; --group-samples-tag TAG\n"
            "  -F AN,AC       -m prior allele frequencies from INFO tags\n"
            "  --ploidy NAME|--ploidy-file FILE   -s LIST|-S FILE  samples (and sexes)\n"
            "  -T FILE        call only the sites of FILE's CHROM POS lines (-t FILE alike)\n"
            "  -C alleles     -m: call the alleles of -T's third column (REF,ALT...)\n"
            "  -g INT[,...]   -m: gVCF blocks of reference calls by minimum per-sample DP\n"
            "                 (mpileup needs -a FORMAT/DP)\n"
            "bcftools call's meanings and defaults; see its manual.\n");
}

/* -a (and -f): bcftools matches each word as a case-blind prefix of a tag's names. */
static int parse_annots(const char *arg, int *flags)
{
    static const struct {
        const char *name;
        int flag;
    } names[] = {
        {"GQ", MC_ANN_GQ},   {"FORMAT/GQ", MC_ANN_GQ}, {"FMT/GQ", MC_ANN_GQ},
        {"GP", MC_ANN_GP},   {"FORMAT/GP", MC_ANN_GP}, {"FMT/GP", MC_ANN_GP},
        {"PV4", MC_ANN_PV4}, {"INFO/PV4", MC_ANN_PV4},
    };
    if (arg[0] == '?') {
        fprintf(stderr,
                "Annotations of -m: INFO/PV4 (strand, baseQ, mapQ and tail distance "
                "bias P-values), FORMAT/GQ (genotype quality), FORMAT/GP (genotype posterior "
                "probabilities)\n");
        return -1;
    }
    const char *s = arg;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        size_t i;
        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (!strncasecmp(s, names[i].name, len))
                break;
        if (i == sizeof(names) / sizeof(names[0])) {
            fprintf(stderr, MC_PFX ": -a: could not parse \"%s\"; give GQ, GP or PV4\n", arg);
            return -1;
        }
        *flags |= names[i].flag;
        if (!e)
            break;
        s = e + 1;
    }
    return 0;
}

static int parse_double(const char *name, const char *arg, double *v)
{
    char *end;
    *v = strtod(arg, &end);
    if (*end) {
        fprintf(stderr, MC_PFX ": could not parse %s %s: expected a number\n", name, arg);
        return -1;
    }
    return 0;
}

/* -n: only -C trio reads the rates, and it is refused; still, bcftools checks the form. */
static int check_novel_rate(const char *arg)
{
    double a, b, c;
    if (sscanf(arg, "%le,%le,%le", &a, &b, &c) == 3 || sscanf(arg, "%le,%le", &a, &b) == 2 ||
        sscanf(arg, "%le", &a) == 1)
        return 0;
    fprintf(stderr, MC_PFX ": could not parse --novel-rate %s\n", arg);
    return -1;
}

static int set_string(char **dst, const char *arg)
{
    free(*dst);
    return (*dst = strdup(arg)) ? 0 : -1;
}

static int read_groups(mc_opts_t *o, const char *arg)
{
    if (set_string(&o->groups, arg) < 0)
        return -1;
    if (!strcmp(arg, "-"))
        return 0;
    for (int i = 0; i < o->n_group_lines; i++)
        free(o->group_lines[i]);
    free(o->group_lines);
    if (!(o->group_lines = hts_readlist(arg, 1, &o->n_group_lines))) {
        o->n_group_lines = 0;
        fprintf(stderr, MC_PFX ": could not read the -G file %s\n", arg);
        return -1;
    }
    return 0;
}

/* The options a record stream cannot serve, and why. -1 after the message. */
static int refuse(int c)
{
    const char *opt = "-o/-O", *why = "the output is seqshard's: give -o/-O to mpileup";
    switch (c) {
    case 'o':
    case 'O':
        opt = "-o/-O", why = "the output is seqshard's: give -o/-O to mpileup";
        break;
    case 'r':
    case 'R':
    case O_REGIONS_OVERLAP:
        opt = "-r/-R/--regions-overlap";
        why = "bcftools call needs an indexed file for regions; give -r/-R to mpileup";
        break;
    }
    fprintf(stderr, MC_PFX ": %s: %s\n", opt, why);
    return -1;
}

/* -g INT[,...]: bcftools call's gVCF blocks, read as bcftools reads the bounds. */
static int gvcf_bounds(mc_opts_t *o, const char *arg)
{
    free(o->gvcf_ranges);
    o->gvcf_ranges = NULL;
    if (mp_gvcf_parse(arg, &o->gvcf_ranges, &o->n_gvcf_ranges) < 0) {
        fprintf(stderr, MC_PFX ": could not parse --gvcf %s; give DP bounds such as 5,10,20\n",
                arg);
        return -1;
    }
    return 0;
}

static int constrain(const char *arg)
{
    if (!strcasecmp(arg, "trio"))
        fprintf(stderr, MC_PFX ": -C trio: bcftools 1.16 disables constrained trio calling "
                               "(it stops at the first variant site)\n");
    else if (!strcasecmp(arg, "alleles"))
        return 1;
    else
        fprintf(stderr, MC_PFX ": unknown argument to -C: \"%s\"\n", arg);
    return -1;
}

static int skip_variants(mc_opts_t *o, const char *arg)
{
    if (!strcasecmp(arg, "snps"))
        o->skip = MC_SKIP_SNPS;
    else if (!strcasecmp(arg, "indels"))
        o->skip = MC_SKIP_INDELS;
    else {
        fprintf(stderr, MC_PFX ": -V %s: give snps or indels\n", arg);
        return -1;
    }
    return 0;
}

static int prior_freqs(mc_opts_t *o, const char *arg)
{
    const char *comma = strchr(arg, ',');
    if (!comma) {
        fprintf(stderr, MC_PFX ": -F expects two tags (e.g. AN,AC), got \"%s\"\n", arg);
        return -1;
    }
    if (set_string(&o->prior_an, arg) < 0)
        return -1;
    o->prior_an[comma - arg] = 0;
    o->prior_ac = o->prior_an + (comma - arg) + 1;
    return 0;
}

/* The options without a value; models counts -m and -c. 1: not one of them. */
static int apply_flag(mc_opts_t *o, ploidy_arg_t *pl, int *models, int c)
{
    switch (c) {
    case 'X':
    case 'Y':
        fprintf(stderr, "Warning: -%c will be deprecated, please use --ploidy instead.\n", c);
        pl->preset = c == 'X' ? "X" : "Y";
        return 0;
    case 'M':
    case 'N':
        o->keep_masked_ref = c == 'M';
        return 0;
    case 'A':
        o->keep_alts = 1;
        return 0;
    case 'v':
        o->variants_only = 1;
        return 0;
    case 'c':
    case 'm':
        *models |= c == 'c' ? 1 : 2;
        o->model = c == 'c' ? MC_MODEL_CONSENSUS : MC_MODEL_MULTI;
        return 0;
    case O_NO_VERSION:
        o->record_cmd_line = 0;
        return 0;
    case 'i':
        o->insert_missed = 1;
        return 0;
    }
    return 1;
}

/* One option. 0, or -1 after a message. */
static int apply(mc_opts_t *o, ploidy_arg_t *pl, int *models, int c, const char *arg)
{
    int r = apply_flag(o, pl, models, c);
    if (r <= 0)
        return r;
    switch (c) {
    case O_PLOIDY_FILE:
        pl->file = arg;
        return 0;
    case O_PLOIDY:
        pl->preset = arg;
        return 0;
    case 'f':
        fprintf(stderr, "Warning: -f, --format-fields will be deprecated, please use -a, "
                        "--annotate instead.\n");
        return parse_annots(arg, &o->annots);
    case 'a':
        return parse_annots(arg, &o->annots);
    case 'G':
        return read_groups(o, arg);
    case O_GROUP_TAG:
        return set_string(&o->groups_tag, arg);
    case 'F':
        return prior_freqs(o, arg);
    case 'C':
        return (o->constrain_alleles = constrain(arg)) > 0 ? 0 : -1;
    case 'V':
        return skip_variants(o, arg);
    case 'p':
        return parse_double("--pval-threshold", arg, &o->pval_threshold);
    case 'P':
        return parse_double("-P", arg, &o->theta);
    case 't':
    case 'T': /* read once every option is known: -C alleles reads the alleles too */
        free(o->targets.path);
        return (o->targets.path = strdup(arg)) ? 0 : -1;
    case 'n':
        return check_novel_rate(arg);
    case 's':
    case 'S':
        return mc_samples_read(o, arg, c == 'S');
    case O_THREADS:
        return 0; /* seqshard's own threads do the work */
    case 'o':
    case 'O':
    case 'r':
    case 'R':
    case O_REGIONS_OVERLAP:
        return refuse(c);
    case 'g':
        return gvcf_bounds(o, arg);
    }
    usage();
    return -1;
}

/* The ploidy definition: --ploidy-file over --ploidy, else all diploid. */
static int set_ploidy(mc_opts_t *o, const ploidy_arg_t *pl)
{
    o->ploidy_given = pl->file || pl->preset;
    if (pl->file && set_string(&o->ploidy_path, pl->file) < 0)
        return -1;
    if (pl->file)
        return mc_ploidy_file(pl->file, &o->ploidy);
    if (pl->preset)
        return mc_ploidy_preset(pl->preset, &o->ploidy);
    return mc_ploidy_text("* * * 0 0\n* * * 1 1\n* * * 2 2\n", &o->ploidy);
}

/* What bcftools refuses of the options together. 0, or -1 after a message. */
static int check(const mc_opts_t *o, int models)
{
    if (models == 3) {
        fprintf(stderr, MC_PFX ": only one of -c or -m options can be given\n");
        return -1;
    }
    if (!models) {
        fprintf(stderr, MC_PFX ": expected -c or -m option\n");
        return -1;
    }
    if (o->model == MC_MODEL_CONSENSUS && o->gvcf_ranges) {
        fprintf(stderr, MC_PFX ": gvcf -g option not functional with -c calling mode yet\n");
        return -1;
    }
    if (o->variants_only && o->gvcf_ranges) {
        fprintf(stderr, MC_PFX ": the two options cannot be combined: --variants-only and "
                               "--gvcf\n");
        return -1;
    }
    if (o->constrain_alleles && !o->targets.path) {
        fprintf(stderr, MC_PFX ": expected -t or -T with \"-C alleles\"\n");
        return -1;
    }
    if (o->constrain_alleles && o->model != MC_MODEL_MULTI) {
        fprintf(stderr, MC_PFX ": the \"-C alleles\" mode requires -m\n");
        return -1;
    }
    if (o->insert_missed && !o->constrain_alleles) {
        fprintf(stderr, MC_PFX ": the -i option requires -C alleles\n");
        return -1;
    }
    if (o->insert_missed && o->gvcf_ranges) {
        fprintf(stderr, MC_PFX ": -i with -g: bcftools call 1.16 writes -i's lines ahead of "
                               "the gVCF block open at them, out of order; drop one of them\n");
        return -1;
    }
    if (o->groups && o->model != MC_MODEL_MULTI) {
        fprintf(stderr, MC_PFX ": the -G feature is supported only with the -m calling mode\n");
        return -1;
    }
    if (o->model == MC_MODEL_CONSENSUS && (o->annots & MC_ANN_GP)) {
        fprintf(stderr, MC_PFX ": -a GP is not supported with -c\n");
        return -1;
    }
    return 0;
}

/*
 * What getopt_long refused (c: '?' or ':'), in one line; -? is help, as in
 * bcftools. An option of the command running the caller (theirs) given here
 * by mistake is named as such: the run's own options go before --call. -1.
 */
static int bad_word(int c, char **words, int (*theirs)(const char *word))
{
    char word[64];
    const char *last = words[optind - 1]; /* the word getopt_long stepped past */
    if (c == '?' && optopt == '?') {
        usage();
        return -1;
    }
    /* an unknown letter (optopt), or a long option: unknown (optopt 0) or without its value */
    if (optopt > ' ' && optopt < 127 && (c == '?' || strncmp(last, "--", 2)))
        snprintf(word, sizeof(word), "-%c", optopt);
    else
        snprintf(word, sizeof(word), "%.*s", (int)strcspn(last, "="), last);
    if (c == '?' && theirs && theirs(word))
        fprintf(stderr,
                MC_PFX ": %s is an option of seqshard mpileup, not of bcftools call: "
                       "give it before --call\n",
                word);
    else if (c == ':')
        fprintf(stderr, MC_PFX ": option '%s' needs a value\n", word);
    else
        fprintf(stderr,
                MC_PFX ": unknown option '%s' (the words after --call are bcftools "
                       "call's options)\n",
                word);
    return -1;
}

/* Run getopt_long on our words, leaving its globals as they were. */
static int parse_words(mc_opts_t *o, int argc, char **argv, int (*theirs)(const char *word),
                       ploidy_arg_t *pl, int *models)
{
    char **words = malloc((argc + 2) * sizeof(*words));
    if (!words)
        return -1;
    words[0] = MC_PFX;
    memcpy(words + 1, argv, argc * sizeof(*words));
    words[argc + 1] = NULL;
    int saved_ind = optind, saved_err = opterr, saved_opt = optopt;
    char *saved_arg = optarg;
    optind = 0; /* GNU: start afresh */
    opterr = 0;
    int c, ret = 0;
    while (ret == 0 && (c = getopt_long(argc + 1, words, short_opts, long_opts, NULL)) >= 0)
        ret = c == '?' || c == ':' ? bad_word(c, words, theirs) : apply(o, pl, models, c, optarg);
    if (ret == 0 && optind <= argc) {
        fprintf(stderr, MC_PFX ": %s: the caller reads mpileup's records, not a file\n",
                words[optind]);
        ret = -1;
    }
    optind = saved_ind, opterr = saved_err, optopt = saved_opt, optarg = saved_arg;
    free(words);
    return ret;
}

int mc_opts_files(const mc_opts_t *o, mc_file_t files[MC_MAX_FILES])
{
    int n = 0;
    if (o->targets.path)
        files[n++] = (mc_file_t){o->targets.path, "the --call -T targets file"};
    if (o->groups && strcmp(o->groups, "-"))
        files[n++] = (mc_file_t){o->groups, "the --call -G groups file"};
    if (o->samples_path)
        files[n++] = (mc_file_t){o->samples_path, "the --call -S samples file"};
    if (o->ploidy_path)
        files[n++] = (mc_file_t){o->ploidy_path, "the --call --ploidy-file"};
    return n;
}

int mc_opts_parse(int argc, char **argv, int (*theirs)(const char *word), mc_opts_t **out)
{
    *out = NULL;
    mc_opts_t *o = malloc(sizeof(*o));
    if (!o)
        return -1;
    opts_default(o);
    ploidy_arg_t pl = {NULL, NULL};
    int models = 0;
    if (parse_words(o, argc, argv, theirs, &pl, &models) < 0 || set_ploidy(o, &pl) < 0 ||
        check(o, models) < 0 || (o->targets.path && mc_targets_read(o) < 0)) {
        mc_opts_free(o);
        return -1;
    }
    *out = o;
    return 0;
}

/*
 * view_opts.c -- `seqshard view` options: samtools view 1.16's names and
 * rules for the subset we support, plus the framework's common options.
 *
 * -l is samtools' --library filter. Earlier seqshard builds took it as
 * the compression level (CHANGELOG.md, Changed); that is now --output-fmt-option level=N (or -O
 * bam,level=N), as in samtools, and --help says so.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../framework/ss_framework_extra.h"
#include "view.h"

void vw_opts_default(vw_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->fmt = VW_SAM;
    o->level = -1;
    o->subsam_frac = -1.0;
}

void vw_opts_free(vw_opts_t *o)
{
    if (!o)
        return;
    free(o->target_path);
    free(o->cmdline);
    free(o->output);
    free(o->expr);
    free(o->library);
    free(o->remove.tags);
    free(o->keep.tags);
}

enum {
    O_NOHEADER = 0x2001,
    O_NOPG,
    O_RF,
    O_KEEP_TAG,
    O_SUBSAMPLE,
    O_SUBSAMPLE_SEED,
    O_REGION_FILE
};

/* An alias: parsed and completed, not listed in --help (samtools' other spelling). */
#define ALIAS(key, name, arg)         \
    {                                 \
        key, 0, name, arg, NULL, NULL \
    }

static const ss_opt_t region_opts[] = {
    {'M', 'M', "use-index", NULL,
     "take the regions as one set, as samtools view -M does: in header order ('*' last), "
     "overlaps merged, each record once (needs regions or -L; not both)",
     NULL},
    {O_REGION_FILE, 0, "region-file", "FILE",
     "the records overlapping the BED file's regions, each once: -M -L FILE", SS_VALUES_FILE},
    ALIAS(O_REGION_FILE, "regions-file", "FILE"),
    SS_OPT_END};

static const ss_opt_t format_opts[] = {
    {'b', 'b', "bam", NULL, "output BAM", NULL},
    {'C', 'C', "cram", NULL, "output CRAM (reference from -T, UR, REF_PATH/REF_CACHE)", NULL},
    {'1', '1', "fast", NULL, "fast compression (level 1; BAM unless -o names .sam)", NULL},
    {'u', 'u', "uncompressed", NULL, "uncompressed BAM (level 0)", NULL},
    {'h', 'h', "with-header", NULL, "include the header in SAM output", NULL},
    {'H', 'H', "header-only", NULL, "print the header only", NULL},
    {O_NOHEADER, 0, "no-header", NULL, "print SAM records only [default]", NULL},
    {'c', 'c', "count", NULL,
     "print only the number of records kept (all shards and ranks added up), as one line", NULL},
    {O_NOPG, 0, "no-PG", NULL, "do not add a @PG line to the header", NULL},
    SS_OPT_END};

static const ss_opt_t input_opts[] = {
    {'T', 'T', "reference", "FILE", "FASTA (with .fai) for CRAM input or output", SS_VALUES_FILE},
    SS_OPT_END};

static const ss_opt_t filter_opts[] = {
    {'L', 'L', "target-file", "FILE", "...overlap regions in the BED file", SS_VALUES_FILE},
    ALIAS('L', "targets-file", "FILE"),
    {'q', 'q', "min-MQ", "INT", "...have mapping quality >= INT [0]", NULL},
    ALIAS('q', "min-mq", "INT"),
    ALIAS('q', "min-mapq", "INT"),
    {'l', 'l', "library", "STR", "...are in library STR (their RG's LB)", NULL},
    {'e', 'e', "expr", "STR", "...match the filter expression STR (htslib syntax)", NULL},
    ALIAS('e', "expression", "STR"),
    {'f', 'f', "require-flags", "FLAG", "...have all of the FLAGs set", NULL},
    {'F', 'F', "excl-flags", "FLAG", "...have none of the FLAGs set", NULL},
    ALIAS('F', "exclude-flags", "FLAG"),
    {O_RF, 0, "rf", "FLAG", "...have any of the FLAGs set (also --incl-flags)", NULL},
    ALIAS(O_RF, "incl-flags", "FLAG"),
    ALIAS(O_RF, "include-flags", "FLAG"),
    {'G', 'G', NULL, "FLAG", "EXCLUDE records with all of the FLAGs set", NULL},
    {O_SUBSAMPLE, 0, "subsample", "FLOAT", "keep only FLOAT of the read names (templates)", NULL},
    {O_SUBSAMPLE_SEED, 0, "subsample-seed", "INT", "which names are kept [0]", NULL},
    {'s', 's', NULL, "INT.FRAC", "same as --subsample 0.FRAC --subsample-seed INT", NULL},
    SS_OPT_END};

static const ss_opt_t edit_opts[] = {
    {'x', 'x', "remove-tag", "STR", "comma-separated tags to strip (repeatable)", NULL},
    {O_KEEP_TAG, 0, "keep-tag", "STR",
     "comma-separated tags to keep, all others stripped (repeatable; same as -x ^STR; wins "
     "over -x)",
     NULL},
    SS_OPT_END};

static const ss_opt_t general_opts[] = {
    {'?', '?', NULL, NULL, "print this help (as --help)", NULL},
    {'S', 'S', NULL, NULL, "ignored (the input format is detected)", NULL},
    {'U', 'U', "output-unselected", "FILE",
     "not supported: the framework writes one output; run seqshard view again with the "
     "opposite filter",
     SS_VALUES_FILE},
    ALIAS('U', "unoutput", "FILE"),
    SS_OPT_END};

static const ss_opt_group_t vw_groups[] = {
    {"Regions", region_opts, NULL},
    {"Output options", ss_opts_output_records,
     "The format is SAM unless -O, -b, -C or -o's name says otherwise. BAM to BAM with no\n"
     "filter, region, edit or level copies the input's compressed blocks (checked)."},
    {"Output format and header", format_opts,
     "(CRAM output: --shard-size defaults to 4x the value below)"},
    {"Input options", input_opts, NULL},
    {"Filters (only output records that...)", filter_opts, NULL},
    {"Edits", edit_opts, NULL},
    {"General options", general_opts, NULL},
    {"Framework options", ss_opts_run, NULL},
    {NULL, NULL, NULL}};

static const ss_cmd_t vw_cmd = {
    .name = "view",
    .synopsis = "[options] in.bam|in.cram [region ...]",
    .summary = "print or convert records, as samtools view does",
    .description =
        "Prints or converts records as samtools view 1.16 does (same records, same order),\n"
        "decoding and encoding genomic shards in parallel. The input must be\n"
        "coordinate-sorted and indexed.\n"
        "\n"
        "'-' as the input reads coordinate-sorted SAM/BAM/CRAM from standard input,\n"
        "without an index: one worker in one pass, so it does not parallelise (no\n"
        "regions, not under mpirun).\n"
        "\n"
        "Regions: CONTIG, CONTIG:BEG or CONTIG:BEG-END (1-based, inclusive), '*' for the\n"
        "unplaced unmapped reads at the end of the file, '.' for the whole file. Each\n"
        "region's records are printed in the order the regions are given; a record in two\n"
        "regions is printed twice, as samtools view does without -M. An unknown or\n"
        "malformed region is an error (samtools warns and skips it).",
    .groups = vw_groups,
    .after = "Compatibility: -l is --library, as in samtools view. Earlier seqshard builds\n"
             "took -l as the compression level: use --output-fmt-option level=N (or -O\n"
             "bam,level=N).\n"
             "\n"
             "Not supported (samtools view options): -U (a second output file: the framework\n"
             "writes one output), -p, -P, -X, -t, -r, -R, -N, -d, -D, -m, -B, --add-flags,\n"
             "--remove-flags.",
    .examples = "  # BAM to indexed CRAM, on every core\n"
                "  seqshard view -T ref.fa -o out.cram --write-index in.bam\n"
                "  # count the records of two regions, as samtools view -c\n"
                "  seqshard view -c in.bam chr1:1-1000000 chr2\n"
                "  # a filtered BAM, named with its .bai index\n"
                "  seqshard view -q 20 -o 'out.bam##idx##out.bam.bai' --write-index in.bam",
    .see_also = "seqshard(1), samtools-view(1)",
    .steps = 1};

void vw_usage(FILE *fp)
{
    ss_cmd_help(&vw_cmd, fp);
}

static int bad_value(const char *opt, const char *arg, const char *need)
{
    fprintf(stderr, "seqshard view: %s '%s': %s; see 'seqshard view --help'\n", opt, arg, need);
    return -1;
}

static int flag_arg(const char *opt, const char *arg, int *acc)
{
    int f = bam_str2flag(arg);
    if (f < 0)
        return bad_value(opt, arg, "need a flag number or names such as UNMAP,SECONDARY");
    *acc |= f; /* repeated options add up, as in samtools */
    return 0;
}

/* -x LIST drops the tags, -x ^LIST keeps only them (as --keep-tag LIST). */
static int remove_tag_arg(vw_opts_t *o, const char *arg)
{
    if (arg[0] == '^')
        return vw_tag_list_add(&o->keep, "-x", arg + 1);
    return vw_tag_list_add(&o->remove, "-x", arg);
}

static int has_ext(const char *path, const char *ext)
{
    size_t l = strlen(path), e = strlen(ext);
    return l > e && strcasecmp(path + l - e, ext) == 0;
}

/* What parsing view's options keeps besides vw_opts_t and the common options. */
typedef struct {
    vw_opts_t *o;
    ss_common_opts_t *co;
    int fast_or_u; /* -1 or -u: BAM unless -o names .sam */
} parse_t;

/* samtools' rules: -O/-b/-C win; then -1/-u mean BAM unless FILE.sam; then the extension. */
static int resolve_format(vw_opts_t *o, ss_common_opts_t *co, int fast_or_u)
{
    const char *out = co->output;
    if (co->out_format < 0 && fast_or_u && !(out && has_ext(out, ".sam")))
        co->out_format = SS_FMT_BAM;
    ss_out_format_t f = ss_out_format_from(co, SS_FMT_SAM);
    o->fmt = f == SS_FMT_BAM ? VW_BAM : f == SS_FMT_CRAM ? VW_CRAM : VW_SAM;
    o->level = co->out_level;
    o->write_index = co->write_index;
    if (o->count && o->write_index)
        return bad_value("--write-index", out ? out : "",
                         "-c writes a count, not records; drop "
                         "--write-index");
    if (o->count && out && (has_ext(out, ".gz") || has_ext(out, ".bgz")))
        return bad_value("-o", out,
                         "-c writes one line of text, which samtools does not compress; "
                         "name the file without .gz/.bgz");
    if (o->write_index && (!out || !strcmp(out, "-")))
        return bad_value("--write-index", out ? out : "", "needs an output file (-o FILE)");
    if (o->write_index && o->fmt == VW_SAM && !has_ext(out, ".sam.gz"))
        return bad_value("--write-index", out,
                         "SAM output is indexed only when compressed; "
                         "name it FILE.sam.gz, or add -O bam or -O cram");
    if (o->write_index && o->fmt == VW_SAM)
        o->with_header = 1; /* as samtools: the index needs the @SQ lines in the file */
    return 0;
}

/* One option of view's own (the shared ones went to co); 0, 1 for help, or -1. */
static int apply(void *ctx, int c, const char *arg)
{
    parse_t *p = ctx;
    vw_opts_t *o = p->o;
    ss_common_opts_t *co = p->co;
    switch (c) {
    case 'b':
        co->out_format = SS_FMT_BAM;
        return 0;
    case 'C':
        co->out_format = SS_FMT_CRAM;
        return 0;
    case '1':
        p->fast_or_u = 1;
        co->out_level = 1;
        return 0;
    case 'u':
        p->fast_or_u = 1;
        co->out_level = 0;
        return 0;
    case 'l':
        return ss_opt_string(&o->library, arg);
    case 'c':
        o->count = 1;
        return 0;
    case 'e':
        return vw_expr_check(arg) < 0 ? -1 : ss_opt_string(&o->expr, arg);
    case 's':
        return vw_subsample_arg(o, "-s", arg);
    case O_SUBSAMPLE:
        return vw_subsample_arg(o, "--subsample", arg);
    case O_SUBSAMPLE_SEED:
        o->subsam_seed = (uint32_t)atoi(arg);
        return 0;
    case 'x':
        return remove_tag_arg(o, arg);
    case O_KEEP_TAG:
        return vw_tag_list_add(&o->keep, "--keep-tag", arg);
    case 'S':
        return 0; /* samtools ignores it too: the input format is detected */
    case 'U':
        fprintf(stderr,
                "seqshard view: -U '%s': writing the records not selected to a second "
                "file is not supported (the framework writes one output); run seqshard "
                "view again with the opposite filter instead\n",
                arg);
        return -1;
    case 'h':
        o->with_header = 1;
        return 0;
    case 'H':
        o->header_only = 1;
        return 0;
    case O_NOHEADER:
        o->with_header = o->header_only = 0;
        return 0;
    case O_NOPG:
        o->no_pg = 1;
        return 0;
    case 'T':
        return ss_opt_string(&co->reference, arg);
    case 'L':
    case O_REGION_FILE: /* samtools: --region-file FILE is -M -L FILE; the last file wins */
        o->multi_region |= c == O_REGION_FILE;
        free(o->target_path);
        o->target_path = NULL;
        return ss_opt_string(&o->target_path, arg);
    case 'M':
        o->multi_region = 1;
        return 0;
    case 'q':
        return ss_opt_int("-q", arg, 0, INT_MAX, &o->min_mapq);
    case 'f':
        return flag_arg("-f", arg, &o->flag_on);
    case 'F':
        return flag_arg("-F", arg, &o->flag_off);
    case O_RF:
        return flag_arg("--rf", arg, &o->flag_anyon);
    case 'G':
        return flag_arg("-G", arg, &o->flag_alloff);
    case '?':
        vw_usage(stdout);
        return 1;
    default:
        fprintf(stderr, "seqshard view: internal: option %d has no handler\n", c);
        return -1;
    }
}

/* Positional arguments: the input, then the regions, kept in argument order. */
static int positionals(ss_common_opts_t *co, int argc, char **argv, int first)
{
    if (first >= argc) {
        fprintf(stderr, "seqshard view: no input file; see 'seqshard view --help'\n");
        return -1;
    }
    if (ss_common_add_input(co, argv[first]) < 0)
        return -1;
    for (int i = first + 1; i < argc; i++)
        if (ss_common_add_region(co, argv[i]) < 0)
            return -1;
    return 0;
}

int vw_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts)
{
    vw_opts_t *o = malloc(sizeof(*o));
    if (!o)
        return SS_EXIT_USAGE;
    vw_opts_default(o);
    *kopts = o;
    co->ref_option = "-T"; /* samtools view's name (its -f is required flags) */
    parse_t p = {o, co, 0};
    int r = ss_cmd_parse(&vw_cmd, argc, argv, co, apply, &p);
    if (r != 0)
        return r > 0 ? -1 : SS_EXIT_USAGE;
    if (positionals(co, argc, argv, optind) < 0 || resolve_format(o, co, p.fast_or_u) < 0)
        return SS_EXIT_USAGE;
    if (o->multi_region && o->target_path && co->n_regions > 0) {
        /* samtools then reads the BED intervals cut down to the regions: not done here */
        fprintf(stderr, "seqshard view: -M with both -L and regions is not supported yet; "
                        "drop -M, or give the regions or the -L file alone\n");
        return SS_EXIT_USAGE;
    }
    if (o->target_path && ss_common_add_read(co, o->target_path, "the -L BED", 0) < 0)
        return SS_EXIT_USAGE;
    co->merge_regions = o->multi_region;
    vw_subsample_finish(o);
    if (!(o->cmdline = ss_cmd_line_kept(&vw_cmd, argc, argv)) ||
        (co->output && !(o->output = strdup(co->output))))
        return SS_EXIT_USAGE;
    o->threads = co->threads;
    /*
     * Each shard's CRAM encoder starts by trying every codec on its first
     * containers (htslib re-tries only every 70 blocks after that); at the
     * default shard size that trial work would cost about half again the
     * CPU of samtools' encoding. Larger shards amortise it.
     */
    if (o->fmt == VW_CRAM && !co->shard_size_given)
        co->shard_size = VW_CRAM_SHARD_FACTOR * (hts_pos_t)SS_DEFAULT_SHARD_SIZE;
    /*
     * all_contigs stays 0: the planner still gives every contig at least one
     * shard, and a contig without records costs one index query.
     */
    return 0;
}

/*
 * depth_opts.c -- `seqshard depth` options: samtools depth 1.16's letters,
 * defaults and rules, plus the framework's common options.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "depth.h"
#include "mosdepth.h"

void dp_opts_default(dp_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->flag = DP_DEFAULT_FLAGS;
}

enum { O_FMTOPT = 0x100, O_MOSDEPTH };

/* An alias: parsed and completed, not listed in --help (samtools' other spelling). */
#define ALIAS(key, name, arg)         \
    {                                 \
        key, 0, name, arg, NULL, NULL \
    }

static const ss_opt_t dp_opts[] = {
    {'a', 'a', NULL, NULL,
     "output all positions of contigs with reads, zeros too; twice (-aa): every position of "
     "every contig [off]",
     NULL},
    {'b', 'b', NULL, "FILE", "only positions in the BED (or chr pos) FILE [all]", SS_VALUES_FILE},
    {'f', 'f', NULL, "FILE", "list of input BAM/CRAM files, one per line [none]", SS_VALUES_FILE},
    {'g', 'g', NULL, "FLAGS", "remove FLAGS from the filter flags (number or names) [none]", NULL},
    {'G', 'G', NULL, "FLAGS", "add FLAGS to the filter flags [UNMAP,SECONDARY,QCFAIL,DUP]", NULL},
    {'H', 'H', NULL, NULL, "print a header line: #CHROM POS and the input names [off]", NULL},
    {'J', 'J', NULL, NULL, "count deletions (judged by the base after them) [off]", NULL},
    {'l', 'l', NULL, "INT", "skip reads with fewer aligned query bases than INT [0]", NULL},
    {'q', 'q', "min-BQ", "INT", "do not count bases of quality below INT [0]", NULL},
    ALIAS('q', "min-bq", "INT"),
    {'Q', 'Q', "min-MQ", "INT", "skip reads of mapping quality below INT [0]", NULL},
    ALIAS('Q', "min-mq", "INT"),
    {'r', 'r', NULL, "REG", "only region REG (chr, chr:beg-end) [whole genome]", NULL},
    {'s', 's', NULL, NULL,
     "do not count where a read overlaps an earlier alignment of its name (overlapping "
     "mates) [off]",
     NULL},
    {'X', 'X', NULL, NULL, "the inputs are followed by their index files [off]", NULL},
    {'d', 'd', NULL, "INT", "accepted and ignored, as samtools does (no depth cap)", NULL},
    {'m', 'm', NULL, "INT", "as -d", NULL},
    {'T', 'T', "reference", "FILE", "reference FASTA for CRAM input [none: REF_PATH]",
     SS_VALUES_FILE},
    {O_FMTOPT, 0, "input-fmt-option", "OPT[=VAL]", "htslib input option (e.g. decode_md=0)", NULL},
    SS_OPT_END};

static const ss_opt_t mode_opts[] = {
    {O_MOSDEPTH, 0, "mosdepth", "PREFIX",
     "write mosdepth 0.3.3's files instead; see 'seqshard depth --mosdepth x --help'", NULL},
    {'h', 'h', NULL, NULL, "print this help", NULL},
    SS_OPT_END};

static const ss_opt_group_t dp_groups[] = {{"Options (samtools depth's)", dp_opts, NULL},
                                           {"Output options", ss_opts_output_text, NULL},
                                           {"Other modes", mode_opts, NULL},
                                           {"Framework options", ss_opts_run, NULL},
                                           {NULL, NULL, NULL}};

static const ss_cmd_mode_t dp_modes[] = {{"MOSDEPTH MODE", &mos_cmd}, {NULL, NULL}};

static const ss_cmd_t dp_cmd = {
    .modes = dp_modes,
    .name = "depth",
    .synopsis = "[options] in1.bam|in1.cram [in2 ...]",
    .summary = "depth at each position, byte-identical to samtools depth; mosdepth's files",
    .description =
        "Depth at each position, one column per input: byte-identical to samtools depth\n"
        "1.16 with the same options, computed in parallel over genomic shards.",
    .groups = dp_groups,
    .first_output_wins = 1, /* samtools depth keeps the first -o */
    .after = "Differences from samtools depth 1.16: the inputs need an index; '-o -' is\n"
             "standard output (samtools makes a file named '-'); -o NAME.gz writes BGZF with a\n"
             "tabix index; -H names the inputs, also with -X; -s pairs a read with the\n"
             "alignments of its name ending less than 10000 bp before its POS, and not across\n"
             "contigs; -@ is worker threads; -T and --reference name the reference (samtools\n"
             "depth has --reference only).",
    .examples = "  # samtools depth -a's bytes, compressed and indexed\n"
                "  seqshard depth -a -o depth.txt.gz in.bam\n"
                "  # one column per sample, from a list\n"
                "  seqshard depth -H -f bams.txt -o cohort.depth.txt\n"
                "  # mosdepth's files\n"
                "  seqshard depth --mosdepth sample --by 500 in.bam",
    .see_also = "seqshard(1), samtools-depth(1), mosdepth(1)",
    .steps = 1};

void dp_usage(FILE *fp)
{
    ss_cmd_help(&dp_cmd, fp);
}

static int add_fmt_opt(ss_common_opts_t *co, const char *arg)
{
    char **a = realloc(co->fmt_opts, (size_t)(co->n_fmt_opts + 1) * sizeof(*a));
    if (!a)
        return -1;
    co->fmt_opts = a;
    if (!(a[co->n_fmt_opts] = strdup(arg)))
        return -1;
    co->n_fmt_opts++;
    return 0;
}

/* -g/-G: as samtools, a flag string it cannot read counts as -1 (every bit). */
static int flags_of(const char *arg)
{
    return bam_str2flag(arg);
}

/* One option of depth's own (the shared ones went to co); 0, 1 for help, or -1. */
static int apply(void *ctx, int c, const char *arg)
{
    dp_opts_t *o = ((void **)ctx)[0];
    ss_common_opts_t *co = ((void **)ctx)[1];
    switch (c) {
    case 'a':
        o->all++;
        return 0;
    case 'b':
        return ss_opt_string(&co->bed, arg);
    case 'f':
        return ss_common_add_input_list(co, arg) < 0 ? -1 : 0;
    case 'd':
    case 'm':
        return 0; /* the depth cap samtools dropped in 1.13 */
    case 'g':
        o->flag &= ~flags_of(arg);
        return 0;
    case 'G':
        o->flag |= flags_of(arg);
        return 0;
    case 'l':
        return ss_opt_int("-l", arg, INT_MIN, INT_MAX, &o->min_len);
    case 'H':
        o->header = 1;
        return 0;
    case 'q':
        return ss_opt_int("-q", arg, INT_MIN, INT_MAX, &o->min_bq);
    case 'Q':
        return ss_opt_int("-Q", arg, INT_MIN, INT_MAX, &o->min_mq);
    case 'J':
        o->count_del = 1;
        return 0;
    case 'r':
        return ss_common_set_region(co, arg);
    case 's':
        o->overlaps = 1;
        return 0;
    case 'X':
        o->custom_index = 1;
        return 0;
    case 'T':
        return ss_opt_string(&co->reference, arg);
    case O_FMTOPT:
        return add_fmt_opt(co, arg);
    case 'h':
        dp_usage(stdout);
        return 1;
    default: /* --mosdepth is parsed by mos_parse, which wants_mosdepth chose */
        fprintf(stderr, "seqshard depth: internal: option %d has no handler\n", c);
        return -1;
    }
}

/* -X: the inputs, then their index files in the same order. */
static int add_indexed_inputs(ss_common_opts_t *co, int argc, char **argv)
{
    int n = argc - optind;
    if (n % 2) {
        fprintf(stderr, "seqshard depth: -X needs each input followed, after all inputs, by "
                        "its index file: odd number of file names\n");
        return -1;
    }
    for (int i = 0; i < n / 2; i++)
        if (ss_common_add_input(co, argv[optind + i]) < 0)
            return -1;
    if (!(co->index_paths = calloc((size_t)(n / 2 + 1), sizeof(char *))))
        return -1;
    for (int i = 0; i < n / 2; i++)
        if (!(co->index_paths[i] = strdup(argv[optind + n / 2 + i])))
            return -1;
    optind = argc;
    return 0;
}

static int add_inputs(const dp_opts_t *o, ss_common_opts_t *co, int argc, char **argv)
{
    if (o->custom_index && co->input_list) {
        fprintf(stderr, "seqshard depth: the -f option cannot be combined with -X\n");
        return -1;
    }
    if (o->custom_index)
        return add_indexed_inputs(co, argc, argv);
    /* as in samtools, a -f list replaces the inputs on the command line */
    if (co->input_list && optind < argc) {
        fprintf(stderr,
                "seqshard depth: -f given: ignoring %d input(s) on the command line, "
                "as samtools depth does\n",
                argc - optind);
        return 0;
    }
    for (int i = optind; i < argc; i++)
        if (ss_common_add_input(co, argv[i]) < 0)
            return -1;
    return 0;
}

/* Whether the command line asks for mosdepth's files (--mosdepth PREFIX). */
static int wants_mosdepth(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--mosdepth") || !strncmp(argv[i], "--mosdepth=", 11))
            return 1;
    return 0;
}

int dp_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts)
{
    dp_opts_t *o = calloc(1, sizeof(*o));
    if (!(*kopts = o))
        return SS_EXIT_USAGE;
    dp_opts_default(o);
    if (wants_mosdepth(argc, argv)) /* its own letters: -n, -x, -F, -i, -m mean mosdepth's */
        return mos_parse(argc, argv, co, &o->mos);
    void *ctx[2] = {o, co};
    int r = ss_cmd_parse(&dp_cmd, argc, argv, co, apply, ctx);
    if (r != 0)
        return r > 0 ? -1 : SS_EXIT_USAGE;
    if (add_inputs(o, co, argc, argv) < 0)
        return SS_EXIT_USAGE;
    if (co->n_inputs == 0) {
        fprintf(stderr, "seqshard depth: no input files; see 'seqshard depth --help'\n");
        return SS_EXIT_USAGE;
    }
    /* every position of a region (-a) or of every contig (-aa) is printed: cut by bp */
    co->all_contigs = o->all > 0;
    return 0;
}

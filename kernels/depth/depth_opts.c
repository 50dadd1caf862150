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

void dp_usage(FILE *fp)
{
    dp_opts_t d;
    dp_opts_default(&d);
    char *ff = bam_flag2str(d.flag);
    fprintf(fp,
            "Usage: seqshard depth [options] in1.bam|in1.cram [in2 ...]\n"
            "\n"
            "Depth at each position, one column per input: byte-identical to samtools depth\n"
            "1.16 with the same options, computed in parallel over genomic shards.\n"
            "\n"
            "Options (samtools depth's):\n"
            "  -a                  output all positions of contigs with reads, zeros too [off]\n"
            "  -a -a, -aa          output every position of every contig [off]\n"
            "  -b FILE             only positions in the BED (or chr pos) FILE [all]\n"
            "  -f FILE             list of input BAM/CRAM files, one per line [none]\n"
            "  -g FLAGS            remove FLAGS from the filter flags (number or names) [none]\n"
            "  -G FLAGS            add FLAGS to the filter flags [%s]\n"
            "  -H                  print a header line: #CHROM POS and the input names [off]\n"
            "  -J                  count deletions (judged by the base after them) [off]\n"
            "  -l INT              skip reads with fewer aligned query bases than INT [%d]\n"
            "  -o FILE             write to FILE (atomically; '-' is standard output)\n"
            "                      [standard output]\n"
            "  -q, --min-BQ INT    do not count bases of quality below INT [%d]\n"
            "  -Q, --min-MQ INT    skip reads of mapping quality below INT [%d]\n"
            "  -r REG              only region REG (chr, chr:beg-end) [whole genome]\n"
            "  -s                  do not count where a read overlaps an earlier alignment of\n"
            "                      its name (overlapping mates) [off]\n"
            "  -X                  the inputs are followed by their index files [off]\n"
            "  -d INT, -m INT      accepted and ignored, as samtools does (no depth cap)\n"
            "      --reference FILE  reference FASTA for CRAM input [none: REF_PATH]\n"
            "      --input-fmt-option OPT[=VAL]  htslib input option (e.g. decode_md=0)\n"
            "\n"
            "Differences from samtools depth 1.16 (docs/user-guide.md#seqshard-depth): the\n"
            "inputs need an index; '-o -' is standard output (samtools makes a file named\n"
            "'-'); "
            "-o NAME.gz writes BGZF with a tabix index; -H names the inputs, also with -X;\n"
            "-s pairs a read with the alignments of its name ending less than %d bp before\n"
            "its POS, and not across contigs; -@ is worker threads.\n"
            "\n"
            "mosdepth mode: seqshard depth --mosdepth PREFIX [options] in.bam writes\n"
            "mosdepth 0.3.3's files; see 'seqshard depth --mosdepth x --help'.\n"
            "\n",
            ff, d.min_len, d.min_bq, d.min_mq, DP_PAIR_WINDOW);
    free(ff);
    ss_common_usage(fp);
}

enum { O_REFERENCE = 1, O_FMTOPT };

static const struct option lopts[] = {
    SS_COMMON_LONG_OPTS,
    {"min-MQ", required_argument, NULL, 'Q'},
    {"min-mq", required_argument, NULL, 'Q'},
    {"min-BQ", required_argument, NULL, 'q'},
    {"min-bq", required_argument, NULL, 'q'},
    {"reference", required_argument, NULL, O_REFERENCE},
    {"input-fmt-option", required_argument, NULL, O_FMTOPT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

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

/* One option; 0, 1 for --help, or -1 after a message. */
static int apply(dp_opts_t *o, ss_common_opts_t *co, int c, const char *arg, const char *bad)
{
    switch (c) {
    case 'a': o->all++; return 0;
    case 'b': return ss_opt_string(&co->bed, arg);
    case 'f': return ss_common_add_input_list(co, arg) < 0 ? -1 : 0;
    case 'd':
    case 'm': return 0; /* the depth cap samtools dropped in 1.13 */
    case 'g': o->flag &= ~flags_of(arg); return 0;
    case 'G': o->flag |= flags_of(arg); return 0;
    case 'l': return ss_opt_int("-l", arg, INT_MIN, INT_MAX, &o->min_len);
    case 'H': o->header = 1; return 0;
    case 'q': return ss_opt_int("-q", arg, INT_MIN, INT_MAX, &o->min_bq);
    case 'Q': return ss_opt_int("-Q", arg, INT_MIN, INT_MAX, &o->min_mq);
    case 'J': o->count_del = 1; return 0;
    case 'o': /* samtools keeps the first -o */
        return co->output ? 0 : ss_opt_string(&co->output, arg);
    case 'r': return ss_common_set_region(co, arg);
    case 's': o->overlaps = 1; return 0;
    case 'X': o->custom_index = 1; return 0;
    case O_REFERENCE: return ss_opt_string(&co->reference, arg);
    case O_FMTOPT: return add_fmt_opt(co, arg);
    case 'h': return 1;
    default:
        fprintf(stderr, "seqshard depth: unknown or unsupported option '%s'; see 'seqshard "
                        "depth --help'\n", bad);
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
        fprintf(stderr, "seqshard depth: -f given: ignoring %d input(s) on the command line, "
                        "as samtools depth does\n", argc - optind);
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
        return md_parse(argc, argv, co, &o->md);
    int c, r, more;
    optind = 1;
    while ((more = ss_opt_next(argc, argv, ":@:q:Q:JHd:m:l:g:G:o:ar:Xf:b:sh", lopts, co, &c)) >
           0) {
        if ((r = apply(o, co, c, optarg, argv[optind - 1])) < 0)
            return SS_EXIT_USAGE;
        if (r == 1) {
            dp_usage(stdout);
            return -1;
        }
    }
    if (more < 0)
        return SS_EXIT_USAGE;
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

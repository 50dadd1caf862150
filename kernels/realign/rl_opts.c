/*
 * rl_opts.c -- `seqshard realign` options: defaults in one place, --help, the parser,
 * and the halo the options imply.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "realign.h"

enum { O_WRITE_INDEX = RL_OPT_MAX_WINDOW + 1, O_HELP };

void rl_opts_default(rl_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->format = SS_FMT_BAM;
    o->max_move = 200;
    o->max_isize = 3000;
    o->max_window = RL_DEFAULT_WINDOW;
}

void rl_opts_free(void *kopts)
{
    rl_opts_t *o = kopts;
    if (!o)
        return;
    for (int i = 0; i < o->n_known; i++)
        free(o->known[i]);
    free(o->known);
    free(o->cmdline);
    free(o);
}

/* The options pileup --realign shares: the realign step's own. */
const ss_opt_t rl_step_opts[] = {
    {RL_OPT_KNOWN, 0, "known", "FILE", "indexed VCF/BCF of known indels (up to 2 files)",
     SS_VALUES_FILE},
    {RL_OPT_MAX_MOVE, 0, "max-move", "INT",
     "a read's POS moves at most INT bp, else it keeps its alignment [200]", NULL},
    {RL_OPT_MAX_ISIZE, 0, "max-isize", "INT",
     "reads whose mate is farther (or on another contig, or unmapped) keep their alignment "
     "[3000]", NULL},
    {RL_OPT_MAX_WINDOW, 0, "max-window", "INT",
     "windows of targets longer than INT bp are skipped and counted in --report [500]", NULL},
    SS_OPT_END};

static const ss_opt_t input_opts[] = {
    {'f', 'f', "reference", "FILE", "reference FASTA with .fai (required; -T is the same)",
     SS_VALUES_FILE},
    {'T', 'T', NULL, "FILE", "same as -f, as samtools view spells it", SS_VALUES_FILE},
    SS_OPT_END};

static const ss_opt_t level_opts[] = {
    {'l', 'l', "level", "INT",
     "compression level 0-9, as samtools sort -l (same as --output-fmt-option level=INT)",
     NULL},
    SS_OPT_END};

static const ss_opt_group_t rl_groups[] = {
    {"Input options", input_opts, NULL},
    {"Realignment options", rl_step_opts, NULL},
    {"Output options", ss_opts_output_records,
     "The output is BAM unless -O or -o's name (.cram, .sam, .sam.gz) says otherwise."},
    {"Compression", level_opts, NULL},
    {"Framework options", ss_opts_run, NULL},
    {NULL, NULL, NULL}};

static const ss_cmd_t rl_cmd = {
    .name = "realign",
    .synopsis = "-f ref.fa [options] in.bam|in.cram [region ...]",
    .summary = "local indel realignment, the same bytes at any scale",
    .description =
        "Local indel realignment (GATK3 IndelRealigner's model): around indels seen in\n"
        "reads, soft clips shared by reads, indels that reads' mismatch clusters\n"
        "suggest and known indels, each read is scored at its best ungapped offset on\n"
        "the reference and on candidate haplotypes (those indels, pairs of indels one\n"
        "read carries, known indels); where the best haplotype beats the original\n"
        "alignments by LOD >= 5, the reads it improves get its alignment, indels\n"
        "left-aligned, soft-clipped ends that match it unclipped. No assembly: indels\n"
        "longer than 60 bp are never candidates. The same bytes at any -@, rank count\n"
        "and --shard-size. The input must be coordinate-sorted and indexed.\n"
        "\n"
        "Regions, as samtools view takes them: CONTIG, CONTIG:BEG or CONTIG:BEG-END\n"
        "(1-based, inclusive) after the input; '*' is the unplaced unmapped reads.",
    .groups = rl_groups,
    .after =
        "Passed through unchanged: unmapped, secondary, supplementary, QC-fail and\n"
        "duplicate reads, MAPQ 0, reads with H, N or P in the CIGAR, reads spanning\n"
        "more than 600 bp with their clips. A realigned read gets a new POS and CIGAR,\n"
        "OA:Z with its original alignment, NM and MD recomputed if it had them, BQ\n"
        "removed, MAPQ kept; its mate's PNEXT, TLEN (samtools fixmate's 5'-to-5'\n"
        "definition) and MC follow it.",
    .examples = "  # realign, index the result\n"
                "  seqshard realign -@ 8 -f ref.fa --write-index -o realigned.bam in.bam\n"
                "  # with known indels, as CRAM, on three ranks: the same records\n"
                "  mpirun -np 3 seqshard realign -f ref.fa --known indels.vcf.gz \\\n"
                "      -o realigned.cram in.bam",
    .see_also = "seqshard(1), seqshard-pileup(1), samtools-view(1)"};

void rl_usage(FILE *fp)
{
    ss_cmd_help(&rl_cmd, fp);
}

static int add_known(rl_opts_t *o, const char *path)
{
    if (o->n_known == 2) {
        fprintf(stderr,
                "seqshard realign: --known '%s': at most 2 known-sites files; merge "
                "them with bcftools concat\n",
                path);
        return -1;
    }
    char **k = realloc(o->known, (size_t)(o->n_known + 1) * sizeof(*k));
    if (!k)
        return -1;
    o->known = k;
    return (o->known[o->n_known++] = strdup(path)) ? 0 : -1;
}

int rl_opt_shared(rl_opts_t *o, int c, const char *arg)
{
    switch (c) {
    case RL_OPT_KNOWN:
        return add_known(o, arg);
    case RL_OPT_MAX_MOVE:
        return ss_opt_int("--max-move", arg, 0, 100000, &o->max_move);
    case RL_OPT_MAX_ISIZE:
        return ss_opt_int("--max-isize", arg, 0, 1000000, &o->max_isize);
    case RL_OPT_MAX_WINDOW:
        return ss_opt_int("--max-window", arg, 1, 100000, &o->max_window);
    }
    return -1;
}

rl_opts_t *rl_opts_new(void)
{
    rl_opts_t *o = calloc(1, sizeof(*o));
    if (o)
        rl_opts_default(o);
    return o;
}

/* One option of realign's own (the shared ones went to co): 0, or -1 after a message. */
static int apply(void *ctx, int key, const char *arg)
{
    void **c = ctx;
    rl_opts_t *o = c[0];
    ss_common_opts_t *co = c[1];
    switch (key) {
    case 'f':
    case 'T':
        return ss_opt_string(&co->reference, arg);
    case 'l':
        return ss_opt_int("-l", arg, 0, 9, &co->out_level);
    default:
        return rl_opt_shared(o, key, arg);
    }
}

int rl_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts)
{
    rl_opts_t *o = calloc(1, sizeof(*o));
    if (!(*kopts = o))
        return SS_EXIT_USAGE;
    rl_opts_default(o);
    co->ref_option = "-f";
    void *ctx[2] = {o, co};
    int r = ss_cmd_parse(&rl_cmd, argc, argv, co, apply, ctx);
    if (r != 0)
        return r > 0 ? -1 : SS_EXIT_USAGE;
    if (optind >= argc) {
        fprintf(stderr, "seqshard realign: no input file; see 'seqshard realign --help'\n");
        return SS_EXIT_USAGE;
    }
    if (!co->reference) {
        fprintf(stderr, "seqshard realign: -f ref.fa is required (haplotypes are built from "
                        "it); see 'seqshard realign --help'\n");
        return SS_EXIT_USAGE;
    }
    if (ss_common_add_input(co, argv[optind]) < 0)
        return SS_EXIT_USAGE;
    for (int i = optind + 1; i < argc; i++)
        if (ss_common_add_region(co, argv[i]) < 0)
            return SS_EXIT_USAGE;
    if (!(o->cmdline = ss_cmd_line_kept(&rl_cmd, argc, argv)))
        return SS_EXIT_USAGE;
    for (int i = 0; i < o->n_known; i++) /* read, with its index */
        if (ss_common_add_read(co, o->known[i], "the --known VCF", 1) < 0)
            return SS_EXIT_USAGE;
    o->format = ss_out_format_from(co, SS_FMT_BAM);
    o->threads = co->threads;
    co->unplaced = 1; /* the unplaced unmapped reads pass through, at the end */
    co->cram_md = 1;  /* NM and MD are written (recomputed for moved reads) and NM read */
    return 0;
}

/*
 * The halo: a read the shard owns moves at most max_move; the windows that
 * decide it, or its mate (within max_isize), start within a read span of it,
 * and the cluster scan that defines such a window reaches max_window + RL_GAP
 * further each way; the reads of a window reach one more span past it.
 */
hts_pos_t rl_halo(const rl_opts_t *o)
{
    return (hts_pos_t)o->max_move + o->max_isize + 2 * ((hts_pos_t)o->max_window + RL_GAP) +
           3 * RL_SPAN_MAX + 64;
}

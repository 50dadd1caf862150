/*
 * realign.c -- the `realign` command: the realign step (rl_step.c) in front
 * of the framework's record writer, nothing more. Its options are the
 * step's, which the framework parses, and the writer's (input, output).
 */
#include <stdlib.h>

#include "../../framework/ss_framework_extra.h"
#include "realign.h"

static const ss_opt_t input_opts[] = {
    {'f', 'f', "reference", "FILE", "reference FASTA with .fai (required; -T is the same)",
     SS_VALUES_FILE},
    {'T', 'T', NULL, "FILE", "same as -f, as samtools view spells it", SS_VALUES_FILE},
    SS_OPT_END};

static const ss_opt_t level_opts[] = {
    {'l', 'l', "level", "INT",
     "compression level 0-9, as samtools sort -l (same as --output-fmt-option level=INT)", NULL},
    SS_OPT_END};

static const ss_opt_group_t rl_groups[] = {
    {"Input options", input_opts, NULL},
    {"Output options", ss_opts_output_records,
     "The output is BAM unless -O or -o's name (.cram, .sam, .sam.gz) says otherwise."},
    {"Compression", level_opts, NULL},
    {"Framework options", ss_opts_run, NULL},
    {NULL, NULL, NULL}};

static const ss_cmd_t rl_cmd = {
    .name = "realign",
    .synopsis = "-f ref.fa [options] in.bam|in.cram [region ...]",
    .summary = "local indel realignment, the same bytes at any scale",
    .description = "Local indel realignment (GATK3 IndelRealigner's model): around indels seen in\n"
                   "reads, soft clips shared by reads, indels that reads' mismatch clusters\n"
                   "suggest and known indels, each read is scored on the reference and on\n"
                   "candidate haplotypes (those indels, pairs of indels one read carries, known\n"
                   "indels) at its best ungapped offset, or by a banded, base-quality-weighted\n"
                   "gapped fit where that may do better (a read's own second indel, an indel near\n"
                   "its end, a clipped end holding one); where the best haplotype beats the\n"
                   "original alignments by LOD >= 5, the reads it improves get their fit to it,\n"
                   "else reads that fit the reference better than their own alignment get that;\n"
                   "indels left-aligned, soft-clipped ends that match unclipped. No assembly:\n"
                   "indels longer than 60 bp are never candidates. The same bytes at any -@, rank\n"
                   "count and --shard-size. The input must be coordinate-sorted and indexed.\n"
                   "\n"
                   "The same realignment runs in front of any command that reads records with\n"
                   "--realign (view, pileup, depth), in one pass.\n"
                   "\n"
                   "Regions, as samtools view takes them: CONTIG, CONTIG:BEG or CONTIG:BEG-END\n"
                   "(1-based, inclusive) after the input: the records of the realigned file a\n"
                   "region query returns. '*' is the unplaced unmapped reads.",
    .groups = rl_groups,
    .after = "Passed through unchanged: unmapped, secondary, supplementary, QC-fail and\n"
             "duplicate reads, MAPQ 0 (placed in a repeat: they neither vote nor move),\n"
             "reads with H, N or P in the CIGAR, reads spanning more than 600 bp with their\n"
             "clips. MAPQ 255 (not available) is realigned like any mapped read. A realigned\n"
             "read gets a new POS and CIGAR,\n"
             "OA:Z with its original alignment, NM and MD recomputed if it had them, BQ\n"
             "removed, MAPQ kept; its mate's PNEXT, TLEN (samtools fixmate's 5'-to-5'\n"
             "definition) and MC follow it.",
    .examples = "  # realign, index the result\n"
                "  seqshard realign -@ 8 -f ref.fa --write-index -o realigned.bam in.bam\n"
                "  # with known indels, as CRAM, on three ranks: the same records\n"
                "  mpirun -np 3 seqshard realign -f ref.fa --known indels.vcf.gz \\\n"
                "      -o realigned.cram in.bam",
    .see_also = "seqshard(1), seqshard-view(1), seqshard-pileup(1), samtools-view(1)",
    .steps = 1,
    .step = "realign"};

void rl_usage(FILE *fp)
{
    ss_cmd_help(&rl_cmd, fp);
}

void rl_cmd_opts_free(void *kopts)
{
    rl_cmd_opts_t *o = kopts;
    if (o)
        free(o->cmdline);
    free(o);
}

/* The writer's options (the step's and the shared ones went elsewhere): 0, or -1. */
static int apply(void *ctx, int key, const char *arg)
{
    ss_common_opts_t *co = ctx;
    if (key == 'l')
        return ss_opt_int("-l", arg, 0, 9, &co->out_level);
    return ss_opt_string(&co->reference, arg); /* -f, -T */
}

int rl_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts)
{
    rl_cmd_opts_t *o = calloc(1, sizeof(*o));
    if (!(*kopts = o))
        return SS_EXIT_USAGE;
    co->ref_option = "-f";
    int r = ss_cmd_parse(&rl_cmd, argc, argv, co, apply, co);
    if (r != 0)
        return r > 0 ? -1 : SS_EXIT_USAGE;
    if (optind >= argc) {
        fprintf(stderr, "seqshard realign: no input file; see 'seqshard realign --help'\n");
        return SS_EXIT_USAGE;
    }
    if (ss_common_add_input(co, argv[optind]) < 0)
        return SS_EXIT_USAGE;
    for (int i = optind + 1; i < argc; i++)
        if (ss_common_add_region(co, argv[i]) < 0)
            return SS_EXIT_USAGE;
    if (!(o->cmdline = ss_cmd_line_kept(&rl_cmd, argc, argv)))
        return SS_EXIT_USAGE;
    o->format = ss_out_format_from(co, SS_FMT_BAM);
    o->threads = co->threads;
    return 0;
}

static int prepare(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out)
{
    const rl_cmd_opts_t *o = kopts;
    (void)run;
    out->header = sam_hdr_dup(ss_job_header(job));
    if (!out->header || sam_hdr_add_pg(out->header, "seqshard", "VN", ss_build_version, "CL",
                                       o->cmdline, NULL) < 0) {
        ss_error("%s: cannot build the output header (out of memory?)",
                 ss_job_inputs(job)->paths[0]);
        return -1;
    }
    out->format = o->format;
    out->sam_header = 1;
    out->index_threads = o->threads;
    return 0;
}

static int worker_init(void **ws, const void *kopts, const void *run, const ss_job_t *job,
                       ss_reader_t *rd, int id)
{
    (void)kopts, (void)run, (void)id;
    return (*ws = ss_step_writer_init(job, rd)) ? 0 : -1;
}

static int process(void *ws, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    return ss_step_writer_shard(ws, sh, out, st);
}

static void worker_destroy(void *ws)
{
    ss_step_writer_destroy(ws);
}

const ss_kernel_t ss_kernel_realign = {
    .name = "realign",
    .summary = "local indel realignment (GATK3-style), mates fixed, the same bytes at any scale",
    .usage = rl_usage,
    .parse = rl_parse,
    .opts_free = rl_cmd_opts_free,
    .prepare = prepare,
    .worker_init = worker_init,
    .process = process,
    .worker_destroy = worker_destroy,
    .unplaced = 1, /* the unplaced unmapped reads pass through, at the end */
};

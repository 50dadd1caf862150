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
    o->level = -1;
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

void rl_usage(FILE *fp)
{
    fprintf(fp,
            "Usage: seqshard realign -f ref.fa [options] in.bam|in.cram [region ...]\n"
            "\n"
            "Local indel realignment (GATK3 IndelRealigner's model): around indels seen in\n"
            "reads, soft clips shared by reads, indels that reads' mismatch clusters\n"
            "suggest and known indels, each read is scored at its best ungapped offset on\n"
            "the reference and on candidate haplotypes (those indels, pairs of indels one\n"
            "read carries, known indels); where the best haplotype beats the\n"
            "original alignments by LOD >= %d, the reads it improves get its alignment,\n"
            "indels left-aligned, soft-clipped ends that match it unclipped. No assembly:\n"
            "indels longer than %d bp are never candidates. The same bytes at any -@, rank\n"
            "count and --shard-size. The input must be coordinate-sorted and indexed.\n"
            "\n"
            "Options:\n"
            "  -f, --reference FILE    reference FASTA with .fai (required)\n",
            RL_LOD, RL_MAX_INDEL);
    fprintf(fp,
            "  -O, --output-fmt FMT    bam, cram or sam [bam]\n"
            "  -l, --level INT         compression level 0-9 [htslib's default]\n"
            "      --write-index       index the output (BAM: FILE.csi, CRAM: FILE.crai)\n");
    rl_usage_shared(fp);
    fprintf(fp,
            "\n"
            "Passed through unchanged: unmapped, secondary, supplementary, QC-fail and\n"
            "duplicate reads, MAPQ 0, reads with H, N or P in the CIGAR, reads spanning\n"
            "more than %d bp with their clips. A realigned read gets a new POS and CIGAR,\n"
            "OA:Z with its original alignment, NM and MD recomputed if it had them, BQ\n"
            "removed, MAPQ kept; its mate's PNEXT, TLEN (samtools fixmate's 5'-to-5'\n"
            "definition) and MC follow it.\n"
            "\n",
            RL_SPAN_MAX);
    ss_common_usage(fp);
}

void rl_usage_shared(FILE *fp)
{
    fprintf(fp,
            "      --known FILE        indexed VCF/BCF of known indels (up to 2 files)\n"
            "      --max-move INT      a read's POS moves at most INT bp, else it keeps its\n"
            "                          alignment [200]\n"
            "      --max-isize INT     reads whose mate is farther (or on another contig,\n"
            "                          or unmapped) keep their alignment [3000]\n"
            "      --max-window INT    windows of targets longer than INT bp are skipped and\n"
            "                          counted in --report [%d]\n",
            RL_DEFAULT_WINDOW);
}

/* What the @PG CL keeps: everything but the run-only options (contract 1). */
static int run_only(const char *a, int *takes_value)
{
    static const char *const with_value[] = {"--threads", "--shard-size", "--report", "--tmp-dir",
                                             "--bind",    "-@",           NULL};
    static const char *const alone[] = {"--quiet", "--print-binding", "--resume", NULL};
    for (int i = 0; with_value[i]; i++) {
        size_t n = strlen(with_value[i]);
        if (!strncmp(a, with_value[i], n) && (a[n] == '\0' || a[n] == '=' || i == 5)) {
            *takes_value = a[n] == '\0';
            return 1;
        }
    }
    for (int i = 0; alone[i]; i++)
        if (!strcmp(a, alone[i]))
            return *takes_value = 0, 1;
    return 0;
}

static char *command_line(int argc, char **argv)
{
    kstring_t s = KS_INITIALIZE;
    kputs("seqshard", &s);
    for (int i = 0; i < argc; i++) {
        int takes = 0;
        if (i > 0 && run_only(argv[i], &takes)) {
            i += takes;
            continue;
        }
        kputc(' ', &s);
        kputs(argv[i], &s);
    }
    return ks_release(&s);
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

static int format_arg(rl_opts_t *o, const char *arg)
{
    if (!strcasecmp(arg, "bam"))
        o->format = SS_FMT_BAM;
    else if (!strcasecmp(arg, "cram"))
        o->format = SS_FMT_CRAM;
    else if (!strcasecmp(arg, "sam"))
        o->format = SS_FMT_SAM;
    else {
        fprintf(stderr, "seqshard realign: -O '%s': need bam, cram or sam\n", arg);
        return -1;
    }
    return 0;
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

/* One option of our own: 0, -1 bad (message printed), 1 --help. */
static int apply(rl_opts_t *o, ss_common_opts_t *co, int c, const char *arg)
{
    switch (c) {
    case 'f':
        return ss_opt_string(&co->reference, arg);
    case 'o':
        return ss_opt_string(&co->output, arg);
    case 'O':
        return format_arg(o, arg);
    case 'l':
        return ss_opt_int("-l", arg, 0, 9, &o->level);
    case RL_OPT_KNOWN:
    case RL_OPT_MAX_MOVE:
    case RL_OPT_MAX_ISIZE:
    case RL_OPT_MAX_WINDOW:
        return rl_opt_shared(o, c, arg);
    case O_WRITE_INDEX:
        o->write_index = 1;
        return 0;
    case 'h':
    case O_HELP:
        rl_usage(stdout);
        return 1;
    }
    return -1;
}

int rl_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts)
{
    static const struct option lopts[] = {SS_COMMON_LONG_OPTS,
                                          {"reference", required_argument, NULL, 'f'},
                                          {"output-fmt", required_argument, NULL, 'O'},
                                          {"level", required_argument, NULL, 'l'},
                                          RL_SHARED_LONG_OPTS,
                                          {"write-index", no_argument, NULL, O_WRITE_INDEX},
                                          {"help", no_argument, NULL, O_HELP},
                                          {NULL, 0, NULL, 0}};
    rl_opts_t *o = calloc(1, sizeof(*o));
    if (!(*kopts = o))
        return SS_EXIT_USAGE;
    rl_opts_default(o);
    co->ref_option = "-f";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:o:O:l:h@:", lopts, NULL)) >= 0) {
        int common = ss_common_opt(c, optarg, co);
        if (common < 0)
            return SS_EXIT_USAGE;
        if (common > 0)
            continue;
        int r = c == '?' ? -1 : apply(o, co, c, optarg);
        if (r > 0)
            return -1;
        if (r < 0)
            return SS_EXIT_USAGE;
    }
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
    if (!(o->cmdline = command_line(argc, argv)))
        return SS_EXIT_USAGE;
    for (int i = 0; i < o->n_known; i++) /* read, with its index */
        if (ss_common_add_read(co, o->known[i], "the --known VCF", 1) < 0)
            return SS_EXIT_USAGE;
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

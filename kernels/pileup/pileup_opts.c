/*
 * pileup_opts.c -- `seqshard pileup` options: samtools mpileup's names,
 * defaults and parsing rules, plus the framework's common options.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pileup.h"

void pl_opts_default(pl_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->min_baseq = 13;
    o->max_depth = 8000;
    o->baq = 1;
    o->overlaps = 1;
    o->rflag_filter = BAM_FUNMAP | BAM_FSECONDARY | BAM_FQCFAIL | BAM_FDUP;
    o->sep = ',';
    o->empty = '*';
}

void pl_opts_free(pl_opts_t *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->n_tags; i++)
        free(o->tags[i]);
    if (o->rg_exclude)
        khash_str2int_destroy_free(o->rg_exclude);
}

/* Non-negative integer option value, or -1 after a message. */
/* --output-extra: known read fields become columns, two-letter names tags. */
static int parse_extra(pl_opts_t *o, const char *arg)
{
    static const struct {
        const char *name;
        int col;
    } fields[] = {{"QNAME", PL_COL_QNAME}, {"FLAG", PL_COL_FLAG}, {"RNAME", PL_COL_RNAME},
                  {"POS", PL_COL_POS},     {"MAPQ", PL_COL_MAPQ}, {"RNEXT", PL_COL_RNEXT},
                  {"PNEXT", PL_COL_PNEXT}};
    char *copy = strdup(arg), *save = NULL;
    if (!copy)
        return -1;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t k, nf = sizeof(fields) / sizeof(fields[0]);
        for (k = 0; k < nf && strcmp(t, fields[k].name); k++)
            ;
        if (k < nf) {
            o->cols |= fields[k].col;
        } else if (strlen(t) != 2) {
            /* samtools warns and carries on without the column; so do we */
            fprintf(stderr,
                    "seqshard pileup: --output-extra '%s' is not a supported field or a "
                    "two-letter tag; ignored\n",
                    t);
        } else if (o->n_tags < PL_MAX_TAGS) {
            o->tags[o->n_tags++] = strdup(t);
        }
    }
    free(copy);
    return 0;
}

static int read_rg_list(pl_opts_t *o, const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "seqshard pileup: -G %s: %s\n", path, strerror(errno));
        return -1;
    }
    char buf[1024];
    o->rg_exclude = khash_str2int_init();
    while (fscanf(fp, "%1023s", buf) == 1)
        if (khash_str2int_inc(o->rg_exclude, strdup(buf)) < 0)
            break;
    fclose(fp);
    return 0;
}

enum {
    O_RF = 0x100,
    O_FF,
    O_QNAME,
    O_REVDEL,
    O_EXTRA,
    O_SEP,
    O_EMPTY,
    O_NOINS,
    O_NOINSMODS,
    O_NODEL,
    O_NOENDS,
    O_BP5,
    O_FMTOPT,
    O_ALLOW_REF
};

/* An alias: parsed and completed, not listed in --help (samtools' other spelling). */
#define ALIAS(key, name, arg)         \
    {                                 \
        key, 0, name, arg, NULL, NULL \
    }

static const ss_opt_t input_opts[] = {
    {'6', '6', "illumina1.3+", NULL, "quality is in the Illumina-1.3+ encoding", NULL},
    {'A', 'A', "count-orphans", NULL, "do not discard anomalous read pairs", NULL},
    {'b', 'b', "bam-list", "FILE", "list of input BAM/CRAM files, one per line", SS_VALUES_FILE},
    {'B', 'B', "no-BAQ", NULL, "disable BAQ (per-Base Alignment Quality)", NULL},
    ALIAS('B', "no-baq", NULL),
    {'C', 'C', "adjust-MQ", "INT", "adjust mapping quality; recommended:50, disable:0 [0]", NULL},
    ALIAS('C', "adjust-mq", "INT"),
    {'d', 'd', "max-depth", "INT", "max per-file depth; 0 for no limit [8000]", NULL},
    {'E', 'E', "redo-BAQ", NULL, "recalculate BAQ on the fly, ignore existing BQs", NULL},
    ALIAS('E', "redo-baq", NULL),
    {'f', 'f', "fasta-ref", "FILE", "faidx-indexed reference sequence file (also --reference)",
     SS_VALUES_FILE},
    ALIAS('f', "reference", "FILE"),
    {O_ALLOW_REF, 0, "allow-ref-mismatch", NULL,
     "go on, as samtools does, when -f lacks a contig the run reads or has another length "
     "(N as the reference there) [stop]",
     NULL},
    {'G', 'G', "exclude-RG", "FILE", "exclude read groups listed in FILE", SS_VALUES_FILE},
    ALIAS('G', "exclude-rg", "FILE"),
    {'l', 'l', "positions", "FILE", "skip unlisted positions (chr pos) or regions (BED)",
     SS_VALUES_FILE},
    {'q', 'q', "min-MQ", "INT", "skip alignments with mapQ smaller than INT [0]", NULL},
    ALIAS('q', "min-mq", "INT"),
    {'Q', 'Q', "min-BQ", "INT", "skip bases with baseQ/BAQ smaller than INT [13]", NULL},
    ALIAS('Q', "min-bq", "INT"),
    {'r', 'r', "region", "REG", "region in which pileup is generated", NULL},
    {'R', 'R', "ignore-RG", NULL, "ignore RG tags (one BAM = one sample)", NULL},
    ALIAS('R', "ignore-rg", NULL),
    {O_RF, 0, "rf", "STR|INT",
     "required flags: include reads with any of these bits set (also --incl-flags) [none]", NULL},
    ALIAS(O_RF, "incl-flags", "STR|INT"),
    {O_FF, 0, "ff", "STR|INT",
     "filter flags: skip reads with any of these bits set (also --excl-flags) "
     "[UNMAP,SECONDARY,QCFAIL,DUP]",
     NULL},
    ALIAS(O_FF, "excl-flags", "STR|INT"),
    {'x', 'x', "ignore-overlaps-removal", NULL,
     "disable read-pair overlap detection and removal (also --disable-overlap-removal)", NULL},
    ALIAS('x', "disable-overlap-removal", NULL),
    {'X', 'X', "customized-index", NULL, "inputs are followed by their index files", NULL},
    {O_FMTOPT, 0, "input-fmt-option", "OPT[=VAL]", "htslib input option (e.g. decode_md=0)", NULL},
    SS_OPT_END};

static const ss_opt_t output_opts[] = {
    {'M', 'M', "output-mods", NULL, "output base modifications", NULL},
    {'O', 'O', "output-BP", NULL, "output base positions on reads, current orientation", NULL},
    ALIAS('O', "output-bp", NULL),
    {O_BP5, 0, "output-BP-5", NULL, "output base positions on reads, 5' to 3' orientation", NULL},
    ALIAS(O_BP5, "output-bp-5", NULL),
    {'s', 's', "output-MQ", NULL, "output mapping quality", NULL},
    ALIAS('s', "output-mq", NULL),
    {O_QNAME, 0, "output-QNAME", NULL, "output read names", NULL},
    ALIAS(O_QNAME, "output-qname", NULL),
    {O_EXTRA, 0, "output-extra", "STR",
     "output extra read fields (QNAME,FLAG,RNAME,POS,MAPQ,RNEXT,PNEXT) and read tag values", NULL},
    {O_SEP, 0, "output-sep", "CHAR", "separator for tag lists [,]", NULL},
    {O_EMPTY, 0, "output-empty", "CHAR", "no-value character for tag lists [*]", NULL},
    {O_NOINS, 0, "no-output-ins", NULL,
     "skip insertion sequence after +NUM; twice: whole insertion", NULL},
    {O_NOINSMODS, 0, "no-output-ins-mods", NULL,
     "don't display base modifications within insertions", NULL},
    {O_NODEL, 0, "no-output-del", NULL, "skip deletion sequence after -NUM; twice: whole deletion",
     NULL},
    {O_NOENDS, 0, "no-output-ends", NULL, "remove ^MQUAL and $ markup in sequence column", NULL},
    {O_REVDEL, 0, "reverse-del", NULL, "use '#' character for deletions on the reverse strand",
     NULL},
    {'a', 'a', NULL, NULL,
     "output all positions (including zero depth); twice (-aa): absolutely all positions, "
     "including unused reference sequences",
     NULL},
    SS_OPT_END};

static const ss_opt_t help_opts[] = {{'h', 'h', NULL, NULL, "print this help", NULL}, SS_OPT_END};

static const ss_opt_group_t pl_groups[] = {
    {"Input options", input_opts, NULL},        {"Output options", output_opts, NULL},
    {"Output file", ss_opts_output_text, NULL}, {"Framework options", ss_opts_run, NULL},
    {"General options", help_opts, NULL},       {NULL, NULL, NULL}};

static const ss_cmd_t pl_cmd = {
    .name = "pileup",
    .synopsis = "[options] in1.bam|in1.cram [in2 ...]",
    .summary = "text pileup, byte-identical to samtools mpileup",
    .description =
        "Text pileup, byte-identical to samtools mpileup 1.16 with the same options,\n"
        "computed in parallel over genomic shards.\n"
        "\n"
        "'-' as the only input reads coordinate-sorted SAM/BAM/CRAM from standard input,\n"
        "without an index: one worker in one pass, so it does not parallelise (no -r,\n"
        "no -l, not under mpirun).",
    .groups = pl_groups,
    .examples = "  # samtools mpileup's bytes, on every core\n"
                "  seqshard pileup -f ref.fa -o out.pileup in.bam\n"
                "  # compressed and indexed, on 16 ranks\n"
                "  mpirun -np 16 seqshard pileup -B -f ref.fa -o out.pileup.gz in.bam\n"
                "  # the pileup of the realigned reads, in one pass\n"
                "  seqshard pileup --realign -f ref.fa -o out.pileup in.bam",
    .see_also = "seqshard(1), samtools-mpileup(1), seqshard-realign(1)",
    .steps = 1};

void pl_usage(FILE *fp)
{
    ss_cmd_help(&pl_cmd, fp);
}

/* One option of pileup's own (the shared ones went to co); 0, 1 for help, or -1. */
static int apply(void *ctx, int c, const char *arg)
{
    pl_opts_t *o = ((void **)ctx)[0];
    ss_common_opts_t *co = ((void **)ctx)[1];
    int f;
    switch (c) {
    case 'x':
        o->overlaps = 0;
        return 0;
    case O_RF:
    case O_FF:
        if ((f = bam_str2flag(arg)) < 0) {
            fprintf(stderr, "seqshard pileup: could not parse %s %s\n", c == O_RF ? "--rf" : "--ff",
                    arg);
            return -1;
        }
        *(c == O_RF ? &o->rflag_require : &o->rflag_filter) = f;
        return 0;
    case O_QNAME:
        o->cols |= PL_COL_QNAME;
        return 0;
    case O_REVDEL:
        o->rev_del = 1;
        return 0;
    case O_EXTRA:
        return parse_extra(o, arg);
    case O_SEP:
        o->sep = arg[0];
        return 0;
    case O_EMPTY:
        o->empty = arg[0];
        return 0;
    case O_NOINS:
        o->no_ins++;
        return 0;
    case O_NOINSMODS:
        o->no_ins_mods = 1;
        return 0;
    case 'M':
        o->mods = 1;
        return 0;
    case O_NODEL:
        o->no_del++;
        return 0;
    case O_NOENDS:
        o->no_ends = 1;
        return 0;
    case 'f':
        return ss_opt_string(&co->reference, arg);
    case 'd':
        return ss_opt_int("-d", arg, INT_MIN, INT_MAX, &o->max_depth);
    case 'r':
        return ss_common_set_region(co, arg);
    case 'l':
        return ss_opt_string(&co->bed, arg);
    case 'B':
        o->baq = 0;
        return 0;
    case 'E':
        o->redo_baq = 1;
        return 0;
    case '6':
        o->illumina13 = 1;
        return 0;
    case 'R':
        return 0; /* samples are not reported in text pileup */
    case 's':
        o->cols |= PL_COL_MAPQ_CHAR;
        return 0;
    case 'O':
        o->cols |= PL_COL_QPOS;
        return 0;
    case O_BP5:
        o->cols |= PL_COL_QPOS5;
        return 0;
    case 'C':
        return ss_opt_int("-C", arg, INT_MIN, INT_MAX, &o->cap_q);
    case 'q':
        return ss_opt_int("-q", arg, INT_MIN, INT_MAX, &o->min_mq);
    case 'Q':
        return ss_opt_int("-Q", arg, INT_MIN, INT_MAX, &o->min_baseq);
    case 'b':
        return ss_common_add_input_list(co, arg) < 0 ? -1 : 0;
    case 'A':
        o->orphans = 1;
        return 0;
    case 'G': /* read: part of the run (--resume, the clash check) */
        return read_rg_list(o, arg) < 0 ? -1
                                        : ss_common_add_read(co, arg, "the -G read-group file", 0);
    case 'a':
        o->all++;
        return 0;
    case 'h':
        pl_usage(stdout);
        return 1;
    case 'X':
        o->custom_index = 1;
        return 0;
    case O_ALLOW_REF:
        o->allow_ref_mismatch = 1;
        return 0;
    case O_FMTOPT: {
        char **a = realloc(co->fmt_opts, (size_t)(co->n_fmt_opts + 1) * sizeof(*a));
        if (!a || !(a[co->n_fmt_opts] = strdup(arg)))
            return -1;
        co->fmt_opts = a;
        co->n_fmt_opts++;
        return 0;
    }
    default:
        fprintf(stderr, "seqshard pileup: internal: option %d has no handler\n", c);
        return -1;
    }
}

int pl_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts)
{
    pl_opts_t *o = calloc(1, sizeof(*o));
    if (!o)
        return SS_EXIT_USAGE;
    pl_opts_default(o);
    *kopts = o;
    co->ref_option = "-f"; /* samtools mpileup's name, in messages about the reference */
    void *ctx[2] = {o, co};
    int r = ss_cmd_parse(&pl_cmd, argc, argv, co, apply, ctx);
    if (r != 0)
        return r > 0 ? -1 : SS_EXIT_USAGE;
    if (o->custom_index && co->n_inputs > 0) {
        fprintf(stderr, "seqshard pileup: the -b option cannot be combined with -X\n");
        return SS_EXIT_USAGE;
    }
    if (o->custom_index) {
        /* samtools' -X: the inputs, then their index files in the same order */
        int n = argc - optind;
        if (n % 2) {
            fprintf(stderr, "seqshard pileup: -X needs each input followed, after all "
                            "inputs, by its index file: odd number of file names\n");
            return SS_EXIT_USAGE;
        }
        for (int i = 0; i < n / 2; i++)
            if (ss_common_add_input(co, argv[optind + i]) < 0)
                return SS_EXIT_USAGE;
        if (!(co->index_paths = calloc((size_t)(n / 2 + 1), sizeof(char *))))
            return SS_EXIT_USAGE;
        for (int i = 0; i < n / 2; i++)
            if (!(co->index_paths[i] = strdup(argv[optind + n / 2 + i])))
                return SS_EXIT_USAGE;
        optind = argc;
    }
    /* as in samtools, a -b list replaces the positional inputs */
    if (co->n_inputs > 0 && optind < argc)
        fprintf(stderr,
                "seqshard pileup: -b given: ignoring %d input(s) on the command line, "
                "as samtools mpileup does\n",
                argc - optind);
    else
        for (int i = optind; i < argc; i++)
            if (ss_common_add_input(co, argv[i]) < 0)
                return SS_EXIT_USAGE;
    if (o->redo_baq && !o->baq) {
        fprintf(stderr, "seqshard pileup: -B cannot be combined with -E\n");
        return SS_EXIT_USAGE;
    }
    if (co->n_inputs == 0) {
        fprintf(stderr, "seqshard pileup: no input files; see 'seqshard pileup --help'\n");
        return SS_EXIT_USAGE;
    }
    co->all_contigs = o->all >= 2;
    if (o->max_depth == 0)
        o->max_depth = INT_MAX; /* samtools: -d 0 lifts the cap */
    return 0;
}

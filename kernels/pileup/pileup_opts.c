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
    rl_opts_free(o->rl);
    if (o->rg_exclude)
        khash_str2int_destroy_free(o->rg_exclude);
}

void pl_usage(FILE *fp)
{
    pl_opts_t d;
    pl_opts_default(&d);
    char *ff = bam_flag2str(d.rflag_filter);
    fprintf(fp,
            "Usage: seqshard pileup [options] in1.bam|in1.cram [in2 ...]\n"
            "\n"
            "Text pileup, byte-identical to samtools mpileup 1.16 with the same options,\n"
            "computed in parallel over genomic shards.\n"
            "\n"
            "'-' as the only input reads coordinate-sorted SAM/BAM/CRAM from standard input,\n"
            "without an index: one worker in one pass, so it does not parallelise (no -r,\n"
            "no -l, not under mpirun).\n"
            "\n"
            "Input options:\n"
            "  -6, --illumina1.3+      quality is in the Illumina-1.3+ encoding\n"
            "  -A, --count-orphans     do not discard anomalous read pairs\n"
            "  -b, --bam-list FILE     list of input BAM/CRAM files, one per line\n"
            "  -B, --no-BAQ            disable BAQ (per-Base Alignment Quality)\n"
            "  -C, --adjust-MQ INT     adjust mapping quality; recommended:50, disable:0 [0]\n"
            "  -d, --max-depth INT     max per-file depth; 0 for no limit [%d]\n"
            "  -E, --redo-BAQ          recalculate BAQ on the fly, ignore existing BQs\n"
            "  -f, --fasta-ref FILE    faidx-indexed reference sequence file\n"
            "      --reference FILE    same as -f\n"
            "  -G, --exclude-RG FILE   exclude read groups listed in FILE\n"
            "  -l, --positions FILE    skip unlisted positions (chr pos) or regions (BED)\n"
            "  -q, --min-MQ INT        skip alignments with mapQ smaller than INT [%d]\n"
            "  -Q, --min-BQ INT        skip bases with baseQ/BAQ smaller than INT [%d]\n"
            "  -r, --region REG        region in which pileup is generated\n"
            "  -R, --ignore-RG         ignore RG tags (one BAM = one sample)\n"
            "  --rf, --incl-flags STR|INT  required flags: include reads with any of these\n"
            "                          bits set [none]\n"
            "  --ff, --excl-flags STR|INT  filter flags: skip reads with any of these bits\n"
            "                          set [%s]\n"
            "  -x, --ignore-overlaps-removal, --disable-overlap-removal\n"
            "                          disable read-pair overlap detection and removal\n"
            "\n"
            "Output options:\n"
            "  -o, --output FILE       write output to FILE (atomically) [standard output]\n"
            "  -M, --output-mods       output base modifications\n"
            "  -O, --output-BP         output base positions on reads, current orientation\n"
            "      --output-BP-5       output base positions on reads, 5' to 3' orientation\n"
            "  -s, --output-MQ         output mapping quality\n"
            "      --output-QNAME      output read names\n"
            "      --output-extra STR  output extra read fields (QNAME,FLAG,RNAME,POS,MAPQ,\n"
            "                          RNEXT,PNEXT) and read tag values\n"
            "      --output-sep CHAR   separator for tag lists [,]\n"
            "      --output-empty CHAR no-value character for tag lists [*]\n"
            "      --no-output-ins     skip insertion sequence after +NUM; twice: whole insertion\n"
            "      --no-output-ins-mods  don't display base modifications within insertions\n"
            "      --no-output-del     skip deletion sequence after -NUM; twice: whole deletion\n"
            "      --no-output-ends    remove ^MQUAL and $ markup in sequence column\n"
            "      --reverse-del       use '#' character for deletions on the reverse strand\n"
            "  -a                      output all positions (including zero depth)\n"
            "  -a -a, -aa              output absolutely all positions, including unused\n"
            "                          reference sequences\n"
            "\n",
            d.max_depth, d.min_mq, d.min_baseq, ff);
    free(ff);
    ss_common_usage(fp);
    fprintf(fp, "Generic options:\n"
                "  -X, --customized-index  inputs are followed by their index files\n"
                "      --input-fmt-option OPT[=VAL]  htslib input option (e.g. decode_md=0)\n"
                "\n"
                "Realignment (the pileup of the reads `seqshard realign` would write, in one\n"
                "pass, nothing written to disk; each input is realigned on its own, as one\n"
                "`seqshard realign` per file would do; needs -f):\n"
                "      --realign           realign around indels before the pileup [off]\n");
    rl_usage_shared(fp);
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
            fprintf(stderr, "seqshard pileup: --output-extra '%s' is not a supported field or a "
                            "two-letter tag; ignored\n", t);
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
    O_RF = 1, O_FF, O_QNAME, O_REVDEL, O_EXTRA, O_SEP, O_EMPTY, O_NOINS, O_NOINSMODS,
    O_NODEL, O_NOENDS, O_BP5, O_REFERENCE, O_FMTOPT, O_REALIGN
};

static const struct option lopts[] = {
    SS_COMMON_LONG_OPTS,
    {"rf", required_argument, NULL, O_RF},
    {"ff", required_argument, NULL, O_FF},
    {"incl-flags", required_argument, NULL, O_RF},
    {"excl-flags", required_argument, NULL, O_FF},
    {"output", required_argument, NULL, 'o'},
    {"output-QNAME", no_argument, NULL, O_QNAME},
    {"output-qname", no_argument, NULL, O_QNAME},
    {"illumina1.3+", no_argument, NULL, '6'},
    {"count-orphans", no_argument, NULL, 'A'},
    {"bam-list", required_argument, NULL, 'b'},
    {"no-BAQ", no_argument, NULL, 'B'},
    {"no-baq", no_argument, NULL, 'B'},
    {"adjust-MQ", required_argument, NULL, 'C'},
    {"adjust-mq", required_argument, NULL, 'C'},
    {"max-depth", required_argument, NULL, 'd'},
    {"redo-BAQ", no_argument, NULL, 'E'},
    {"redo-baq", no_argument, NULL, 'E'},
    {"fasta-ref", required_argument, NULL, 'f'},
    {"reference", required_argument, NULL, O_REFERENCE},
    {"input-fmt-option", required_argument, NULL, O_FMTOPT},
    {"customized-index", no_argument, NULL, 'X'},
    {"exclude-RG", required_argument, NULL, 'G'},
    {"exclude-rg", required_argument, NULL, 'G'},
    {"positions", required_argument, NULL, 'l'},
    {"region", required_argument, NULL, 'r'},
    {"ignore-RG", no_argument, NULL, 'R'},
    {"ignore-rg", no_argument, NULL, 'R'},
    {"min-MQ", required_argument, NULL, 'q'},
    {"min-mq", required_argument, NULL, 'q'},
    {"min-BQ", required_argument, NULL, 'Q'},
    {"min-bq", required_argument, NULL, 'Q'},
    {"ignore-overlaps-removal", no_argument, NULL, 'x'},
    {"disable-overlap-removal", no_argument, NULL, 'x'},
    {"output-mods", no_argument, NULL, 'M'},
    {"output-BP", no_argument, NULL, 'O'},
    {"output-bp", no_argument, NULL, 'O'},
    {"output-BP-5", no_argument, NULL, O_BP5},
    {"output-bp-5", no_argument, NULL, O_BP5},
    {"output-MQ", no_argument, NULL, 's'},
    {"output-mq", no_argument, NULL, 's'},
    {"reverse-del", no_argument, NULL, O_REVDEL},
    {"output-extra", required_argument, NULL, O_EXTRA},
    {"output-sep", required_argument, NULL, O_SEP},
    {"output-empty", required_argument, NULL, O_EMPTY},
    {"no-output-ins", no_argument, NULL, O_NOINS},
    {"no-output-ins-mods", no_argument, NULL, O_NOINSMODS},
    {"no-output-del", no_argument, NULL, O_NODEL},
    {"no-output-ends", no_argument, NULL, O_NOENDS},
    {"realign", no_argument, NULL, O_REALIGN},
    RL_SHARED_LONG_OPTS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

/* --realign and realign's own options: realign's defaults first. 0 or -1. */
static int realign_opt(pl_opts_t *o, int c, const char *arg)
{
    if (!o->rl && !(o->rl = rl_opts_new()))
        return -1;
    if (c == O_REALIGN) {
        o->realign = 1;
        return 0;
    }
    return rl_opt_shared(o->rl, c, arg);
}

/* One option; returns 0, 1 for --help, or -1 after a message. */
static int apply(pl_opts_t *o, ss_common_opts_t *co, int c, const char *arg, const char *bad)
{
    int f;
    switch (c) {
    case 'x': o->overlaps = 0; return 0;
    case O_RF:
    case O_FF:
        if ((f = bam_str2flag(arg)) < 0) {
            fprintf(stderr, "seqshard pileup: could not parse %s %s\n", c == O_RF ? "--rf" : "--ff",
                    arg);
            return -1;
        }
        *(c == O_RF ? &o->rflag_require : &o->rflag_filter) = f;
        return 0;
    case 'o': return ss_opt_string(&co->output, arg);
    case O_QNAME: o->cols |= PL_COL_QNAME; return 0;
    case O_REVDEL: o->rev_del = 1; return 0;
    case O_EXTRA: return parse_extra(o, arg);
    case O_SEP: o->sep = arg[0]; return 0;
    case O_EMPTY: o->empty = arg[0]; return 0;
    case O_NOINS: o->no_ins++; return 0;
    case O_NOINSMODS: o->no_ins_mods = 1; return 0;
    case 'M': o->mods = 1; return 0;
    case O_NODEL: o->no_del++; return 0;
    case O_NOENDS: o->no_ends = 1; return 0;
    case 'f':
    case O_REFERENCE: return ss_opt_string(&co->reference, arg);
    case 'd': return ss_opt_int("-d", arg, INT_MIN, INT_MAX, &o->max_depth);
    case 'r': return ss_common_set_region(co, arg);
    case 'l': return ss_opt_string(&co->bed, arg);
    case 'B': o->baq = 0; return 0;
    case 'E': o->redo_baq = 1; return 0;
    case '6': o->illumina13 = 1; return 0;
    case 'R': return 0; /* samples are not reported in text pileup */
    case 's': o->cols |= PL_COL_MAPQ_CHAR; return 0;
    case 'O': o->cols |= PL_COL_QPOS; return 0;
    case O_BP5: o->cols |= PL_COL_QPOS5; return 0;
    case 'C': return ss_opt_int("-C", arg, INT_MIN, INT_MAX, &o->cap_q);
    case 'q': return ss_opt_int("-q", arg, INT_MIN, INT_MAX, &o->min_mq);
    case 'Q': return ss_opt_int("-Q", arg, INT_MIN, INT_MAX, &o->min_baseq);
    case 'b': return ss_common_add_input_list(co, arg) < 0 ? -1 : 0;
    case 'A': o->orphans = 1; return 0;
    case 'G': /* read: part of the run (--resume, the clash check) */
        return read_rg_list(o, arg) < 0 ? -1
                                        : ss_common_add_read(co, arg, "the -G read-group file", 0);
    case 'a': o->all++; return 0;
    case 'h': return 1;
    case 'X': o->custom_index = 1; return 0;
    case RL_OPT_KNOWN: /* read, with its index */
        return realign_opt(o, c, arg) < 0 ? -1 : ss_common_add_read(co, arg, "the --known VCF", 1);
    case O_REALIGN:
    case RL_OPT_MAX_MOVE:
    case RL_OPT_MAX_ISIZE:
    case RL_OPT_MAX_WINDOW: return realign_opt(o, c, arg);
    case O_FMTOPT: {
        char **a = realloc(co->fmt_opts, (size_t)(co->n_fmt_opts + 1) * sizeof(*a));
        if (!a || !(a[co->n_fmt_opts] = strdup(arg)))
            return -1;
        co->fmt_opts = a;
        co->n_fmt_opts++;
        return 0;
    }
    default:
        fprintf(stderr, "seqshard pileup: unknown or unsupported option '%s'; see 'seqshard "
                        "pileup --help'\n", bad);
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
    int c, r = 0, more;
    optind = 1;
    while ((more = ss_opt_next(argc, argv, ":Af:r:l:q:Q:RC:Bd:b:o:EG:6OsxaMXh@:", lopts, co,
                               &c)) > 0) {
        if ((r = apply(o, co, c, optarg, argv[optind - 1])) < 0)
            return SS_EXIT_USAGE;
        if (r == 1) {
            pl_usage(stdout);
            return -1;
        }
    }
    if (more < 0)
        return SS_EXIT_USAGE;
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
        fprintf(stderr, "seqshard pileup: -b given: ignoring %d input(s) on the command line, "
                        "as samtools mpileup does\n", argc - optind);
    else
        for (int i = optind; i < argc; i++)
            if (ss_common_add_input(co, argv[i]) < 0)
                return SS_EXIT_USAGE;
    if (o->rl && !o->realign) {
        fprintf(stderr, "seqshard pileup: --known, --max-move, --max-isize and --max-window "
                        "need --realign\n");
        return SS_EXIT_USAGE;
    }
    if (o->realign && !co->reference) {
        fprintf(stderr, "seqshard pileup: --realign needs -f ref.fa (haplotypes are built "
                        "from it)\n");
        return SS_EXIT_USAGE;
    }
    if (o->redo_baq && !o->baq) {
        fprintf(stderr, "seqshard pileup: -B cannot be combined with -E\n");
        return SS_EXIT_USAGE;
    }
    if (co->n_inputs == 0) {
        fprintf(stderr, "seqshard pileup: no input files; see 'seqshard pileup --help'\n");
        return SS_EXIT_USAGE;
    }
    co->all_contigs = o->all >= 2;
    /*
     * samtools mpileup without -r reads the whole file, the unplaced reads at
     * its end too, and fails on a damaged one: a whole-genome plan ends with
     * their shard, which checks them and prints nothing (pl_check_unplaced).
     */
    co->unplaced = 1;
    co->stdin_ok = 1; /* "-": standard input, read by one worker in one pass */
    if (o->max_depth == 0)
        o->max_depth = INT_MAX; /* samtools: -d 0 lifts the cap */
    return 0;
}

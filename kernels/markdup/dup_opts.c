/*
 * dup_opts.c -- `seqshard markdup`'s command line: samtools markdup 1.16.1's
 * options, names and defaults, and its two file arguments.
 */
#include <stdlib.h>
#include <string.h>

#include "markdup.h"

enum {
    OPT_INCLUDE_FAILS = DUP_OPT_INCLUDE_FAILS,
    OPT_NO_PG,
    OPT_NO_MULTI_DUP,
    OPT_READ_COORDS,
    OPT_COORDS_ORDER,
    OPT_BARCODE_TAG,
    OPT_BARCODE_NAME,
    OPT_BARCODE_RGX,
    OPT_REFERENCE
};

static const ss_opt_t mark_opts[] = {
    {'r', 'r', NULL, NULL, "remove duplicate reads", NULL},
    {'l', 'l', NULL, "INT", "max read length [300]; also how far a shard reads around it", NULL},
    {'S', 'S', NULL, NULL,
     "mark supplementary (and secondary, and unmapped mate) alignments of duplicates too; reads "
     "the input twice",
     NULL},
    {'s', 's', NULL, NULL, "report stats (on standard error)", NULL},
    {'f', 'f', NULL, "NAME", "write stats to NAME; implies -s", SS_VALUES_FILE},
    {'T', 'T', NULL, "PREFIX", "accepted for samtools' sake; markdup writes no temporary files",
     NULL},
    {'d', 'd', NULL, "INT", "optical distance; if set, marks duplicates with a dt tag [0]", NULL},
    {'c', 'c', NULL, NULL, "clear previous duplicate settings and tags", NULL},
    {'m', 'm', "mode", "TYPE",
     "duplicate decision for pairs: t by template start and end, s by sequence starts [t]", "t s"},
    {'u', 'u', NULL, NULL, "uncompressed output", NULL},
    {OPT_INCLUDE_FAILS, 0, "include-fails", NULL, "include QC-failed reads", NULL},
    {OPT_NO_PG, 0, "no-PG", NULL, "do not add a @PG line", NULL},
    {OPT_NO_MULTI_DUP, 0, "no-multi-dup", NULL, "reduced checking of duplicates of duplicates",
     NULL},
    {OPT_READ_COORDS, 0, "read-coords", "STR", "regex for the coordinates in read names", NULL},
    {OPT_COORDS_ORDER, 0, "coords-order", "STR",
     "order of --read-coords' groups: t (name part that must match), x, y [txy]", NULL},
    {OPT_BARCODE_TAG, 0, "barcode-tag", "STR", "a tag duplicates must share", NULL},
    {OPT_BARCODE_NAME, 0, "barcode-name", NULL,
     "the UMI in the read name (eighth colon-separated field) must match", NULL},
    {OPT_BARCODE_RGX, 0, "barcode-rgx", "STR", "regex for the barcode in the read name", NULL},
    {'t', 't', NULL, NULL, "tag duplicates with the original's name in do:Z", NULL},
    {OPT_REFERENCE, 0, "reference", "FILE", "reference FASTA (CRAM input or output)",
     SS_VALUES_FILE},
    SS_OPT_END};

static const ss_opt_group_t dup_groups[] = {
    {"Options", mark_opts, NULL},
    {"Output options", ss_opts_output_records,
     "The output is BAM unless -O or the output's name (.cram, .sam) says otherwise."},
    {"Framework options", ss_opts_run, NULL},
    {NULL, NULL, NULL}};

static const ss_cmd_t dup_cmd = {
    .name = "markdup",
    .synopsis = "[options] in.bam|in.cram [out.bam]",
    .summary = "mark duplicates as samtools markdup does, the same bytes at any scale",
    .description =
        "Marks duplicate reads as samtools markdup 1.16.1 does: the same flags, dt and do\n"
        "tags, records and order, and the same -s statistics, at any -@, rank count and\n"
        "--shard-size. Each shard replays samtools' decisions over its range and a halo\n"
        "of 8 x -l either side, so no read's verdict depends on where a shard starts.\n"
        "\n"
        "The input must be coordinate-sorted and indexed, and must have gone through\n"
        "samtools fixmate -m (for the MC and ms tags):\n"
        "  samtools collate -O -u in.bam | samtools fixmate -m -u - - |\n"
        "      samtools sort -o fixed.bam - && samtools index fixed.bam",
    .groups = dup_groups,
    .after = "A read whose clips put its unclipped ends more than -l from its POS stops the\n"
             "run with the -l to give (samtools' own window assumes -l covers every read).\n"
             "With -S every shard is read twice: first for the names of the duplicates,\n"
             "which every shard then knows, then for the output.",
    .examples = "  # mark duplicates, write statistics, index the output\n"
                "  seqshard markdup -@ 8 -f stats.txt --write-index fixed.bam marked.bam\n"
                "  # remove them, optical duplicates within 100 pixels tagged, on 3 ranks\n"
                "  mpirun -np 3 seqshard markdup -r -d 100 -o marked.bam fixed.bam",
    .see_also = "seqshard(1), samtools-markdup(1), samtools-fixmate(1)",
};

void dup_usage(FILE *fp)
{
    ss_cmd_help(&dup_cmd, fp);
}

void dup_opts_free(void *kopts)
{
    dup_opts_t *o = kopts;
    if (!o)
        return;
    free(o->stats_file), free(o->barcode_tag), free(o->barcode_rgx);
    free(o->coords_rgx), free(o->coords_order), free(o->cmdline);
    free(o);
}

typedef struct {
    dup_opts_t *o;
    ss_common_opts_t *co;
} parse_ctx_t;

static int mode_opt(dup_opts_t *o, const char *arg)
{
    if (strcmp(arg, "t") && strcmp(arg, "s")) {
        fprintf(stderr, "seqshard markdup: -m %s: give t (template) or s (sequence)\n", arg);
        return -1;
    }
    o->mode = arg[0] == 's' ? DUP_MODE_SEQUENCE : DUP_MODE_TEMPLATE;
    return 0;
}

int dup_apply(dup_opts_t *o, ss_common_opts_t *co, int key, const char *arg)
{
    switch (key) {
    case 'r':
        o->remove_dups = 1;
        return 0;
    case 'l':
        o->max_length = atoi(arg) < 0 ? 300 : atoi(arg);
        return 0;
    case 'S':
        o->supp = 1;
        return 0;
    case 's':
        o->do_stats = 1;
        return 0;
    case 'f':
        o->do_stats = 1;
        return ss_opt_string(&o->stats_file, arg);
    case 'T':
        return 0;
    case 'd':
        o->opt_dist = atoi(arg) < 0 ? 0 : atoi(arg);
        return 0;
    case 'c':
        o->clear = 1;
        return 0;
    case 'm':
        return mode_opt(o, arg);
    case 'u':
        co->out_level = 0;
        return 0;
    case 't':
        o->tag = 1;
        return 0;
    case OPT_INCLUDE_FAILS:
        o->include_fails = 1;
        return 0;
    case OPT_NO_PG:
        o->no_pg = 1;
        return 0;
    case OPT_NO_MULTI_DUP:
        o->no_multi_dup = 1;
        return 0;
    case OPT_READ_COORDS:
        return ss_opt_string(&o->coords_rgx, arg);
    case OPT_COORDS_ORDER:
        return ss_opt_string(&o->coords_order, arg);
    case OPT_BARCODE_TAG:
        return ss_opt_string(&o->barcode_tag, arg);
    case OPT_BARCODE_NAME:
        o->barcode_name = 1;
        return 0;
    case OPT_BARCODE_RGX:
        o->barcode_name = 1;
        return ss_opt_string(&o->barcode_rgx, arg);
    case OPT_REFERENCE:
        return ss_opt_string(&co->reference, arg);
    default:
        return -1;
    }
}

static int apply(void *ctx, int key, const char *arg)
{
    return dup_apply(((parse_ctx_t *)ctx)->o, ((parse_ctx_t *)ctx)->co, key, arg);
}

/* --coords-order's groups, as samtools numbers them. 0, or -1 after a message. */
static int coords_order(dup_opts_t *o, const char *cmd)
{
    static const struct {
        const char *a, *b;
        int x, y, t, n;
    } orders[] = {{"txy", "tyx", 2, 3, 1, 3},
                  {"xyt", "yxt", 1, 2, 3, 3},
                  {"xty", "ytx", 1, 3, 2, 3},
                  {"xy", "yx", 1, 2, 0, 2}};
    const char *s = o->coords_order ? o->coords_order : "txy";
    for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++)
        if (!strncmp(s, orders[i].a, (size_t)orders[i].n) ||
            !strncmp(s, orders[i].b, (size_t)orders[i].n)) {
            o->rgx_x = orders[i].x, o->rgx_y = orders[i].y, o->rgx_t = orders[i].t;
            return 0;
        }
    fprintf(stderr, "seqshard %s: --coords-order %s: give txy, xyt, xty or xy\n", cmd, s);
    return -1;
}

int dup_check(dup_opts_t *o, const char *cmd)
{
    if (o->barcode_tag && o->barcode_name) {
        fprintf(stderr, "seqshard %s: give a barcode tag or a barcode in the name, not both\n",
                cmd);
        return SS_EXIT_USAGE;
    }
    o->check_chain = !o->no_multi_dup && (o->tag || o->opt_dist);
    return o->coords_rgx && coords_order(o, cmd) < 0 ? SS_EXIT_USAGE : 0;
}

int dup_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts)
{
    dup_opts_t *o = calloc(1, sizeof(*o));
    if (!(*kopts = o))
        return SS_EXIT_USAGE;
    o->max_length = 300;
    parse_ctx_t ctx = {o, co};
    int r = ss_cmd_parse(&dup_cmd, argc, argv, co, apply, &ctx);
    if (r != 0)
        return r > 0 ? -1 : SS_EXIT_USAGE;
    if (optind >= argc || argc - optind > 2) {
        fprintf(stderr, "seqshard markdup: give the input and, unless -o names it, the output; "
                        "see 'seqshard markdup --help'\n");
        return SS_EXIT_USAGE;
    }
    if (ss_common_add_input(co, argv[optind]) < 0)
        return SS_EXIT_USAGE;
    if (argc - optind == 2 && !co->output && strcmp(argv[optind + 1], "-") != 0 &&
        ss_opt_string(&co->output, argv[optind + 1]) < 0)
        return SS_EXIT_USAGE;
    if ((r = dup_check(o, "markdup")) != 0)
        return r;
    if (o->stats_file && ss_common_add_write(co, o->stats_file, "the -f statistics", "-f") < 0)
        return SS_EXIT_USAGE;
    if (!(o->cmdline = ss_cmd_line_kept(&dup_cmd, argc, argv)))
        return SS_EXIT_USAGE;
    o->format = ss_out_format_from(co, SS_FMT_BAM);
    o->threads = co->threads;
    co->ref_option = "--reference";
    return 0;
}

/*
 * mosdepth_opts.c -- `seqshard depth --mosdepth PREFIX`: mosdepth 0.3.3's
 * options, defaults and argument syntax (--quantize, --thresholds, --by),
 * and its --by BED reader.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../../framework/ss_framework_extra.h"
#include "mosdepth.h"

enum { O_MOSDEPTH = 0x2001 };

static const ss_opt_t mos_opts[] = {
    {O_MOSDEPTH, 0, "mosdepth", "PREFIX", "the prefix of the files written (required)",
     SS_VALUES_FILE},
    {'b', 'b', "by", "BED|INT",
     "mean depth per BED interval (name column kept), or per window of INT bases [none]",
     SS_VALUES_FILE},
    {'n', 'n', "no-per-base", NULL, "do not write PREFIX.per-base.bed.gz [write it]", NULL},
    {'T', 'T', "thresholds", "LIST", "per --by region, bases at >= each depth (1,10,20) [none]",
     NULL},
    {'q', 'q', "quantize", "SEGS",
     "runs of depth in bins: 0:1:10: is [0,1) [1,10) [10,inf); labels from MOSDEPTH_Q0, "
     "MOSDEPTH_Q1, ... [none]",
     NULL},
    {'x', 'x', "fast-mode", NULL,
     "count each read from POS to its end (deletions and skips too), no mate-overlap "
     "correction [off]",
     NULL},
    {'Q', 'Q', "mapq", "INT", "skip reads of mapping quality below INT [0]", NULL},
    {'F', 'F', "flag", "INT", "skip reads with any of these flags [1796]", NULL},
    {'i', 'i', "include-flag", "INT", "only reads with any of these flags [0: all]", NULL},
    {'m', 'm', "use-median", NULL, "median instead of mean per --by region [mean]", NULL},
    {'c', 'c', "chrom", "CHROM", "only contig CHROM: its lines and summary rows [all]", NULL},
    {'R', 'R', "read-groups", "LIST",
     "only reads whose RG is one of these comma-separated read group IDs [all reads]", NULL},
    {'t', 't', NULL, "INT",
     "worker threads, as -@ (mosdepth's -t only adds decompression threads) [one per core]", NULL},
    {'f', 'f', "fasta", "FILE",
     "reference FASTA for CRAM input [REF_PATH] (also -T, "
     "--reference)",
     SS_VALUES_FILE},
    {'f', 0, "reference", "FILE", NULL, SS_VALUES_FILE},
    {'h', 'h', "help", NULL, "print this help", NULL},
    SS_OPT_END};

static const ss_opt_group_t mos_groups[] = {
    {"Options (mosdepth's)", mos_opts,
     "  MOSDEPTH_PRECISION=N     decimals of means and fractions [2]"},
    {"Framework options (no -o: the files are named by PREFIX)", ss_opts_run, NULL},
    {NULL, NULL, NULL}};

const ss_cmd_t mos_cmd = {
    .name = "depth",
    .synopsis = "--mosdepth PREFIX [options] in.bam|in.cram",
    .summary = "mosdepth 0.3.3's files, computed in parallel",
    .description =
        "mosdepth 0.3.3's files, with its formats and semantics, computed in parallel over\n"
        "genomic shards: PREFIX.per-base.bed.gz, PREFIX.regions.bed.gz (--by),\n"
        "PREFIX.thresholds.bed.gz (--thresholds), PREFIX.quantized.bed.gz (--quantize),\n"
        "each BGZF with a .csi index; PREFIX.mosdepth.global.dist.txt,\n"
        "PREFIX.mosdepth.region.dist.txt (--by) and PREFIX.mosdepth.summary.txt. All\n"
        "are written under temporary names and renamed when the run worked: all or none.",
    .groups = mos_groups,
    .after = "Where mosdepth 0.3.3 is wrong, seqshard is right: a mate contained in its pair's\n"
             "first read (both single-operation CIGARs) is counted once, not subtracted past\n"
             "its end; contigs without reads are in the summary and dist files, with depth 0;\n"
             "the min of the total, total_region and first <chrom>_region rows is the real\n"
             "minimum, not always 0; a --by BED interval past its contig's end counts the\n"
             "bases inside the contig (mosdepth crashes), its mean is over the interval as\n"
             "given. -@ and -t are worker threads (mosdepth's -t only adds decompression\n"
             "threads).",
    .examples = "  # per-base, 500 bp windows and thresholds\n"
                "  seqshard depth --mosdepth sample --by 500 -T 1,10,20 in.bam\n"
                "  # one contig, one read group, no per-base file\n"
                "  seqshard depth --mosdepth s -c chr20 -R rg1 -n in.cram -f ref.fa",
    .see_also = "seqshard-depth(1), mosdepth(1)",
    .steps = 1};

void mos_usage(FILE *fp)
{
    ss_cmd_help(&mos_cmd, fp);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A whole signed number (mosdepth's parse_int). 0, or -1. */
static int whole(const char *s, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 10);
    return s[0] && !*end && errno == 0 ? 0 : -1;
}

static int parse_thresholds(const char *arg, mos_opts_t *o)
{
    char *copy = strdup(arg), *save = NULL;
    int n = 1;
    for (const char *p = arg; *p; p++)
        n += *p == ',';
    free(o->thresholds);
    o->thresholds = malloc((size_t)n * sizeof(int));
    o->n_thresholds = 0;
    if (!copy || !o->thresholds) {
        free(copy);
        return -1;
    }
    int bad = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !bad; t = strtok_r(NULL, ",", &save)) {
        long long v;
        bad = whole(t, &v) < 0 || v < INT_MIN || v > INT_MAX;
        if (!bad)
            o->thresholds[o->n_thresholds++] = (int)v;
    }
    free(copy);
    bad |= o->n_thresholds != n; /* an empty item */
    if (bad)
        fprintf(stderr,
                "seqshard depth: --thresholds '%s': give whole numbers separated by "
                "commas (1,10,20)\n",
                arg);
    qsort(o->thresholds, (size_t)o->n_thresholds, sizeof(int), cmp_int);
    return bad ? -1 : 0;
}

int mos_quantize_parse(const char *arg, int64_t **q, int *n)
{
    /* mosdepth's rewriting: "a" is ":a:"; a leading ':' starts at 0; a trailing ':' is
     * open-ended (INT64_MAX); then every ':'-separated item must be a whole number */
    size_t len = strlen(arg);
    char *a = malloc(len + 32);
    *q = NULL, *n = 0;
    if (!a)
        return -1;
    if (!strchr(arg, ':'))
        snprintf(a, len + 32, ":%s:", arg);
    else
        snprintf(a, len + 32, "%s", arg);
    if (a[0] == ':') {
        memmove(a + 1, a, strlen(a) + 1);
        a[0] = '0';
    }
    if (a[strlen(a) - 1] == ':')
        strcat(a, "9223372036854775807");
    int m = 1;
    for (const char *p = a; *p; p++)
        m += *p == ':';
    int bad = !(*q = malloc((size_t)m * sizeof(**q)));
    for (char *t = a; !bad && t;) {
        char *colon = strchr(t, ':');
        if (colon)
            *colon = '\0';
        long long v;
        bad = whole(t, &v) < 0;
        if (!bad)
            (*q)[(*n)++] = v;
        t = colon ? colon + 1 : NULL;
    }
    free(a);
    if (!bad)
        qsort(*q, (size_t)*n, sizeof(**q), cmp_i64);
    return bad ? -1 : 0;
}

/* Bin labels as mosdepth's make_lookup: "lo:hi", "lo:inf", or $MOSDEPTH_Q<i>. */
static int make_labels(mos_opts_t *o)
{
    o->qlabels = calloc((size_t)o->n_quants, sizeof(char *));
    if (!o->qlabels)
        return -1;
    for (int i = 0; i + 1 < o->n_quants; i++) {
        char env[32], buf[64];
        snprintf(env, sizeof(env), "MOSDEPTH_Q%d", i);
        const char *t = getenv(env);
        if (t && *t)
            snprintf(buf, sizeof(buf), "%.63s", t);
        else if (o->quants[i + 1] == INT64_MAX)
            snprintf(buf, sizeof(buf), "%lld:inf", (long long)o->quants[i]);
        else
            snprintf(buf, sizeof(buf), "%lld:%lld", (long long)o->quants[i],
                     (long long)o->quants[i + 1]);
        if (!(o->qlabels[i] = strdup(t && *t ? t : buf)))
            return -1;
    }
    return 0;
}

static int parse_by(const char *arg, mos_opts_t *o)
{
    long long v;
    int digits = *arg != '\0';
    for (const char *p = arg; *p; p++)
        digits &= *p >= '0' && *p <= '9';
    if (digits) { /* mosdepth: all digits is a window size, anything else a BED path */
        if (whole(arg, &v) < 0 || v <= 0 || v > INT32_MAX) {
            fprintf(stderr, "seqshard depth: --by %s: a window size is 1 to %d bases\n", arg,
                    INT32_MAX);
            return -1;
        }
        o->window = v;
        return 0;
    }
    return ss_opt_string(&o->by, arg);
}

/* -R's comma-separated IDs (mosdepth splits on ',' and keeps empty items). 0, or -1. */
static int parse_read_groups(const char *arg, mos_opts_t *o)
{
    for (int i = 0; i < o->n_read_groups; i++)
        free(o->read_groups[i]);
    free(o->read_groups);
    int n = 1;
    for (const char *p = arg; *p; p++)
        n += *p == ',';
    o->n_read_groups = 0;
    if (!(o->read_groups = calloc((size_t)n, sizeof(char *))))
        return -1;
    for (const char *p = arg;; p++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (!(o->read_groups[o->n_read_groups] = strndup(p, len)))
            return -1;
        o->n_read_groups++;
        if (!comma)
            return 0;
        p = comma;
    }
}

/* -t N: mosdepth's threads become seqshard's workers (0, mosdepth's default: one per core). */
static int threads_value(const char *arg, ss_common_opts_t *co)
{
    int n;
    if (ss_opt_int("-t", arg, 0, 4096, &n) < 0)
        return -1;
    co->threads = n;
    return 0;
}

static int flag_value(const char *opt, const char *arg, int *out)
{
    return ss_opt_int(opt, arg, 0, 65535, out);
}

/* One option of mosdepth mode's own (the shared ones went to co); 0, 1 for help, or -1. */
static int apply(void *ctx, int c, const char *arg)
{
    mos_opts_t *o = ((void **)ctx)[0];
    ss_common_opts_t *co = ((void **)ctx)[1];
    switch (c) {
    case O_MOSDEPTH:
        return ss_opt_string(&o->prefix, arg);
    case 'b':
        return parse_by(arg, o);
    case 'n':
        o->no_per_base = 1;
        return 0;
    case 'T':
        return parse_thresholds(arg, o);
    case 'q':
        free(o->quants);
        if (mos_quantize_parse(arg, &o->quants, &o->n_quants) < 0) {
            fprintf(stderr, "seqshard depth: invalid quantize string: '%s' (e.g. 0:1:10:)\n", arg);
            return -1;
        }
        return 0;
    case 'x':
        o->fast = 1;
        return 0;
    case 'Q':
        return ss_opt_int("-Q", arg, INT_MIN, INT_MAX, &o->mapq);
    case 'F':
        return flag_value("-F", arg, &o->eflag);
    case 'i':
        return flag_value("-i", arg, &o->iflag);
    case 'm':
        o->median = 1;
        return 0;
    case 'c':
        return ss_opt_string(&o->chrom, arg);
    case 'R':
        return parse_read_groups(arg, o);
    case 't':
        return threads_value(arg, co);
    case 'f':
        return ss_opt_string(&co->reference, arg);
    case 'h':
        mos_usage(stdout);
        return 1;
    default:
        return -1;
    }
}

static void defaults(mos_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->eflag = MOS_DEFAULT_EFLAG;
    o->precision = ss_env_precision("MOSDEPTH_PRECISION", 2); /* mosdepth's default */
}

/* What mosdepth refuses, and what seqshard needs. 0, or -1 after a message. */
static int check(const mos_opts_t *o, const ss_common_opts_t *co)
{
    if (!o->prefix || !*o->prefix) {
        fprintf(stderr, "seqshard depth: --mosdepth needs a PREFIX for the output files\n");
        return -1;
    }
    if (o->n_thresholds && !o->by && !o->window) {
        fprintf(stderr, "seqshard depth: --thresholds can only be used when --by is given\n");
        return -1;
    }
    if (co->n_inputs != 1) {
        fprintf(stderr, "seqshard depth: --mosdepth reads one BAM or CRAM file (given %d)\n",
                co->n_inputs);
        return -1;
    }
    return 0;
}

/*
 * CRAM: decode only the fields counting reads (as mosdepth asks htslib): flag, contig,
 * POS, MAPQ, CIGAR, and for the mate-overlap rule the name and the mate's position.
 * Other formats ignore it. 0, or -1 out of memory.
 */
static int cram_fields(const mos_opts_t *o, ss_common_opts_t *co)
{
    int f = SAM_FLAG | SAM_RNAME | SAM_POS | SAM_MAPQ | SAM_CIGAR;
    if (!o->fast)
        f |= SAM_QNAME | SAM_RNEXT | SAM_PNEXT;
    if (o->n_read_groups)
        f |= SAM_AUX | SAM_RGAUX;
    char opt[64];
    snprintf(opt, sizeof(opt), "required_fields=0x%x", f);
    char **a = realloc(co->fmt_opts, (size_t)(co->n_fmt_opts + 1) * sizeof(*a));
    if (!a)
        return -1;
    co->fmt_opts = a;
    if (!(a[co->n_fmt_opts] = strdup(opt)))
        return -1;
    co->n_fmt_opts++;
    return 0;
}

/* -c: plan only that contig, named whole ("{name}" when a ':' could read as a range). */
static int only_contig(ss_common_opts_t *co, const char *name)
{
    size_t n = strlen(name) + 3;
    char *reg = malloc(n);
    if (!reg)
        return -1;
    snprintf(reg, n, strchr(name, ':') ? "{%s}" : "%s", name);
    int r = ss_common_set_region(co, reg);
    free(reg);
    return r;
}

/*
 * The files of the run for --resume and the clash check: the --by BED it
 * reads, and every file PREFIX names that it writes (mos_prepare's streams and
 * mos_finish's files: keep the two lists alike). 0, or -1 out of memory.
 */
static int register_files(const mos_opts_t *o, ss_common_opts_t *co)
{
    static const struct {
        const char *suffix, *role;
        int on; /* 0 always, 1 with --by (a BED or windows), 2 without -n, 3 -T, 4 -q */
    } files[] = {{".per-base.bed.gz", "the --mosdepth per-base file", 2},
                 {".regions.bed.gz", "the --mosdepth regions file", 1},
                 {".thresholds.bed.gz", "the --mosdepth thresholds file", 3},
                 {".quantized.bed.gz", "the --mosdepth quantized file", 4},
                 {".mosdepth.summary.txt", "the --mosdepth summary", 0},
                 {".mosdepth.global.dist.txt", "the --mosdepth global distribution", 0},
                 {".mosdepth.region.dist.txt", "the --mosdepth region distribution", 1}};
    int want[] = {1, o->by || o->window, !o->no_per_base, o->n_thresholds > 0, o->n_quants > 0};
    if (o->by && ss_common_add_read(co, o->by, "the --by BED", 0) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        if (!want[files[i].on])
            continue;
        size_t n = strlen(o->prefix) + strlen(files[i].suffix) + 1;
        char *p = malloc(n);
        if (!p)
            return -1;
        snprintf(p, n, "%s%s", o->prefix, files[i].suffix);
        int r = ss_common_add_write(co, p, files[i].role, "--mosdepth");
        free(p);
        if (r < 0)
            return -1;
    }
    return 0;
}

/*
 * mosdepth's own word order, `--mosdepth [options] PREFIX in.bam`: a
 * --mosdepth followed by an option (or by nothing) names no prefix, and the
 * first word that is not an option does, as in `mosdepth [options] PREFIX
 * in.bam`. Drops that --mosdepth from argv (*argc shorter); 1 when it did.
 */
static int take_bare_flag(int *argc, char **argv)
{
    for (int i = 1; i < *argc && strcmp(argv[i], "--"); i++) {
        if (strcmp(argv[i], "--mosdepth"))
            continue;
        const char *next = i + 1 < *argc ? argv[i + 1] : NULL;
        if (next && (next[0] != '-' || !next[1]))
            return 0; /* --mosdepth PREFIX */
        memmove(argv + i, argv + i + 1, (size_t)(*argc - i) * sizeof(*argv));
        (*argc)--;
        return 1;
    }
    return 0;
}

int mos_parse(int argc, char **argv, ss_common_opts_t *co, mos_opts_t **out)
{
    mos_opts_t *o = malloc(sizeof(*o));
    if (!(*out = o))
        return SS_EXIT_USAGE;
    defaults(o);
    /* a copy: getopt reorders it and take_bare_flag shortens it; argv stays as typed */
    char **words = malloc(((size_t)argc + 1) * sizeof(*words));
    if (!words)
        return SS_EXIT_USAGE;
    memcpy(words, argv, ((size_t)argc + 1) * sizeof(*words));
    int bare = take_bare_flag(&argc, words);
    void *ctx[2] = {o, co};
    int r = ss_cmd_parse(&mos_cmd, argc, words, co, apply, ctx), first = optind;
    if (r == 0 && bare && first < argc && !o->prefix &&
        ss_opt_string(&o->prefix, words[first++]) < 0)
        r = -2;
    for (int i = first; r == 0 && i < argc; i++)
        if (ss_common_add_input(co, words[i]) < 0)
            r = -2;
    free(words);
    if (r != 0)
        return r == 1 ? -1 : SS_EXIT_USAGE;
    if (check(o, co) < 0 || (o->n_quants && make_labels(o) < 0) || cram_fields(o, co) < 0 ||
        register_files(o, co) < 0)
        return SS_EXIT_USAGE;
    co->all_contigs = 1; /* every contig has a per-base line and a summary row */
    if (o->chrom && only_contig(co, o->chrom) < 0)
        return SS_EXIT_USAGE;
    return 0;
}

void mos_opts_free(mos_opts_t *o)
{
    if (!o)
        return;
    for (int i = 0; o->qlabels && i + 1 < o->n_quants; i++)
        free(o->qlabels[i]);
    free(o->qlabels);
    free(o->quants);
    free(o->thresholds);
    for (int i = 0; i < o->n_read_groups; i++)
        free(o->read_groups[i]);
    free(o->read_groups);
    free(o->chrom);
    free(o->by);
    free(o->prefix);
    free(o);
}

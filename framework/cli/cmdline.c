/*
 * cmdline.c -- a command's parser, made from its option description
 * (ss_cmdline.h): getopt_long's short string and long table are built from
 * the groups, so an option the help lists is an option the parser takes,
 * and the reverse. The shared groups (output, run) are here too, described
 * once for every kernel.
 *
 * Main thread only, before any worker exists.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../step/steps.h"

/* The value getopt_long returns for the i-th described option's long form. */
#define LONG_BASE 0x10000
enum { KEY_HELP = 0x1f00, KEY_MAN, KEY_OPTIONS };

const ss_opt_t ss_opts_output_records[] = {
    {SS_OPT_OUTPUT, 'o', "output", "FILE",
     "write to FILE, created only when the run succeeds; FILE##idx##INDEX names the index "
     "too [standard output; under mpirun rank 0 writes it in order; -o FILE is the fast "
     "path: every rank writes its own shards]",
     SS_VALUES_FILE},
    {SS_OPT_OUTPUT_FMT, 'O', "output-fmt", "FMT[,level=N]",
     "sam, bam or cram, with an optional compression level 0-9 [from -o's extension: .bam, "
     ".cram, .sam, .sam.gz; else the kernel's default]",
     "sam bam cram"},
    {SS_OPT_FMT_OPTION, 0, "output-fmt-option", "level=N",
     "compression level 0-9 of BAM, CRAM or SAM.gz output [htslib's default]", "level="},
    {SS_OPT_WRITE_INDEX, 0, "write-index", NULL,
     "index the output: BAM FILE.csi, CRAM FILE.crai, SAM.gz FILE.csi (with its header); "
     "another name with -o FILE##idx##NAME, a .bai for BAM or SAM.gz "
     "(-o out.bam##idx##out.bam.bai)",
     NULL},
    SS_OPT_END};

const ss_opt_t ss_opts_output_text[] = {
    {SS_OPT_OUTPUT, 'o', "output", "FILE",
     "write to FILE, created only when the run succeeds; FILE.gz or FILE.bgz is BGZF with "
     "a tabix index beside it [standard output; under mpirun rank 0 writes it in order; -o "
     "FILE is the fast path: every rank writes its own shards]",
     SS_VALUES_FILE},
    {SS_OPT_FMT_OPTION, 0, "output-fmt-option", "level=N",
     "compression level 0-9 of a .gz output [htslib's default]", "level="},
    {SS_OPT_WRITE_INDEX, 0, "write-index", NULL,
     "index the output (FILE.gz.tbi): a .gz output is always indexed, so this only checks "
     "that -o names one",
     NULL},
    SS_OPT_END};

const ss_opt_t ss_opts_run[] = {
    {'@', '@', "threads", "INT", "worker threads [one per core, or SLURM_CPUS_PER_TASK]", NULL},
    {SS_OPT_SHARD_SIZE, 0, "shard-size", "SIZE",
     "target work per shard in bases of average depth, k/m/g suffixes allowed [262144]", NULL},
    {SS_OPT_REPORT, 0, "report", "FILE.json",
     "write run statistics (threads, shards, times, inputs) as JSON", SS_VALUES_FILE},
    {SS_OPT_TMP_DIR, 0, "tmp-dir", "DIR", "directory for temporary files [beside -o FILE]",
     SS_VALUES_DIR},
    {SS_OPT_QUIET, 0, "quiet", NULL, "no progress or log lines on stderr (errors still)", NULL},
    {SS_OPT_BIND, 0, "bind", "MODE",
     "pin workers: auto, core, numa or none [auto: one per core when the launcher restricted "
     "the process to some CPUs (mpirun --bind-to, srun --cpu-bind, taskset) and there are "
     "enough; otherwise none]",
     "auto core numa none"},
    {SS_OPT_PRINT_BINDING, 0, "print-binding", NULL,
     "print each worker's core, NUMA node and package", NULL},
    {SS_OPT_RESUME, 0, "resume", NULL,
     "after a killed run of the same command, reuse the shards it wrote beside -o FILE and "
     "compute only the rest",
     NULL},
    SS_OPT_END};

/* getopt_long's view of a command, built from its description. */
typedef struct {
    const ss_opt_t **all; /* every described option, groups in order */
    int n;
    char *shorts;
    struct option *longs;
} tables_t;

static void tables_free(tables_t *t)
{
    free(t->all);
    free(t->shorts);
    free(t->longs);
}

/* The short string and long table for getopt_long; 0, or -1 out of memory. */
static int tables_build(const ss_cmd_t *cmd, tables_t *t)
{
    memset(t, 0, sizeof(*t));
    for (const ss_opt_group_t *g = cmd->groups; g->title; g++)
        for (const ss_opt_t *o = g->opts; o->key; o++)
            t->n++;
    t->all = malloc(((size_t)t->n + 1) * sizeof(*t->all));
    t->shorts = malloc((size_t)t->n * 2 + 2);
    t->longs = calloc((size_t)t->n + 4, sizeof(*t->longs));
    if (!t->all || !t->shorts || !t->longs)
        return -1;
    int i = 0, l = 0;
    for (const ss_opt_group_t *g = cmd->groups; g->title; g++)
        for (const ss_opt_t *o = g->opts; o->key; o++)
            t->all[i++] = o;
    char *s = t->shorts;
    *s++ = ':'; /* a missing value comes back as ':', so the message is ours */
    for (i = 0; i < t->n; i++) {
        const ss_opt_t *o = t->all[i];
        if (o->letter && o->letter != '?') { /* getopt's own "unknown": matched by optopt */
            *s++ = o->letter;
            if (o->arg)
                *s++ = ':';
            if (ss_opt_value_optional(o))
                *s++ = ':';
        }
        if (o->name)
            t->longs[l++] = (struct option){o->name,
                                            ss_opt_value_optional(o) ? optional_argument
                                            : o->arg                 ? required_argument
                                                                     : no_argument,
                                            NULL, LONG_BASE + i};
    }
    *s = '\0';
    t->longs[l++] = (struct option){"help", no_argument, NULL, KEY_HELP};
    t->longs[l++] = (struct option){"man", no_argument, NULL, KEY_MAN};
    t->longs[l++] = (struct option){"options", no_argument, NULL, KEY_OPTIONS};
    return 0;
}

/* The described option getopt_long returned as c, or NULL. */
static const ss_opt_t *lookup(const tables_t *t, int c)
{
    if (c >= LONG_BASE)
        return c - LONG_BASE < t->n ? t->all[c - LONG_BASE] : NULL;
    for (int i = 0; i < t->n; i++)
        if (t->all[i]->letter == c)
            return t->all[i];
    return NULL;
}

/*
 * Edits (insert, delete, substitute, swap two neighbours) between a and the
 * first n bytes of b, stopping at cap + 1: how far a typing slip is.
 */
static int edits(const char *a, const char *b, size_t n, int cap)
{
    size_t m = strlen(a);
    if (m > 62 || n > 62 || (m > n ? m - n : n - m) > (size_t)cap)
        return cap + 1;
    int d[64][64];
    for (size_t i = 0; i <= m; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= n; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= m; i++)
        for (size_t j = 1; j <= n; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[m][n];
}

/*
 * The long option a mistyped "--word[=value]" most likely meant: the nearest
 * within two edits (one for names of four letters or fewer), the first of a
 * tie in the table's order; NULL when none is that near.
 */
static const char *nearest_long(const tables_t *t, const char *given)
{
    if (given[0] != '-' || given[1] != '-')
        return NULL;
    const char *word = given + 2;
    size_t n = strcspn(word, "=");
    const char *best = NULL;
    int best_d = 3;
    for (const struct option *l = t->longs; l && l->name; l++) {
        int cap = strlen(l->name) <= 4 ? 1 : 2;
        int d = edits(l->name, word, n, cap);
        if (d <= cap && d > 0 && d < best_d)
            best = l->name, best_d = d;
    }
    return best;
}

/* One line for an unknown option or a missing value, naming it as given. -1. */
static int unknown(const ss_cmd_t *cmd, const tables_t *t, int c, const char *given)
{
    char name[64];
    if (optopt > 0 && optopt < 256)
        snprintf(name, sizeof(name), "-%c", optopt);
    else
        snprintf(name, sizeof(name), "%.60s", given);
    const char *near = c == ':' || optopt ? NULL : nearest_long(t, given);
    if (near)
        fprintf(stderr,
                "seqshard %s: unknown option '%s'; did you mean '--%s'? (see 'seqshard "
                "%s --help')\n",
                cmd->name, name, near, cmd->name);
    else
        fprintf(stderr,
                c == ':' ? "seqshard %s: option '%s' needs a value; see 'seqshard %s --help'\n"
                         : "seqshard %s: unknown option '%s'; see 'seqshard %s --help'\n",
                cmd->name, name, cmd->name);
    return -1;
}

/* One parsed option: the framework's (into co) or the kernel's. 0, 1 (exit 0) or -1. */
static int dispatch(const ss_cmd_t *cmd, const ss_opt_t *o, const char *arg, ss_common_opts_t *co,
                    ss_opt_apply_fn apply, void *ctx)
{
    if (o->key == SS_OPT_OUTPUT && cmd->first_output_wins && co->output)
        return 0;
    int step = ss_steps_owner(o);
    if (step >= 0)
        return ss_steps_apply(co, step, o, arg, cmd->name);
    if (o->key == '@' || (o->key >= SS_OPT_FIRST_SHARED && o->key <= SS_OPT_LAST_SHARED))
        return ss_common_opt(o->key, arg, co) < 0 ? -1 : 0;
    return apply(ctx, o->key, arg);
}

/* The long options every command has: --help, and --man and --options for tools. 1. */
static int special(const ss_cmd_t *cmd, int c)
{
    if (c == KEY_HELP)
        ss_cmd_help(cmd, stdout);
    else if (c == KEY_MAN)
        ss_cmd_man(cmd, stdout);
    else
        ss_cmd_options(cmd, stdout);
    return 1;
}

int ss_cmd_parse(const ss_cmd_t *cmd, int argc, char **argv, ss_common_opts_t *co,
                 ss_opt_apply_fn apply, void *ctx)
{
    ss_cmd_steps_t with;
    cmd = ss_cmd_with_steps(cmd, &with);
    tables_t t = {0};
    int rc = ss_steps_begin(cmd, co);
    if (rc == 0 && tables_build(cmd, &t) < 0) {
        fprintf(stderr, "seqshard %s: out of memory reading options\n", cmd->name);
        rc = -1;
    }
    optind = 1;
    opterr = 0; /* our messages, one line each */
    int c;
    while (rc == 0 && (c = getopt_long(argc, argv, t.shorts, t.longs, NULL)) >= 0) {
        const ss_opt_t *o = NULL;
        if (c >= KEY_HELP && c <= KEY_OPTIONS)
            rc = special(cmd, c);
        else if (c == '?' && optopt == '?' && (o = lookup(&t, '?')))
            rc = dispatch(cmd, o, NULL, co, apply, ctx); /* "-?" is help where samtools has it */
        else if (c == '?' || c == ':' || !(o = lookup(&t, c)))
            rc = unknown(cmd, &t, c, argv[optind - 1]);
        else
            rc = dispatch(cmd, o, optarg, co, apply, ctx);
    }
    tables_free(&t);
    return rc == 0 ? ss_steps_end(cmd, co) : rc;
}

/* The option ss_opts_run describes with this long name (up to '=' or the end), or NULL. */
static const ss_opt_t *run_long(const char *name)
{
    size_t n = strcspn(name, "=");
    for (const ss_opt_t *o = ss_opts_run; o->key; o++)
        if (strlen(o->name) == n && strncmp(name, o->name, n) == 0)
            return o;
    return NULL;
}

int ss_opt_run_word(const char *a, int *takes_value)
{
    *takes_value = 0;
    const ss_opt_t *o = a[0] == '-' && a[1] == '-' && a[2] ? run_long(a + 2) : NULL;
    if (o) {
        *takes_value = o->arg && !strchr(a, '=');
        return 1;
    }
    if (a[0] == '-' && a[1] == '@') { /* -@ N or -@N */
        *takes_value = a[2] == '\0';
        return 1;
    }
    return 0;
}

const ss_opt_t *ss_cmd_find_word(const ss_cmd_t *cmd, const char *word)
{
    ss_cmd_steps_t with;
    cmd = ss_cmd_with_steps(cmd, &with);
    int is_long = word[0] == '-' && word[1] == '-' && word[2];
    size_t n = is_long ? strcspn(word + 2, "=") : 0;
    if (word[0] != '-' || !word[1] || (word[1] == '-' && !is_long))
        return NULL;
    for (const ss_opt_group_t *g = cmd->groups; g->title; g++)
        for (const ss_opt_t *o = g->opts; o->key; o++)
            if (is_long ? o->name && strlen(o->name) == n && !strncmp(o->name, word + 2, n)
                        : o->letter == word[1])
                return o;
    return NULL;
}

/*
 * Append argv[i] to s without the run options in it; returns how many of
 * the following words were their values (0 or 1), or -1 out of memory. A
 * cluster of short options ("-b@2", "-bh@") keeps the letters before '@'.
 */
static int put_kept(const tables_t *t, char **argv, int i, kstring_t *s)
{
    const char *a = argv[i];
    size_t keep = strlen(a);
    int skip_next = 0;
    int takes;
    if (a[0] == '-' && a[1] == '-' && a[2]) {
        if (ss_opt_run_word(a, &takes))
            return takes;
    } else if (a[0] == '-' && a[1]) {
        for (const char *c = a + 1; *c; c++) {
            const ss_opt_t *o = lookup(t, (unsigned char)*c);
            if (*c == '@') {
                keep = (size_t)(c - a);
                skip_next = c[1] == '\0';
                break;
            }
            if (!o || o->arg)
                break; /* the rest of the word is this option's value */
        }
        if (keep == 1)
            return skip_next;
    }
    if (kputc(' ', s) < 0 || kputsn(a, keep, s) < 0)
        return -1;
    return skip_next;
}

char *ss_cmd_line_kept(const ss_cmd_t *cmd, int argc, char **argv)
{
    ss_cmd_steps_t with;
    cmd = ss_cmd_with_steps(cmd, &with);
    tables_t t;
    kstring_t s = KS_INITIALIZE;
    int ok = tables_build(cmd, &t) == 0 && kputs("seqshard", &s) >= 0 &&
             (argc < 1 || (kputc(' ', &s) >= 0 && kputs(argv[0], &s) >= 0));
    for (int i = 1; ok && i < argc; i++) {
        int skip = put_kept(&t, argv, i, &s);
        ok = skip >= 0;
        i += skip > 0;
    }
    tables_free(&t);
    for (size_t i = 0; ok && i < s.l; i++)
        if ((unsigned char)s.s[i] < ' ')
            s.s[i] = ' '; /* one header line */
    if (!ok) {
        free(s.s);
        fprintf(stderr, "seqshard: out of memory building the @PG command line\n");
        return NULL;
    }
    return ks_release(&s);
}

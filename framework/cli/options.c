/*
 * options.c -- the options every kernel shares (-@, --shard-size, --report,
 * --tmp-dir, --quiet), input lists (-b), the files a kernel reads or writes
 * besides the framework's, and the command context that usage errors name.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../step/steps.h"
#include "../topology/topology.h"
#include "cli.h"

#define MAX_THREADS    4096
#define MIN_SHARD_SIZE 1000
#define MAX_SHARD_SIZE 1000000000000LL /* 1 Tbp: far beyond any genome, no overflow */

/* ---- command context: set once by ss_main before a kernel parses ---- */

static const char *cli_command;
static char *cli_cmdline;
static int cli_argc;
static char **cli_argv; /* the kernel's arguments, as main received them (not copied) */

void ss_cli_set_command(const char *kernel_name, int argc, char **argv)
{
    cli_command = kernel_name;
    cli_argc = argc;
    cli_argv = argv;
    free(cli_cmdline);
    cli_cmdline = NULL;
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    if (!(cli_cmdline = malloc(len)))
        return; /* the report then shows an empty command line */
    char *p = cli_cmdline;
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]);
        memcpy(p, argv[i], l);
        p += l;
        *p++ = i + 1 < argc ? ' ' : '\0';
    }
    if (argc == 0)
        *p = '\0';
}

const char *ss_cli_cmdline(void)
{
    return cli_cmdline ? cli_cmdline : "";
}

char **ss_cli_argv(int *argc)
{
    *argc = cli_argc;
    return cli_argv;
}

/* ---- defaults ---- */

void ss_common_opts_init(ss_common_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->threads = 0;
    o->shard_size = SS_DEFAULT_SHARD_SIZE;
    o->out_format = -1;
    o->out_level = -1;
    o->ref_option = "--reference"; /* every kernel's long name; parsers set their short one */
}

void ss_common_opts_free(ss_common_opts_t *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->n_inputs; i++) {
        free(o->inputs[i]);
        if (o->index_paths)
            free(o->index_paths[i]);
    }
    free(o->inputs);
    free(o->index_paths);
    for (int i = 0; i < o->n_fmt_opts; i++)
        free(o->fmt_opts[i]);
    free(o->fmt_opts);
    free(o->reference);
    for (int i = 0; i < o->n_regions; i++)
        free(o->regions[i]);
    free(o->regions);
    free(o->bed);
    free(o->output);
    free(o->index_out);
    free(o->report);
    free(o->tmp_dir);
    for (int i = 0; i < o->n_side_reads; i++)
        free(o->side_reads[i].path);
    free(o->side_reads);
    for (int i = 0; i < o->n_side_writes; i++)
        free(o->side_writes[i].path);
    free(o->side_writes);
    ss_steps_opts_free(o);
    memset(o, 0, sizeof(*o));
}

/* ---- values ---- */

/* One-line usage error naming the command, option and value. Always returns -1. */
static int usage_error(const char *opt, const char *arg, const char *need)
{
    const char *cmd = cli_command ? cli_command : "";
    fprintf(stderr, "seqshard%s%s: %s '%s': %s; see 'seqshard %s%s--help'\n", *cmd ? " " : "", cmd,
            opt, arg ? arg : "", need, cmd, *cmd ? " " : "");
    return -1;
}

/*
 * A size in bp: digits with an optional fraction and a k/m/g suffix
 * (decimal: 1k = 1000 bp, as genome sizes are counted). The result must be a
 * whole number. Returns 0 or -1.
 */
int ss_parse_size(const char *s, hts_pos_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    long double v = 0, scale = 1;
    const char *p = s;
    while (isdigit((unsigned char)*p))
        v = v * 10 + (*p++ - '0');
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        while (isdigit((unsigned char)*p)) {
            scale /= 10;
            v += scale * (*p++ - '0');
        }
    }
    switch (tolower((unsigned char)*p)) {
    case 'k':
        v *= 1e3L;
        p++;
        break;
    case 'm':
        v *= 1e6L;
        p++;
        break;
    case 'g':
        v *= 1e9L;
        p++;
        break;
    default:
        break;
    }
    if (*p != '\0' || v > (long double)MAX_SHARD_SIZE)
        return -1;
    hts_pos_t whole = (hts_pos_t)(v + 0.5L);
    if ((long double)whole - v > 1e-6L || v - (long double)whole > 1e-6L)
        return -1; /* a fraction of a base */
    *out = whole;
    return 0;
}

static int set_string(char **dst, const char *arg)
{
    char *s = strdup(arg ? arg : "");
    if (!s) {
        fprintf(stderr, "seqshard: out of memory reading options\n");
        return -1;
    }
    free(*dst);
    *dst = s;
    return 1;
}

int ss_opt_int(const char *opt, const char *arg, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = arg ? strtol(arg, &end, 10) : 0;
    if (!arg || errno || end == arg || *end || v < lo || v > hi) {
        char need[80];
        snprintf(need, sizeof(need), "need a whole number from %d to %d", lo, hi);
        return usage_error(opt, arg, need);
    }
    *out = (int)v;
    return 0;
}

int ss_opt_string(char **dst, const char *arg)
{
    return set_string(dst, arg) < 0 ? -1 : 0;
}

/* -o FILE, or samtools' FILE##idx##INDEX naming the index too. 1, or -1. */
static int output_arg(ss_common_opts_t *o, const char *arg)
{
    const char *mark = arg ? strstr(arg, "##idx##") : NULL;
    if (!arg || !*arg || mark == arg || (mark && !mark[7]))
        return usage_error("-o", arg, "need a file name (FILE, or FILE##idx##INDEX)");
    free(o->index_out);
    o->index_out = NULL;
    if (mark && set_string(&o->index_out, mark + 7) < 0)
        return -1;
    if (set_string(&o->output, arg) < 0)
        return -1;
    if (mark)
        o->output[mark - arg] = '\0';
    return 1;
}

/* A format option of -O's list or --output-fmt-option: only level=N. 1, or -1. */
static int fmt_option_arg(const char *opt, const char *arg, ss_common_opts_t *o)
{
    if (!arg || strncmp(arg, "level=", 6) != 0)
        return usage_error(opt, arg, "the output option seqshard takes is level=N (0-9)");
    char *end;
    long v = strtol(arg + 6, &end, 10);
    if (end == arg + 6 || *end || v < 0 || v > 9)
        return usage_error(opt, arg, "level=N needs a whole number from 0 to 9");
    o->out_level = (int)v;
    return 1;
}

/* -O FMT[,level=N]: sam, bam or cram (any case), as samtools' -O takes them. 1, or -1. */
static int output_fmt_arg(ss_common_opts_t *o, const char *arg)
{
    static const struct {
        const char *name;
        int fmt;
    } fmts[] = {{"sam", SS_FMT_SAM}, {"bam", SS_FMT_BAM}, {"cram", SS_FMT_CRAM}};
    size_t n = arg ? strcspn(arg, ",") : 0;
    o->out_format = -1;
    for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
        if (n == strlen(fmts[i].name) && strncasecmp(arg, fmts[i].name, n) == 0)
            o->out_format = fmts[i].fmt;
    if (o->out_format < 0)
        return usage_error("-O", arg, "need sam, bam or cram, optionally with ,level=N");
    return arg[n] ? fmt_option_arg("-O", arg + n + 1, o) : 1;
}

int ss_common_opt(int c, const char *arg, ss_common_opts_t *o)
{
    switch (c) {
    case '@': {
        char *end;
        errno = 0;
        long v = arg ? strtol(arg, &end, 10) : 0;
        if (!arg || end == arg || *end || errno || v < 1 || v > MAX_THREADS)
            return usage_error("-@", arg, "need a whole number of threads from 1 to 4096");
        o->threads = (int)v;
        return 1;
    }
    case SS_OPT_SHARD_SIZE: {
        hts_pos_t v;
        if (ss_parse_size(arg, &v) < 0 || v < MIN_SHARD_SIZE)
            return usage_error("--shard-size", arg,
                               "need a whole number of bases >= 1000, with an optional "
                               "k/m/g suffix (e.g. 250k)");
        o->shard_size = v;
        o->shard_size_given = 1;
        return 1;
    }
    case SS_OPT_REPORT:
        if (!arg || !*arg)
            return usage_error("--report", arg, "need a file name for the JSON report");
        return set_string(&o->report, arg);
    case SS_OPT_TMP_DIR:
        if (!arg || !*arg)
            return usage_error("--tmp-dir", arg, "need a directory");
        return set_string(&o->tmp_dir, arg);
    case SS_OPT_QUIET:
        o->quiet = 1;
        return 1;
    case SS_OPT_BIND: {
        ss_bind_mode_t m;
        if (ss_bind_mode_parse(arg, &m) < 0)
            return usage_error("--bind", arg, "need auto, core, numa or none");
        o->bind = (int)m;
        return 1;
    }
    case SS_OPT_PRINT_BINDING:
        o->print_binding = 1;
        return 1;
    case SS_OPT_RESUME:
        o->resume = 1;
        return 1;
    case SS_OPT_OUTPUT:
        return output_arg(o, arg);
    case SS_OPT_OUTPUT_FMT:
        return output_fmt_arg(o, arg);
    case SS_OPT_FMT_OPTION:
        return fmt_option_arg("--output-fmt-option", arg, o);
    case SS_OPT_WRITE_INDEX:
        o->write_index = 1;
        return 1;
    default:
        return 0;
    }
}

/* ---- regions ---- */

int ss_common_add_region(ss_common_opts_t *o, const char *region)
{
    char **grown = realloc(o->regions, (size_t)(o->n_regions + 1) * sizeof(*grown));
    if (!grown) {
        ss_error("out of memory adding region '%s'", region);
        return -1;
    }
    o->regions = grown;
    if (!(o->regions[o->n_regions] = strdup(region))) {
        ss_error("out of memory adding region '%s'", region);
        return -1;
    }
    o->n_regions++;
    return 0;
}

int ss_common_set_region(ss_common_opts_t *o, const char *region)
{
    for (int i = 0; i < o->n_regions; i++)
        free(o->regions[i]);
    o->n_regions = 0;
    return ss_common_add_region(o, region);
}

/* ---- the kernel's own files ---- */

static int add_side_file(ss_side_file_t **list, int *n, const ss_side_file_t *f)
{
    ss_side_file_t *grown = realloc(*list, (size_t)(*n + 1) * sizeof(*grown));
    char *path = grown ? strdup(f->path) : NULL;
    if (!grown || !path) {
        if (grown)
            *list = grown;
        ss_error("out of memory adding %s '%s'", f->role, f->path);
        return -1;
    }
    *list = grown;
    grown[*n] = *f;
    grown[(*n)++].path = path;
    return 0;
}

int ss_common_add_read(ss_common_opts_t *o, const char *path, const char *role, int indexed)
{
    ss_side_file_t f = {(char *)path, role, NULL, indexed};
    return add_side_file(&o->side_reads, &o->n_side_reads, &f);
}

int ss_common_add_write(ss_common_opts_t *o, const char *path, const char *role, const char *opt)
{
    ss_side_file_t f = {(char *)path, role, opt, 0};
    return add_side_file(&o->side_writes, &o->n_side_writes, &f);
}

/* ---- inputs ---- */

static int add_input(ss_common_opts_t *o, const char *path)
{
    char **grown = realloc(o->inputs, (size_t)(o->n_inputs + 1) * sizeof(*grown));
    if (!grown) {
        ss_error("out of memory adding input '%s'", path);
        return -1;
    }
    o->inputs = grown;
    if (!(o->inputs[o->n_inputs] = strdup(path))) {
        ss_error("out of memory adding input '%s'", path);
        return -1;
    }
    o->n_inputs++;
    return 0;
}

int ss_common_add_input(ss_common_opts_t *o, const char *path)
{
    if (o->input_list) {
        /* samtools mpileup reads only the -b list when one is given */
        if (o->input_list == 1)
            ss_warn("file arguments are ignored when -b gives the inputs (as samtools does): "
                    "'%s'",
                    path);
        o->input_list = 2;
        return 0;
    }
    return add_input(o, path);
}

static void clear_inputs(ss_common_opts_t *o)
{
    for (int i = 0; i < o->n_inputs; i++)
        free(o->inputs[i]);
    o->n_inputs = 0;
}

/* Remote paths are for htslib to open; we cannot stat them. */
static int is_url(const char *s)
{
    const char *p = s;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '.' || *p == '-')
        p++;
    return p > s && strncmp(p, "://", 3) == 0;
}

/*
 * samtools' rules for -b: one path per line, trailing white space dropped,
 * blank lines skipped, leading white space kept (it may be part of a name).
 */
int ss_common_add_input_list(ss_common_opts_t *o, const char *list_path)
{
    FILE *fp = fopen(list_path, "r");
    if (!fp) {
        ss_error("%s: cannot read the input list: %s; check the -b path", list_path,
                 strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, added = 0, rc = 0;
    /* read: it is part of the run (--resume's identity; no output may replace it) */
    if (ss_common_add_read(o, list_path, "the list of inputs", 0) < 0) {
        fclose(fp);
        return -1;
    }
    /* samtools keeps only the last -b; inputs given before it are not read either */
    clear_inputs(o);
    o->input_list = 1;
    while ((len = getline(&line, &cap, fp)) >= 0) {
        lineno++;
        while (len > 0 && isspace((unsigned char)line[len - 1]))
            line[--len] = '\0';
        if (len == 0)
            continue;
        struct stat st;
        if (!is_url(line) && stat(line, &st) != 0) {
            ss_error("%s:%d: listed input '%s' cannot be opened: %s; fix the path in %s", list_path,
                     lineno, line, strerror(errno), list_path);
            rc = -1;
            break;
        }
        if (add_input(o, line) < 0) {
            rc = -1;
            break;
        }
        added++;
    }
    if (rc == 0 && ferror(fp)) {
        ss_error("%s: read error in the input list: %s", list_path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && added == 0) {
        ss_error("%s: the input list names no files; put one BAM/CRAM path per line", list_path);
        rc = -1;
    }
    free(line);
    fclose(fp);
    return rc;
}

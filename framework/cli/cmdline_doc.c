/*
 * cmdline_doc.c -- what a command's description prints: its --help, its man
 * page (seqshard KERNEL --man, which scripts/make-man.py saves in man/) and
 * the option list shell completion reads (seqshard KERNEL --options). One
 * description, so the three and the parser agree by construction.
 *
 * Main thread only.
 */
#include <ctype.h>
#include <string.h>

#include "../step/steps.h"

#define HELP_WIDTH    80
#define HELP_TEXT_COL 26 /* where an option's text starts in --help */

/* "-x, --name ARG", "    --name ARG" or "-x ARG" into buf. */
static void item_label(const ss_opt_t *o, char *buf, size_t size)
{
    const char *arg = o->arg ? o->arg : "";
    const char *sp = o->arg && !ss_opt_value_optional(o) ? " " : "";
    if (o->letter && o->name)
        snprintf(buf, size, "-%c, --%s%s%s", o->letter, o->name, sp, arg);
    else if (o->letter)
        snprintf(buf, size, "-%c%s%s", o->letter, sp, arg);
    else
        snprintf(buf, size, "    --%s%s%s", o->name, sp, arg);
}

/* text wrapped to HELP_WIDTH, its first line from column at, the others from col. */
static void wrapped(FILE *fp, const char *text, int at, int col)
{
    const char *p = text;
    while (*p) {
        int room = HELP_WIDTH - at, len = 0, cut = 0;
        while (p[len] && p[len] != '\n' && len <= room) {
            if (p[len] == ' ')
                cut = len;
            len++;
        }
        if (p[len] && p[len] != '\n' && cut > 0)
            len = cut; /* break at the last space that fits */
        fprintf(fp, "%.*s\n", len, p);
        p += len;
        while (*p == ' ' || *p == '\n')
            p++;
        if (*p)
            fprintf(fp, "%*s", col, "");
        at = col;
    }
}

static void help_item(FILE *fp, const ss_opt_t *o)
{
    char label[128];
    item_label(o, label, sizeof(label));
    int len = (int)strlen(label) + 2;
    fprintf(fp, "  %s", label);
    if (len > HELP_TEXT_COL - 2) {
        fprintf(fp, "\n%*s", HELP_TEXT_COL, "");
        len = HELP_TEXT_COL;
    } else {
        fprintf(fp, "%*s", HELP_TEXT_COL - len, "");
        len = HELP_TEXT_COL;
    }
    wrapped(fp, o->help ? o->help : "", len, HELP_TEXT_COL);
}

void ss_opts_help(const ss_opt_t *opts, FILE *fp)
{
    for (const ss_opt_t *o = opts; o->key; o++)
        if (o->help) /* not an alias */
            help_item(fp, o);
}

void ss_cmd_help(const ss_cmd_t *cmd, FILE *fp)
{
    ss_cmd_steps_t with;
    cmd = ss_cmd_with_steps(cmd, &with);
    fprintf(fp, "Usage: seqshard %s %s\n\n", cmd->name, cmd->synopsis);
    if (cmd->description)
        fprintf(fp, "%s\n\n", cmd->description);
    for (const ss_opt_group_t *g = cmd->groups; g->title; g++) {
        fprintf(fp, "%s:\n", g->title);
        ss_opts_help(g->opts, fp);
        if (g->note)
            fprintf(fp, "%s\n", g->note);
        fputc('\n', fp);
    }
    if (cmd->after)
        fprintf(fp, "%s\n\n", cmd->after);
    if (cmd->examples)
        fprintf(fp, "Examples:\n%s\n", cmd->examples);
}

/* ---- the man page ---- */

/* text in roff: backslashes, every '-' (so it stays ASCII) and a leading '.' or '\''. */
static void roff(FILE *fp, const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if ((i == 0 || text[i - 1] == '\n') && (c == '.' || c == '\''))
            fputs("\\&", fp);
        if (c == '\\')
            fputs("\\e", fp);
        else if (c == '-')
            fputs("\\-", fp);
        else
            fputc(c, fp);
    }
}

/* Whether a line of the len bytes at p starts with a space (a list, a table). */
static int indented(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] == ' ' && (i == 0 || p[i - 1] == '\n'))
            return 1;
    return 0;
}

/* Paragraphs (blank-line separated): indented ones kept as laid out, others filled. */
static void roff_paragraphs(FILE *fp, const char *text)
{
    const char *p = text;
    while (*p) {
        const char *end = strstr(p, "\n\n");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int laid_out = indented(p, len);
        fputs(laid_out ? ".PP\n.nf\n" : ".PP\n", fp);
        roff(fp, p, len);
        fputs(laid_out ? "\n.fi\n" : "\n", fp);
        p += len;
        while (*p == '\n')
            p++;
    }
}

static void man_item(FILE *fp, const ss_opt_t *o)
{
    fputs(".TP\n", fp);
    if (o->letter) {
        fputs("\\fB", fp);
        roff(fp, (char[]){'-', o->letter}, 2);
        fputs("\\fR", fp);
        if (o->name)
            fputs(", ", fp);
    }
    if (o->name) {
        fputs("\\fB\\-\\-", fp);
        roff(fp, o->name, strlen(o->name));
        fputs("\\fR", fp);
    }
    if (o->arg) {
        fputs(ss_opt_value_optional(o) ? "\\fI" : " \\fI", fp);
        roff(fp, o->arg, strlen(o->arg));
        fputs("\\fR", fp);
    }
    fputc('\n', fp);
    roff(fp, o->help ? o->help : "", o->help ? strlen(o->help) : 0);
    fputc('\n', fp);
}

/* What every command's page says about how it ends and what it reads from the environment. */
static const char man_tail[] =
    ".SH EXIT STATUS\n"
    "0 on success (and after \\-\\-help); 1 when an input, reference, region or output "
    "cannot be used or the run failed (one line on standard error names the file, shard and "
    "rank, and says what to do; no output file is left); 2 on a usage error; 128 + N when "
    "signal N ended the run (SIGTERM: 143).\n"
    ".SH ENVIRONMENT\n"
    ".TP\n.B SLURM_CPUS_PER_TASK\ndefault for \\-@ inside a Slurm job\n"
    ".TP\n.B SLURM_TMPDIR\\fR, \\fBTMPDIR\nnode\\-local scratch for \\-\\-tmp\\-dir inside a "
    "Slurm job\n"
    ".TP\n.B SLURM_JOB_ID\nrecorded in the \\-\\-report file\n"
    ".TP\n.B SEQSHARD_PROGRESS_INTERVAL\nseconds between progress lines when standard error "
    "is not a terminal [30]\n"
    ".TP\n.B SEQSHARD_HTS_LOG\n1 shows htslib's own messages too\n"
    ".TP\n.B REF_PATH\\fR, \\fBREF_CACHE\nwhere htslib looks up a CRAM's reference by MD5 "
    "(never on the network unless REF_PATH names a URL)\n";

/* A section's heading: .SH TITLE, or in a mode's section .SS Title (first letter kept). */
static void heading(FILE *fp, const char *title, int sub)
{
    if (!sub) {
        fprintf(fp, ".SH %s\n", title);
        return;
    }
    fprintf(fp, ".SS %c", title[0]);
    for (const char *c = title + 1; *c; c++)
        fputc(tolower((unsigned char)*c), fp);
    fputc('\n', fp);
}

/* SYNOPSIS to EXAMPLES of cmd; sub: as the subsections of a mode's section. */
static void man_body(const ss_cmd_t *cmd, FILE *fp, int sub)
{
    heading(fp, "SYNOPSIS", sub);
    fprintf(fp, "\\fBseqshard %s\\fR ", cmd->name);
    roff(fp, cmd->synopsis, strlen(cmd->synopsis));
    fputc('\n', fp);
    heading(fp, "DESCRIPTION", sub);
    if (cmd->description)
        roff_paragraphs(fp, cmd->description);
    heading(fp, "OPTIONS", sub);
    for (const ss_opt_group_t *g = cmd->groups; g->title; g++) {
        fputs(".SS ", fp);
        roff(fp, g->title, strlen(g->title));
        fputc('\n', fp);
        for (const ss_opt_t *o = g->opts; o->key; o++)
            if (o->help)
                man_item(fp, o);
        if (g->note)
            roff_paragraphs(fp, g->note);
    }
    if (cmd->after) {
        heading(fp, "NOTES", sub);
        roff_paragraphs(fp, cmd->after);
    }
    if (cmd->examples) {
        heading(fp, "EXAMPLES", sub);
        fputs(".nf\n", fp);
        roff(fp, cmd->examples, strlen(cmd->examples));
        fputs("\n.fi\n", fp);
    }
}

void ss_cmd_man(const ss_cmd_t *cmd, FILE *fp)
{
    ss_cmd_steps_t with;
    cmd = ss_cmd_with_steps(cmd, &with);
    fprintf(fp, ".TH SEQSHARD-%s 1 \"\" \"seqshard %s\" \"User Commands\"\n", cmd->name,
            SS_VERSION);
    fprintf(fp, ".SH NAME\nseqshard\\-%s \\- ", cmd->name);
    roff(fp, cmd->summary, strlen(cmd->summary));
    fputc('\n', fp);
    man_body(cmd, fp, 0);
    for (const ss_cmd_mode_t *m = cmd->modes; m && m->title; m++) {
        fprintf(fp, ".SH %s\n", m->title);
        ss_cmd_steps_t mode_with;
        man_body(ss_cmd_with_steps(m->cmd, &mode_with), fp, 1);
    }
    fputs(man_tail, fp);
    fputs(".SH SEE ALSO\n", fp);
    const char *see = cmd->see_also ? cmd->see_also : "seqshard(1)";
    roff(fp, see, strlen(see));
    fputs(".\nThe user guide (user-guide.md) and the Slurm guide (slurm.md) are installed in\n"
          "share/doc/seqshard/; the Slurm batch scripts in share/seqshard/.\n",
          fp);
}

/*
 * One line per option, tab-separated: short ("-x" or "-"), long ("--name" or
 * "-"), whether it takes a value (1/0), whether it is an alias that --help
 * does not list (1/0), and what completion offers for its value.
 */
void ss_cmd_options(const ss_cmd_t *cmd, FILE *fp)
{
    ss_cmd_steps_t with;
    cmd = ss_cmd_with_steps(cmd, &with);
    for (const ss_opt_group_t *g = cmd->groups; g->title; g++)
        for (const ss_opt_t *o = g->opts; o->key; o++) {
            char sh[3] = {'-', o->letter, '\0'};
            fprintf(fp, "%s\t%s%s\t%d\t%d\t%s\n", o->letter ? sh : "-", o->name ? "--" : "-",
                    o->name ? o->name : "", o->arg && !ss_opt_value_optional(o), o->help == NULL,
                    o->values ? o->values : "");
        }
}

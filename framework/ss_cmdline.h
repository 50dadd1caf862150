/*
 * ss_cmdline.h -- one description of a command's options, from which the
 * framework makes its parser, its --help, its man page and its shell
 * completion, so the four cannot disagree (cmdline.c, cmdline_doc.c).
 *
 * Included by ss_framework.h; kernels use it through that header. Main thread
 * only: parsing runs before any worker exists.
 */
#ifndef SS_CMDLINE_H
#define SS_CMDLINE_H

#include <stdio.h>

struct ss_common_opts_s;

/*
 * One option. key is what the kernel's apply hook receives: the short letter
 * when there is one (so a kernel's switch reads as its samtools' letters), or
 * a code of its own from 0x100; the framework's shared options use
 * SS_OPT_* codes from 0x1000, which the kernel never sees.
 */
typedef struct {
    int key;
    char letter;        /* the short option, or 0 */
    const char *name;   /* the long option, or NULL */
    const char *arg;    /* the value's placeholder ("INT", "FILE"), or NULL: takes none;
                         * "[=FMT]": an optional value, given only as --name=FMT */
    const char *help;   /* what it does, default in [brackets]; wrapped when printed; NULL:
                         * an alias (another spelling samtools takes), parsed but not listed */
    const char *values; /* completion of the value: words ("sam bam cram"), SS_VALUES_FILE,
                         * SS_VALUES_DIR, or NULL (nothing to offer) */
} ss_opt_t;

/* Whether o's value may be left out (its placeholder reads "[=...]"). */
static inline int ss_opt_value_optional(const ss_opt_t *o)
{
    return o->arg && o->arg[0] == '[';
}

#define SS_OPT_END                   \
    {                                \
        0, 0, NULL, NULL, NULL, NULL \
    }
#define SS_VALUES_FILE "@file"
#define SS_VALUES_DIR  "@dir"

/* A titled group of options in --help and the man page, ended by SS_OPT_END. */
typedef struct {
    const char *title; /* "Input options"; NULL ends a list of groups */
    const ss_opt_t *opts;
    const char *note; /* a paragraph after the group's items, or NULL */
} ss_opt_group_t;

/*
 * A command: what --help and the man page say around the options. Text
 * fields are paragraphs separated by blank lines, printed as given (they are
 * written to fit 80 columns).
 */
typedef struct ss_cmd_s ss_cmd_t;

/* A second mode of a command, with options of its own (depth --mosdepth): its man section. */
typedef struct {
    const char *title;   /* "MOSDEPTH MODE"; NULL ends a list of modes */
    const ss_cmd_t *cmd; /* its own description, --help and options */
} ss_cmd_mode_t;

struct ss_cmd_s {
    const char *name;        /* "pileup": the command is `seqshard pileup` */
    const char *synopsis;    /* after the name: "[options] in.bam|in.cram [in2 ...]" */
    const char *summary;     /* one line: the man page's NAME */
    const char *description; /* what it does */
    const ss_opt_group_t *groups;
    const char *after;          /* after the options (differences from samtools ...), or NULL */
    const char *examples;       /* command lines, each after a "# what it does" line, or NULL */
    const char *see_also;       /* "samtools-mpileup(1), seqshard(1)", or NULL */
    int first_output_wins;      /* a second -o is ignored (samtools depth's rule), not the first */
    int steps;                  /* the command reads records: it takes the record steps' options
                                 * (--realign ...; ss_step.h) */
    const char *step;           /* the command is this step in front of the record writer
                                 * (`seqshard realign`): on without its --NAME */
    const ss_cmd_mode_t *modes; /* its other modes, each a section of the man page, or NULL */
};

/*
 * The framework's shared groups. Every kernel lists ss_opts_run; the others
 * where they apply, so each option is spelled and described once:
 *   ss_opts_output_records  -o, -O FMT[,level=N], --output-fmt-option, --write-index
 *   ss_opts_output_text     -o, --output-fmt-option level=N, --write-index (.gz output)
 *   ss_opts_run             -@, --shard-size, --report, --tmp-dir, --quiet, --bind,
 *                           --print-binding, --resume
 * A kernel whose samtools gives one of these letters another meaning (pileup's
 * -O) lists its own group instead.
 */
extern const ss_opt_t ss_opts_output_records[];
extern const ss_opt_t ss_opts_output_text[];
extern const ss_opt_t ss_opts_run[];

/* A kernel's option: 0, 1 to stop and exit 0 (it printed something), -1 after a message. */
typedef int (*ss_opt_apply_fn)(void *ctx, int key, const char *arg);

/*
 * Parse argv's options by cmd's description: shared options fill co, the
 * kernel's go to apply. --help prints cmd's help; the hidden --man and
 * --options print its man page and its option list for completion. Returns
 * 0 with optind at the first argument that is not an option, 1 when the
 * program should exit 0 (help printed), -1 after a one-line usage message
 * (an unknown option, a missing or bad value). Main thread.
 */
int ss_cmd_parse(const ss_cmd_t *cmd, int argc, char **argv, struct ss_common_opts_s *co,
                 ss_opt_apply_fn apply, void *ctx);

/*
 * "seqshard KERNEL ARGS" for a @PG CL line: argv (argv[0] the kernel's name)
 * without ss_opts_run's options and their values (cmd tells which of its
 * short options take one), which change how a run
 * goes but not its output (contract 1). malloc'ed, caller frees; NULL after
 * a message (out of memory).
 */
char *ss_cmd_line_kept(const ss_cmd_t *cmd, int argc, char **argv);

/*
 * Whether the command-line word a is one of ss_opts_run's options ("--threads",
 * "--report=F", "-@4"); *takes_value: its value is the next word. Main thread.
 */
int ss_opt_run_word(const char *a, int *takes_value);

/*
 * The option of cmd (its groups and its steps' options) that the command-line
 * word names: "--name" or "--name=VALUE" by its whole long name, "-X..." by
 * its first letter; NULL when none does. Lets a parser of words meant for
 * another program (mpileup's --call) say that a word is seqshard's. Main thread.
 */
const ss_opt_t *ss_cmd_find_word(const ss_cmd_t *cmd, const char *word);

/* cmd's --help text, its man page (roff) and its completion list, on fp. */
void ss_cmd_help(const ss_cmd_t *cmd, FILE *fp);
void ss_cmd_man(const ss_cmd_t *cmd, FILE *fp);
void ss_cmd_options(const ss_cmd_t *cmd, FILE *fp);
/* The --help items of one group's options, on fp. */
void ss_opts_help(const ss_opt_t *opts, FILE *fp);

#endif
